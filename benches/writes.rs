//! Acknowledged single-item writes as a store grows (issue 34): one client creates items one at
//! a time on the audience-heavy mix (`items / 20` participants, four audiences each as owner,
//! so `items / 5` audiences; each item's origin is one of them, named by its members), waiting
//! for each acknowledgement, and the latency of the last [`WINDOW`] writes before each
//! checkpoint (1k, 10k, 100k, … up to the largest size) is reported, with its ratio to the
//! first checkpoint's. The store grows from empty to the largest size by these writes alone.
//!
//! Run with `cargo bench -p earshot-benches --bench writes`. `EARSHOT_WRITES_SIZES` sets the
//! checkpoints (comma-separated, default `1000,10000,100000,1000000`); `EARSHOT_WRITES_BACKEND`
//! is `sled` (default: durable, in a fresh directory; every write is flushed and synced) or
//! `memory` (the same writer with no disk, for the CPU cost alone), and
//! `EARSHOT_WRITES_SLED_CACHE_MB` sled's page cache (the service's default, 128); `EARSHOT_WRITES_CLIENTS`
//! the number of clients writing at once (default 1; their writes are committed in groups).

use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_benches::{import, quantile, MemBackend, XorShift, NOW_MS, STORE, T0_MS};
use earshot_store::durable::{MetaRecord, ParticipantRecord};

use earshot_store::kernel::sled_backend;
use earshot_store::model::{Command, NewItem, OriginInput, ParticipantKind, ViewersInput};
use earshot_store::{Backend, Config, Earshot, ManualClock, Records, SledBackend};

/// The service's allocator (`crates/earshot/src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Writes timed before each checkpoint.
const WINDOW: usize = 1_000;
/// Audiences each participant owns (the audience-heavy mix: `items / 5` audiences).
const AUDS_PER_OWNER: usize = 4;

fn main() {
    let sizes: Vec<usize> = std::env::var("EARSHOT_WRITES_SIZES")
        .unwrap_or_else(|_| "1000,10000,100000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("EARSHOT_WRITES_SIZES: comma-separated item counts"))
        .collect();
    let largest = sizes.iter().copied().max().unwrap_or(1000);
    let kind = std::env::var("EARSHOT_WRITES_BACKEND").unwrap_or_else(|_| "sled".into());
    let dir = tempfile::Builder::new().prefix("earshot-writes-").tempdir().expect("temporary directory");
    let backend: Arc<dyn Backend> = match kind.as_str() {
        "sled" => {
            // The service's default page cache unless `EARSHOT_WRITES_SLED_CACHE_MB` says otherwise
            // (`--sled-cache-mb`).
            let cache = std::env::var("EARSHOT_WRITES_SLED_CACHE_MB")
                .ok()
                .and_then(|m| m.parse::<u64>().ok())
                .map_or(sled_backend::DEFAULT_CACHE_BYTES, |m| m << 20);
            Arc::new(
                SledBackend::open_with(dir.path(), sled_backend::DEFAULT_MIN_FREE_BYTES, cache).expect("sled opens"),
            )
        }
        "memory" => Arc::new(MemBackend::default()),
        other => panic!("EARSHOT_WRITES_BACKEND must be `sled` or `memory`, not {other:?}"),
    };
    // The mix at the largest size: its participants exist from the start (as records), the
    // audiences come into being with the first item naming them.
    let participants = (largest / 20).max(10);
    let mut rng = XorShift::new(34);
    let audiences: Vec<Vec<String>> = (0..participants * AUDS_PER_OWNER)
        .map(|a| {
            let owner = a / AUDS_PER_OWNER;
            let mut m = vec![owner];
            // The owner and up to four others; distinct audiences of one owner, almost surely.
            let size = 1 + rng.below(5);
            while m.len() < size {
                let p = rng.below(participants);
                if !m.contains(&p) {
                    m.push(p);
                }
            }
            m.sort_unstable();
            m.into_iter().map(|p| format!("u{p:07}")).collect()
        })
        .collect();
    let records = Records {
        meta: Some(MetaRecord {
            id: STORE.into(),
            name: Some("writes".into()),
            revision: 1,
            created_at_ms: T0_MS,
            committed_at_ms: None,
            incarnation: None,
        }),
        participants: (0..participants)
            .map(|p| ParticipantRecord { id: format!("u{p:07}"), kind: ParticipantKind::Person, name: None })
            .collect(),
        ..Records::default()
    };
    import(&*backend, &records).expect("participants import");
    let earshot = Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("opens");
    let store = earshot.store(STORE).expect("the store runs");
    eprintln!(
        "writes: {kind}, {participants} participants, {} audiences, growing to {largest} items by single writes",
        audiences.len()
    );
    let clients: usize = std::env::var("EARSHOT_WRITES_CLIENTS").ok().and_then(|c| c.parse().ok()).unwrap_or(1);
    // Each client takes the next item number and writes it; the audience of item `n` is drawn
    // from a generator of its own, so the store is the same whatever the clients' interleaving.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let syncs_before = sled_backend::log_syncs();
    let started = Instant::now();
    let done: Vec<(usize, Duration, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                let (store, next, audiences) = (&store, &next, &audiences);
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if n >= largest {
                            return done;
                        }
                        let members = &audiences[XorShift::new(n as u64 + 1).below(audiences.len())];
                        let create = NewItem {
                            id: Some(format!("i{n:08}")),
                            owner: members[0].clone(),
                            content: None,
                            attributes: None,
                            origin: OriginInput::Viewers(ViewersInput {
                                participants: members.clone(),
                                ..ViewersInput::default()
                            }),
                            subjects: Vec::new(),
                            author: None,
                            embedding: None,
                            embedding_metric: None,
                        };
                        let t = Instant::now();
                        store.write(Command::CreateItem(create)).expect("the write is applied");
                        done.push((n, t.elapsed(), started.elapsed()));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a writing client")).collect()
    });
    let mut first_p50: Option<Duration> = None;
    for &size in &sizes {
        // The writes of items `size - WINDOW..size` (by number, so by when they were taken).
        let window: Vec<&(usize, Duration, Duration)> =
            done.iter().filter(|(n, _, _)| *n < size && *n + WINDOW >= size).collect();
        let mut latency: Vec<Duration> = window.iter().map(|w| w.1).collect();
        latency.sort_unstable();
        let (from, to) = window
            .iter()
            .fold((Duration::MAX, Duration::ZERO), |(a, b), w| (a.min(w.2.saturating_sub(w.1)), b.max(w.2)));
        let p50 = quantile(&latency, 0.5);
        let base = *first_p50.get_or_insert(p50);
        eprintln!(
            "writes/{kind}/{clients}_clients/at_{size}: last {} writes p50 {:?}, p99 {:?}, max {:?}, {:.0} writes/s; p50 {:.2}× the first checkpoint's; at {:.1?}",
            latency.len(),
            p50,
            quantile(&latency, 0.99),
            latency.last().copied().unwrap_or_default(),
            latency.len() as f64 / to.saturating_sub(from).as_secs_f64().max(1e-9),
            p50.as_secs_f64() / base.as_secs_f64().max(1e-12),
            to
        );
    }
    let syncs = sled_backend::log_syncs() - syncs_before;
    eprintln!(
        "writes/{kind}/{clients}_clients: {largest} items in {:.1?}; {syncs} syncs of sled's log, {:.1} writes per sync",
        started.elapsed(),
        largest as f64 / syncs.max(1) as f64
    );
    earshot.shutdown();
}
