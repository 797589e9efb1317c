//! The follower: one thread per process that learns which of the loaded stores another replica
//! changed, from the shared datastore's feed of changed heads (one query per interval for
//! every store, plus the datastore's notifications where it has them), and hands each change
//! to that store's writer, which catches up on the writer pool. Idle, it costs one query per
//! interval whatever the number of stores; busy, it costs what changed.
//!
//! A feed answers what changed after it opened, and a store hears of what changed after it
//! registered: so the heads of every loaded store are read once a feed opens (at start-up, and
//! again after a lost connection), and a newly registered store's head at the next poll (one
//! query for all stores registered since). Beyond that a change can be missed by the feed only
//! in corner cases (a notification lost *and* a commit that took longer than the feed's
//! look-back between taking its place in the feed and committing): a sweep of every loaded
//! store's head, in batches, every [`SWEEP_EVERY`], bounds how long such a store can trail. Reads that need the newest state (`fully_consistent`, a
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
    /// Stores registered since the last poll: their heads are read at the next one (one query
    /// for all of them), since a change that landed between a store's load and its
    /// registration was delivered, if at all, before anyone here followed the store.
    fresh: Mutex<Vec<Arc<str>>>,
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
            fresh: Mutex::new(Vec::new()),
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
        lock(&self.stores).insert(store.clone(), writer);
        lock(&self.fresh).push(store);
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
        lock(&self.fresh).clear();
        self.read_heads(backend, &ids)
    }

    /// Reads the heads of the stores registered since the last poll (kept for the next poll
    /// when the read fails).
    fn check_fresh(&self, backend: &dyn Backend) -> crate::error::Result<()> {
        let ids = std::mem::take(&mut *lock(&self.fresh));
        if ids.is_empty() {
            return Ok(());
        }
        let read = self.read_heads(backend, &ids);
        if read.is_err() {
            lock(&self.fresh).extend(ids);
        }
        read
    }

    /// Reads the heads of `ids`, in batches, and hands each to its writer, if still loaded.
    fn read_heads(&self, backend: &dyn Backend, ids: &[Arc<str>]) -> crate::error::Result<()> {
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
    // A feed answers the changes after the moment it first reads the datastore: a change that
    // landed before it opened (between a store's load and the feed's start, or while the
    // connection was down) is in no poll and no notification. So each feed, once its first
    // poll has fixed where it starts, is followed by a sweep of every loaded store's head.
    let mut swept_since_opened = true;
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
                    Ok(opened) => {
                        swept_since_opened = opened.is_none();
                        feed = opened;
                    }
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
            } else if !swept_since_opened {
                match f.sweep(backend.as_ref()) {
                    Ok(()) => swept_since_opened = true,
                    Err(e) => {
                        tracing::debug!(error = %e, "sweeping the loaded stores' heads after the feed opened failed")
                    }
                }
            } else if feed.is_some() {
                if let Err(e) = f.check_fresh(backend.as_ref()) {
                    tracing::debug!(error = %e, "reading the heads of newly loaded stores failed");
                }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use crate::backend::{MemoryBackend, Op, Record};

    /// A shared datastore whose feed never reports anything (the change landed before the feed
    /// opened), and whose head of `s` is at revision 5.
    struct SilentFeedBackend(MemoryBackend);

    struct SilentFeed;

    impl HeadFeed for SilentFeed {
        fn poll(&mut self) -> crate::error::Result<Vec<Changed>> {
            Ok(Vec::new())
        }
        fn wait(&mut self, wait: Duration) -> crate::error::Result<Vec<Changed>> {
            std::thread::sleep(wait);
            Ok(Vec::new())
        }
    }

    impl Backend for SilentFeedBackend {
        fn stores(&self) -> crate::error::Result<Vec<String>> {
            self.0.stores()
        }
        fn load(&self, store: &str) -> crate::error::Result<Vec<Record>> {
            self.0.load(store)
        }
        fn commit(&self, store: &str, ops: Vec<Op>) -> crate::error::Result<()> {
            self.0.commit(store, ops)
        }
        fn get(&self, store: &str, key: &[u8]) -> crate::error::Result<Option<Vec<u8>>> {
            self.0.get(store, key)
        }
        fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> crate::error::Result<Vec<Record>> {
            self.0.scan(store, from, to, limit)
        }
        fn shared(&self) -> bool {
            true
        }
        fn head(&self, _store: &str) -> crate::error::Result<Option<Head>> {
            Ok(Some(Head { revision: 5, incarnation: None }))
        }
        fn head_feed(&self, _notify: bool) -> crate::error::Result<Option<Box<dyn HeadFeed>>> {
            Ok(Some(Box::new(SilentFeed)))
        }
    }

    #[derive(Default)]
    struct Seen(Mutex<Vec<Option<u64>>>);

    impl Followed for Seen {
        fn saw(&self, head: Option<&Head>) {
            lock(&self.0).push(head.map(|h| h.revision));
        }
        fn retry(&self) {}
    }

    /// A change that landed before the feed opened, or before the store registered, is in none
    /// of the feed's polls: the follower reads every loaded store's head once the feed has
    /// opened and each newly registered store's head at the next poll, not only at the sweep
    /// 30 s later.
    #[test]
    fn a_change_from_before_the_feed_opened_is_found_at_once() {
        let seen = Arc::new(Seen::default());
        let weak: Weak<dyn Followed> = Arc::downgrade(&(seen.clone() as Arc<dyn Followed>));
        let f = Follower::start(Arc::new(SilentFeedBackend(MemoryBackend::default())), Duration::from_millis(10), true)
            .expect("the follower starts");
        f.register(Arc::from("s"), weak);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !lock(&seen.0).contains(&Some(5)) {
            assert!(Instant::now() < deadline, "the head of s was never read: {:?}", lock(&seen.0));
            std::thread::sleep(Duration::from_millis(10));
        }
        f.stop();
    }
}
