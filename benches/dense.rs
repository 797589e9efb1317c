//! Dense recall benchmarks: exact scoring of 100,000 admissible candidates × 384 dimensions
//! with the top 10 taken (the dense projection alone, `earshot_store::dense::DenseIndex`: the
//! int8 scan that the service runs, beside the exact f32 scan of every row and a one-accumulator
//! dot product as the baselines), then a large store
//! (default 1,000,000 items, a share of them with an embedding) ranked for the 3-viewer
//! container by the service's path (`rank_admissible_by`: the exhaustive lookup, then `dense` or
//! `hybrid` over the admissible candidates), with per-call percentiles and the projection's
//! memory.
//!
//! Run with `cargo bench -p earshot-benches --bench dense`; set `EARSHOT_BENCH_ITEMS` for another
//! store size and `EARSHOT_BENCH_EMBEDDED` for another share of items with an embedding (0.1).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use earshot_benches::{
    build_dir, items_from_env, open_dir, quantile, random_unit_vector, Shape, XorShift, NOW_MS, STORE,
};
use earshot_store::dense::{dot, DenseIndex};
use earshot_store::{Iid, Query};

/// The service's allocator (`crates/earshot/src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DIMENSION: usize = 384;
const CANDIDATES: usize = 100_000;
const TOP: usize = 10;

/// The first `TOP` of scored candidates, score descending, ties by item: a linear selection of
/// the threshold, then a sort of what reaches it (what the service's `order` does, with the item
/// id standing in for the name).
fn top(mut scored: Vec<(Iid, f32)>) -> Vec<(Iid, f32)> {
    if scored.len() > TOP {
        let mut scores: Vec<f32> = scored.iter().map(|(_, s)| *s).collect();
        let (_, nth, _) = scores.select_nth_unstable_by(TOP - 1, |a, b| b.total_cmp(a));
        let threshold = *nth;
        scored.retain(|(_, s)| s.total_cmp(&threshold) != std::cmp::Ordering::Less);
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(TOP);
    scored
}

fn naive_dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn arena(c: &mut Criterion) {
    let mut r = XorShift::new(384);
    let rows: Vec<Option<Vec<f32>>> = (0..CANDIDATES).map(|_| Some(random_unit_vector(&mut r, DIMENSION))).collect();
    let flat: Vec<f32> = rows.iter().flatten().flatten().copied().collect();
    let index = DenseIndex::standalone(rows).expect("the projection builds");
    eprintln!(
        "dense projection: {CANDIDATES} embeddings × {DIMENSION} f32 in {} bytes ({} per embedding)",
        index.bytes(),
        index.bytes() / CANDIDATES
    );
    let candidates: Vec<Iid> = (0..CANDIDATES as Iid).collect();
    let queries: Vec<Vec<f32>> = (0..64).map(|_| random_unit_vector(&mut r, DIMENSION)).collect();
    let mut g = c.benchmark_group("dense");
    g.measurement_time(Duration::from_secs(5)).sample_size(50);
    let mut n = 0usize;
    g.bench_function("score_100k_x384_top10", |b| {
        b.iter(|| {
            n += 1;
            black_box(top(index.score_top(&queries[n % queries.len()], &candidates, TOP)))
        })
    });
    let mut n = 0usize;
    g.bench_function("score_100k_x384_top10_exact_f32", |b| {
        b.iter(|| {
            n += 1;
            black_box(top(index.score(&queries[n % queries.len()], &candidates)))
        })
    });
    let mut n = 0usize;
    g.bench_function("score_100k_x384_top10_one_accumulator", |b| {
        b.iter(|| {
            n += 1;
            let q = &queries[n % queries.len()];
            let scored =
                flat.chunks_exact(DIMENSION).enumerate().map(|(i, row)| (i as Iid, naive_dot(q, row))).collect();
            black_box(top(scored))
        })
    });
    g.finish();
    // The int8 scan must return the exact scan's window; and how many rows it rescored.
    let mut rescored = 0usize;
    for q in &queries {
        let scanned = index.score_top(q, &candidates, TOP);
        rescored += scanned.len();
        assert_eq!(top(scanned), top(index.score(q, &candidates)), "the int8 scan keeps the exact window");
    }
    eprintln!("dense/score_100k_x384_top10: {} rows rescored in f32 per query (mean)", rescored / queries.len());
    for (name, exact) in [("score_100k_x384_top10", false), ("score_100k_x384_top10_exact_f32", true)] {
        let mut times = Vec::with_capacity(500);
        for n in 0..500 {
            let q = &queries[n % queries.len()];
            let t = Instant::now();
            if exact {
                black_box(top(index.score(q, &candidates)));
            } else {
                black_box(top(index.score_top(q, &candidates, TOP)));
            }
            times.push(t.elapsed());
        }
        times.sort();
        eprintln!(
            "dense/{name} per call: p50 {:?}, p90 {:?}, p99 {:?}",
            quantile(&times, 0.5),
            quantile(&times, 0.9),
            quantile(&times, 0.99)
        );
    }
    black_box(dot(&queries[0], &queries[1]));
}

/// The service's path over a large store: lookup, then `dense` or `hybrid` over the admissible
/// candidates of the 3-viewer container, fetch 10.
fn store() {
    let items = items_from_env(1_000_000);
    let share = std::env::var("EARSHOT_BENCH_EMBEDDED").ok().and_then(|s| s.parse().ok()).unwrap_or(0.1);
    let shape = Shape { embeddings: Some((share, DIMENSION)), ..Shape::with_items(items) };
    let (syn, built) = build_dir(&shape);
    let embedded = syn.records.contents.values().filter(|c| c.embedding.is_some()).count();
    eprintln!(
        "dense store: {items} items, {embedded} with a {DIMENSION}-dimension embedding; generated in {:.1?}, imported in {:.1?}",
        built.generate_time, built.import_time
    );
    let earshot = open_dir(built.dir.path()).expect("the store opens");
    let h = earshot.store(STORE).expect("the store runs");
    let snap = h.latest();
    let t = Instant::now();
    h.dense_ready(&snap).expect("the dense projection builds");
    eprintln!("dense projection ready in {:.1?}: {} bytes", t.elapsed(), h.dense_bytes());
    let t = Instant::now();
    h.search_ready(&snap, Duration::from_secs(3600)).expect("the search index builds");
    eprintln!("search index ready in {:.1?}", t.elapsed());
    let p = &syn.probes;
    let owner = snap.participant_id(&p.owner).expect("owner");
    let rc = snap.resolve_container(&p.container(&p.viewers3)).expect("container resolves");
    let (admissible, _) = snap.lookup_raw(&rc, &[owner], None, usize::MAX, NOW_MS);
    let mut r = XorShift::new(7);
    let queries: Vec<Vec<f32>> = (0..64).map(|_| random_unit_vector(&mut r, DIMENSION)).collect();
    for by in ["dense", "hybrid"] {
        let mut times = Vec::with_capacity(500);
        for n in 0..500 {
            let e = &queries[n % queries.len()];
            let text = format!("agreed next steps on topic {}", n % 977);
            let q = if by == "dense" { Query::dense(e) } else { Query::hybrid(&text, e) };
            let t = Instant::now();
            let ranked = h.rank_admissible_by(&snap, &rc, &[owner], NOW_MS, q, TOP).expect("ranks");
            times.push(t.elapsed());
            black_box(ranked);
        }
        times.sort();
        eprintln!(
            "dense/rank_3v_{by}_top10 per call ({} admissible candidates, {items} items): p50 {:?}, p90 {:?}, p99 {:?}",
            admissible.len(),
            quantile(&times, 0.5),
            quantile(&times, 0.9),
            quantile(&times, 0.99)
        );
    }
    earshot.shutdown();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    arena(&mut c);
    store();
    c.final_summary();
}
