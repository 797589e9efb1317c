//! Many stores per process (issue 33): eviction is invisible (the oracle's property test with
//! evictions among its operations; an eviction between a write and an `at_least` read of its
//! token; a write sent to an evicted copy; an attempt or an export keeps its store loaded), the
//! cap evicts the least recently used, and replicas over PostgreSQL learn of each other's writes
//! through the one change feed, by notification and, when notifications are lost, by its poll.

use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_store::model::{Command, Consistency, NewParticipant, ParticipantKind};
use earshot_store::{Backend, Config, Earshot, ManualClock};
use proptest::prelude::*;

use crate::properties::{config, fail, step, Backing, Harness, Step, Universe};

const T0_MS: i64 = 1_760_000_000_000;

/// A zero retention window: a store whose newest commit is older than now may be evicted even
/// on a datastore that keeps no history (sled).
fn evicting() -> Config {
    Config { retention_window: Duration::ZERO, ..Config::default() }
}

/// A universe where an eviction is one operation among the others (about one step in five).
fn universe_with_evictions() -> impl Strategy<Value = Universe> {
    let op = prop_oneof![4 => step(), 1 => Just(Step::Evict)];
    (3u8..=5, 0u8..5, prop::collection::vec((0u8..3, 0u8..5), 0..3), prop::collection::vec(op, 1..40)).prop_map(
        |(initial, e0, mut binds, steps)| {
            binds.insert(0, (0, e0));
            Universe { initial, binds, steps }
        },
    )
}

fn run_with_evictions(backing: Backing, u: &Universe) -> Result<(), String> {
    let mut h = Harness::with_config(backing, evicting())?;
    h.run_universe(u)?;
    let asked = u.steps.iter().filter(|s| matches!(s, Step::Evict)).count();
    let done = h.log.iter().filter(|l| l.starts_with("Evict at revision")).count();
    if asked != done {
        return Err(h.explain(format!("{asked} evictions asked, {done} done")));
    }
    h.compare_exhaustive().map_err(|e| h.explain(e))?;
    Ok(())
}

proptest! {
    #![proptest_config(config(24))]

    /// Evicting the store and loading it again between any two operations changes no decision,
    /// no lookup, no revision and no token's meaning: the oracle agrees after every step.
    #[test]
    fn evictions_among_the_oracles_operations_change_no_answer(u in universe_with_evictions()) {
        let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
        run_with_evictions(Backing::Dir(dir.path().join("db")), &u).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: earshot_tests::pg_cases(4), ..config(4) })]

    /// The same over PostgreSQL.
    #[test]
    fn evictions_change_no_answer_over_postgres(u in universe_with_evictions()) {
        let Some(backing) = Backing::postgres("evict").map_err(fail)? else { return Ok(()) };
        run_with_evictions(backing, &u).map_err(fail)?;
    }
}

fn participant(id: &str) -> Command {
    Command::CreateParticipant(NewParticipant { id: id.into(), kind: ParticipantKind::Person, name: None })
}

fn open(backend: Arc<dyn Backend>, config: Config) -> Earshot {
    Earshot::open_with(backend, Arc::new(ManualClock::new(T0_MS)), config).expect("open")
}

/// A store evicted between a write and an `at_least` read of the write's token: the read,
/// through the store loaded again, sees the write. A write sent to the evicted copy is refused
/// unapplied (so that the caller can send it to the store loaded again) and the store's
/// revision does not move.
#[test]
fn an_eviction_between_a_write_and_its_at_least_read_is_invisible() {
    let clock = Arc::new(ManualClock::new(T0_MS));
    let earshot =
        Earshot::open_with(Arc::new(earshot_store::SledBackend::temporary().expect("sled")), clock.clone(), evicting())
            .expect("open");
    earshot.create_store("s", None).expect("create");
    let h = earshot.store("s").expect("store");
    let written = h.write(participant("ann")).expect("write");
    clock.set(T0_MS + 1);
    assert!(earshot.evict("s"), "an idle store is evicted");
    assert!(h.evicted());
    assert_eq!(earshot.tenancy().loaded, 0);
    assert_eq!(earshot.store_ids(), Vec::<String>::new());
    assert_eq!(earshot.list_store_ids().expect("list"), vec!["s".to_string()], "an evicted store is still listed");

    let again = earshot.store("s").expect("loaded again");
    let read = again.read_point(&Consistency::AtLeast(written.token.clone()), T0_MS + 1).expect("at_least");
    assert_eq!(read.snapshot.revision(), written.revision);
    assert!(read.snapshot.participant_id("ann").is_some());

    // The evicted copy writes nothing.
    assert!(h.write(participant("bob")).is_err());
    assert_eq!(again.latest().revision(), written.revision);
    again.write(participant("bob")).expect("the store loaded again writes");
    let t = earshot.tenancy();
    assert_eq!((t.loaded, t.evictions, t.reloads), (1, 1, 1), "{t:?}");
}

/// On a datastore without history (sled), a store whose past revisions are still inside the
/// retention window stays loaded (only it could answer them); an export in progress and a live
/// attempt keep it loaded too, until they end.
#[test]
fn what_only_a_loaded_store_can_answer_keeps_it_loaded() {
    let clock = Arc::new(ManualClock::new(T0_MS));
    let backend = Arc::new(earshot_store::SledBackend::temporary().expect("sled"));
    let config = Config { attempt_ttl: Duration::from_millis(300), ..Config::default() };
    let earshot = Earshot::open_with(backend, clock.clone(), config).expect("open");
    earshot.create_store("s", None).expect("create");
    let h = earshot.store("s").expect("store");
    h.write(participant("ann")).expect("write");
    clock.set(T0_MS + 60_000);
    assert!(!earshot.evict("s"), "revision 1 is still readable with at_exact for the retention window");
    clock.set(T0_MS + 301_000);
    // An export pins the records.
    let export = earshot.export("s").expect("export");
    assert!(!earshot.evict("s"), "an export in progress keeps the store loaded");
    drop(export);
    // A live attempt keeps it loaded until it ends.
    let attempt = h
        .create_attempt(crate::properties::container("ann", &["ann"]), h.latest(), earshot_store::new_attempt_id())
        .expect("attempt");
    assert!(!earshot.evict("s"), "a live attempt keeps the store loaded");
    std::thread::sleep(Duration::from_millis(350));
    assert!(earshot.evict("s"), "once the attempt ended the store goes");
    drop(attempt);
}

/// Above the cap, a housekeeping pass evicts the least recently used stores (those idle for a
/// couple of seconds); a store used since stays. Every evicted store answers again on its next
/// use.
#[test]
fn the_cap_evicts_the_least_recently_used() {
    let config = Config { max_loaded_stores: 2, idle_store_after: Duration::ZERO, ..evicting() };
    let clock = Arc::new(ManualClock::new(T0_MS));
    let earshot =
        Earshot::open_with(Arc::new(earshot_store::SledBackend::temporary().expect("sled")), clock.clone(), config)
            .expect("open");
    for i in 0..5 {
        earshot.create_store(&format!("s{i}"), None).expect("create");
    }
    clock.set(T0_MS + 1);
    assert_eq!(earshot.housekeep(), 0, "nothing idle long enough yet");
    std::thread::sleep(Duration::from_millis(2_100));
    // All five equally idle: the three first by id go.
    assert_eq!(earshot.housekeep(), 3);
    let t = earshot.tenancy();
    assert_eq!((t.loaded, t.unloaded, t.evictions), (2, 3, 3), "{t:?}");
    // (`store_ids` lists the loaded stores without using them.)
    assert_eq!(earshot.store_ids(), vec!["s3", "s4"]);
    // Used again (loaded on use), s0 is now the most recently used: the next pass takes s3.
    assert_eq!(earshot.store("s0").expect("s0 answers again").latest().revision(), 1);
    std::thread::sleep(Duration::from_millis(2_100));
    assert_eq!(earshot.housekeep(), 1);
    assert_eq!(earshot.store_ids(), vec!["s0", "s4"], "the store used most recently stays");
    for i in 0..5 {
        let h = earshot.store(&format!("s{i}")).expect("every store answers");
        assert_eq!(h.latest().revision(), 1);
    }
    assert_eq!(earshot.tenancy().reloads, 4);
}

/// Replicas over PostgreSQL learn of each other's writes through the change feed, for any of
/// many stores: replica B sees replica A's writes by notification within milliseconds, and a
/// replica whose notifications are lost (A's backend notifies no one) sees them by the feed's
/// poll. Neither polls a store on its own.
#[test]
fn many_stores_follow_each_other_through_the_change_feed() {
    let Some(db) = earshot_postgres::testing::isolated("feed").expect("PostgreSQL") else { return };
    // A writes without notifying anyone: only the poll can tell B.
    let mut quiet = db.options.clone();
    quiet.notify = false;
    let a_silent = open(Arc::new(earshot_postgres::PgBackend::open(quiet).expect("A")), Config::default());
    let a_loud = open(Arc::new(db.another().expect("A2")), Config::default());
    let polling_only =
        Config { follow_interval: Duration::from_millis(200), follow_notifications: false, ..Config::default() };
    let b = open(
        Arc::new(db.another().expect("B")),
        Config { follow_interval: Duration::from_secs(3600), ..Config::default() },
    );
    let c = open(Arc::new(db.another().expect("C")), polling_only);
    let stores: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
    for s in &stores {
        a_loud.create_store(s, None).expect("create");
    }
    // B and C load every store (B hears by notification only: its poll is an hour away).
    let on_b: Vec<_> = stores.iter().map(|s| b.store(s).expect("B loads")).collect();
    let on_c: Vec<_> = stores.iter().map(|s| c.store(s).expect("C loads")).collect();

    // Notified: B sees each of A's writes without polling.
    let mut lags = Vec::new();
    for (i, s) in stores.iter().enumerate().step_by(4) {
        let written = a_loud.store(s).expect("A").write(participant("ann")).expect("write");
        let started = Instant::now();
        while on_b[i].latest().revision() < written.revision {
            assert!(started.elapsed() < Duration::from_secs(5), "B never heard of {s}: {:?}", on_b[i].replication());
            std::thread::sleep(Duration::from_millis(1));
        }
        lags.push(started.elapsed());
    }
    lags.sort();
    assert!(lags[lags.len() / 2] < Duration::from_millis(500), "notified lag p50 {:?}", lags[lags.len() / 2]);

    // Not notified: C finds the write by the feed's poll, B (no poll for an hour) does not.
    let s = &stores[1];
    let written = a_silent.store(s).expect("A").write(participant("bob")).expect("write");
    let started = Instant::now();
    while on_c[1].latest().revision() < written.revision {
        assert!(started.elapsed() < Duration::from_secs(5), "C never polled {s}: {:?}", on_c[1].replication());
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(on_b[1].latest().revision() < written.revision, "B heard of a write no one notified");
    // A deletion reaches the followers too: their copies retire.
    a_loud.delete_store(&stores[2]).expect("delete");
    let started = Instant::now();
    while !on_b[2].retired() {
        assert!(started.elapsed() < Duration::from_secs(5), "B never heard of the deletion");
        std::thread::sleep(Duration::from_millis(2));
    }
}
