//! Start-up of a replica over PostgreSQL (no criterion: one 1M-item open takes seconds, so it
//! prints the timings of a few runs and their median): imports the synthetic store into fresh
//! tables, then times `Earshot::open_with` over them `EARSHOT_BENCH_RUNS` times (default 2), each
//! in a fresh process, and reports that process's resident memory before and after the open. Skips with a message when
//! PostgreSQL is not reachable (`EARSHOT_TEST_PG_URL`, default 127.0.0.1:5432/test).
//!
//! Run with `cargo bench -p earshot-benches --bench pg_startup`; `EARSHOT_BENCH_ITEMS` sets the
//! size (default 1,000,000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_benches::{generate, import, items_from_env, median, Shape, NOW_MS, STORE};
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
    assert_eq!(e.store(STORE).expect("store").latest().item_count(), items, "every item rebuilt");
    println!("open_ms={} rss_before_mib={before} rss_after_mib={}", took.as_secs_f64() * 1000.0, rss_mib());
}

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
    drop(syn);
    println!(
        "pg_startup: {items} items generated in {generated:.2?}, imported into PostgreSQL in {imported:.2?} ({:.0} items/s)",
        items as f64 / imported.as_secs_f64()
    );
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
        println!(
            "  run {run}: Earshot::open_with over PostgreSQL {took_ms:.0} ms; the process's resident memory {before:.0} → {after:.0} MiB ({:.0} B/item)",
            (after - before) * 1048576.0 / items as f64
        );
        times.push(Duration::from_secs_f64(took_ms / 1000.0));
    }
    println!("pg_startup: median open of {items} items over PostgreSQL: {:.3?}", median(&times));
}
