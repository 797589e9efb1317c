//! One store at run time: its writer thread (serialised writes, group commit), the published
//! latest snapshot, the retention window for `at_exact` reads, waits for `at_least`, attempts.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use dashmap::DashMap;

use crate::apply::{Apply, Dirty};
use crate::durable::{encode, rebuild, Backend, MetaRecord, Records};
use crate::error::{Result, StoreError};
use crate::graph::Provenance;
use crate::model::{Command, ContainerInput, WriteOutcome};
use crate::read::ResolvedContainer;
use crate::search::SearchIndex;
use crate::snapshot::Snapshot;
use crate::{token, Clock, Config};

/// Most commands folded into one durable commit.
const MAX_GROUP: usize = 256;

/// Where a decision reads: a snapshot, the instant constraints are judged at, and, when the
/// snapshot is older than the newest, the newest revision (the answer is then historical).
#[derive(Clone)]
pub struct ReadPoint {
    pub snapshot: Arc<Snapshot>,
    pub at_ms: i64,
    pub historical: Option<u64>,
}

/// A pinned snapshot for one model attempt (SPEC §1.10).
#[derive(Clone)]
pub struct Attempt {
    pub id: String,
    pub snapshot: Arc<Snapshot>,
    pub container: ContainerInput,
    pub resolved: ResolvedContainer,
    /// The snapshot time: grants and constraints are evaluated at this instant.
    pub at_ms: i64,
    created: Instant,
    /// The attempt's one context, once assembled (SPEC §1.10); the lock also serialises assembly.
    pub(crate) sealed: Arc<Mutex<Option<Arc<crate::model::SealedContext>>>>,
}

struct Job {
    cmd: Command,
    reply: mpsc::SyncSender<Result<WriteOutcome>>,
}

/// A running store.
pub struct StoreHandle {
    id: Arc<str>,
    latest: ArcSwap<Snapshot>,
    retained: Mutex<VecDeque<Arc<Snapshot>>>,
    published: Mutex<u64>,
    published_cv: Condvar,
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// When the writer entered the commit in progress, if one is: a commit that does not
    /// return (storage hung) makes later writes fail fast instead of queueing behind it.
    committing_since: Mutex<Option<Instant>>,
    /// Why the writer's last group was refused before it was applied (storage not writable,
    /// or its state not yet reloaded after a failed commit); repeated to writes refused while
    /// a reload is not due yet, and cleared by the next group that passes.
    refusing: Mutex<Option<String>>,
    attempts: DashMap<String, Attempt>,
    /// When expired attempts were last swept (a sweep scans them all, so it runs at most once
    /// a second, or when the table is full).
    attempts_swept: Mutex<Instant>,
    backend: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    config: Config,
    meta: Mutex<MetaRecord>,
    /// BM25 projection of item content (see `search`).
    pub(crate) search: SearchIndex,
}

impl StoreHandle {
    /// Starts a store from its records: rebuilds the projection and spawns the writer.
    pub(crate) fn start(
        id: &str,
        records: &Records,
        backend: Arc<dyn Backend>,
        clock: Arc<dyn Clock>,
        config: Config,
    ) -> Result<Arc<Self>> {
        let (mut snap, graph) = rebuild(id, records)?;
        let meta = records.meta.clone().ok_or_else(|| StoreError::Integrity(format!("store `{id}` has no meta")))?;
        if meta.committed_at_ms.is_none() {
            // Records from before commit times were kept: the revision counts from now.
            snap.committed_at_ms = clock.now_ms();
        }
        let snap = Arc::new(snap);
        let (tx, rx) = mpsc::channel::<Job>();
        let handle = Arc::new(StoreHandle {
            id: Arc::from(id),
            latest: ArcSwap::new(snap.clone()),
            retained: Mutex::new(VecDeque::from([snap.clone()])),
            published: Mutex::new(snap.revision),
            published_cv: Condvar::new(),
            tx: Mutex::new(Some(tx)),
            writer: Mutex::new(None),
            committing_since: Mutex::new(None),
            refusing: Mutex::new(None),
            attempts: DashMap::new(),
            attempts_swept: Mutex::new(Instant::now()),
            backend,
            clock,
            config,
            meta: Mutex::new(meta),
            search: SearchIndex::new()?,
        });
        let weak = Arc::downgrade(&handle);
        let start = (snap.as_ref().clone(), graph);
        let thread = std::thread::Builder::new()
            .name(format!("earshot-writer-{id}"))
            .spawn(move || writer_loop(weak, rx, start))
            .map_err(|e| StoreError::Storage(format!("cannot start writer: {e}")))?;
        *lock(&handle.writer) = Some(thread);
        Ok(handle)
    }

    /// Rebuilds the search projection in a background thread (the service calls this at
    /// start-up; otherwise the first context read does it). Context reads wait for it, bounded.
    pub fn warm_search(self: &Arc<Self>) {
        if self.latest().item_count() == 0 {
            return;
        }
        let weak = Arc::downgrade(self);
        let _ = std::thread::Builder::new().name(format!("earshot-index-{}", self.id)).spawn(move || {
            if let Some(h) = weak.upgrade() {
                if let Err(e) = h.search_ready(&h.latest(), Duration::from_secs(3600)) {
                    tracing::warn!(store = %h.id, error = %e, "rebuilding the search index failed");
                }
            }
        });
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The latest published (durable) snapshot. Never blocks on writers.
    pub fn latest(&self) -> Arc<Snapshot> {
        self.latest.load_full()
    }

    /// The clock's current time, used as the snapshot time of latest and `at_least` reads.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Submits a write and blocks until it is durable (or refused), at most `write_wait`.
    pub fn write(&self, cmd: Command) -> Result<WriteOutcome> {
        if let Some(reason) = self.writer_stuck() {
            return Err(StoreError::StorageUnavailable(reason));
        }
        let (reply, rx) = mpsc::sync_channel(1);
        {
            let tx = lock(&self.tx);
            let tx = tx.as_ref().ok_or(StoreError::Unavailable)?;
            tx.send(Job { cmd, reply }).map_err(|_| StoreError::Unavailable)?;
        }
        // Bounded: a commit stuck in storage must not hang every caller. The write may still
        // become durable after this answer, so the refusal says its outcome is unknown.
        let wait = self.config.write_wait;
        let mut out = match rx.recv_timeout(wait) {
            Ok(r) => r?,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(StoreError::StorageUnavailable(format!(
                    "the write was not made durable within {} ms; its outcome is unknown",
                    wait.as_millis()
                )))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(StoreError::Unavailable),
        };
        out.token = token::encode(&self.id, out.revision);
        Ok(out)
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
        self.writer_stuck().or_else(|| self.backend.condition())
    }

    /// Consistency token for a revision of this store.
    pub fn token(&self, revision: u64) -> String {
        token::encode(&self.id, revision)
    }

    /// The snapshot a read must use, per its consistency requirement (SPEC §1.10).
    pub fn snapshot_for(&self, consistency: &crate::model::Consistency) -> Result<Arc<Snapshot>> {
        use crate::model::Consistency as C;
        match consistency {
            C::Latest => Ok(self.latest()),
            C::AtLeast(t) => {
                let rev = token::decode(&self.id, t)?;
                self.wait_for(rev)?;
                Ok(self.latest())
            }
            C::AtExact(t) => {
                let rev = token::decode(&self.id, t)?;
                self.wait_for(rev)?;
                self.exact(rev)
            }
        }
    }

    /// The snapshot a decision reads and the instant it is judged at (SPEC §1.9, §2.6): the
    /// request's arrival (`now_ms`) for latest and `at_least`; for `at_exact`, the time recorded
    /// with that revision, so the same token always gives the same answer. A snapshot older than
    /// the newest published one is marked historical: its decisions explain what was decided
    /// then and are never usable (the "new enemy" rule: a revocation is not undone by quoting
    /// an older token).
    pub fn read_point(&self, consistency: &crate::model::Consistency, now_ms: i64) -> Result<ReadPoint> {
        let snapshot = self.snapshot_for(consistency)?;
        // Read after the snapshot: a write that lands in between makes the read historical,
        // never the other way round.
        let latest = self.latest().revision;
        let exact = matches!(consistency, crate::model::Consistency::AtExact(_));
        let at_ms = if exact { snapshot.committed_at_ms } else { now_ms };
        let historical = (snapshot.revision < latest).then_some(latest);
        Ok(ReadPoint { snapshot, at_ms, historical })
    }

    /// Waits (bounded by configuration) until `rev` is published.
    fn wait_for(&self, rev: u64) -> Result<()> {
        let deadline = Instant::now() + self.config.consistency_wait;
        let mut published = lock(&self.published);
        while *published < rev {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StoreError::ConsistencyTimeout { requested: rev, latest: *published });
            }
            published = match self.published_cv.wait_timeout(published, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        Ok(())
    }

    /// The retained snapshot at exactly `rev`.
    fn exact(&self, rev: u64) -> Result<Arc<Snapshot>> {
        let retained = lock(&self.retained);
        let oldest = retained.front().map_or(0, |s| s.revision);
        match retained.binary_search_by_key(&rev, |s| s.revision) {
            Ok(i) => retained.get(i).cloned().ok_or(StoreError::RevisionExpired { requested: rev, oldest }),
            Err(_) => Err(StoreError::RevisionExpired { requested: rev, oldest }),
        }
    }

    /// Pins a snapshot for a model attempt.
    pub fn create_attempt(&self, container: ContainerInput, snapshot: Arc<Snapshot>, id: String) -> Result<Attempt> {
        self.purge_attempts();
        if self.attempts.len() >= self.config.max_attempts {
            return Err(StoreError::AttemptCapacity);
        }
        let resolved = snapshot.resolve_container(&container)?;
        let attempt = Attempt {
            id: id.clone(),
            snapshot,
            container,
            resolved,
            at_ms: self.now_ms(),
            created: Instant::now(),
            sealed: Arc::default(),
        };
        self.attempts.insert(id, attempt.clone());
        Ok(attempt)
    }

    /// A live attempt by id.
    pub fn attempt(&self, id: &str) -> Result<Attempt> {
        match self.attempts.get(id) {
            Some(a) if a.created.elapsed() < self.config.attempt_ttl => Ok(a.clone()),
            _ => Err(StoreError::AttemptNotFound(id.chars().take(64).collect())),
        }
    }

    fn purge_attempts(&self) {
        let full = self.attempts.len() >= self.config.max_attempts;
        {
            let mut swept = lock(&self.attempts_swept);
            if !full && swept.elapsed() < Duration::from_secs(1) {
                return;
            }
            *swept = Instant::now();
        }
        let ttl = self.config.attempt_ttl;
        self.attempts.retain(|_, a| a.created.elapsed() < ttl);
    }

    /// Content and attributes of an item, read from the durable record.
    pub fn content(&self, item: &str) -> Result<Option<crate::durable::ContentRecord>> {
        match self.backend.get(&self.id, &crate::durable::key(b'c', item))? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Integrity(format!("content of `{item}` is unreadable: {e}"))),
            None => Ok(None),
        }
    }

    /// The backend this store's records live in.
    pub(crate) fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The configured bounds.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// Reads every record of this store from the backend (for the flat evaluator and checks).
    pub fn durable_records(&self) -> Result<Records> {
        Records::decode(&self.backend.load(&self.id)?)
    }

    /// Checks that the latest snapshot agrees with a fresh rebuild from the durable records.
    /// Writes that land between the two reads make it report a revision mismatch; retry then.
    pub fn verify(&self) -> Result<String> {
        let records = self.durable_records()?;
        let index = crate::verify::agreement(&self.latest(), &records)?;
        let search = self.verify_search()?;
        Ok(format!("{index}; {search}"))
    }

    /// Stops the writer after it drains queued writes.
    pub fn shutdown(&self) {
        lock(&self.tx).take();
        if let Some(t) = lock(&self.writer).take() {
            let _ = t.join();
        }
    }

    fn publish(&self, snaps: Vec<Arc<Snapshot>>) {
        let Some(last) = snaps.last().cloned() else { return };
        {
            let mut retained = lock(&self.retained);
            retained.extend(snaps);
            let now = self.clock.now_ms();
            let window = i64::try_from(self.config.retention_window.as_millis()).unwrap_or(i64::MAX);
            while retained.len() > 1
                && (retained.len() > self.config.retention_max
                    || retained.front().is_some_and(|s| now.saturating_sub(s.committed_at_ms) > window))
            {
                retained.pop_front();
            }
        }
        let rev = last.revision;
        self.latest.store(last);
        *lock(&self.published) = rev;
        self.published_cv.notify_all();
    }
}

impl Drop for StoreHandle {
    fn drop(&mut self) {
        lock(&self.tx).take();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The writer: takes a group of queued commands, applies each as its own revision, commits the
/// group durably in one batch, then publishes the snapshots and acknowledges.
///
/// The writer never dies and never waits on storage between groups: when storage cannot make
/// a write durable (full disk, failed database) it refuses the whole group fast, before applying
/// anything, and tries again at the next group. After a failed commit its state may be ahead of
/// the records, so it reloads from them first (once the backend is writable again, since a
/// failed database may still show the refused batch).
fn writer_loop(handle: std::sync::Weak<StoreHandle>, rx: mpsc::Receiver<Job>, start: (Snapshot, Provenance)) {
    let (mut snap, mut graph) = start;
    let mut new_id = || uuid::Uuid::new_v4().to_string();
    // Set when the writer's state may not match the records (a command applied and then
    // dropped, or a failed commit): it is rebuilt from the records before the next group.
    let mut stale = false;
    let mut last_reload: Option<Instant> = None;
    while let Ok(first) = rx.recv() {
        let Some(h) = handle.upgrade() else { return };
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        let ready = h.backend.writable().and_then(|()| {
            if !stale {
                return Ok(());
            }
            // A reload reads the whole store: at most a few per second while it keeps failing.
            if last_reload.is_some_and(|t| t.elapsed() < RELOAD_INTERVAL) {
                return Err(StoreError::StorageUnavailable(
                    lock(&h.refusing).clone().unwrap_or_else(|| "reloading after a failed commit".into()),
                ));
            }
            last_reload = Some(Instant::now());
            let (s, g) = reload(&h)?;
            (snap, graph) = (s, g);
            stale = false;
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
                let _ = job.reply.send(Err(same_error(&e)));
            }
            continue;
        }
        if lock(&h.refusing).take().is_some() {
            tracing::info!(store = %h.id, "storage is writable again; accepting writes");
        }
        let now_ms = h.clock.now_ms();
        let mut ops = Vec::new();
        let mut snaps = Vec::new();
        let mut acks: Vec<(mpsc::SyncSender<Result<WriteOutcome>>, Result<WriteOutcome>)> = Vec::new();
        let mut meta = lock(&h.meta).clone();
        for job in jobs {
            let mut a =
                Apply { snap: snap.clone(), graph: &mut graph, now_ms, dirty: Dirty::default(), new_id: &mut new_id };
            let result = a.run(job.cmd);
            let (next, dirty) = (a.snap, a.dirty);
            match result {
                Err(e) => acks.push((job.reply, Err(e))),
                Ok(mut out) if dirty.is_empty() => {
                    out.revision = snap.revision;
                    acks.push((job.reply, Ok(out)));
                }
                Ok(mut out) => {
                    let mut next = next;
                    next.revision = snap.revision + 1;
                    next.committed_at_ms = now_ms;
                    meta.revision = next.revision;
                    meta.committed_at_ms = Some(now_ms);
                    match encode(&next, &dirty, &meta) {
                        Ok(o) => {
                            ops.extend(o);
                            out.revision = next.revision;
                            snap = next;
                            snaps.push(Arc::new(snap.clone()));
                            acks.push((job.reply, Ok(out)));
                        }
                        Err(e) => {
                            // Applied (the graph may have grown) but dropped.
                            stale = true;
                            acks.push((job.reply, Err(e)));
                        }
                    }
                }
            }
        }
        if !ops.is_empty() {
            *lock(&h.committing_since) = Some(Instant::now());
            let committed = h.backend.commit(&h.id, ops);
            *lock(&h.committing_since) = None;
            match committed {
                Ok(()) => {
                    *lock(&h.meta) = meta;
                    h.publish(snaps);
                }
                Err(e) => {
                    tracing::error!(store = %h.id, error = %e, "commit failed; reloading from durable state");
                    acks = acks.into_iter().map(|(reply, r)| (reply, r.and(Err(same_error(&e))))).collect();
                    stale = true;
                    // The common case (a backend that refused before writing) is usable at
                    // once: reload now, so the next group does not pay for it.
                    if h.backend.writable().is_ok() {
                        last_reload = Some(Instant::now());
                        if let Ok((s, g)) = reload(&h) {
                            (snap, graph) = (s, g);
                            stale = false;
                        }
                    }
                }
            }
        }
        for (reply, r) in acks {
            let _ = reply.send(r);
        }
    }
}

/// Least time between two reloads of a writer's state while they keep failing.
const RELOAD_INTERVAL: Duration = Duration::from_millis(250);

/// The same refusal for every write of a group (`StoreError` is not `Clone`: it carries
/// sources). Storage conditions keep their variant; anything else becomes a storage failure
/// with the same message.
fn same_error(e: &StoreError) -> StoreError {
    match e {
        StoreError::InsufficientStorage { available, required } => {
            StoreError::InsufficientStorage { available: *available, required: *required }
        }
        StoreError::StorageUnavailable(m) => StoreError::StorageUnavailable(m.clone()),
        StoreError::Integrity(m) => StoreError::Integrity(m.clone()),
        StoreError::Unavailable => StoreError::Unavailable,
        other => StoreError::Storage(other.to_string()),
    }
}

/// Rebuilds the writer's state from the durable records (after a failed commit or encode).
fn reload(h: &StoreHandle) -> Result<(Snapshot, Provenance)> {
    let records = Records::decode(&h.backend.load(&h.id)?)?;
    rebuild(&h.id, &records)
}

/// Default bounds for waits and retention.
pub(crate) fn default_config() -> Config {
    Config {
        retention_window: Duration::from_secs(300),
        retention_max: 10_000,
        consistency_wait: Duration::from_secs(2),
        attempt_ttl: Duration::from_secs(600),
        max_attempts: 100_000,
        write_wait: Duration::from_secs(5),
        min_free_bytes: min_free_bytes_from_env(),
    }
}

/// The free-space reserve: `EARSHOT_MIN_FREE_MB` when set (operators of small volumes, and the
/// full-disk test, which runs on a few MiB of tmpfs), else [`DEFAULT_MIN_FREE_BYTES`]. Read
/// here so that every way of opening a store honours it without a configuration-file change.
fn min_free_bytes_from_env() -> u64 {
    std::env::var("EARSHOT_MIN_FREE_MB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(crate::durable::DEFAULT_MIN_FREE_BYTES, |mb| mb.saturating_mul(1024 * 1024))
}
