//! Owns the differential tests: the indexed evaluator (`Snapshot::check` / `lookup` over postings
//! and memoised currentness) against the flat evaluator (`earshot_store::flat::Flat`, a scan of
//! the durable records) on random universes, index agreement (`StoreHandle::verify`) after every
//! step, index agreement under concurrent (group-committed) writes, and decisions that survive
//! closing and reopening the store.
//!
//! The flat evaluator takes viewer names, resolved by `flat::resolve` straight from the durable
//! participant and identity records (SPEC §1.2), independently of the index.

use crate::properties::{
    config, fail, lookup_all, standard_containers, universe, Backing, Harness, Step, Universe, OWNERS,
};
use earshot_core::Quality;
use earshot_store::flat::Flat;
use earshot_store::model::{Command, ContainerInput};
use proptest::prelude::*;

/// Indexed and flat evaluators agree on every item × container: decision, grant basis, lookup.
pub(crate) fn compare_with_flat(h: &Harness, containers: &[ContainerInput]) -> Result<(), String> {
    let snap = h.store.latest();
    let records = h.store.durable_records().map_err(|e| format!("durable records: {e}"))?;
    let meta_rev = records.meta.as_ref().map(|m| m.revision);
    if meta_rev != Some(snap.revision()) {
        return Err(format!("records are at revision {meta_rev:?}, the snapshot at {}", snap.revision()));
    }
    let flat = Flat::new(&records);
    let items = snap.item_names();
    let flat_items: Vec<String> = records.items.iter().map(|i| i.id.clone()).collect();
    if items != flat_items {
        return Err(format!("items: index {items:?} but records {flat_items:?}"));
    }
    for c in containers {
        let r = snap.resolve_container(c).map_err(|e| format!("resolve {c:?}: {e}"))?;
        let fv = earshot_store::flat::resolve(&records, c);
        for id in &items {
            let d = snap.check(id, &r, h.now).map_err(|e| format!("check `{id}`: {e}"))?;
            let f = flat.check(id, &fv, h.now);
            if d.admitted != f.admitted || d.grant != f.grant {
                return Err(format!("`{id}` in {c:?}: indexed {d:?} but flat {f:?}"));
            }
            if d.admitted && (d.basis.as_deref() == Some("grant")) != f.grant.is_some() {
                return Err(format!("`{id}` in {c:?}: basis {:?} but flat grant {:?}", d.basis, f.grant));
            }
        }
        for owners in [vec![], OWNERS.iter().map(|o| o.to_string()).collect::<Vec<_>>()] {
            let got = lookup_all(&snap, &r, &owners, 3, h.now)?;
            let filter = if owners.is_empty() { vec![c.owner.clone()] } else { owners.clone() };
            let want = flat.lookup(&fv, &filter, h.now);
            if got != want {
                return Err(format!("lookup {c:?} owners {owners:?}: indexed {got:?} but flat {want:?}"));
            }
        }
    }
    Ok(())
}

fn run_differential(u: &Universe) -> Result<(), String> {
    run_differential_on(Backing::Temporary, u)
}

fn run_differential_on(backing: Backing, u: &Universe) -> Result<(), String> {
    let mut h = Harness::new(backing)?;
    h.compare_each_step = false;
    h.setup(u)?;
    let containers = standard_containers();
    for s in &u.steps {
        h.run(s)?;
        compare_with_flat(&h, &containers).map_err(|e| h.explain(e))?;
        h.store.verify().map_err(|e| h.explain(format!("verify: {e}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(96))]

    /// Indexed vs flat, and index vs rebuild, after every step of a random sequence.
    #[test]
    fn indexed_and_flat_evaluators_agree(u in universe(40)) {
        run_differential(&u).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: earshot_tests::pg_cases(4), ..config(4) })]

    /// The same over PostgreSQL (`verify` after every step).
    #[test]
    fn indexed_and_flat_evaluators_agree_on_postgres(u in universe(30)) {
        let Some(db) = Backing::postgres("diff").map_err(fail)? else { return Ok(()) };
        run_differential_on(db, &u).map_err(fail)?;
    }
}

/// A universe whose steps are interleaved with restarts.
fn with_restarts() -> impl Strategy<Value = Universe> {
    (universe(20), prop::collection::vec(any::<prop::sample::Index>(), 1..3)).prop_map(|(mut u, at)| {
        for i in at {
            let pos = i.index(u.steps.len() + 1);
            u.steps.insert(pos, Step::Reopen);
        }
        u.steps.push(Step::Reopen);
        u
    })
}

fn run_with_restarts(u: &Universe) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    run_with_restarts_on(Backing::Dir(dir.path().join("db")), u)
}

fn run_with_restarts_on(backing: Backing, u: &Universe) -> Result<(), String> {
    let mut h = Harness::new(backing)?;
    // `Harness::run` on `Step::Reopen` compares every decision and lookup before and after.
    h.run_universe(u)?;
    let reopens = u.steps.iter().filter(|s| matches!(s, Step::Reopen)).count();
    let done = h.log.iter().filter(|l| l.starts_with("Reopen at revision")).count();
    if done != reopens {
        return Err(h.explain(format!("{reopens} restarts asked, {done} done")));
    }
    compare_with_flat(&h, &standard_containers()).map_err(|e| h.explain(e))?;
    h.compare_exhaustive().map_err(|e| h.explain(e))?;
    h.store.verify().map_err(|e| h.explain(format!("verify: {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(config(24))]

    /// Close and reopen the store (sled on a real directory) at random points: the revision,
    /// index agreement and every decision are the same after the restart, and the store keeps
    /// agreeing with the oracle afterwards.
    #[test]
    fn decisions_survive_a_restart(u in with_restarts()) {
        run_with_restarts(&u).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: earshot_tests::pg_cases(3), ..config(3) })]

    /// The same over PostgreSQL: restarts reopen the same tables.
    #[test]
    fn decisions_survive_a_restart_on_postgres(u in with_restarts()) {
        let Some(db) = Backing::postgres("restart").map_err(fail)? else { return Ok(()) };
        run_with_restarts_on(db, &u).map_err(fail)?;
    }
}

/// Submits the planned commands of a universe from three threads at once, so the writer folds
/// several into one durable commit; whatever order they land in, no write may fail with an
/// integrity or storage error, the index must agree with a rebuild, and the indexed and flat
/// evaluators must agree.
fn run_concurrent(u: &Universe) -> Result<(), String> {
    let mut h = Harness::new(Backing::Temporary)?;
    h.compare_each_step = false;
    h.setup(u)?;
    let cmds: Vec<Command> = u.steps.iter().filter_map(|s| h.plan(s)).collect();
    let store = h.store.clone();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..3)
            .map(|k| {
                let mine: Vec<Command> = cmds.iter().skip(k).step_by(3).cloned().collect();
                let store = store.clone();
                scope.spawn(move || {
                    let mut bad = Vec::new();
                    for c in mine {
                        if let Err(e) = store.write(c.clone()) {
                            if matches!(e.code(), "integrity_failure" | "storage_failure" | "unavailable") {
                                bad.push(format!("{c:?}: {e}"));
                            }
                        }
                    }
                    bad
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|_| vec!["writer thread panicked".into()])).collect()
    });
    if !failures.is_empty() {
        return Err(format!("writes failed instead of being refused: {failures:?}"));
    }
    h.store.verify().map_err(|e| format!("verify: {e}"))?;
    compare_with_flat(&h, &standard_containers())
}

proptest! {
    #![proptest_config(config(48))]

    /// Concurrent writers: group commit keeps the index, the records and the flat evaluator in
    /// agreement.
    #[test]
    fn concurrent_writes_keep_the_index_in_agreement(u in universe(40)) {
        run_concurrent(&u).map_err(fail)?;
    }
}

/// A fixed universe through one restart: grants (one expiring), a member removal that merges two
/// audiences, an intersection and a quarantined derivation, then close, reopen and compare.
#[test]
fn a_fixed_universe_survives_a_restart() {
    use crate::properties::{Ev, Origin};
    use earshot_core::Action;
    let ev = |parts: Vec<u8>| Ev { parts, idents: vec![0], quality: Quality::Fresh };
    let u = Universe {
        initial: 5,
        binds: vec![(0, 4)],
        steps: vec![
            Step::Record { owner: 0, origin: Origin::Viewers(ev(vec![1, 3])), reuse_id: false },
            Step::Record { owner: 0, origin: Origin::Viewers(ev(vec![1])), reuse_id: false },
            Step::Record { owner: 0, origin: Origin::Public, reuse_id: false },
            Step::Grant { item: 0, members: vec![2, 3], expiry_s: Some(3), declassify: false },
            Step::Grant { item: 1, members: vec![2], expiry_s: None, declassify: true },
            Step::Intersect { owner: 0, picks: vec![0, 1], container: None, quarantine: false, foreign: false },
            Step::Intersect { owner: 0, picks: vec![2], container: None, quarantine: true, foreign: false },
            Step::RemoveParticipant(3),
            Step::Life { item: 1, action: Action::Freeze, by: None },
            Step::Reopen,
            Step::Tick(6),
            Step::Life { item: 1, action: Action::Unfreeze, by: None },
            Step::Reopen,
        ],
    };
    if let Err(e) = run_with_restarts(&u) {
        panic!("{e}");
    }
}

/// Regression (found by `indexed_and_flat_evaluators_agree`): removing `dan` shrinks grant
/// audience {bob,cat,dan} onto the existing {bob,cat}; the merge used to leave an empty
/// audience→items posting in the live index that a rebuild does not have, so `verify` failed.
#[test]
fn a_merge_without_items_leaves_no_empty_posting() {
    let u = Universe {
        initial: 4,
        binds: vec![(0, 0)],
        steps: vec![
            Step::Record { owner: 1, origin: crate::properties::Origin::Public, reuse_id: false },
            Step::Grant { item: 0, members: vec![3, 2], expiry_s: None, declassify: false },
            Step::Grant { item: 0, members: vec![2], expiry_s: None, declassify: false },
            Step::RemoveParticipant(3),
        ],
    };
    if let Err(e) = run_differential(&u) {
        panic!("{e}");
    }
}
