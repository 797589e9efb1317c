//! Owns the model-based store test (issue 5): random sequences of writes, lifecycle changes,
//! grants, member removals, clock moves and restarts (close and reopen the sled directory, or the PostgreSQL tables), with
//! the store checked against the in-memory model (the reference oracle) after **every** step, at
//! two levels: every decision, lookup and item view (`Harness::compare`), and the durable records
//! themselves (participants, identities, items, audiences, grants and the revision), which are
//! what a restart rebuilds from. This is sled's own model-test pattern (a `BTreeMap` model,
//! close-and-reopen among the operations) applied to Earshot's records.
//!
//! `PROPTEST_CASES` scales it (the default keeps CI to a few seconds).

use std::collections::{BTreeMap, BTreeSet};

use earshot_core::{AudienceDigest, AudienceKind};
use proptest::prelude::*;

use crate::oracle::Audience;
use crate::properties::{config, fail, standard_containers, step, Backing, Harness, Step, Universe};

/// A universe where a restart is one operation among the others (about one step in eight).
fn universe_with_restarts() -> impl Strategy<Value = Universe> {
    let op = prop_oneof![7 => step(), 1 => Just(Step::Reopen)];
    (3u8..=5, 0u8..5, prop::collection::vec((0u8..3, 0u8..5), 0..3), prop::collection::vec(op, 1..40)).prop_map(
        |(initial, e0, mut binds, steps)| {
            binds.insert(0, (0, e0));
            Universe { initial, binds, steps }
        },
    )
}

/// The durable records agree with the model: what a restart would rebuild is the model's state.
fn records_match_model(h: &Harness) -> Result<(), String> {
    let r = h.store.durable_records().map_err(|e| format!("durable records: {e}"))?;
    let rev = h.store.latest().revision();
    if r.meta.as_ref().map(|m| m.revision) != Some(rev) {
        return Err(format!("records at revision {:?}, store at {rev}", r.meta.map(|m| m.revision)));
    }
    let o = &h.oracle;
    let parts: BTreeSet<String> = r.participants.iter().map(|p| p.id.clone()).collect();
    if parts != o.participants {
        return Err(format!("participant records {parts:?} but model {:?}", o.participants));
    }
    let idents: BTreeMap<(String, String), BTreeSet<String>> = r
        .identities
        .iter()
        .filter(|i| !i.participants.is_empty())
        .map(|i| ((i.transport.clone(), i.identifier.clone()), i.participants.iter().cloned().collect()))
        .collect();
    let want: BTreeMap<(String, String), BTreeSet<String>> =
        o.identities.iter().map(|(k, v)| (k.clone(), v.iter().cloned().collect())).collect();
    if idents != want {
        return Err(format!("identity records {idents:?} but model {want:?}"));
    }
    let public = AudienceDigest::compute::<&str>(AudienceKind::Public, &[]).to_hex();
    let audience = |digest: &str| -> Result<Audience, String> {
        if digest == public {
            return Ok(None);
        }
        r.audiences
            .iter()
            .find(|a| a.digest == digest)
            .map(|a| Some(a.members.iter().cloned().collect()))
            .ok_or_else(|| format!("no audience record {digest}"))
    };
    let mut items: Vec<_> = r.items.iter().collect();
    items.sort_by_key(|i| i.seq);
    if items.len() != o.items.len() {
        return Err(format!("{} item records but {} in the model", items.len(), o.items.len()));
    }
    for (rec, m) in items.iter().zip(&o.items) {
        let aud = audience(&rec.audience)?;
        if rec.id != m.id
            || rec.owner != m.owner
            || rec.state != m.state
            || rec.sources != m.sources
            || aud != m.audience
        {
            return Err(format!("item record {rec:?} (audience {aud:?}) but model {m:?}"));
        }
    }
    let mut grants: Vec<_> = r.grants.iter().collect();
    grants.sort_by_key(|g| g.seq);
    if grants.len() != o.grants.len() {
        return Err(format!("{} grant records but {} in the model", grants.len(), o.grants.len()));
    }
    for (rec, m) in grants.iter().zip(&o.grants) {
        let aud = audience(&rec.audience)?;
        if rec.id != m.id
            || rec.item != m.item
            || rec.revoked != m.revoked
            || rec.expires_at_ms != m.expires_at_ms
            || aud.as_ref() != Some(&m.members)
        {
            return Err(format!("grant record {rec:?} (audience {aud:?}) but model {m:?}"));
        }
    }
    Ok(())
}

fn run_model(u: &Universe) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    run_model_on(Backing::Dir(dir.path().join("db")), u)
}

/// The model test over any reopenable backing; a restart drops the `Earshot` and opens a new one
/// over the same records (the same directory, or the same PostgreSQL tables).
fn run_model_on(backing: Backing, u: &Universe) -> Result<(), String> {
    let mut h = Harness::new(backing)?;
    h.setup(u)?;
    records_match_model(&h)?;
    let containers = standard_containers();
    for s in &u.steps {
        h.run(s)?;
        h.compare(&containers).map_err(|e| h.explain(e))?;
        records_match_model(&h).map_err(|e| h.explain(e))?;
    }
    let asked = u.steps.iter().filter(|s| matches!(s, Step::Reopen)).count();
    let done = h.log.iter().filter(|l| l.starts_with("Reopen at revision")).count();
    if asked != done {
        return Err(h.explain(format!("{asked} restarts asked, {done} done")));
    }
    h.compare_exhaustive().map_err(|e| h.explain(e))?;
    h.store.verify().map_err(|e| h.explain(format!("verify: {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(config(24))]

    /// The store equals its model after every step, restarts included, in its answers and in
    /// its durable records.
    #[test]
    fn the_store_matches_its_model_across_restarts(u in universe_with_restarts()) {
        run_model(&u).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: earshot_tests::pg_cases(4), ..config(4) })]

    /// The same over PostgreSQL: a restart drops the instance and opens `Earshot::open_with` on
    /// the same tables.
    #[test]
    fn the_store_matches_its_model_across_restarts_on_postgres(u in universe_with_restarts()) {
        let Some(db) = Backing::postgres("model").map_err(fail)? else { return Ok(()) };
        run_model_on(db, &u).map_err(fail)?;
    }
}

/// The records check is not vacuous: a model that differs from the records is reported.
#[test]
fn the_records_check_catches_a_wrong_model() {
    use crate::properties::{Ev, Origin};
    let u = Universe {
        initial: 3,
        binds: vec![(0, 1)],
        steps: vec![
            Step::Record {
                owner: 0,
                origin: Origin::Viewers(Ev { parts: vec![1], idents: vec![], quality: earshot_core::Quality::Fresh }),
                reuse_id: false,
            },
            Step::Grant { item: 0, members: vec![2], expiry_s: Some(2), declassify: false },
            Step::Reopen,
        ],
    };
    if let Err(e) = run_model(&u) {
        panic!("{e}");
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness::new(Backing::Dir(dir.path().join("db"))).unwrap_or_else(|e| panic!("{e}"));
    h.setup(&u).unwrap_or_else(|e| panic!("{e}"));
    for s in &u.steps {
        h.run(s).unwrap_or_else(|e| panic!("{e}"));
    }
    records_match_model(&h).unwrap_or_else(|e| panic!("{e}"));
    let mut wrong = h.oracle.clone();
    wrong.grants[0].revoked = true;
    std::mem::swap(&mut h.oracle, &mut wrong);
    assert!(records_match_model(&h).is_err());
    std::mem::swap(&mut h.oracle, &mut wrong);
    h.oracle.items[0].audience = None;
    assert!(records_match_model(&h).is_err());
    h.oracle.items[0].audience = wrong.items[0].audience.clone();
    h.oracle.participants.remove("cat");
    assert!(records_match_model(&h).is_err());
}
