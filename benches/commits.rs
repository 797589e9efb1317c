//! Durable writes across stores on sled (no criterion: this is throughput under concurrency).
//!
//! For each configuration `<threads>x<stores>` (`EARSHOT_BENCH_COMMITS`, comma-separated,
//! default `1x1,4x4,16x1,16x16,16x64`): one instance over sled in a fresh directory on disk,
//! `stores` stores of one participant, and `threads` client threads, thread `t` writing to store
//! `t mod stores`, each writing one small item at a time and waiting for its acknowledgement
//! (durable: sled flushed and its log `fdatasync`ed) for `EARSHOT_BENCH_COMMITS_SECONDS` (default
//! 5). Prints acknowledged writes per second, the p50 and p99 of one write, and how many
//! syncs of sled's log those writes took (writes per sync: how many commits, of one store's
//! group or of several stores, one sync made durable).
//!
//! `EARSHOT_BENCH_COMMITS_WRITERS` sets the writer pool's threads (default: the service's
//! default, `Config::default().writer_threads`).
//!
//! `cargo bench -p earshot-benches --bench commits`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_benches::NOW_MS;
use earshot_store::kernel::sled_backend;
use earshot_store::model::{Command, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind};
use earshot_store::{Config, Earshot, ManualClock, SledBackend};

const OWNER: &str = "owner";

fn main() {
    let configs = std::env::var("EARSHOT_BENCH_COMMITS").unwrap_or_else(|_| "1x1,4x4,16x1,16x16,16x64".into());
    let seconds: u64 = std::env::var("EARSHOT_BENCH_COMMITS_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    println!("threads x stores | writes/s | p50 | p99 | writes per log sync");
    for config in configs.split(',').filter(|c| !c.is_empty()) {
        let (threads, stores) = config
            .split_once('x')
            .and_then(|(t, s)| Some((t.trim().parse::<usize>().ok()?, s.trim().parse::<usize>().ok()?)))
            .unwrap_or_else(|| panic!("a configuration is <threads>x<stores>, not {config}"));
        run(threads, stores, Duration::from_secs(seconds));
    }
}

fn run(threads: usize, stores: usize, duration: Duration) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let backend = Arc::new(SledBackend::open(dir.path()).expect("sled opens"));
    let mut config = Config::default();
    if let Some(n) = std::env::var("EARSHOT_BENCH_COMMITS_WRITERS").ok().and_then(|s| s.parse().ok()) {
        config.writer_threads = n;
    }
    let e = Arc::new(Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), config).expect("instance opens"));
    for s in 0..stores {
        let id = format!("s{s}");
        e.create_store(&id, None).expect("store is created");
        let h = e.store(&id).expect("handle");
        h.write(Command::CreateParticipant(NewParticipant {
            id: OWNER.into(),
            kind: ParticipantKind::Agent,
            name: None,
        }))
        .expect("participant is written");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let syncs_before = sled_backend::log_syncs();
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (e, stop) = (e.clone(), stop.clone());
            std::thread::spawn(move || {
                let h = e.store(&format!("s{}", t % stores)).expect("handle");
                let mut took = Vec::new();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    h.write(Command::CreateItem(NewItem {
                        id: Some(format!("t{t}-{i}")),
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
                    took.push(t0.elapsed());
                    i += 1;
                }
                took
            })
        })
        .collect();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let mut took: Vec<Duration> = workers.into_iter().flat_map(|w| w.join().expect("a writer")).collect();
    let elapsed = started.elapsed();
    let syncs = sled_backend::log_syncs() - syncs_before;
    took.sort();
    let at = |q: f64| took[((took.len() as f64 * q) as usize).min(took.len() - 1)];
    println!(
        "{threads:>3} x {stores:<4} | {:>8.0} | {:>7.2?} | {:>7.2?} | {:.2}",
        took.len() as f64 / elapsed.as_secs_f64(),
        at(0.5),
        at(0.99),
        took.len() as f64 / syncs.max(1) as f64
    );
    e.shutdown();
}
