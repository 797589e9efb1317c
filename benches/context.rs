//! Context assembly benchmarks over a synthetic store (default 100k items): authorize (the
//! exhaustive postings lookup for the container), then BM25 over the admissible candidates
//! only, fetch 20, k 5 — without and with sealing the context durably — and a per-call
//! percentile report with a different query on every call. Ranking runs with BM25 statistics of
//! the candidates (SPEC §6.1, what the service does) and, interleaved in the same run, with the
//! whole index's statistics (what it did before selection noninterference), so the cost of the
//! rule is a ratio measured under the same load.
//!
//! Run with `cargo bench -p earshot-benches --bench context`; set `EARSHOT_BENCH_ITEMS` for
//! another store size.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use earshot_benches::{fixture, items_from_env, quantile, Fixture, NOW_MS};
use earshot_store::model::ContextRequest;
use earshot_store::{ResolvedContainer, Statistics};

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn fx() -> &'static Fixture {
    let f = fixture(items_from_env(100_000));
    let t = Instant::now();
    f.store.search_ready(&f.store.latest(), Duration::from_secs(3600)).expect("the search index builds");
    eprintln!("search index ready in {:.1?}", t.elapsed());
    f
}

fn resolved(f: &Fixture, viewers: &[String]) -> ResolvedContainer {
    f.store.latest().resolve_container(&f.syn.probes.container(viewers)).expect("container resolves")
}

fn query(n: usize) -> String {
    format!("agreed next steps on topic {}", n % 977)
}

fn context(c: &mut Criterion) {
    let f = fx();
    let p = &f.syn.probes;
    let snap = f.store.latest();
    let owner = snap.participant_id(&p.owner).expect("owner");
    let mut g = c.benchmark_group("context");
    g.measurement_time(Duration::from_secs(5)).sample_size(50);
    for (name, viewers) in [("3v", p.viewers3.clone()), ("1v_owner_only", vec![p.owner.clone()])] {
        let rc = resolved(f, &viewers);
        for (suffix, stats) in [("", Statistics::Candidates), ("_whole_index_statistics", Statistics::WholeIndex)] {
            let mut n = 0usize;
            g.bench_function(format!("rank_{name}_fetch20{suffix}"), |b| {
                b.iter(|| {
                    n += 1;
                    let r = f
                        .store
                        .rank_admissible_with(&snap, &rc, &[owner], NOW_MS, &query(n), 20, stats)
                        .expect("ranks");
                    black_box(r.fetched.len())
                })
            });
        }
    }
    let container = p.container(&p.viewers3);
    let mut n = 0usize;
    g.bench_function("assemble_and_seal_3v_fetch20_k5", |b| {
        b.iter(|| {
            n += 1;
            let id = format!("bench-{n}");
            f.store.create_attempt(container.clone(), f.store.latest(), id.clone()).expect("attempt");
            let req = ContextRequest {
                query: query(n),
                fetch: Some(20),
                k: Some(5),
                owners: vec![],
                ..ContextRequest::default()
            };
            black_box(f.store.assemble_context(&id, &req).expect("context").items.len())
        })
    });
    g.finish();
}

/// Per-call latency of ranking for the 3-viewer container, one new query per call.
fn percentiles() {
    let f = fx();
    let p = &f.syn.probes;
    let snap = f.store.latest();
    let owner = snap.participant_id(&p.owner).expect("owner");
    let rc = resolved(f, &p.viewers3);
    let (admissible, _) = snap.lookup_raw(&rc, &[owner], None, usize::MAX, NOW_MS);
    // Both statistics, call by call alternately, so both see the same load.
    let (mut candidates, mut whole) = (Vec::with_capacity(2000), Vec::with_capacity(2000));
    for n in 0..2000 {
        for (stats, times) in [(Statistics::Candidates, &mut candidates), (Statistics::WholeIndex, &mut whole)] {
            let t = Instant::now();
            let r = f.store.rank_admissible_with(&snap, &rc, &[owner], NOW_MS, &query(n), 20, stats).expect("ranks");
            times.push(t.elapsed());
            black_box(r);
        }
    }
    for (label, times) in [("candidate statistics", &mut candidates), ("whole-index statistics", &mut whole)] {
        times.sort();
        eprintln!(
            "context/rank_3v_fetch20 per call, {label} ({} admissible candidates, {} items): p50 {:?}, p90 {:?}, p99 {:?}",
            admissible.len(),
            snap.item_count(),
            quantile(times, 0.5),
            quantile(times, 0.9),
            quantile(times, 0.99)
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    context(&mut c);
    percentiles();
    c.final_summary();
    earshot_benches::remove_fixture_dirs();
}
