//! Export and import rates (no criterion: one pass over a million items takes seconds, so it
//! prints each phase's time and rate).
//!
//! Builds the synthetic store into a sled directory (as the `rebuild` bench does), exports it
//! to an NDJSON file with `earshot_store::export::Export` (records/s), imports that file into a
//! fresh sled directory with `earshot_store::export::import` (records/s: parse, decode, the
//! start-up's validation, and durable commits in chunks), then opens the copy and checks it.
//!
//! Run with `cargo bench -p earshot-benches --bench export`; `EARSHOT_BENCH_ITEMS` sets the size
//! (default 1,000,000), `EARSHOT_BENCH_DIR` where the directories and the file go.

use std::io::{BufReader, BufWriter};
use std::sync::Arc;
use std::time::Instant;

use earshot_benches::{build_dir, items_from_env, open_dir, Shape, NOW_MS, STORE};
use earshot_store::export::{import, Export};
use earshot_store::{Backend, SledBackend};

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "export".contains(f.as_str())) {
        return;
    }
    let items = items_from_env(1_000_000);
    let (syn, built) = build_dir(&Shape::with_items(items));
    drop(syn);
    println!("export: {items} items; synthetic store built in {:.2?}", built.import_time);
    let base = match std::env::var_os("EARSHOT_BENCH_DIR") {
        Some(b) => tempfile::Builder::new().prefix("earshot-export-").tempdir_in(b),
        None => tempfile::Builder::new().prefix("earshot-export-").tempdir(),
    }
    .expect("temporary directory");
    let file = base.path().join("store.ndjson");

    // Export: a cold sled open first, as `earshot export --data` does.
    let records = {
        let backend: Arc<dyn Backend> = Arc::new(SledBackend::open(built.dir.path()).expect("sled opens"));
        let out = std::fs::File::create(&file).expect("export file");
        let t = Instant::now();
        let n = Export::open(backend, STORE).expect("export opens").write_to(&mut BufWriter::new(out)).expect("export");
        let took = t.elapsed();
        let bytes = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        println!(
            "  export: {n} records, {:.0} MiB in {took:.2?}: {:.0} records/s",
            bytes as f64 / (1 << 20) as f64,
            n as f64 / took.as_secs_f64()
        );
        n
    };
    drop(built);

    // Import into a fresh sled directory, durable (each chunk flushed and synced).
    let copy = base.path().join("copy");
    {
        let backend = SledBackend::open(&copy).expect("sled opens");
        let input = std::fs::File::open(&file).expect("export file");
        let t = Instant::now();
        let (imported, _) =
            import(&backend, STORE, &mut BufReader::with_capacity(1 << 20, input), NOW_MS).expect("import");
        let took = t.elapsed();
        assert_eq!(imported.records, records);
        println!(
            "  import: {} records at revision {} in {took:.2?}: {:.0} records/s",
            imported.records,
            imported.revision,
            imported.records as f64 / took.as_secs_f64()
        );
    }
    let t = Instant::now();
    let e = open_dir(&copy).expect("the copy opens");
    let n = e.store(STORE).expect("store").latest().item_count();
    assert_eq!(n, items, "every item imported");
    println!("  the copy opens with {n} items in {:.2?}", t.elapsed());
    e.shutdown();
}
