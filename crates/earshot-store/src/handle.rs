//! One store at run time: the kernel's writer over the composed [`Snapshot`] (see
//! `kernel::writer`), plus what reads add to it: read points, the attempts that pin a snapshot
//! (SPEC §1.10), the search projection, on-demand content, and the agreement check.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dashmap::DashMap;

use crate::compose::Snapshot;
use crate::compose::{rebuild, Records};
use crate::error::{Result, StoreError};
use crate::kernel::backend::{Backend, MetaRecord};
use crate::kernel::writer::Writer;
use crate::kernel::{Clock, Config};
use crate::memory::read::ResolvedContainer;
use crate::memory::search::SearchIndex;
use crate::metrics::StoreMetrics;
use crate::model::{Command, ContainerInput, WriteOutcome};

/// Where a decision reads: a snapshot, the instant constraints are judged at, and, when its
/// answers may not be used (an `at_exact` read of an older revision, or of one whose judgements
/// time has changed since: see [`StoreHandle::read_point`]), the newest revision (the answer is
/// then historical; it may equal the snapshot's own).
#[derive(Clone)]
pub struct ReadPoint {
    pub snapshot: Arc<Snapshot>,
    pub at_ms: i64,
    pub historical: Option<u64>,
}

/// The latest snapshot of a store, borrowed: see [`StoreHandle::latest_ref`].
pub struct LatestRef(arc_swap::Guard<Arc<Snapshot>>);

impl std::ops::Deref for LatestRef {
    type Target = Snapshot;
    fn deref(&self) -> &Snapshot {
        &self.0
    }
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
    pub(crate) sealed: Arc<Mutex<Option<Arc<crate::memory::model::SealedContext>>>>,
}

/// A running store.
pub struct StoreHandle {
    core: Arc<Writer<Snapshot>>,
    attempts: DashMap<String, Attempt>,
    /// When expired attempts were last swept (a sweep scans them all, so it runs at most once
    /// a second, or when the table is full).
    attempts_swept: Mutex<Instant>,
    /// BM25 projection of item content (see `search`).
    pub(crate) search: SearchIndex,
    /// Dense projection of item embeddings (see `memory::dense`).
    pub(crate) dense: crate::memory::dense::DenseIndex,
    /// Writer queue depth, batch sizes and replica lag, for `/metrics`.
    metrics: Arc<StoreMetrics>,
    /// When this store was last used, on the coarse clock of `crate::tenancy` (eviction).
    last_used: std::sync::atomic::AtomicU32,
}

impl StoreHandle {
    /// Starts a store from its records: rebuilds the projection and spawns the writer.
    pub(crate) fn start(
        id: &str,
        records: &Records,
        backend: Arc<dyn Backend>,
        clock: Arc<dyn Clock>,
        config: Config,
        runtime: &Arc<crate::kernel::Runtime>,
    ) -> Result<Arc<Self>> {
        let state = rebuild(id, records)?;
        let meta: MetaRecord =
            records.meta.clone().ok_or_else(|| StoreError::Integrity(format!("store `{id}` has no meta")))?;
        let metrics = Arc::new(StoreMetrics::default());
        Ok(Arc::new(StoreHandle {
            core: Writer::start(id, state, meta, backend, clock, config, metrics.clone(), runtime)?,
            // Few shards: a store holds few attempts at once, and the default (four per core)
            // costs about 1 KB per store on two cores and 16 KB on sixty-four, for every store.
            attempts: DashMap::with_shard_amount(4),
            attempts_swept: Mutex::new(Instant::now()),
            search: SearchIndex::new()?,
            dense: crate::memory::dense::DenseIndex::new(),
            metrics,
            last_used: std::sync::atomic::AtomicU32::new(crate::tenancy::tick()),
        }))
    }

    /// Rebuilds the search projection in a background thread (the service calls this at
    /// start-up; otherwise the first context read does it). Context reads wait for it, bounded.
    pub fn warm_search(self: &Arc<Self>) {
        if self.latest().item_count() == 0 {
            return;
        }
        let weak = Arc::downgrade(self);
        let _ = std::thread::Builder::new().name(format!("earshot-index-{}", self.id())).spawn(move || {
            if let Some(h) = weak.upgrade() {
                h.warm_search_now();
            }
        });
    }

    /// Rebuilds the search projection on this thread, and the dense projection when the store
    /// holds embeddings.
    pub fn warm_search_now(&self) {
        let latest = self.latest();
        if let Err(e) = self.search_ready(&latest, Duration::from_secs(3600)) {
            tracing::warn!(store = %self.id(), error = %e, "rebuilding the search index failed");
        }
        if latest.vectors.is_some() {
            if let Err(e) = self.dense_ready_within(&latest, Duration::from_secs(3600)) {
                tracing::warn!(store = %self.id(), error = %e, "reading the store's embeddings failed");
            }
        }
    }

    pub fn id(&self) -> &str {
        self.core.id()
    }

    /// Marks the store used now (eviction takes the least recently used first). Costs a load
    /// of two words on the decision path, and a store at most once a second.
    #[inline]
    pub fn touch(&self) {
        let now = crate::tenancy::tick();
        if self.last_used.load(std::sync::atomic::Ordering::Relaxed) != now {
            self.last_used.store(now, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// When the store was last used, on the coarse clock of `crate::tenancy`.
    pub(crate) fn last_used(&self) -> u32 {
        self.last_used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Evicts the store from memory if nothing needs it there: no write queued or running, no
    /// export reading it, no live attempt (an attempt keeps its store loaded until it ends),
    /// and, on a datastore that keeps no history of past revisions (sled), no past revision
    /// still inside the retention window (only this copy could answer it). Answers whether it
    /// evicted; see `Writer::evict_if_idle`.
    pub(crate) fn evict_if_idle(&self) -> bool {
        self.core.evict_if_idle(|| {
            let ttl = self.config().attempt_ttl;
            self.attempts.retain(|_, a| a.created.elapsed() < ttl);
            if !self.attempts.is_empty() {
                return false;
            }
            // A store loaded from its records holds only its newest revision, which loading
            // again gives back alike; a past one it holds inside the window would be lost.
            self.backend().keeps_history() || !self.core.holds_past_revisions()
        })
    }

    /// Drops past revisions held in memory that are out of the retention window (an idle store
    /// otherwise keeps them until its next write).
    pub(crate) fn prune_retained(&self) {
        self.core.prune_retained();
    }

    /// Whether this copy was evicted: a write it refused was never applied, and goes to the
    /// store loaded again ([`crate::Earshot::store`]).
    pub fn evicted(&self) -> bool {
        self.core.evicted()
    }

    /// Which life of the store id this is (see `MetaRecord::incarnation`).
    pub fn incarnation(&self) -> Option<&str> {
        self.core.incarnation()
    }

    /// Whether another replica deleted this store, or deleted it and created it again, since
    /// this copy started: it then answers nothing more, and [`crate::Earshot::store`] starts
    /// the store as it is now.
    pub fn retired(&self) -> bool {
        self.core.retired()
    }

    /// The revision a consistency token of this store names (refusing malformed tokens, and
    /// tokens of another store or of another incarnation of this one).
    pub fn decode_token(&self, token: &str) -> Result<u64> {
        Ok(self.core.decode_token(token)?)
    }

    /// The latest published snapshot, borrowed for one read (the decision path): unlike
    /// [`StoreHandle::latest`] it writes no reference count that other cores share. Hold it
    /// for one read, not across a wait.
    pub fn latest_ref(&self) -> LatestRef {
        LatestRef(self.core.latest_ref())
    }

    /// The latest published (durable) snapshot. Never blocks on writers.
    pub fn latest(&self) -> Arc<Snapshot> {
        self.core.latest()
    }

    /// The clock's current time, used as the snapshot time of latest and `at_least` reads.
    pub fn now_ms(&self) -> i64 {
        self.core.now_ms()
    }

    /// Submits a write and blocks until it is durable (or refused), at most `write_wait`.
    pub fn write(&self, cmd: Command) -> Result<WriteOutcome> {
        let pending = self.metrics.pending_write();
        let written = self.core.write(cmd);
        drop(pending);
        Ok(stamped(&self.core, written?))
    }

    /// [`StoreHandle::write`] without waiting: `done` gets the answer on the writer's thread
    /// (it must only hand it on) once the write is durable or refused, so no thread is parked
    /// for the write (the HTTP API awaits it). The caller bounds its wait with
    /// [`StoreHandle::write_wait`] and then answers [`StoreHandle::not_durable_in_time`];
    /// a write the writer shuts down before doing gets
    /// [`StoreError::Unavailable`](crate::StoreError::Unavailable), and if the writer is gone
    /// before it looks at the write, `done` is dropped uncalled, which the caller answers the
    /// same way.
    pub fn write_then(&self, cmd: Command, done: impl FnOnce(Result<WriteOutcome>) + Send + 'static) -> Result<()> {
        let pending = self.metrics.pending_write();
        let core = self.core.clone();
        self.core.write_then(cmd, move |written| {
            drop(pending);
            done(written.map(|w| stamped(&core, w)));
        })
    }

    /// Longest a write is waited for.
    pub fn write_wait(&self) -> Duration {
        self.core.write_wait()
    }

    /// The refusal of a write not answered within [`StoreHandle::write_wait`] (its outcome
    /// is unknown).
    pub fn not_durable_in_time(&self) -> crate::StoreError {
        self.core.not_durable_in_time().into()
    }

    /// This store's operational figures (writer queue depth, batch sizes, replica lag).
    pub fn metrics(&self) -> &Arc<StoreMetrics> {
        // The lag is read off the follower's own record when asked, rather than on every poll.
        if self.core.follows() {
            let r = self.core.replication();
            self.metrics.set_lag(r.behind_revisions, r.behind_ms);
        }
        &self.metrics
    }

    /// Why writes to this store cannot be made durable now, if so (readiness): a stuck commit
    /// or the storage's own condition (a full disk, a failed database). `None` means healthy.
    /// Reads are served in every case.
    pub fn condition(&self) -> Option<String> {
        self.core.condition()
    }

    /// Consistency token for a revision of this store.
    pub fn token(&self, revision: u64) -> String {
        self.core.token(revision)
    }

    /// How this replica stands against the shared datastore's head (lag).
    pub fn replication(&self) -> crate::kernel::writer::Replication {
        self.core.replication()
    }

    /// Up to `limit` revisions after `after`, from the revision log, in order (the watch
    /// stream). Refused with `RevisionExpired` when the log no longer reaches back to `after`.
    pub fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<crate::kernel::log::LogEntry>> {
        Ok(self.core.log_after(after, limit)?)
    }

    /// Blocks until a revision after `rev` is published here or `wait` passes; answers the
    /// published revision.
    pub fn wait_past(&self, rev: u64, wait: Duration) -> u64 {
        self.core.wait_past(rev, wait)
    }

    /// The snapshot a decision reads and the instant it is judged at (SPEC §1.9, §2.6): the
    /// request's arrival (`now_ms`) for latest and `at_least`; for `at_exact`, the time recorded
    /// with that revision, so the same token always gives the same answer.
    ///
    /// An `at_exact` answer is usable (may admit or allow) only when it is what a read of the
    /// newest state at the time of the request would answer: its revision is the newest the
    /// datastore has (not merely this replica: one that lags would take an older token for the
    /// newest), and no judgement of the snapshot changes between its commit time and `now_ms`
    /// (no grant, edge or capability window and no aggregation window closes or opens in
    /// between: `Snapshot::judged_alike_at`). Otherwise it is marked historical: its decisions
    /// explain what was decided then and are never usable (the "new enemy" rule: neither a
    /// revocation nor an expiry is undone by quoting a token). When the datastore's head cannot
    /// be read, nothing says the revision is the newest, and the answer is historical.
    pub fn read_point(&self, consistency: &crate::memory::model::Consistency, now_ms: i64) -> Result<ReadPoint> {
        // The only public way to a snapshot by consistency: a caller cannot get an older
        // snapshot without its historical marking.
        let snapshot = self.core.snapshot_for(consistency)?;
        if !matches!(consistency, crate::memory::model::Consistency::AtExact(_)) {
            // `at_least`, `fully_consistent` and `latest` read the newest snapshot there was when
            // they picked it, at the request's time; a write that publishes a moment later does
            // not make that answer stale (it would deny a read whose answer was current when it
            // was read: seen under load behind HAProxy).
            return Ok(ReadPoint { snapshot, at_ms: now_ms, historical: None });
        }
        // Read after the snapshot: a write that lands in between makes the read historical,
        // never the other way round.
        let newest = match self.core.newest() {
            Ok(newest) => Some(newest),
            Err(e) => {
                tracing::debug!(store = %self.id(), error = %e, "at_exact: the datastore's head is unknown; the answer is historical");
                None
            }
        };
        let usable = newest == Some(snapshot.revision) && snapshot.judged_alike_at(now_ms);
        let at_ms = snapshot.committed_at_ms;
        let newest = newest.unwrap_or(snapshot.revision).max(snapshot.revision);
        let historical = (!usable).then_some(newest);
        Ok(ReadPoint { snapshot, at_ms, historical })
    }

    /// Pins a snapshot for a model attempt. The attempt is recorded in the datastore before it
    /// is answered (`y/<attempt>`: its container, revision and instant), so that any replica
    /// can serve it, after a failover too (see [`StoreHandle::attempt`]). Blocks on storage.
    pub fn create_attempt(&self, container: ContainerInput, snapshot: Arc<Snapshot>, id: String) -> Result<Attempt> {
        self.purge_attempts();
        if self.attempts.len() >= self.config().max_attempts {
            return Err(StoreError::AttemptCapacity);
        }
        let resolved = snapshot.resolve_container(&container)?;
        let at_ms = self.now_ms();
        let record = AttemptRecord { container, revision: snapshot.revision(), at_ms, created_at_ms: at_ms };
        let bytes = serde_json::to_vec(&record).map_err(|e| StoreError::Storage(format!("encode: {e}")))?;
        if !self.backend().put_new(self.id(), crate::kernel::backend::key(ATTEMPT_PREFIX, &id), bytes)? {
            return Err(StoreError::Storage(format!("attempt id `{id}` is taken")));
        }
        let attempt = Attempt {
            id: id.clone(),
            snapshot,
            container: record.container,
            resolved,
            at_ms,
            created: Instant::now(),
            sealed: Arc::default(),
        };
        self.attempts.insert(id, attempt.clone());
        Ok(attempt)
    }

    /// A live attempt of this replica's by id, without reading storage (`None`: not here; it
    /// may still be another replica's, see [`StoreHandle::attempt`]).
    pub fn attempt_here(&self, id: &str) -> Option<Attempt> {
        self.attempts.get(id).filter(|a| a.created.elapsed() < self.config().attempt_ttl).map(|a| a.clone())
    }

    /// A live attempt by id: this replica's, or one another replica created, read from the
    /// datastore and pinned here to the same snapshot (its revision, built from the datastore's
    /// history when this replica does not hold it), the same container and the same instant,
    /// so that every read naming it answers as on the replica that created it. Blocks on
    /// storage when the attempt is not here.
    pub fn attempt(&self, id: &str) -> Result<Attempt> {
        if let Some(a) = self.attempt_here(id) {
            return Ok(a);
        }
        let missing = || StoreError::AttemptNotFound(id.chars().take(64).collect());
        if id.is_empty() || id.len() > crate::context::MAX_ATTEMPT_ID {
            return Err(missing());
        }
        let Some(bytes) = self.backend().get(self.id(), &crate::kernel::backend::key(ATTEMPT_PREFIX, id))? else {
            return Err(missing());
        };
        let record: AttemptRecord = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::Integrity(format!("the record of attempt `{id}` is unreadable: {e}")))?;
        let age = Duration::from_millis(u64::try_from(self.now_ms().saturating_sub(record.created_at_ms)).unwrap_or(0));
        if age >= self.config().attempt_ttl {
            return Err(missing());
        }
        // The attempt's snapshot, whatever the retention window; gone from the history, the
        // attempt is gone (it never answers from another snapshot).
        let snapshot = match self.core.pinned(record.revision) {
            Ok(s) => s,
            Err(StoreError::RevisionExpired { .. }) => return Err(missing()),
            Err(e) => return Err(e),
        };
        let resolved = snapshot.resolve_container(&record.container)?;
        let attempt = Attempt {
            id: id.to_string(),
            snapshot,
            container: record.container,
            resolved,
            at_ms: record.at_ms,
            created: Instant::now().checked_sub(age).unwrap_or_else(Instant::now),
            sealed: Arc::default(),
        };
        // One attempt object per id: of two readers loading it at once, both use the first.
        Ok(self.attempts.entry(id.to_string()).or_insert(attempt).clone())
    }

    fn purge_attempts(&self) {
        let full = self.attempts.len() >= self.config().max_attempts;
        {
            let mut swept = lock(&self.attempts_swept);
            if !full && swept.elapsed() < Duration::from_secs(1) {
                return;
            }
            *swept = Instant::now();
        }
        let ttl = self.config().attempt_ttl;
        self.attempts.retain(|_, a| a.created.elapsed() < ttl);
        self.purge_attempt_records();
    }

    /// Deletes the records of attempts past their time to live, oldest first (attempt ids are
    /// UUID v7, so their keys sort by creation), a bounded batch per sweep.
    fn purge_attempt_records(&self) {
        let (from, to) = (crate::kernel::backend::key(ATTEMPT_PREFIX, ""), vec![ATTEMPT_PREFIX, b'0']);
        let Ok(rows) = self.backend().scan(self.id(), &from, &to, ATTEMPT_SWEEP) else { return };
        let (now, ttl) = (self.now_ms(), i64::try_from(self.config().attempt_ttl.as_millis()).unwrap_or(i64::MAX));
        let expired: Vec<crate::kernel::backend::Op> = rows
            .into_iter()
            .take_while(|(_, v)| {
                serde_json::from_slice::<AttemptRecord>(v).map_or(true, |r| now.saturating_sub(r.created_at_ms) >= ttl)
            })
            .map(|(k, _)| crate::kernel::backend::Op::Del(k))
            .collect();
        if !expired.is_empty() {
            if let Err(e) = self.backend().commit(self.id(), expired) {
                tracing::debug!(store = %self.id(), error = %e, "could not delete the records of expired attempts");
            }
        }
    }

    /// Content and attributes of an item, read from the durable record.
    pub fn content(&self, item: &str) -> Result<Option<crate::memory::durable::ContentRecord>> {
        self.content_as(item)
    }

    /// [`StoreHandle::content`] parsed as `R`, a view of the record that may name only some
    /// of its fields (the others are skipped unparsed).
    pub(crate) fn content_as<R: serde::de::DeserializeOwned>(&self, item: &str) -> Result<Option<R>> {
        match self.core.backend().get(self.id(), &crate::kernel::backend::key(b'c', item))? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Integrity(format!("content of `{item}` is unreadable: {e}"))),
            None => Ok(None),
        }
    }

    /// This store's durable records as they are now, whatever is written while they are read
    /// (see `kernel::pin`); `wanted` names the keys the reader reads.
    pub(crate) fn pin_records(&self, wanted: fn(&[u8]) -> bool) -> crate::kernel::pin::PinnedRecords {
        self.core.pin(wanted)
    }

    /// The backend this store's records live in.
    pub(crate) fn backend(&self) -> &dyn Backend {
        self.core.backend()
    }

    /// The configured bounds.
    pub(crate) fn config(&self) -> &Config {
        self.core.config()
    }

    /// Reads every record of this store from the backend (for the flat evaluator and checks).
    pub fn durable_records(&self) -> Result<Records> {
        Records::decode(&self.backend().load(self.id())?)
    }

    /// Checks that the latest snapshot agrees with a fresh rebuild from the durable records.
    /// Writes that land between the two reads make it report a revision mismatch; retry then.
    pub fn verify(&self) -> Result<String> {
        let records = self.durable_records()?;
        let index = crate::compose::agreement(&self.latest(), &records)?;
        let search = self.verify_search()?;
        let dense = self.verify_dense()?;
        Ok(format!("{index}; {search}; {dense}"))
    }

    /// Stops the writer after it drains queued writes.
    pub fn shutdown(&self) {
        self.core.shutdown();
    }
}

/// Key prefix of the records of open attempts (`y/<attempt>`): on-demand, never projected.
const ATTEMPT_PREFIX: u8 = b'y';

/// Most attempt records one sweep deletes.
const ATTEMPT_SWEEP: usize = 256;

/// What the datastore keeps of an open attempt: enough for any replica to pin the same
/// snapshot for it and judge at the same instant.
#[derive(serde::Serialize, serde::Deserialize)]
struct AttemptRecord {
    container: ContainerInput,
    revision: u64,
    at_ms: i64,
    created_at_ms: i64,
}

/// A fresh attempt id: a UUID v7 (random, and sorting by creation, so that expired attempts'
/// records are swept from the front of their range).
pub fn new_attempt_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A write's answer with the revision and token of the commit that made it durable. An answer
/// replayed for an `Idempotency-Key` already carries the revision and token of the write that
/// recorded it (no write has revision 0: a store's creation is 1).
fn stamped(core: &Writer<Snapshot>, (mut out, revision): (WriteOutcome, u64)) -> WriteOutcome {
    if out.revision == 0 {
        out.revision = revision;
        out.token = core.token(revision);
    }
    out
}
