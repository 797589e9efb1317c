//! Durable, revisioned state of Earshot: records in a backend (sled by default), projected into
//! immutable snapshots with per-participant postings and a provenance graph.
//!
//! Layering: this crate depends on `earshot-core` for every rule and adds storage, revisions,
//! snapshots and indexes. Inside, one kernel (`kernel`: backend seam, revisions, the writer)
//! knows nothing of the two domains (`memory`, `devices`), which do not know each other; the
//! crate root composes them (`compose`, `handle`, `context`). See ARCHITECTURE.md. It knows nothing about HTTP and runs no async runtime; callers on an
//! async runtime hand blocking calls (writes, `at_least` waits) to a blocking pool.

mod common;
mod compose;
mod context;
pub mod devices;
pub mod durable;
pub mod error;
pub mod export;
mod handle;
pub mod idempotency;
/// The kernel, its own crate (`earshot-kernel`): the paths `crate::kernel::…` name it.
pub use earshot_kernel as kernel;
pub mod lists;
pub mod memory;
pub use earshot_kernel::metrics;
pub mod model;
#[cfg(test)]
mod read_tests;
mod registry;
pub mod reverse;
pub mod tenancy;
mod timeline;
pub mod tuples;

use std::sync::{Arc, Mutex};

pub use compose::Records;
pub use compose::Snapshot;
pub use context::{Params, Query, Ranked, Ranking, RRF_K};
pub use error::{Result, StoreError};
pub use handle::{new_attempt_id, Attempt, LatestRef, ReadPoint, StoreHandle};
pub use kernel::backend::{Backend, Head, MemoryBackend, Op, RecordsView, SledBackend};
pub use kernel::log::LogEntry;
pub use kernel::writer::Replication;
pub use kernel::{token, Clock, Config, ManualClock, SystemClock};
pub use memory::read::{RawDecision, ResolvedContainer};
pub use memory::search::Statistics;
pub use memory::snapshot::{Aid, Gid, Iid, MemorySnapshot, Pid};
pub use memory::{dense, flat, search, verify};
pub use registry::Running;

use kernel::backend::{dec, meta_op, MetaRecord, META_KEY};
use model::WriteOutcome;

/// Items from which a store's search index is built at start-up rather than on its first
/// context read.
const WARM_SEARCH_FROM: usize = 1_000;

/// All stores of one Earshot process over one backend.
pub struct Earshot {
    backend: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    config: Config,
    stores: registry::Registry<Arc<StoreHandle>>,
    /// The writer pool and the follower every store shares.
    runtime: Arc<kernel::Runtime>,
    create_lock: Mutex<()>,
    /// Ids being imported: created by no one else until the import ends (see `import_store`).
    importing: Mutex<std::collections::HashSet<String>>,
    /// Stores that exist and are not loaded here (evicted, or beyond the cap at start-up), so
    /// that a backend no one else writes to (sled) is asked only about stores that exist.
    unloaded: Mutex<std::collections::HashSet<String>>,
    tenancy: tenancy::TenancyStats,
}

impl Earshot {
    /// Opens (or creates) the embedded sled database at `path` and starts every store in it.
    pub fn open(path: &std::path::Path, config: Config) -> Result<Self> {
        // Damage is reported with the directory and the way out, since this is what an
        // operator reads when the service refuses to start.
        let damaged = |e: StoreError| match e {
            StoreError::Integrity(m) => StoreError::Integrity(format!(
                "cannot open the data directory {}: {m}; restore it from an export or a backup",
                path.display()
            )),
            other => other,
        };
        let backend = SledBackend::open_with(path, config.min_free_bytes, config.sled_cache_bytes)
            .map_err(StoreError::from)
            .map_err(damaged)?;
        Self::open_with(Arc::new(backend), Arc::new(SystemClock), config).map_err(damaged)
    }

    /// Starts every store found in `backend`, rebuilding each projection from its records
    /// (none when `config.load_on_first_use`: each is then started by its first use).
    pub fn open_with(backend: Arc<dyn Backend>, clock: Arc<dyn Clock>, config: Config) -> Result<Self> {
        let runtime = kernel::Runtime::start(&backend, &config)?;
        let e = Earshot {
            backend,
            clock,
            config,
            runtime,
            stores: registry::Registry::new(),
            create_lock: Mutex::new(()),
            importing: Mutex::default(),
            unloaded: Mutex::default(),
            tenancy: tenancy::TenancyStats::default(),
        };
        if e.config.load_on_first_use {
            return Ok(e);
        }
        // Up to the cap; the rest start on their first use.
        let cap = if e.config.max_loaded_stores == 0 { usize::MAX } else { e.config.max_loaded_stores };
        for (n, id) in e.backend.stores()?.into_iter().enumerate() {
            if n >= cap {
                lock(&e.unloaded).insert(id);
            } else if let Some(h) = e.start_store(&id)? {
                e.stores.insert(id, h);
            }
        }
        Ok(e)
    }

    /// Starts a store from its records, if it has any.
    fn start_store(&self, id: &str) -> Result<Option<Arc<StoreHandle>>> {
        let records = Records::decode(&self.backend.load(id)?)?;
        if records.meta.is_none() {
            return Ok(None);
        }
        self.handle_from(id, &records).map(Some)
    }

    /// Starts a store's handle from its records, on this process's writer pool and follower.
    fn handle_from(&self, id: &str, records: &Records) -> Result<Arc<StoreHandle>> {
        StoreHandle::start(id, records, self.backend.clone(), self.clock.clone(), self.config.clone(), &self.runtime)
    }

    /// A fresh in-memory-backed instance in a temporary sled directory (tests, benches).
    pub fn temporary(clock: Arc<dyn Clock>) -> Result<Self> {
        Self::open_with(Arc::new(SledBackend::temporary()?), clock, Config::default())
    }

    /// Creates a store; its creation is its revision 1.
    pub fn create_store(&self, id: &str, name: Option<String>) -> Result<WriteOutcome> {
        error::check_id("id", id)?;
        if name.as_ref().is_some_and(|n| n.len() > model::limits::MAX_TEXT_BYTES) {
            return Err(StoreError::LimitExceeded { field: "name", limit: model::limits::MAX_TEXT_BYTES });
        }
        let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
        // The revision record decides whether the store exists (on a shared backend another
        // replica may have created it). A retry of the create that made the store (same id and
        // name: the revision record keeps both) answers as that create did, at the store's
        // latest revision (as every create retried does), and writes nothing.
        let existing: Option<MetaRecord> = match self.backend.get(id, META_KEY)? {
            Some(v) => Some(dec(META_KEY, &v)?),
            None => None,
        };
        if self.stores.contains(id) || existing.is_some() || lock(&self.importing).contains(id) || self.is_unloaded(id)
        {
            if let Some(m) = existing.filter(|m| m.name == name) {
                return Ok(created_store(id, m.incarnation.as_deref(), m.revision));
            }
            return Err(StoreError::StoreExists(id.to_string()));
        }
        // A new life of this id: tokens and cursors of any earlier store of the same id are
        // refused by this one.
        let meta = MetaRecord {
            id: id.to_string(),
            name,
            revision: 1,
            created_at_ms: self.clock.now_ms(),
            committed_at_ms: None,
            incarnation: Some(kernel::backend::new_incarnation()),
        };
        // The creation is revision 1 of the log too, so that a watch from the beginning sees
        // it; it is never replayed (a store starts from its records at revision 1 or later).
        let created = kernel::log::LogEntry {
            revision: 1,
            committed_at_ms: meta.created_at_ms,
            command: serde_json::Value::Null,
            ids: Vec::new(),
            digest: kernel::log::digest(&[]),
            change: serde_json::json!({"kind": "store_created", "store": id, "outcome": "created"}),
        };
        let ops = vec![Op::Put(kernel::log::log_key(1), created.encode()?), meta_op(&meta)?];
        match self.backend.commit(id, ops) {
            // Another replica created it between the check and the commit.
            Err(kernel::KernelError::WriteConflict(_)) => return Err(StoreError::StoreExists(id.to_string())),
            other => other?,
        }
        let incarnation = meta.incarnation.clone();
        let records = Records { meta: Some(meta), ..Records::default() };
        let h = self.handle_from(id, &records)?;
        self.stores.insert(id.to_string(), h);
        Ok(created_store(id, incarnation.as_deref(), 1))
    }

    /// A streaming export of a store's durable records at its current revision, which writes
    /// made meanwhile do not change ([`export`](crate::export) has the format). On a datastore
    /// with snapshots of its own (PostgreSQL) the export reads one, which no replica's commits
    /// change; elsewhere it pins the records through this process's writer, the only one.
    pub fn export(&self, id: &str) -> Result<export::Export> {
        // Exists here (or, on a shared datastore, anywhere): the same answer as every read.
        let h = self.store(id)?;
        match self.backend.snapshot(id)? {
            Some(view) => export::Export::pinned(kernel::pin::PinnedRecords::viewed(self.backend.clone(), id, view)),
            None => export::Export::pinned(h.pin_records(export::exported_key)),
        }
    }

    /// Imports an export as the new store `id` and starts it. Refused with `StoreExists` when
    /// the store exists or is being imported, `ImportInvalid` when the input is not a whole,
    /// valid export; a refused import leaves nothing behind.
    pub fn import_store(&self, id: &str, input: &mut dyn std::io::BufRead) -> Result<export::Imported> {
        error::check_id("store", id)?;
        {
            let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
            if self.stores.contains(id) || self.is_unloaded(id) || !lock(&self.importing).insert(id.to_string()) {
                return Err(StoreError::StoreExists(id.to_string()));
            }
        }
        let result = export::import(&*self.backend, id, input, self.clock.now_ms()).and_then(|(imported, records)| {
            let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
            let h = self.handle_from(id, &records)?;
            self.stores.insert(id.to_string(), h);
            Ok(imported)
        });
        lock(&self.importing).remove(id);
        result
    }

    /// A store already running in this process, without starting one (no I/O). A copy that
    /// another replica's delete (or re-creation) of the store retired is not running.
    pub fn running(&self, id: &str) -> Option<Arc<StoreHandle>> {
        let h = self.loaded(id)?;
        h.touch();
        Some(h)
    }

    /// A store loaded in this process, without marking it used (listings, metrics and
    /// readiness look at every store: that is not a use, and must not keep idle stores loaded).
    pub fn loaded(&self, id: &str) -> Option<Arc<StoreHandle>> {
        self.stores.get(id).filter(|h| !h.retired())
    }

    /// The stores running in this process now, borrowed: no lock and no reference count that
    /// other cores share (the decision path's way to a store; see `registry`). Hold it for one
    /// read, not across a wait: a store deleted meanwhile stays alive while it is held. A
    /// handle found here may be retired ([`StoreHandle::retired`]): the caller asks, and goes
    /// through [`Earshot::store`] when it is.
    pub fn running_now(&self) -> Running<Arc<StoreHandle>> {
        self.stores.now()
    }

    /// A running store by id. On a shared backend, a store not running here (created by
    /// another replica, or not loaded yet with `load_on_first_use`) is started from the
    /// datastore on its first use; the caller waits for its projection to be built.
    ///
    /// A copy of the store that another replica's delete or re-creation retired is dropped
    /// here, and the store as the datastore holds it now (if at all) is started instead.
    pub fn store(&self, id: &str) -> Result<Arc<StoreHandle>> {
        if let Some(h) = self.running(id) {
            return Ok(h);
        }
        let missing = || StoreError::StoreNotFound(id.chars().take(128).collect());
        let may_exist = self.backend.shared() || self.config.load_on_first_use || self.is_unloaded(id);
        if !may_exist || error::check_id("store", id).is_err() {
            return Err(missing());
        }
        // One start at a time, so that two first uses do not both build the projection.
        let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = self.stores.get(id) {
            if !h.retired() {
                return Ok(h);
            }
            self.stores.remove(id);
            if !h.evicted() {
                h.shutdown();
                tracing::info!(store = id, "dropped a copy of a store that was deleted or created again elsewhere");
            }
        }
        if self.backend.shared() && self.backend.head(id)?.is_none() {
            return Err(missing());
        }
        let started = std::time::Instant::now();
        let h = self.start_store(id)?.ok_or_else(missing)?;
        let reloaded = lock(&self.unloaded).remove(id);
        if reloaded {
            self.tenancy.reloaded(started.elapsed());
        }
        tracing::debug!(store = id, revision = h.latest().revision, reloaded, "started a store on its first use");
        self.stores.insert(id.to_string(), h.clone());
        Ok(h)
    }

    /// Ids of every running store.
    pub fn store_ids(&self) -> Vec<String> {
        let mut v: Vec<String> = self.stores.all().keys().cloned().collect();
        v.sort();
        v
    }

    /// Every store there is: those running here and, on the backend, those not started yet
    /// (on a shared datastore, created by another replica; with `load_on_first_use`, not used
    /// yet), sorted by id. Reads the backend, so off the async workers.
    pub fn list_store_ids(&self) -> Result<Vec<String>> {
        // Otherwise every store was started at open or created here since: the running ones
        // are all (and sled may keep an empty tree under a name that was only ever asked for).
        let mut ids = if self.lazy() { self.backend.stores()? } else { Vec::new() };
        ids.extend(self.stores.all().keys().cloned());
        ids.extend(lock(&self.unloaded).iter().cloned());
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// One page of the stores `visible` admits (the caller's token), by id; running stores
    /// carry their revision.
    pub fn list_stores(
        &self,
        paging: &lists::Paging,
        visible: impl Fn(&str) -> bool,
    ) -> Result<lists::Page<lists::StoreSummary>> {
        // Stores are listed across the process, not within one store: the cursor's tag is
        // the empty store's.
        let pager = lists::Pager::new("stores", "", None, paging)?;
        let rows = self
            .list_store_ids()?
            .into_iter()
            .filter(|id| visible(id) && pager.past(id.as_bytes()))
            .map(|id| {
                let running = self.loaded(&id);
                let revision = running.as_ref().map(|h| h.latest().revision());
                let token = running.as_ref().zip(revision).map(|(h, r)| h.token(r));
                let summary = lists::StoreSummary { token, revision, id: id.clone() };
                (id.into_bytes(), summary)
            })
            .take(pager.limit + 1)
            .collect();
        Ok(pager.finish(rows))
    }

    /// Deletes a store and every record of it. Its writer is stopped first (queued writes
    /// drain and are then gone with the rest); readers already holding a snapshot finish on it.
    /// Under the creation lock, so that a create or first use of the same id waits for it.
    pub fn delete_store(&self, id: &str) -> Result<()> {
        error::check_id("store", id)?;
        let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
        // Asking the backend about a store that never existed would open (create) an empty
        // tree on sled, so it is asked only when a store may exist without running here.
        let exists = self.stores.contains(id)
            || self.is_unloaded(id)
            || (self.lazy() && self.backend.get(id, META_KEY)?.is_some());
        // A store being imported does not exist yet; its import cleans up after itself.
        if !exists || lock(&self.importing).contains(id) {
            return Err(StoreError::StoreNotFound(id.to_string()));
        }
        if let Some(h) = self.stores.remove(id) {
            h.shutdown();
        }
        if let Err(e) = self.backend.drop_store(id) {
            // Nothing was removed: the store runs again, as it was.
            if let Ok(Some(h)) = self.start_store(id) {
                self.stores.insert(id.to_string(), h);
            }
            return Err(e.into());
        }
        lock(&self.unloaded).remove(id);
        tracing::info!(store = id, "deleted a store");
        Ok(())
    }

    /// Whether `id` is a store that exists and is not loaded here.
    fn is_unloaded(&self, id: &str) -> bool {
        lock(&self.unloaded).contains(id)
    }

    /// One pass of keeping many stores cheap (the server runs it every second): advances the
    /// coarse clock stores are marked used with, and evicts stores idle for
    /// `Config::idle_store_after`, then, above `Config::max_loaded_stores`, the least recently
    /// used ones (see `tenancy::candidates`). A store that may not go now (a write queued, an
    /// export or a live attempt, a past revision only it can answer) stays. Eviction never
    /// changes an answer: the store loads again from its records on its next use. Answers how
    /// many stores it evicted.
    pub fn housekeep(&self) -> usize {
        let now = tenancy::advance_tick();
        let all = self.stores.all();
        for h in all.values() {
            h.prune_retained();
        }
        let (idle, cap) = (self.config.idle_store_after, self.config.max_loaded_stores);
        let over = cap > 0 && all.len() > cap;
        let idle_secs = u32::try_from(idle.as_secs()).unwrap_or(u32::MAX);
        // Most passes find nothing to do: checked without allocating.
        let any_idle = idle_secs > 0 && all.values().any(|h| now.saturating_sub(h.last_used()) >= idle_secs);
        if !over && !any_idle {
            return 0;
        }
        let used: Vec<(String, u32)> = all.iter().map(|(id, h)| (id.clone(), h.last_used())).collect();
        drop(all);
        let mut evicted = 0;
        for id in tenancy::candidates(used, now, idle, cap) {
            if self.evict(&id) {
                evicted += 1;
            }
        }
        evicted
    }

    /// Evicts one store from memory if it may go now (see [`Earshot::housekeep`]); answers
    /// whether it did.
    pub fn evict(&self, id: &str) -> bool {
        // Under the creation lock: no first use of the same id starts a copy meanwhile.
        let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
        let Some(h) = self.stores.get(id) else { return false };
        if !h.evict_if_idle() {
            return false;
        }
        self.stores.remove(id);
        lock(&self.unloaded).insert(id.to_string());
        self.tenancy.evicted();
        tracing::debug!(store = id, "evicted an idle store from memory");
        true
    }

    /// Stores loaded and not, evictions and reloads since start-up.
    pub fn tenancy(&self) -> tenancy::Tenancy {
        self.tenancy.figures(self.stores.all().len(), lock(&self.unloaded).len(), self.runtime.pool.threads())
    }

    /// Whether a store may exist without running here: on a shared datastore (another replica
    /// created it) or with stores started on first use.
    fn lazy(&self) -> bool {
        self.backend.shared() || self.config.load_on_first_use
    }

    /// Starts rebuilding the search index of every loaded store large enough for the first
    /// context read to notice it (`WARM_SEARCH_FROM` items), one store at a time on one
    /// background thread; the others index on their first context read.
    pub fn warm_search(&self) {
        let large: Vec<Arc<StoreHandle>> =
            self.stores.all().values().filter(|h| h.latest().item_count() >= WARM_SEARCH_FROM).cloned().collect();
        if large.is_empty() {
            return;
        }
        let spawned = std::thread::Builder::new().name("earshot-index".into()).spawn(move || {
            for h in large {
                h.warm_search_now();
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the search index's warm-up; stores index on first use");
        }
    }

    /// Every store that cannot make writes durable now, with the reason (readiness). A
    /// backend that reports a condition of its own (an unreachable database) with no store
    /// running is listed under the empty name, so that a fresh service is not ready either.
    pub fn degraded(&self) -> std::collections::BTreeMap<String, String> {
        let mut out: std::collections::BTreeMap<String, String> =
            self.stores.all().iter().filter_map(|(id, h)| h.condition().map(|c| (id.clone(), c))).collect();
        if out.is_empty() {
            if let Some(c) = self.backend.condition() {
                out.insert(String::new(), c);
            }
        }
        out
    }

    /// Stops every writer after draining queued writes, then the writer pool and the follower.
    pub fn shutdown(&self) {
        for h in self.stores.all().values() {
            h.shutdown();
        }
        self.runtime.stop();
    }
}

impl Drop for Earshot {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// What creating store `id` (in `incarnation`) answers: its revision 1.
fn created_store(id: &str, incarnation: Option<&str>, revision: u64) -> WriteOutcome {
    WriteOutcome {
        outcome: "created".into(),
        ids: vec![id.to_string()],
        revision,
        token: token::encode(id, incarnation, revision),
        ..Default::default()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A fresh random identifier (UUID v4), for items, grants and attempts created without one.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
