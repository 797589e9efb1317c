//! Decision benchmarks over a synthetic store (default 1M items, 100k audiences): check, lookup
//! and acknowledged durable writes, followed by a per-write latency report (p50/p90/p99) for
//! one and several concurrent clients.
//!
//! Run with `cargo bench -p earshot-benches --bench decisions`; set `EARSHOT_BENCH_ITEMS` for a
//! smaller store.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use earshot_benches::{fixture, items_from_env, quantile, Fixture, XorShift, NOW_MS, STORE};
use earshot_core::Viewers;
use earshot_store::model::{Command, NewItem, OriginInput, ViewersInput};
use earshot_store::{ResolvedContainer, StoreHandle};

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn fx() -> &'static Fixture {
    fixture(items_from_env(1_000_000))
}

fn resolved(f: &Fixture, viewers: &[String]) -> ResolvedContainer {
    let rc = f.store.latest().resolve_container(&f.syn.probes.container(viewers)).expect("container resolves");
    assert!(matches!(&rc.viewers, Viewers::Resolved(v) if v.len() == viewers.len()), "probe viewers resolve");
    rc
}

fn check(c: &mut Criterion) {
    let f = fx();
    let p = &f.syn.probes;
    let snap = f.store.latest();
    let v1 = vec![p.owner.clone()];
    let cases: [(&str, &[String], &earshot_benches::ProbeItem, bool); 8] = [
        ("1v_admitted", &v1, &p.private_item, true),
        ("1v_denied", &v1, &p.foreign_item, false),
        ("3v_admitted_origin", &p.viewers3, &p.shared3_item, true),
        ("3v_admitted_grant", &p.viewers3, &p.granted3_item, true),
        ("3v_denied", &p.viewers3, &p.denied3_item, false),
        ("3v_admitted_public", &p.viewers3, &p.public_item, true),
        ("8v_admitted", &p.viewers8, &p.team8_item, true),
        ("8v_denied", &p.viewers8, &p.private_item, false),
    ];

    let mut g = c.benchmark_group("check/pre_resolved");
    for (name, viewers, item, expect) in cases {
        let rc = resolved(f, viewers);
        let d = snap.check_iid(item.seq, &rc.viewers, NOW_MS);
        assert_eq!(d.admitted, expect, "{name}: unexpected decision {d:?}");
        g.bench_function(name, |b| b.iter(|| snap.check_iid(black_box(item.seq), black_box(&rc.viewers), NOW_MS)));
    }
    // Uniformly random items across the whole store: cache misses in the item vector included.
    let rc3 = resolved(f, &p.viewers3);
    let n = snap.item_count();
    let mut rng = XorShift::new(7);
    let iids: Vec<u32> = (0..4096).map(|_| rng.below(n) as u32).collect();
    let mut k = 0usize;
    g.bench_function("3v_random_item", |b| {
        b.iter(|| {
            k = (k + 1) & 4095;
            snap.check_iid(black_box(iids[k]), &rc3.viewers, NOW_MS)
        })
    });
    g.finish();

    // The full request path minus HTTP: load the latest snapshot, resolve the container from
    // participant ids, look the item up by name and build the client-facing decision.
    let mut g = c.benchmark_group("check/with_resolution");
    for (name, viewers, item, expect) in [cases[0], cases[2], cases[6], cases[4]] {
        let container = p.container(viewers);
        let d = snap.check(&item.id, &snap.resolve_container(&container).expect("resolves"), NOW_MS).expect("check");
        assert_eq!(d.admitted, expect, "{name}: unexpected decision {d:?}");
        g.bench_function(name, |b| {
            b.iter(|| {
                let s = f.store.latest();
                let rc = s.resolve_container(black_box(&container)).expect("resolves");
                s.check(black_box(&item.id), &rc, NOW_MS).expect("check")
            })
        });
    }
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let f = fx();
    let p = &f.syn.probes;
    let snap = f.store.latest();
    let rc1 = resolved(f, std::slice::from_ref(&p.owner));
    let rc3 = resolved(f, &p.viewers3);
    let rc8 = resolved(f, &p.viewers8);

    let walk = |rc: &ResolvedContainer| -> (usize, usize) {
        let (mut total, mut pages, mut cursor) = (0usize, 0usize, None::<String>);
        loop {
            let page = snap.lookup(rc, &[], cursor.as_deref(), Some(1000), NOW_MS).expect("lookup");
            total += page.items.len();
            pages += 1;
            match page.cursor {
                Some(c) => cursor = Some(c),
                None => return (total, pages),
            }
        }
    };
    let public = earshot_core::AudienceDigest::compute::<&str>(earshot_core::AudienceKind::Public, &[]).to_hex();
    let (all_public, own_public) = f
        .syn
        .records
        .items
        .iter()
        .filter(|i| i.audience == public)
        .fold((0, 0), |(a, o), i| (a + 1, o + usize::from(i.owner == p.owner)));
    eprintln!(
        "lookup: the public posting holds {all_public} items of all owners, {own_public} of them the probe owner's"
    );
    for (name, rc) in [("1v (owner only)", &rc1), ("3v", &rc3), ("8v", &rc8)] {
        let first = snap.lookup(rc, &[], None, Some(100), NOW_MS).expect("lookup");
        let (total, pages) = walk(rc);
        eprintln!(
            "lookup {name}: first page {} items; exhaustive {total} items in {pages} pages of 1000",
            first.items.len()
        );
    }

    let mut g = c.benchmark_group("lookup");
    g.bench_function("1v_owner_only_first_page_100", |b| {
        b.iter(|| snap.lookup(black_box(&rc1), &[], None, Some(100), NOW_MS).expect("lookup"))
    });
    g.bench_function("3v_first_page_100", |b| {
        b.iter(|| snap.lookup(black_box(&rc3), &[], None, Some(100), NOW_MS).expect("lookup"))
    });
    g.bench_function("8v_first_page_100", |b| {
        b.iter(|| snap.lookup(black_box(&rc8), &[], None, Some(100), NOW_MS).expect("lookup"))
    });
    g.sample_size(10);
    g.bench_function("3v_exhaustive_pages_of_1000", |b| b.iter(|| walk(black_box(&rc3))));
    g.bench_function("1v_owner_only_exhaustive_pages_of_1000", |b| b.iter(|| walk(black_box(&rc1))));
    g.finish();
}

fn new_item(f: &Fixture) -> Command {
    let p = &f.syn.probes;
    Command::CreateItem(NewItem {
        subjects: Vec::new(),
        id: None,
        owner: p.owner.clone(),
        content: Some("A note written by the benchmark, about as long as a real one.".into()),
        attributes: None,
        origin: OriginInput::Viewers(ViewersInput { participants: p.viewers3.clone(), ..ViewersInput::default() }),
        author: None,
        embedding: None,
        embedding_metric: None,
    })
}

/// `clients` threads write `per_client` items each; returns the wall time and every latency.
fn concurrent_writes(
    store: &Arc<StoreHandle>,
    cmd: &Command,
    clients: usize,
    per_client: usize,
) -> (Duration, Vec<Duration>) {
    let start = Instant::now();
    let lat: Vec<Duration> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    let mut v = Vec::with_capacity(per_client);
                    for _ in 0..per_client {
                        let t = Instant::now();
                        store.write(cmd.clone()).expect("write is acknowledged");
                        v.push(t.elapsed());
                    }
                    v
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().expect("writer thread")).collect()
    });
    (start.elapsed(), lat)
}

fn durable_write(c: &mut Criterion) {
    let f = fx();
    let cmd = new_item(f);
    let store = &f.store;
    let mut g = c.benchmark_group("durable_write");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("single_client", |b| {
        b.iter_batched(|| cmd.clone(), |cmd| store.write(cmd).expect("write is acknowledged"), BatchSize::SmallInput)
    });
    // Amortised wall time per acknowledged write with several clients (inverse throughput).
    for clients in [4usize, 16] {
        g.bench_function(format!("amortised_{clients}_clients"), |b| {
            b.iter_custom(|iters| {
                let per = (iters as usize).div_ceil(clients);
                let (wall, lat) = concurrent_writes(store, &cmd, clients, per);
                wall.mul_f64(iters as f64 / lat.len() as f64)
            })
        });
    }
    g.finish();
}

/// Per-call check latency percentiles, timed call by call (each figure includes the ~20–30 ns
/// cost of reading the clock), over uniformly random items of the whole store.
fn check_latency_report() {
    const CALLS: usize = 200_000;
    let f = fx();
    let p = &f.syn.probes;
    let snap = f.store.latest();
    let n = snap.item_count();
    let mut rng = XorShift::new(11);
    // Every call decides a different, uniformly random item: the item's index entries are
    // mostly not in cache, as for a service answering checks about arbitrary items.
    let names: Vec<String> =
        (0..CALLS).map(|_| format!("i{:07}", rng.below(n.min(f.syn.records.items.len())))).collect();
    eprintln!("\ncheck latency per call ({CALLS} distinct random items of {n}; includes the clock read):");
    eprintln!("{:>40} {:>8} {:>10} {:>10} {:>10}", "variant", "calls", "p50", "p99", "p99.9");
    for (label, viewers) in [("1v", vec![p.owner.clone()]), ("3v", p.viewers3.clone()), ("8v", p.viewers8.clone())] {
        let container = p.container(&viewers);
        let rc = snap.resolve_container(&container).expect("resolves");
        let iids: Vec<u32> = (0..CALLS).map(|_| rng.below(n) as u32).collect();
        // Two separate loops, so neither path evicts the other's cache lines between calls.
        let mut pre = Vec::with_capacity(CALLS);
        for &iid in &iids {
            let t = Instant::now();
            black_box(snap.check_iid(black_box(iid), &rc.viewers, NOW_MS));
            pre.push(t.elapsed());
        }
        let mut full = Vec::with_capacity(CALLS);
        for name in &names {
            let t = Instant::now();
            let s = f.store.latest();
            let rc = s.resolve_container(black_box(&container)).expect("resolves");
            black_box(s.check(black_box(name), &rc, NOW_MS).expect("check"));
            full.push(t.elapsed());
        }
        for (variant, mut lat) in
            [(format!("{label} pre-resolved check_iid"), pre), (format!("{label} resolve + check by name"), full)]
        {
            lat.sort_unstable();
            let ns = |q: f64| format!("{} ns", quantile(&lat, q).as_nanos());
            eprintln!("{variant:>40} {:>8} {:>10} {:>10} {:>10}", lat.len(), ns(0.5), ns(0.99), ns(0.999));
        }
    }
}

/// Per-write latency percentiles (criterion reports means of batches, not percentiles).
fn write_latency_report() {
    let f = fx();
    let cmd = new_item(f);
    eprintln!(
        "\ndurable_write latency per acknowledged write ({STORE}, {} items at start):",
        f.store.latest().item_count()
    );
    eprintln!(
        "{:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "clients", "writes", "p50", "p90", "p99", "max", "writes/s"
    );
    for (clients, per) in [(1usize, 400usize), (4, 150), (16, 50)] {
        let (wall, mut lat) = concurrent_writes(&f.store, &cmd, clients, per);
        lat.sort_unstable();
        eprintln!(
            "{clients:>8} {:>8} {:>10.3?} {:>10.3?} {:>10.3?} {:>10.3?} {:>12.0}",
            lat.len(),
            quantile(&lat, 0.5),
            quantile(&lat, 0.9),
            quantile(&lat, 0.99),
            lat.last().copied().unwrap_or_default(),
            lat.len() as f64 / wall.as_secs_f64()
        );
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    // Criterion filters are regular expressions; a plain substring or `a|b` alternation is
    // matched here, which is all the percentile reports need to decide whether they were asked for.
    let wanted =
        |target: &str| filters.is_empty() || filters.iter().any(|f| f.split('|').any(|part| target.contains(part)));
    // The fixture build is reported once, before any measurement.
    let _ = fx();
    check(&mut c);
    // Before any write, so the store decided is exactly the generated one.
    if wanted("check/latency") {
        check_latency_report();
    }
    lookup(&mut c);
    durable_write(&mut c);
    c.final_summary();
    if wanted("durable_write/latency") {
        write_latency_report();
    }
    earshot_benches::remove_fixture_dirs();
}
