//! Reverse questions at one snapshot: who can reach a device slice, what a principal can
//! reach, and which viewer sets an item's audiences admit.
//!
//! The device answers are computed by asking the forward decision: every candidate principal
//! (the owner, the grantees of the owner's edges, the holders of capabilities on the device)
//! is decided by the same `authorize` a direct request uses, so the two can never disagree.
//! The viewer sets follow SPEC §1.9 as stated in docs/RULES.md: each authorized audience is
//! tested on its own and never unioned with another, so a set split across two audiences is
//! admitted by neither.
//!
//! Read at a revision older than the newest (SPEC §2.6, docs/RULES.md §3.3), every answer here
//! is history, as a historical `authorize` or `check` is: its `into_historical` form allows and
//! admits nothing, with what was so then under `historical`.

use std::collections::{BTreeMap, BTreeSet};

use earshot_core::capability::{link_holds, AuthReason};
use earshot_core::condition::{Budget, RequestContext};
use earshot_core::path::Path;
use earshot_core::{AudienceKind, Currentness};
use serde::{Deserialize, Serialize};

use crate::common::{Pid, HISTORICAL_REASON};
use crate::compose::Snapshot;
use crate::devices::model::AuthorityView;
use crate::devices::{RawAuthority, RawAuthorization};
use crate::error::{Result, StoreError};
use crate::memory::model::{format_time, limits, BlockedBy};
use crate::memory::snapshot::{AudRec, Members};

/// `POST /authorize/principals`: who can reach this slice now.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachersRequest {
    pub device: String,
    pub path: String,
    pub action: String,
    #[serde(default)]
    pub context: RequestContext,
    #[serde(default)]
    pub consistency: Option<crate::kernel::token::Consistency>,
}

/// `POST /authorize/reachable`: what this principal can reach now.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachableRequest {
    pub principal: String,
    #[serde(default)]
    pub context: RequestContext,
    #[serde(default)]
    pub consistency: Option<crate::kernel::token::Consistency>,
}

/// `POST /items/{item}/viewers`: a set of participants to split per authorized audience.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewersRequest {
    pub participants: Vec<String>,
    #[serde(default)]
    pub consistency: Option<crate::kernel::token::Consistency>,
}

/// One principal that may reach a slice, decided as `authorize` decides it: `allowed`, the
/// reason and the authority `authorize` would use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reacher {
    pub principal: String,
    /// True at the newest revision; false in a historical answer.
    pub allowed: bool,
    pub reason: String,
    /// The authority used; absent in a historical answer.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub authority: Option<AuthorityView>,
    /// Set when read at a revision older than the newest: this entry as it was then, for audit
    /// and explanation only (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub historical: Option<Box<Reacher>>,
}

impl Reacher {
    /// This entry as a historical answer: never a usable allow, with the entry as it was then
    /// kept under `historical`.
    pub fn into_historical(self) -> Reacher {
        Reacher {
            principal: self.principal.clone(),
            allowed: false,
            reason: HISTORICAL_REASON.to_string(),
            authority: None,
            historical: Some(Box::new(self)),
        }
    }
}

/// Who can reach (device, path, action) now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachersView {
    pub device: String,
    pub path: String,
    pub action: String,
    /// By principal id.
    pub principals: Vec<Reacher>,
}

impl ReachersView {
    /// The answer read at an older revision: every entry historical.
    pub fn into_historical(mut self) -> ReachersView {
        self.principals = self.principals.into_iter().map(Reacher::into_historical).collect();
        self
    }
}

/// One authority a principal holds now, and what it opens on one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    pub device: String,
    /// True at the newest revision; false in a historical answer.
    pub allowed: bool,
    /// What `authorize` answers for a request this opens (`allowed_owner`, `allowed_relation`,
    /// `allowed_capability`), or `denied_historical_revision`.
    pub reason: String,
    /// The principal owns the device: every path, every action.
    pub all: bool,
    /// Path patterns opened (empty when `all`, and in a historical answer).
    pub paths: Vec<String>,
    /// Actions opened on those paths (empty when `all`, and in a historical answer).
    pub actions: Vec<String>,
    /// The authority; absent in a historical answer.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub authority: Option<AuthorityView>,
    /// Set when read at a revision older than the newest: this entry as it was then, for audit
    /// and explanation only (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub historical: Option<Box<Reach>>,
}

impl Reach {
    /// An opening at the newest revision, with the reason `authorize` gives for its authority.
    fn allowed(device: String, all: bool, paths: Vec<String>, actions: Vec<String>, authority: AuthorityView) -> Reach {
        let reason = match authority {
            AuthorityView::Owner { .. } => AuthReason::AllowedOwner,
            AuthorityView::Relation { .. } => AuthReason::AllowedRelation,
            AuthorityView::Capability { .. } => AuthReason::AllowedCapability,
        };
        let reason = reason.code().to_string();
        Reach { device, allowed: true, reason, all, paths, actions, authority: Some(authority), historical: None }
    }

    /// This entry as a historical answer: it opens nothing and carries no authority, with the
    /// entry as it was then kept under `historical`.
    pub fn into_historical(self) -> Reach {
        Reach {
            device: self.device.clone(),
            allowed: false,
            reason: HISTORICAL_REASON.to_string(),
            all: false,
            paths: Vec::new(),
            actions: Vec::new(),
            authority: None,
            historical: Some(Box::new(self)),
        }
    }
}

/// What a principal can reach now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachableView {
    pub principal: String,
    pub reaches: Vec<Reach>,
}

impl ReachableView {
    /// The answer read at an older revision: every entry historical.
    pub fn into_historical(mut self) -> ReachableView {
        self.reaches = self.reaches.into_iter().map(Reach::into_historical).collect();
        self
    }
}

/// One authorized audience of an item as the largest viewer set it admits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerAudience {
    /// `origin` or `grant`.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub grant: Option<String>,
    pub kind: AudienceKind,
    pub digest: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expires_at: Option<String>,
    /// Public: every container is admitted, resolved or not.
    pub everyone: bool,
    /// The largest admitted viewer set: a container whose viewers (owner included) are all
    /// in it is admitted through this audience. Empty when `everyone`.
    pub members: Vec<String>,
}

/// `GET /items/{item}/viewers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerSetsView {
    pub item: String,
    /// A non-current item admits no container at all (`audiences` is then empty). False in a
    /// historical answer.
    pub current: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub blocked_by: Option<BlockedBy>,
    pub audiences: Vec<ViewerAudience>,
    /// `denied_historical_revision` in a historical answer; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// Set when read at a revision older than the newest: the answer as it was then, for audit
    /// and explanation only (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub historical: Option<Box<ViewerSetsView>>,
}

impl ViewerSetsView {
    /// This answer as history: no audience admits anything, and the answer as it was then is
    /// kept under `historical`.
    pub fn into_historical(self) -> ViewerSetsView {
        ViewerSetsView {
            item: self.item.clone(),
            current: false,
            blocked_by: None,
            audiences: Vec::new(),
            reason: Some(HISTORICAL_REASON.to_string()),
            historical: Some(Box::new(self)),
        }
    }
}

/// `POST /items/{item}/viewers`: the given participants, split per authorized audience.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerSubsets {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub grant: Option<String>,
    pub kind: AudienceKind,
    pub digest: String,
    /// The given participants inside this audience: any container whose viewers are among
    /// them is admitted through it.
    pub admitted: Vec<String>,
    /// The given participants outside it.
    pub outside: Vec<String>,
    /// Whether the whole given set is admitted through this audience.
    pub all: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerSubsetsView {
    pub item: String,
    pub current: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub blocked_by: Option<BlockedBy>,
    /// Whether one audience holds every given participant: a container of exactly them is
    /// admitted. Audiences are never unioned, so a set split across two is not.
    pub admitted_together: bool,
    /// Given ids that are not participants of the store (inside no audience but the public).
    pub unknown: Vec<String>,
    pub audiences: Vec<ViewerSubsets>,
    /// `denied_historical_revision` in a historical answer; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// Set when read at a revision older than the newest: the answer as it was then, for audit
    /// and explanation only (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub historical: Option<Box<ViewerSubsetsView>>,
}

impl ViewerSubsetsView {
    /// This answer as history: nobody is admitted, together or through any audience, and the
    /// answer as it was then is kept under `historical`.
    pub fn into_historical(self) -> ViewerSubsetsView {
        ViewerSubsetsView {
            item: self.item.clone(),
            current: false,
            blocked_by: None,
            admitted_together: false,
            unknown: Vec::new(),
            audiences: Vec::new(),
            reason: Some(HISTORICAL_REASON.to_string()),
            historical: Some(Box::new(self)),
        }
    }
}

impl Snapshot {
    /// Who can reach (device, path, action) now, each with the authority `authorize` uses.
    /// Scans the device owner's edges and the device's capabilities: linear in the edges and
    /// capabilities of the store, so this is an operator's question, not a hot path.
    pub fn who_can_reach(
        &self,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<ReachersView> {
        let p = Path::parse(path).map_err(|e| StoreError::InvalidPath { field: "path", message: e.to_string() })?;
        if !earshot_core::schema::is_name(action) {
            return Err(StoreError::input("action", "not an action name (lowercase letters, digits, `_`, `-`)"));
        }
        let d = self.pid(device).ok_or_else(|| StoreError::DeviceNotFound(device.to_string()))?;
        let owner = *self.dev.devices.get(&d).ok_or_else(|| StoreError::DeviceNotFound(device.to_string()))?;
        let mut candidates: BTreeSet<Pid> = BTreeSet::from([owner]);
        candidates.extend(self.dev.edges.iter().filter(|e| e.grantor == owner).map(|e| e.grantee));
        candidates.extend(self.dev.caps.iter().filter(|c| c.device == d).map(|c| c.holder));
        let devices = self.devices();
        let mut principals: Vec<Reacher> = candidates
            .into_iter()
            .filter_map(|who| {
                let raw: RawAuthorization = self.dev.authorize(who, d, &p, action, now_ms, ctx);
                if !raw.allowed() {
                    return None;
                }
                let view = devices.authorization_view(&raw);
                Some(Reacher {
                    principal: self.party_name(who).to_string(),
                    allowed: true,
                    reason: view.reason,
                    authority: Some(view.authority?),
                    historical: None,
                })
            })
            .collect();
        principals.sort_by(|a, b| a.principal.cmp(&b.principal));
        Ok(ReachersView { device: device.into(), path: path.into(), action: action.into(), principals })
    }

    /// What `principal` can reach now: the devices it owns, the openings of every edge it
    /// receives that holds now (on each of the grantor's devices), and every capability it
    /// holds whose chain holds now. Each link is judged as `authorize` judges it (revocation,
    /// window, uses, condition over `ctx`).
    pub fn what_can_reach(&self, principal: &str, now_ms: i64, ctx: &RequestContext) -> Result<ReachableView> {
        let who = self.pid(principal).ok_or_else(|| StoreError::ParticipantNotFound(principal.to_string()))?;
        let devices = self.devices();
        let view = |a: RawAuthority| {
            devices
                .authorization_view(&RawAuthorization {
                    reason: earshot_core::capability::AuthReason::AllowedOwner,
                    authority: Some(a),
                    failure: None,
                    aggregation: None,
                })
                .authority
        };
        let mut by_owner: BTreeMap<Pid, Vec<Pid>> = BTreeMap::new();
        for (d, o) in self.dev.devices.iter() {
            by_owner.entry(*o).or_default().push(*d);
        }
        let name = |p: Pid| self.party_name(p).to_string();
        let mut reaches = Vec::new();
        for d in by_owner.get(&who).into_iter().flatten() {
            if let Some(authority) = view(RawAuthority::Owner { device: *d, owner: who }) {
                reaches.push(Reach::allowed(name(*d), true, Vec::new(), Vec::new(), authority));
            }
        }
        let budget = Budget::per_decision();
        let schema = self.dev.schema.as_ref();
        for (eid, e) in self.dev.edges.iter().enumerate() {
            if e.grantee != who || link_holds(e.revoked, &e.constraints, e.uses_left, now_ms, ctx, &budget).is_err() {
                continue;
            }
            let Some(rel) = schema.and_then(|s| s.relation(&e.relation)) else { continue };
            let Some(authority) = view(RawAuthority::Relation(u32::try_from(eid).unwrap_or(u32::MAX))) else {
                continue;
            };
            for d in by_owner.get(&e.grantor).into_iter().flatten() {
                for o in &rel.opens {
                    let paths = vec![o.pattern.to_string()];
                    reaches.push(Reach::allowed(name(*d), false, paths, o.actions.clone(), authority.clone()));
                }
            }
        }
        for (cid, c) in self.dev.caps.iter().enumerate() {
            let cid = u32::try_from(cid).unwrap_or(u32::MAX);
            if c.holder != who || self.dev.chain_holds(cid, now_ms, ctx, &budget).is_err() {
                continue;
            }
            if let Some(authority) = view(RawAuthority::Capability(cid)) {
                let paths = c.paths.iter().map(|p| p.to_string()).collect();
                reaches.push(Reach::allowed(name(c.device), false, paths, c.actions.to_vec(), authority));
            }
        }
        reaches.sort_by(|a, b| a.device.cmp(&b.device));
        Ok(ReachableView { principal: principal.into(), reaches })
    }

    /// The authorized audiences of a current item (origin first, then each effective grant), or
    /// none, with why the item is not current.
    fn admitting(&self, item: &str, now_ms: i64) -> Result<(bool, Option<BlockedBy>, Vec<AudienceOf<'_>>)> {
        let iid = self.iid(item).ok_or_else(|| StoreError::ItemNotFound(item.to_string()))?;
        let rec = self.item(iid).ok_or_else(|| StoreError::ItemNotFound(item.to_string()))?;
        if let Currentness::NotCurrent { state, ancestor } = rec.current() {
            let by = ancestor.and_then(|a| self.item(a)).map_or_else(|| rec.name.to_string(), |a| a.name.to_string());
            return Ok((false, Some(BlockedBy { state, item: by }), Vec::new()));
        }
        let origin = self.aud(rec.aud).ok_or_else(|| StoreError::Integrity(format!("audience {} missing", rec.aud)))?;
        let mut out = vec![AudienceOf { grant: None, expires_at_ms: None, aud: origin }];
        for &gid in rec.grants() {
            // Only effective grants: a pending one (SPEC §6.3) admits no viewer set.
            let Some(g) = self.grant(gid).filter(|g| g.is_effective(now_ms)) else { continue };
            let Some(a) = self.aud(g.aud) else { continue };
            out.push(AudienceOf { grant: Some(g.name.to_string()), expires_at_ms: g.expires_at_ms, aud: a });
        }
        Ok((true, None, out))
    }

    /// `GET /items/{item}/viewers`: each authorized audience as the largest viewer set it
    /// admits. Any container whose viewers all lie in one of them is admitted; no other is.
    pub fn viewer_sets(&self, item: &str, now_ms: i64) -> Result<ViewerSetsView> {
        let (current, blocked_by, auds) = self.admitting(item, now_ms)?;
        let audiences = auds
            .into_iter()
            .map(|a| ViewerAudience {
                source: a.source().into(),
                kind: a.aud.kind,
                digest: a.aud.digest.to_hex(),
                expires_at: a.expires_at_ms.map(format_time),
                everyone: a.aud.members == Members::Everyone,
                members: self.member_names(a.aud),
                grant: a.grant,
            })
            .collect();
        Ok(ViewerSetsView { item: item.into(), current, blocked_by, audiences, reason: None, historical: None })
    }

    /// `POST /items/{item}/viewers`: the given participants split per authorized audience.
    pub fn viewer_subsets(&self, item: &str, participants: &[String], now_ms: i64) -> Result<ViewerSubsetsView> {
        if participants.len() > limits::MAX_VIEWERS {
            return Err(StoreError::LimitExceeded { field: "participants", limit: limits::MAX_VIEWERS });
        }
        let mut given: Vec<&String> = participants.iter().collect();
        for p in &given {
            crate::error::check_id("participants", p)?;
        }
        given.sort();
        given.dedup();
        let (current, blocked_by, auds) = self.admitting(item, now_ms)?;
        let unknown: Vec<String> = given.iter().filter(|p| self.pid(p).is_none()).map(|p| p.to_string()).collect();
        let audiences: Vec<ViewerSubsets> = auds
            .into_iter()
            .map(|a| {
                let inside = |p: &str| match &a.aud.members {
                    Members::Everyone => true,
                    Members::Only(m) => self.pid(p).is_some_and(|pid| m.binary_search(&pid).is_ok()),
                };
                let (admitted, outside): (Vec<String>, Vec<String>) =
                    given.iter().map(|p| p.to_string()).partition(|p| inside(p));
                ViewerSubsets {
                    source: a.source().into(),
                    kind: a.aud.kind,
                    digest: a.aud.digest.to_hex(),
                    all: outside.is_empty(),
                    admitted,
                    outside,
                    grant: a.grant,
                }
            })
            .collect();
        let admitted_together = audiences.iter().any(|a| a.all);
        Ok(ViewerSubsetsView {
            item: item.into(),
            current,
            blocked_by,
            admitted_together,
            unknown,
            audiences,
            reason: None,
            historical: None,
        })
    }
}

/// An authorized audience and the grant behind it (none: the origin).
struct AudienceOf<'a> {
    grant: Option<String>,
    expires_at_ms: Option<i64>,
    aud: &'a AudRec,
}

impl AudienceOf<'_> {
    fn source(&self) -> &'static str {
        if self.grant.is_some() {
            "grant"
        } else {
            "origin"
        }
    }
}
