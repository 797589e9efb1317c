//! Device writes on the device part of the writer's working copy ([`DeviceWrite`]): schema,
//! devices, relation grants, capabilities (mint, delegate, revoke) and the explicit
//! consumption of a use.
//!
//! As with every command, each is fully validated before anything changes, and the working copy
//! is discarded on error, so a refused write leaves no trace.

use std::sync::Arc;

use earshot_core::actions::Actions;
use earshot_core::capability::{widenings, AuthReason, Constraints, Scope, Window};
use earshot_core::condition::Condition;
use earshot_core::path::PathPattern;
use earshot_core::schema::{is_name, parse as parse_schema};

use super::model::{limits, AuthorizeRequest, AuthorizeView, ConstraintsInput, NewCapability, NewDevice, NewRelation};
use super::{use_name, CapRec, Cid, DeviceState, Devices, EdgeRec, Eid, RawAuthority, Removed, Uid, UseRec};
use crate::common::{parse_time, Names, Pid};
use crate::error::{check_id, Result, StoreError};

/// The device part of the writer's working copy for one command: the device state of the copy,
/// the participants as they are in it, and what the command touched. On an error the whole
/// copy is dropped (`crate::compose`), so a refused write leaves no trace.
pub(crate) struct DeviceWrite<'a> {
    pub dev: &'a mut DeviceState,
    pub names: &'a dyn Names,
    /// The revision the command applies to (what it creates is stamped `revision + 1`).
    pub revision: u64,
    pub now_ms: i64,
    pub dirty: &'a mut DeviceDirty,
    /// Generates ids for edges and capabilities created without one.
    pub new_id: &'a mut dyn FnMut() -> String,
}

/// What a device write answers: the outcome word, the ids created or changed, and for a use,
/// the decision taken.
#[derive(Debug, Default)]
pub(crate) struct Written {
    pub outcome: &'static str,
    pub ids: Vec<String>,
    /// A capability's revocation: the descendants it invalidates (valid through it until then;
    /// not themselves revoked).
    pub invalidated: Vec<String>,
    /// A capability's revocation: the descendants that were already invalid through an earlier
    /// revocation (revoked themselves, or below a revoked link).
    pub already_invalid: Vec<String>,
    pub decision: Option<AuthorizeView>,
}

fn written(outcome: &'static str, ids: Vec<String>) -> Written {
    Written { outcome, ids, invalidated: Vec::new(), already_invalid: Vec::new(), decision: None }
}

/// Device records a command touched.
#[derive(Debug, Default)]
pub(crate) struct DeviceDirty {
    pub schema: bool,
    pub devices: Vec<Pid>,
    pub edges: Vec<Eid>,
    pub caps: Vec<Cid>,
    pub uses: Vec<Uid>,
}

impl DeviceDirty {
    pub fn is_empty(&self) -> bool {
        !self.schema && self.devices.is_empty() && self.edges.is_empty() && self.caps.is_empty() && self.uses.is_empty()
    }
}

/// Parses client constraints into the core's form.
pub(crate) fn parse_constraints(c: Option<&ConstraintsInput>) -> Result<Constraints> {
    let Some(c) = c else { return Ok(Constraints::default()) };
    let not_before_ms = c.not_before.as_deref().map(|t| parse_time("constraints.not_before", t)).transpose()?;
    let not_after_ms = c.not_after.as_deref().map(|t| parse_time("constraints.not_after", t)).transpose()?;
    if let (Some(nb), Some(na)) = (not_before_ms, not_after_ms) {
        if nb >= na {
            return Err(StoreError::input("constraints", "`not_before` must be earlier than `not_after`"));
        }
    }
    let condition = c
        .condition
        .as_deref()
        .map(|src| {
            Condition::compile(src).map_err(|e| StoreError::InvalidCondition { message: format!("condition {e}") })
        })
        .transpose()?;
    Ok(Constraints { not_before_ms, not_after_ms, uses: c.uses, condition })
}

fn parse_patterns(paths: &[String]) -> Result<Vec<PathPattern>> {
    if paths.is_empty() {
        return Err(StoreError::input("paths", "at least one path pattern is required"));
    }
    if paths.len() > limits::MAX_CAPABILITY_PATHS {
        return Err(StoreError::LimitExceeded { field: "paths", limit: limits::MAX_CAPABILITY_PATHS });
    }
    let mut out: Vec<PathPattern> = Vec::with_capacity(paths.len());
    for p in paths {
        let pat = PathPattern::parse(p)
            .map_err(|e| StoreError::InvalidPath { field: "paths", message: format!("`{}` {e}", short(p)) })?;
        if !out.contains(&pat) {
            out.push(pat);
        }
    }
    Ok(out)
}

fn parse_actions(actions: &[String]) -> Result<Actions> {
    if actions.is_empty() {
        return Err(StoreError::input("actions", "at least one action is required"));
    }
    if actions.len() > limits::MAX_ACTIONS {
        return Err(StoreError::LimitExceeded { field: "actions", limit: limits::MAX_ACTIONS });
    }
    let mut out = Vec::with_capacity(actions.len());
    for a in actions {
        if !is_name(a) {
            return Err(StoreError::input("actions", format!("`{}` is not an action name", short(a))));
        }
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    out.sort();
    Actions::new(&out).map_err(|e| StoreError::input("actions", e.to_string()))
}

fn short(s: &str) -> String {
    s.chars().take(64).collect()
}

impl DeviceWrite<'_> {
    fn view(&self) -> Devices<'_> {
        Devices { dev: &*self.dev, names: self.names }
    }

    /// A window that is already over when written (`not_after` at or before the write's time)
    /// is refused: it would never hold (`window_in_the_past`). A window that has not yet begun
    /// is fine; an empty one is refused by [`parse_constraints`].
    fn check_window_open(&self, c: &Constraints) -> Result<()> {
        crate::common::check_window_ends_later("constraints.not_after", c.not_after_ms, self.now_ms)
    }

    fn participant(&self, field: &'static str, id: &str) -> Result<Pid> {
        check_id(field, id)?;
        self.names.pid(id).ok_or_else(|| StoreError::ParticipantNotFound(id.to_string()))
    }

    fn device(&self, id: &str) -> Result<(Pid, Pid)> {
        check_id("device", id)?;
        let pid = self.names.pid(id).ok_or_else(|| StoreError::DeviceNotFound(id.to_string()))?;
        let owner = self.dev.devices.get(&pid).copied().ok_or_else(|| StoreError::DeviceNotFound(id.to_string()))?;
        Ok((pid, owner))
    }

    fn fresh_name(
        &mut self,
        id: Option<String>,
        taken: impl Fn(&Self, &str) -> bool,
        exists: fn(String) -> StoreError,
    ) -> Result<String> {
        let id = match id {
            Some(id) => id,
            None => (self.new_id)(),
        };
        check_id("id", &id)?;
        if taken(self, &id) {
            return Err(exists(id));
        }
        Ok(id)
    }

    pub(crate) fn put_schema(&mut self, source: &str) -> Result<Written> {
        let schema = parse_schema(source).map_err(StoreError::SchemaInvalid)?;
        // Fail closed rather than leave live edges pointing at nothing: a relation still
        // exercised by an unrevoked edge cannot be removed.
        for e in self.dev.edges.iter().filter(|e| !e.revoked) {
            if schema.relation(&e.relation).is_none() {
                let edges = self.dev.edges.iter().filter(|x| !x.revoked && x.relation == e.relation).count();
                return Err(StoreError::RelationInUse { relation: e.relation.to_string(), edges });
            }
        }
        let names = schema.relations.keys().cloned().collect();
        self.dev.schema = Some(Arc::new(schema));
        self.dirty.schema = true;
        Ok(written("updated", names))
    }

    /// Validates a new device and answers its owner. The device itself is also a participant
    /// (kind `device`, so it can hold capabilities): the composition creates that participant,
    /// then files the device with [`DeviceWrite::add_device`].
    pub(crate) fn new_device_owner(&self, d: &NewDevice) -> Result<Pid> {
        let owner = self.participant("owner", &d.owner)?;
        if self.dev.devices.contains_key(&owner) {
            return Err(StoreError::input("owner", "a device cannot own a device"));
        }
        Ok(owner)
    }

    /// Files the device `pid` (an existing participant) under `owner`.
    pub(crate) fn add_device(&mut self, pid: Pid, owner: Pid) {
        self.dev.devices.insert(pid, owner);
        self.dirty.devices.push(pid);
    }

    pub(crate) fn create_relation(&mut self, r: NewRelation) -> Result<Written> {
        if let Some(id) = r.id.as_deref().filter(|id| self.is_relation_retry(id, &r)) {
            return Ok(written("granted", vec![id.to_string()]));
        }
        let grantor = self.participant("grantor", &r.grantor)?;
        let grantee = self.participant("grantee", &r.grantee)?;
        if grantor == grantee {
            return Err(StoreError::input("grantee", "a relation grant joins two different participants"));
        }
        let declared = self.dev.schema.as_ref().is_some_and(|s| s.relation(&r.relation).is_some());
        if !declared {
            return Err(StoreError::UnknownRelation(short(&r.relation)));
        }
        let constraints = parse_constraints(r.constraints.as_ref())?;
        self.check_window_open(&constraints)?;
        let id = self.fresh_name(r.id, |a, id| a.dev.edge_ids.contains_key(id), StoreError::RelationExists)?;
        let eid = self.dev.edges.len() as Eid;
        let name: Arc<str> = Arc::from(id.as_str());
        self.dev.edges.push_back(EdgeRec {
            name: name.clone(),
            grantor,
            relation: Arc::from(r.relation.as_str()),
            grantee,
            uses_left: constraints.uses,
            constraints: Arc::new(constraints),
            revoked: false,
            created_rev: self.revision + 1,
            created_at_ms: self.now_ms,
        });
        self.dev.edge_ids.insert(name, eid);
        let mut list = self.dev.edges_by_pair.get(&(grantor, grantee)).map(|l| l.to_vec()).unwrap_or_default();
        list.push(eid);
        self.dev.edges_by_pair.insert((grantor, grantee), list.into());
        self.dirty.edges.push(eid);
        Ok(written("granted", vec![id]))
    }

    pub(crate) fn revoke_relation(&mut self, edge: &str, by: &str) -> Result<Written> {
        check_id("edge", edge)?;
        let by = self.participant("by", by)?;
        let eid = *self.dev.edge_ids.get(edge).ok_or_else(|| StoreError::RelationNotFound(edge.to_string()))?;
        let mut rec = self.dev.edge(eid).cloned().ok_or_else(|| StoreError::RelationNotFound(edge.to_string()))?;
        if rec.grantor != by {
            return Err(StoreError::NotGrantor { edge: edge.to_string() });
        }
        if rec.revoked {
            return Err(StoreError::AlreadyRevoked(edge.to_string()));
        }
        rec.revoked = true;
        self.dev.edges.set(eid as usize, rec);
        self.dirty.edges.push(eid);
        Ok(written("revoked", vec![edge.to_string()]))
    }

    pub(crate) fn create_capability(&mut self, c: NewCapability) -> Result<Written> {
        if let Some(id) = c.id.as_deref().filter(|id| self.is_capability_retry(id, &c)) {
            return Ok(written("created", vec![id.to_string()]));
        }
        let issuer = self.participant("issuer", &c.issuer)?;
        let holder = self.participant("holder", &c.holder)?;
        let (device, owner) = self.device(&c.device)?;
        let paths = parse_patterns(&c.paths)?;
        let actions = parse_actions(&c.actions)?;
        let constraints = parse_constraints(c.constraints.as_ref())?;
        self.check_window_open(&constraints)?;
        let (parent, depth) = match &c.parent {
            None => {
                if issuer != owner {
                    return Err(StoreError::NotDeviceOwner { issuer: c.issuer.clone(), device: c.device.clone() });
                }
                (None, 1u8)
            }
            Some(pname) => {
                check_id("parent", pname)?;
                let pc = *self
                    .dev
                    .cap_ids
                    .get(pname.as_str())
                    .ok_or_else(|| StoreError::CapabilityNotFound(pname.clone()))?;
                let p = self.dev.cap(pc).cloned().ok_or_else(|| StoreError::CapabilityNotFound(pname.clone()))?;
                if p.holder != issuer {
                    return Err(StoreError::NotCapabilityHolder {
                        issuer: c.issuer.clone(),
                        capability: pname.clone(),
                    });
                }
                if usize::from(p.depth) >= limits::MAX_CHAIN_DEPTH {
                    return Err(StoreError::LimitExceeded { field: "parent", limit: limits::MAX_CHAIN_DEPTH });
                }
                // A holder can only delegate what it holds now: the parent's chain must be
                // unrevoked, in its windows and have uses left (conditions need a request
                // context, so they are checked at the point of use, conjoined).
                let empty = earshot_core::condition::RequestContext::new();
                // Never spent: the conditions are taken out just below.
                let budget = earshot_core::condition::Budget::per_decision();
                let unconditional_chain = self.dev.chain(pc).into_iter().try_for_each(|x| {
                    let Some(r) = self.dev.cap(x) else {
                        return Err((x, earshot_core::capability::LinkFailure::Revoked));
                    };
                    let mut cons = (*r.constraints).clone();
                    cons.condition = None;
                    earshot_core::capability::link_holds(r.revoked, &cons, r.uses_left, self.now_ms, &empty, &budget)
                        .map_err(|f| (x, f))
                });
                if let Err((x, f)) = unconditional_chain {
                    let link = self.dev.cap(x).map(|r| r.name.to_string()).unwrap_or_default();
                    return Err(StoreError::ParentNotValid { capability: link, reason: f.reason().code() });
                }
                let parent_scope = Scope {
                    device: p.device,
                    paths: &p.paths,
                    actions: &p.actions,
                    constraints: &p.constraints,
                    uses_left: p.uses_left,
                };
                let child_scope = Scope {
                    device,
                    paths: &paths,
                    actions: &actions,
                    constraints: &constraints,
                    uses_left: constraints.uses,
                };
                let widened = widenings(&child_scope, &parent_scope);
                if !widened.is_empty() {
                    return Err(StoreError::CapabilityNotWithinParent(widened));
                }
                (Some(pc), p.depth + 1)
            }
        };
        let id = self.fresh_name(c.id, |a, id| a.dev.cap_ids.contains_key(id), StoreError::CapabilityExists)?;
        let cid = self.dev.caps.len() as Cid;
        let name: Arc<str> = Arc::from(id.as_str());
        self.dev.caps.push_back(CapRec {
            name: name.clone(),
            holder,
            issuer,
            device,
            paths: paths.into(),
            actions,
            uses_left: constraints.uses,
            window: Window::of(&constraints),
            constraints: Arc::new(constraints),
            parent,
            depth,
            revoked: false,
            created_rev: self.revision + 1,
            created_at_ms: self.now_ms,
        });
        self.dev.cap_ids.insert(name, cid);
        if let Some(rec) = self.dev.cap(cid) {
            let paths = rec.paths.clone();
            self.dev.trie.file(holder, device, &paths, cid);
        }
        if let Some(p) = parent {
            let mut kids = self.dev.children.get(&p).map(|l| l.to_vec()).unwrap_or_default();
            kids.push(cid);
            self.dev.children.insert(p, kids.into());
        }
        self.dirty.caps.push(cid);
        Ok(written("created", vec![id]))
    }

    /// Whether the relation grant `id` exists and was made by this very request (a retry): the
    /// record keeps every field of the request, compared as the create would have stored them
    /// (constraints parsed), so a retry answers as the first did, whatever happened to the
    /// grant since, and writes nothing. Anything else with a taken id stays `relation_exists`.
    fn is_relation_retry(&self, id: &str, r: &NewRelation) -> bool {
        let Some(rec) = self.dev.edge_ids.get(id).and_then(|e| self.dev.edge(*e)) else { return false };
        let same_constraints = parse_constraints(r.constraints.as_ref()).is_ok_and(|c| c == *rec.constraints);
        self.names.pid(&r.grantor) == Some(rec.grantor)
            && self.names.pid(&r.grantee) == Some(rec.grantee)
            && *rec.relation == *r.relation
            && same_constraints
    }

    /// Whether the capability `id` exists and was made by this very request (a retry); see
    /// [`DeviceWrite::is_relation_retry`]. Paths and actions are sets: they compare as such,
    /// whatever order either request listed them in.
    fn is_capability_retry(&self, id: &str, c: &NewCapability) -> bool {
        let Some(rec) = self.dev.cap_ids.get(id).and_then(|x| self.dev.cap(*x)) else { return false };
        let parent = rec.parent.and_then(|p| self.dev.cap(p)).map(|p| p.name.clone());
        self.names.pid(&c.issuer) == Some(rec.issuer)
            && self.names.pid(&c.holder) == Some(rec.holder)
            && self.names.pid(&c.device) == Some(rec.device)
            && parent.as_deref() == c.parent.as_deref()
            && parse_patterns(&c.paths).is_ok_and(|p| same_set(&p, &rec.paths))
            && parse_actions(&c.actions).is_ok_and(|a| a == rec.actions)
            && parse_constraints(c.constraints.as_ref()).is_ok_and(|x| x == *rec.constraints)
    }

    /// Revokes a capability: allowed to the device's owner and to the holder of any ancestor
    /// (who delegated it, directly or through others). Descendants are not rewritten: they
    /// fail at their next point of use because the chain walk meets this revocation.
    pub(crate) fn revoke_capability(&mut self, cap: &str, by: &str) -> Result<Written> {
        check_id("capability", cap)?;
        let by = self.participant("by", by)?;
        let cid = *self.dev.cap_ids.get(cap).ok_or_else(|| StoreError::CapabilityNotFound(cap.to_string()))?;
        let mut rec = self.dev.cap(cid).cloned().ok_or_else(|| StoreError::CapabilityNotFound(cap.to_string()))?;
        let owner = self.dev.devices.get(&rec.device).copied();
        let chain = self.dev.chain(cid);
        let ancestor_holder =
            chain.iter().filter(|x| **x != cid).any(|x| self.dev.cap(*x).is_some_and(|r| r.holder == by));
        if owner != Some(by) && !ancestor_holder {
            return Err(StoreError::NotRevoker { capability: cap.to_string() });
        }
        if rec.revoked {
            return Err(StoreError::AlreadyRevoked(cap.to_string()));
        }
        // Only `cap` is revoked; the descendants still valid through it until now are
        // invalidated through it (their own records stay unrevoked, and their chain view names
        // `cap` as `invalidated_by`). Those an earlier revocation already invalidated are
        // answered apart: this revocation changes nothing for them. Judged before the change.
        let (newly, already) = self.dev.dependents(cid);
        let (invalidated, already_invalid) = (self.view().cap_names(newly), self.view().cap_names(already));
        rec.revoked = true;
        self.dev.caps.set(cid as usize, rec);
        self.dirty.caps.push(cid);
        Ok(Written { invalidated, already_invalid, ..written("revoked", vec![cap.to_string()]) })
    }

    /// Ends what the device half says of `pid`, a participant being removed in this write
    /// (SPEC §1.8; [`DeviceState::removal_refused`] has let it through, so it is neither a
    /// device nor the owner of one): every relation grant to or from it is revoked; every
    /// capability it holds is revoked, so what it delegated from them is invalidated through
    /// them; the uses it made stay recorded. Every record naming it keeps its name, marked
    /// removed, and is never read as a later participant of the same name. Answers the
    /// capabilities this makes invalid (revoked here, or below one revoked here), in creation
    /// order.
    pub(crate) fn end_participant(&mut self, pid: Pid, name: &Arc<str>) -> Result<Written> {
        let edges: Vec<Eid> = (0..self.dev.edges.len() as Eid)
            .filter(|e| self.dev.edge(*e).is_some_and(|r| r.grantor == pid || r.grantee == pid))
            .collect();
        let caps: Vec<Cid> = (0..self.dev.caps.len() as Cid)
            .filter(|c| self.dev.cap(*c).is_some_and(|r| r.holder == pid || r.issuer == pid))
            .collect();
        let uses: Vec<Uid> = (0..self.dev.uses.len() as Uid)
            .filter(|u| self.dev.uses.get(*u as usize).is_some_and(|r| r.principal == pid))
            .collect();
        if edges.is_empty() && caps.is_empty() && uses.is_empty() {
            return Ok(written("removed", Vec::new()));
        }
        self.dev.removed.insert(pid, Removed { name: name.clone(), revision: self.revision + 1 });
        for eid in edges {
            if let Some(mut rec) = self.dev.edge(eid).cloned() {
                rec.revoked = true;
                self.dev.edges.set(eid as usize, rec);
            }
            self.dirty.edges.push(eid);
        }
        let valid_before: Vec<bool> = (0..self.dev.caps.len() as Cid).map(|c| self.not_revoked_along(c)).collect();
        for &cid in &caps {
            if let Some(mut rec) = self.dev.cap(cid).cloned().filter(|r| r.holder == pid) {
                rec.revoked = true;
                self.dev.caps.set(cid as usize, rec);
            }
            self.dirty.caps.push(cid);
        }
        let invalidated: Vec<Cid> = valid_before
            .iter()
            .enumerate()
            .filter(|(c, before)| **before && !self.not_revoked_along(*c as Cid))
            .map(|(c, _)| c as Cid)
            .collect();
        self.dirty.uses.extend(uses);
        Ok(Written { invalidated: self.view().cap_names(invalidated), ..written("removed", Vec::new()) })
    }

    /// Whether no link of `c`'s chain (itself included) is revoked.
    fn not_revoked_along(&self, c: Cid) -> bool {
        self.dev.chain(c).iter().all(|x| self.dev.cap(*x).is_some_and(|r| !r.revoked))
    }

    /// Whether `path` matches a member of a conflict of the current schema.
    fn in_some_conflict(&self, path: &str) -> bool {
        let Ok(path) = earshot_core::path::Path::parse(path) else { return false };
        self.dev.schema.as_ref().is_some_and(|s| s.conflicts.iter().any(|c| c.members_of(&path) != 0))
    }

    /// `POST /uses`: decides at the writer's latest state and, on an allow, consumes one use of
    /// every counted link of the authority (the edge, or each counted capability in the chain)
    /// in this one revision. The outcome says what was written: `consumed` (a use was counted,
    /// and the use kept if the aggregation guard needs it), `recorded` (nothing counted, the use
    /// kept for the aggregation guard), `allowed` (nothing counted or kept: nothing written, no
    /// revision) or `denied` (nothing written). Serialised by the writer, so of two concurrent uses of the last
    /// remaining use exactly one is allowed.
    pub(crate) fn consume_use(&mut self, req: AuthorizeRequest) -> Result<Written> {
        let raw = self.view().authorize_raw(
            &req.principal,
            &req.device,
            &req.path,
            &req.action,
            self.now_ms,
            &req.context,
        )?;
        let mut out = Written::default();
        if raw.allowed() {
            let mut consumed = false;
            match raw.authority {
                Some(RawAuthority::Relation(e)) => {
                    if let Some(mut rec) = self.dev.edge(e).cloned() {
                        if let Some(n) = rec.uses_left {
                            rec.uses_left = Some(n.saturating_sub(1));
                            self.dev.edges.set(e as usize, rec);
                            self.dirty.edges.push(e);
                            consumed = true;
                        }
                    }
                }
                Some(RawAuthority::Capability(c)) => {
                    for x in self.dev.chain(c) {
                        if let Some(mut rec) = self.dev.cap(x).cloned() {
                            if let Some(n) = rec.uses_left {
                                rec.uses_left = Some(n.saturating_sub(1));
                                self.dev.caps.set(x as usize, rec);
                                self.dirty.caps.push(x);
                                consumed = true;
                            }
                        }
                    }
                }
                _ => {}
            }
            // An allowed use by someone other than the owner, of a slice that some declared
            // conflict names, is recorded for the aggregation guard (SPEC §6.4), in this same
            // revision. Other uses are not kept: a conflict counts the uses made while it is
            // declared, and stores without conflicts keep no use history.
            if raw.reason != AuthReason::AllowedOwner && self.in_some_conflict(&req.path) {
                let principal = self.names.pid(&req.principal);
                let device = self.names.pid(&req.device);
                if let (Some(principal), Some(device)) = (principal, device) {
                    if let Some(&grantor) = self.dev.devices.get(&device) {
                        let seq = self.dev.uses.len() as Uid;
                        let u = self.dev.record_use(UseRec {
                            name: Arc::from(use_name(seq)),
                            principal,
                            device,
                            grantor,
                            path: Arc::from(req.path.as_str()),
                            action: Arc::from(req.action.as_str()),
                            at_ms: self.now_ms,
                            created_rev: self.revision + 1,
                        });
                        self.dirty.uses.push(u);
                        out.ids.push(use_name(u));
                    }
                }
            }
            // `allowed` means nothing was written: an allowed use that was not counted but kept
            // for the aggregation guard wrote its record, so it says so (`recorded`).
            out.outcome = if consumed {
                "consumed"
            } else if !self.dirty.uses.is_empty() {
                "recorded"
            } else {
                "allowed"
            };
        } else {
            out.outcome = "denied";
        }
        out.decision = Some(self.view().authorization_view(&raw));
        Ok(out)
    }
}

/// Whether two lists hold the same elements, ignoring order and repeats (lists here are short:
/// bounded by the request limits).
fn same_set<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_parse_and_refuse_empty_windows() {
        let c = ConstraintsInput {
            not_before: Some("2026-01-01T00:00:00Z".into()),
            not_after: Some("2026-01-01T00:00:00Z".into()),
            ..Default::default()
        };
        assert!(parse_constraints(Some(&c)).is_err());
        let c = ConstraintsInput { condition: Some("a ===".into()), ..Default::default() };
        assert!(matches!(parse_constraints(Some(&c)), Err(StoreError::InvalidCondition { .. })));
        assert_eq!(parse_constraints(None).unwrap(), Constraints::default());
    }

    #[test]
    fn paths_and_actions_are_validated() {
        assert!(matches!(parse_patterns(&["calendar/priv*".into()]), Err(StoreError::InvalidPath { .. })));
        assert!(parse_patterns(&[]).is_err());
        assert!(parse_actions(&["Read".into()]).is_err());
        assert_eq!(
            parse_actions(&["write".into(), "read".into(), "read".into()]).unwrap().to_vec(),
            vec!["read", "write"]
        );
    }
}
