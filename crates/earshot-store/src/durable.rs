//! Durable records and the storage seam: the `Backend` trait, its sled implementation, the
//! encoding of touched records, and the rebuild of a snapshot from records at start-up.
//!
//! The records are the ground truth. Everything in a [`Snapshot`] (postings, the provenance
//! graph, memoised currentness, interned ids) is a projection rebuilt from them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use earshot_core::{AudienceDigest, AudienceKind, Currentness, State};
use serde::{Deserialize, Serialize};

use crate::apply::Dirty;
use crate::error::{Result, StoreError};
use crate::graph::Provenance;
use crate::layered::{IdTable, NameMap};
use crate::model::{Attributes, ParticipantKind};
use crate::snapshot::{Aid, AudRec, Gid, GrantRec, Iid, ItemRec, Members, PartRec, Pid, Snapshot, PUBLIC_AID};
use rustc_hash::{FxBuildHasher, FxHashMap};

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
    /// Every record of one store except item content (`c/…`) and sealed contexts (`t/…`), both
    /// read with `get`, in key order.
    fn load(&self, store: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    /// Applies `ops` atomically and durably.
    fn commit(&self, store: &str, ops: Vec<Op>) -> Result<()>;
    /// One record, for reads of data kept out of the index (content and attributes).
    fn get(&self, store: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;
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
}

/// Free space kept on the data directory's filesystem unless configured otherwise.
pub const DEFAULT_MIN_FREE_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes a commit may need beyond its records: sled appends to 512 KiB log segments and can
/// rewrite a whole node around a changed key, so one segment of slack is kept on top of twice
/// the batch.
const COMMIT_SLACK_BYTES: u64 = 512 * 1024;

/// How long closing a failed sled instance may take before it is declared stuck.
const CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Least time between two attempts to reopen a failed database.
const REOPEN_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// The embedded default: sled on local disk, one tree per store, synced on every commit.
///
/// # Full disks and failed commits
///
/// sled 0.34 does not survive a write error in process (observed on a full tmpfs): an error
/// while appending to its log is recorded as a global error, after which every write, and every
/// read of a page not in cache, fails until the database is reopened; an error while writing a
/// large value or node to its own file leaks a log reservation, after which `flush` waits
/// forever, and so does dropping the database, which then never releases its file lock, so the
/// same process cannot reopen it. Hence two defences:
///
/// 1. A free-space guard: a commit is refused, before sled sees it, while the filesystem has
///    less than `min_free_bytes` (plus twice the batch) available. This is what makes a full
///    disk a clean, fast, self-healing refusal; sled should never meet ENOSPC.
/// 2. If sled fails anyway (another process ate the reserve, an I/O error), the instance is
///    marked failed and never written to again; the next `writable` check, once space is back,
///    closes it (bounded by [`CLOSE_TIMEOUT`]) and reopens it from its path. sled recovers from
///    its log, which holds every acknowledged batch because each was flushed and fdatasynced.
///    Should the close hang (the leaked reservation), the backend stays refusing, fast, and
///    readiness says a restart is required.
pub struct SledBackend {
    /// Where the database lives; `None` for a temporary one (no guard, no reopen).
    path: Option<std::path::PathBuf>,
    /// Bytes kept free on the data directory's filesystem.
    min_free_bytes: u64,
    /// The open database. `None` only after a failed instance was closed and reopening it has
    /// not succeeded yet. Operations hold the read lock for their duration so that the reopen,
    /// which takes the write lock without waiting (`try_write`), holds the last handle and
    /// really closes the instance (releasing sled's file lock).
    open: std::sync::RwLock<Option<OpenDb>>,
    /// Set when sled failed; cleared by a successful reopen.
    fault: std::sync::Mutex<Option<Fault>>,
    /// The revision of each store known durable, kept outside sled (see [`Watermark`]).
    watermark: std::sync::Mutex<Watermark>,
}

/// File beside sled's own, holding the highest revision of each store known to be durable.
const WATERMARK_FILE: &str = "earshot-watermark.json";

/// Least time between two writes of the watermark file while commits keep coming.
const WATERMARK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// A lower bound, kept outside sled, of every store's durable revision: written (atomically,
/// by rename) after commits at most once per [`WATERMARK_INTERVAL`], at once for a new store,
/// and when the backend closes. sled 0.34 treats a truncated or cut log as a crash's torn tail
/// and silently opens the prefix it can read (down to no store at all), so without this a
/// damaged directory would be served with acknowledged writes missing. At open, a store
/// behind its watermark, or missing, is refused as damage. The mark only ever trails durable
/// data (it is written after the commit it names returned), so a crash never trips it.
#[derive(Default)]
struct Watermark {
    revisions: BTreeMap<String, u64>,
    written: Option<std::time::Instant>,
    dirty: bool,
}

struct OpenDb {
    db: sled::Db,
    /// sled's log file, opened a second time to `fdatasync` it after each flush (see `commit`).
    log_file: Option<std::fs::File>,
}

struct Fault {
    reason: String,
    last_attempt: Option<std::time::Instant>,
    /// Closing the failed instance hung: only a new process can open the data again.
    restart_required: bool,
}

const TREE_PREFIX: &str = "store/";

/// One raw record: key and value.
type Record = (Vec<u8>, Vec<u8>);

/// Whether an I/O error means the filesystem is full (ENOSPC, or EDQUOT for a quota).
fn is_out_of_space(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
        || e.raw_os_error() == Some(28)
}

impl SledBackend {
    /// Opens (or creates) the database at `path` with the default free-space reserve.
    pub fn open(path: &std::path::Path) -> Result<Self> {
        Self::open_with_reserve(path, DEFAULT_MIN_FREE_BYTES)
    }

    /// Opens (or creates) the database at `path`, refusing commits while its filesystem has
    /// less than `min_free_bytes` available.
    pub fn open_with_reserve(path: &std::path::Path, min_free_bytes: u64) -> Result<Self> {
        let open = open_db(path)?;
        let revisions = check_watermark(path, &open.db)?;
        Ok(SledBackend {
            path: Some(path.to_path_buf()),
            min_free_bytes,
            open: std::sync::RwLock::new(Some(open)),
            fault: std::sync::Mutex::new(None),
            watermark: std::sync::Mutex::new(Watermark { revisions, written: None, dirty: false }),
        })
    }

    /// A backend in a temporary directory, removed on drop (tests and benches).
    pub fn temporary() -> Result<Self> {
        let db = sled::Config::new().temporary(true).open()?;
        Ok(SledBackend {
            path: None,
            min_free_bytes: 0,
            open: std::sync::RwLock::new(Some(OpenDb { db, log_file: None })),
            fault: std::sync::Mutex::new(None),
            watermark: std::sync::Mutex::new(Watermark::default()),
        })
    }

    fn fault(&self) -> std::sync::MutexGuard<'_, Option<Fault>> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the open database (read lock held throughout, see `open`).
    fn with_db<T>(&self, f: impl FnOnce(&OpenDb) -> Result<T>) -> Result<T> {
        let guard = self.open.read().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(open) => f(open),
            None => Err(StoreError::StorageUnavailable(format!(
                "the database failed and is not reopened yet: {}",
                self.fault().as_ref().map_or("", |f| f.reason.as_str())
            ))),
        }
    }

    /// Records that sled failed, and turns its error into the store's.
    fn failed(&self, during: &str, e: sled::Error) -> StoreError {
        let full = matches!(&e, sled::Error::Io(io) if is_out_of_space(io));
        let reason = format!("sled failed during {during}: {e}");
        tracing::error!(error = %e, during, "the database failed; it will be reopened once writable");
        let mut fault = self.fault();
        if fault.is_none() {
            *fault = Some(Fault { reason: reason.clone(), last_attempt: None, restart_required: false });
        }
        drop(fault);
        if full {
            let available = self.available().unwrap_or(0);
            StoreError::InsufficientStorage { available, required: self.min_free_bytes.max(available + 1) }
        } else {
            StoreError::StorageUnavailable(reason)
        }
    }

    /// Records that `store` is durable at the revision its commit's meta record names, and
    /// writes the watermark file when due. Best effort: a failed write only leaves an older
    /// (lower) mark, which is still true.
    fn advance_watermark(&self, store: &str, meta: Option<u64>, force: bool) {
        let Some(path) = &self.path else { return };
        let mut w = self.watermark.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rev) = meta {
            let new_store = !w.revisions.contains_key(store);
            let mark = w.revisions.entry(store.to_string()).or_insert(0);
            if rev > *mark {
                *mark = rev;
                w.dirty = true;
            }
            if !(new_store || force || w.written.is_none_or(|t| t.elapsed() >= WATERMARK_INTERVAL)) {
                return;
            }
        }
        if !w.dirty {
            return;
        }
        match write_watermark(path, &w.revisions) {
            Ok(()) => {
                w.dirty = false;
                w.written = Some(std::time::Instant::now());
            }
            Err(e) => tracing::warn!(error = %e, "cannot write the watermark file; it stays behind"),
        }
    }

    /// Bytes available to us on the data directory's filesystem (`None` when unknown).
    fn available(&self) -> Option<u64> {
        let path = self.path.as_ref()?;
        match fs2::available_space(path) {
            Ok(n) => Some(n),
            Err(e) => {
                // A failed probe must not stop writes; sled's own errors still protect them.
                tracing::warn!(error = %e, path = %path.display(), "cannot read the free space of the data directory");
                None
            }
        }
    }

    /// Refuses when fewer than the reserve plus `extra` bytes are available.
    fn check_space(&self, extra: u64) -> Result<()> {
        if self.path.is_none() {
            return Ok(());
        }
        let required = self.min_free_bytes.saturating_add(extra);
        match self.available() {
            Some(available) if available < required => Err(StoreError::InsufficientStorage { available, required }),
            _ => Ok(()),
        }
    }

    /// After a failure: closes the failed instance and reopens the database from its path, at
    /// most once per [`REOPEN_INTERVAL`], and only while the free-space guard passes (sled
    /// cannot recover onto a full disk).
    fn recover(&self) -> Result<()> {
        let mut fault = self.fault();
        let Some(f) = fault.as_mut() else { return Ok(()) };
        let unavailable = |f: &Fault| StoreError::StorageUnavailable(f.reason.clone());
        if f.restart_required {
            return Err(unavailable(f));
        }
        if f.last_attempt.is_some_and(|t| t.elapsed() < REOPEN_INTERVAL) {
            return Err(unavailable(f));
        }
        f.last_attempt = Some(std::time::Instant::now());
        let Some(path) = self.path.clone() else { return Err(unavailable(f)) };
        self.check_space(0)?;
        // Never wait for the lock: a commit stuck inside sled holds the read lock forever.
        let Ok(mut open) = self.open.try_write() else { return Err(unavailable(f)) };
        if let Some(old) = open.take() {
            // Closing a failed sled instance can hang (see the type's docs), so it happens on
            // its own thread and is waited for, bounded.
            let (tx, rx) = std::sync::mpsc::channel();
            let closer = std::thread::Builder::new().name("earshot-sled-close".into()).spawn(move || {
                drop(old);
                let _ = tx.send(());
            });
            if closer.is_err() || rx.recv_timeout(CLOSE_TIMEOUT).is_err() {
                f.restart_required = true;
                f.reason = format!(
                    "{}; closing the failed database did not finish, so it cannot be reopened in this process: restart earshot",
                    f.reason
                );
                tracing::error!(reason = %f.reason, "the database cannot be reopened without a restart");
                return Err(unavailable(f));
            }
        }
        match open_db(&path) {
            Ok(db) => {
                *open = Some(db);
                tracing::info!(path = %path.display(), "the database was reopened after a failure");
                *fault = None;
                Ok(())
            }
            Err(e) => {
                f.reason = format!("reopening the database failed: {e}");
                tracing::warn!(reason = %f.reason, "the database stays closed; retrying later");
                Err(unavailable(f))
            }
        }
    }
}

/// Opens sled at `path` and its log file for syncing. sled 0.34 panics (index out of bounds,
/// among others) on some damaged files instead of returning an error; the panic is caught here
/// and becomes an integrity failure, so a damaged directory is refused like any other damage
/// and never served from.
fn open_db(path: &std::path::Path) -> Result<OpenDb> {
    let opened = quietly_catching_panics(|| sled::Config::new().path(path).mode(sled::Mode::HighThroughput).open());
    let db = match opened {
        Ok(Ok(db)) => db,
        Ok(Err(sled::Error::Io(e))) if is_out_of_space(&e) => {
            return Err(StoreError::InsufficientStorage {
                available: fs2::available_space(path).unwrap_or(0),
                required: 1,
            })
        }
        Ok(Err(e)) => return Err(e.into()),
        Err(panic) => {
            return Err(StoreError::Integrity(format!("the database could not recover its files (sled: {panic})")))
        }
    };
    let log_file = std::fs::File::open(path.join("db"))
        .map_err(|e| StoreError::Storage(format!("cannot open sled's log for syncing: {e}")))?;
    Ok(OpenDb { db, log_file: Some(log_file) })
}

/// Runs `f`, turning a panic into `Err(message)` without the default hook printing it (and a
/// backtrace) to stderr: the caller reports the failure once, as an error. The hook is
/// process-wide, so a panic on another thread during `f` is also silenced; `f` here is only
/// ever opening the database (start-up, or a reopen after a failure).
fn quietly_catching_panics<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    static HOOK_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = HOOK_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    out.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into())
    })
}

impl Drop for SledBackend {
    fn drop(&mut self) {
        // A clean close records the final revisions, so damage after it is always caught.
        self.advance_watermark("", None, true);
    }
}

/// Reads the watermark file (none yet: nothing to check) and refuses a database in which a
/// store is missing or behind it. Returns the marks, which later commits only raise.
fn check_watermark(path: &std::path::Path, db: &sled::Db) -> Result<BTreeMap<String, u64>> {
    let file = path.join(WATERMARK_FILE);
    let text = match std::fs::read(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(StoreError::Storage(format!("cannot read {}: {e}", file.display()))),
    };
    let marks: BTreeMap<String, u64> = serde_json::from_slice(&text)
        .map_err(|e| StoreError::Integrity(format!("{WATERMARK_FILE} is unreadable: {e}")))?;
    for (store, mark) in &marks {
        let meta = tree(db, store)
            .and_then(|t| t.get(META_KEY))?
            .map(|v| serde_json::from_slice::<MetaRecord>(&v))
            .transpose()
            .map_err(|e| StoreError::Integrity(format!("the meta record of store `{store}` is unreadable: {e}")))?;
        match meta {
            None => {
                return Err(StoreError::Integrity(format!(
                    "store `{store}` (durable up to revision {mark}) is missing from the database files"
                )))
            }
            Some(m) if m.revision < *mark => {
                return Err(StoreError::Integrity(format!(
                    "store `{store}` ends at revision {} but revision {mark} was durable: the database files lost data",
                    m.revision
                )))
            }
            Some(_) => {}
        }
    }
    Ok(marks)
}

/// Writes the watermark file atomically: a synced temporary file renamed over the old one.
fn write_watermark(path: &std::path::Path, marks: &BTreeMap<String, u64>) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.join(format!("{WATERMARK_FILE}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(&serde_json::to_vec(marks).map_err(std::io::Error::other)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path.join(WATERMARK_FILE))?;
    // The rename itself is made durable with the directory.
    std::fs::File::open(path)?.sync_all()
}

fn tree(db: &sled::Db, store: &str) -> std::result::Result<sled::Tree, sled::Error> {
    db.open_tree(format!("{TREE_PREFIX}{store}"))
}

impl Backend for SledBackend {
    fn stores(&self) -> Result<Vec<String>> {
        self.with_db(|o| {
            let mut out = Vec::new();
            for name in o.db.tree_names() {
                if let Some(id) = std::str::from_utf8(&name).ok().and_then(|n| n.strip_prefix(TREE_PREFIX)) {
                    out.push(id.to_string());
                }
            }
            out.sort();
            Ok(out)
        })
    }

    fn load(&self, store: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        // A failed instance may hold a batch that was refused and never made durable; the
        // writer rebuilds from `load`, so it must wait for the reopened database.
        if let Some(f) = self.fault().as_ref() {
            return Err(StoreError::StorageUnavailable(f.reason.clone()));
        }
        // Content (`c/…`) is read on demand and never indexed, and sealed contexts (`t/…`) are
        // audit records, so start-up skips both. No size hint: `Tree::len` is itself a full scan
        // in sled 0.34.
        self.with_db(|o| {
            let scan = || -> std::result::Result<Vec<Record>, sled::Error> {
                let tree = tree(&o.db, store)?;
                let mut out = Vec::new();
                let ranges = tree
                    .range(..b"c/".as_slice())
                    .chain(tree.range(b"c0".as_slice()..b"t/".as_slice()))
                    .chain(tree.range(b"t0".as_slice()..));
                for kv in ranges {
                    let (k, v) = kv?;
                    out.push((k.to_vec(), v.to_vec()));
                }
                Ok(out)
            };
            scan().map_err(|e| self.failed("a load", e))
        })
    }

    fn commit(&self, store: &str, ops: Vec<Op>) -> Result<()> {
        self.writable()?;
        let bytes: u64 = ops
            .iter()
            .map(|op| match op {
                Op::Put(k, v) => (k.len() + v.len()) as u64,
                Op::Del(k) => k.len() as u64,
            })
            .sum();
        self.check_space(bytes.saturating_mul(2).saturating_add(COMMIT_SLACK_BYTES))?;
        // The revision this commit makes durable, from its meta record (every commit has one).
        let revision = ops.iter().find_map(|op| match op {
            Op::Put(k, v) if k.as_slice() == META_KEY => {
                serde_json::from_slice::<MetaRecord>(v).ok().map(|m| m.revision)
            }
            _ => None,
        });
        let mut batch = sled::Batch::default();
        for op in ops {
            match op {
                Op::Put(k, v) => batch.insert(k, v),
                Op::Del(k) => batch.remove(k),
            }
        }
        self.with_db(|o| {
            tree(&o.db, store).and_then(|t| t.apply_batch(batch)).map_err(|e| self.failed("a commit", e))?;
            // From here on the batch is in sled's memory: a failure leaves its durability
            // unknown, which the refusal says; it is never acknowledged.
            o.db.flush().map_err(|e| self.failed("a flush (the write's outcome is unknown)", e))?;
            // On Linux sled 0.34 makes its log stable with `sync_file_range`, which neither flushes
            // the device's write cache nor persists the file's size when the log grew. One
            // `fdatasync` of the same file does both, so an acknowledged write survives power
            // loss, not only a process crash. It costs one more disk flush per group commit.
            if let Some(f) = &o.log_file {
                // A failed fdatasync may have dropped the dirty pages it was to write, so the
                // instance is not trusted again: it is reopened, and sled recovers from disk.
                f.sync_data().map_err(|e| {
                    self.failed("fdatasync of sled's log (the write's outcome is unknown)", sled::Error::Io(e))
                })?;
            }
            Ok(())
        })?;
        self.advance_watermark(store, revision, false);
        Ok(())
    }

    fn get(&self, store: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.with_db(|o| {
            tree(&o.db, store)
                .and_then(|t| t.get(key))
                .map(|v| v.map(|v| v.to_vec()))
                .map_err(|e| self.failed("a read", e))
        })
    }

    // Both ask for the reserve plus one commit's slack, the same margin `commit` asks of a
    // small batch, so that readiness, the writer's pre-check and the commit agree on whether
    // an ordinary write fits.
    fn writable(&self) -> Result<()> {
        self.recover()?;
        self.check_space(COMMIT_SLACK_BYTES)
    }

    fn condition(&self) -> Option<String> {
        if let Some(f) = self.fault().as_ref() {
            return Some(f.reason.clone());
        }
        self.check_space(COMMIT_SLACK_BYTES).err().map(|e| e.to_string())
    }
}

/// A backend in memory: one ordered map per store. Commits are atomic and last as long as the
/// process (benchmarks, the evaluation, tools); `load` follows the trait's contract and leaves
/// out content (`c/…`) and sealed contexts (`t/…`), which are read one by one with `get`.
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
        let on_demand = |k: &[u8]| k.starts_with(b"c/") || k.starts_with(b"t/");
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
}

// ---- records -------------------------------------------------------------------------------

pub(crate) const META_KEY: &[u8] = b"m";

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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParticipantRecord {
    pub id: String,
    pub kind: ParticipantKind,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentityRecord {
    pub transport: String,
    pub identifier: String,
    pub participants: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AudienceRecord {
    pub digest: String,
    pub kind: AudienceKind,
    pub members: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ItemRecord {
    pub id: String,
    pub seq: u32,
    pub owner: String,
    pub audience: String,
    #[serde(default)]
    pub sources: Vec<String>,
    pub state: State,
    #[serde(default)]
    pub superseded_by: Option<String>,
    pub created_rev: u64,
    pub created_at_ms: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContentRecord {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrantRecord {
    pub id: String,
    pub seq: u32,
    pub item: String,
    pub audience: String,
    pub issuer: String,
    #[serde(default)]
    pub reason: Option<String>,
    pub created_at_ms: i64,
    pub created_rev: u64,
    #[serde(default)]
    pub expires_at_ms: Option<i64>,
    pub revoked: bool,
}

/// All records of one store, decoded.
#[derive(Debug, Default, Clone)]
pub struct Records {
    pub meta: Option<MetaRecord>,
    pub participants: Vec<ParticipantRecord>,
    pub identities: Vec<IdentityRecord>,
    pub audiences: Vec<AudienceRecord>,
    pub items: Vec<ItemRecord>,
    pub contents: BTreeMap<String, ContentRecord>,
    pub grants: Vec<GrantRecord>,
    pub devices: crate::devices::records::DeviceRecords,
}

pub(crate) fn key(prefix: u8, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(id.len() + 2);
    k.push(prefix);
    k.push(b'/');
    k.extend_from_slice(id.as_bytes());
    k
}

fn enc<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| StoreError::Storage(format!("encode: {e}")))
}

fn dec<T: for<'de> Deserialize<'de>>(k: &[u8], v: &[u8]) -> Result<T> {
    serde_json::from_slice(v)
        .map_err(|e| StoreError::Integrity(format!("record `{}` is unreadable: {e}", String::from_utf8_lossy(k))))
}

impl Records {
    /// Decodes raw key-value pairs; any unreadable or unknown record is an integrity failure.
    pub fn decode(raw: &[(Vec<u8>, Vec<u8>)]) -> Result<Self> {
        let mut r = Records::default();
        for (k, v) in raw {
            match k.as_slice() {
                META_KEY => r.meta = Some(dec(k, v)?),
                [b'p', b'/', ..] => r.participants.push(dec(k, v)?),
                [b'x', b'/', ..] => r.identities.push(dec(k, v)?),
                [b'a', b'/', ..] => r.audiences.push(dec(k, v)?),
                [b'i', b'/', ..] => r.items.push(dec(k, v)?),
                [b'c', b'/', rest @ ..] => {
                    r.contents.insert(String::from_utf8_lossy(rest).into_owned(), dec(k, v)?);
                }
                [b'g', b'/', ..] => r.grants.push(dec(k, v)?),
                // Sealed contexts: audit records, read one by one, never projected.
                [b't', b'/', ..] => {}
                _ if r.devices.decode(k, v)? => {}
                _ => return Err(StoreError::Integrity(format!("unknown record `{}`", String::from_utf8_lossy(k)))),
            }
        }
        r.items.sort_by_key(|i| i.seq);
        r.grants.sort_by_key(|g| g.seq);
        Ok(r)
    }
}

/// Encodes every record `dirty` names from the new snapshot `s`, plus the revision.
pub(crate) fn encode(s: &Snapshot, dirty: &Dirty, meta: &MetaRecord) -> Result<Vec<Op>> {
    let mut ops = Vec::new();
    for d in &dirty.audience_deletes {
        ops.push(Op::Del(key(b'a', &d.to_hex())));
    }
    for name in &dirty.participants {
        let k = key(b'p', name);
        match s.pid(name).and_then(|p| s.part(p)) {
            Some(p) => ops.push(Op::Put(
                k,
                enc(&ParticipantRecord {
                    id: p.name.to_string(),
                    kind: p.kind,
                    name: p.display.as_ref().map(|d| d.to_string()),
                })?,
            )),
            None => ops.push(Op::Del(k)),
        }
    }
    for ik in &dirty.identities {
        let k = key(b'x', ik);
        match s.idents.get(ik.as_str()) {
            Some(bound) => {
                let (transport, identifier) = ik.split_once('\0').unwrap_or((ik.as_str(), ""));
                let participants = bound.iter().map(|p| s.part_name(*p).to_string()).collect();
                ops.push(Op::Put(
                    k,
                    enc(&IdentityRecord { transport: transport.into(), identifier: identifier.into(), participants })?,
                ))
            }
            None => ops.push(Op::Del(k)),
        }
    }
    for &aid in &dirty.audiences {
        let Some(a) = s.aud(aid) else { continue };
        if a.live && aid != PUBLIC_AID {
            ops.push(Op::Put(
                key(b'a', &a.digest.to_hex()),
                enc(&AudienceRecord { digest: a.digest.to_hex(), kind: a.kind, members: s.member_names(a) })?,
            ));
        }
    }
    for &iid in &dirty.items {
        let Some(i) = s.item(iid) else { continue };
        let aud = s.aud(i.aud).ok_or_else(|| StoreError::Integrity(format!("audience {} missing", i.aud)))?;
        let name_of = |x: Iid| s.item(x).map(|r| r.name.to_string()).unwrap_or_default();
        ops.push(Op::Put(
            key(b'i', &i.name),
            enc(&ItemRecord {
                id: i.name.to_string(),
                seq: iid,
                owner: s.part_name(i.owner).to_string(),
                audience: aud.digest.to_hex(),
                sources: i.sources().iter().map(|x| name_of(*x)).collect(),
                state: i.state,
                superseded_by: i.superseded_by().map(name_of),
                created_rev: i.created_rev,
                created_at_ms: i.created_at_ms,
            })?,
        ));
    }
    for (iid, c) in &dirty.contents {
        if c.content.is_none() && c.attributes.is_none() {
            continue;
        }
        let Some(i) = s.item(*iid) else { continue };
        ops.push(Op::Put(
            key(b'c', &i.name),
            enc(&ContentRecord { content: c.content.clone(), attributes: c.attributes.clone() })?,
        ));
    }
    for iid in &dirty.content_deletes {
        if let Some(i) = s.item(*iid) {
            ops.push(Op::Del(key(b'c', &i.name)));
        }
    }
    for &gid in &dirty.grants {
        let Some(g) = s.grant(gid) else { continue };
        let aud = s.aud(g.aud).ok_or_else(|| StoreError::Integrity(format!("audience {} missing", g.aud)))?;
        ops.push(Op::Put(
            key(b'g', &g.name),
            enc(&GrantRecord {
                id: g.name.to_string(),
                seq: gid,
                item: s.item(g.item).map(|i| i.name.to_string()).unwrap_or_default(),
                audience: aud.digest.to_hex(),
                issuer: g.issuer.to_string(),
                reason: g.reason.as_ref().map(|r| r.to_string()),
                created_at_ms: g.created_at_ms,
                created_rev: g.created_rev,
                expires_at_ms: g.expires_at_ms,
                revoked: g.revoked,
            })?,
        ));
    }
    crate::devices::records::encode(s, &dirty.devices, &mut ops)?;
    ops.push(Op::Put(META_KEY.to_vec(), enc(meta)?));
    Ok(ops)
}

pub(crate) fn meta_op(meta: &MetaRecord) -> Result<Op> {
    Ok(Op::Put(META_KEY.to_vec(), enc(meta)?))
}

fn bad(msg: String) -> StoreError {
    StoreError::Integrity(msg)
}

/// Rebuilds the snapshot and provenance graph of one store from its records, checking every
/// digest and reference on the way: a record that does not add up refuses the start.
///
/// Postings and name maps are built in flat collections and frozen once, which is both faster
/// and several times smaller than growing the persistent structures one element at a time.
pub(crate) fn rebuild(store: &str, r: &Records) -> Result<(Snapshot, Provenance)> {
    let meta = r.meta.as_ref().ok_or_else(|| bad(format!("store `{store}` has no meta record")))?;
    let mut s = Snapshot::empty(store);
    s.revision = meta.revision;
    s.committed_at_ms = meta.committed_at_ms.unwrap_or(meta.created_at_ms);
    let mut parts: Vec<&ParticipantRecord> = r.participants.iter().collect();
    parts.sort_by(|a, b| a.id.cmp(&b.id));
    let mut pid_by_name: FxHashMap<&str, Pid> = FxHashMap::default();
    for p in parts {
        let pid = s.parts.len() as Pid;
        let name: Arc<str> = Arc::from(p.id.as_str());
        s.parts.push_back(Some(PartRec {
            name: name.clone(),
            kind: p.kind,
            display: p.name.as_deref().map(Arc::from),
        }));
        s.pids.insert(name, pid);
        if pid_by_name.insert(p.id.as_str(), pid).is_some() {
            return Err(bad(format!("participant `{}` stored twice", p.id)));
        }
    }
    let pid_of =
        |n: &str| pid_by_name.get(n).copied().ok_or_else(|| bad(format!("unknown participant `{n}` in records")));
    let public_hex = s.aud(PUBLIC_AID).map(|a| a.digest.to_hex()).unwrap_or_default();
    let mut aid_by_hex: FxHashMap<&str, Aid> = FxHashMap::default();
    aid_by_hex.insert(public_hex.as_str(), PUBLIC_AID);
    let mut part_auds: Vec<Vec<Aid>> = vec![Vec::new(); pid_by_name.len()];
    for a in &r.audiences {
        let digest = AudienceDigest::from_hex(&a.digest).ok_or_else(|| bad(format!("bad digest `{}`", a.digest)))?;
        let mut names = a.members.clone();
        names.sort();
        names.dedup();
        if names.len() != a.members.len()
            || a.kind != AudienceKind::of_members(names.len())
            || a.kind == AudienceKind::Public
        {
            return Err(bad(format!("audience {digest} has a non-canonical kind or member list")));
        }
        if AudienceDigest::compute(a.kind, &names) != digest {
            return Err(bad(format!("audience {digest} does not match its kind and members")));
        }
        let mut members = Vec::with_capacity(names.len());
        for n in &names {
            members.push(pid_of(n)?);
        }
        members.sort_unstable();
        let aid = s.auds.len() as Aid;
        for p in &members {
            if let Some(list) = part_auds.get_mut(*p as usize) {
                list.push(aid);
            }
        }
        s.auds.push_back(AudRec { kind: a.kind, members: Members::Only(Arc::from(members)), digest, live: true });
        s.aud_by_digest.insert(digest, aid);
        if aid_by_hex.insert(a.digest.as_str(), aid).is_some() {
            return Err(bad(format!("audience {digest} stored twice")));
        }
    }
    for (pid, auds) in part_auds.into_iter().enumerate() {
        if !auds.is_empty() {
            s.part_auds.insert(pid as Pid, auds.into_iter().collect());
        }
    }
    let aid_of =
        |hex: &str| aid_by_hex.get(hex).copied().ok_or_else(|| bad(format!("reference to unknown audience `{hex}`")));
    let mut graph = Provenance::default();
    let mut iids: HashMap<Arc<str>, Iid, FxBuildHasher> =
        HashMap::with_capacity_and_hasher(r.items.len(), FxBuildHasher);
    let mut aud_items: Vec<Vec<Iid>> = vec![Vec::new(); s.auds.len()];
    let mut owner_items: Vec<Vec<Iid>> = vec![Vec::new(); pid_by_name.len()];
    let mut owner_public: Vec<Vec<Iid>> = vec![Vec::new(); pid_by_name.len()];
    let mut current: Vec<Currentness<Iid>> = Vec::with_capacity(r.items.len());
    let mut supersessions: Vec<(Iid, &str)> = Vec::new();
    let mut sources: Vec<Iid> = Vec::new();
    for (n, i) in r.items.iter().enumerate() {
        if i.seq as usize != n {
            return Err(bad(format!("item sequence has a gap at {n}")));
        }
        let iid = i.seq;
        let owner = pid_of(&i.owner)?;
        let aud = aid_of(&i.audience)?;
        if let Some(Members::Only(m)) = s.aud(aud).map(|a| &a.members) {
            if m.binary_search(&owner).is_err() {
                return Err(bad(format!("item `{}` has an audience without its owner", i.id)));
            }
        }
        sources.clear();
        for src in &i.sources {
            let sid =
                iids.get(src.as_str()).ok_or_else(|| bad(format!("item `{}` names unknown source `{src}`", i.id)))?;
            sources.push(*sid);
        }
        let c = Currentness::derive(
            i.state,
            sources.iter().map(|x| (*x, current.get(*x as usize).copied().unwrap_or(Currentness::Current))),
        );
        current.push(c);
        let name: Arc<str> = Arc::from(i.id.as_str());
        s.items.push_back(ItemRec {
            name: name.clone(),
            owner,
            aud,
            state: i.state,
            current: c,
            links: ItemRec::links_from_sources(&sources),
            created_rev: i.created_rev,
            created_at_ms: i.created_at_ms,
        });
        if iids.insert(name, iid).is_some() {
            return Err(bad(format!("item `{}` stored twice", i.id)));
        }
        if let Some(list) = aud_items.get_mut(aud as usize) {
            list.push(iid);
        }
        if let Some(list) = owner_items.get_mut(owner as usize) {
            list.push(iid);
        }
        if aud == PUBLIC_AID {
            if let Some(list) = owner_public.get_mut(owner as usize) {
                list.push(iid);
            }
        }
        graph.add_item(iid, &sources);
        if let Some(by) = &i.superseded_by {
            supersessions.push((iid, by.as_str()));
        }
    }
    for (iid, by) in supersessions {
        let by = *iids.get(by).ok_or_else(|| bad(format!("unknown superseding item `{by}`")))?;
        if let Some(mut rec) = s.item(iid).cloned() {
            rec.edit_links(|l| l.superseded_by = Some(by));
            s.items.set(iid as usize, rec);
        }
    }
    let mut gids: HashMap<Arc<str>, Gid, FxBuildHasher> =
        HashMap::with_capacity_and_hasher(r.grants.len(), FxBuildHasher);
    let mut item_grants: BTreeMap<Iid, Vec<Gid>> = BTreeMap::new();
    let mut aud_grants: BTreeMap<Aid, Vec<Gid>> = BTreeMap::new();
    for (n, g) in r.grants.iter().enumerate() {
        if g.seq as usize != n {
            return Err(bad(format!("grant sequence has a gap at {n}")));
        }
        let item = *iids.get(g.item.as_str()).ok_or_else(|| bad(format!("grant `{}` names unknown item", g.id)))?;
        let aud = aid_of(&g.audience)?;
        let name: Arc<str> = Arc::from(g.id.as_str());
        s.grants.push_back(GrantRec {
            name: name.clone(),
            item,
            aud,
            issuer: Arc::from(g.issuer.as_str()),
            reason: g.reason.as_deref().map(Arc::from),
            created_at_ms: g.created_at_ms,
            created_rev: g.created_rev,
            expires_at_ms: g.expires_at_ms,
            revoked: g.revoked,
        });
        if gids.insert(name, g.seq).is_some() {
            return Err(bad(format!("grant `{}` stored twice", g.id)));
        }
        item_grants.entry(item).or_default().push(g.seq);
        aud_grants.entry(aud).or_default().push(g.seq);
    }
    for (iid, gs) in item_grants {
        if let Some(mut rec) = s.item(iid).cloned() {
            rec.edit_links(|l| l.grants = gs.into());
            s.items.set(iid as usize, rec);
        }
    }
    for (aid, list) in aud_items.into_iter().enumerate() {
        if !list.is_empty() {
            s.aud_items.insert(aid as Aid, list.into_iter().collect());
        }
    }
    for (pid, list) in owner_items.into_iter().enumerate() {
        if !list.is_empty() {
            s.owner_items.insert(pid as Pid, list.into_iter().collect());
        }
    }
    for (pid, list) in owner_public.into_iter().enumerate() {
        if !list.is_empty() {
            s.owner_public.insert(pid as Pid, list.into_iter().collect());
        }
    }
    for (aid, list) in aud_grants {
        s.aud_grants.insert(aid, list.into_iter().collect());
    }
    let items = &s.items;
    s.iids = IdTable::from_ids(0..items.len() as u32, |i| items.get(i as usize).map(|r| &*r.name));
    drop(iids);
    s.gids = NameMap::from_base(gids);
    for x in &r.identities {
        let mut bound = Vec::with_capacity(x.participants.len());
        for p in &x.participants {
            bound.push(pid_of(p)?);
        }
        let k = Snapshot::ident_key(&x.transport, &x.identifier);
        s.idents.insert(Arc::from(k.as_str()), Arc::from(bound));
    }
    s.dev = crate::devices::records::rebuild(&r.devices, &pid_of)?;
    Ok((s, graph))
}

/// Rebuilds only the snapshot (the projection a reader uses) from records.
pub fn rebuild_snapshot(store: &str, r: &Records) -> Result<Snapshot> {
    rebuild(store, r).map(|(s, _)| s)
}

/// Encodes whole records as ops, for bulk import (benchmarks, tools) straight into a backend.
/// The caller is responsible for the records being consistent; the next start-up rebuild
/// checks them and refuses to start if they are not.
pub fn encode_records(r: &Records) -> Result<Vec<Op>> {
    let mut ops = Vec::new();
    if let Some(m) = &r.meta {
        ops.push(meta_op(m)?);
    }
    for p in &r.participants {
        ops.push(Op::Put(key(b'p', &p.id), enc(p)?));
    }
    for x in &r.identities {
        ops.push(Op::Put(key(b'x', &Snapshot::ident_key(&x.transport, &x.identifier)), enc(x)?));
    }
    for a in &r.audiences {
        ops.push(Op::Put(key(b'a', &a.digest), enc(a)?));
    }
    for i in &r.items {
        ops.push(Op::Put(key(b'i', &i.id), enc(i)?));
    }
    for (id, c) in &r.contents {
        ops.push(Op::Put(key(b'c', id), enc(c)?));
    }
    for g in &r.grants {
        ops.push(Op::Put(key(b'g', &g.id), enc(g)?));
    }
    r.devices.encode_all(&mut ops)?;
    Ok(ops)
}
