//! The storage seam: the `Backend` trait, its sled implementation (with the free-space guard,
//! the reopen after a failure and the watermark) and an in-memory one, the key encoding, and
//! the revision (meta) record every store has.
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

/// Free space kept on the data directory's filesystem unless configured otherwise.
pub const DEFAULT_MIN_FREE_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes a commit may need beyond its records: sled appends to 512 KiB log segments and can
/// rewrite a whole node around a changed key, so one segment of slack is kept on top of twice
/// the batch.
const COMMIT_SLACK_BYTES: u64 = 512 * 1024;

/// The batch size every commit is charged at least (twice its bytes, like any batch): a
/// small write is refused exactly when readiness reports the store degraded, never at a
/// free-space level where readiness still says ready.
const ORDINARY_BATCH_BYTES: u64 = 32 * 1024;

/// The free space (beyond the reserve) that readiness, the writer's pre-check and an ordinary
/// commit all ask for.
const ORDINARY_COMMIT_BYTES: u64 = 2 * ORDINARY_BATCH_BYTES + COMMIT_SLACK_BYTES;

/// How long closing a failed sled instance may take before it is declared stuck.
const CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
/// How long opening waits for a database lock held by an instance of ours that is closing
/// (see `open_db`); a lock held longer is another process's, and opening is refused.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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
pub type Record = (Vec<u8>, Vec<u8>);

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
            None => Err(KernelError::StorageUnavailable(format!(
                "the database failed and is not reopened yet: {}",
                self.fault().as_ref().map_or("", |f| f.reason.as_str())
            ))),
        }
    }

    /// Records that sled failed, and turns its error into the store's.
    fn failed(&self, during: &str, e: sled::Error) -> KernelError {
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
            KernelError::InsufficientStorage { available, required: self.min_free_bytes.max(available + 1) }
        } else {
            KernelError::StorageUnavailable(reason)
        }
    }

    /// Records that `store` is durable at the revision its commit's meta record names, and
    /// writes the watermark file when due. Best effort: a failed write only leaves an older
    /// (lower) mark, which is still true.
    fn advance_watermark(&self, store: &str, meta: Option<u64>, force: bool) {
        let Some(path) = &self.path else { return };
        let mut w = self.watermark.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rev) = meta {
            let mark = w.revisions.entry(store.to_string()).or_insert(0);
            if rev > *mark {
                *mark = rev;
                w.dirty = true;
            }
            // A new store waits for the interval like any other change: the file holds every
            // store's mark, so writing it at each creation made creating a store cost O(stores)
            // (3.9 ms beside 10,000 stores, issue 33). The mark only has to trail what is durable.
            if !(force || w.written.is_none_or(|t| t.elapsed() >= WATERMARK_INTERVAL)) {
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
            Some(available) if available < required => Err(KernelError::InsufficientStorage { available, required }),
            _ => Ok(()),
        }
    }

    /// After a failure: closes the failed instance and reopens the database from its path, at
    /// most once per [`REOPEN_INTERVAL`], and only while the free-space guard passes (sled
    /// cannot recover onto a full disk).
    fn recover(&self) -> Result<()> {
        let mut fault = self.fault();
        let Some(f) = fault.as_mut() else { return Ok(()) };
        let unavailable = |f: &Fault| KernelError::StorageUnavailable(f.reason.clone());
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
    let started = std::time::Instant::now();
    let opened = loop {
        let opened = quietly_catching_panics(|| sled::Config::new().path(path).mode(sled::Mode::HighThroughput).open());
        match &opened {
            // sled lets go of its file lock from a background thread shortly after its last
            // handle drops, so a reopen right after closing (`recover`) can find its own lock
            // still held under load: wait for it a little before calling the database locked.
            Ok(Err(sled::Error::Io(e)))
                if e.kind() == std::io::ErrorKind::WouldBlock && started.elapsed() < LOCK_WAIT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => break opened,
        }
    };
    let db = match opened {
        Ok(Ok(db)) => db,
        Ok(Err(sled::Error::Io(e))) if is_out_of_space(&e) => {
            return Err(KernelError::InsufficientStorage {
                available: fs2::available_space(path).unwrap_or(0),
                required: 1,
            })
        }
        Ok(Err(e)) => return Err(e.into()),
        Err(panic) => {
            return Err(KernelError::Integrity(format!("the database could not recover its files (sled: {panic})")))
        }
    };
    let log_file = std::fs::File::open(path.join("db"))
        .map_err(|e| KernelError::Storage(format!("cannot open sled's log for syncing: {e}")))?;
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
        Err(e) => return Err(KernelError::Storage(format!("cannot read {}: {e}", file.display()))),
    };
    let marks: BTreeMap<String, u64> = serde_json::from_slice(&text)
        .map_err(|e| KernelError::Integrity(format!("{WATERMARK_FILE} is unreadable: {e}")))?;
    for (store, mark) in &marks {
        let meta = tree(db, store)
            .and_then(|t| t.get(META_KEY))?
            .map(|v| serde_json::from_slice::<MetaRecord>(&v))
            .transpose()
            .map_err(|e| KernelError::Integrity(format!("the meta record of store `{store}` is unreadable: {e}")))?;
        match meta {
            None => {
                return Err(KernelError::Integrity(format!(
                    "store `{store}` (durable up to revision {mark}) is missing from the database files"
                )))
            }
            Some(m) if m.revision < *mark => {
                return Err(KernelError::Integrity(format!(
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
            return Err(KernelError::StorageUnavailable(f.reason.clone()));
        }
        // On-demand records (`c/…`, `l/…`, `t/…`, `y/…`) are never projected, so start-up skips
        // them (`0` follows `/`). No size hint: `Tree::len` is itself a full scan in sled 0.34.
        self.with_db(|o| {
            let scan = || -> std::result::Result<Vec<Record>, sled::Error> {
                let tree = tree(&o.db, store)?;
                let mut out = Vec::new();
                let ranges = tree
                    .range(..b"c/".as_slice())
                    .chain(tree.range(b"c0".as_slice()..b"l/".as_slice()))
                    .chain(tree.range(b"l0".as_slice()..b"t/".as_slice()))
                    .chain(tree.range(b"t0".as_slice()..b"y/".as_slice()))
                    .chain(tree.range(b"y0".as_slice()..));
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
        self.check_space(bytes.max(ORDINARY_BATCH_BYTES).saturating_mul(2).saturating_add(COMMIT_SLACK_BYTES))?;
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

    fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if from >= to {
            return Ok(Vec::new());
        }
        self.with_db(|o| {
            let scan = || -> std::result::Result<Vec<Record>, sled::Error> {
                let mut out = Vec::new();
                for kv in tree(&o.db, store)?.range(from..to).take(limit) {
                    let (k, v) = kv?;
                    out.push((k.to_vec(), v.to_vec()));
                }
                Ok(out)
            };
            scan().map_err(|e| self.failed("a scan", e))
        })
    }

    // Both ask for the reserve plus an ordinary commit's margin, the same margin `commit` asks
    // of any batch up to the ordinary size, so that readiness, the writer's pre-check and the
    // commit agree on whether a small write fits (a refused small write means not ready).
    fn writable(&self) -> Result<()> {
        self.recover()?;
        self.check_space(ORDINARY_COMMIT_BYTES)
    }

    fn condition(&self) -> Option<String> {
        if let Some(f) = self.fault().as_ref() {
            return Some(f.reason.clone());
        }
        self.check_space(ORDINARY_COMMIT_BYTES).err().map(|e| e.to_string())
    }

    /// The watermark forgets the store first and is written at once: a crash after it leaves
    /// the store whole (the deletion was never acknowledged), whereas a tree dropped while the
    /// watermark still names it would refuse the next start as lost data.
    fn drop_store(&self, store: &str) -> Result<()> {
        self.writable()?;
        if let Some(path) = &self.path {
            let mut w = self.watermark.lock().unwrap_or_else(|p| p.into_inner());
            if w.revisions.remove(store).is_some() {
                write_watermark(path, &w.revisions)
                    .map_err(|e| KernelError::Storage(format!("cannot write the watermark file: {e}")))?;
                w.dirty = false;
                w.written = Some(std::time::Instant::now());
            }
        }
        self.with_db(|o| {
            o.db.drop_tree(format!("{TREE_PREFIX}{store}")).map_err(|e| self.failed("dropping a store", e))?;
            o.db.flush().map_err(|e| self.failed("a flush after dropping a store", e))?;
            Ok(())
        })
    }
}

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    fn put(k: &str, v: &str) -> Vec<Op> {
        vec![Op::Put(k.as_bytes().to_vec(), v.as_bytes().to_vec())]
    }

    #[test]
    fn a_failed_database_refuses_until_it_is_reopened_in_process_and_keeps_what_was_committed() {
        // sled cannot be made to fail behind the free-space guard on demand (TESTING.md, full
        // disk), so the failure is recorded the way a failing sled call records it.
        let dir = tempfile::tempdir().unwrap();
        let b = SledBackend::open_with_reserve(&dir.path().join("db"), 0).unwrap();
        b.commit("s", put("k/1", "before")).unwrap();

        let err = b.failed("a test", sled::Error::Io(std::io::Error::other("injected")));
        assert!(matches!(err, KernelError::StorageUnavailable(_)), "{err}");
        let condition = b.condition().expect("readiness reports the failure");
        assert!(condition.contains("injected"), "{condition}");

        // The writer asks before every group: the first ask closes the failed instance and
        // opens the database again, with no restart.
        b.writable().unwrap();
        assert_eq!(b.condition(), None);
        assert_eq!(b.get("s", b"k/1").unwrap().as_deref(), Some(&b"before"[..]));
        b.commit("s", put("k/2", "after")).unwrap();
        assert_eq!(b.load("s").unwrap().len(), 2);

        // A second failure within the reopen interval is refused fast, not retried at once.
        b.failed("a test", sled::Error::Io(std::io::Error::other("again")));
        b.fault().as_mut().unwrap().last_attempt = Some(std::time::Instant::now());
        assert!(matches!(b.writable().unwrap_err(), KernelError::StorageUnavailable(_)));
        assert!(b.condition().is_some());
        std::thread::sleep(REOPEN_INTERVAL);
        b.writable().unwrap();
        assert_eq!(b.load("s").unwrap().len(), 2);
    }
}
