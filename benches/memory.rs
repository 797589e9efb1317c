//! Index memory benchmark (no criterion): a counting global allocator measures the bytes a
//! rebuilt store keeps allocated per item, for 100k and 1M items by default.
//!
//! Two measurements per size:
//! - `snapshot`: live bytes after `rebuild_snapshot(records)` minus live bytes before it (the
//!   projection readers use: interned ids, item/audience/grant vectors, postings);
//! - `open_with`: live bytes after `Earshot::open_with` over an in-memory backend minus before it
//!   (snapshot plus the writer's provenance graph, threads and bookkeeping), and the peak of
//!   transient allocation during the start-up (decoded records live next to the new index).
//!
//! The in-memory backend keeps the raw records outside the measured delta, so neither sled's
//! page cache nor the records themselves are counted. Sizes: `EARSHOT_BENCH_MEMORY_SIZES`
//! (comma-separated item counts, default `100000,1000000`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use earshot_benches::{generate, import, MemBackend, Shape, NOW_MS, STORE};
use earshot_store::durable::rebuild_snapshot;
use earshot_store::{Config, Earshot, ManualClock};

/// Counts live heap bytes and their high-water mark on top of the system allocator.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to `System`; only counters are updated around it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

fn reset_peak() -> usize {
    let l = live();
    PEAK.store(l, Ordering::Relaxed);
    l
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "memory".contains(f.as_str())) {
        return;
    }
    let sizes: Vec<usize> = std::env::var("EARSHOT_BENCH_MEMORY_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().replace('_', "").parse().ok()).collect())
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    println!("memory: live heap bytes kept per item (counting allocator); target 300 B/item");
    for n in sizes {
        let syn = generate(&Shape::with_items(n));

        // The snapshot alone, rebuilt from records already in memory.
        let before = reset_peak();
        let t = Instant::now();
        let snap = rebuild_snapshot(STORE, &syn.records).expect("records rebuild");
        let took = t.elapsed();
        let kept = live() - before;
        let peak = PEAK.load(Ordering::Relaxed) - before;
        assert_eq!(snap.item_count(), n);
        println!(
            "memory/snapshot/{n}: {:.1} B/item ({:.1} MiB kept; peak during rebuild {:.1} MiB; rebuild {:.2?}) — {}",
            kept as f64 / n as f64,
            mib(kept),
            mib(peak),
            took,
            if kept as f64 / n as f64 <= 300.0 { "pass" } else { "MISS" }
        );
        drop(snap);

        // The whole start-up over an in-memory backend holding the encoded records.
        let backend = Arc::new(MemBackend::default());
        import(backend.as_ref(), &syn.records).expect("import");
        let raw = backend.bytes();
        drop(syn);
        let rss_before = rss_kib();
        let before = reset_peak();
        let t = Instant::now();
        let e = Earshot::open_with(backend.clone(), Arc::new(ManualClock::new(NOW_MS)), Config::default())
            .expect("store opens");
        let took = t.elapsed();
        let kept = live() - before;
        let peak = PEAK.load(Ordering::Relaxed) - before;
        let rss_after = rss_kib();
        println!(
            "memory/open_with/{n}: {:.1} B/item ({:.1} MiB kept; peak during start-up {:.1} MiB = {:.0} B/item; \
             records in backend {:.1} MiB; RSS +{:.1} MiB; open_with {:.2?}) — {}",
            kept as f64 / n as f64,
            mib(kept),
            mib(peak),
            peak as f64 / n as f64,
            mib(raw),
            (rss_after.saturating_sub(rss_before)) as f64 / 1024.0,
            took,
            if kept as f64 / n as f64 <= 300.0 { "pass" } else { "MISS" }
        );
        e.shutdown();
        drop(e);
    }
}
