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
mod handle;
pub mod kernel;
pub mod memory;
pub mod metrics;
pub mod model;
#[cfg(test)]
mod read_tests;

use std::sync::{Arc, Mutex};

use dashmap::DashMap;

pub use compose::Records;
pub use compose::Snapshot;
pub use context::{Params, Ranked, Ranking};
pub use error::{Result, StoreError};
pub use handle::{Attempt, ReadPoint, StoreHandle};
pub use kernel::backend::{Backend, MemoryBackend, Op, SledBackend};
pub use kernel::{token, Clock, Config, ManualClock, SystemClock};
pub use memory::read::{RawDecision, ResolvedContainer};
pub use memory::snapshot::{Aid, Gid, Iid, MemorySnapshot, Pid};
pub use memory::{flat, search, verify};

use kernel::backend::{meta_op, MetaRecord};
use model::WriteOutcome;

/// All stores of one Earshot process over one backend.
pub struct Earshot {
    backend: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    config: Config,
    stores: DashMap<String, Arc<StoreHandle>>,
    create_lock: Mutex<()>,
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
        let backend = SledBackend::open_with_reserve(path, config.min_free_bytes).map_err(damaged)?;
        Self::open_with(Arc::new(backend), Arc::new(SystemClock), config).map_err(damaged)
    }

    /// Starts every store found in `backend`, rebuilding each projection from its records.
    pub fn open_with(backend: Arc<dyn Backend>, clock: Arc<dyn Clock>, config: Config) -> Result<Self> {
        let e = Earshot { backend, clock, config, stores: DashMap::new(), create_lock: Mutex::new(()) };
        for id in e.backend.stores()? {
            let records = Records::decode(&e.backend.load(&id)?)?;
            if records.meta.is_none() {
                continue;
            }
            let h = StoreHandle::start(&id, &records, e.backend.clone(), e.clock.clone(), e.config.clone())?;
            e.stores.insert(id, h);
        }
        Ok(e)
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
        if self.stores.contains_key(id) {
            return Err(StoreError::StoreExists(id.to_string()));
        }
        let meta = MetaRecord {
            id: id.to_string(),
            name,
            revision: 1,
            created_at_ms: self.clock.now_ms(),
            committed_at_ms: None,
        };
        self.backend.commit(id, vec![meta_op(&meta)?])?;
        let records = Records { meta: Some(meta), ..Records::default() };
        let h = StoreHandle::start(id, &records, self.backend.clone(), self.clock.clone(), self.config.clone())?;
        self.stores.insert(id.to_string(), h);
        Ok(WriteOutcome {
            outcome: "created".into(),
            ids: vec![id.to_string()],
            revision: 1,
            token: token::encode(id, 1),
            ..Default::default()
        })
    }

    /// A running store by id.
    pub fn store(&self, id: &str) -> Result<Arc<StoreHandle>> {
        self.stores.get(id).map(|h| h.clone()).ok_or_else(|| StoreError::StoreNotFound(id.chars().take(128).collect()))
    }

    /// Ids of every running store.
    pub fn store_ids(&self) -> Vec<String> {
        let mut v: Vec<String> = self.stores.iter().map(|e| e.key().clone()).collect();
        v.sort();
        v
    }

    /// Starts rebuilding every store's search index in the background.
    pub fn warm_search(&self) {
        for e in self.stores.iter() {
            e.value().warm_search();
        }
    }

    /// Every store that cannot make writes durable now, with the reason (readiness). A
    /// backend that reports a condition of its own (an unreachable database) with no store
    /// running is listed under the empty name, so that a fresh service is not ready either.
    pub fn degraded(&self) -> std::collections::BTreeMap<String, String> {
        let mut out: std::collections::BTreeMap<String, String> =
            self.stores.iter().filter_map(|e| e.value().condition().map(|c| (e.key().clone(), c))).collect();
        if out.is_empty() {
            if let Some(c) = self.backend.condition() {
                out.insert(String::new(), c);
            }
        }
        out
    }

    /// Stops every writer after draining queued writes.
    pub fn shutdown(&self) {
        for e in self.stores.iter() {
            e.value().shutdown();
        }
    }
}

impl Drop for Earshot {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A fresh random identifier (UUID v4), for items, grants and attempts created without one.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
