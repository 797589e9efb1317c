//! Start-up rebuild benchmark (no criterion: one 1M-item open takes seconds, so it prints the
//! timings of a few runs and their median instead).
//!
//! Builds the synthetic store into a sled directory with `encode_records` in chunks, then times
//! `Earshot::open_with` on it `EARSHOT_BENCH_RUNS` times (default 3), and once more phase by
//! phase: sled open, `Backend::load`, `Records::decode`, `rebuild_snapshot`.
//!
//! Run with `cargo bench -p earshot-benches --bench rebuild`; `EARSHOT_BENCH_ITEMS` sets the size.

use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_benches::{build_dir, items_from_env, median, Shape, NOW_MS, STORE};
use earshot_store::durable::rebuild_snapshot;
use earshot_store::kernel::sled_backend;
use earshot_store::{Backend, Config, Earshot, ManualClock, Records, SledBackend};

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // `cargo bench` passes `--bench`; a filter that excludes "rebuild" skips this binary.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "rebuild".contains(f.as_str())) {
        return;
    }
    let items = items_from_env(1_000_000);
    let runs: usize = std::env::var("EARSHOT_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let (syn, built) = build_dir(&Shape::with_items(items));
    let records = (syn.records.audiences.len(), syn.records.grants.len(), syn.records.contents.len());
    drop(syn);
    let size: u64 = walk_size(built.dir.path());
    println!(
        "rebuild: {items} items, {} audiences, {} grants, {} content records; generated in {:.2?}, imported in {:.2?}; sled dir {:.0} MiB",
        records.0,
        records.1,
        records.2,
        built.generate_time,
        built.import_time,
        size as f64 / (1 << 20) as f64
    );

    // Run 1 is the first open after the import: sled recovers its log then, which later opens
    // of the same directory do not repeat. Every run is reported; the median covers all runs.
    let mut times = Vec::with_capacity(runs);
    for run in 1..=runs {
        let t = Instant::now();
        let backend = Arc::new(SledBackend::open(built.dir.path()).expect("sled opens"));
        let sled_open = t.elapsed();
        let e =
            Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("store opens");
        let took = t.elapsed();
        let n = e.store(STORE).expect("store runs").latest().item_count();
        assert_eq!(n, items, "every item rebuilt");
        e.shutdown();
        drop(e);
        println!(
            "  run {run}: sled open {sled_open:.3?} + Earshot::open_with {:.3?} = {took:.3?}",
            took.saturating_sub(sled_open)
        );
        times.push(took);
    }
    let m = median(&times);
    println!(
        "rebuild/start_up median of {runs}: {m:.3?} ({:.2} µs per item; target 5 s: {})",
        m.as_secs_f64() * 1e6 / items as f64,
        if m <= Duration::from_secs(5) { "pass" } else { "MISS" }
    );

    // Phase breakdown of one more start-up (the same steps `open_with` takes).
    let t = Instant::now();
    let backend = Arc::new(SledBackend::open(built.dir.path()).expect("sled opens"));
    let t_open = t.elapsed();
    let t = Instant::now();
    let raw = backend.load(STORE).expect("load");
    let t_load = t.elapsed();
    let raw_bytes: usize = raw.iter().map(|(k, v)| k.len() + v.len()).sum();
    let t = Instant::now();
    let records = Records::decode(&raw).expect("decode");
    let t_decode = t.elapsed();
    // The index never reads content records; decoding them at start-up is avoidable work.
    let no_content: Vec<(Vec<u8>, Vec<u8>)> = raw.into_iter().filter(|(k, _)| !k.starts_with(b"c/")).collect();
    let t = Instant::now();
    drop(Records::decode(&no_content).expect("decode"));
    let t_decode_nc = t.elapsed();
    drop(no_content);
    let t = Instant::now();
    let snap = rebuild_snapshot(STORE, &records).expect("rebuild");
    let t_rebuild = t.elapsed();
    assert_eq!(snap.item_count(), items);
    // The item lines alone (part of the rebuild above, and what a large store rebuilds off the
    // writer each time its items fold): built again from the same snapshot, median of three.
    let mut t_lines: Vec<Duration> = (0..3)
        .map(|_| {
            let t = Instant::now();
            assert!(snap.build_item_lines_once());
            t.elapsed()
        })
        .collect();
    t_lines.sort_unstable();
    let t_lines = t_lines[1];
    let t = Instant::now();
    drop(snap);
    drop(records);
    let t_drop = t.elapsed();
    drop(backend);
    println!(
        "  phases: sled open {t_open:.3?}; Backend::load {t_load:.3?} ({:.0} MiB of keys+values); Records::decode \
         {t_decode:.3?} (without content records {t_decode_nc:.3?}); rebuild (checks + index) {t_rebuild:.3?}, of which the item \
         lines {t_lines:.3?} (built again alone, median of 3); freeing records+snapshot {t_drop:.3?}",
        raw_bytes as f64 / (1 << 20) as f64
    );

    // What a raw scan of the store's records costs in sled, beside `SledBackend::load` (which
    // copies them without the store's key prefix and skips the on-demand ones).
    let db = sled::Config::new().path(built.dir.path()).mode(sled::Mode::HighThroughput).open().expect("sled opens");
    let tree = db.open_tree(sled_backend::RECORDS_TREE).expect("tree");
    let prefix = sled_backend::store_prefix(STORE);
    let t = Instant::now();
    let mut copied = Vec::new();
    for kv in tree.scan_prefix(&prefix) {
        let (k, v) = kv.expect("read");
        copied.push((k.to_vec(), v.to_vec()));
    }
    let t_iter = t.elapsed();
    let t = Instant::now();
    let items_only = tree.scan_prefix([prefix.as_slice(), b"i/"].concat()).count();
    let t_items = t.elapsed();
    println!(
        "  sled scan: iterate + copy all {t_iter:.3?} ({} records); scan of the {items_only} item records only {t_items:.3?}",
        copied.len()
    );
}

fn walk_size(p: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else { return 0 };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => walk_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
