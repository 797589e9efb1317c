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
//!
//! For the largest size it then prices the snapshot's biggest structures one by one, built from
//! the same records the way `durable::rebuild` builds them, next to flat alternatives: the
//! item-name map (imbl HAMT vs std `HashMap`), the audience and owner postings (imbl map of
//! imbl vectors grown by clone-push-insert vs `Arc<[u32]>` slices), and the item vector.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_benches::{generate, import, MemBackend, Shape, NOW_MS, STORE};
use earshot_store::durable::rebuild_snapshot;
use earshot_store::{Config, Earshot, ManualClock, Records};
use rustc_hash::FxBuildHasher;

/// The map type the snapshot uses (`snapshot::Map`).
type ImMap<K, V> = imbl::GenericHashMap<K, V, FxBuildHasher, imbl::shared_ptr::DefaultSharedPtr>;

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
    let sizes_max = sizes.clone();
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
    if let Some(&n) = sizes_max.iter().max() {
        components(n);
    }
}

/// Bytes kept per item and build time of `f`'s result (which is dropped afterwards).
fn priced<T>(n: usize, f: impl FnOnce() -> T) -> (f64, Duration) {
    let before = live();
    let t = Instant::now();
    let v = f();
    let took = t.elapsed();
    let per = (live() - before) as f64 / n as f64;
    drop(v);
    (per, took)
}

/// Prices the largest snapshot structures, as rebuilt, against flat alternatives.
fn components(n: usize) {
    let syn = generate(&Shape::with_items(n));
    let r: &Records = &syn.records;
    let names: Vec<Arc<str>> = r.items.iter().map(|i| Arc::from(i.id.as_str())).collect();
    let mut aud_ix: HashMap<&str, u32> = HashMap::new();
    let mut owner_ix: HashMap<&str, u32> = HashMap::new();
    let pairs: Vec<(u32, u32)> = r
        .items
        .iter()
        .map(|i| {
            let a = aud_ix.len() as u32;
            let o = owner_ix.len() as u32;
            (*aud_ix.entry(i.audience.as_str()).or_insert(a), *owner_ix.entry(i.owner.as_str()).or_insert(o))
        })
        .collect();
    println!("memory/components/{n} (bytes kept per item, build time; names themselves excluded):");
    let line = |what: &str, (per, took): (f64, Duration)| println!("  {what:<62} {per:>7.1} B/item {took:>10.2?}");
    line(
        "item names -> iid: imbl HashMap<Arc<str>, u32> (snapshot.iids)",
        priced(n, || {
            let mut m: ImMap<Arc<str>, u32> = ImMap::default();
            for (i, name) in names.iter().enumerate() {
                m.insert(name.clone(), i as u32);
            }
            m
        }),
    );
    line(
        "item names -> iid: std HashMap<Arc<str>, u32>",
        priced(n, || {
            let mut m: HashMap<Arc<str>, u32, FxBuildHasher> = HashMap::with_capacity_and_hasher(n, FxBuildHasher);
            for (i, name) in names.iter().enumerate() {
                m.insert(name.clone(), i as u32);
            }
            m
        }),
    );
    line(
        "postings: imbl map of imbl Vector, clone + push_back + insert",
        priced(n, || {
            let mut by_aud: ImMap<u32, imbl::Vector<u32>> = ImMap::default();
            let mut by_owner: ImMap<u32, imbl::Vector<u32>> = ImMap::default();
            for (i, &(a, o)) in pairs.iter().enumerate() {
                let mut p = by_aud.get(&a).cloned().unwrap_or_default();
                p.push_back(i as u32);
                by_aud.insert(a, p);
                let mut p = by_owner.get(&o).cloned().unwrap_or_default();
                p.push_back(i as u32);
                by_owner.insert(o, p);
            }
            (by_aud, by_owner)
        }),
    );
    line(
        "postings: same maps, entry().or_default().push_back()",
        priced(n, || {
            let mut by_aud: ImMap<u32, imbl::Vector<u32>> = ImMap::default();
            let mut by_owner: ImMap<u32, imbl::Vector<u32>> = ImMap::default();
            for (i, &(a, o)) in pairs.iter().enumerate() {
                by_aud.entry(a).or_default().push_back(i as u32);
                by_owner.entry(o).or_default().push_back(i as u32);
            }
            (by_aud, by_owner)
        }),
    );
    line(
        "postings: Vec<Arc<[u32]>> per audience and per owner",
        priced(n, || {
            let mut by_aud: Vec<Vec<u32>> = vec![Vec::new(); aud_ix.len()];
            let mut by_owner: Vec<Vec<u32>> = vec![Vec::new(); owner_ix.len()];
            for (i, &(a, o)) in pairs.iter().enumerate() {
                by_aud[a as usize].push(i as u32);
                by_owner[o as usize].push(i as u32);
            }
            let flat = |v: Vec<Vec<u32>>| v.into_iter().map(Arc::<[u32]>::from).collect::<Vec<_>>();
            (flat(by_aud), flat(by_owner))
        }),
    );
    line(
        "items: imbl Vector of a 96-byte record (ItemRec's size)",
        priced(n, || {
            let mut v: imbl::Vector<[u64; 12]> = imbl::Vector::new();
            for i in 0..n {
                v.push_back([i as u64; 12]);
            }
            v
        }),
    );
    line(
        "item names: one Arc<str> each, plus its 16-byte pointer in a Vec",
        priced(n, || r.items.iter().map(|i| Arc::<str>::from(i.id.as_str())).collect::<Vec<_>>()),
    );
}
