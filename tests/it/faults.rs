//! Owns the known-fault evaluators (issue 5): deliberately broken variants of the admission and
//! derivation rules, one per fault, and the test that runs the conformance suite against each and
//! requires it to fail, while the correct evaluator passes. The fault table in `TESTING.md` is
//! generated from this run (`EARSHOT_BLESS=1`) and checked against it on every CI run.
//!
//! # How a fault is run
//!
//! A faulty evaluator is the reference oracle (`oracle.rs`) with `fault` set: the oracle's entry
//! points (`resolve_container`, `admits_v`, lookup, `apply`) then dispatch here, where the rules
//! are restated in full ([`decide`]) with one deliberate change. The conformance suite is run
//! against it two ways:
//!
//! - **Scenario files**: [`FaultTarget`] answers the scenario harness's JSON API. Every request
//!   goes to a real `TestApp` (validation, errors, views and revisions stay real); each accepted
//!   write is mirrored into the faulty oracle, and the answers that carry a rule (check, bulk
//!   check, lookup, derivation outcome) are replaced by the faulty oracle's. With no fault, this
//!   target passes every fixture: that is the control.
//! - **Property tests**: the harness of `properties.rs` compares the real store with the oracle
//!   after every step of random sequences. With a faulty oracle on one side, any disagreement the
//!   suite detects is exactly what it would report for a store with that fault (the comparison is
//!   symmetric), and `store_agrees_with_the_oracle` is the control.
//!
//! # Adding a fault
//!
//! Add a variant to [`Fault`] and to `Fault::ALL` with its name, SPEC clause and description,
//! implement the change in [`decide`], [`resolve_for_read`] or [`apply`], and run
//! `EARSHOT_BLESS=1 cargo test -p earshot-tests --test it faults::` to regenerate the table.
//! The SPEC §2 faults (a widening delegation accepted, a revoked ancestor ignored) run through
//! `device_faults.rs` (a broken evaluator behind the same JSON API, and the authorize property
//! harness of `devices_props.rs` with the same break in its reference); the ranking fault
//! (authorization after ranking) through `context_fault.rs`. [`PENDING`] lists rows of features
//! not yet built (none today).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Mutex;

use axum::http::StatusCode;
use earshot_core::{AudienceDigest, AudienceKind, Disposition, State};
use earshot_store::model::{
    format_time, parse_time, Command, ContainerInput, DeriveRequest, LifecycleRequest, NewGrant, NewIdentity, NewItem,
    NewParticipant,
};
use earshot_tests::{TestApp, T0_MS};
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};

use crate::context_fault::{RankingFault, RankingFaultTarget};
use crate::device_faults::{DeviceFault, DeviceFaultTarget};
use crate::oracle::{
    consent_complete, contains, grant_live, Audience, OGrant, OOutcome, ORefusal, ORole, OViewers, Oracle,
};
use crate::properties::{universe, Backing, Harness};
use crate::scenarios::{fixture_files, parse, run_scenario_on, Target};

/// One deliberately broken rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    ReversedSubset,
    UnknownViewersOwnerPrivate,
    ViewerOmitted,
    UnauthorizedAudienceAdded,
    DirectCheckUnauthorized,
    DerivedUnion,
    IncompleteProvenanceAdmitted,
    GrantAuthorizesDerivation,
    GrantInherited,
    GrantsUnioned,
    OwnerPrivateGrantRejected,
    AncestorLifecycleIgnored,
    BasisNotSmallest,
    ExpiryInclusive,
    MemberRemovalIgnored,
    QuarantineCreatedActive,
    WideningDelegationAccepted,
    RevokedAncestorIgnored,
    AuthorizedAfterRanking,
    GlobalRankingStatistics,
    AggregationIgnored,
    AggregationWindowIgnored,
    ConsentIgnored,
    RoleNotPropagated,
    /// SPEC §6.2: an item recorded without an author is the owner's whoever heard it.
    AuthorDefaultsToOwner,
    /// SPEC §1.8, §6.2: a removal leaves its authored items and its delegations as they were.
    RemovedAuthorKept,
    ExactJudgedAtRevisionTime,
}

impl Fault {
    pub const ALL: [Fault; 27] = [
        Fault::ReversedSubset,
        Fault::UnknownViewersOwnerPrivate,
        Fault::ViewerOmitted,
        Fault::UnauthorizedAudienceAdded,
        Fault::DirectCheckUnauthorized,
        Fault::DerivedUnion,
        Fault::IncompleteProvenanceAdmitted,
        Fault::GrantAuthorizesDerivation,
        Fault::GrantInherited,
        Fault::GrantsUnioned,
        Fault::OwnerPrivateGrantRejected,
        Fault::AncestorLifecycleIgnored,
        Fault::BasisNotSmallest,
        Fault::ExpiryInclusive,
        Fault::MemberRemovalIgnored,
        Fault::QuarantineCreatedActive,
        Fault::WideningDelegationAccepted,
        Fault::RevokedAncestorIgnored,
        Fault::AuthorizedAfterRanking,
        Fault::GlobalRankingStatistics,
        Fault::AggregationIgnored,
        Fault::AggregationWindowIgnored,
        Fault::ConsentIgnored,
        Fault::RoleNotPropagated,
        Fault::AuthorDefaultsToOwner,
        Fault::RemovedAuthorKept,
        Fault::ExactJudgedAtRevisionTime,
    ];

    /// (name, SPEC clause, what is broken). Rows before `BasisNotSmallest` are the list.
    pub fn describe(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Fault::ReversedSubset => ("reversed_subset", "§1.9", "admits when A ⊆ V instead of V ⊆ A"),
            Fault::UnknownViewersOwnerPrivate => (
                "unknown_viewers_owner_private",
                "§1.2, P3",
                "an unresolved container is read as owner-only {o} instead of U",
            ),
            Fault::ViewerOmitted => {
                ("viewer_omitted", "§1.2, P1", "resolution drops one current viewer (the last non-owner)")
            }
            Fault::UnauthorizedAudienceAdded => (
                "unauthorized_audience_added",
                "§1.6",
                "AuthSets also holds the audiences of revoked and expired grants",
            ),
            Fault::DirectCheckUnauthorized => {
                ("direct_check_unauthorized", "§1.9", "check by id admits any current item (lookup still authorizes)")
            }
            Fault::DerivedUnion => {
                ("derived_union", "§1.5, P5", "an intersection's audience is the union of its sources'")
            }
            Fault::IncompleteProvenanceAdmitted => (
                "incomplete_provenance_admitted",
                "§1.5",
                "a derivation from a non-current source is created instead of suppressed",
            ),
            Fault::GrantAuthorizesDerivation => (
                "grant_authorizes_derivation",
                "§1.5, §1.9",
                "a source reachable only through a grant does not suppress the derivation",
            ),
            Fault::GrantInherited => ("grant_inherited", "§1.6, P5", "derived items inherit their sources' grants"),
            Fault::GrantsUnioned => {
                ("grants_unioned", "§1.6", "viewers covered by the union of two grant audiences are admitted")
            }
            Fault::OwnerPrivateGrantRejected => {
                ("owner_private_grant_rejected", "§1.6", "a valid grant on an owner_private item never admits")
            }
            Fault::AncestorLifecycleIgnored => (
                "ancestor_lifecycle_ignored",
                "§1.7",
                "Current(m) looks at m's own state only, not its transitive sources",
            ),
            Fault::BasisNotSmallest => (
                "basis_not_smallest",
                "§1.9",
                "the basis is the first admitting grant, not the smallest (ties by digest)",
            ),
            Fault::ExpiryInclusive => ("expiry_inclusive", "§1.6", "a grant still counts at the instant it expires"),
            Fault::MemberRemovalIgnored => {
                ("member_removal_ignored", "§1.8", "removing a participant leaves it in audiences and grants")
            }
            Fault::QuarantineCreatedActive => (
                "quarantine_created_active",
                "§1.5",
                "a quarantine derivation is created active (current before release)",
            ),
            Fault::WideningDelegationAccepted => {
                ("widening_delegation_accepted", "§2.3", "a child capability wider than its parent is accepted")
            }
            Fault::RevokedAncestorIgnored => {
                ("revoked_ancestor_ignored", "§2.3", "a capability whose ancestor is revoked still authorizes")
            }
            Fault::AuthorizedAfterRanking => (
                "authorized_after_ranking",
                "§1.10",
                "context assembly ranks every item, keeps the fetch window, then drops the inadmissible",
            ),
            Fault::GlobalRankingStatistics => (
                "global_ranking_statistics",
                "§6.1",
                "context assembly ranks the admissible items with whole-index BM25 statistics",
            ),
            Fault::AggregationIgnored => {
                ("aggregation_ignored", "§6.4", "an explicit use that completes a schema conflict is allowed")
            }
            Fault::AggregationWindowIgnored => (
                "aggregation_window_ignored",
                "§6.4",
                "a conflict's window is ignored: an earlier use of another member blocks for ever",
            ),
            Fault::ConsentIgnored => {
                ("consent_ignored", "§6.3", "a grant admits while a subject's consent is missing or withdrawn")
            }
            Fault::RoleNotPropagated => (
                "role_not_propagated",
                "§6.2",
                "an item's role comes from its own author only, not from its transitive sources'",
            ),
            Fault::AuthorDefaultsToOwner => (
                "author_defaults_to_owner",
                "§6.2",
                "an item recorded without an `author` is the owner's even when others heard it (fails open)",
            ),
            Fault::RemovedAuthorKept => (
                "removed_author_kept",
                "§1.8, §6.2",
                "removing a participant keeps its delegations live and its items' authorship (no tombstone)",
            ),
            Fault::ExactJudgedAtRevisionTime => (
                "exact_judged_at_revision_time",
                "§2.6",
                "`at_exact` of the newest revision is usable as judged at its commit time, after a grant window closed",
            ),
        }
    }

    /// The SPEC §2 faults run through `device_faults.rs` instead of the oracle.
    fn device(self) -> Option<DeviceFault> {
        match self {
            Fault::WideningDelegationAccepted => Some(DeviceFault::WideningAccepted),
            Fault::RevokedAncestorIgnored => Some(DeviceFault::RevokedAncestorIgnored),
            Fault::AggregationIgnored => Some(DeviceFault::AggregationIgnored),
            Fault::AggregationWindowIgnored => Some(DeviceFault::AggregationWindowIgnored),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        self.describe().0
    }
}

/// Faults of features this branch does not have yet: (name, SPEC clause, fault, waiting for).
pub const PENDING: [(&str, &str, &str, &str); 0] = [];

/// Which read asks: a check by id (single or bulk) or a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Check,
    Lookup,
}

/// One full decision, in the service's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ODecision {
    pub admitted: bool,
    pub reason: &'static str,
    pub grant: Option<String>,
    /// The blocking state and the item holding it.
    pub blocked_by: Option<(State, String)>,
}

fn deny(reason: &'static str) -> ODecision {
    ODecision { admitted: false, reason, grant: None, blocked_by: None }
}

/// The first non-active item on the way up from `id` (itself, then each source in order,
/// depth first): SPEC §1.7 currentness with the blocking ancestor named.
fn blocked(o: &Oracle, id: &str) -> Option<(State, String)> {
    let i = o.item(id)?;
    if i.state != State::Active {
        return Some((i.state, i.id.clone()));
    }
    i.sources.iter().find_map(|s| blocked(o, s))
}

fn contains_f(fault: Option<Fault>, aud: &Audience, v: &OViewers) -> bool {
    match (fault, aud, v) {
        (Some(Fault::ReversedSubset), Some(m), OViewers::Set(s)) => m.is_subset(s),
        _ => contains(aud, v),
    }
}

fn digest(members: &BTreeSet<String>) -> AudienceDigest {
    let sorted: Vec<&String> = members.iter().collect();
    AudienceDigest::compute(AudienceKind::of_members(sorted.len()), &sorted)
}

/// SPEC §2.6: whether an `at_exact` read of the newest revision (committed at `then`, asked at
/// `now`) admits `item` for `v` as a usable answer: judged at `then`, and usable only when that
/// judgement could not differ from one at `now` (`Oracle::exact_usable`).
pub fn exact_admits(o: &Oracle, fault: Option<Fault>, item: &str, v: &OViewers, then: i64, now: i64) -> bool {
    let then_admits = o.admits_v(item, v, then);
    match fault {
        Some(Fault::ExactJudgedAtRevisionTime) => then_admits,
        _ => then_admits && o.exact_usable(then, now),
    }
}

/// SPEC §1.9 restated in full (reason, basis, blocking ancestor), with `fault` applied.
/// `None` for an unknown item.
pub fn decide(
    o: &Oracle,
    fault: Option<Fault>,
    item: &str,
    v: &OViewers,
    now: i64,
    access: Access,
) -> Option<ODecision> {
    let i = o.item(item)?;
    let not_current = match fault {
        Some(Fault::AncestorLifecycleIgnored) => (i.state != State::Active).then(|| (i.state, i.id.clone())),
        _ => blocked(o, item),
    };
    if let Some(b) = not_current {
        return Some(ODecision { blocked_by: Some(b), ..deny("denied_not_current") });
    }
    let by_origin = if i.audience.is_none() { "admitted_public" } else { "admitted_origin" };
    if fault == Some(Fault::DirectCheckUnauthorized) && access == Access::Check {
        return Some(ODecision { admitted: true, reason: by_origin, grant: None, blocked_by: None });
    }
    if contains_f(fault, &i.audience, v) {
        return Some(ODecision { admitted: true, reason: by_origin, grant: None, blocked_by: None });
    }
    let live = |g: &&OGrant| match fault {
        Some(Fault::UnauthorizedAudienceAdded) => true,
        Some(Fault::ExpiryInclusive) => !g.revoked && g.expires_at_ms.is_none_or(|e| now <= e),
        _ => grant_live(g, now),
    };
    let owner_private = i.audience.as_ref().is_some_and(|m| m.len() == 1);
    let grants: Vec<&OGrant> = o
        .grants_of(item)
        .filter(live)
        .filter(|_| !(fault == Some(Fault::OwnerPrivateGrantRejected) && owner_private))
        .collect();
    // SPEC §6.3: a grant still missing a subject's consent admits nothing; it only names the
    // denial when it alone would have contained the viewers.
    let effective = |g: &&&OGrant| fault == Some(Fault::ConsentIgnored) || consent_complete(g);
    let containing: Vec<&&OGrant> = grants.iter().filter(|g| contains_f(fault, &Some(g.members.clone()), v)).collect();
    let pending = containing.iter().any(|g| !effective(g));
    let admitting = containing.into_iter().filter(effective);
    let best = match fault {
        Some(Fault::BasisNotSmallest) => admitting.copied().next(),
        _ => admitting.copied().min_by_key(|g| (g.members.len(), digest(&g.members))),
    };
    let unioned = match (fault, v) {
        (Some(Fault::GrantsUnioned), OViewers::Set(s)) if grants.len() >= 2 => {
            let all: BTreeSet<String> = grants.iter().flat_map(|g| g.members.iter().cloned()).collect();
            s.is_subset(&all).then(|| grants[0])
        }
        _ => None,
    };
    if let Some(g) = best.or(unioned) {
        return Some(ODecision {
            admitted: true,
            reason: "admitted_grant",
            grant: Some(g.id.clone()),
            blocked_by: None,
        });
    }
    Some(deny(if *v == OViewers::Everyone {
        "denied_unresolved_viewers"
    } else if pending {
        "denied_consent_pending"
    } else {
        "denied_not_in_audience"
    }))
}

/// SPEC §6.2 trust under a fault (the oracle dispatches here when `fault` is set).
pub fn trusted(o: &Oracle, fault: Fault, item: &str) -> bool {
    match fault {
        Fault::RoleNotPropagated => o.item(item).is_some_and(|i| o.author_trusted(i)),
        _ => o.trusted(item),
    }
}

/// Admission under the oracle's fault (the oracle dispatches here when `fault` is set).
pub fn admits(o: &Oracle, item: &str, v: &OViewers, now: i64, access: Access) -> bool {
    decide(o, o.fault, item, v, now, access).is_some_and(|d| d.admitted)
}

/// Container resolution for reads, with a viewer fault applied to the correct `v`.
pub fn resolve_for_read(o: &Oracle, fault: Fault, c: &ContainerInput, v: OViewers) -> OViewers {
    match (fault, v) {
        (Fault::UnknownViewersOwnerPrivate, OViewers::Everyone) if o.participants.contains(&c.owner) => {
            OViewers::Set(BTreeSet::from([c.owner.clone()]))
        }
        (Fault::ViewerOmitted, OViewers::Set(mut s)) => {
            if let Some(last) = s.iter().rev().find(|p| **p != c.owner).cloned() {
                s.remove(&last);
            }
            OViewers::Set(s)
        }
        (_, v) => v,
    }
}

/// A write under a derivation or removal fault. `o.fault` is `None` while this runs, so
/// `o.apply` is the reference rule.
pub fn apply(o: &mut Oracle, fault: Fault, cmd: &Command, grant_id: &str) -> Result<OOutcome, ORefusal> {
    let derive = match cmd {
        Command::Derive { request, .. } if request.disposition != Disposition::Declassification => Some(request),
        _ => None,
    };
    match (fault, cmd) {
        (Fault::AuthorDefaultsToOwner, Command::CreateItem(i))
            if i.author.is_none() && i.id.as_ref().is_none_or(|id| o.item_requests.get(id) != Some(i)) =>
        {
            let mut i = i.clone();
            i.author = Some(i.owner.clone());
            let r = o.apply(&Command::CreateItem(i), grant_id);
            // The request is recorded as sent (a retry compares with it).
            if let (Ok(_), Command::CreateItem(sent)) = (&r, cmd) {
                if let Some(id) = &sent.id {
                    o.item_requests.insert(id.clone(), sent.clone());
                }
            }
            r
        }
        (Fault::RemovedAuthorKept, Command::RemoveParticipant { .. }) => {
            let (items, trust) = (o.items.clone(), o.trust.clone());
            let r = o.apply(cmd, grant_id);
            // Everything but the tombstones and the ended delegations, as the rule does.
            for (now, then) in o.items.iter_mut().zip(items) {
                now.author_removed = then.author_removed;
            }
            o.trust = trust;
            r
        }
        (Fault::IncompleteProvenanceAdmitted, Command::Derive { .. }) => {
            // Every item looks active while the derivation decides; states are restored after.
            let states: BTreeMap<String, State> = o.items.iter().map(|i| (i.id.clone(), i.state)).collect();
            for i in &mut o.items {
                i.state = State::Active;
            }
            let r = o.apply(cmd, grant_id);
            for i in &mut o.items {
                if let Some(s) = states.get(&i.id) {
                    i.state = *s;
                }
            }
            r
        }
        (Fault::GrantAuthorizesDerivation, Command::Derive { request, issuer }) => {
            let reaches = request.container.as_ref().is_some_and(|vi| {
                let v = o.resolve(&request.owner, vi);
                request.sources.iter().all(|s| {
                    o.item(s).is_some_and(|i| {
                        contains(&i.audience, &v)
                            || o.grants_of(s).any(|g| !g.revoked && contains(&Some(g.members.clone()), &v))
                    })
                })
            });
            if reaches {
                let request = DeriveRequest { container: None, ..request.clone() };
                o.apply(&Command::Derive { request, issuer: issuer.clone() }, grant_id)
            } else {
                o.apply(cmd, grant_id)
            }
        }
        (Fault::MemberRemovalIgnored, Command::RemoveParticipant { .. }) => {
            let audiences: Vec<Audience> = o.items.iter().map(|i| i.audience.clone()).collect();
            let members: Vec<BTreeSet<String>> = o.grants.iter().map(|g| g.members.clone()).collect();
            let r = o.apply(cmd, grant_id);
            for (i, a) in o.items.iter_mut().zip(audiences) {
                i.audience = a;
            }
            for (g, m) in o.grants.iter_mut().zip(members) {
                g.members = m;
            }
            r
        }
        _ => {
            let r = o.apply(cmd, grant_id);
            let (Ok(out), Some(req)) = (&r, derive) else { return r };
            for id in &out.ids {
                match fault {
                    Fault::DerivedUnion if out.outcome != "suppressed" && req.disposition != Disposition::Partition => {
                        let mut acc: Audience = Some(BTreeSet::new());
                        for s in &req.sources {
                            let src = o.item(s).and_then(|i| i.audience.clone());
                            acc = match (acc, src) {
                                (Some(a), Some(m)) => Some(a.union(&m).cloned().collect()),
                                _ => None,
                            };
                        }
                        if let Some(i) = o.items.iter_mut().find(|i| &i.id == id) {
                            i.audience = acc;
                        }
                    }
                    Fault::GrantInherited => {
                        let inherited: Vec<OGrant> = req
                            .sources
                            .iter()
                            .flat_map(|s| o.grants_of(s).filter(|g| !g.revoked).cloned().collect::<Vec<_>>())
                            .enumerate()
                            .map(|(n, g)| OGrant { id: format!("{id}-inherited-{n}"), item: id.clone(), ..g })
                            .collect();
                        o.grants.extend(inherited);
                    }
                    Fault::QuarantineCreatedActive if req.disposition == Disposition::Quarantine => {
                        if let Some(i) = o.items.iter_mut().find(|i| &i.id == id) {
                            i.state = State::Active;
                        }
                    }
                    _ => {}
                }
            }
            r
        }
    }
}

// ---- the scenario target ----------------------------------------------------------------------

/// The store the scenario harness uses.
const STORE_PREFIX: &str = "/v1/stores/s/";
/// Cursors this target hands out (and strips before forwarding).
const CURSOR_PREFIX: &str = "fault-cursor:";

/// An instant the service accepted, respelled in UTC (`...Z`), the only form the oracle parses.
fn utc(s: &str) -> String {
    parse_time("expires_at", s).map(format_time).unwrap_or_else(|_| s.to_string())
}

/// A faulty (or, with `None`, the correct) oracle behind the scenario harness's JSON API.
pub struct FaultTarget {
    app: TestApp,
    oracle: Mutex<Oracle>,
    now: AtomicI64,
    generated: AtomicUsize,
}

impl FaultTarget {
    pub fn new(fault: Option<Fault>) -> Self {
        let oracle = Oracle { fault, ..Oracle::new() };
        FaultTarget {
            app: TestApp::new(),
            oracle: Mutex::new(oracle),
            now: AtomicI64::new(T0_MS),
            generated: AtomicUsize::new(0),
        }
    }

    fn oracle(&self) -> std::sync::MutexGuard<'_, Oracle> {
        self.oracle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fresh_id(&self) -> String {
        format!("fault-gen-{}", self.generated.fetch_add(1, Ordering::Relaxed))
    }

    /// The command a successful write request stood for, with the ids the service generated.
    fn command(&self, method: &str, rest: &str, body: &Value, resp: &Value) -> Option<Command> {
        let ids: Vec<String> = resp
            .get("ids")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let from = |v: &Value| v.clone();
        let segs: Vec<&str> = rest.split('/').collect();
        Some(match (method, segs.as_slice()) {
            ("POST", ["participants"]) => {
                Command::CreateParticipant(serde_json::from_value::<NewParticipant>(from(body)).ok()?)
            }
            ("DELETE", ["participants", p]) => Command::RemoveParticipant { id: (*p).to_string() },
            ("POST", ["identities"]) => Command::BindIdentity(serde_json::from_value::<NewIdentity>(from(body)).ok()?),
            ("POST", ["items"]) => {
                let mut i: NewItem = serde_json::from_value(from(body)).ok()?;
                if i.id.is_none() {
                    i.id = ids.first().cloned();
                }
                Command::CreateItem(i)
            }
            ("POST", ["items", item, "lifecycle"]) => Command::Lifecycle {
                item: (*item).to_string(),
                request: serde_json::from_value::<LifecycleRequest>(from(body)).ok()?,
            },
            ("POST", ["items", item, "grants"]) => {
                let mut grant: NewGrant = serde_json::from_value(from(body)).ok()?;
                grant.expires_at = grant.expires_at.as_deref().map(utc);
                Command::Grant { item: (*item).to_string(), grant, issuer: "admin".into() }
            }
            ("DELETE", ["grants", g]) => Command::RevokeGrant { grant: (*g).to_string() },
            ("POST", ["grants", g, "consents"]) => Command::Consent {
                grant: (*g).to_string(),
                subject: body.get("subject").and_then(Value::as_str)?.to_string(),
            },
            ("DELETE", ["grants", g, "consents", subject]) => {
                Command::WithdrawConsent { grant: (*g).to_string(), subject: (*subject).to_string() }
            }
            ("POST", ["trust"]) => {
                Command::CreateTrust { trust: serde_json::from_value(from(body)).ok()?, issuer: "admin".into() }
            }
            ("DELETE", ["trust", t]) => Command::RevokeTrust { trust: (*t).to_string() },
            ("POST", ["derivations"]) => {
                let mut r: DeriveRequest = serde_json::from_value(from(body)).ok()?;
                r.expires_at = r.expires_at.as_deref().map(utc);
                let mut ids = ids.into_iter();
                if matches!(r.disposition, Disposition::Intersection | Disposition::Quarantine) && r.id.is_none() {
                    r.id = Some(ids.next().unwrap_or_else(|| self.fresh_id()));
                }
                for out in r.outputs.iter_mut().flatten() {
                    if out.id.is_none() {
                        out.id = Some(ids.next().unwrap_or_else(|| self.fresh_id()));
                    }
                }
                Command::Derive { request: r, issuer: "admin".into() }
            }
            _ => return None,
        })
    }

    fn render(d: &ODecision, role: Option<ORole>, out: &mut Value) {
        out["admitted"] = json!(d.admitted);
        out["reason"] = json!(d.reason);
        let Some(m) = out.as_object_mut() else { return };
        m.remove("basis");
        m.remove("grant");
        m.remove("blocked_by");
        // SPEC §6.2: the role of an admitted answer is the oracle's. The source a data answer
        // names is kept from the service when the oracle counts it untrusted too (the oracle
        // knows the set, not the service's walk order); otherwise one of the oracle's.
        let source = m.remove("untrusted_source");
        m.remove("data_reason");
        m.remove("author");
        m.remove("role");
        if let (true, Some(r)) = (d.admitted, role) {
            if r.instruction {
                m.insert("role".into(), json!("instruction"));
            } else {
                m.insert("role".into(), json!("data"));
                if let Some(a) = &r.author {
                    m.insert("author".into(), json!(a));
                }
                let item = m.get("item").and_then(Value::as_str).unwrap_or("").to_string();
                if r.untrusted.iter().any(|(i, _)| *i == item) {
                    let reason = match (&r.author, r.author_removed) {
                        (None, _) => "author_unknown",
                        (Some(_), true) => "author_removed",
                        (Some(_), false) => "untrusted_author",
                    };
                    m.insert("data_reason".into(), json!(reason));
                } else {
                    m.insert("data_reason".into(), json!("untrusted_source"));
                    let named = source.as_ref().and_then(|s| {
                        let author = s.get("author").and_then(Value::as_str).map(str::to_string);
                        let pair = (s.get("item")?.as_str()?.to_string(), author);
                        r.untrusted.contains(&pair).then_some(pair)
                    });
                    if let Some((i, a)) = named.or_else(|| r.untrusted.iter().next().cloned()) {
                        let mut src = serde_json::Map::new();
                        src.insert("item".into(), json!(i));
                        if let Some(a) = a {
                            src.insert("author".into(), json!(a));
                        }
                        m.insert("untrusted_source".into(), Value::Object(src));
                    }
                }
            }
        }
        if d.admitted {
            m.insert("basis".into(), json!(if d.grant.is_some() { "grant" } else { "origin" }));
        }
        if let Some(g) = &d.grant {
            m.insert("grant".into(), json!(g));
        }
        if let Some((state, item)) = &d.blocked_by {
            m.insert("blocked_by".into(), json!({ "state": state, "item": item }));
        }
    }

    /// Rewrites a successful read's decisions with the oracle's.
    fn read(&self, rest: &str, body: &Value, cursor: Option<usize>, resp: &mut Value) {
        if body.get("attempt").is_some() || body.get("consistency").is_some() {
            return;
        }
        let Some(c) = body.get("container").and_then(|c| serde_json::from_value::<ContainerInput>(c.clone()).ok())
        else {
            return;
        };
        let now = self.now.load(Ordering::SeqCst);
        let o = self.oracle();
        let v = o.resolve_container(&c);
        let decision = |item: &str, access: Access| decide(&o, o.fault, item, &v, now, access);
        let role = |item: &str| o.role(item);
        match rest {
            "check" => {
                let item = body.get("item").and_then(Value::as_str).unwrap_or("");
                if let Some(d) = decision(item, Access::Check) {
                    Self::render(&d, role(item), resp);
                }
            }
            "check/bulk" => {
                let items: Vec<String> = body
                    .get("items")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                if let Some(results) = resp.get_mut("results").and_then(Value::as_array_mut) {
                    for (item, out) in items.iter().zip(results.iter_mut()) {
                        if let Some(d) = decision(item, Access::Check) {
                            Self::render(&d, role(item), out);
                        }
                    }
                }
            }
            "lookup" => {
                let owners: Vec<String> = body
                    .get("owners")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                let owners = if owners.is_empty() { vec![c.owner.clone()] } else { owners };
                let all: Vec<(String, ODecision)> = o
                    .items
                    .iter()
                    .filter(|i| owners.contains(&i.owner))
                    .filter_map(|i| decision(&i.id, Access::Lookup).map(|d| (i.id.clone(), d)))
                    .filter(|(_, d)| d.admitted)
                    .collect();
                let limit = body.get("limit").and_then(Value::as_u64).map_or(100, |l| l as usize).max(1);
                let start = cursor.unwrap_or(0);
                let page: Vec<Value> = all
                    .iter()
                    .skip(start)
                    .take(limit)
                    .map(|(id, d)| {
                        let mut out = json!({ "item": id });
                        Self::render(d, role(id), &mut out);
                        out
                    })
                    .collect();
                resp["items"] = Value::Array(page);
                if let Some(m) = resp.as_object_mut() {
                    m.remove("cursor");
                    if start + limit < all.len() {
                        m.insert("cursor".into(), json!(format!("{CURSOR_PREFIX}{}", start + limit)));
                    }
                }
            }
            _ => {}
        }
    }
}

impl Target for FaultTarget {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let rest = path.strip_prefix(STORE_PREFIX).map(str::to_string);
        // Our own lookup cursors never reach the service: it validates the first page's request.
        let mut forwarded = body.clone();
        let mut cursor = None;
        if rest.as_deref() == Some("lookup") {
            if let Some(Value::Object(m)) = forwarded.as_mut() {
                if let Some(c) = m.get("cursor").and_then(Value::as_str).and_then(|c| c.strip_prefix(CURSOR_PREFIX)) {
                    cursor = c.parse::<usize>().ok();
                    m.remove("cursor");
                }
            }
        }
        let (status, mut resp) = self.app.call(method, path, forwarded).await;
        let (Some(rest), true) = (rest, status.is_success()) else { return (status, resp) };
        let body = body.unwrap_or(Value::Null);
        if method == "POST" && matches!(rest.as_str(), "check" | "check/bulk" | "lookup") {
            self.read(&rest, &body, cursor, &mut resp);
            return (status, resp);
        }
        let Some(cmd) = self.command(method, &rest, &body, &resp) else { return (status, resp) };
        let grant_id = match (resp.get("outcome").and_then(Value::as_str), &cmd) {
            (Some("granted"), _) | (Some("created" | "exists"), Command::CreateTrust { .. }) => {
                resp.pointer("/ids/0").and_then(Value::as_str).unwrap_or("").to_string()
            }
            _ => self.fresh_id(),
        };
        let mut oracle = self.oracle();
        oracle.now_ms = self.now.load(Ordering::SeqCst);
        match oracle.apply(&cmd, &grant_id) {
            Ok(out) => {
                if matches!(cmd, Command::Derive { .. }) {
                    resp["outcome"] = json!(out.outcome);
                    if out.outcome != "granted" {
                        resp["ids"] = json!(out.ids);
                    }
                }
                (status, resp)
            }
            Err(r) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({ "error": { "code": r.0, "message": "the evaluator refused what the service accepted" } }),
            ),
        }
    }

    fn revision(&self, store: &str) -> u64 {
        self.app.revision(store)
    }

    fn set_clock(&self, ms: i64) {
        self.now.store(ms, Ordering::SeqCst);
        self.app.clock.set(ms);
    }
}

// ---- the suite against each fault -------------------------------------------------------------

/// Property cases tried per fault (deterministic seed); the first failure kills it.
const PROPERTY_CASES: u32 = 48;

/// What the conformance suite says about one evaluator.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Fixture files (stems) that fail.
    pub fixtures: Vec<String>,
    /// The property harness's first failure, shortened.
    pub property: Option<String>,
    /// One failure message from the fixtures, for the report.
    pub example: Option<String>,
}

impl Verdict {
    pub fn killed(&self) -> bool {
        !self.fixtures.is_empty() || self.property.is_some()
    }
}

async fn scenario_verdict(fault: Option<Fault>) -> Verdict {
    let mut v = Verdict::default();
    for f in fixture_files() {
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
        let sc = parse(&text).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let failures = match (fault, fault.and_then(Fault::device)) {
            (_, Some(df)) => run_scenario_on(&DeviceFaultTarget::new(df), &sc).await,
            (Some(Fault::AuthorizedAfterRanking), _) => {
                run_scenario_on(&RankingFaultTarget::new(RankingFault::AfterRanking), &sc).await
            }
            (Some(Fault::GlobalRankingStatistics), _) => {
                run_scenario_on(&RankingFaultTarget::new(RankingFault::GlobalStatistics), &sc).await
            }
            _ => run_scenario_on(&FaultTarget::new(fault), &sc).await,
        };
        if let Some(first) = failures.first() {
            v.example.get_or_insert_with(|| first.clone());
            v.fixtures.push(stem);
        }
    }
    v
}

fn property_verdict(fault: Fault) -> Option<String> {
    if let Some(df) = fault.device() {
        return df.property_verdict(PROPERTY_CASES);
    }
    if fault == Fault::AuthorizedAfterRanking {
        // The context property test checks that no forbidden item enters a context, which a
        // post-filter also satisfies: this fault loses entitled items, which the fixtures catch.
        return None;
    }
    if fault == Fault::ConsentIgnored {
        // Its property (SPEC §6.3) has its own harness in `consent_props.rs` (random stores with
        // subjects, grants, consents and withdrawals), run here with the same fault.
        return crate::consent_props::fault_verdict(fault, PROPERTY_CASES);
    }
    if matches!(fault, Fault::RoleNotPropagated | Fault::AuthorDefaultsToOwner | Fault::RemovedAuthorKept) {
        // SPEC §6.2 has its own harness in `integrity.rs` (the fault on its oracle side).
        return crate::integrity::property_verdict(fault, PROPERTY_CASES);
    }
    if fault == Fault::GlobalRankingStatistics {
        // Its property (SPEC §6.1) has its own harness in `selection.rs`, whose control is this
        // fault and is required to fail there (`the_property_fails_for_whole_index_statistics`).
        return None;
    }
    let config =
        PtConfig { cases: PROPERTY_CASES, failure_persistence: None, max_shrink_iters: 0, ..PtConfig::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&universe(40), |u| {
        let mut h = Harness::new(Backing::Temporary).map_err(crate::properties::fail)?;
        h.oracle.fault = Some(fault);
        h.run_universe(&u).map_err(crate::properties::fail)?;
        h.compare_exhaustive().map_err(crate::properties::fail)?;
        Ok(())
    });
    result.err().map(|e| e.to_string().lines().next().unwrap_or("").chars().take(160).collect())
}

fn testing_md() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("TESTING.md")
}

const BEGIN: &str =
    "<!-- fault-table:begin (generated by `EARSHOT_BLESS=1 cargo test -p earshot-tests --test it faults::`) -->";
const END: &str = "<!-- fault-table:end -->";

/// The table of `TESTING.md`, from the verdicts.
fn render_table(verdicts: &[(Fault, Verdict)]) -> String {
    let killed = verdicts.iter().filter(|(_, v)| v.killed()).count();
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{killed} of {} faults killed{}. Property column: killed by \
         `store_agrees_with_the_oracle`'s harness (SPEC §1), `authorize_agrees_with_the_reference`'s \
         (SPEC §2), `consent_agrees_with_the_oracle`'s (SPEC §6.3), \
         `uses_agree_with_the_reference_and_never_aggregate`'s (SPEC §6.4) or \
         `roles_agree_with_the_oracle`'s (SPEC §6.2) within \
         {PROPERTY_CASES} deterministic cases; context assembly has no property that a post-filter \
         breaks (it loses entitled items, never admits a forbidden one), so its fault is killed by the \
         slot-noninterference fixture; the §6.1 fault is the control of `selection.rs`'s property \
         (`the_property_fails_for_whole_index_statistics` requires it to fail there) and is killed by \
         the selection-noninterference fixture.\n",
        verdicts.len(),
        if PENDING.is_empty() { String::new() } else { format!(" ({} further rows pending)", PENDING.len()) }
    );
    let _ = writeln!(t, "| # | fault | SPEC | what is broken | killed by scenario files | property tests |");
    let _ = writeln!(t, "|---|---|---|---|---|---|");
    for (n, (f, v)) in verdicts.iter().enumerate() {
        let (name, spec, what) = f.describe();
        let fixtures = if v.fixtures.is_empty() { "—".to_string() } else { v.fixtures.join(", ") };
        let prop = if v.property.is_some() { "killed" } else { "survives" };
        let _ = writeln!(t, "| {} | `{name}` | {spec} | {what} | {fixtures} | {prop} |", n + 1);
    }
    for (n, (name, spec, what, waiting)) in PENDING.iter().enumerate() {
        let _ =
            writeln!(t, "| {} | `{name}` | {spec} | {what} | pending: {waiting} | pending |", verdicts.len() + n + 1);
    }
    t
}

/// Runs the suite against the correct evaluator and every fault; the correct one must pass, every
/// fault must be killed, and `TESTING.md` must show exactly this table.
#[test]
fn faults_are_all_killed() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let control = rt.block_on(scenario_verdict(None));
    assert!(
        control.fixtures.is_empty(),
        "the correct evaluator must pass every fixture; failing: {:?}\n{}",
        control.fixtures,
        control.example.unwrap_or_default()
    );
    let verdicts: Vec<(Fault, Verdict)> = std::thread::scope(|s| {
        let handles: Vec<_> = Fault::ALL
            .iter()
            .map(|&f| {
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap_or_else(|e| panic!("{e}"));
                    let mut v = rt.block_on(scenario_verdict(Some(f)));
                    v.property = property_verdict(f);
                    (f, v)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| panic!("fault run panicked"))).collect()
    });
    let survivors: Vec<&str> = verdicts.iter().filter(|(_, v)| !v.killed()).map(|(f, _)| f.name()).collect();
    for (f, v) in &verdicts {
        eprintln!("{:32} fixtures {:?} property {:?}", f.name(), v.fixtures, v.property);
    }
    assert!(survivors.is_empty(), "faults the conformance suite does not kill: {survivors:?}");

    let table = render_table(&verdicts);
    let path = testing_md();
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let current = doc.split_once(BEGIN).and_then(|(_, rest)| rest.split_once(END)).map(|(t, _)| t.trim());
    if current != Some(table.trim()) {
        if std::env::var_os("EARSHOT_BLESS").is_some() {
            let new =
                match doc.split_once(BEGIN).and_then(|(head, rest)| rest.split_once(END).map(|(_, tail)| (head, tail)))
                {
                    Some((head, tail)) => format!("{head}{BEGIN}\n{table}{END}{tail}"),
                    None => format!("{doc}\n{BEGIN}\n{table}{END}\n"),
                };
            std::fs::write(&path, new).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        } else {
            panic!("TESTING.md's fault table is out of date; rerun with EARSHOT_BLESS=1. Expected:\n{table}");
        }
    }
}

#[test]
fn every_fault_has_a_distinct_name() {
    let names: BTreeSet<&str> = Fault::ALL.iter().map(|f| f.name()).chain(PENDING.iter().map(|p| p.0)).collect();
    assert_eq!(names.len(), Fault::ALL.len() + PENDING.len());
}
