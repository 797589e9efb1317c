//! Per-store footprint benchmark (no criterion): live heap bytes one more store costs, empty
//! and holding 10 small items, measured by varying the store count (issue 33: at most 16 KB
//! per loaded empty store, 32 KB per store with 10 small items).
//!
//! For each store count N (`EARSHOT_BENCH_FOOTPRINT_STORES`, comma-separated, default 2000):
//! open an instance over an in-memory backend, create N stores (so that every structure shared
//! by the stores, and every table of the instance, has grown to hold N), count live bytes,
//! create N more, count again: bytes per store = the difference / N. The same for stores
//! holding one participant and 10 items with short content, each store read once (a check of
//! every item) before counting, so that what a first read builds is counted too.
//!
//! Two ways to a store: `written` (created and written by this instance, so its writer still
//! retains every past revision: the clock stands still, none leaves the retention window) and
//! `loaded` (the same stores started by a new instance from the backend: one revision each,
//! as after a restart or a first use). For `loaded`, the instance is opened over N stores and
//! over 2N, and the difference of what each open keeps is divided by N.
//!
//! The records the in-memory backend holds are storage, not the store's footprint (with sled
//! or PostgreSQL they are not in this process's heap): allocations made inside the backend's
//! calls are counted apart (see `Apart`), and shown in their own column. Thread stacks are
//! not heap and never reach a global allocator. `EARSHOT_BENCH_FOOTPRINT_ONLY=empty` (or
//! `items`) measures one kind alone, for a heap profiler's view of it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use earshot_benches::{MemBackend, NOW_MS};
use earshot_store::model::{
    Command, ContainerInput, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind, ViewersInput,
};
use earshot_store::{Backend, Config, Earshot, Head, ManualClock, Op};

/// Counts live heap bytes on top of the system allocator, in two accounts: the backend's
/// (allocations made while a thread is inside the backend, see `Apart`) and everyone else's.
struct Counting;

/// Live bytes outside the backend. Signed: the two accounts only balance per account when
/// every block is freed in the account that allocated it, which `Apart` arranges.
static LIVE: AtomicIsize = AtomicIsize::new(0);
/// Live bytes the backend holds.
static BACKEND: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// This thread is inside a backend call: its allocations are the backend's. A const
    /// initializer, so reading it never allocates (it runs inside the allocator).
    static IN_BACKEND: Cell<bool> = const { Cell::new(false) };
}

fn account() -> &'static AtomicIsize {
    if IN_BACKEND.try_with(Cell::get).unwrap_or(false) {
        &BACKEND
    } else {
        &LIVE
    }
}

fn grew(n: usize) {
    account().fetch_add(n as isize, Ordering::Relaxed);
}

fn shrank(n: usize) {
    account().fetch_sub(n as isize, Ordering::Relaxed);
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
        shrank(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

fn backend_live() -> isize {
    BACKEND.load(Ordering::Relaxed)
}

/// Runs `f` with its allocations and frees counted as the backend's.
fn in_backend<T>(f: impl FnOnce() -> T) -> T {
    IN_BACKEND.with(|b| b.set(true));
    let v = f();
    IN_BACKEND.with(|b| b.set(false));
    v
}

/// The in-memory backend, with what it keeps counted apart from the store's footprint. Blocks
/// never cross accounts: what the store hands in is copied inside and dropped outside, what the
/// backend answers is copied outside and dropped inside.
struct Apart(MemBackend);

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

fn out<T: Clone>(r: earshot_store::kernel::Result<T>) -> earshot_store::kernel::Result<T> {
    let copy = r.clone();
    in_backend(|| drop(r));
    copy
}

fn copy_ops(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::Put(k, v) => Op::Put(k.clone(), v.clone()),
            Op::Del(k) => Op::Del(k.clone()),
        })
        .collect()
}

impl Backend for Apart {
    fn stores(&self) -> earshot_store::kernel::Result<Vec<String>> {
        out(in_backend(|| self.0.stores()))
    }
    fn load(&self, store: &str) -> earshot_store::kernel::Result<Rows> {
        out(in_backend(|| self.0.load(store)))
    }
    fn commit(&self, store: &str, ops: Vec<Op>) -> earshot_store::kernel::Result<()> {
        let inside = in_backend(|| copy_ops(&ops));
        drop(ops);
        in_backend(|| self.0.commit(store, inside))
    }
    fn get(&self, store: &str, key: &[u8]) -> earshot_store::kernel::Result<Option<Vec<u8>>> {
        out(in_backend(|| self.0.get(store, key)))
    }
    fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> earshot_store::kernel::Result<Rows> {
        out(in_backend(|| self.0.scan(store, from, to, limit)))
    }
    fn head(&self, store: &str) -> earshot_store::kernel::Result<Option<Head>> {
        out(in_backend(|| self.0.head(store)))
    }
    fn drop_store(&self, store: &str) -> earshot_store::kernel::Result<()> {
        in_backend(|| self.0.drop_store(store))
    }
}

/// Items per "small" store.
const ITEMS: usize = 10;
const OWNER: &str = "p0";

/// Creates stores `from..to`, each empty or with one owner and `ITEMS` items read once.
fn populate(e: &Earshot, from: usize, to: usize, items: bool) {
    for s in from..to {
        let id = format!("s{s:06}");
        e.create_store(&id, None).expect("store is created");
        if !items {
            continue;
        }
        let h = e.store(&id).expect("store runs");
        h.write(Command::CreateParticipant(NewParticipant {
            id: OWNER.into(),
            kind: ParticipantKind::Agent,
            name: None,
        }))
        .expect("participant is written");
        for i in 0..ITEMS {
            h.write(Command::CreateItem(NewItem {
                id: Some(format!("i{i}")),
                owner: OWNER.into(),
                content: Some(format!("note {i}: a short line the owner wrote down")),
                attributes: None,
                origin: OriginInput::Keyword(OriginKeyword::OwnerPrivate),
                subjects: Vec::new(),
                author: None,
                embedding: None,
                embedding_metric: None,
            }))
            .expect("item is written");
        }
    }
    if items {
        read_all(e, from, to);
    }
}

/// One check of every item of stores `from..to`, so that what a first read builds is counted.
fn read_all(e: &Earshot, from: usize, to: usize) {
    let container = ContainerInput {
        owner: OWNER.into(),
        viewers: ViewersInput { participants: vec![OWNER.into()], ..ViewersInput::default() },
    };
    for s in from..to {
        let snap = e.store(&format!("s{s:06}")).expect("store runs").latest();
        let rc = snap.resolve_container(&container).expect("container resolves");
        for i in 0..ITEMS {
            let d = snap.check(&format!("i{i}"), &rc, NOW_MS).expect("check");
            assert!(d.admitted, "the owner is admitted to its own private item");
        }
    }
}

fn open(backend: &Arc<Apart>) -> Earshot {
    Earshot::open_with(backend.clone(), Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("opens")
}

/// Stores as written: bytes per store (outside the backend) and the backend's bytes per store.
/// Every revision a store has written is still retained by its writer (the clock stands
/// still, so none leaves the retention window).
fn written(n: usize, items: bool) -> (f64, f64) {
    let backend = Arc::new(Apart(MemBackend::default()));
    let e = open(&backend);
    populate(&e, 0, n, items);
    let (l0, b0) = (live(), backend_live());
    populate(&e, n, 2 * n, items);
    let (l1, b1) = (live(), backend_live());
    e.shutdown();
    drop(e);
    ((l1 - l0) as f64 / n as f64, (b1 - b0) as f64 / n as f64)
}

/// Stores as loaded: bytes per store of an instance started over a backend holding the stores
/// (each rebuilt from its records, with no past revision), and read once.
fn loaded(n: usize, items: bool) -> f64 {
    let backend = Arc::new(Apart(MemBackend::default()));
    let kept = |stores: usize| {
        let before = live();
        let e = open(&backend);
        if items {
            read_all(&e, 0, stores);
        }
        let kept = live() - before;
        e.shutdown();
        kept
    };
    let e = open(&backend);
    populate(&e, 0, n, items);
    drop(e);
    let one = kept(n);
    let e = open(&backend);
    populate(&e, n, 2 * n, items);
    drop(e);
    let two = kept(2 * n);
    (two - one) as f64 / n as f64
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "footprint".contains(f.as_str())) {
        return;
    }
    let counts: Vec<usize> = std::env::var("EARSHOT_BENCH_FOOTPRINT_STORES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().replace('_', "").parse().ok()).filter(|&n| n > 0).collect())
        .unwrap_or_else(|| vec![2000]);
    println!(
        "footprint: live heap bytes per store (delta from N to 2N stores / N); targets: empty {} B, {ITEMS} items {} B",
        EMPTY_TARGET, SMALL_TARGET
    );
    println!("written: created and written here, every revision retained; loaded: started from the backend");
    println!(
        "{:>8} {:>19} {:>19} {:>19} {:>19} {:>16} {:>17}  {:>8}",
        "stores",
        "B/empty, written",
        "B/10-item, written",
        "B/empty, loaded",
        "B/10-item, loaded",
        "backend B/empty",
        "backend B/10-item",
        "took"
    );
    // For profiling one kind alone (under heaptrack, say): `empty` or `items`.
    let only = std::env::var("EARSHOT_BENCH_FOOTPRINT_ONLY").unwrap_or_default();
    for n in counts {
        let t = Instant::now();
        let (empty, empty_backend) = if only == "items" { (f64::NAN, f64::NAN) } else { written(n, false) };
        let (small, small_backend) = if only == "empty" { (f64::NAN, f64::NAN) } else { written(n, true) };
        let empty_loaded = if only == "items" { f64::NAN } else { loaded(n, false) };
        let small_loaded = if only == "empty" { f64::NAN } else { loaded(n, true) };
        let verdict = |b: f64, target: usize| if b <= target as f64 { "pass" } else { "MISS" };
        println!(
            "{n:>8} {empty:>14.0} {:>4} {small:>14.0} {:>4} {empty_loaded:>14.0} {:>4} {small_loaded:>14.0} {:>4} \
             {empty_backend:>16.0} {small_backend:>17.0}  {:>8.1?}",
            verdict(empty, EMPTY_TARGET),
            verdict(small, SMALL_TARGET),
            verdict(empty_loaded, EMPTY_TARGET),
            verdict(small_loaded, SMALL_TARGET),
            t.elapsed()
        );
    }
}

/// Issue 33's budgets, in bytes.
const EMPTY_TARGET: usize = 16 * 1024;
const SMALL_TARGET: usize = 32 * 1024;
