//! Owns the SPEC §6.3 property test: random stores with subjects, grants (and declassifications),
//! consents, withdrawals, revocations, derivations and member removal, applied to the store and
//! to the reference oracle (`oracle.rs`, whose consent rule is written from SPEC §6.3). After
//! every step every decision, lookup and item view is compared (the shared harness of
//! `properties.rs`, and the flat evaluator of `differential.rs`), and the property itself is
//! checked on the store's own answers: **no grant
//! admits anyone while a subject's consent is missing or withdrawn**. The same run with the
//! oracle's `consent_ignored` fault is the property column of that fault (`faults.rs`).

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};

use earshot_core::Disposition;
use earshot_store::model::{
    Command, DeriveRequest, NewGrant, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind,
    PartitionOutput, ViewersInput,
};

use crate::faults::Fault;
use crate::oracle::consent_complete;
use crate::properties::{config, fail, standard_containers, Backing, Harness, OWNERS, PARTS, T0_MS};

/// One generated operation; indices are resolved against the state when the step runs.
#[derive(Debug, Clone)]
enum CStep {
    /// An item of `OWNERS[owner]`: origin 0 owner-private, 1 the given viewers, 2 public.
    Record {
        owner: u8,
        origin: u8,
        viewers: Vec<u8>,
        subjects: Vec<u8>,
    },
    Grant {
        item: u8,
        members: Vec<u8>,
        declassify: bool,
        expiry_s: Option<u8>,
    },
    /// A consent (`given`) or a withdrawal by a subject (mostly one of the item's subjects).
    Decide {
        grant: u8,
        subject: u8,
        given: bool,
    },
    Revoke(u8),
    /// An intersection (or a partition, one output per source) of some items of one owner.
    Derive {
        owner: u8,
        picks: Vec<u8>,
        subjects: Vec<u8>,
        partition: bool,
    },
    Remove(u8),
    Tick(u8),
}

fn step() -> impl Strategy<Value = CStep> {
    let few = |n: usize| prop::collection::vec(0u8..6, 0..n);
    prop_oneof![
        4 => (0u8..3, 0u8..3, few(3), few(3))
            .prop_map(|(owner, origin, viewers, subjects)| CStep::Record { owner, origin, viewers, subjects }),
        4 => (any::<u8>(), prop::collection::vec(0u8..6, 1..3), any::<bool>(), prop::option::of(1u8..6))
            .prop_map(|(item, members, declassify, expiry_s)| CStep::Grant { item, members, declassify, expiry_s }),
        6 => (any::<u8>(), any::<u8>(), prop::bool::weighted(0.7))
            .prop_map(|(grant, subject, given)| CStep::Decide { grant, subject, given }),
        1 => any::<u8>().prop_map(CStep::Revoke),
        2 => (0u8..3, prop::collection::vec(any::<u8>(), 1..3), few(2), any::<bool>())
            .prop_map(|(owner, picks, subjects, partition)| CStep::Derive { owner, picks, subjects, partition }),
        1 => (0u8..3).prop_map(CStep::Remove),
        1 => (0u8..6).prop_map(CStep::Tick),
    ]
}

fn names(ix: &[u8]) -> Vec<String> {
    ix.iter().map(|i| PARTS[*i as usize % PARTS.len()].to_string()).collect()
}

struct Run {
    h: Harness,
    n: usize,
}

impl Run {
    fn new(fault: Option<Fault>) -> Result<Self, String> {
        let mut h = Harness::new(Backing::Temporary)?;
        h.oracle.fault = fault;
        for p in &PARTS[..5] {
            h.write(&Command::CreateParticipant(NewParticipant {
                id: (*p).into(),
                kind: ParticipantKind::Person,
                name: None,
            }))?;
        }
        Ok(Run { h, n: 0 })
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.n += 1;
        format!("{prefix}{}", self.n)
    }

    fn item(&self, i: u8) -> Option<String> {
        let items = &self.h.oracle.items;
        (!items.is_empty()).then(|| items[i as usize % items.len()].id.clone())
    }

    fn command(&mut self, s: &CStep) -> Option<Command> {
        Some(match s {
            CStep::Record { owner, origin, viewers, subjects } => {
                let owner = OWNERS[*owner as usize % OWNERS.len()].to_string();
                let origin = match origin {
                    0 => OriginInput::Keyword(OriginKeyword::OwnerPrivate),
                    1 => OriginInput::Viewers(ViewersInput { participants: names(viewers), ..Default::default() }),
                    _ => OriginInput::Keyword(OriginKeyword::Public),
                };
                let id = self.fresh("m");
                Command::CreateItem(NewItem {
                    id: Some(id),
                    owner,
                    content: None,
                    attributes: None,
                    origin,
                    subjects: names(subjects),
                    author: None,
                    embedding: None,
                    embedding_metric: None,
                })
            }
            CStep::Grant { item, members, declassify, expiry_s } => {
                let item = self.item(*item)?;
                let expires_at = expiry_s.map(|s| earshot_store::model::format_time(self.h.now + i64::from(s) * 1000));
                if *declassify {
                    let owner = self.h.oracle.item(&item).map(|i| i.owner.clone()).unwrap_or_default();
                    Command::Derive {
                        request: DeriveRequest {
                            disposition: Disposition::Declassification,
                            owner,
                            sources: vec![item],
                            id: None,
                            content: None,
                            attributes: None,
                            container: None,
                            outputs: None,
                            members: Some(names(members)),
                            reason: Some("declassified".into()),
                            expires_at,
                            subjects: Vec::new(),
                        },
                        issuer: "admin".into(),
                    }
                } else {
                    Command::Grant {
                        item,
                        grant: NewGrant { members: names(members), reason: None, expires_at },
                        issuer: "admin".into(),
                    }
                }
            }
            CStep::Decide { grant, subject, given } => {
                let grants = &self.h.oracle.grants;
                let g = grants.get(*grant as usize % grants.len().max(1))?;
                let subjects: Vec<String> =
                    self.h.oracle.item(&g.item).map(|i| i.subjects.iter().cloned().collect()).unwrap_or_default();
                // Mostly one of the item's subjects (the owner among them), sometimes anyone.
                let subject = match subjects.len() {
                    n if n > 0 && *subject < 200 => subjects[*subject as usize % n].clone(),
                    _ => PARTS[*subject as usize % PARTS.len()].to_string(),
                };
                let grant = g.id.clone();
                if *given {
                    Command::Consent { grant, subject }
                } else {
                    Command::WithdrawConsent { grant, subject }
                }
            }
            CStep::Revoke(i) => {
                let grants = &self.h.oracle.grants;
                let g = grants.get(*i as usize % grants.len().max(1))?;
                Command::RevokeGrant { grant: g.id.clone() }
            }
            CStep::Derive { owner, picks, subjects, partition } => {
                let owner = OWNERS[*owner as usize % OWNERS.len()].to_string();
                let own: Vec<String> =
                    self.h.oracle.items.iter().filter(|i| i.owner == owner).map(|i| i.id.clone()).collect();
                if own.is_empty() {
                    return None;
                }
                let mut sources: Vec<String> = picks.iter().map(|p| own[*p as usize % own.len()].clone()).collect();
                sources.sort();
                sources.dedup();
                let base = DeriveRequest {
                    disposition: Disposition::Intersection,
                    owner,
                    sources: sources.clone(),
                    id: None,
                    content: None,
                    attributes: None,
                    container: None,
                    outputs: None,
                    members: None,
                    reason: None,
                    expires_at: None,
                    subjects: Vec::new(),
                };
                let request = if *partition {
                    let outputs = sources
                        .iter()
                        .enumerate()
                        .map(|(n, s)| PartitionOutput {
                            id: Some(self.fresh("p")),
                            content: None,
                            attributes: None,
                            sources: vec![s.clone()],
                            subjects: if n == 0 { names(subjects) } else { Vec::new() },
                        })
                        .collect();
                    DeriveRequest { disposition: Disposition::Partition, outputs: Some(outputs), ..base }
                } else {
                    DeriveRequest { id: Some(self.fresh("d")), subjects: names(subjects), ..base }
                };
                Command::Derive { request, issuer: "admin".into() }
            }
            CStep::Remove(i) => Command::RemoveParticipant { id: PARTS[3 + *i as usize % 2].into() },
            CStep::Tick(_) => return None,
        })
    }

    fn run(&mut self, s: &CStep) -> Result<(), String> {
        if let CStep::Tick(n) = s {
            self.h.now += i64::from(*n) * 700;
            self.h.clock.set(self.h.now);
            self.h.log.push(format!("Tick -> now = T0 + {} ms", self.h.now - T0_MS));
            return Ok(());
        }
        let Some(cmd) = self.command(s) else { return Ok(()) };
        self.h.write(&cmd)
    }

    /// SPEC §6.3 on the store's own answers: every admission by a grant names a grant whose
    /// consent is complete (by the store's view and by the oracle's record), and every grant
    /// whose consent is incomplete is shown as not effective.
    fn no_pending_grant_admits(&self) -> Result<(), String> {
        let snap = self.h.store.latest();
        for c in standard_containers() {
            let r = snap.resolve_container(&c).map_err(|e| e.to_string())?;
            for i in &self.h.oracle.items {
                let d = snap.check(&i.id, &r, self.h.now).map_err(|e| e.to_string())?;
                let Some(g) = d.grant.as_deref().filter(|_| d.admitted) else { continue };
                let view = snap.item_view(&i.id, self.h.now).map_err(|e| e.to_string())?;
                let shown = view.grants.iter().find(|x| x.id == g).and_then(|x| x.consent.as_ref());
                let complete = self.h.oracle.grant_by_id(g).is_some_and(consent_complete);
                if shown.is_some_and(|c| !c.effective || !c.missing.is_empty()) || !complete {
                    return Err(format!("`{}` admitted in {c:?} by grant `{g}` whose consent is incomplete", i.id));
                }
            }
        }
        for g in &self.h.oracle.grants {
            let view = snap.item_view(&g.item, self.h.now).map_err(|e| e.to_string())?;
            let Some(gv) = view.grants.iter().find(|x| x.id == g.id) else {
                return Err(format!("grant `{}` missing from the view of `{}`", g.id, g.item));
            };
            let effective = gv.consent.as_ref().is_none_or(|c| c.effective);
            let required: Vec<String> = gv.consent.as_ref().map(|c| c.required.clone()).unwrap_or_default();
            let want: Vec<String> = g.needs_consent_of.iter().cloned().collect();
            if effective != consent_complete(g) || required != want {
                return Err(format!(
                    "grant `{}`: store shows effective {effective}, required {required:?}; SPEC gives {} and {want:?}",
                    g.id,
                    consent_complete(g)
                ));
            }
        }
        Ok(())
    }
}

fn run_steps(fault: Option<Fault>, steps: &[CStep]) -> Result<(), String> {
    let mut r = Run::new(fault)?;
    for s in steps {
        r.run(s)?;
        r.h.compare(&standard_containers()).map_err(|e| r.h.explain(e))?;
        r.no_pending_grant_admits().map_err(|e| r.h.explain(e))?;
        // The flat evaluator (a scan of the durable records) decides consent the same way.
        crate::differential::compare_with_flat(&r.h, &standard_containers()).map_err(|e| r.h.explain(e))?;
    }
    r.h.compare_exhaustive().map_err(|e| r.h.explain(e))?;
    r.h.store.verify().map_err(|e| r.h.explain(format!("verify: {e}")))?;
    Ok(())
}

fn steps() -> impl Strategy<Value = Vec<CStep>> {
    prop::collection::vec(step(), 1..30)
}

proptest! {
    #![proptest_config(config(24))]
    #[test]
    fn consent_agrees_with_the_oracle(s in steps()) {
        run_steps(None, &s).map_err(fail)?;
    }
}

/// The property run with a faulty oracle (`faults.rs`): `Some(first failure)` when killed.
pub fn fault_verdict(fault: Fault, cases: u32) -> Option<String> {
    let config = PtConfig { cases, failure_persistence: None, max_shrink_iters: 0, ..PtConfig::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&steps(), |s| run_steps(Some(fault), &s).map_err(fail));
    result.err().map(|e| e.to_string().lines().next().unwrap_or("").chars().take(160).collect())
}

/// A fixed history: consent, use, withdrawal, consent again; the store agrees with the oracle
/// at each step and the decisions are the ones SPEC §6.3 gives.
#[test]
fn a_withdrawn_consent_stops_the_grant_from_the_next_revision() {
    let steps = vec![
        CStep::Record { owner: 0, origin: 0, viewers: vec![], subjects: vec![1, 2] },
        CStep::Grant { item: 0, members: vec![3], declassify: false, expiry_s: None },
        CStep::Decide { grant: 0, subject: 0, given: true },
        CStep::Decide { grant: 0, subject: 1, given: true },
        CStep::Decide { grant: 0, subject: 0, given: false },
        CStep::Decide { grant: 0, subject: 0, given: true },
    ];
    let mut r = Run::new(None).unwrap_or_else(|e| panic!("{e}"));
    let dan = crate::properties::container("ann", &["dan"]);
    let mut reasons = Vec::new();
    for s in &steps {
        r.run(s).unwrap_or_else(|e| panic!("{e}"));
        r.h.compare(&standard_containers()).unwrap_or_else(|e| panic!("{}", r.h.explain(e)));
        let snap = r.h.store.latest();
        if let Some(item) = r.h.oracle.items.first() {
            let c = snap.resolve_container(&dan).unwrap_or_else(|e| panic!("{e}"));
            let d = snap.check(&item.id, &c, r.h.now).unwrap_or_else(|e| panic!("{e}"));
            reasons.push(d.reason.to_string());
        }
    }
    assert_eq!(
        reasons,
        [
            "denied_not_in_audience",
            "denied_consent_pending",
            "denied_consent_pending",
            "admitted_grant",
            "denied_consent_pending",
            "admitted_grant"
        ]
    );
}
