//! One conformance suite, every backend: every fixture scenario run through a whole Earshot
//! (API, store, writer) over PostgreSQL, then a restart on the same tables that must rebuild
//! the same snapshot and pass `verify`; and the same scenario over `MemoryBackend` must reach
//! the same revision. Skips with a message when PostgreSQL is not reachable.

use std::fmt::Write as _;
use std::sync::Arc;

use earshot_postgres::testing::isolated;
use earshot_store::{Backend, Config, Earshot, ManualClock, MemoryBackend};
use earshot_tests::{TestApp, T0_MS};

use crate::scenarios::{fixture_files, parse, run_scenario_on};

/// The store every scenario writes.
const STORE: &str = "s";

#[tokio::test]
async fn every_fixture_scenario_holds_on_postgres_and_survives_a_restart() {
    let mut report = String::new();
    let files = fixture_files();
    for f in &files {
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
        let sc = parse(&text).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
        let Some(db) = isolated("scenario").expect("PostgreSQL") else { return };

        let app = TestApp::with_backend(db.backend.clone());
        let failures = run_scenario_on(&app, &sc).await;
        if !failures.is_empty() {
            let _ = writeln!(report, "{file} on PostgreSQL:\n  {}", failures.join("\n  "));
            continue;
        }
        let h = app.earshot.store(STORE).expect("store");
        let before = earshot_store::verify::facts(&h.latest());
        let revision = h.latest().revision();
        if let Err(e) = h.verify() {
            let _ = writeln!(report, "{file}: verify before the restart: {e}");
        }
        drop(h);
        drop(app);
        assert_eq!(db.backend.head(STORE).expect("head"), Some(revision), "{file}: the head is the store's revision");

        // A restart: a new Earshot over the same tables rebuilds the same snapshot.
        let clock = Arc::new(ManualClock::new(T0_MS));
        let backend: Arc<dyn Backend> = db.backend.clone();
        let earshot = Earshot::open_with(backend, clock, Config::default()).expect("reopen over PostgreSQL");
        let h = earshot.store(STORE).expect("store after the restart");
        if earshot_store::verify::facts(&h.latest()) != before {
            let _ = writeln!(report, "{file}: the snapshot after the restart differs from the one before");
        }
        if let Err(e) = h.verify() {
            let _ = writeln!(report, "{file}: verify after the restart: {e}");
        }
        drop(h);
        drop(earshot);

        // The same scenario over memory reaches the same revision (the same commits).
        let memory = TestApp::with_backend(Arc::new(MemoryBackend::default()));
        let failures = run_scenario_on(&memory, &sc).await;
        let mem_revision = memory.revision(STORE);
        if !failures.is_empty() || mem_revision != revision {
            let _ = writeln!(
                report,
                "{file}: over memory, revision {mem_revision} vs {revision} over PostgreSQL; {failures:?}"
            );
        }
    }
    assert!(report.is_empty(), "{report}");
    assert!(files.len() >= 10, "expected the fixture scenarios, found {}", files.len());
}
