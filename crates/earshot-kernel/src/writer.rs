//! The writer of one store, generic over its [`State`]: serialised writes run on the shared
//! writer pool (`pool`: a store costs no thread), group commit, the revision log, following
//! other replicas by replaying it when the follower (`follower`) hands it a change, the published
//! latest state, the retention window for `at_exact` reads, the bounded waits for `at_least`
//! and `fully_consistent`, and how far behind the shared datastore the store is.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use super::backend::{dec, meta_op, Backend, Head, MetaRecord, Op, DEFAULT_MIN_FREE_BYTES, META_KEY};
use super::follower::Followed;
use super::lag::Lag;
use super::log::{self, log_key, revision_of, LogEntry};
use super::pin::{PinnedRecords, Pins};
use super::pool::Task;
use super::token::{self, Consistency};
use super::{Clock, Config, Runtime, State};
use crate::error::{KernelError, Result};
use crate::metrics::StoreMetrics;

/// Most commands folded into one durable commit.
const MAX_GROUP: usize = 256;

/// A write's answer and the revision it committed (the latest when nothing was written).
type Reply<S> = Result<(<S as State>::Outcome, u64), <S as State>::Error>;

struct Job<S: State> {
    cmd: S::Command,
    reply: Replier<S>,
}

/// Where a write's answer goes: to a thread blocked on it ([`Writer::write`]), or to a callback
/// run on the writer's thread ([`Writer::write_then`]: an async caller's wake-up, with no
/// thread parked for the write).
enum Replier<S: State> {
    Thread(mpsc::SyncSender<Reply<S>>),
    Call(Box<dyn FnOnce(Reply<S>) + Send>),
}

impl<S: State> Replier<S> {
    /// Delivers the answer; a waiter that has gone (it timed out) is not an error.
    fn send(self, r: Reply<S>) {
        match self {
            Replier::Thread(tx) => {
                let _ = tx.send(r);
            }
            Replier::Call(done) => done(r),
        }
    }
}

/// What the writer is asked to do.
enum Msg<S: State> {
    Write(Job<S>),
    /// Read the shared backend's head and catch up with it (the follower saw it move, or a
    /// `fully_consistent` read is waiting), or, when a failed commit left the state unsure,
    /// rebuild it once the datastore answers again.
    Follow,
}

/// The writer's queue of work, which a store's pool task drains.
struct Inbox<S: State> {
    msgs: VecDeque<Msg<S>>,
    /// Set by `shutdown`: nothing more is queued.
    closed: bool,
}

/// What the writer works on, between groups: its state (ahead of what readers see only while
/// a group is being committed) and whether that state is unsure.
struct Run<S: State> {
    snap: S,
    aside: S::Aside,
    /// Set when the writer's state may not match the records (a command applied and then
    /// dropped, or a failed commit): it is rebuilt from the records before the next group.
    stale: bool,
    last_reload: Option<Instant>,
}

/// Revisions applied per log read while following.
const REPLAY_BATCH: usize = 256;

/// How a store stands against a shared datastore's head (readiness, metrics, the lag a
/// `latest` read may be behind by). On a backend no one else writes to, always caught up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Replication {
    /// The revision this replica has applied and serves as `latest`.
    pub applied: u64,
    /// The newest head this replica has seen (equal to `applied` on an unshared backend).
    pub head: u64,
    /// `head - applied`.
    pub behind_revisions: u64,
    /// The lag: milliseconds since the oldest revision this replica has seen at the head and
    /// not yet applied was first seen (0 when it has applied every head it saw).
    pub behind_ms: u64,
    /// Milliseconds since the last successful poll of the head (`None`: never polled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_poll_ms: Option<u64>,
    /// Why the last poll failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_error: Option<String>,
    /// Revisions this replica applied by replaying the revision log (since it started).
    pub replayed: u64,
    /// Times it rebuilt the store from the records instead (the log did not reach back, or a
    /// replay disagreed with it).
    pub rebuilds: u64,
}

/// What following has seen, kept by the writer thread.
struct Sync {
    /// The heads seen and the revisions applied: lag and readiness (see `lag`).
    lag: Lag,
    polled_at: Option<Instant>,
    poll_error: Option<String>,
    replayed: u64,
    rebuilds: u64,
}

/// The revisions of one running store.
pub struct Writer<S: State> {
    id: Arc<str>,
    /// The store's consistency-token tag, computed once (every read answers with a token).
    token_tag: Box<str>,
    /// The incarnation this writer runs (`MetaRecord::incarnation`).
    incarnation: Option<Box<str>>,
    /// Set when following found the store deleted, or created again as another incarnation,
    /// by another process: this writer then writes nothing more, and the store's registry
    /// starts the store afresh on its next use.
    retired: std::sync::atomic::AtomicBool,
    /// Set when this copy was evicted from memory (see [`Writer::evict_if_idle`]): it is
    /// retired too, and a write it refuses was never applied, so the caller may send it to the
    /// store loaded again.
    evicted: AtomicBool,
    /// The newest revision this writer is committing (or has committed): the follower, told of
    /// it by the datastore's notification before the commit returns here, has nothing to
    /// catch up with.
    committing_to: std::sync::atomic::AtomicU64,
    latest: ArcSwap<S>,
    retained: Mutex<VecDeque<Arc<S>>>,
    published: Mutex<u64>,
    published_cv: Condvar,
    /// This writer, to queue itself on the pool.
    me: Weak<Writer<S>>,
    inbox: Mutex<Inbox<S>>,
    /// Whether the writer is queued on the pool or running there (at most once at a time).
    scheduled: AtomicBool,
    /// The writer's working state; `None` once shut down. Held while a group runs.
    run: Mutex<Option<Run<S>>>,
    /// The pool this writer runs on and the follower it is registered with.
    runtime: Arc<Runtime>,
    /// When the writer entered the commit in progress, if one is: a commit that does not
    /// return (storage hung) makes later writes fail fast instead of queueing behind it.
    committing_since: Mutex<Option<Instant>>,
    /// Why the writer's last group was refused before it was applied (storage not writable,
    /// or its state not yet reloaded after a failed commit); repeated to writes refused while
    /// a reload is not due yet, and cleared by the next group that passes.
    refusing: Mutex<Option<String>>,
    backend: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    config: Config,
    meta: Mutex<MetaRecord>,
    sync: Mutex<Sync>,
    /// Group-commit batch sizes, for `/metrics`.
    metrics: Arc<StoreMetrics>,
    /// Readers of the records at one revision (exports), whose pre-images commits save.
    pins: Pins,
    /// Held while a past revision is built from the datastore's history (`pinned`).
    building: Mutex<()>,
}

impl<S: State> Writer<S> {
    /// Starts the writer of a store from its projected state and revision record, on the
    /// runtime's pool (and, on a shared backend, registered with its follower).
    #[allow(clippy::too_many_arguments, reason = "the parts of a store a writer runs with, each from its own owner")]
    pub fn start(
        id: &str,
        (mut state, aside): (S, S::Aside),
        meta: MetaRecord,
        backend: Arc<dyn Backend>,
        clock: Arc<dyn Clock>,
        config: Config,
        metrics: Arc<StoreMetrics>,
        runtime: &Arc<Runtime>,
    ) -> Result<Arc<Self>> {
        if meta.committed_at_ms.is_none() {
            // Records from before commit times were kept: the revision counts from now.
            let revision = state.revision();
            state.stamp(revision, clock.now_ms());
        }
        state.tune(&config);
        let snap = Arc::new(state);
        let start = Run { snap: snap.as_ref().clone(), aside, stale: false, last_reload: None };
        let handle = Arc::new_cyclic(|me| Writer {
            id: Arc::from(id),
            token_tag: token::tag(id, meta.incarnation.as_deref()).into(),
            incarnation: meta.incarnation.as_deref().map(Box::from),
            retired: std::sync::atomic::AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            committing_to: std::sync::atomic::AtomicU64::new(0),
            latest: ArcSwap::new(snap.clone()),
            retained: Mutex::new(VecDeque::from([snap.clone()])),
            published: Mutex::new(snap.revision()),
            published_cv: Condvar::new(),
            me: me.clone(),
            inbox: Mutex::new(Inbox { msgs: VecDeque::new(), closed: false }),
            scheduled: AtomicBool::new(false),
            run: Mutex::new(Some(start)),
            runtime: runtime.clone(),
            committing_since: Mutex::new(None),
            refusing: Mutex::new(None),
            backend,
            clock,
            meta: Mutex::new(meta),
            sync: Mutex::new(Sync {
                lag: Lag::new(snap.revision()),
                polled_at: None,
                poll_error: None,
                replayed: 0,
                rebuilds: 0,
            }),
            metrics,
            config,
            pins: Pins::default(),
            building: Mutex::new(()),
        });
        if handle.follows() {
            if let Some(f) = &runtime.follower {
                let weak: Weak<dyn Followed> = handle.me.clone();
                f.register(handle.id.clone(), weak);
            }
        }
        Ok(handle)
    }

    /// Queues `msg` and, unless the writer is queued or running already, queues the writer on
    /// the pool. Refused once the writer is shut down.
    fn submit(&self, msg: Msg<S>) -> Result<()> {
        {
            let mut inbox = lock(&self.inbox);
            if inbox.closed {
                return Err(KernelError::Unavailable);
            }
            inbox.msgs.push_back(msg);
        }
        if !self.scheduled.swap(true, Ordering::AcqRel) {
            if let Some(me) = self.me.upgrade() {
                self.runtime.pool.schedule(me);
            }
        }
        Ok(())
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The latest published (durable) state. Never blocks on writers.
    pub fn latest(&self) -> Arc<S> {
        self.latest.load_full()
    }

    /// The latest published state, borrowed for one read: on arc-swap's fast path no
    /// reference count that other cores share is touched (the load is marked in one of the
    /// reading thread's own slots; a thread holding more than a few loads at once falls back
    /// to the count).
    pub fn latest_ref(&self) -> arc_swap::Guard<Arc<S>> {
        self.latest.load()
    }

    /// The clock's current time.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Submits a write and blocks until it is durable (or refused), at most `write_wait`.
    /// Answers the outcome and the revision it committed.
    pub fn write(&self, cmd: S::Command) -> Reply<S> {
        if let Some(reason) = self.writer_stuck() {
            return Err(KernelError::StorageUnavailable(reason).into());
        }
        let (reply, rx) = mpsc::sync_channel(1);
        self.submit(Msg::Write(Job { cmd, reply: Replier::Thread(reply) }))?;
        // Bounded: a commit stuck in storage must not hang every caller. The write may still
        // become durable after this answer, so the refusal says its outcome is unknown.
        match rx.recv_timeout(self.config.write_wait) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(self.not_durable_in_time().into()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(KernelError::Unavailable.into()),
        }
    }

    /// Submits a write without waiting for it: `done` gets its answer, on the writer's thread
    /// (so it must only hand the answer on), once it is durable or refused. A caller that waits
    /// for `done` waits at most [`Writer::write_wait`] and then answers
    /// [`Writer::not_durable_in_time`], as [`Writer::write`] does. A write queued when the
    /// writer shuts down gets `KernelError::Unavailable`; if the writer is gone before it looks
    /// at the write, `done` is dropped uncalled, which the caller answers the same way.
    pub fn write_then(&self, cmd: S::Command, done: impl FnOnce(Reply<S>) + Send + 'static) -> Result<(), S::Error> {
        if let Some(reason) = self.writer_stuck() {
            return Err(KernelError::StorageUnavailable(reason).into());
        }
        self.submit(Msg::Write(Job { cmd, reply: Replier::Call(Box::new(done)) }))?;
        Ok(())
    }

    /// Longest a write is waited for (`Config::write_wait`).
    pub fn write_wait(&self) -> Duration {
        self.config.write_wait
    }

    /// The refusal of a write not answered within [`Writer::write_wait`]: it may still become
    /// durable after this answer, so the refusal says its outcome is unknown.
    pub fn not_durable_in_time(&self) -> KernelError {
        KernelError::StorageUnavailable(format!(
            "the write was not made durable within {} ms; its outcome is unknown",
            self.config.write_wait.as_millis()
        ))
    }

    /// Why the writer cannot make writes durable now, if so: a commit that has not returned
    /// within `write_wait`.
    fn writer_stuck(&self) -> Option<String> {
        let since = (*lock(&self.committing_since))?;
        (since.elapsed() > self.config.write_wait).then(|| {
            format!("a commit has not returned for {} s (storage is not responding)", since.elapsed().as_secs())
        })
    }

    /// Why writes to this store cannot be made durable now, if so (readiness): a stuck commit
    /// or the storage's own condition (a full disk, a failed database), probed now, so that
    /// readiness returns as soon as space does, without waiting for a write. `None` means
    /// healthy. Reads are served in every case.
    pub fn condition(&self) -> Option<String> {
        self.writer_stuck().or_else(|| self.backend.condition()).or_else(|| self.lagging())
    }

    /// Whether this store follows a shared backend.
    pub fn follows(&self) -> bool {
        self.backend.shared() && !self.config.follow_interval.is_zero()
    }

    /// Why this replica is too far behind the datastore to be routed to, if so, with
    /// hysteresis (see `lag`): unready once it has trailed the head (or gone without a poll)
    /// for longer than `ready_max_lag`, ready again once it has caught up.
    fn lagging(&self) -> Option<String> {
        if !self.follows() {
            return None;
        }
        let now = Instant::now();
        let polled_at = self.polled_at();
        let mut sync = lock(&self.sync);
        let since_poll = polled_at.map(|t| now.saturating_duration_since(t));
        if !sync.lag.unready(now, since_poll, self.config.ready_max_lag) {
            return None;
        }
        let applied = *lock(&self.published);
        Some(match since_poll.filter(|d| *d > self.config.ready_max_lag) {
            Some(d) => format!("not polled the datastore for {} ms (at revision {applied})", d.as_millis()),
            None => format!(
                "behind the datastore: at revision {applied} of {}, trailing by {} ms (ready again once caught up)",
                sync.lag.head(),
                sync.lag.lag(now).as_millis()
            ),
        })
    }

    /// When this store's head was last read: by the follower's last successful poll of every
    /// store's changes, or by this store's own read of it, whichever is newer.
    fn polled_at(&self) -> Option<Instant> {
        let own = lock(&self.sync).polled_at;
        let follower = self.runtime.follower.as_ref().and_then(|f| f.polls().at);
        own.max(follower)
    }

    /// How this store stands against the shared datastore's head.
    pub fn replication(&self) -> Replication {
        let applied = *lock(&self.published);
        let polled_at = self.polled_at();
        let poll_error = self.runtime.follower.as_ref().and_then(|f| f.polls().error);
        let sync = lock(&self.sync);
        let head = sync.lag.head().max(applied);
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Replication {
            applied,
            head,
            behind_revisions: head - applied,
            behind_ms: ms(sync.lag.lag(Instant::now())),
            last_poll_ms: polled_at.map(|t| ms(t.elapsed())),
            poll_error: sync.poll_error.clone().or(poll_error),
            replayed: sync.replayed,
            rebuilds: sync.rebuilds,
        }
    }

    /// On a shared backend, a token newer than what this replica has published was written by
    /// another replica: the writer reads the head and catches up now, rather than waiting for
    /// the follower to hear of it (a change the feed has not delivered yet, or missed).
    fn catch_up_to(&self, rev: u64) {
        if self.backend.shared() && rev > *lock(&self.published) {
            self.nudge();
        }
    }

    /// Asks the writer to read the head and catch up now.
    fn nudge(&self) {
        let _ = self.submit(Msg::Follow);
    }

    /// Up to `limit` entries of the revision log after `after`, in order, and the oldest
    /// revision the log still holds an entry for. An `after` older than the log reaches back is
    /// refused with `RevisionExpired` (the watcher must start again from a fresh read).
    pub fn log_after(&self, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        // Only published revisions: a later entry is a commit in progress (not durable yet) or
        // one that failed with its outcome unknown, which the writer has not taken up yet.
        let published = *lock(&self.published);
        let rows = self.backend.scan(&self.id, &log_key(after.saturating_add(1)), &log_key(u64::MAX), limit)?;
        let mut out = Vec::with_capacity(rows.len());
        for (k, v) in rows {
            if revision_of(&k).is_some_and(|r| r > published) {
                break;
            }
            let entry = LogEntry::decode(&self.id, &v)?;
            let expected = after.saturating_add(1).saturating_add(out.len() as u64);
            if revision_of(&k) != Some(expected) || entry.revision != expected {
                let oldest = self.oldest_logged()?.unwrap_or(expected);
                return Err(KernelError::RevisionExpired { requested: after, oldest: oldest.saturating_sub(1) });
            }
            out.push(entry);
        }
        if out.is_empty() && after < *lock(&self.published) {
            // Revisions exist after `after` but the log holds none of them: pruned.
            let oldest = self.oldest_logged()?.unwrap_or(*lock(&self.published));
            return Err(KernelError::RevisionExpired { requested: after, oldest: oldest.saturating_sub(1) });
        }
        Ok(out)
    }

    /// The oldest revision the log holds.
    fn oldest_logged(&self) -> Result<Option<u64>> {
        let first = self.backend.scan(&self.id, &log_key(0), &log_key(u64::MAX), 1)?;
        Ok(first.first().and_then(|(k, _)| revision_of(k)))
    }

    /// Waits until the published revision is past `rev` or `wait` elapses; answers the
    /// published revision (watch streams block here between changes).
    pub fn wait_past(&self, rev: u64, wait: Duration) -> u64 {
        let deadline = Instant::now() + wait;
        let mut published = lock(&self.published);
        while *published <= rev {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            published = match self.published_cv.wait_timeout(published, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *published
    }

    /// Consistency token for a revision of this store.
    pub fn token(&self, revision: u64) -> String {
        token::encode_with_tag(&self.token_tag, revision)
    }

    /// The revision a token of this store names (refusing another store's, or another
    /// incarnation's: see `token`). On a shared backend, a token of another incarnation may be
    /// the new one's while this replica still runs the old: the head decides, and a store found
    /// replaced is retired (`StoreReplaced`, so that the caller finds the store as it is now).
    pub fn decode_token(&self, t: &str) -> Result<u64> {
        match token::decode_with_tag(&self.id, &self.token_tag, t) {
            Err(KernelError::TokenIncarnationMismatch(store)) => {
                if self.backend.shared() && !self.still_current()? {
                    return Err(KernelError::StoreReplaced(self.id.to_string()));
                }
                Err(KernelError::TokenIncarnationMismatch(store))
            }
            other => other,
        }
    }

    /// The incarnation this writer runs.
    pub fn incarnation(&self) -> Option<&str> {
        self.incarnation.as_deref()
    }

    /// Whether following found the store deleted or replaced by another process.
    pub fn retired(&self) -> bool {
        self.retired.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether the datastore still holds this incarnation of the store (asking it); retires
    /// the writer when not.
    fn still_current(&self) -> Result<bool> {
        let head = self.backend.head(&self.id)?;
        Ok(self.same_store(head.as_ref()))
    }

    /// Whether `head` is this incarnation's; retires the writer when not (the store was deleted,
    /// or deleted and created again, by another process).
    fn same_store(&self, head: Option<&Head>) -> bool {
        let same = head.is_some_and(|h| h.incarnation.as_deref() == self.incarnation.as_deref());
        if !same && !self.retired.swap(true, std::sync::atomic::Ordering::AcqRel) {
            tracing::info!(store = %self.id, "the store was deleted or created again by another replica; retiring this copy of it");
        }
        same
    }

    /// The newest revision of this store anywhere: the datastore's head on a shared backend
    /// (another replica may have committed past what this one has applied), else the published
    /// one. An error when the head cannot be read.
    pub fn newest(&self) -> Result<u64> {
        let published = *lock(&self.published);
        if !self.backend.shared() {
            return Ok(published);
        }
        let head = self.backend.head(&self.id)?;
        if !self.same_store(head.as_ref()) {
            return Err(KernelError::StoreReplaced(self.id.to_string()));
        }
        Ok(head.map_or(published, |head| head.revision.max(published)))
    }

    /// The snapshot a read must use, per its consistency requirement (SPEC §1.10).
    pub fn snapshot_for(&self, consistency: &Consistency) -> Result<Arc<S>, S::Error> {
        use Consistency as C;
        match consistency {
            C::Latest => Ok(self.latest()),
            C::FullyConsistent => {
                // The datastore's head first: then everything committed anywhere before this
                // read began is visible (read-your-writes across replicas without a token).
                let head = self.backend.head(&self.id)?;
                if self.backend.shared() && !self.same_store(head.as_ref()) {
                    return Err(KernelError::StoreReplaced(self.id.to_string()).into());
                }
                if let Some(head) = head {
                    if head.revision > *lock(&self.published) {
                        self.nudge();
                        self.wait_for(head.revision)?;
                    }
                }
                Ok(self.latest())
            }
            C::AtLeast(t) => {
                let rev = self.decode_token(t)?;
                self.catch_up_to(rev);
                self.wait_for(rev)?;
                Ok(self.latest())
            }
            C::AtExact(t) => {
                let rev = self.decode_token(t)?;
                self.catch_up_to(rev);
                self.wait_for(rev)?;
                self.exact(rev)
            }
        }
    }

    /// Waits (bounded by configuration) until `rev` is published.
    pub fn wait_for(&self, rev: u64) -> Result<()> {
        let deadline = Instant::now() + self.config.consistency_wait;
        let mut published = lock(&self.published);
        while *published < rev {
            if self.evicted() {
                // This copy will publish nothing more: the caller reads the store loaded again.
                return Err(KernelError::Unavailable);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(KernelError::ConsistencyTimeout { requested: rev, latest: *published });
            }
            published = match self.published_cv.wait_timeout(published, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        Ok(())
    }

    /// The snapshot at exactly `rev`, when `rev` is inside the retention window: the newest
    /// revision, or one of the last `retention_max` committed less than `retention_window` ago
    /// (judged when asked, from the revision's own commit time, so that every replica draws
    /// the window alike). One this replica does not hold (it started, or followed, after it)
    /// is built from the datastore's history ([`Writer::pinned`]).
    pub fn exact(&self, rev: u64) -> Result<Arc<S>, S::Error> {
        let newest = *lock(&self.published);
        let oldest = newest.saturating_sub(self.config.retention_max.saturating_sub(1) as u64).max(1);
        let expired = || S::Error::from(KernelError::RevisionExpired { requested: rev, oldest });
        if rev > newest || rev < oldest {
            return Err(expired());
        }
        let window = i64::try_from(self.config.retention_window.as_millis()).unwrap_or(i64::MAX);
        let within = |committed_at_ms: i64| self.clock.now_ms().saturating_sub(committed_at_ms) <= window;
        // The newest revision is always held (it is published into what is held).
        if let Some(s) = self.held(rev) {
            return if rev == newest || within(s.committed_at_ms()) { Ok(s) } else { Err(expired()) };
        }
        // Not held here: the log says when it was committed (no build for an expired one).
        let logged = self.backend.get(&self.id, &log_key(rev))?;
        let committed_at_ms = match logged {
            Some(v) => LogEntry::decode(&self.id, &v)?.committed_at_ms,
            None => return Err(expired()),
        };
        if !within(committed_at_ms) {
            return Err(expired());
        }
        self.wait_for(rev)?;
        self.build_past(rev)?.ok_or_else(expired)
    }

    /// A snapshot this replica holds at exactly `rev`.
    fn held(&self, rev: u64) -> Option<Arc<S>> {
        let retained = lock(&self.retained);
        retained.binary_search_by_key(&rev, |s| s.revision()).ok().and_then(|i| retained.get(i).cloned())
    }

    /// The snapshot at exactly `rev`, whatever the retention window (an attempt pinned to it
    /// lives longer than the window): held here, or built from the records of `rev` as the
    /// datastore's history gives them (`Backend::load_at`) and the log replayed from there up
    /// to the next revision held here, every one of them then held (so that the neighbouring
    /// revisions cost nothing more). `RevisionExpired` when the history no longer reaches back.
    pub fn pinned(&self, rev: u64) -> Result<Arc<S>, S::Error> {
        // A revision this replica has not reached yet is waited for (bounded), never built:
        // what is held stays a prefix of what is published.
        self.wait_for(rev)?;
        self.build_past(rev)?
            .ok_or_else(|| KernelError::RevisionExpired { requested: rev, oldest: rev.saturating_add(1) }.into())
    }

    /// The snapshot at exactly `rev` (published already): held here, or built from the
    /// datastore's history (see [`Writer::pinned`]); `None` when the history does not reach
    /// back to it.
    fn build_past(&self, rev: u64) -> Result<Option<Arc<S>>, S::Error> {
        if let Some(s) = self.held(rev) {
            return Ok(Some(s));
        }
        // One build at a time: a second reader of a revision being built then finds it held.
        let _one = lock(&self.building);
        if let Some(s) = self.held(rev) {
            return Ok(Some(s));
        }
        let Some(raw) = self.backend.load_at(&self.id, rev)? else { return Ok(None) };
        let meta =
            raw.iter().find(|(k, _)| k.as_slice() == META_KEY).map(|(k, v)| dec::<MetaRecord>(k, v)).transpose()?;
        if meta.as_ref().map(|m| (m.revision, m.incarnation.as_deref())) != Some((rev, self.incarnation())) {
            return Ok(None);
        }
        let (mut state, mut aside) = S::load(&self.id, &raw)?;
        state.tune(&self.config);
        // Up to the next revision held here (or the newest), replayed and checked against the log.
        let next_held = {
            let retained = lock(&self.retained);
            retained.iter().map(|s| s.revision()).find(|r| *r > rev).unwrap_or(*lock(&self.published))
        };
        let mut snaps = vec![Arc::new(state.clone())];
        if next_held > rev + 1 {
            snaps.extend(replay(self, &mut state, &mut aside, next_held - 1)?);
        }
        let wanted = snaps.first().cloned();
        let mut retained = lock(&self.retained);
        for s in snaps {
            if let Err(i) = retained.binary_search_by_key(&s.revision(), |x| x.revision()) {
                retained.insert(i, s);
            }
        }
        tracing::info!(store = %self.id, revision = rev, held = retained.len(), "built a past revision from the datastore's history");
        Ok(wanted)
    }

    /// The records of this store as they are now, read as such however long the reading takes
    /// while writes go on (see `pin`): `wanted` names the keys the reader reads.
    pub fn pin(&self, wanted: fn(&[u8]) -> bool) -> PinnedRecords {
        self.pins.pin(self.backend.clone(), &self.id, wanted)
    }

    /// The backend this store's records live in.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The configured bounds.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Stops the writer after it drains queued writes.
    pub fn shutdown(&self) {
        lock(&self.inbox).closed = true;
        // Whatever was queued before the close runs here, on the caller's thread (a pool task
        // already running holds `run`, and finishes its group first).
        let mut run = lock(&self.run);
        if let Some(r) = run.as_mut() {
            loop {
                let msgs = self.take_group();
                if msgs.is_empty() {
                    break;
                }
                self.step(r, msgs);
            }
        }
        *run = None;
        drop(run);
        self.unregister();
    }

    /// Evicts this copy of the store from memory if it is idle now: nothing queued or running,
    /// no export reading its records, and `allowed` (the caller's conditions: no live attempt,
    /// no past revision that only this copy could answer). Atomic against writes: one queued
    /// after it is refused (never applied), and the store's state is dropped. Answers whether
    /// it evicted. Reads holding a snapshot finish on it; the registry loads the store again
    /// from its records on its next use.
    pub fn evict_if_idle(&self, allowed: impl FnOnce() -> bool) -> bool {
        let mut run = lock(&self.run);
        if run.is_none() || self.retired() {
            return false;
        }
        // Holding `run`, an empty inbox means nothing is in flight: a pool task still queued (the
        // one that answered the last write clears `scheduled` just after) finds the writer shut
        // and nothing to refuse.
        let mut inbox = lock(&self.inbox);
        // A queued write keeps the store; a queued catch-up does not (the store loads again
        // from the datastore as it is then).
        if inbox.msgs.iter().any(|m| matches!(m, Msg::Write(_))) || self.pins.open() > 0 || !allowed() {
            return false;
        }
        inbox.msgs.clear();
        inbox.closed = true;
        drop(inbox);
        self.evicted.store(true, Ordering::Release);
        self.retired.store(true, Ordering::Release);
        *run = None;
        drop(run);
        self.unregister();
        // A reader waiting for a revision this copy will never publish stops waiting.
        self.published_cv.notify_all();
        true
    }

    /// Whether this copy was evicted from memory (see [`Writer::evict_if_idle`]).
    pub fn evicted(&self) -> bool {
        self.evicted.load(Ordering::Acquire)
    }

    /// Stops following: the follower forgets this writer.
    fn unregister(&self) {
        if let Some(f) = &self.runtime.follower {
            let weak: Weak<dyn Followed> = self.me.clone();
            f.forget(&self.id, &weak);
        }
    }

    /// The next group of queued work: up to `MAX_GROUP` writes, and whether to follow first.
    fn take_group(&self) -> Vec<Msg<S>> {
        let mut inbox = lock(&self.inbox);
        let mut msgs = Vec::new();
        let mut writes = 0;
        while writes < MAX_GROUP {
            match inbox.msgs.pop_front() {
                Some(m) => {
                    writes += usize::from(matches!(m, Msg::Write(_)));
                    msgs.push(m);
                }
                None => break,
            }
        }
        if inbox.msgs.is_empty() && inbox.msgs.capacity() > 0 {
            // An idle store keeps no buffer (a queued command is hundreds of bytes).
            inbox.msgs = VecDeque::new();
        }
        msgs
    }

    /// Drops the past revisions held here that are out of the retention window or beyond
    /// `retention_max` (the newest is always kept). Done at every publish, and for an idle store
    /// by housekeeping, so that its past revisions do not outlive the window in memory.
    ///
    /// The pruned revisions are freed by the runtime's reclaiming thread (`reclaim`), not here:
    /// freeing a revision's own nodes was a seventh of a busy writer's time.
    pub fn prune_retained(&self) {
        let mut retained = lock(&self.retained);
        let now = self.clock.now_ms();
        let window = i64::try_from(self.config.retention_window.as_millis()).unwrap_or(i64::MAX);
        let mut pruned = Vec::new();
        while retained.len() > 1
            && (retained.len() > self.config.retention_max
                || retained.front().is_some_and(|s| now.saturating_sub(s.committed_at_ms()) > window))
        {
            pruned.extend(retained.pop_front());
        }
        drop(retained);
        if !pruned.is_empty() {
            self.runtime.reclaimer.release(pruned);
        }
    }

    /// Whether this replica holds a past revision (besides the newest) that `at_exact` may
    /// still read: one only it can answer on a datastore that keeps no history.
    pub fn holds_past_revisions(&self) -> bool {
        self.prune_retained();
        lock(&self.retained).len() > 1
    }

    fn publish(&self, snaps: Vec<Arc<S>>) {
        let Some(last) = snaps.last().cloned() else { return };
        lock(&self.retained).extend(snaps);
        self.prune_retained();
        let rev = last.revision();
        // A commit of our own moved the head to here, or following reached it. Recorded before
        // the revision is published, so that a reader woken by it never finds the lag still
        // waiting for a revision it has just read (and a store unready once it has caught up).
        lock(&self.sync).lag.applied(rev);
        self.latest.store(last);
        *lock(&self.published) = rev;
        self.published_cv.notify_all();
    }

    /// Records a poll of the head: its value, or why it failed.
    fn polled(&self, head: Result<u64>, applied: u64) {
        let mut sync = lock(&self.sync);
        match head {
            Ok(head) => {
                let now = Instant::now();
                sync.polled_at = Some(now);
                sync.poll_error = None;
                sync.lag.applied(applied);
                sync.lag.saw_head(head, now);
            }
            Err(e) => sync.poll_error = Some(e.to_string()),
        }
    }
}

impl<S: State> Drop for Writer<S> {
    fn drop(&mut self) {
        self.unregister();
    }
}

impl<S: State> Task for Writer<S> {
    /// One group of the queued work; more is waiting when the inbox is not empty after it.
    fn run(&self) -> bool {
        let mut run = lock(&self.run);
        match run.as_mut() {
            Some(r) => {
                let msgs = self.take_group();
                self.step(r, msgs);
            }
            None => {
                // Shut down: anything queued since is refused.
                for m in std::mem::take(&mut lock(&self.inbox).msgs) {
                    if let Msg::Write(job) = m {
                        job.reply.send(Err(KernelError::Unavailable.into()));
                    }
                }
            }
        }
        drop(run);
        if !lock(&self.inbox).msgs.is_empty() {
            return true;
        }
        self.scheduled.store(false, Ordering::Release);
        // A message queued between the look above and the store found the writer still
        // scheduled and did not queue it: it is this run's to take.
        !lock(&self.inbox).msgs.is_empty() && !self.scheduled.swap(true, Ordering::AcqRel)
    }

    fn recover(&self) -> bool {
        self.recover_after_panic()
    }
}

impl<S: State> Writer<S> {
    /// After a panic in `run`: the state may be half-changed, so it is rebuilt from the records
    /// before the next group (writes of the group that panicked got no answer: their callers
    /// see the writer gone, `Unavailable`, outcome unknown).
    fn recover_after_panic(&self) -> bool {
        if let Some(r) = lock(&self.run).as_mut() {
            r.stale = true;
            r.last_reload = None;
        }
        self.scheduled.store(false, Ordering::Release);
        !lock(&self.inbox).msgs.is_empty() && !self.scheduled.swap(true, Ordering::AcqRel)
    }
}

impl<S: State> Followed for Writer<S> {
    fn saw(&self, head: Option<&Head>) {
        let same = head.is_some_and(|h| h.incarnation.as_deref() == self.incarnation.as_deref());
        if let Some(h) = head.filter(|_| same) {
            if h.revision <= self.committing_to.load(Ordering::Acquire) {
                // This writer's own commit, notified before it returned here.
                return;
            }
            lock(&self.sync).lag.saw_head(h.revision, Instant::now());
            if h.revision <= *lock(&self.published) {
                return;
            }
        }
        // Ahead of what is applied, or another incarnation (or none): `follow` decides.
        if !self.retired() {
            self.nudge();
        }
    }

    fn retry(&self) {
        self.nudge();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<S: State> Writer<S> {
    /// One group of queued work: following first when asked (or rebuilding a state a failed
    /// commit left unsure), then the writes, applied each as its own revision, committed
    /// durably in one batch, published and acknowledged.
    ///
    /// The writer never waits on storage between groups: when storage cannot make a write
    /// durable (full disk, failed database) it refuses the whole group fast, before applying
    /// anything, and tries again at the next group. After a failed commit its state may be ahead
    /// of the records, so it reloads from them first (once the backend is writable again, since
    /// a failed database may still show the refused batch).
    fn step(&self, r: &mut Run<S>, msgs: Vec<Msg<S>>) {
        let h = self;
        let mut new_id = || uuid::Uuid::new_v4().to_string();
        let mut jobs = Vec::new();
        let mut follow_now = false;
        for m in msgs {
            match m {
                Msg::Write(j) => jobs.push(j),
                Msg::Follow => follow_now = true,
            }
        }
        // A retired store (deleted or created again elsewhere) has nothing left to follow.
        if follow_now && h.follows() && !h.retired() {
            if !r.stale {
                if let Err(e) = follow(h, &mut r.snap, &mut r.aside) {
                    tracing::debug!(store = %h.id, error = %e, "following the datastore failed; trying again");
                }
            } else if h.backend.writable().is_ok() && r.last_reload.is_none_or(|t| t.elapsed() >= RELOAD_INTERVAL) {
                // A failed commit left the state unsure. An idle replica must not wait for a
                // write (which a load balancer will not send it while it is unready) to
                // rebuild: it does so here (the follower wakes it at every poll) as soon as the
                // datastore answers again.
                r.last_reload = Some(Instant::now());
                match reload(h) {
                    Ok(rebuilt) => {
                        adopt(h, &mut r.snap, &mut r.aside, rebuilt);
                        h.set_stale(r, false);
                        if lock(&h.refusing).take().is_some() {
                            tracing::info!(store = %h.id, "the datastore answers again; accepting writes");
                        }
                    }
                    Err(e) => tracing::debug!(store = %h.id, error = %e, "rebuilding after a failed commit failed"),
                }
            }
        }
        if jobs.is_empty() {
            return;
        }
        if h.retired() {
            // Nothing of this copy may be written: the caller finds the store as it is now.
            for job in jobs {
                job.reply.send(Err(KernelError::StoreReplaced(h.id.to_string()).into()));
            }
            return;
        }
        let ready = h.backend.writable().map_err(S::Error::from).and_then(|()| {
            if !r.stale {
                return Ok(());
            }
            // A reload reads the whole store: at most a few per second while it keeps failing.
            if r.last_reload.is_some_and(|t| t.elapsed() < RELOAD_INTERVAL) {
                return Err(KernelError::StorageUnavailable(
                    lock(&h.refusing).clone().unwrap_or_else(|| "reloading after a failed commit".into()),
                )
                .into());
            }
            r.last_reload = Some(Instant::now());
            let (s, g) = reload(h)?;
            (r.snap, r.aside) = (s, g);
            h.set_stale(r, false);
            Ok(())
        });
        if let Err(e) = ready {
            let reason = e.to_string();
            let mut refusing = lock(&h.refusing);
            // Logged when refusing starts, not per write: a full disk may also hold the log.
            if refusing.is_none() {
                tracing::warn!(store = %h.id, error = %reason, "refusing writes: storage is not writable");
            }
            *refusing = Some(reason);
            drop(refusing);
            for job in jobs {
                job.reply.send(Err(S::duplicate_error(&e)));
            }
            return;
        }
        if lock(&h.refusing).take().is_some() {
            tracing::info!(store = %h.id, "storage is writable again; accepting writes");
        }
        h.metrics.observe_batch(jobs.len());
        let now_ms = h.clock.now_ms();
        let (cmds, replies): (Vec<S::Command>, Vec<_>) = jobs.into_iter().map(|j| (j.cmd, j.reply)).unzip();
        // On a shared backend the commands and the state before them are kept, to decide them
        // again on the datastore's newest state when this one turns out to be behind it.
        let again = h.backend.shared().then(|| (cmds.clone(), r.snap.clone()));
        let mut stale = r.stale;
        let mut group = apply_group(h, &mut r.snap, &mut r.aside, cmds, now_ms, &mut new_id);
        stale |= group.stale;
        if let Some((cmds, before)) = &again {
            // A write is validated against the newest committed state, never refused (or
            // answered as a no-op) because this replica lags: a group in which a command wrote
            // nothing is decided again once caught up, if another replica has moved the head.
            // (A group that writes learns it at the commit: the head's compare-and-set.)
            if group.unwritten > 0 && !group.stale && head_moved(h, before.revision()) {
                tracing::debug!(store = %h.id, "a write refused or answered on a state behind the head; deciding it again at the head");
                group = decide_at_head(
                    h,
                    (&mut r.snap, &mut r.aside),
                    before,
                    cmds.clone(),
                    now_ms,
                    &mut new_id,
                    &mut stale,
                );
            }
        }
        if !group.ops.is_empty() {
            h.committing_to.fetch_max(group.meta.revision, Ordering::AcqRel);
            let mut committed = commit(h, std::mem::take(&mut group.ops));
            if let (Err(KernelError::WriteConflict(why)), Some((cmds, before))) = (&committed, again) {
                // Another writer committed first: nothing of the group was applied. Catch up
                // with the head and apply the same commands once more; each re-validates against
                // the newer state (one that is now invalid is refused with its own error).
                tracing::info!(store = %h.id, reason = %why, "commit lost a race; applying the group again at the head");
                // Those revisions are another writer's now: the follower must not take them
                // for this writer's own.
                h.committing_to.store(*lock(&h.published), Ordering::Release);
                group = decide_at_head(h, (&mut r.snap, &mut r.aside), &before, cmds, now_ms, &mut new_id, &mut stale);
                committed = if group.ops.is_empty() {
                    Ok(())
                } else {
                    h.committing_to.fetch_max(group.meta.revision, Ordering::AcqRel);
                    commit(h, std::mem::take(&mut group.ops))
                };
            }
            match committed {
                Ok(()) => {
                    *lock(&h.meta) = group.meta;
                    h.publish(group.snaps);
                }
                Err(e) => {
                    // Not committed: a head at those revisions is not this writer's.
                    h.committing_to.store(*lock(&h.published), Ordering::Release);
                    tracing::error!(store = %h.id, error = %e, "commit failed; reloading from durable state");
                    group.results = group.results.into_iter().map(|r| r.and(Err(e.clone().into()))).collect();
                    stale = true;
                    // The common case (a backend that refused before writing) is usable at
                    // once: reload now, so the next group does not pay for it.
                    if h.backend.writable().is_ok() {
                        r.last_reload = Some(Instant::now());
                        if let Ok((s, g)) = reload(h) {
                            (r.snap, r.aside) = (s, g);
                            stale = false;
                        }
                    }
                }
            }
        }
        h.set_stale(r, stale);
        let acks = replies.into_iter().zip(group.results);
        for (reply, r) in acks {
            reply.send(r);
        }
    }

    /// Marks the writer's state unsure (or sure again); an unsure state on a followed backend
    /// asks the follower to wake the writer at every poll, to rebuild it without waiting for a
    /// write.
    fn set_stale(&self, r: &mut Run<S>, stale: bool) {
        if r.stale == stale {
            return;
        }
        r.stale = stale;
        if let (Some(f), true) = (&self.runtime.follower, self.follows()) {
            if stale {
                f.retry(self.id.clone());
            } else {
                f.settled(&self.id);
            }
        }
    }
}

/// Whether the datastore's head is past `revision` (another replica committed since). A head
/// that cannot be read says nothing: the group goes on, and its commit will tell.
fn head_moved<S: State>(h: &Writer<S>, revision: u64) -> bool {
    matches!(h.backend.head(&h.id), Ok(Some(head)) if head.revision > revision)
}

/// Decides `cmds` again on the datastore's newest state: the writer's state goes back to
/// `before` (the state the group was first applied to; its aside too), catches up with the head
/// by replaying the log (or rebuilding, see `follow`), and the group is applied there. When
/// catching up fails, the state is rebuilt from the records; when that fails too, the state is
/// marked stale and the group refused.
fn decide_at_head<S: State>(
    h: &Writer<S>,
    (snap, aside): (&mut S, &mut S::Aside),
    before: &S,
    cmds: Vec<S::Command>,
    now_ms: i64,
    new_id: &mut dyn FnMut() -> String,
    stale: &mut bool,
) -> Group<S> {
    *snap = before.clone();
    before.rewind(aside);
    if let Err(e) = follow(h, snap, aside) {
        tracing::info!(store = %h.id, error = %e, "catching up before deciding a group again failed; rebuilding from the records");
        match reload(h) {
            Ok(rebuilt) => adopt(h, snap, aside, rebuilt),
            Err(e) => {
                tracing::error!(store = %h.id, error = %e, "rebuilding before deciding a group again failed");
                *stale = true;
                let mut g = Group::empty(lock(&h.meta).clone());
                g.results = cmds.iter().map(|_| Err(S::duplicate_error(&e))).collect();
                return g;
            }
        }
    }
    *stale = false;
    let group = apply_group(h, snap, aside, cmds, now_ms, new_id);
    *stale |= group.stale;
    group
}

/// A group of commands applied to the writer's state, not yet committed.
struct Group<S: State> {
    /// The records to commit: every applied command's, each ending with its meta record.
    ops: Vec<Op>,
    /// The state after each applied command, to publish once the commit is durable.
    snaps: Vec<Arc<S>>,
    /// One answer per command, in order.
    results: Vec<Reply<S>>,
    /// The revision record as of the last applied command.
    meta: MetaRecord,
    /// A command was applied and then dropped (its records did not encode): the writer's
    /// state may differ from the records.
    stale: bool,
    /// Commands that wrote nothing (refused, or answered without a change).
    unwritten: usize,
}

impl<S: State> Group<S> {
    fn empty(meta: MetaRecord) -> Self {
        Group { ops: Vec::new(), snaps: Vec::new(), results: Vec::new(), meta, stale: false, unwritten: 0 }
    }
}

/// Applies `cmds` in order, each as its own revision, advancing `snap`.
fn apply_group<S: State>(
    h: &Writer<S>,
    snap: &mut S,
    aside: &mut S::Aside,
    cmds: Vec<S::Command>,
    now_ms: i64,
    new_id: &mut dyn FnMut() -> String,
) -> Group<S> {
    let mut g = Group::empty(lock(&h.meta).clone());
    let retention = h.config.log_retention.max(1);
    for cmd in cmds {
        // The command as it arrived and the ids generated for it go into the revision log, so
        // that a follower applying the same command to the same state gets the same records.
        let logged = cmd.clone();
        let mut ids: Vec<String> = Vec::new();
        let applied = snap.apply(aside, cmd, now_ms, &mut || {
            let id = new_id();
            ids.push(id.clone());
            id
        });
        match applied {
            Err(e) => {
                g.unwritten += 1;
                g.results.push(Err(e));
            }
            Ok((out, None)) => {
                g.unwritten += 1;
                g.results.push(Ok((out, snap.revision())));
            }
            Ok((out, Some((mut next, dirty)))) => {
                let revision = snap.revision() + 1;
                next.stamp(revision, now_ms);
                g.meta.revision = revision;
                g.meta.committed_at_ms = Some(now_ms);
                match next.encode(&dirty).and_then(|mut o| {
                    let entry = LogEntry {
                        revision,
                        committed_at_ms: now_ms,
                        command: serde_json::to_value(&logged)
                            .map_err(|e| KernelError::Storage(format!("cannot log a command: {e}")))?,
                        ids,
                        digest: log::digest(&o),
                        change: S::change(&logged, &out),
                    };
                    o.push(Op::Put(log_key(revision), entry.encode()?));
                    if revision > retention {
                        o.push(Op::Del(log_key(revision - retention)));
                    }
                    o.push(meta_op(&g.meta)?);
                    Ok(o)
                }) {
                    Ok(o) => {
                        g.ops.extend(o);
                        *snap = next;
                        g.snaps.push(Arc::new(snap.clone()));
                        g.results.push(Ok((out, revision)));
                    }
                    Err(e) => {
                        // Applied (the aside may have grown) but dropped.
                        g.stale = true;
                        g.results.push(Err(e));
                    }
                }
            }
        }
    }
    g
}

/// Commits a group's records, marking the commit in progress for `writer_stuck`.
fn commit<S: State>(h: &Writer<S>, ops: Vec<Op>) -> Result<()> {
    *lock(&h.committing_since) = Some(Instant::now());
    let committed = h.pins.commit(h.backend.as_ref(), &h.id, ops, |ops| h.backend.commit(&h.id, ops));
    *lock(&h.committing_since) = None;
    committed
}

/// Least time between two reloads of a writer's state while they keep failing.
const RELOAD_INTERVAL: Duration = Duration::from_millis(250);

/// Rebuilds the writer's state from the durable records (after a failed commit or encode).
///
/// Only this incarnation's records: a store deleted (no revision record) or created again (another
/// incarnation) by another process retires the writer instead (`StoreReplaced`).
fn reload<S: State>(h: &Writer<S>) -> Result<(S, S::Aside), S::Error> {
    let raw = h.backend.load(&h.id)?;
    let meta = raw.iter().find(|(k, _)| k.as_slice() == META_KEY).map(|(k, v)| dec::<MetaRecord>(k, v)).transpose()?;
    if meta.as_ref().map(|m| m.incarnation.as_deref()) != Some(h.incarnation()) {
        h.retired.store(true, std::sync::atomic::Ordering::Release);
        return Err(KernelError::StoreReplaced(h.id.to_string()).into());
    }
    let (mut state, aside) = S::load(&h.id, &raw)?;
    state.tune(&h.config);
    Ok((state, aside))
}

/// Follows the other replicas of a shared backend: polls the head and, when it is ahead of the
/// writer's state, replays the revision log from the state's revision to the head (each
/// command applied with its recorded time and ids, its records checked against the logged
/// digest) and publishes every replayed revision, which wakes `at_least` waiters and keeps
/// `at_exact` reads of them possible here. When the log cannot be replayed (pruned past this
/// replica, written before the log existed, or a replay that writes other records than the
/// writer did), the state is rebuilt from the records instead. Runs on the writer thread, so
/// the writer's state and the published snapshot stay one; revisions only move forward.
/// Answers whether the state moved.
fn follow<S: State>(h: &Writer<S>, snap: &mut S, aside: &mut S::Aside) -> Result<bool, S::Error> {
    let head = match h.backend.head(&h.id) {
        Ok(head) => head,
        Err(e) => {
            h.polled(Err(e.clone()), snap.revision());
            return Err(e.into());
        }
    };
    if h.backend.shared() && !h.same_store(head.as_ref()) {
        // Deleted, or created again, by another process: nothing of it is this store's.
        return Err(KernelError::StoreReplaced(h.id.to_string()).into());
    }
    let Some(head) = head.map(|h| h.revision) else {
        h.polled(Ok(snap.revision()), snap.revision());
        return Ok(false);
    };
    h.polled(Ok(head), snap.revision());
    if head <= snap.revision() {
        return Ok(false);
    }
    let from = snap.revision();
    let mut trial = snap.clone();
    match replay(h, &mut trial, aside, head) {
        Ok(snaps) if !snaps.is_empty() => {
            *snap = trial;
            lock(&h.sync).replayed += snaps.len() as u64;
            tracing::debug!(store = %h.id, from, to = snap.revision(), "replayed another replica's revisions");
            h.publish(snaps);
            return Ok(true);
        }
        Ok(_) => {}
        Err(e) => {
            tracing::info!(store = %h.id, from, head, reason = %e, "cannot replay the revision log; rebuilding from the records")
        }
    }
    let (s, g) = reload(h)?;
    if s.revision() < head {
        return Err(KernelError::Integrity(format!(
            "store `{}`: the records are at revision {} but the head is at {head}",
            h.id,
            s.revision()
        ))
        .into());
    }
    lock(&h.sync).rebuilds += 1;
    adopt(h, snap, aside, (s, g));
    Ok(true)
}

/// Makes a state rebuilt from the records the writer's, publishing it when it is ahead of what
/// readers see (revisions only move forward).
fn adopt<S: State>(h: &Writer<S>, snap: &mut S, aside: &mut S::Aside, (s, g): (S, S::Aside)) {
    (*snap, *aside) = (s, g);
    if snap.revision() > *lock(&h.published) {
        h.publish(vec![Arc::new(snap.clone())]);
    }
}

/// Applies the logged revisions after `snap`'s up to `head` to `snap`, checking each against
/// its log record; answers the snapshot of each. Any mismatch is an error, after which the
/// caller rebuilds (the aside may have grown, which a rebuild undoes).
fn replay<S: State>(h: &Writer<S>, snap: &mut S, aside: &mut S::Aside, head: u64) -> Result<Vec<Arc<S>>, S::Error> {
    let mut snaps = Vec::new();
    let mut next_rev = snap.revision() + 1;
    while next_rev <= head {
        let rows = h.backend.scan(&h.id, &log_key(next_rev), &log_key(head.saturating_add(1)), REPLAY_BATCH)?;
        if rows.is_empty() {
            return Err(KernelError::Integrity(format!("revision {next_rev} is not in the log")).into());
        }
        for (key, value) in rows {
            let entry = LogEntry::decode(&h.id, &value)?;
            if revision_of(&key) != Some(next_rev) || entry.revision != next_rev {
                return Err(KernelError::Integrity(format!("the log skips from revision {} on", next_rev - 1)).into());
            }
            let cmd: S::Command = serde_json::from_value(entry.command).map_err(|e| {
                KernelError::Integrity(format!("revision {next_rev}: the logged command is unreadable: {e}"))
            })?;
            let mut ids = entry.ids.into_iter();
            let mut short = false;
            let applied = snap.apply(aside, cmd, entry.committed_at_ms, &mut || {
                ids.next().unwrap_or_else(|| {
                    short = true;
                    String::new()
                })
            })?;
            if short || ids.next().is_some() {
                return Err(KernelError::Integrity(format!("revision {next_rev}: the replay used other ids")).into());
            }
            let Some((mut next, dirty)) = applied.1 else {
                return Err(KernelError::Integrity(format!("revision {next_rev}: the replay changed nothing")).into());
            };
            next.stamp(next_rev, entry.committed_at_ms);
            if log::digest(&next.encode(&dirty)?) != entry.digest {
                return Err(
                    KernelError::Integrity(format!("revision {next_rev}: the replay wrote other records")).into()
                );
            }
            *snap = next;
            snaps.push(Arc::new(snap.clone()));
            next_rev += 1;
        }
    }
    Ok(snaps)
}

/// Default bounds for waits and retention.
/// Threads of the writer pool by default: commits wait on the disk or the database, so a few
/// more than cores keep several stores committing at once.
pub const DEFAULT_WRITER_THREADS: usize = 4;

pub fn default_config() -> Config {
    Config {
        retention_window: Duration::from_secs(300),
        retention_max: 10_000,
        consistency_wait: Duration::from_secs(2),
        attempt_ttl: Duration::from_secs(600),
        max_attempts: 100_000,
        write_wait: Duration::from_secs(5),
        min_free_bytes: min_free_bytes_from_env(),
        sled_cache_bytes: super::backend::DEFAULT_SLED_CACHE_BYTES,
        follow_interval: Duration::from_millis(50),
        log_retention: 100_000,
        ready_max_lag: Duration::from_secs(2),
        load_on_first_use: false,
        item_lines_off_writer_from: super::DEFAULT_ITEM_LINES_OFF_WRITER_FROM,
        max_loaded_stores: 10_000,
        idle_store_after: Duration::from_secs(600),
        writer_threads: DEFAULT_WRITER_THREADS,
        follow_notifications: true,
    }
}

/// The free-space reserve: `EARSHOT_MIN_FREE_MB` when set (operators of small volumes, and the
/// full-disk test, which runs on a few MiB of tmpfs), else [`DEFAULT_MIN_FREE_BYTES`]. Read
/// here so that every way of opening a store honours it without a configuration-file change.
fn min_free_bytes_from_env() -> u64 {
    std::env::var("EARSHOT_MIN_FREE_MB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_MIN_FREE_BYTES, |mb| mb.saturating_mul(1024 * 1024))
}
