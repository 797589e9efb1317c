//! The follower: one thread per process that learns which of the loaded stores another replica
//! changed, from the shared datastore's feed of changed heads (one query per interval for
//! every store, plus the datastore's notifications where it has them), and hands each change
//! to that store's writer, which catches up on the writer pool. Idle, it costs one query per
//! interval whatever the number of stores; busy, it costs what changed.
//!
//! A change can be missed by the feed only in corner cases (a notification lost *and* a commit
//! that took longer than the feed's look-back between taking its place in the feed and
//! committing): a sweep of every loaded store's head, in batches, every [`SWEEP_EVERY`], bounds
//! how long such a store can trail. Reads that need the newest state (`fully_consistent`, a
//! token newer than what is applied) read the store's own head and never depend on the feed.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::backend::{Backend, Changed, Head, HeadFeed};

/// How often every loaded store's head is read, in batches, whatever the feed said.
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// Stores per query of a sweep.
const SWEEP_BATCH: usize = 1_000;
/// Longest the follower waits in one go (so that it stops promptly).
const MAX_WAIT: Duration = Duration::from_millis(100);

/// What the follower asks of a writer.
pub trait Followed: Send + Sync {
    /// Another replica moved the store's head to `head` (`None`: deleted it): the writer
    /// catches up, or retires, on the pool.
    fn saw(&self, head: Option<&Head>);
    /// The writer asked to be woken at every poll (a failed commit left its state unsure and it
    /// rebuilds once the datastore answers again).
    fn retry(&self);
}

/// The state of the follower's polls, which every loaded store's readiness reads.
#[derive(Debug, Clone, Default)]
pub struct Polls {
    /// When the last poll of the feed succeeded.
    pub at: Option<Instant>,
    /// Why the last poll failed, if it did.
    pub error: Option<String>,
}

/// The follower of one process.
pub struct Follower {
    stores: Mutex<HashMap<Arc<str>, Weak<dyn Followed>>>,
    /// Writers to wake at every poll (see `Followed::retry`).
    retrying: Mutex<HashSet<Arc<str>>>,
    polls: Mutex<Polls>,
    stop: Mutex<bool>,
    stopped: Condvar,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Follower {
    /// Starts following `backend` every `interval` (and on its notifications when `notify`).
    pub fn start(backend: Arc<dyn Backend>, interval: Duration, notify: bool) -> std::io::Result<Arc<Self>> {
        let f = Arc::new(Follower {
            stores: Mutex::new(HashMap::new()),
            retrying: Mutex::new(HashSet::new()),
            polls: Mutex::new(Polls::default()),
            stop: Mutex::new(false),
            stopped: Condvar::new(),
            thread: Mutex::new(None),
        });
        let weak = Arc::downgrade(&f);
        let thread = std::thread::Builder::new()
            .name("earshot-follower".into())
            .spawn(move || follow_loop(weak, backend, interval, notify))?;
        *lock(&f.thread) = Some(thread);
        Ok(f)
    }

    /// A writer starts following its store.
    pub fn register(&self, store: Arc<str>, writer: Weak<dyn Followed>) {
        lock(&self.stores).insert(store, writer);
    }

    /// A writer stops following its store (unless another writer of the same id replaced it).
    pub fn forget(&self, store: &str, writer: &Weak<dyn Followed>) {
        let mut stores = lock(&self.stores);
        if stores.get(store).is_some_and(|w| Weak::ptr_eq(w, writer)) {
            stores.remove(store);
        }
        drop(stores);
        lock(&self.retrying).remove(store);
    }

    /// Wakes `store`'s writer at every poll until `settled`.
    pub fn retry(&self, store: Arc<str>) {
        lock(&self.retrying).insert(store);
    }

    /// Stops waking `store`'s writer at every poll.
    pub fn settled(&self, store: &str) {
        lock(&self.retrying).remove(store);
    }

    /// The state of the follower's polls.
    pub fn polls(&self) -> Polls {
        lock(&self.polls).clone()
    }

    /// Stops the thread and waits for it.
    pub fn stop(&self) {
        *lock(&self.stop) = true;
        self.stopped.notify_all();
        if let Some(t) = lock(&self.thread).take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }

    fn stopping(&self) -> bool {
        *lock(&self.stop)
    }

    /// Sleeps up to `d`, waking early when stopped.
    fn sleep(&self, d: Duration) {
        let stop = lock(&self.stop);
        if !*stop {
            let _ = self.stopped.wait_timeout(stop, d);
        }
    }

    /// Hands each change to its store's writer, if the store is loaded here.
    fn deliver(&self, changes: &[Changed]) {
        for c in changes {
            let writer = lock(&self.stores).get(c.store.as_str()).and_then(Weak::upgrade);
            if let Some(w) = writer {
                w.saw(c.head.as_ref());
            }
        }
    }

    /// Wakes every writer that asked to be retried.
    fn wake_retrying(&self) {
        let ids: Vec<Arc<str>> = lock(&self.retrying).iter().cloned().collect();
        for id in ids {
            if let Some(w) = lock(&self.stores).get(&id).and_then(Weak::upgrade) {
                w.retry();
            }
        }
    }

    /// Reads every loaded store's head, in batches, and hands each to its writer (a store
    /// found without a head was deleted).
    fn sweep(&self, backend: &dyn Backend) -> crate::error::Result<()> {
        let ids: Vec<Arc<str>> = lock(&self.stores).keys().cloned().collect();
        for batch in ids.chunks(SWEEP_BATCH) {
            let names: Vec<&str> = batch.iter().map(|s| &**s).collect();
            let mut heads: HashMap<String, Head> = backend.heads(&names)?.into_iter().collect();
            let changes: Vec<Changed> =
                names.iter().map(|s| Changed { store: s.to_string(), head: heads.remove(*s) }).collect();
            self.deliver(&changes);
        }
        Ok(())
    }

    fn polled(&self, result: crate::error::Result<()>) {
        let mut polls = lock(&self.polls);
        match result {
            Ok(()) => {
                polls.at = Some(Instant::now());
                polls.error = None;
            }
            Err(e) => {
                if polls.error.is_none() {
                    tracing::warn!(error = %e, "following the datastore failed; trying again");
                }
                polls.error = Some(e.to_string());
            }
        }
    }
}

/// The follower thread: a poll of the feed every `interval` (or a sweep, for a backend without
/// a feed), a sweep every [`SWEEP_EVERY`], and, between polls, the feed's notifications.
fn follow_loop(follower: Weak<Follower>, backend: Arc<dyn Backend>, interval: Duration, notify: bool) {
    let mut feed: Option<Box<dyn HeadFeed>> = None;
    let mut next_poll = Instant::now();
    let mut next_sweep = Instant::now() + SWEEP_EVERY;
    loop {
        let Some(f) = follower.upgrade() else { return };
        if f.stopping() {
            return;
        }
        let now = Instant::now();
        if now >= next_poll {
            next_poll = now + interval;
            if feed.is_none() {
                match backend.head_feed(notify) {
                    Ok(opened) => feed = opened,
                    Err(e) => {
                        f.polled(Err(e));
                        continue;
                    }
                }
            }
            let polled = match feed.as_mut() {
                Some(feed) => feed.poll().map(|changes| f.deliver(&changes)),
                // No feed: every loaded store's head at every poll (one query per batch).
                None => f.sweep(backend.as_ref()),
            };
            if polled.is_err() {
                // Opened again at the next poll: a dropped connection loses its `LISTEN`.
                feed = None;
            }
            f.polled(polled);
            f.wake_retrying();
        }
        if now >= next_sweep && feed.is_some() {
            next_sweep = now + SWEEP_EVERY;
            if let Err(e) = f.sweep(backend.as_ref()) {
                tracing::debug!(error = %e, "sweeping the loaded stores' heads failed");
            }
        }
        let wait = next_poll.saturating_duration_since(Instant::now()).min(MAX_WAIT);
        match feed.as_mut() {
            Some(feed_now) if notify => match feed_now.wait(wait) {
                Ok(changes) => f.deliver(&changes),
                Err(e) => {
                    tracing::debug!(error = %e, "waiting for notifications failed; polling");
                    feed = None;
                }
            },
            // `stop` wakes it.
            _ => f.sleep(wait),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
