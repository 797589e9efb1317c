//! Owns the property tests: random operation sequences applied to the store and to the reference
//! oracle (`oracle.rs`), with every decision, lookup and item view compared after each step, and
//! the SPEC §1.9 properties P1–P5 and policy completeness checked on the way.
//!
//! Refusals are mirrored exactly: the oracle decides accept/refuse on its own, and a write the
//! store refuses must be one the oracle refuses too (and vice versa); a refused write must leave
//! the store's revision unchanged, which the full comparison after the step then confirms. The
//! store must never answer with an integrity or storage failure.
//!
//! The harness and generators here are shared with `differential.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use earshot_core::{Action, AudienceKind, Disposition, Quality, State};
use earshot_store::model::{
    format_time, AudienceView, Command, Consistency, ContainerInput, DecisionView, DeriveRequest, Identity, ItemView,
    LifecycleRequest, NewGrant, NewIdentity, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind,
    PartitionOutput, ViewersInput,
};
use earshot_store::{Earshot, ManualClock, ResolvedContainer, Snapshot, StoreHandle};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::faults::Access;
use crate::oracle::{audience_within, consent_complete, contains, grant_live, Audience, OViewers, Oracle};

/// 2026-01-01T00:00:00Z, where every test clock starts.
pub(crate) const T0_MS: i64 = earshot_tests::T0_MS;
pub(crate) const STORE: &str = "props";
/// The named universe: the first five can exist; `ghost` never does (an unknown id).
pub(crate) const PARTS: [&str; 6] = ["ann", "bob", "cat", "dan", "eve", "ghost"];
/// Who records items (so `dan` and `eve` can usually be removed).
pub(crate) const OWNERS: [&str; 3] = ["ann", "bob", "cat"];
/// Identifiers of the `email` transport; `e2` is never bound by the initial setup.
pub(crate) const IDENTS: [&str; 3] = ["e0", "e1", "e2"];

// ---- generated operations ---------------------------------------------------------------------

/// Viewer evidence: indices into [`PARTS`] and [`IDENTS`], and a quality.
#[derive(Debug, Clone)]
pub(crate) struct Ev {
    pub parts: Vec<u8>,
    pub idents: Vec<u8>,
    pub quality: Quality,
}

#[derive(Debug, Clone)]
pub(crate) enum Origin {
    Public,
    OwnerPrivate,
    Viewers(Ev),
}

/// One generated operation. Indices are resolved against the state when the step runs, so
/// shrinking keeps sequences meaningful.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    AddParticipant(u8),
    RemoveParticipant(u8),
    Bind {
        ident: u8,
        part: u8,
    },
    Record {
        owner: u8,
        origin: Origin,
        reuse_id: bool,
    },
    Life {
        item: u8,
        action: Action,
        by: Option<u8>,
    },
    Intersect {
        owner: u8,
        picks: Vec<u8>,
        container: Option<Ev>,
        quarantine: bool,
        foreign: bool,
    },
    Partition {
        owner: u8,
        picks: Vec<u8>,
        container: Option<Ev>,
        groups: Vec<u8>,
        by_audience: bool,
    },
    Grant {
        item: u8,
        members: Vec<u8>,
        expiry_s: Option<u8>,
        declassify: bool,
    },
    Revoke(u8),
    /// Advances the clock by `n` × 500 ms.
    Tick(u8),
    /// Closes and reopens the store (only where the harness runs on a real directory).
    Reopen,
    /// Evicts the store from memory and loads it again on its next use (issue 33).
    Evict,
}

/// A generated universe: how many of the first participants exist, initial identity bindings
/// (`email:e{ident}` → participant index) and the operation sequence.
#[derive(Debug, Clone)]
pub(crate) struct Universe {
    pub initial: u8,
    pub binds: Vec<(u8, u8)>,
    pub steps: Vec<Step>,
}

pub(crate) fn ev() -> impl Strategy<Value = Ev> {
    let part = prop_oneof![24 => 0u8..5, 1 => Just(5u8)];
    let quality = prop_oneof![
        24 => Just(Quality::Fresh),
        1 => Just(Quality::Stale),
        1 => Just(Quality::LowConfidence),
        1 => Just(Quality::Conflicting),
    ];
    let idents = prop_oneof![4 => Just(vec![]), 1 => prop::collection::vec(0u8..3, 1..3)];
    (prop::collection::vec(part, 0..3), idents, quality).prop_map(|(parts, idents, quality)| Ev {
        parts,
        idents,
        quality,
    })
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        2 => Just(Action::Supersede),
        3 => Just(Action::Freeze),
        3 => Just(Action::Unfreeze),
        3 => Just(Action::Quarantine),
        3 => Just(Action::Release),
        1 => Just(Action::Revoke),
        1 => Just(Action::Delete),
    ]
}

pub(crate) fn step() -> impl Strategy<Value = Step> {
    let origin = prop_oneof![
        1 => Just(Origin::Public),
        1 => Just(Origin::OwnerPrivate),
        4 => ev().prop_map(Origin::Viewers),
    ];
    let picks = prop::collection::vec(any::<u8>(), 1..4);
    prop_oneof![
        1 => any::<u8>().prop_map(Step::AddParticipant),
        // Mostly the participants who own nothing (dan, eve) or do not exist (ghost).
        2 => prop_oneof![4 => 3u8..6, 1 => 0u8..3].prop_map(Step::RemoveParticipant),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(ident, part)| Step::Bind { ident, part }),
        10 => (any::<u8>(), origin, prop::bool::weighted(0.05))
            .prop_map(|(owner, origin, reuse_id)| Step::Record { owner, origin, reuse_id }),
        5 => (any::<u8>(), action(), prop::option::weighted(0.5, any::<u8>()))
            .prop_map(|(item, action, by)| Step::Life { item, action, by }),
        4 => (any::<u8>(), picks.clone(), prop::option::weighted(0.4, ev()), prop::bool::weighted(0.2), prop::bool::weighted(0.1))
            .prop_map(|(owner, picks, container, quarantine, foreign)| Step::Intersect { owner, picks, container, quarantine, foreign }),
        2 => (any::<u8>(), picks, prop::option::weighted(0.3, ev()), prop::collection::vec(any::<u8>(), 1..4), prop::bool::weighted(0.6))
            .prop_map(|(owner, picks, container, groups, by_audience)| Step::Partition { owner, picks, container, groups, by_audience }),
        4 => (any::<u8>(), prop_oneof![1 => Just(vec![]), 12 => prop::collection::vec(prop_oneof![12 => 0u8..5, 1 => Just(5u8)], 1..3)], prop::option::weighted(0.5, 0u8..6), prop::bool::weighted(0.25))
            .prop_map(|(item, members, expiry_s, declassify)| Step::Grant { item, members, expiry_s, declassify }),
        1 => any::<u8>().prop_map(Step::Revoke),
        2 => (0u8..8).prop_map(Step::Tick),
    ]
}

pub(crate) fn universe(max_steps: usize) -> impl Strategy<Value = Universe> {
    // `e0` is always bound once (to a random participant) so identity evidence often resolves.
    (3u8..=5, 0u8..5, prop::collection::vec((0u8..3, 0u8..5), 0..3), prop::collection::vec(step(), 1..max_steps))
        .prop_map(|(initial, e0, mut binds, steps)| {
            binds.insert(0, (0, e0));
            Universe { initial, binds, steps }
        })
}

/// Proptest cases: `PROPTEST_CASES` when set, else `default`.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub(crate) fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        // No regression files in the source tree; a failure prints its minimal input.
        failure_persistence: None,
        max_shrink_iters: 2048,
        ..ProptestConfig::default()
    }
}

pub(crate) fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

// ---- conversions ------------------------------------------------------------------------------

pub(crate) fn part(i: u8) -> &'static str {
    PARTS[i as usize % PARTS.len()]
}

pub(crate) fn owner(i: u8) -> &'static str {
    OWNERS[i as usize % OWNERS.len()]
}

pub(crate) fn ident(i: u8) -> Identity {
    Identity { transport: "email".into(), identifier: IDENTS[i as usize % IDENTS.len()].into() }
}

pub(crate) fn viewers(ev: &Ev) -> ViewersInput {
    ViewersInput {
        participants: ev.parts.iter().map(|p| part(*p).to_string()).collect(),
        identities: ev.idents.iter().map(|i| ident(*i)).collect(),
        quality: ev.quality,
    }
}

pub(crate) fn container(owner: &str, participants: &[&str]) -> ContainerInput {
    ContainerInput {
        owner: owner.into(),
        viewers: ViewersInput {
            participants: participants.iter().map(|p| p.to_string()).collect(),
            ..Default::default()
        },
    }
}

/// An item view's origin audience as the oracle spells it.
pub(crate) fn audience_of(view: &AudienceView) -> Audience {
    match view.kind {
        AudienceKind::Public => None,
        _ => Some(view.members.iter().cloned().collect()),
    }
}

/// The containers compared after every step: owner-only, resolved subsets, identities,
/// unresolved through an unknown id, stale and unknown owner, for each owner.
pub(crate) fn standard_containers() -> Vec<ContainerInput> {
    let mut out = Vec::new();
    for (n, o) in OWNERS.iter().enumerate() {
        let other = OWNERS[(n + 1) % OWNERS.len()];
        out.push(container(o, &[]));
        out.push(container(o, &[other]));
        out.push(container(o, &["dan"]));
        out.push(container(o, &["dan", "eve"]));
        out.push(container(o, &PARTS[..5]));
        out.push(container(o, &["ghost"]));
        let mut stale = container(o, &[]);
        stale.viewers.quality = Quality::Stale;
        out.push(stale);
        let mut by_ident = container(o, &[]);
        by_ident.viewers.identities = vec![ident(0)];
        out.push(by_ident);
        let mut by_idents = container(o, &[other]);
        by_idents.viewers.identities = vec![ident(1), ident(2)];
        out.push(by_idents);
    }
    out.push(container("ghost", &[]));
    out
}

/// Every subset of the five named participants as viewers, for each owner.
pub(crate) fn exhaustive_containers() -> Vec<(ContainerInput, u32)> {
    let mut out = Vec::new();
    for o in OWNERS {
        for mask in 0u32..32 {
            let ps: Vec<&str> = (0..5).filter(|b| mask & (1 << b) != 0).map(|b| PARTS[b]).collect();
            out.push((container(o, &ps), mask));
        }
    }
    out
}

/// Owner filters tried for each lookup: the default, every owner, one other owner, unknown.
pub(crate) fn owner_filters(c: &ContainerInput) -> Vec<Vec<String>> {
    let other = OWNERS.iter().find(|o| **o != c.owner).map_or("ann", |o| *o);
    vec![vec![], OWNERS.iter().map(|o| o.to_string()).collect(), vec![other.to_string()], vec!["ghost".to_string()]]
}

/// Follows cursors with a small page size; returns every admitted item id in order.
pub(crate) fn lookup_all(
    snap: &Snapshot,
    c: &ResolvedContainer,
    owners: &[String],
    limit: usize,
    now_ms: i64,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let page =
            snap.lookup(c, owners, cursor.as_deref(), Some(limit), now_ms).map_err(|e| format!("lookup: {e}"))?;
        if page.items.len() > limit {
            return Err(format!("lookup page of {} items exceeds limit {limit}", page.items.len()));
        }
        for d in &page.items {
            if !d.admitted {
                return Err(format!("lookup returned a denied decision {d:?}"));
            }
        }
        out.extend(page.items.into_iter().map(|d| d.item));
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(out),
        }
    }
    Err("lookup cursor never ended".into())
}

// ---- the properties, as checkers that can be fed bad data ------------------------------------

/// P1: the basis audience of an admitted decision contains every viewer.
pub(crate) fn p1_confined(item: &str, basis: &Audience, v: &OViewers) -> Result<(), String> {
    if contains(basis, v) {
        Ok(())
    } else {
        Err(format!("P1: `{item}` admitted with basis audience {basis:?} that does not contain viewers {v:?}"))
    }
}

/// P2: fewer viewers never admit fewer items (`narrow` is the admitted set with one viewer fewer).
pub(crate) fn p2_antimonotone(wide: &BTreeSet<String>, narrow: &BTreeSet<String>) -> Result<(), String> {
    let lost: Vec<&String> = wide.difference(narrow).collect();
    if lost.is_empty() {
        Ok(())
    } else {
        Err(format!("P2: dropping a viewer lost {lost:?}"))
    }
}

/// P3: an unresolved container admits only current public items.
pub(crate) fn p3_fail_closed(item: &str, aud: &Audience, current: bool) -> Result<(), String> {
    if aud.is_none() && current {
        Ok(())
    } else {
        Err(format!("P3: unresolved container admitted `{item}` (audience {aud:?}, current {current})"))
    }
}

/// P4: an origin audience changes only by member removal, which removes exactly that member.
pub(crate) fn p4_stable(item: &str, before: &Audience, after: &Audience, removed: Option<&str>) -> Result<(), String> {
    let expected = match (before, removed) {
        (Some(m), Some(p)) => Some(m.iter().filter(|x| x.as_str() != p).cloned().collect()),
        _ => before.clone(),
    };
    if after == &expected {
        Ok(())
    } else {
        Err(format!("P4: audience of `{item}` went from {before:?} to {after:?} (removed: {removed:?})"))
    }
}

/// P5: a derived audience lies within a source's (equal for partition outputs).
pub(crate) fn p5_within(item: &str, derived: &Audience, source: &Audience, exact: bool) -> Result<(), String> {
    let ok = if exact { derived == source } else { audience_within(derived, source) };
    if ok {
        Ok(())
    } else {
        Err(format!("P5: derived `{item}` has audience {derived:?}, not within its source's {source:?}"))
    }
}

// ---- the harness ------------------------------------------------------------------------------

/// Where a harness keeps its records (the shared factory: temporary sled, a sled directory,
/// PostgreSQL tables).
pub(crate) use earshot_tests::Datastore as Backing;

/// A store and the oracle, driven by the same steps.
pub(crate) struct Harness {
    // Field order is drop order: the store handle before the instance that owns the backend.
    pub store: Arc<StoreHandle>,
    pub earshot: Earshot,
    pub clock: Arc<ManualClock>,
    pub backing: Backing,
    pub oracle: Oracle,
    pub now: i64,
    seq: usize,
    /// Human-readable trace of the steps and their outcomes, for failure messages.
    pub log: Vec<String>,
    /// Derived items and how they were made.
    pub derived: BTreeMap<String, Disposition>,
    /// Grants the test issued (declassifications included): grant id → item id.
    pub issued: BTreeMap<String, String>,
    /// Origin audience of every item as the store last showed it (P4).
    pub seen_audiences: BTreeMap<String, Audience>,
    /// Whether each step is compared with the oracle (the differential tests compare with the flat
    /// evaluator instead, but still mirror refusals).
    pub compare_each_step: bool,
    /// What the instance runs with (and runs with again after a restart).
    config: earshot_store::Config,
}

fn open(backing: &Backing, clock: &Arc<ManualClock>, config: &earshot_store::Config) -> Result<Earshot, String> {
    Earshot::open_with(backing.open()?, clock.clone(), config.clone()).map_err(|e| format!("open: {e}"))
}

impl Harness {
    pub fn new(backing: Backing) -> Result<Self, String> {
        Self::with_config(backing, earshot_store::Config::default())
    }

    /// A harness whose instance runs with `config`.
    pub fn with_config(backing: Backing, config: earshot_store::Config) -> Result<Self, String> {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let earshot = open(&backing, &clock, &config)?;
        earshot.create_store(STORE, None).map_err(|e| format!("create store: {e}"))?;
        let store = earshot.store(STORE).map_err(|e| e.to_string())?;
        Ok(Harness {
            store,
            earshot,
            clock,
            backing,
            oracle: Oracle::new(),
            now: T0_MS,
            seq: 0,
            log: Vec::new(),
            derived: BTreeMap::new(),
            issued: BTreeMap::new(),
            seen_audiences: BTreeMap::new(),
            compare_each_step: true,
            config,
        })
    }

    /// Creates the first `initial` participants and the initial identity bindings.
    pub fn setup(&mut self, u: &Universe) -> Result<(), String> {
        for i in 0..u.initial.min(5) {
            self.write(&Command::CreateParticipant(NewParticipant {
                id: PARTS[i as usize].into(),
                kind: ParticipantKind::Person,
                name: None,
            }))?;
        }
        for (i, p) in &u.binds {
            let id = ident(*i);
            self.write(&Command::BindIdentity(NewIdentity {
                transport: id.transport,
                identifier: id.identifier,
                participant: part(*p).into(),
            }))?;
        }
        Ok(())
    }

    /// Runs a whole universe, comparing after each step when `compare_each_step`.
    pub fn run_universe(&mut self, u: &Universe) -> Result<(), String> {
        self.setup(u)?;
        for s in &u.steps {
            self.run(s)?;
            if self.compare_each_step {
                self.compare(&standard_containers()).map_err(|e| self.explain(e))?;
            }
        }
        Ok(())
    }

    /// One line on what a run exercised (printed with `EARSHOT_PROPTEST_STATS=1`).
    pub fn stats(&self) -> String {
        let count = |pat: &str| self.log.iter().filter(|l| l.contains(pat)).count();
        format!(
            "steps {} | items {} (derived {}, quarantined {}) | grants {} | refused {} | suppressed {} | removed {} | \
             lifecycle ok {} | non-current {} | public {}",
            self.log.len(),
            self.oracle.items.len(),
            self.derived.len(),
            self.derived.values().filter(|d| **d == Disposition::Quarantine).count(),
            self.oracle.grants.len(),
            count("=> store Err"),
            count("Ok(OOutcome { outcome: \"suppressed\""),
            count("Ok(OOutcome { outcome: \"removed\""),
            count("Ok(OOutcome { outcome: \"updated\""),
            self.oracle.items.iter().filter(|i| !self.oracle.current(&i.id)).count(),
            self.oracle.items.iter().filter(|i| i.audience.is_none()).count(),
        )
    }

    /// An error with the trace of what led to it.
    pub fn explain(&self, e: String) -> String {
        format!("{e}\n--- trace ---\n{}", self.log.join("\n"))
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.seq += 1;
        format!("{prefix}{}", self.seq)
    }

    fn pick_item(&self, i: u8) -> String {
        match self.oracle.items.len() {
            0 => "missing".into(),
            n => self.oracle.items[i as usize % n].id.clone(),
        }
    }

    fn owned_by(&self, o: &str) -> Vec<String> {
        self.oracle.items.iter().filter(|i| i.owner == o).map(|i| i.id.clone()).collect()
    }

    /// The deriving owner: the generated one if it owns items, else the owner of a picked item
    /// (so that most derivations are well-formed; `foreign` ones are meant to mismatch).
    fn deriving_owner(&self, o: u8, picks: &[u8], foreign: bool) -> String {
        let o = owner(o).to_string();
        if foreign || !self.owned_by(&o).is_empty() {
            return o;
        }
        let first = self.pick_item(picks.first().copied().unwrap_or(0));
        self.oracle.item(&first).map_or(o, |i| i.owner.clone())
    }

    fn pick_sources(&self, o: &str, picks: &[u8], foreign: bool) -> Vec<String> {
        let owned = self.owned_by(o);
        let pool: Vec<String> =
            if foreign || owned.is_empty() { self.oracle.items.iter().map(|i| i.id.clone()).collect() } else { owned };
        if pool.is_empty() {
            return vec!["missing".into()];
        }
        let mut out: Vec<String> = Vec::new();
        for p in picks {
            let s = pool[*p as usize % pool.len()].clone();
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The command a step stands for (`None` for clock moves and reopening).
    fn command(&mut self, s: &Step) -> Option<Command> {
        Some(match s {
            Step::Tick(_) | Step::Reopen | Step::Evict => return None,
            Step::AddParticipant(i) => Command::CreateParticipant(NewParticipant {
                id: PARTS[*i as usize % 5].into(),
                kind: [ParticipantKind::Person, ParticipantKind::Agent, ParticipantKind::Device][*i as usize % 3],
                name: Some(format!("display {i}")),
            }),
            Step::RemoveParticipant(i) => Command::RemoveParticipant { id: part(*i).into() },
            Step::Bind { ident: i, part: p } => {
                let id = ident(*i);
                Command::BindIdentity(NewIdentity {
                    transport: id.transport,
                    identifier: id.identifier,
                    participant: part(*p).into(),
                })
            }
            Step::Record { owner: o, origin, reuse_id } => {
                let id = if *reuse_id && !self.oracle.items.is_empty() { self.pick_item(*o) } else { self.fresh("i") };
                Command::CreateItem(NewItem {
                    subjects: Vec::new(),
                    id: Some(id),
                    owner: owner(*o).into(),
                    content: Some(format!("content {}", self.seq)),
                    attributes: None,
                    origin: match origin {
                        Origin::Public => OriginInput::Keyword(OriginKeyword::Public),
                        Origin::OwnerPrivate => OriginInput::Keyword(OriginKeyword::OwnerPrivate),
                        Origin::Viewers(ev) => OriginInput::Viewers(viewers(ev)),
                    },
                    author: None,
                    embedding: None,
                    embedding_metric: None,
                })
            }
            Step::Life { item, action, by } => {
                let by = match (action, by) {
                    (Action::Supersede, Some(b)) => Some(self.pick_item(*b)),
                    (_, Some(b)) if b % 7 == 0 => Some(self.pick_item(*b)),
                    _ => None,
                };
                Command::Lifecycle { item: self.pick_item(*item), request: LifecycleRequest { action: *action, by } }
            }
            Step::Intersect { owner: o, picks, container, quarantine, foreign } => {
                let o = self.deriving_owner(*o, picks, *foreign);
                let sources = self.pick_sources(&o, picks, *foreign);
                let id = self.fresh("d");
                Command::Derive {
                    request: DeriveRequest {
                        subjects: Vec::new(),
                        disposition: if *quarantine { Disposition::Quarantine } else { Disposition::Intersection },
                        owner: o,
                        sources,
                        id: Some(id),
                        content: Some("summary".into()),
                        attributes: None,
                        container: container.as_ref().map(viewers),
                        outputs: None,
                        members: None,
                        reason: None,
                        expires_at: None,
                    },
                    issuer: "admin".into(),
                }
            }
            Step::Partition { owner: o, picks, container, groups, by_audience } => {
                let o = self.deriving_owner(*o, picks, false);
                let sources = self.pick_sources(&o, picks, false);
                let mut buckets: Vec<(Audience, Vec<String>)> = Vec::new();
                for (n, s) in sources.iter().enumerate() {
                    let key: Audience = if *by_audience {
                        self.oracle.item(s).and_then(|i| i.audience.clone())
                    } else {
                        Some(BTreeSet::from([format!("{}", groups[n % groups.len()] % 2)]))
                    };
                    match buckets.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, v)) => v.push(s.clone()),
                        None => buckets.push((key, vec![s.clone()])),
                    }
                }
                let outputs = buckets
                    .into_iter()
                    .map(|(_, srcs)| PartitionOutput {
                        subjects: Vec::new(),
                        id: Some(self.fresh("d")),
                        content: None,
                        attributes: None,
                        sources: srcs,
                    })
                    .collect();
                Command::Derive {
                    request: DeriveRequest {
                        subjects: Vec::new(),
                        disposition: Disposition::Partition,
                        owner: o,
                        sources,
                        id: None,
                        content: None,
                        attributes: None,
                        container: container.as_ref().map(viewers),
                        outputs: Some(outputs),
                        members: None,
                        reason: None,
                        expires_at: None,
                    },
                    issuer: "admin".into(),
                }
            }
            Step::Grant { item, members, expiry_s, declassify } => {
                let item = self.pick_item(*item);
                let members: Vec<String> = members.iter().map(|m| part(*m).to_string()).collect();
                let expires_at = expiry_s.map(|s| format_time(self.now + i64::from(s) * 1000));
                if *declassify {
                    let o = self.oracle.item(&item).map_or_else(|| "ann".to_string(), |i| i.owner.clone());
                    Command::Derive {
                        request: DeriveRequest {
                            subjects: Vec::new(),
                            disposition: Disposition::Declassification,
                            owner: o,
                            sources: vec![item],
                            id: None,
                            content: None,
                            attributes: None,
                            container: None,
                            outputs: None,
                            members: Some(members),
                            reason: Some("reviewed".into()),
                            expires_at,
                        },
                        issuer: "admin".into(),
                    }
                } else {
                    Command::Grant {
                        item,
                        grant: NewGrant { members, reason: Some("because".into()), expires_at },
                        issuer: "admin".into(),
                    }
                }
            }
            Step::Revoke(i) => Command::RevokeGrant {
                grant: match self.oracle.grants.len() {
                    0 => "nogrant".into(),
                    n => self.oracle.grants[*i as usize % n].id.clone(),
                },
            },
        })
    }

    /// The command a step stands for, applied to the oracle only (for submissions whose order
    /// the test does not control); clock moves take effect at once.
    pub fn plan(&mut self, s: &Step) -> Option<Command> {
        if let Step::Tick(n) = s {
            self.now += i64::from(*n) * 500;
            self.clock.set(self.now);
            return None;
        }
        let cmd = self.command(s)?;
        self.oracle.now_ms = self.now;
        let _ = self.oracle.apply(&cmd, &format!("planned-{}", self.seq));
        Some(cmd)
    }

    /// Writes to the store and the oracle; both must accept or both refuse.
    pub fn write(&mut self, cmd: &Command) -> Result<(), String> {
        let before = self.store.latest().revision();
        let res = self.store.write(cmd.clone());
        let grant_id = match &res {
            Ok(o) if o.outcome == "granted" => o.ids.first().cloned().unwrap_or_default(),
            _ => "refused-grant".into(),
        };
        self.oracle.now_ms = self.now;
        let oracle_res = self.oracle.apply(cmd, &grant_id);
        let after = self.store.latest().revision();
        let line = format!("{cmd:?}\n    => store {:?} / oracle {oracle_res:?}", res.as_ref().map_err(|e| e.code()));
        self.log.push(line);
        match (res, oracle_res) {
            (Ok(s), Ok(o)) => {
                if s.outcome != o.outcome {
                    return Err(self.explain(format!("outcome: store `{}` but oracle `{}`", s.outcome, o.outcome)));
                }
                if o.outcome != "granted" && !o.ids.is_empty() && s.ids != o.ids {
                    return Err(self.explain(format!("created ids: store {:?} but oracle {:?}", s.ids, o.ids)));
                }
                let expect_rev = if o.wrote { before + 1 } else { before };
                if after != expect_rev || s.revision != expect_rev {
                    return Err(self.explain(format!(
                        "revision {before} -> {after} (reported {}) for `{}`",
                        s.revision, o.outcome
                    )));
                }
                if o.outcome == "granted" {
                    if let Command::Grant { item, .. } = cmd {
                        self.issued.insert(grant_id, item.clone());
                    } else if let Command::Derive { request, .. } = cmd {
                        self.issued.insert(grant_id, request.sources.first().cloned().unwrap_or_default());
                    }
                }
                if let Command::Derive { request, .. } = cmd {
                    for id in &s.ids {
                        if o.outcome != "granted" {
                            self.derived.insert(id.clone(), request.disposition);
                        }
                    }
                }
                Ok(())
            }
            (Err(e), Err(_)) => {
                if matches!(e.code(), "integrity_failure" | "storage_failure" | "unavailable") {
                    return Err(self.explain(format!("store failed instead of refusing: {e}")));
                }
                if after != before {
                    return Err(self.explain(format!("a refused write moved the revision {before} -> {after}")));
                }
                Ok(())
            }
            (Ok(s), Err(r)) => Err(self.explain(format!("store accepted ({s:?}) what the oracle refuses ({r:?})"))),
            (Err(e), Ok(o)) => Err(self.explain(format!("store refused ({e}) what the oracle accepts ({o:?})"))),
        }
    }

    /// Runs one step against both models, then checks P4 (audience stability).
    pub fn run(&mut self, s: &Step) -> Result<(), String> {
        match s {
            Step::Tick(n) => {
                self.now += i64::from(*n) * 500;
                self.clock.set(self.now);
                self.log.push(format!("Tick -> now = T0 + {} ms", self.now - T0_MS));
                return Ok(());
            }
            Step::Reopen => return self.reopen(),
            Step::Evict => return self.evict(),
            _ => {}
        }
        let Some(cmd) = self.command(s) else { return Ok(()) };
        let before = self.oracle.participants.clone();
        self.write(&cmd)?;
        let removed: Option<String> = before.difference(&self.oracle.participants).next().cloned();
        match self.track_audiences(removed.as_deref()) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.explain(e)),
        }
    }

    /// P4: compares every item's origin audience with the one seen after the previous step.
    fn track_audiences(&mut self, removed: Option<&str>) -> Result<(), String> {
        let snap = self.store.latest();
        for id in snap.item_names() {
            let view = snap.item_view(&id, self.now).map_err(|e| format!("item_view `{id}`: {e}"))?;
            let now = audience_of(&view.audience);
            if let Some(before) = self.seen_audiences.get(&id) {
                p4_stable(&id, before, &now, removed)?;
            }
            self.seen_audiences.insert(id, now);
        }
        Ok(())
    }

    /// Closes the store and opens it again from its directory (or tables), checking that every decision
    /// and lookup is the same before and after.
    pub fn reopen(&mut self) -> Result<(), String> {
        if !self.backing.reopenable() {
            return Ok(());
        }
        let before = self.decisions(&standard_containers())?;
        let rev = self.store.latest().revision();
        // Drop the running instance (and with it the sled database) before reopening.
        let placeholder = Earshot::temporary(self.clock.clone()).map_err(|e| e.to_string())?;
        placeholder.create_store(STORE, None).map_err(|e| e.to_string())?;
        self.store = placeholder.store(STORE).map_err(|e| e.to_string())?;
        drop(std::mem::replace(&mut self.earshot, placeholder));
        let earshot = open(&self.backing, &self.clock, &self.config)?;
        let store = earshot.store(STORE).map_err(|e| format!("reopened store: {e}"))?;
        self.store = store;
        self.earshot = earshot;
        self.log.push(format!("Reopen at revision {rev}"));
        let after_rev = self.store.latest().revision();
        if after_rev != rev {
            return Err(self.explain(format!("revision {rev} became {after_rev} across a restart")));
        }
        self.store.verify().map_err(|e| self.explain(format!("verify after restart: {e}")))?;
        let after = self.decisions(&standard_containers())?;
        if before != after {
            let diff: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).take(5).collect();
            return Err(self.explain(format!("decisions changed across a restart: {diff:?}")));
        }
        Ok(())
    }

    /// Evicts the store from memory and uses it again, checking that every decision and lookup,
    /// the revision and the meaning of its newest token are the same before and after (issue
    /// 33: eviction never changes an answer). The clock moves 1 ms first, so that the newest
    /// commit is past a zero retention window (on a datastore without history, a store whose
    /// past revisions are still readable is not evicted).
    pub fn evict(&mut self) -> Result<(), String> {
        self.now += 1;
        self.clock.set(self.now);
        let before = self.decisions(&standard_containers())?;
        let rev = self.store.latest().revision();
        let token = self.store.token(rev);
        let old = self.store.clone();
        if !self.earshot.evict(STORE) {
            return Err(self.explain("an idle store was not evicted".into()));
        }
        if !old.evicted() || self.earshot.running(STORE).is_some() {
            return Err(self.explain("an evicted store still runs".into()));
        }
        self.store = self.earshot.store(STORE).map_err(|e| format!("store after eviction: {e}"))?;
        self.log.push(format!("Evict at revision {rev}"));
        let after_rev = self.store.latest().revision();
        if after_rev != rev || self.store.token(rev) != token {
            return Err(self.explain(format!("revision {rev} (token {token}) became {after_rev} across an eviction")));
        }
        let exact = self
            .store
            .read_point(&Consistency::AtExact(token.clone()), self.now)
            .map_err(|e| self.explain(format!("at_exact of the newest token after an eviction: {e}")))?;
        if exact.snapshot.revision() != rev {
            return Err(
                self.explain(format!("the token of revision {rev} read revision {}", exact.snapshot.revision()))
            );
        }
        let after = self.decisions(&standard_containers())?;
        if before != after {
            let diff: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).take(5).collect();
            return Err(self.explain(format!("decisions changed across an eviction: {diff:?}")));
        }
        Ok(())
    }

    /// Every decision and lookup for `containers` at the latest snapshot, in a comparable form.
    pub fn decisions(&self, containers: &[ContainerInput]) -> Result<Vec<String>, String> {
        let snap = self.store.latest();
        let mut out = Vec::new();
        for c in containers {
            let r = snap.resolve_container(c).map_err(|e| e.to_string())?;
            for id in snap.item_names() {
                let d = snap.check(&id, &r, self.now).map_err(|e| e.to_string())?;
                out.push(format!("{c:?} {d:?}"));
            }
            for owners in owner_filters(c) {
                out.push(format!("{c:?} {owners:?} {:?}", lookup_all(&snap, &r, &owners, 2, self.now)?));
            }
        }
        Ok(out)
    }

    /// Compares the store with the oracle at the latest snapshot: item views, every decision
    /// for `containers` (with P1 and P3), and every lookup (policy completeness); then P5.
    pub fn compare(&self, containers: &[ContainerInput]) -> Result<(), String> {
        let snap = self.store.latest();
        let now = self.now;
        let names = snap.item_names();
        let expected: Vec<String> = self.oracle.items.iter().map(|i| i.id.clone()).collect();
        if names != expected {
            return Err(format!("items: store {names:?} but oracle {expected:?}"));
        }
        let mut views: BTreeMap<String, ItemView> = BTreeMap::new();
        for i in &self.oracle.items {
            let v = snap.item_view(&i.id, now).map_err(|e| format!("item_view `{}`: {e}", i.id))?;
            self.compare_view(&v)?;
            views.insert(i.id.clone(), v);
        }
        for c in containers {
            let r = snap.resolve_container(c).map_err(|e| format!("resolve {c:?}: {e}"))?;
            let ov = self.oracle.resolve_container(c);
            for i in &self.oracle.items {
                let d = snap.check(&i.id, &r, now).map_err(|e| format!("check `{}`: {e}", i.id))?;
                let want = self.oracle.admits_v(&i.id, &ov, now);
                if d.admitted != want {
                    return Err(format!(
                        "decision for `{}` in {c:?} (viewers {ov:?}): store {d:?} but oracle admits = {want}",
                        i.id
                    ));
                }
                // The whole decision (reason, basis grant, blocking ancestor) against the rules
                // restated in `faults::decide` (the oracle's own rules when no fault is set).
                let full = crate::faults::decide(&self.oracle, self.oracle.fault, &i.id, &ov, now, Access::Check);
                if let Some(w) = full {
                    let blocked = d.blocked_by.as_ref().map(|b| (b.state, b.item.clone()));
                    if d.reason != w.reason || d.grant != w.grant || blocked != w.blocked_by {
                        return Err(format!("decision for `{}` in {c:?}: store {d:?} but oracle {w:?}", i.id));
                    }
                }
                if let Some(view) = views.get(&i.id) {
                    self.check_decision(&d, view, &ov)?;
                }
            }
            for owners in owner_filters(c) {
                let got = lookup_all(&snap, &r, &owners, 2, now)?;
                let want = self.oracle.lookup(c, &owners, now);
                if got != want {
                    return Err(format!("lookup {c:?} owners {owners:?}: store {got:?} but oracle {want:?}"));
                }
            }
        }
        self.compare_exact(&snap, containers)?;
        self.check_derivations(&views)
    }

    /// SPEC §2.6: `at_exact` of the newest revision, asked now. Every decision is judged at the
    /// revision's commit time (the same token, the same judgement) and admits as a usable
    /// answer exactly when the oracle says so: never once a grant window closed since.
    fn compare_exact(&self, snap: &Snapshot, containers: &[ContainerInput]) -> Result<(), String> {
        let (now, then) = (self.now, snap.committed_at_ms());
        let token = self.store.token(snap.revision());
        let point =
            self.store.read_point(&Consistency::AtExact(token), now).map_err(|e| format!("at_exact read: {e}"))?;
        if point.snapshot.revision() != snap.revision() || point.at_ms != then {
            return Err(format!(
                "at_exact of revision {} read revision {} judged at T0+{} ms, not at its commit time T0+{} ms",
                snap.revision(),
                point.snapshot.revision(),
                point.at_ms - T0_MS,
                then - T0_MS
            ));
        }
        let usable = point.historical.is_none();
        for c in containers {
            let r = point.snapshot.resolve_container(c).map_err(|e| format!("resolve {c:?}: {e}"))?;
            let ov = self.oracle.resolve_container(c);
            for i in &self.oracle.items {
                let d = point.snapshot.check(&i.id, &r, point.at_ms).map_err(|e| format!("check `{}`: {e}", i.id))?;
                let then_admits = self.oracle.admits_v(&i.id, &ov, then);
                let want = crate::faults::exact_admits(&self.oracle, self.oracle.fault, &i.id, &ov, then, now);
                if d.admitted != then_admits || (usable && d.admitted) != want {
                    return Err(format!(
                        "at_exact of revision {} (committed T0+{} ms) asked at T0+{} ms, `{}` in {c:?}: store \
                         admits {} then, usable {usable}; oracle admits {then_admits} then, usable admission {want}",
                        snap.revision(),
                        then - T0_MS,
                        now - T0_MS,
                        i.id,
                        d.admitted
                    ));
                }
            }
        }
        Ok(())
    }

    /// The admin view of an item agrees with the oracle's record.
    fn compare_view(&self, v: &ItemView) -> Result<(), String> {
        let Some(o) = self.oracle.item(&v.id) else { return Err(format!("oracle has no item `{}`", v.id)) };
        let aud = audience_of(&v.audience);
        let current = self.oracle.current(&o.id);
        if v.owner != o.owner
            || v.state != o.state
            || aud != o.audience
            || v.sources != o.sources
            || v.current != current
        {
            return Err(format!(
                "item `{}`: store (owner {}, state {:?}, audience {aud:?}, sources {:?}, current {}) but oracle \
                 (owner {}, state {:?}, audience {:?}, sources {:?}, current {current})",
                v.id, v.owner, v.state, v.sources, v.current, o.owner, o.state, o.audience, o.sources
            ));
        }
        // Kind follows the member count (owner_private is {o}); public has no members.
        let kind_ok = match &aud {
            None => v.audience.members.is_empty(),
            Some(m) => v.audience.kind == if m.len() == 1 { AudienceKind::OwnerPrivate } else { AudienceKind::Shared },
        };
        if !kind_ok || !aud.as_ref().is_none_or(|m| m.contains(&o.owner)) {
            return Err(format!("item `{}`: audience {:?} is not canonical or lacks the owner", v.id, v.audience));
        }
        let want: Vec<(String, BTreeSet<String>, bool, bool)> = self
            .oracle
            .grants_of(&o.id)
            .map(|g| (g.id.clone(), g.members.clone(), g.revoked, grant_live(g, self.now)))
            .collect();
        let got: Vec<(String, BTreeSet<String>, bool, bool)> =
            v.grants.iter().map(|g| (g.id.clone(), g.members.iter().cloned().collect(), g.revoked, g.live)).collect();
        if got != want {
            return Err(format!("grants of `{}`: store {got:?} but oracle {want:?}", v.id));
        }
        // Expand: the origin audience first, then every live grant's audience, separately.
        let expand = self.store.latest().expand(&v.id, self.now).map_err(|e| format!("expand `{}`: {e}", v.id))?;
        let got: Vec<(Option<String>, Audience)> = expand.iter().map(|a| (a.grant.clone(), audience_of(a))).collect();
        let mut want: Vec<(Option<String>, Audience)> = vec![(None, o.audience.clone())];
        want.extend(
            self.oracle
                .grants_of(&o.id)
                .filter(|g| grant_live(g, self.now))
                .map(|g| (Some(g.id.clone()), Some(g.members.clone()))),
        );
        if got != want {
            return Err(format!("expand of `{}`: store {got:?} but oracle {want:?}", v.id));
        }
        Ok(())
    }

    /// Reason code, blocking ancestor, basis, P1 and P3 for one decision.
    fn check_decision(&self, d: &DecisionView, view: &ItemView, v: &OViewers) -> Result<(), String> {
        let origin = audience_of(&view.audience);
        let current = self.oracle.current(&d.item);
        let reason = if !current {
            "denied_not_current"
        } else if contains(&origin, v) {
            if origin.is_none() {
                "admitted_public"
            } else {
                "admitted_origin"
            }
        } else if d.admitted {
            "admitted_grant"
        } else if *v == OViewers::Everyone {
            "denied_unresolved_viewers"
        } else if self
            .oracle
            .grants_of(&d.item)
            .any(|g| grant_live(g, self.now) && !consent_complete(g) && contains(&Some(g.members.clone()), v))
        {
            // SPEC §6.3: only grants still missing a subject's consent would contain V.
            "denied_consent_pending"
        } else {
            "denied_not_in_audience"
        };
        if d.reason != reason {
            return Err(format!("`{}`: reason `{}` but SPEC §1.9 gives `{reason}` ({d:?})", d.item, d.reason));
        }
        match (&d.blocked_by, current) {
            (None, true) => {}
            (Some(b), false) => {
                // The blocking item is the item or one of its transitive sources, and holds that state.
                let mut lineage = vec![d.item.clone()];
                let mut i = 0;
                while let Some(id) = lineage.get(i).cloned() {
                    lineage.extend(self.oracle.item(&id).map(|x| x.sources.clone()).unwrap_or_default());
                    i += 1;
                }
                let holds = self.oracle.item(&b.item).is_some_and(|x| x.state == b.state);
                if !lineage.contains(&b.item) || !holds || b.state == State::Active {
                    return Err(format!("`{}`: blocked_by {b:?} is not a non-active ancestor", d.item));
                }
            }
            _ => return Err(format!("`{}`: blocked_by {:?} but current = {current}", d.item, d.blocked_by)),
        }
        if !d.admitted {
            if d.basis.is_some() || d.grant.is_some() {
                return Err(format!("denied decision with a basis: {d:?}"));
            }
            return Ok(());
        }
        let basis: Audience = match (d.basis.as_deref(), &d.grant) {
            (Some("origin"), None) => origin.clone(),
            (Some("grant"), Some(g)) => {
                if contains(&origin, v) {
                    return Err(format!("`{}`: basis is grant `{g}` though the origin admits", d.item));
                }
                let Some(gv) = view.grants.iter().find(|x| &x.id == g) else {
                    return Err(format!("`{}`: basis grant `{g}` is not among the item's grants", d.item));
                };
                if !gv.live {
                    return Err(format!("`{}`: basis grant `{g}` is not live", d.item));
                }
                // The basis is the smallest admitting grant audience.
                let admitting = self.oracle.admitting_grants(&d.item, v, self.now);
                let smallest = admitting.iter().map(|x| x.members.len()).min().unwrap_or(usize::MAX);
                if gv.members.len() != smallest {
                    return Err(format!(
                        "`{}`: basis grant `{g}` has {} members; smallest admitting has {smallest}",
                        d.item,
                        gv.members.len()
                    ));
                }
                Some(gv.members.iter().cloned().collect())
            }
            _ => return Err(format!("admitted decision with a malformed basis: {d:?}")),
        };
        if d.basis.as_deref() == Some("origin") && !contains(&origin, v) {
            return Err(format!("`{}`: basis origin, but the origin does not contain {v:?}", d.item));
        }
        p1_confined(&d.item, &basis, v)?;
        if *v == OViewers::Everyone {
            p3_fail_closed(&d.item, &origin, view.current)?;
        }
        Ok(())
    }

    /// P5 over every derived item, read from the store's views.
    fn check_derivations(&self, views: &BTreeMap<String, ItemView>) -> Result<(), String> {
        for (id, how) in &self.derived {
            let Some(v) = views.get(id) else { continue };
            let derived = audience_of(&v.audience);
            for s in &v.sources {
                let Some(sv) = views.get(s) else { return Err(format!("source `{s}` of `{id}` has no view")) };
                p5_within(id, &derived, &audience_of(&sv.audience), *how == Disposition::Partition)?;
            }
            for g in &v.grants {
                if self.issued.get(&g.id) != Some(id) {
                    return Err(format!("P5: derived `{id}` carries grant `{}` that was not issued on it", g.id));
                }
            }
        }
        Ok(())
    }

    /// The end-of-sequence checks: every subset of viewers for each owner against the oracle,
    /// and P2 over those subsets (using the store's decisions for every owner's items).
    pub fn compare_exhaustive(&self) -> Result<(), String> {
        let all = exhaustive_containers();
        let containers: Vec<ContainerInput> = all.iter().map(|(c, _)| c.clone()).collect();
        self.compare(&containers)?;
        let snap = self.store.latest();
        let items = snap.item_names();
        let mut admitted: BTreeMap<(String, u32), BTreeSet<String>> = BTreeMap::new();
        for (c, mask) in &all {
            let r = snap.resolve_container(c).map_err(|e| e.to_string())?;
            let mut set = BTreeSet::new();
            for id in &items {
                if snap.check(id, &r, self.now).map_err(|e| e.to_string())?.admitted {
                    set.insert(id.clone());
                }
            }
            admitted.insert((c.owner.clone(), *mask), set);
        }
        for ((o, mask), wide) in &admitted {
            for (b, dropped) in PARTS.iter().enumerate().take(5) {
                if mask & (1 << b) != 0 {
                    if let Some(narrow) = admitted.get(&(o.clone(), mask & !(1 << b))) {
                        p2_antimonotone(wide, narrow)
                            .map_err(|e| format!("{e} (owner {o}, viewers mask {mask:#07b}, dropped {dropped})"))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Runs one universe against the oracle: compare after every step, exhaustively at the end,
/// and check index agreement.
fn run_against_oracle(u: &Universe) -> Result<(), String> {
    run_against_oracle_on(Backing::Temporary, u)
}

fn run_against_oracle_on(backing: Backing, u: &Universe) -> Result<(), String> {
    let mut h = Harness::new(backing)?;
    h.run_universe(u)?;
    h.compare_exhaustive().map_err(|e| h.explain(e))?;
    h.store.verify().map_err(|e| h.explain(format!("verify: {e}")))?;
    if std::env::var_os("EARSHOT_PROPTEST_STATS").is_some() {
        eprintln!("{}", h.stats());
        if std::env::var_os("EARSHOT_PROPTEST_TRACE").is_some() {
            eprintln!("{}", h.log.join("\n"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(192))]

    /// The store agrees with the oracle on every decision, lookup and item view after every step
    /// of a random sequence, and P1–P5 hold throughout.
    #[test]
    fn store_agrees_with_the_oracle(u in universe(40)) {
        run_against_oracle(&u).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: earshot_tests::pg_cases(6), ..config(6) })]

    /// The same over PostgreSQL (a few cases: every write is a round trip), with `verify`.
    #[test]
    fn store_agrees_with_the_oracle_on_postgres(u in universe(30)) {
        let Some(db) = Backing::postgres("props").map_err(fail)? else { return Ok(()) };
        run_against_oracle_on(db, &u).map_err(fail)?;
    }
}

/// Found by `store_agrees_with_the_oracle`: an item created again with the same body except a
/// viewer named twice is a retry ("sets are sets", docs/RULES.md), answered as the first create
/// and writing nothing, in the store and in the oracle alike.
#[test]
fn a_create_retried_with_a_viewer_named_twice_is_the_same_body() {
    let ev = |parts: Vec<u8>| Origin::Viewers(Ev { parts, idents: vec![], quality: Quality::Fresh });
    let u = Universe {
        initial: 3,
        binds: vec![(0, 0)],
        steps: vec![
            Step::Record { owner: 232, origin: ev(vec![2, 2]), reuse_id: false },
            Step::Record { owner: 229, origin: ev(vec![2]), reuse_id: true },
        ],
    };
    run_against_oracle(&u).unwrap_or_else(|e| panic!("{e}"));
}

// ---- the properties can fail ------------------------------------------------------------------

fn set(xs: &[&str]) -> BTreeSet<String> {
    xs.iter().map(|x| x.to_string()).collect()
}

#[test]
fn property_checkers_reject_violations() {
    let ob = Some(set(&["ann", "bob"]));
    let obc = OViewers::Set(set(&["ann", "bob", "cat"]));
    assert!(p1_confined("m", &ob, &obc).is_err());
    assert!(p1_confined("m", &ob, &OViewers::Everyone).is_err());
    assert!(p1_confined("m", &ob, &OViewers::Set(set(&["ann"]))).is_ok());
    assert!(p2_antimonotone(&set(&["m1", "m2"]), &set(&["m1"])).is_err());
    assert!(p2_antimonotone(&set(&["m1"]), &set(&["m1", "m2"])).is_ok());
    assert!(p3_fail_closed("m", &ob, true).is_err());
    assert!(p3_fail_closed("m", &None, false).is_err());
    assert!(p3_fail_closed("m", &None, true).is_ok());
    assert!(p4_stable("m", &ob, &None, None).is_err());
    assert!(p4_stable("m", &ob, &Some(set(&["ann", "bob", "cat"])), None).is_err());
    assert!(p4_stable("m", &ob, &Some(set(&["ann"])), None).is_err());
    assert!(p4_stable("m", &ob, &Some(set(&["ann"])), Some("bob")).is_ok());
    assert!(p4_stable("m", &None, &None, Some("bob")).is_ok());
    assert!(p5_within("d", &None, &ob, false).is_err());
    assert!(p5_within("d", &Some(set(&["ann", "cat"])), &ob, false).is_err());
    assert!(p5_within("d", &Some(set(&["ann"])), &ob, true).is_err());
    assert!(p5_within("d", &Some(set(&["ann"])), &ob, false).is_ok());
}

/// A small fixed universe: ann records one owner-only, one shared and one public item, grants
/// the first to bob, and derives an intersection.
fn fixed_harness() -> Result<Harness, String> {
    let mut h = Harness::new(Backing::Temporary)?;
    let u = Universe { initial: 4, binds: vec![(0, 1)], steps: vec![] };
    h.setup(&u)?;
    let ev = |parts: Vec<u8>| Ev { parts, idents: vec![], quality: Quality::Fresh };
    for s in [
        Step::Record { owner: 0, origin: Origin::OwnerPrivate, reuse_id: false },
        Step::Record { owner: 0, origin: Origin::Viewers(ev(vec![1, 2])), reuse_id: false },
        Step::Record { owner: 0, origin: Origin::Public, reuse_id: false },
        Step::Grant { item: 0, members: vec![1], expiry_s: None, declassify: false },
        Step::Intersect { owner: 0, picks: vec![1, 2], container: None, quarantine: false, foreign: false },
    ] {
        h.run(&s)?;
    }
    h.compare(&standard_containers())?;
    h.compare_exhaustive()?;
    Ok(h)
}

#[test]
fn the_comparison_catches_a_wrong_oracle() {
    let h = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.oracle.items.len(), 4, "{}", h.log.join("\n"));

    // Widening an audience in the oracle (what a P4 violation in the store would look like).
    let mut wrong = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    wrong.oracle.items[0].audience = None;
    let e = wrong.compare(&standard_containers()).expect_err("a public-vs-private disagreement must be caught");
    assert!(e.contains("i1"), "{e}");

    // Narrowing it (a false denial the store would not make).
    let mut wrong = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    wrong.oracle.items[1].audience = Some(set(&["ann"]));
    assert!(wrong.compare(&standard_containers()).is_err());

    // Freezing a source in the oracle only: its derived item must disagree too.
    let mut wrong = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    wrong.oracle.items[1].state = State::Frozen;
    assert!(wrong.compare(&standard_containers()).is_err());

    // Dropping the grant from the oracle (bob would be a false admission).
    let mut wrong = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    wrong.oracle.grants.clear();
    assert!(wrong.compare(&standard_containers()).is_err());

    // Revoking it only in the oracle (caught by the item view and by the decisions).
    let mut wrong = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    wrong.oracle.grants[0].revoked = true;
    assert!(wrong.compare(&standard_containers()).is_err());

    // Marking an item as derived by intersection with a wider audience than its source's (P5).
    let mut wrong = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    wrong.derived.insert("i2".into(), Disposition::Intersection);
    if let Some(i) = wrong.oracle.items.iter_mut().find(|i| i.id == "i2") {
        i.sources = vec!["i1".into()];
    }
    assert!(wrong.compare(&standard_containers()).is_err());
}

#[test]
fn a_refusal_the_oracle_would_accept_is_reported() {
    let mut h = fixed_harness().unwrap_or_else(|e| panic!("{e}"));
    // The oracle forgets that ann owns items, so it would accept her removal; the store refuses.
    h.oracle.items.retain(|i| i.owner != "ann");
    let e = h.write(&Command::RemoveParticipant { id: "ann".into() }).expect_err("must disagree");
    assert!(e.contains("store refused"), "{e}");
}

#[test]
fn the_oracle_mirrors_the_spec_examples() {
    // SPEC §1.6: grants to {o,bob} and {o,cat} do not admit {o,bob,cat}.
    let mut o = Oracle::new();
    for p in ["ann", "bob", "cat"] {
        o.apply(
            &Command::CreateParticipant(NewParticipant { id: p.into(), kind: ParticipantKind::Person, name: None }),
            "",
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    }
    let item = NewItem {
        subjects: Vec::new(),
        id: Some("m".into()),
        owner: "ann".into(),
        content: None,
        attributes: None,
        origin: OriginInput::Keyword(OriginKeyword::OwnerPrivate),
        author: None,
        embedding: None,
        embedding_metric: None,
    };
    o.apply(&Command::CreateItem(item), "").unwrap_or_else(|e| panic!("{e:?}"));
    for (g, m) in [("g1", "bob"), ("g2", "cat")] {
        let grant = NewGrant { members: vec![m.into()], reason: None, expires_at: Some(format_time(T0_MS + 1000)) };
        o.apply(&Command::Grant { item: "m".into(), grant, issuer: "admin".into() }, g)
            .unwrap_or_else(|e| panic!("{e:?}"));
    }
    assert!(o.admits("m", &container("ann", &["bob"]), T0_MS));
    assert!(o.admits("m", &container("ann", &["cat"]), T0_MS));
    assert!(!o.admits("m", &container("ann", &["bob", "cat"]), T0_MS));
    // Expiry is strict: at `expires_at` the grant no longer counts.
    assert!(!o.admits("m", &container("ann", &["bob"]), T0_MS + 1000));
    // Unresolved viewers see only public items.
    assert!(!o.admits("m", &container("ann", &["ghost"]), T0_MS));
    assert!(o.admits("m", &container("ann", &[]), T0_MS));
    // The owner cannot be removed while it owns items; bob can, and leaves the grant.
    assert!(o.apply(&Command::RemoveParticipant { id: "ann".into() }, "").is_err());
    assert!(o.apply(&Command::RemoveParticipant { id: "bob".into() }, "").is_ok());
    assert!(!o.admits("m", &container("ann", &["bob"]), T0_MS));
    assert_eq!(o.grant_by_id("g1").map(|g| g.members.clone()), Some(set(&["ann"])));
}
