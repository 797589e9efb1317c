//! Start-up of a replica over PostgreSQL (no criterion: one 1M-item open takes seconds, so it
//! prints the timings of a few runs and their median): imports the synthetic store into fresh
//! tables, writes `PAST_WRITES` acknowledged revisions on top (timed: a durable write at that
//! size, with the history of past values kept), then times `Earshot::open_with` over them
//! `EARSHOT_BENCH_RUNS` times (default 2), each in a fresh process, and reports that process's
//! resident memory before and after the open, and how long that replica takes to answer its
//! first `at_exact` of a revision it never held (built from the datastore's history and the
//! log replayed to the newest). Skips with a message when PostgreSQL is not reachable
//! (`EARSHOT_TEST_PG_URL`, default 127.0.0.1:5432/test).
//!
//! Run with `cargo bench -p earshot-benches --bench pg_startup`; `EARSHOT_BENCH_ITEMS` sets the
//! size (default 1,000,000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_benches::{generate, import, items_from_env, median, Shape, NOW_MS, STORE};
use earshot_store::model::{Command, Consistency, NewItem, OriginInput, OriginKeyword};
use earshot_store::{Backend, Config, Earshot, ManualClock};

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

/// Set (to the table prefix) in the process that only opens the store.
const CHILD: &str = "EARSHOT_PG_STARTUP_CHILD";

fn field(text: &str, name: &str) -> f64 {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")).and_then(|v| v.parse().ok()))
        .unwrap_or_else(|| panic!("`{name}` missing from {text}"))
}

/// The open-only process: opens the store from the tables under `prefix`, checks it, and prints
/// the time and its resident memory before and after.
fn open_only(prefix: &str, items: usize) {
    let options = earshot_postgres::PgOptions::new(earshot_postgres::testing::url()).with_prefix(prefix);
    let before = rss_mib();
    let t = Instant::now();
    let backend: Arc<dyn Backend> = Arc::new(earshot_postgres::PgBackend::open(options).expect("connect"));
    let e = Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("open");
    let took = t.elapsed();
    let h = e.store(STORE).expect("store");
    assert_eq!(h.latest().item_count(), items + PAST_WRITES as usize, "every item rebuilt");
    let rss = rss_mib();
    // A revision this replica never held: built from the history, replayed to the newest.
    let past = h.latest().revision() - PAST_WRITES / 2;
    let t = Instant::now();
    let at = h.read_point(&Consistency::AtExact(h.token(past)), NOW_MS).expect("a past revision");
    let built = t.elapsed();
    assert_eq!(at.snapshot.revision(), past);
    let t = Instant::now();
    h.read_point(&Consistency::AtExact(h.token(past + 1)), NOW_MS).expect("the next one");
    let next = t.elapsed();
    println!(
        "open_ms={} rss_before_mib={before} rss_after_mib={rss} past_ms={} next_past_us={}",
        took.as_secs_f64() * 1000.0,
        built.as_secs_f64() * 1000.0,
        next.as_secs_f64() * 1e6
    );
}

/// Revisions written over PostgreSQL on top of the import (each one item, acknowledged).
const PAST_WRITES: u64 = 40;

fn main() {
    if let Ok(prefix) = std::env::var(CHILD) {
        return open_only(&prefix, items_from_env(1_000_000));
    }
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "pg_startup".contains(f.as_str())) {
        return;
    }
    let items = items_from_env(1_000_000);
    let runs: usize = std::env::var("EARSHOT_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let db = match earshot_postgres::testing::isolated("startup") {
        Ok(Some(db)) => db,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    let t = Instant::now();
    let mut syn = generate(&Shape::with_items(items));
    // A store created by a bulk import is at revision 1 (the head starts there).
    if let Some(meta) = syn.records.meta.as_mut() {
        meta.revision = 1;
        meta.committed_at_ms = Some(NOW_MS);
    }
    let generated = t.elapsed();
    let t = Instant::now();
    import(db.backend.as_ref(), &syn.records).expect("import into PostgreSQL");
    let imported = t.elapsed();
    let owner = syn.records.items.first().map(|i| i.owner.clone()).expect("an item");
    drop(syn);
    println!(
        "pg_startup: {items} items generated in {generated:.2?}, imported into PostgreSQL in {imported:.2?} ({:.0} items/s)",
        items as f64 / imported.as_secs_f64()
    );
    // Acknowledged writes on top, as a replica makes them (each keeps its past values).
    {
        let backend: Arc<dyn Backend> =
            Arc::new(earshot_postgres::PgBackend::open(db.options.clone()).expect("connect"));
        let e = Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("open");
        let h = e.store(STORE).expect("store");
        let mut writes = Vec::new();
        for n in 0..PAST_WRITES {
            let item = NewItem {
                id: Some(format!("past-{n}")),
                owner: owner.clone(),
                content: None,
                attributes: None,
                origin: OriginInput::Keyword(OriginKeyword::Public),
                subjects: Vec::new(),
                author: None,
                embedding: None,
                embedding_metric: None,
            };
            let t = Instant::now();
            h.write(Command::CreateItem(item)).expect("write");
            writes.push(t.elapsed());
        }
        println!("pg_startup: {PAST_WRITES} durable writes at {items} items, p50 {:.2?}", median(&writes));
        e.shutdown();
    }
    // Each open runs in a fresh process (this binary again, told to open only), so that its
    // resident memory is the replica's own and not what the generator left in the allocator.
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let exe = std::env::current_exe().expect("own path");
    for run in 1..=runs {
        let out = std::process::Command::new(&exe)
            .env(CHILD, &db.options.table_prefix)
            .env("EARSHOT_BENCH_ITEMS", items.to_string())
            .output()
            .expect("the open process runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "open process failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        let took_ms: f64 = field(&text, "open_ms");
        let (before, after) = (field(&text, "rss_before_mib"), field(&text, "rss_after_mib"));
        let (past_ms, next_us) = (field(&text, "past_ms"), field(&text, "next_past_us"));
        println!(
            "  run {run}: Earshot::open_with over PostgreSQL {took_ms:.0} ms; the process's resident memory {before:.0} → {after:.0} MiB ({:.0} B/item); its first at_exact of a revision it never held {past_ms:.0} ms (built from the history, {} revisions replayed), the next revision {next_us:.0} µs",
            (after - before) * 1048576.0 / items as f64,
            PAST_WRITES / 2
        );
        times.push(Duration::from_secs_f64(took_ms / 1000.0));
    }
    println!("pg_startup: median open of {items} items over PostgreSQL: {:.3?}", median(&times));
}
