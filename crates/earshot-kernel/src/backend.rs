//! The storage seam: the `Backend` trait, an in-memory implementation, the key encoding, and
//! the revision (meta) record every store has (the sled implementation is `sled_backend`).
//!
//! Nothing here knows what the records mean: a backend stores opaque key-value pairs per store.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{KernelError, Result};

/// One change to a store's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
}

/// Where a store's records live. Implementations must make `commit` atomic (all ops or none)
/// and durable before returning: an acknowledged write must survive a crash.
pub trait Backend: Send + Sync + 'static {
    /// Ids of every store that has records.
    fn stores(&self) -> Result<Vec<String>>;
    /// Every record of one store except the on-demand ones (keys under `c/`, `l/`, `t/` and `y/`, see
    /// [`ON_DEMAND_PREFIXES`]), which are read with `get`, in key order.
    fn load(&self, store: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    /// Applies `ops` atomically and durably.
    fn commit(&self, store: &str, ops: Vec<Op>) -> Result<()>;
    /// One record, for reads of data kept out of the projection (the on-demand records).
    fn get(&self, store: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Writes one record outside the revision sequence (an on-demand record) only if its key
    /// does not exist yet, durably; answers whether it wrote. A backend that other processes
    /// share must decide this atomically against them (the first of two replicas sealing one
    /// attempt's context wins); the default, for a backend only this process writes, reads
    /// and then commits.
    fn put_new(&self, store: &str, key: Vec<u8>, value: Vec<u8>) -> Result<bool> {
        if self.get(store, &key)?.is_some() {
            return Ok(false);
        }
        self.commit(store, vec![Op::Put(key, value)])?;
        Ok(true)
    }
    /// Up to `limit` records of one store with keys in `[from, to)`, in key order (the revision
    /// log's reads).
    fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    /// Whether a commit could be made durable now. Refuses fast when not (a full disk, a
    /// failed database), and may repair the backend on the way; the writer asks before it
    /// applies a group, so a refused group costs no work.
    fn writable(&self) -> Result<()> {
        Ok(())
    }
    /// Why commits cannot be made durable now, if so (for readiness). No side effects.
    fn condition(&self) -> Option<String> {
        None
    }
    /// Whether other processes may commit to the same stores, so that a commit can lose a race
    /// (`KernelError::WriteConflict`) and the writer keeps each group's commands to apply them
    /// once more on the reloaded state. A shared backend's revisioned commit must also refuse
    /// (as a conflict) a commit whose meta record names another incarnation than the head's.
    fn shared(&self) -> bool {
        false
    }
    /// The revision other processes have committed `store` up to, and the store's incarnation,
    /// for a shared backend's followers (`None`: no such store, or a backend no one else writes
    /// to). A writer that is behind it catches up; one of another incarnation retires.
    fn head(&self, _store: &str) -> Result<Option<Head>> {
        Ok(None)
    }
    /// The heads of several stores in one round trip (the follower's sweep over every store
    /// this process has loaded); a store with no head (deleted, or never created) is left out.
    /// The default asks for each in turn.
    fn heads(&self, stores: &[&str]) -> Result<Vec<(String, Head)>> {
        let mut out = Vec::new();
        for store in stores {
            if let Some(h) = self.head(store)? {
                out.push((store.to_string(), h));
            }
        }
        Ok(out)
    }
    /// The feed of changed heads across every store, for a shared backend's one follower per
    /// process (`None`: the follower sweeps the loaded stores' heads at every interval
    /// instead). `notify`: whether the feed may also wait for the datastore's notifications
    /// (PostgreSQL `LISTEN`), which deliver a change as it commits.
    fn head_feed(&self, _notify: bool) -> Result<Option<Box<dyn HeadFeed>>> {
        Ok(None)
    }
    /// Removes every record of `store` (and whatever the backend keeps beside them: sled's
    /// watermark entry, PostgreSQL's head row), durably, so that it is not found again, even
    /// after a restart, and its id can be created anew. The caller stops the store's writer
    /// first. A backend that cannot refuses, and nothing is removed.
    fn drop_store(&self, _store: &str) -> Result<()> {
        Err(KernelError::StorageUnavailable("this datastore cannot delete a store".into()))
    }
    /// Every record of one store as it was at `revision` (the on-demand ones excepted, as for
    /// `load`), for a backend that keeps past values (a shared datastore: so that any replica
    /// can build any retained revision). `None` when it does not keep them back to `revision`.
    fn load_at(&self, _store: &str, _revision: u64) -> Result<Option<Vec<Record>>> {
        Ok(None)
    }
    /// Whether `load_at` can build past revisions (so that a store evicted from memory loses
    /// none of the revisions a token may name).
    fn keeps_history(&self) -> bool {
        false
    }
    /// A read-only view of `store`'s records as they are now, which no later commit changes,
    /// whichever process makes it: the datastore's own snapshot (PostgreSQL's `REPEATABLE
    /// READ`). `None` when the datastore has none; an export then pins the records through
    /// this process's writer ([`crate::pin`]), which sees only this process's commits.
    fn snapshot(&self, _store: &str) -> Result<Option<Box<dyn RecordsView>>> {
        Ok(None)
    }
}

/// One store's records at one instant of the datastore ([`Backend::snapshot`]): reads answer
/// the same whatever is committed after the view was opened. Dropping it ends the snapshot.
pub trait RecordsView: Send {
    /// One record.
    fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Up to `limit` records with keys in `[from, to)`, in key order.
    fn scan(&mut self, from: &[u8], to: &[u8], limit: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
}

/// Key prefixes of on-demand records: large values and write-once audit records that a domain
/// reads one by one with `get` and never projects, so `load` leaves them out. The kernel only
/// reserves the key space; which domain uses it is the domain's business.
pub const ON_DEMAND_PREFIXES: [u8; 4] = [b'c', b'l', b't', b'y'];

pub use crate::sled_backend::DEFAULT_CACHE_BYTES as DEFAULT_SLED_CACHE_BYTES;
pub use crate::sled_backend::{SledBackend, DEFAULT_MIN_FREE_BYTES};

/// One raw record: key and value.
pub type Record = (Vec<u8>, Vec<u8>);

/// A backend in memory: one ordered map per store. Commits are atomic and last as long as the
/// process (benchmarks, the evaluation, tools); `load` follows the trait's contract and leaves
/// out the on-demand records (`c/…`, `t/…`), which are read one by one with `get`.
#[derive(Default)]
pub struct MemoryBackend {
    trees: std::sync::Mutex<MemoryTrees>,
}

/// Store id → its records, in key order.
type MemoryTrees = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

impl MemoryBackend {
    /// Total bytes of keys and values held.
    pub fn bytes(&self) -> usize {
        self.trees().values().flat_map(|t| t.iter()).map(|(k, v)| k.len() + v.len()).sum()
    }

    fn trees(&self) -> std::sync::MutexGuard<'_, MemoryTrees> {
        self.trees.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Backend for MemoryBackend {
    fn stores(&self) -> Result<Vec<String>> {
        Ok(self.trees().keys().cloned().collect())
    }

    fn load(&self, store: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let trees = self.trees();
        let Some(tree) = trees.get(store) else { return Ok(Vec::new()) };
        let on_demand = |k: &[u8]| k.get(1) == Some(&b'/') && k.first().is_some_and(|p| ON_DEMAND_PREFIXES.contains(p));
        Ok(tree.iter().filter(|(k, _)| !on_demand(k)).map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    fn commit(&self, store: &str, ops: Vec<Op>) -> Result<()> {
        let mut trees = self.trees();
        let tree = trees.entry(store.to_string()).or_default();
        for op in ops {
            match op {
                Op::Put(k, v) => {
                    tree.insert(k, v);
                }
                Op::Del(k) => {
                    tree.remove(&k);
                }
            }
        }
        Ok(())
    }

    fn get(&self, store: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.trees().get(store).and_then(|t| t.get(key).cloned()))
    }

    fn drop_store(&self, store: &str) -> Result<()> {
        self.trees().remove(store);
        Ok(())
    }

    fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if from >= to {
            return Ok(Vec::new());
        }
        let trees = self.trees();
        let Some(tree) = trees.get(store) else { return Ok(Vec::new()) };
        let range = (std::ops::Bound::Included(from.to_vec()), std::ops::Bound::Excluded(to.to_vec()));
        Ok(tree.range(range).take(limit).map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

// ---- key space and the revision record ------------------------------------------------

pub const META_KEY: &[u8] = b"m";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetaRecord {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    pub revision: u64,
    pub created_at_ms: i64,
    /// When `revision` was committed: `at_exact` reads of it are judged at this instant (SPEC
    /// §2.6). Absent in records written before it was kept; the store then uses its start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at_ms: Option<i64>,
    /// Which life of the store id this is: random, minted when the store is created (or
    /// imported), so that a store deleted and created again under the same id is another
    /// incarnation. Consistency tokens and list cursors name it, and on a shared datastore the
    /// head carries it, so that neither a token nor a replica of the old store reaches the new
    /// one. Absent for stores created before it was kept (they keep their old tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incarnation: Option<String>,
}

/// A fresh incarnation: 64 random bits, in hex.
pub fn new_incarnation() -> String {
    let id = uuid::Uuid::new_v4();
    hex::encode(&id.as_bytes()[..8])
}

/// A shared datastore's head of one store: the newest revision committed by any process, and
/// the incarnation of the store it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub revision: u64,
    pub incarnation: Option<String>,
}

/// A store whose head changed: its new head, or `None` when it was deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub store: String,
    pub head: Option<Head>,
}

/// Which stores' heads changed, across every store of a shared datastore: what one follower per
/// process reads instead of polling each store (so that following costs what changed, not how
/// many stores there are).
pub trait HeadFeed: Send {
    /// Every head changed since the previous poll (the first poll: since the feed opened). May
    /// answer a change more than once, never miss one that committed before the poll began.
    fn poll(&mut self) -> Result<Vec<Changed>>;
    /// Waits up to `wait` for notifications of changes and answers them (empty when none came,
    /// or when the feed has no notifications: it then just waits). A notification may be lost
    /// (a dropped connection): `poll` is the fallback that finds the change anyway.
    fn wait(&mut self, wait: std::time::Duration) -> Result<Vec<Changed>>;
}

pub fn key(prefix: u8, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(id.len() + 2);
    k.push(prefix);
    k.push(b'/');
    k.extend_from_slice(id.as_bytes());
    k
}

pub fn enc<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| KernelError::Storage(format!("encode: {e}")))
}

pub fn dec<T: for<'de> Deserialize<'de>>(k: &[u8], v: &[u8]) -> Result<T> {
    serde_json::from_slice(v)
        .map_err(|e| KernelError::Integrity(format!("record `{}` is unreadable: {e}", String::from_utf8_lossy(k))))
}

pub fn meta_op(meta: &MetaRecord) -> Result<Op> {
    Ok(Op::Put(META_KEY.to_vec(), enc(meta)?))
}
