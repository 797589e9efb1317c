//! Owns the tests of origin-bound integrity (SPEC §6.2) against the reference oracle: random
//! stores of two owners with items written by themselves and by others, derivations several
//! levels deep, trust delegations and their revocations. After every step the store's answers
//! (check, bulk check, lookup, the admin view, and context assembly with its sealed readback)
//! must carry exactly the oracle's role for every item, and the property must hold: no answer
//! whose provenance touches an untrusted author is ever an `instruction`. The live index must
//! agree with a rebuild from the durable records (`verify`) after every step, and with a store
//! replayed from an export at the end.
//!
//! With `fault` set on its oracle, the same harness is the property column of the
//! `role_not_propagated` row of the fault table (`faults.rs`).

use std::sync::Arc;

use earshot_core::Disposition;
use earshot_store::model::{
    Command, ContainerInput, ContextRequest, DecisionView, DeriveRequest, NewItem, NewParticipant, NewTrust,
    OriginInput, OriginKeyword, ParticipantKind, ViewersInput,
};
use earshot_store::{Earshot, ManualClock, StoreHandle};
use earshot_tests::T0_MS;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};

use crate::faults::Fault;
use crate::oracle::{ORole, Oracle};
use crate::properties::{config, fail};

/// Owners, then the others (who write into the owners' memories).
const PEOPLE: [&str; 5] = ["ann", "ben", "bob", "cal", "mal"];

#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// An item of `owner` (0 or 1) written by `author` (any of `PEOPLE`), heard by the author
    /// (`shared`) or by the owner alone; the create names the author when `named` (else the
    /// store judges it: the owner's for an owner-only origin, unknown otherwise).
    Record { owner: u8, author: u8, shared: bool, named: bool },
    /// An intersection of `owner`'s items: `picks` index them from the newest, so chains grow.
    Derive { owner: u8, picks: Vec<u8> },
    /// `owner` trusts `participant` (self-delegations are refused, and must be).
    Trust { owner: u8, participant: u8 },
    /// Revokes a recorded delegation (the `n`-th, modulo), live or not.
    Revoke(u8),
    /// Assembles a context for `owner` alone and compares every item's role.
    Context { owner: u8 },
    /// Removes one of the others (2..5 in `PEOPLE`; SPEC §1.8): its items become tombstoned
    /// authors' and its delegations end.
    Remove(u8),
    /// Creates one of the others again (a new participant with the old id).
    Recreate(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..2, 0u8..5, any::<bool>(), prop::bool::weighted(0.75))
            .prop_map(|(owner, author, shared, named)| Step::Record { owner, author, shared, named }),
        4 => (0u8..2, prop::collection::vec(0u8..4, 1..4)).prop_map(|(owner, picks)| Step::Derive { owner, picks }),
        2 => (0u8..2, 0u8..5).prop_map(|(owner, participant)| Step::Trust { owner, participant }),
        2 => any::<u8>().prop_map(Step::Revoke),
        1 => (0u8..2).prop_map(|owner| Step::Context { owner }),
        1 => (2u8..5).prop_map(Step::Remove),
        1 => (2u8..5).prop_map(Step::Recreate),
    ]
}

pub(crate) fn history(max: usize) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(step(), 1..max)
}

struct World {
    _earshot: Earshot,
    store: Arc<StoreHandle>,
    oracle: Oracle,
    /// Trust ids in creation order (the service's ids).
    trust: Vec<String>,
    seq: usize,
    attempts: usize,
    /// Derivations at least three levels deep, and data answers seen (for the statistics).
    deep: usize,
    data: usize,
}

fn person(id: &str) -> Command {
    Command::CreateParticipant(NewParticipant { id: id.into(), kind: ParticipantKind::Person, name: None })
}

fn alone(owner: &str) -> ContainerInput {
    ContainerInput { owner: owner.into(), viewers: ViewersInput::default() }
}

impl World {
    fn new(fault: Option<Fault>) -> Result<Self, String> {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let backend = Arc::new(earshot_store::MemoryBackend::default());
        let earshot =
            Earshot::open_with(backend, clock, earshot_store::Config::default()).map_err(|e| e.to_string())?;
        earshot.create_store("s", None).map_err(|e| e.to_string())?;
        let store = earshot.store("s").map_err(|e| e.to_string())?;
        let mut oracle = Oracle { fault, ..Oracle::new() };
        for p in PEOPLE {
            store.write(person(p)).map_err(|e| e.to_string())?;
            oracle.apply(&person(p), "").map_err(|e| format!("{e:?}"))?;
        }
        Ok(World { _earshot: earshot, store, oracle, trust: Vec::new(), seq: 0, attempts: 0, deep: 0, data: 0 })
    }

    fn owned_by(&self, owner: &str) -> Vec<String> {
        self.oracle.items.iter().filter(|i| i.owner == owner).map(|i| i.id.clone()).collect()
    }

    fn depth(&self, id: &str) -> usize {
        self.oracle.item(id).map_or(0, |i| 1 + i.sources.iter().map(|s| self.depth(s)).max().unwrap_or(0))
    }

    fn command(&mut self, s: &Step) -> Option<Command> {
        self.seq += 1;
        Some(match s {
            Step::Record { owner, author, shared, named } => {
                let owner = PEOPLE[*owner as usize];
                let author = PEOPLE[*author as usize];
                let origin = if *shared {
                    // The author was there when it was said.
                    OriginInput::Viewers(ViewersInput { participants: vec![author.into()], ..ViewersInput::default() })
                } else {
                    OriginInput::Keyword(OriginKeyword::OwnerPrivate)
                };
                Command::CreateItem(NewItem {
                    id: Some(format!("m{}", self.seq)),
                    owner: owner.into(),
                    content: Some(format!("note {} by {author}", self.seq)),
                    attributes: None,
                    origin,
                    // An owner-only note naming nobody is the owner's, naming the owner the
                    // same; one heard by others naming nobody has an unknown author.
                    author: named.then(|| author.to_string()),
                    subjects: Vec::new(),
                    embedding: None,
                    embedding_metric: None,
                })
            }
            Step::Derive { owner, picks } => {
                let owner = PEOPLE[*owner as usize];
                let mine = self.owned_by(owner);
                let mut sources: Vec<String> = Vec::new();
                for p in picks {
                    let Some(id) = mine.len().checked_sub(1 + *p as usize).and_then(|i| mine.get(i)) else { continue };
                    if !sources.contains(id) {
                        sources.push(id.clone());
                    }
                }
                if sources.is_empty() {
                    return None;
                }
                Command::Derive {
                    request: DeriveRequest {
                        disposition: Disposition::Intersection,
                        owner: owner.into(),
                        sources,
                        id: Some(format!("d{}", self.seq)),
                        content: Some(format!("note summary {}", self.seq)),
                        attributes: None,
                        container: None,
                        outputs: None,
                        members: None,
                        reason: None,
                        expires_at: None,
                        subjects: Vec::new(),
                    },
                    issuer: "admin".into(),
                }
            }
            Step::Trust { owner, participant } => Command::CreateTrust {
                trust: NewTrust {
                    owner: PEOPLE[*owner as usize].into(),
                    participant: PEOPLE[*participant as usize].into(),
                    reason: None,
                },
                issuer: "admin".into(),
            },
            Step::Revoke(n) => {
                let id = self.trust.get(*n as usize % self.trust.len().max(1))?.clone();
                Command::RevokeTrust { trust: id }
            }
            Step::Remove(p) => Command::RemoveParticipant { id: PEOPLE[*p as usize].into() },
            Step::Recreate(p) => {
                // Only one that is gone (a second create of a present one is another question).
                let id = PEOPLE[*p as usize];
                if self.oracle.participants.contains(id) {
                    return None;
                }
                person(id)
            }
            Step::Context { .. } => return None,
        })
    }

    fn run(&mut self, s: &Step) -> Result<(), String> {
        if let Step::Context { owner } = s {
            return self.context(PEOPLE[*owner as usize]);
        }
        let Some(cmd) = self.command(s) else { return Ok(()) };
        let got = self.store.write(cmd.clone());
        let id = got.as_ref().ok().and_then(|o| o.ids.first().cloned()).unwrap_or_default();
        let want = self.oracle.apply(&cmd, &id);
        match (&got, &want) {
            (Ok(g), Ok(w)) if g.outcome == w.outcome => {}
            (Err(g), Err(w)) if g.code() == w.0 => {}
            _ => return Err(format!("{cmd:?}: store {got:?}, oracle {want:?}")),
        }
        if let (Command::CreateTrust { .. }, Ok(g)) = (&cmd, &got) {
            if g.outcome == "created" {
                self.trust.push(id);
            }
        }
        if let Command::Derive { request, .. } = &cmd {
            if got.is_ok() && request.id.as_deref().is_some_and(|d| self.depth(d) >= 4) {
                self.deep += 1;
            }
        }
        self.compare()?;
        self.store.verify().map(drop).map_err(|e| format!("verify: {e}"))
    }

    /// One answer against the oracle's role, and the property itself.
    fn check_role(
        &mut self,
        id: &str,
        role: Option<earshot_core::Role>,
        author: Option<&str>,
        reason: Option<&str>,
        source: Option<(&str, Option<&str>)>,
    ) -> Result<(), String> {
        let want: ORole = self.oracle.role(id).ok_or_else(|| format!("{id}: unknown to the oracle"))?;
        let touched = !self.oracle.untrusted_in_provenance(id).is_empty();
        let role = role.ok_or_else(|| format!("{id}: an admitted answer without a role"))?;
        // The property (SPEC §6.2), independent of the oracle's own rule.
        if touched && role == earshot_core::Role::Instruction {
            return Err(format!("{id}: its provenance touches an untrusted author, yet it is an instruction"));
        }
        let instruction = role == earshot_core::Role::Instruction;
        if instruction != want.instruction {
            return Err(format!("{id}: role {role:?}, the oracle says instruction={}", want.instruction));
        }
        if instruction {
            return match (author, reason, source) {
                (None, None, None) => Ok(()),
                _ => Err(format!("{id}: an instruction carries attribution {author:?} {reason:?} {source:?}")),
            };
        }
        self.data += 1;
        if author != want.author.as_deref() {
            return Err(format!("{id}: author {author:?}, the oracle says {:?}", want.author));
        }
        let own = want.untrusted.iter().any(|(i, _)| i == id);
        let own_reason = match (&want.author, want.author_removed) {
            (None, _) => "author_unknown",
            (Some(_), true) => "author_removed",
            (Some(_), false) => "untrusted_author",
        };
        match (own, reason, source) {
            (true, Some(r), None) if r == own_reason => Ok(()),
            (false, Some("untrusted_source"), Some((i, a)))
                if want.untrusted.contains(&(i.into(), a.map(str::to_string))) =>
            {
                Ok(())
            }
            _ => Err(format!("{id}: data because {reason:?} {source:?}; the oracle's untrusted: {:?}", want.untrusted)),
        }
    }

    fn check_decision(&mut self, d: &DecisionView) -> Result<(), String> {
        if !d.admitted {
            return match d.role {
                None => Ok(()),
                Some(r) => Err(format!("{}: a denial with role {r:?}", d.item)),
            };
        }
        let source = d.untrusted_source.as_ref().map(|s| (s.item.as_str(), s.author.as_deref()));
        self.check_role(&d.item.clone(), d.role, d.author.as_deref(), d.data_reason.as_deref(), source)
    }

    /// Every item of each owner, by bulk check, single check, lookup and the admin view.
    fn compare(&mut self) -> Result<(), String> {
        let snap = self.store.latest();
        let now = self.store.now_ms();
        for owner in &PEOPLE[..2] {
            let c = snap.resolve_container(&alone(owner)).map_err(|e| e.to_string())?;
            let items = self.owned_by(owner);
            let bulk = snap.check_bulk(&items, &c, now).map_err(|e| e.to_string())?;
            for d in &bulk {
                if !d.admitted {
                    return Err(format!("{}: an owner alone must see every active item of its own", d.item));
                }
                self.check_decision(d)?;
            }
            if let Some(last) = items.last() {
                let d = snap.check(last, &c, now).map_err(|e| e.to_string())?;
                if Some(&d) != bulk.last() {
                    return Err(format!("check and bulk check disagree on {last}: {d:?} vs {:?}", bulk.last()));
                }
            }
            let page = snap.lookup(&c, &[], None, Some(1000), now).map_err(|e| e.to_string())?;
            if page.items != bulk {
                return Err(format!("lookup and bulk check disagree for {owner}"));
            }
            for id in &items {
                let v = snap.item_view(id, now).map_err(|e| e.to_string())?;
                let source = v.untrusted_source.as_ref().map(|s| (s.item.as_str(), s.author.as_deref()));
                let author = if v.role == earshot_core::Role::Data { v.author.as_deref() } else { None };
                self.check_role(id, Some(v.role), author, v.data_reason.as_deref(), source)?;
                if Some(&v.author) != self.oracle.item(id).map(|i| &i.author) {
                    return Err(format!("{id}: the view's author is {:?}", v.author));
                }
            }
        }
        Ok(())
    }

    /// A context for `owner` alone holding every one of its items, each with the oracle's role,
    /// and the same roles in the sealed record read back.
    fn context(&mut self, owner: &str) -> Result<(), String> {
        let n = self.owned_by(owner).len();
        if n == 0 {
            return Ok(());
        }
        self.attempts += 1;
        let attempt = format!("att-{}", self.attempts);
        self.store.create_attempt(alone(owner), self.store.latest(), attempt.clone()).map_err(|e| e.to_string())?;
        let k = n.min(200);
        let req = ContextRequest {
            query: "note".into(),
            fetch: Some(k),
            k: Some(k),
            owners: vec![],
            ..ContextRequest::default()
        };
        let sealed = self.store.assemble_context(&attempt, &req).map_err(|e| e.to_string())?;
        if sealed.items.len() != k {
            return Err(format!("a context of {k} of {owner}'s items holds {}", sealed.items.len()));
        }
        for it in &sealed.items {
            let source = it.untrusted_source.as_ref().map(|s| (s.item.as_str(), s.author.as_deref()));
            self.check_role(&it.item.clone(), it.role, it.author.as_deref(), it.data_reason.as_deref(), source)?;
        }
        let back = self.store.sealed_context(&attempt).map_err(|e| e.to_string())?.ok_or("no sealed context")?;
        let roles = |c: &earshot_store::model::SealedContext| {
            c.items.iter().map(|i| (i.item.clone(), i.role, i.author.clone())).collect::<Vec<_>>()
        };
        if roles(&back) != roles(&sealed) {
            return Err("the sealed readback's roles differ from the assembled context's".into());
        }
        Ok(())
    }
}

fn run_history(fault: Option<Fault>, steps: &[Step]) -> Result<World, String> {
    let mut w = World::new(fault)?;
    for (n, s) in steps.iter().enumerate() {
        w.run(s).map_err(|e| format!("step {n} {s:?}: {e}"))?;
    }
    Ok(w)
}

proptest! {
    #![proptest_config(config(48))]

    /// SPEC §6.2 against the oracle, and its property.
    #[test]
    fn roles_agree_with_the_oracle(steps in history(40)) {
        run_history(None, &steps).map_err(fail)?;
    }
}

/// The property column of `role_not_propagated` in the fault table: the same harness with the
/// fault on the oracle's side; `Some(first failure)` when the harness kills it.
pub(crate) fn property_verdict(fault: Fault, cases: u32) -> Option<String> {
    let config = PtConfig { cases, failure_persistence: None, max_shrink_iters: 0, ..PtConfig::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&history(40), |steps| run_history(Some(fault), &steps).map(drop).map_err(fail));
    result.err().map(|e| e.to_string().lines().next().unwrap_or("").chars().take(160).collect())
}

/// The generator reaches what the property is about: chains at least four levels deep, data
/// answers, revocations of delegations that were in use, unknown and tombstoned authors, and
/// delegations ended by a removal.
#[test]
fn the_histories_reach_deep_derivations_and_data() {
    let config = PtConfig { cases: 24, failure_persistence: None, max_shrink_iters: 0, ..PtConfig::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let (mut deep, mut data, mut revoked) = (0, 0, 0);
    let (mut unknown, mut tombstoned, mut ended) = (0, 0, 0);
    for _ in 0..24 {
        let steps = history(40).new_tree(&mut runner).map_err(|e| e.to_string()).expect("tree").current();
        let w = run_history(None, &steps).unwrap_or_else(|e| panic!("{e}"));
        deep += w.deep;
        data += w.data;
        revoked += w.oracle.trust.iter().filter(|t| t.revoked).count();
        unknown += w.oracle.items.iter().filter(|i| i.author.is_none()).count();
        tombstoned += w.oracle.items.iter().filter(|i| i.author_removed).count();
        ended += w.oracle.trust.iter().filter(|t| t.removed).count();
    }
    assert!(deep > 0 && data > 0 && revoked > 0, "deep {deep}, data {data}, revoked {revoked}");
    // Issue 36: unknown authors, tombstoned authors and delegations ended by a removal.
    assert!(unknown > 0 && tombstoned > 0 && ended > 0, "unknown {unknown}, tombstoned {tombstoned}, ended {ended}");
}

/// A fixed history: the three-level derivation of the SPEC's example, made data by one
/// untrusted source; a delegation makes it an instruction; its revocation makes it data again
/// from the next revision, while the earlier revision still answers as it did.
#[test]
fn a_revocation_turns_derivatives_into_data_from_the_next_revision() {
    let mut w = World::new(None).unwrap_or_else(|e| panic!("{e}"));
    let steps = [
        Step::Record { owner: 0, author: 0, shared: false, named: true }, // m1: ann's own note
        Step::Record { owner: 0, author: 4, shared: true, named: true },  // m2: written by mal
        Step::Derive { owner: 0, picks: vec![0, 1] },                     // d3 <- m2, m1
        Step::Derive { owner: 0, picks: vec![0] },                        // d4 <- d3
        Step::Derive { owner: 0, picks: vec![0] },                        // d5 <- d4
        Step::Trust { owner: 0, participant: 4 },                         // ann trusts mal
    ];
    for s in &steps[..5] {
        w.run(s).unwrap_or_else(|e| panic!("{e}"));
    }
    let role = |w: &World, id: &str| {
        let snap = w.store.latest();
        let c = snap.resolve_container(&alone("ann")).unwrap_or_else(|e| panic!("{e}"));
        snap.check(id, &c, w.store.now_ms()).unwrap_or_else(|e| panic!("{e}"))
    };
    let d5 = role(&w, "d5");
    assert_eq!(d5.role, Some(earshot_core::Role::Data));
    assert_eq!(d5.author.as_deref(), Some("ann"));
    assert_eq!(d5.data_reason.as_deref(), Some("untrusted_source"));
    assert_eq!(d5.untrusted_source.as_ref().map(|s| (s.item.as_str(), s.author.as_deref())), Some(("m2", Some("mal"))));
    assert_eq!(role(&w, "m1").role, Some(earshot_core::Role::Instruction));
    w.run(&steps[5]).unwrap_or_else(|e| panic!("{e}"));
    let trusted_at = w.store.latest();
    assert_eq!(role(&w, "d5").role, Some(earshot_core::Role::Instruction));
    assert_eq!(role(&w, "m2").role, Some(earshot_core::Role::Instruction));
    w.run(&Step::Revoke(0)).unwrap_or_else(|e| panic!("{e}"));
    for id in ["m2", "d3", "d4", "d5"] {
        assert_eq!(role(&w, id).role, Some(earshot_core::Role::Data), "{id}");
    }
    // The snapshot before the revocation still answers as it did (reads are of one revision).
    let c = trusted_at.resolve_container(&alone("ann")).unwrap_or_else(|e| panic!("{e}"));
    let then = trusted_at.check("d5", &c, w.store.now_ms()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(then.role, Some(earshot_core::Role::Instruction));
}

/// The comparison is not vacuous: an oracle that forgets a delegation's revocation disagrees.
#[test]
fn the_comparison_catches_a_wrong_oracle() {
    let mut w = World::new(None).unwrap_or_else(|e| panic!("{e}"));
    for s in [
        Step::Record { owner: 0, author: 2, shared: false, named: true },
        Step::Derive { owner: 0, picks: vec![0] },
        Step::Trust { owner: 0, participant: 2 },
        Step::Revoke(0),
    ] {
        w.run(&s).unwrap_or_else(|e| panic!("{e}"));
    }
    for t in &mut w.oracle.trust {
        t.revoked = false;
    }
    let e = w.compare().expect_err("a wrong oracle must disagree");
    assert!(e.contains("the oracle says instruction=true"), "{e}");
    // And the fault, on a fixed history, is told apart.
    let steps =
        [Step::Record { owner: 0, author: 3, shared: true, named: true }, Step::Derive { owner: 0, picks: vec![0] }];
    let e = run_history(Some(Fault::RoleNotPropagated), &steps).err().unwrap_or_default();
    assert!(e.contains("d2"), "{e}");
}

/// Issue 36, item 1 (SPEC §6.2): without an `author`, an item heard by anyone besides its owner
/// has an unknown author, judged at write time: data (`author_unknown`) even once the owner
/// trusts everyone who was there, and its derivatives data through it. The owner's own note
/// (owner-only, or public) naming nobody stays an instruction.
#[test]
fn an_item_without_an_author_heard_by_others_is_data() {
    let mut w = World::new(None).unwrap_or_else(|e| panic!("{e}"));
    let item = |id: &str, origin: OriginInput| {
        Command::CreateItem(NewItem {
            id: Some(id.into()),
            owner: "ann".into(),
            content: Some(format!("note {id}")),
            attributes: None,
            origin,
            author: None,
            subjects: Vec::new(),
            embedding: None,
            embedding_metric: None,
        })
    };
    let mal = OriginInput::Viewers(ViewersInput { participants: vec!["mal".into()], ..ViewersInput::default() });
    let only_ann = OriginInput::Viewers(ViewersInput { participants: vec!["ann".into()], ..ViewersInput::default() });
    for cmd in [
        item("u1", mal),
        item("p1", OriginInput::Keyword(OriginKeyword::OwnerPrivate)),
        item("p2", only_ann),
        item("p3", OriginInput::Keyword(OriginKeyword::Public)),
    ] {
        w.store.write(cmd.clone()).unwrap_or_else(|e| panic!("{e}"));
        w.oracle.apply(&cmd, "").unwrap_or_else(|e| panic!("{e:?}"));
    }
    w.run(&Step::Derive { owner: 0, picks: vec![3] }).unwrap_or_else(|e| panic!("{e}")); // d1 <- u1 (ids count the harness's own steps)
    let check = |w: &World, id: &str| {
        let snap = w.store.latest();
        let c = snap.resolve_container(&alone("ann")).unwrap_or_else(|e| panic!("{e}"));
        snap.check(id, &c, w.store.now_ms()).unwrap_or_else(|e| panic!("{e}"))
    };
    let u1 = check(&w, "u1");
    assert_eq!(u1.role, Some(earshot_core::Role::Data));
    assert_eq!((u1.author.as_deref(), u1.data_reason.as_deref()), (None, Some("author_unknown")));
    let d1 = check(&w, "d1");
    assert_eq!(d1.role, Some(earshot_core::Role::Data));
    assert_eq!(d1.data_reason.as_deref(), Some("untrusted_source"));
    assert_eq!(d1.untrusted_source.as_ref().map(|s| (s.item.as_str(), s.author.as_deref())), Some(("u1", None)));
    for id in ["p1", "p2", "p3"] {
        assert_eq!(check(&w, id).role, Some(earshot_core::Role::Instruction), "{id}");
    }
    // Trusting the one who was there changes nothing: the words are nobody's known.
    w.run(&Step::Trust { owner: 0, participant: 4 }).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(check(&w, "u1").role, Some(earshot_core::Role::Data));
    let view = w.store.latest().item_view("u1", w.store.now_ms()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((view.author, view.data_reason.as_deref()), (None, Some("author_unknown")));
    w.compare().unwrap_or_else(|e| panic!("{e}"));
    // The unknown author is in the durable record: a rebuild from the records agrees.
    w.store.verify().unwrap_or_else(|e| panic!("{e}"));
}

/// The fault that gives an author-less item to its owner (the bug of issue 36, item 1) is told
/// apart by the harness on a fixed history.
#[test]
fn the_harness_catches_an_author_defaulting_to_the_owner() {
    let steps = [Step::Record { owner: 0, author: 4, shared: true, named: false }];
    run_history(None, &steps).unwrap_or_else(|e| panic!("{e}"));
    let e = run_history(Some(Fault::AuthorDefaultsToOwner), &steps).err().unwrap_or_default();
    assert!(e.contains("m1"), "{e}");
}

/// Issue 36, item 2 (SPEC §1.8, §6.2): removing an author is no longer refused. Its items keep
/// it as a tombstoned author (data, `author_removed`, never an instruction, not even for a
/// participant created later with the same id and trusted again), everything derived from them
/// is data through them, its delegations end in the same revision, and the rebuild from the
/// durable records agrees.
#[test]
fn removing_an_author_tombstones_its_items_and_ends_its_delegations() {
    let mut w = World::new(None).unwrap_or_else(|e| panic!("{e}"));
    let steps = [
        Step::Record { owner: 0, author: 4, shared: true, named: true }, // m1: mal's words
        Step::Trust { owner: 0, participant: 4 },                        // ann trusts mal
        Step::Derive { owner: 0, picks: vec![0] },                       // d3 <- m1
    ];
    for s in &steps {
        w.run(s).unwrap_or_else(|e| panic!("{e}"));
    }
    let check = |w: &World, id: &str| {
        let snap = w.store.latest();
        let c = snap.resolve_container(&alone("ann")).unwrap_or_else(|e| panic!("{e}"));
        snap.check(id, &c, w.store.now_ms()).unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(check(&w, "m1").role, Some(earshot_core::Role::Instruction));
    let before = w.store.latest().revision();
    w.run(&Step::Remove(4)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.store.latest().revision(), before + 1, "one write, one revision");
    let m1 = check(&w, "m1");
    assert_eq!(m1.role, Some(earshot_core::Role::Data));
    assert_eq!((m1.author.as_deref(), m1.data_reason.as_deref()), (Some("mal"), Some("author_removed")));
    let d3 = check(&w, "d3");
    assert_eq!(d3.untrusted_source.as_ref().map(|s| (s.item.as_str(), s.author.as_deref())), Some(("m1", Some("mal"))));
    let t = w.store.latest().trust_view(&w.trust[0]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((t.participant.as_str(), t.revoked, t.revoked_revision), ("mal", true, Some(before + 1)));
    // Someone new under the old id, trusted again: the old words stay nobody's.
    w.run(&Step::Recreate(4)).unwrap_or_else(|e| panic!("{e}"));
    w.run(&Step::Trust { owner: 0, participant: 4 }).unwrap_or_else(|e| panic!("{e}"));
    w.run(&Step::Record { owner: 0, author: 4, shared: true, named: true }).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(check(&w, "m1").role, Some(earshot_core::Role::Data));
    assert_eq!(check(&w, "m7").role, Some(earshot_core::Role::Instruction));
    w.compare().unwrap_or_else(|e| panic!("{e}"));
    w.store.verify().unwrap_or_else(|e| panic!("{e}"));
}
