//! Devices, relation grants and capabilities (SPEC §2) inside a snapshot: their index records,
//! the indexes that keep `authorize` independent of how much a principal holds, and the reads.
//!
//! Indexes (all cloned in O(1) with the snapshot):
//! - `devices`: device → owner.
//! - `edges_by_pair`: (grantor, grantee) → edges. A decision looks up exactly one pair (the
//!   device's owner, the principal), whatever else either of them has granted or received.
//! - `trie` (`trie::CapTrie`): a segment trie of every holder's patterns on every device,
//!   flattened into one table keyed by (holder, device, depth, hash of the pattern prefix, with
//!   `*` as its own segment). A decision walks the requested path from the root, following at each level the
//!   literal segment and `*`, so it only ever visits pattern prefixes that match the path: the
//!   capabilities a holder has on other devices, other subtrees or other literals are never
//!   looked at, however many there are.
//! - `children`: capability → its delegations, for "what would this revocation invalidate".
//! - `uses_by_pair`: (principal, grantor) → the principal's recorded explicit uses on that
//!   grantor's devices, oldest first, for the aggregation guard (SPEC §6.4), which walks them
//!   newest first and stops at the longest conflict window.
//!
//! Ancestry is a parent pointer per capability; the chain is walked at every point of use.

pub(crate) mod apply;
pub mod model;
pub(crate) mod records;
pub(crate) mod trie;
pub(crate) mod verify;

use std::sync::Arc;

use earshot_core::actions::Actions;
use earshot_core::capability::{covers, link_holds, AuthReason, Constraints, LinkFailure, Window};
use earshot_core::condition::{Budget, RequestContext};
use earshot_core::path::{Path, Patterns};
use earshot_core::schema::Schema;

use crate::common::format_time;
use crate::common::{Map, Names, Pid, Vector};
use crate::error::{Result, StoreError};
use model::{
    AggregationView, AuthorityView, AuthorizeView, CapabilityView, ChainLinkView, ChainView, ConflictView,
    ConstraintsView, DependentsView, FailureView, OpeningView, RelationView, SchemaView,
};
use trie::CapTrie;

/// Relation grant index: its creation sequence number.
pub type Eid = u32;
/// Capability index: its creation sequence number.
pub type Cid = u32;
/// Recorded use index: its sequence number.
pub type Uid = u32;

/// The id of the `seq`-th recorded use: deterministic, so a replica replaying the log names it
/// the same.
pub(crate) fn use_name(seq: Uid) -> String {
    format!("use-{}", u64::from(seq) + 1)
}

/// An allowed explicit use by a principal other than the device's owner (SPEC §6.4).
#[derive(Debug, Clone)]
pub(crate) struct UseRec {
    pub name: Arc<str>,
    pub principal: Pid,
    pub device: Pid,
    pub grantor: Pid,
    pub path: Arc<str>,
    pub action: Arc<str>,
    pub at_ms: i64,
    pub created_rev: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct EdgeRec {
    pub name: Arc<str>,
    pub grantor: Pid,
    pub relation: Arc<str>,
    pub grantee: Pid,
    pub constraints: Arc<Constraints>,
    pub uses_left: Option<u32>,
    pub revoked: bool,
    pub created_rev: u64,
    pub created_at_ms: i64,
}

/// On a cache-line boundary (it is 192 bytes, so this costs no memory): what a decision reads of
/// it (window, use count, parent, actions, pattern, revoked flag) lies in three whole lines, not
/// across four at whatever offset the vector's leaf gave it. Measured in BENCHMARKS.md ("The
/// capability decision at 10,000 held"): 0.3 fewer L2 misses per cold decision.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub(crate) struct CapRec {
    pub name: Arc<str>,
    pub holder: Pid,
    pub issuer: Pid,
    pub device: Pid,
    /// Inline when there is one (nearly always).
    pub paths: Patterns,
    /// Inline: a decision compares the action without a further read.
    pub actions: Actions,
    pub constraints: Arc<Constraints>,
    /// What of `constraints` needs no request context, inline: an unconditioned link is
    /// checked without reading `constraints`.
    pub window: Window,
    pub uses_left: Option<u32>,
    pub parent: Option<Cid>,
    /// 1 for a root.
    pub depth: u8,
    pub revoked: bool,
    pub created_rev: u64,
    pub created_at_ms: i64,
}

// Growing past three lines would cost a fourth on every decision (and, aligned, 64 bytes each).
const _: () = assert!(std::mem::size_of::<CapRec>() == 192);

/// The device half of a snapshot.
#[derive(Clone, Default)]
pub(crate) struct DeviceState {
    pub schema: Option<Arc<Schema>>,
    /// Device → owner.
    pub devices: Map<Pid, Pid>,
    pub edges: Vector<EdgeRec>,
    pub edge_ids: Map<Arc<str>, Eid>,
    pub edges_by_pair: Map<(Pid, Pid), Arc<[Eid]>>,
    pub caps: Vector<CapRec>,
    pub cap_ids: Map<Arc<str>, Cid>,
    pub trie: CapTrie,
    pub children: Map<Cid, Arc<[Cid]>>,
    pub uses: Vector<UseRec>,
    pub uses_by_pair: Map<(Pid, Pid), Vector<Uid>>,
    /// Participants removed since (SPEC §1.8) whom device records still name: their interned id
    /// → their name and the revision of the removal. The records keep the id they had (here, the
    /// removed participant's own; after a rebuild, one allocated from the top of the id space
    /// per name and removal), so a later participant of the same name is never any of them.
    pub removed: Map<Pid, Removed>,
}

/// A removed participant that device records still name (see [`DeviceState::removed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Removed {
    pub name: Arc<str>,
    /// The revision of the removal.
    pub revision: u64,
}

/// A decision before it is rendered: ids, not names, and no allocation on the allow path.
#[derive(Debug, Clone, PartialEq)]
pub struct RawAuthorization {
    pub reason: AuthReason,
    pub authority: Option<RawAuthority>,
    /// On a denial by a failing link: which link and how.
    pub failure: Option<(RawLink, LinkFailure)>,
    /// On `denied_aggregation` (SPEC §6.4): the conflict and the earlier use that completes it.
    pub aggregation: Option<RawClash>,
}

/// The conflict a use would complete (SPEC §6.4), and the earlier use (`None`: the slice matches
/// two members of the conflict by itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawClash {
    pub conflict: Arc<str>,
    pub earlier: Option<Uid>,
}

/// The authority behind a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawAuthority {
    Owner {
        device: Pid,
        owner: Pid,
    },
    Relation(Eid),
    /// The principal's capability; the chain is its ancestry.
    Capability(Cid),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawLink {
    Edge(Eid),
    Capability(Cid),
}

impl RawAuthorization {
    fn denied(reason: AuthReason) -> Self {
        RawAuthorization { reason, authority: None, failure: None, aggregation: None }
    }
    pub fn allowed(&self) -> bool {
        self.reason.allowed()
    }
}

impl DeviceState {
    /// Appends a use and indexes it; returns its sequence number.
    pub(crate) fn record_use(&mut self, u: UseRec) -> Uid {
        let seq = self.uses.len() as Uid;
        let pair = (u.principal, u.grantor);
        let mut list = self.uses_by_pair.get(&pair).cloned().unwrap_or_default();
        list.push_back(seq);
        self.uses_by_pair.insert(pair, list);
        self.uses.push_back(u);
        seq
    }

    /// The aggregation guard (SPEC §6.4) for an otherwise allowed use of `path` on a device of
    /// `grantor` by `principal` at `now_ms`: the conflict it would complete and the earlier use
    /// that completes it. Walks the principal's uses on that grantor's devices newest first and
    /// stops at the longest conflict window.
    pub(crate) fn aggregation_clash(
        &self,
        principal: Pid,
        grantor: Pid,
        path: &Path<'_>,
        now_ms: i64,
    ) -> Option<(Arc<str>, Option<Uid>)> {
        let schema = self.schema.as_ref()?;
        if schema.conflicts.is_empty() {
            return None;
        }
        let horizon = now_ms.saturating_sub(earshot_core::aggregation::longest_window(&schema.conflicts));
        let empty = Vector::new();
        let list = self.uses_by_pair.get(&(principal, grantor)).unwrap_or(&empty);
        let earlier = list
            .iter()
            .rev()
            .filter_map(|&u| self.uses.get(u as usize).map(|r| (u, r)))
            .take_while(|(_, r)| r.at_ms > horizon)
            .filter_map(|(u, r)| Path::parse(&r.path).ok().map(|p| (u, p, r.at_ms)))
            .collect::<Vec<_>>();
        earshot_core::aggregation::clash(&schema.conflicts, path, now_ms, earlier)
            .map(|c| (Arc::from(c.conflict.name.as_str()), c.earlier))
    }

    pub(crate) fn edge(&self, e: Eid) -> Option<&EdgeRec> {
        self.edges.get(e as usize)
    }
    pub(crate) fn cap(&self, c: Cid) -> Option<&CapRec> {
        self.caps.get(c as usize)
    }

    /// Whether a capability and every ancestor hold now; on failure, the failing link.
    pub(crate) fn chain_holds(
        &self,
        leaf: Cid,
        now_ms: i64,
        ctx: &RequestContext,
        budget: &Budget,
    ) -> Result<(), (Cid, LinkFailure)> {
        let mut at = Some(leaf);
        // Bounded by the depth limit enforced at delegation; the bound guards corrupt records.
        let mut steps = 0;
        while let Some(c) = at {
            let Some(rec) = self.cap(c) else { return Err((c, LinkFailure::Revoked)) };
            let held = if rec.window.conditioned {
                link_holds(rec.revoked, &rec.constraints, rec.uses_left, now_ms, ctx, budget)
            } else {
                rec.window.holds(rec.revoked, rec.uses_left, now_ms)
            };
            held.map_err(|f| (c, f))?;
            at = rec.parent;
            steps += 1;
            if steps > model::limits::MAX_CHAIN_DEPTH {
                return Err((c, LinkFailure::Revoked));
            }
        }
        Ok(())
    }

    /// Whether the schema's relation opens `(path, action)`; an undeclared relation opens nothing.
    fn relation_opens(&self, relation: &str, path: &Path<'_>, action: &str) -> bool {
        self.schema.as_ref().and_then(|s| s.relation(relation)).is_some_and(|r| r.opens(path, action))
    }

    /// SPEC §2.5: owner, else a valid relation grant from the owner, else a valid capability.
    /// Among several covering authorities the first valid one in creation order wins; if none is
    /// valid, the first covering one's failure is the reason.
    pub(crate) fn authorize(
        &self,
        principal: Pid,
        device: Pid,
        path: &Path<'_>,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> RawAuthorization {
        let Some(&owner) = self.devices.get(&device) else {
            return RawAuthorization::denied(AuthReason::DeniedUnknownDevice);
        };
        if owner == principal {
            return RawAuthorization {
                reason: AuthReason::AllowedOwner,
                authority: Some(RawAuthority::Owner { device, owner }),
                failure: None,
                aggregation: None,
            };
        }
        // One condition budget for the whole decision (SPEC §2.6): however many conditioned
        // edges and chain links it walks, it evaluates at most one budget's worth, which bounds
        // how long an explicit use can hold the writer.
        let budget = Budget::per_decision();
        let mut first_failure: Option<(RawAuthority, RawLink, LinkFailure)> = None;
        if let Some(edges) = self.edges_by_pair.get(&(owner, principal)) {
            for &e in edges.iter() {
                let Some(rec) = self.edge(e) else { continue };
                if !self.relation_opens(&rec.relation, path, action) {
                    continue;
                }
                match link_holds(rec.revoked, &rec.constraints, rec.uses_left, now_ms, ctx, &budget) {
                    Ok(()) => {
                        return RawAuthorization {
                            reason: AuthReason::AllowedRelation,
                            authority: Some(RawAuthority::Relation(e)),
                            failure: None,
                            aggregation: None,
                        }
                    }
                    Err(f) => {
                        first_failure.get_or_insert((RawAuthority::Relation(e), RawLink::Edge(e), f));
                    }
                }
            }
        }
        let mut best: Option<Cid> = None;
        let segs = path.segments();
        // Candidates: `rest` lists of the matching nodes above the path's end, `exact` lists of
        // the matching nodes at its end.
        type Failure = Option<(RawAuthority, RawLink, LinkFailure)>;
        let candidates = |list: &[Cid], best: &mut Option<Cid>, first_failure: &mut Failure| {
            for &c in list.iter() {
                // Creation order among all candidates, whichever prefix they were filed under.
                if best.is_some_and(|b| b < c) {
                    continue;
                }
                let Some(rec) = self.cap(c) else { continue };
                if !covers(&rec.paths, &rec.actions, path, action) {
                    continue;
                }
                match self.chain_holds(c, now_ms, ctx, &budget) {
                    Ok(()) => *best = Some(c),
                    Err((at, f)) => {
                        let replace = match &*first_failure {
                            None => true,
                            Some((RawAuthority::Capability(prev), _, _)) => c < *prev,
                            Some(_) => false,
                        };
                        if replace {
                            *first_failure = Some((RawAuthority::Capability(c), RawLink::Capability(at), f));
                        }
                    }
                }
            }
        };
        self.trie.walk(principal, device, segs, |list| candidates(list, &mut best, &mut first_failure));
        if let Some(c) = best {
            return RawAuthorization {
                reason: AuthReason::AllowedCapability,
                authority: Some(RawAuthority::Capability(c)),
                failure: None,
                aggregation: None,
            };
        }
        match first_failure {
            Some((authority, link, f)) => RawAuthorization {
                reason: f.reason(),
                authority: Some(authority),
                failure: Some((link, f)),
                aggregation: None,
            },
            None => RawAuthorization::denied(AuthReason::DeniedNoAuthority),
        }
    }

    /// Why removing a participant is refused by the device half (SPEC §1.8 leaves devices out
    /// of member removal): a device is not removed (RULES §2.6), nor the owner of one (its
    /// devices would be left without an owner). Anything else the device half says of it ends
    /// with the removal ([`apply::DeviceWrite::end_participant`]).
    pub(crate) fn removal_refused(&self, pid: Pid, id: &str) -> Option<StoreError> {
        if self.devices.contains_key(&pid) {
            return Some(StoreError::ParticipantIsDevice(id.to_string()));
        }
        let owned = self.devices.values().filter(|o| **o == pid).count();
        (owned > 0).then(|| StoreError::ParticipantOwnsDevices { participant: id.to_string(), devices: owned })
    }

    /// The name of a participant the device records name: a removed one's from
    /// [`DeviceState::removed`], any other through `names`.
    pub(crate) fn party_name(&self, names: &dyn Names, pid: Pid) -> Arc<str> {
        match self.removed.get(&pid) {
            Some(r) => r.name.clone(),
            None => names.part_name(pid),
        }
    }

    /// The revision that removed `pid`, if it is a removed participant.
    pub(crate) fn removed_in(&self, pid: Pid) -> Option<u64> {
        self.removed.get(&pid).map(|r| r.revision)
    }

    /// The descendants of `c`, each list in creation order, split by what revoking `c` would
    /// do to them: `newly`, those it would invalidate (no link of their chain is revoked yet),
    /// and `already`, those already invalid through a revocation (revoked themselves, or below
    /// a revoked link: one between `c` and them, `c` itself, or an ancestor of `c`). Only
    /// revocations count: a window or a use count is judged at each use, never here, so the
    /// answer is a function of the records alone, the same at any time.
    pub(crate) fn dependents(&self, c: Cid) -> (Vec<Cid>, Vec<Cid>) {
        let above = self.chain(c).iter().any(|x| self.cap(*x).is_none_or(|r| r.revoked));
        let (mut newly, mut already) = (Vec::new(), Vec::new());
        let mut stack = vec![(c, above)];
        while let Some((x, blocked)) = stack.pop() {
            if let Some(kids) = self.children.get(&x) {
                for &k in kids.iter() {
                    let invalid = blocked || self.cap(k).is_none_or(|r| r.revoked);
                    if invalid {
                        already.push(k)
                    } else {
                        newly.push(k)
                    }
                    stack.push((k, invalid));
                }
            }
        }
        for list in [&mut newly, &mut already] {
            list.sort_unstable();
            list.dedup();
        }
        (newly, already)
    }

    /// Root first, `c` last.
    pub(crate) fn chain(&self, c: Cid) -> Vec<Cid> {
        let mut out = Vec::new();
        let mut at = Some(c);
        while let Some(x) = at {
            if out.len() > model::limits::MAX_CHAIN_DEPTH {
                break;
            }
            out.push(x);
            at = self.cap(x).and_then(|r| r.parent);
        }
        out.reverse();
        out
    }
}

/// Bounds a request context (SPEC §2.6): the core's limits on its variables, total size and
/// nesting. Too many variables stays `limit_exceeded`, as before; a context too large or too
/// deep is an `invalid_request` naming the bound.
pub fn check_context(ctx: &RequestContext) -> Result<()> {
    use earshot_core::condition::ContextError;
    match earshot_core::condition::check_context(ctx) {
        Ok(()) => Ok(()),
        Err(ContextError::TooManyVariables(_)) => {
            Err(StoreError::LimitExceeded { field: "context", limit: earshot_core::condition::MAX_CONTEXT_VARIABLES })
        }
        Err(e) => Err(StoreError::input("context", e.to_string())),
    }
}

pub(crate) fn constraints_view(c: &Constraints) -> ConstraintsView {
    ConstraintsView {
        not_before: c.not_before_ms.map(format_time),
        not_after: c.not_after_ms.map(format_time),
        uses: c.uses,
        condition: c.condition.as_ref().map(|x| x.source().to_string()),
    }
}

/// A snapshot's device part read together with the participants' names, which the device
/// domain refers to but does not own. The composed snapshot hands these out (`Snapshot::devices`).
#[derive(Clone, Copy)]
pub(crate) struct Devices<'a> {
    pub dev: &'a DeviceState,
    pub names: &'a dyn Names,
}

impl Devices<'_> {
    /// `authorize(principal, device, path, action, context)` at this snapshot and `now_ms`.
    /// A malformed path is an error; unknown names are denials.
    pub(crate) fn authorize_raw(
        &self,
        principal: &str,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<RawAuthorization> {
        let path = Path::parse(path).map_err(|e| StoreError::InvalidPath { field: "path", message: e.to_string() })?;
        if !earshot_core::schema::is_name(action) {
            return Err(StoreError::input("action", "not an action name (lowercase letters, digits, `_`, `-`)"));
        }
        let Some(principal) = self.names.pid(principal) else {
            return Ok(RawAuthorization::denied(AuthReason::DeniedUnknownPrincipal));
        };
        let Some(device) = self.names.pid(device) else {
            return Ok(RawAuthorization::denied(AuthReason::DeniedUnknownDevice));
        };
        let mut raw = self.dev.authorize(principal, device, &path, action, now_ms, ctx);
        // SPEC §6.4: an authority that holds is still refused when the use would complete an
        // aggregation conflict; owners are exempt.
        let conflicts = self.dev.schema.as_ref().is_some_and(|s| !s.conflicts.is_empty());
        if conflicts && raw.allowed() && raw.reason != AuthReason::AllowedOwner {
            if let Some(&grantor) = self.dev.devices.get(&device) {
                if let Some((conflict, earlier)) = self.dev.aggregation_clash(principal, grantor, &path, now_ms) {
                    raw.reason = AuthReason::DeniedAggregation;
                    raw.aggregation = Some(RawClash { conflict, earlier });
                }
            }
        }
        Ok(raw)
    }

    /// [`Devices::authorize_raw`], rendered for clients.
    pub(crate) fn authorize(
        &self,
        principal: &str,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<AuthorizeView> {
        let raw = self.authorize_raw(principal, device, path, action, now_ms, ctx)?;
        Ok(self.authorization_view(&raw))
    }

    pub(crate) fn authorization_view(&self, raw: &RawAuthorization) -> AuthorizeView {
        let name = |p: Pid| self.dev.party_name(self.names, p).to_string();
        let authority = raw.authority.map(|a| match a {
            RawAuthority::Owner { device, owner } => AuthorityView::Owner { device: name(device), owner: name(owner) },
            RawAuthority::Relation(e) => match self.dev.edge(e) {
                Some(r) => AuthorityView::Relation {
                    edge: r.name.to_string(),
                    grantor: name(r.grantor),
                    relation: r.relation.to_string(),
                    grantee: name(r.grantee),
                },
                None => AuthorityView::Capability { chain: Vec::new() },
            },
            RawAuthority::Capability(c) => AuthorityView::Capability {
                chain: self
                    .dev
                    .chain(c)
                    .into_iter()
                    .filter_map(|x| self.dev.cap(x))
                    .map(|r| ChainLinkView {
                        capability: r.name.to_string(),
                        holder: name(r.holder),
                        issuer: name(r.issuer),
                        paths: r.paths.iter().map(|p| p.to_string()).collect(),
                        actions: r.actions.to_vec(),
                    })
                    .collect(),
            },
        });
        let failure = raw.failure.as_ref().map(|(link, f)| FailureView {
            link: match link {
                RawLink::Edge(e) => self.dev.edge(*e).map(|r| r.name.to_string()).unwrap_or_default(),
                RawLink::Capability(c) => self.dev.cap(*c).map(|r| r.name.to_string()).unwrap_or_default(),
            },
            message: failure_message(f),
        });
        let aggregation = raw.aggregation.as_ref().map(|c| {
            let earlier = c.earlier.and_then(|u| self.dev.uses.get(u as usize));
            AggregationView {
                conflict: c.conflict.to_string(),
                earlier_use: earlier.map(|u| u.name.to_string()),
                earlier_device: earlier.map(|u| name(u.device)),
                earlier_path: earlier.map(|u| u.path.to_string()),
                earlier_at: earlier.map(|u| format_time(u.at_ms)),
            }
        });
        AuthorizeView {
            allowed: raw.allowed(),
            reason: raw.reason.code().to_string(),
            authority,
            failure,
            aggregation,
            historical: None,
        }
    }

    pub(crate) fn cid(&self, id: &str) -> Result<Cid> {
        self.dev.cap_ids.get(id).copied().ok_or_else(|| StoreError::CapabilityNotFound(id.to_string()))
    }

    pub(crate) fn capability_view(&self, c: Cid) -> Option<CapabilityView> {
        let r = self.dev.cap(c)?;
        Some(CapabilityView {
            id: r.name.to_string(),
            holder: self.dev.party_name(self.names, r.holder).to_string(),
            issuer: self.dev.party_name(self.names, r.issuer).to_string(),
            device: self.dev.party_name(self.names, r.device).to_string(),
            paths: r.paths.iter().map(|p| p.to_string()).collect(),
            actions: r.actions.to_vec(),
            constraints: constraints_view(&r.constraints),
            uses_left: r.uses_left,
            parent: r.parent.and_then(|p| self.dev.cap(p)).map(|p| p.name.to_string()),
            depth: usize::from(r.depth),
            revoked: r.revoked,
            invalidated_by: self.revoked_ancestor(c).and_then(|a| self.dev.cap(a)).map(|a| a.name.to_string()),
            created_revision: r.created_rev,
        })
    }

    /// The ids of `caps`, in their order.
    pub(crate) fn cap_names(&self, caps: Vec<Cid>) -> Vec<String> {
        caps.into_iter().filter_map(|x| self.dev.cap(x)).map(|r| r.name.to_string()).collect()
    }

    /// The nearest revoked strict ancestor of `c`: the capability it is invalidated through.
    fn revoked_ancestor(&self, c: Cid) -> Option<Cid> {
        let chain = self.dev.chain(c);
        chain.iter().rev().skip(1).copied().find(|a| self.dev.cap(*a).is_some_and(|r| r.revoked))
    }

    /// `GET /capabilities/{c}/chain`.
    pub(crate) fn capability_chain(&self, id: &str) -> Result<ChainView> {
        let c = self.cid(id)?;
        let chain = self.dev.chain(c).into_iter().filter_map(|x| self.capability_view(x)).collect();
        Ok(ChainView { capability: id.to_string(), chain })
    }

    /// `GET /capabilities/{c}/dependents`: what revoking `id` would invalidate.
    pub(crate) fn capability_dependents(&self, id: &str) -> Result<DependentsView> {
        let c = self.cid(id)?;
        let (newly, already) = self.dev.dependents(c);
        Ok(DependentsView {
            capability: id.to_string(),
            invalidates: self.cap_names(newly),
            already_invalid: self.cap_names(already),
        })
    }

    /// `GET /schema`: the declared relations, their live edges, and the unexercised ones.
    pub(crate) fn schema_view(&self) -> Result<SchemaView> {
        let schema = self.dev.schema.as_ref().ok_or(StoreError::SchemaNotFound)?;
        let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for e in self.dev.edges.iter().filter(|e| !e.revoked) {
            *counts.entry(&*e.relation).or_default() += 1;
        }
        let relations: Vec<RelationView> = schema
            .relations
            .values()
            .map(|r| RelationView {
                name: r.name.clone(),
                includes: r.includes.clone(),
                opens: r
                    .opens
                    .iter()
                    .map(|o| OpeningView { pattern: o.pattern.to_string(), actions: o.actions.clone() })
                    .collect(),
                edges: counts.get(r.name.as_str()).copied().unwrap_or(0),
            })
            .collect();
        let unexercised = relations.iter().filter(|r| r.edges == 0).map(|r| r.name.clone()).collect();
        let conflicts = schema
            .conflicts
            .iter()
            .map(|c| ConflictView {
                name: c.name.clone(),
                members: c.members.iter().map(|m| m.to_string()).collect(),
                window: c.window.clone(),
                window_ms: c.window_ms,
            })
            .collect();
        Ok(SchemaView { schema: schema.source.clone(), relations, unexercised, conflicts })
    }
}

fn failure_message(f: &LinkFailure) -> String {
    match f {
        LinkFailure::Revoked => "revoked".into(),
        LinkFailure::NotYetValid => "not yet valid (before `not_before`)".into(),
        LinkFailure::Expired => "expired (at or after `not_after`)".into(),
        LinkFailure::UsesExhausted => "no uses left".into(),
        LinkFailure::Condition(c) => c.to_string(),
    }
}
