//! The embedded default backend: sled on local disk, every store's records in one tree under
//! store-prefixed keys, synced on every commit, with the free-space guard, the reopen after a
//! failure and the watermark (a directory of the earlier one-tree-per-store layout is moved by
//! `sled_migrate` when it is first opened).

use std::collections::HashSet;

use crate::backend::{Backend, Op, Record};
use crate::error::{KernelError, Result};
use crate::sled_migrate;

/// Free space kept on the data directory's filesystem unless configured otherwise.
pub const DEFAULT_MIN_FREE_BYTES: u64 = 64 * 1024 * 1024;

/// sled's page cache unless configured otherwise. A store's records are read from sled when it
/// is loaded (start-up, a first use, a reload after an eviction) and for the on-demand records;
/// answers come from the projection in memory, so sled's own default (1 GiB) mostly held pages
/// nobody would read again: 1.2 GB resident for a server of 100,000 stores with 2 loaded.
pub const DEFAULT_CACHE_BYTES: u64 = 128 * 1024 * 1024;

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

/// The embedded default: sled on local disk, synced on every commit.
///
/// # Layout
///
/// One sled tree, [`RECORDS_TREE`], holds every store:
///
/// - `s<store>` → nothing: the store exists (what `stores` lists), written with its first commit;
/// - `r<n><store><key>` → one record of the store, `n` being the id's length in two bytes
///   (big-endian), so that no store's key range holds another store's keys;
/// - `g` → the commit sequence (eight bytes, big-endian), raised by every commit in the same
///   atomic batch: the watermark compares one number with it, however many stores there are.
///
/// One tree per store (the layout before) made a store cost about 200 KB of disk and made
/// creating one slower as stores were added (5 ms beside 20,000, against 0.85 ms on an empty
/// directory): sled keeps each tree's own pages and every tree's name in one meta record. In
/// one tree a store costs the bytes of its records and a key.
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
    /// sled's page cache, in bytes (what it keeps of its pages in memory).
    cache_bytes: u64,
    /// The open database. `None` only after a failed instance was closed and reopening it has
    /// not succeeded yet. Operations hold the read lock for their duration so that the reopen,
    /// which takes the write lock without waiting (`try_write`), holds the last handle and
    /// really closes the instance (releasing sled's file lock).
    open: std::sync::RwLock<Option<OpenDb>>,
    /// Set when sled failed; cleared by a successful reopen.
    fault: std::sync::Mutex<Option<Fault>>,
    /// The commit sequence known durable, kept outside sled (see [`Watermark`]).
    watermark: std::sync::Mutex<Watermark>,
}

/// File beside sled's own, holding the commit sequence known to be durable.
pub(crate) const WATERMARK_FILE: &str = "earshot-watermark.json";

/// Least time between two writes of the watermark file while commits keep coming.
const WATERMARK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// The tree that holds every store (see the type's "Layout").
pub const RECORDS_TREE: &str = "earshot/records";
/// The key of the commit sequence in [`RECORDS_TREE`].
pub(crate) const SEQUENCE_KEY: &[u8] = b"g";
/// The first byte of a store's existence key.
const REGISTRY: u8 = b's';
/// The first byte of a store's records' keys.
const RECORD: u8 = b'r';

/// A lower bound, kept outside sled, of the commit sequence that is durable: written
/// (atomically, by rename) after commits at most once per [`WATERMARK_INTERVAL`], and when the
/// backend closes. sled 0.34 treats a truncated or cut log as a crash's torn tail and silently
/// opens the prefix it can read (down to no store at all), so without this a damaged directory
/// would be served with acknowledged writes missing. At open, a sequence behind the watermark is
/// refused as damage. The mark only ever trails durable data (it is written after the commit it
/// names returned), so a crash never trips it. One number covers every store, so writing it costs
/// the same beside one store or a hundred thousand.
#[derive(Default)]
struct Watermark {
    sequence: u64,
    written: Option<std::time::Instant>,
    dirty: bool,
}

struct OpenDb {
    db: sled::Db,
    /// [`RECORDS_TREE`].
    records: sled::Tree,
    /// sled's log file, opened a second time to `fdatasync` it after each flush (see `commit`).
    log_file: Option<std::fs::File>,
    /// The newest commit sequence applied. Held while a batch is applied, so that batches of
    /// different stores applied at once still write `g` in increasing order.
    sequence: std::sync::Mutex<u64>,
    /// The stores whose existence key is written, so that only a store's first commit writes it.
    known: std::sync::Mutex<HashSet<String>>,
    /// The newest commit sequence a sync made durable. Held while syncing: a commit that finds
    /// its sequence covered when it gets the lock was made durable by another commit's sync
    /// (of any store), and acknowledges without a sync of its own.
    synced: std::sync::Mutex<u64>,
}

impl OpenDb {
    /// Opens the records tree of `db` and reads its sequence and stores.
    fn attach(db: sled::Db, log_file: Option<std::fs::File>) -> Result<Self> {
        let records = db.open_tree(RECORDS_TREE)?;
        let sequence = read_sequence(&records)?;
        let mut known = HashSet::new();
        for k in records.scan_prefix([REGISTRY]).keys() {
            known.insert(store_of_registry_key(&k?)?);
        }
        Ok(OpenDb {
            db,
            records,
            log_file,
            sequence: std::sync::Mutex::new(sequence),
            known: std::sync::Mutex::new(known),
            synced: std::sync::Mutex::new(sequence),
        })
    }

    /// Applies `batch` with the next commit sequence in it; answers that sequence.
    fn apply(&self, mut batch: sled::Batch) -> std::result::Result<u64, sled::Error> {
        let mut sequence = self.sequence.lock().unwrap_or_else(|p| p.into_inner());
        let next = *sequence + 1;
        batch.insert(SEQUENCE_KEY, &next.to_be_bytes());
        self.records.apply_batch(batch)?;
        *sequence = next;
        Ok(next)
    }

    /// Makes the commit numbered `sequence` durable: by a sync of its own, or by one that
    /// another commit made after it was applied. One sync covers every batch applied before it
    /// began, whichever store it was for, so commits of several stores that arrive together
    /// share one (group commit across stores); each store's batch stays atomic on its own.
    fn sync_through(&self, sequence: u64) -> std::result::Result<(), sled::Error> {
        let mut synced = self.synced.lock().unwrap_or_else(|p| p.into_inner());
        if *synced >= sequence {
            return Ok(());
        }
        // Every batch applied up to here is in sled's memory, so this sync makes it durable.
        let applied = *self.sequence.lock().unwrap_or_else(|p| p.into_inner());
        self.sync()?;
        *synced = applied;
        Ok(())
    }

    /// Flushes sled and makes its log stable (see `commit`).
    fn sync(&self) -> std::result::Result<(), sled::Error> {
        self.db.flush()?;
        // On Linux sled 0.34 makes its log stable with `sync_file_range`, which neither flushes
        // the device's write cache nor persists the file's size when the log grew. One
        // `fdatasync` of the same file does both, so an acknowledged write survives power
        // loss, not only a process crash. It costs one more disk flush per group commit.
        if let Some(f) = &self.log_file {
            f.sync_data()?;
            LOG_SYNCS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    fn is_known(&self, store: &str) -> bool {
        self.known.lock().unwrap_or_else(|p| p.into_inner()).contains(store)
    }

    fn set_known(&self, store: &str, known: bool) {
        let mut set = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known {
            set.insert(store.to_string());
        } else {
            set.remove(store);
        }
    }
}

/// Syncs of sled's log by this process, every database counted (see [`log_syncs`]).
static LOG_SYNCS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times this process has made sled's log durable (`fdatasync`) after a commit: with
/// the number of commits, how many commits one sync covered (`benches/commits.rs`).
pub fn log_syncs() -> u64 {
    LOG_SYNCS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The commit sequence `records` holds (0 when none was written).
pub(crate) fn read_sequence(records: &sled::Tree) -> Result<u64> {
    match records.get(SEQUENCE_KEY)? {
        None => Ok(0),
        Some(v) => <[u8; 8]>::try_from(v.as_ref())
            .map(u64::from_be_bytes)
            .map_err(|_| KernelError::Integrity("the database's commit sequence is unreadable".into())),
    }
}

/// The key that says `store` exists.
pub(crate) fn registry_key(store: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(store.len() + 1);
    k.push(REGISTRY);
    k.extend_from_slice(store.as_bytes());
    k
}

fn store_of_registry_key(k: &[u8]) -> Result<String> {
    k.get(1..)
        .and_then(|id| std::str::from_utf8(id).ok())
        .map(str::to_owned)
        .ok_or_else(|| KernelError::Integrity("a store's existence key is unreadable".into()))
}

/// What every key of `store`'s records starts with.
pub fn store_prefix(store: &str) -> Vec<u8> {
    // Store ids are at most `earshot_core::MAX_ID_LEN` (128) bytes, far below 65,535, so the
    // length always fits and keeps every store's key range apart from every other's.
    let len = u16::try_from(store.len()).unwrap_or(u16::MAX);
    let mut p = Vec::with_capacity(store.len() + 3);
    p.push(RECORD);
    p.extend_from_slice(&len.to_be_bytes());
    p.extend_from_slice(store.as_bytes());
    p
}

/// `prefix` followed by `key`.
pub(crate) fn prefixed(prefix: &[u8], key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + key.len());
    k.extend_from_slice(prefix);
    k.extend_from_slice(key);
    k
}

/// The least key greater than every key that starts with `prefix` (`None`: no such key, every
/// byte of `prefix` being 0xff).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

struct Fault {
    reason: String,
    last_attempt: Option<std::time::Instant>,
    /// Closing the failed instance hung: only a new process can open the data again.
    restart_required: bool,
}

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
    /// less than `min_free_bytes` available. A directory of the layout before (one tree per
    /// store) is checked against its watermark and moved to this one first.
    pub fn open_with_reserve(path: &std::path::Path, min_free_bytes: u64) -> Result<Self> {
        Self::open_with(path, min_free_bytes, DEFAULT_CACHE_BYTES)
    }

    /// [`SledBackend::open_with_reserve`], with sled's page cache at most `cache_bytes`.
    pub fn open_with(path: &std::path::Path, min_free_bytes: u64, cache_bytes: u64) -> Result<Self> {
        let (db, log_file) = open_db(path, cache_bytes)?;
        let records = db.open_tree(RECORDS_TREE)?;
        let mark = sled_migrate::read_watermark(path)?;
        // Checked before anything is written: a damaged directory is never written to.
        if let sled_migrate::Mark::Sequence(durable) = mark {
            let sequence = read_sequence(&records)?;
            if sequence < durable {
                return Err(KernelError::Integrity(format!(
                    "the database files end at commit {sequence} but commit {durable} was durable: the database files lost data"
                )));
            }
        }
        sled_migrate::migrate(path, &db, &records, log_file.as_ref(), &mark)?;
        drop(records);
        let open = OpenDb::attach(db, log_file)?;
        let sequence = match mark {
            sled_migrate::Mark::Sequence(durable) => durable,
            // Moved just now (the file then holds the sequence), or no file yet: nothing durable
            // is recorded beyond what the files hold.
            _ => sled_migrate::read_watermark(path)?.sequence(),
        };
        Ok(SledBackend {
            path: Some(path.to_path_buf()),
            min_free_bytes,
            cache_bytes,
            open: std::sync::RwLock::new(Some(open)),
            fault: std::sync::Mutex::new(None),
            watermark: std::sync::Mutex::new(Watermark { sequence, written: None, dirty: false }),
        })
    }

    /// A backend in a temporary directory, removed on drop (tests and benches).
    pub fn temporary() -> Result<Self> {
        let db = sled::Config::new().temporary(true).cache_capacity(DEFAULT_CACHE_BYTES).open()?;
        Ok(SledBackend {
            path: None,
            min_free_bytes: 0,
            cache_bytes: DEFAULT_CACHE_BYTES,
            open: std::sync::RwLock::new(Some(OpenDb::attach(db, None)?)),
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

    /// Applies `batch` (with `store`'s existence key on its first commit) and makes it durable:
    /// `commit`'s work on the open instance.
    fn apply_and_sync(&self, o: &OpenDb, store: &str, mut batch: sled::Batch) -> Result<u64> {
        let first = !o.is_known(store);
        if first {
            batch.insert(registry_key(store), &[]);
        }
        let sequence = o.apply(batch).map_err(|e| self.failed("a commit", e))?;
        if first {
            o.set_known(store, true);
        }
        // From here on the batch is in sled's memory: a failure leaves its durability
        // unknown, which the refusal says; it is never acknowledged. A failed fdatasync may
        // have dropped the dirty pages it was to write, so the instance is not trusted
        // again: it is reopened, and sled recovers from disk.
        self.sync_trusted(o, sequence, "a flush (the write's outcome is unknown)")?;
        Ok(sequence)
    }

    /// Makes the commit numbered `sequence` durable ([`OpenDb::sync_through`]), unless a failure
    /// is recorded by the time the sync answers: another commit's failed fdatasync may have
    /// dropped pages of sled's log before this batch, and a later sync answering does not make
    /// the batch reachable after a crash, so it is never taken as durable then.
    fn sync_trusted(&self, o: &OpenDb, sequence: u64, during: &str) -> Result<()> {
        o.sync_through(sequence).map_err(|e| self.failed(during, e))?;
        match self.fault().as_ref() {
            Some(f) => Err(KernelError::StorageUnavailable(format!(
                "{}; a write made at the same time has an unknown outcome",
                f.reason
            ))),
            None => Ok(()),
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

    /// Records that the commit numbered `sequence` is durable, and writes the watermark file
    /// when due (`force`: now, whatever is new; `sequence` `None` at a close). Best effort: a
    /// failed write only leaves an older (lower) mark, which is still true.
    fn advance_watermark(&self, sequence: Option<u64>, force: bool) {
        let Some(path) = &self.path else { return };
        let mut w = self.watermark.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(sequence) = sequence {
            if sequence > w.sequence {
                w.sequence = sequence;
                w.dirty = true;
            }
        }
        if !w.dirty || !(force || w.written.is_none_or(|t| t.elapsed() >= WATERMARK_INTERVAL)) {
            return;
        }
        match sled_migrate::write_watermark(path, w.sequence) {
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
        match open_db(&path, self.cache_bytes).and_then(|(db, log_file)| OpenDb::attach(db, log_file)) {
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
fn open_db(path: &std::path::Path, cache_bytes: u64) -> Result<(sled::Db, Option<std::fs::File>)> {
    let started = std::time::Instant::now();
    let opened = loop {
        let opened = quietly_catching_panics(|| {
            sled::Config::new().path(path).mode(sled::Mode::HighThroughput).cache_capacity(cache_bytes).open()
        });
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
    Ok((db, Some(log_file)))
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
        self.advance_watermark(None, true);
    }
}

impl Backend for SledBackend {
    fn stores(&self) -> Result<Vec<String>> {
        self.with_db(|o| {
            let mut out = Vec::new();
            for k in o.records.scan_prefix([REGISTRY]).keys() {
                let k = k.map_err(|e| self.failed("listing the stores", e))?;
                out.push(store_of_registry_key(&k)?);
            }
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
        let prefix = store_prefix(store);
        let at = |key: &[u8]| prefixed(&prefix, key);
        let mut bounds = vec![prefix.clone()];
        for on_demand in crate::backend::ON_DEMAND_PREFIXES {
            bounds.push(at(&[on_demand, b'/']));
            bounds.push(at(&[on_demand, b'0']));
        }
        let end = prefix_end(&prefix);
        self.with_db(|o| {
            let scan = || -> std::result::Result<Vec<Record>, sled::Error> {
                let mut out = Vec::new();
                for pair in bounds.chunks(2) {
                    let range = match (pair, &end) {
                        ([from, to], _) => o.records.range(from.as_slice()..to.as_slice()),
                        ([from], Some(end)) => o.records.range(from.as_slice()..end.as_slice()),
                        ([from], None) => o.records.range(from.as_slice()..),
                        _ => continue,
                    };
                    for kv in range {
                        let (k, v) = kv?;
                        out.push((k[prefix.len()..].to_vec(), v.to_vec()));
                    }
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
        let prefix = store_prefix(store);
        let mut batch = sled::Batch::default();
        for op in ops {
            match op {
                Op::Put(k, v) => batch.insert(prefixed(&prefix, &k), v),
                Op::Del(k) => batch.remove(prefixed(&prefix, &k)),
            }
        }
        let sequence = self.with_db(|o| self.apply_and_sync(o, store, batch))?;
        self.advance_watermark(Some(sequence), false);
        Ok(())
    }

    fn get(&self, store: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let key = prefixed(&store_prefix(store), key);
        self.with_db(|o| o.records.get(key).map(|v| v.map(|v| v.to_vec())).map_err(|e| self.failed("a read", e)))
    }

    fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if from >= to {
            return Ok(Vec::new());
        }
        let prefix = store_prefix(store);
        let (from, to) = (prefixed(&prefix, from), prefixed(&prefix, to));
        self.with_db(|o| {
            let scan = || -> std::result::Result<Vec<Record>, sled::Error> {
                let mut out = Vec::new();
                for kv in o.records.range(from.as_slice()..to.as_slice()).take(limit) {
                    let (k, v) = kv?;
                    out.push((k[prefix.len()..].to_vec(), v.to_vec()));
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

    /// One atomic batch removes the store's existence key and every record: a crash leaves the
    /// store whole (the deletion was never acknowledged) or gone, never half there.
    fn drop_store(&self, store: &str) -> Result<()> {
        self.writable()?;
        let prefix = store_prefix(store);
        let sequence = self.with_db(|o| {
            let mut batch = sled::Batch::default();
            for k in o.records.scan_prefix(&prefix).keys() {
                batch.remove(k.map_err(|e| self.failed("reading a store to drop it", e))?);
            }
            batch.remove(registry_key(store));
            let sequence = o.apply(batch).map_err(|e| self.failed("dropping a store", e))?;
            o.set_known(store, false);
            self.sync_trusted(o, sequence, "a flush after dropping a store")?;
            Ok(sequence)
        })?;
        self.advance_watermark(Some(sequence), false);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use crate::backend::{MetaRecord, META_KEY};
    use std::collections::BTreeMap;

    /// sled lets go of its file lock from a background thread some time after its last handle
    /// drops (see `open_db`), later still on a loaded machine: a test that reopens a directory
    /// it just closed waits for the lock rather than failing on it.
    fn until_unlocked<T, E: std::fmt::Display>(
        mut open: impl FnMut() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let started = std::time::Instant::now();
        loop {
            match open() {
                Err(e) if e.to_string().contains("lock") && started.elapsed() < std::time::Duration::from_secs(30) => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    fn raw(path: &std::path::Path) -> sled::Db {
        until_unlocked(|| sled::Config::new().path(path).open()).unwrap()
    }

    fn reopen(path: &std::path::Path) -> Result<SledBackend> {
        until_unlocked(|| SledBackend::open_with_reserve(path, 0))
    }

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
        // opens the database again, with no restart. On a loaded machine sled may still hold
        // the closed instance's file lock past `LOCK_WAIT`; that ask is then refused and a
        // later one, after `REOPEN_INTERVAL`, reopens (as the writer's next groups would).
        until_unlocked(|| b.writable()).unwrap();
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
        until_unlocked(|| b.writable()).unwrap();
        assert_eq!(b.load("s").unwrap().len(), 2);
    }

    #[test]
    fn a_commit_is_not_taken_as_durable_once_a_failure_is_recorded_during_it() {
        let dir = tempfile::tempdir().unwrap();
        let b = SledBackend::open_with_reserve(&dir.path().join("db"), 0).unwrap();
        b.commit("s", put("k/1", "before")).unwrap();
        // Another commit's sync failed after this commit passed `writable` (which would have
        // reopened the instance): this one's sync answers, but the log may have a hole before it.
        b.failed("a test", sled::Error::Io(std::io::Error::other("injected")));
        let mut batch = sled::Batch::default();
        batch.insert(prefixed(&store_prefix("s"), b"k/2"), b"during".to_vec());
        let err = b.with_db(|o| b.apply_and_sync(o, "s", batch)).unwrap_err();
        assert!(matches!(err, KernelError::StorageUnavailable(_)), "{err}");
        assert!(err.to_string().contains("unknown outcome"), "{err}");
    }

    fn rec(store: &str, b: &SledBackend) -> Vec<(String, String)> {
        b.load(store)
            .unwrap()
            .into_iter()
            .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
            .collect()
    }

    #[test]
    fn stores_in_one_tree_never_see_each_others_records() {
        let b = SledBackend::temporary().unwrap();
        // `a` is a prefix of `ab` and `a/x`'s keys could spell `ab`'s: the length in the prefix
        // keeps them apart.
        b.commit("a", vec![Op::Put(b"i/1".to_vec(), b"a1".to_vec()), Op::Put(b"c/1".to_vec(), b"big".to_vec())])
            .unwrap();
        b.commit("ab", put("i/1", "ab1")).unwrap();
        b.commit("b", put("y/1", "attempt")).unwrap();
        assert_eq!(b.stores().unwrap(), ["a", "ab", "b"]);
        assert_eq!(rec("a", &b), [("i/1".to_string(), "a1".to_string())], "on-demand records are left out");
        assert_eq!(rec("ab", &b), [("i/1".to_string(), "ab1".to_string())]);
        assert!(rec("b", &b).is_empty());
        assert!(rec("nobody", &b).is_empty());
        assert_eq!(b.get("a", b"c/1").unwrap().as_deref(), Some(&b"big"[..]));
        assert_eq!(b.get("ab", b"c/1").unwrap(), None);
        assert_eq!(b.scan("a", b"", b"~", 10).unwrap().len(), 2);
        assert_eq!(b.scan("ab", b"i/", b"i0", 10).unwrap(), [(b"i/1".to_vec(), b"ab1".to_vec())]);
        // Reading an unknown store creates nothing.
        assert_eq!(b.stores().unwrap(), ["a", "ab", "b"]);

        b.drop_store("a").unwrap();
        assert_eq!(b.stores().unwrap(), ["ab", "b"]);
        assert_eq!(b.get("a", b"c/1").unwrap(), None);
        assert_eq!(rec("ab", &b), [("i/1".to_string(), "ab1".to_string())]);
        // The id can be created again, empty.
        b.commit("a", put("i/2", "again")).unwrap();
        assert_eq!(rec("a", &b), [("i/2".to_string(), "again".to_string())]);
        assert_eq!(b.stores().unwrap(), ["a", "ab", "b"]);
    }

    #[test]
    fn the_watermark_is_one_sequence_and_a_directory_behind_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        {
            let b = reopen(&path).unwrap();
            for i in 0..5 {
                b.commit(&format!("s{i}"), put("k/1", "v")).unwrap();
            }
            b.drop_store("s0").unwrap();
        }
        assert_eq!(sled_migrate::read_watermark(&path).unwrap(), sled_migrate::Mark::Sequence(6));
        let b = reopen(&path).unwrap();
        assert_eq!(b.stores().unwrap(), ["s1", "s2", "s3", "s4"]);
        drop(b);
        // A mark past what the files hold is what a cut log looks like.
        sled_migrate::write_watermark(&path, 7).unwrap();
        let err = reopen(&path).err().expect("refused");
        assert!(matches!(err, KernelError::Integrity(_)), "{err}");
        assert!(err.to_string().contains("end at commit 6 but commit 7 was durable"), "{err}");
    }

    /// A directory as the earlier layout wrote it: one tree per store, each with its meta
    /// record, and the watermark of each store's revision.
    fn earlier_layout(path: &std::path::Path, stores: &[(&str, u64, usize)]) {
        let db = raw(path);
        let mut marks = BTreeMap::new();
        for (store, revision, records) in stores {
            let tree = db.open_tree(format!("store/{store}")).unwrap();
            let meta = MetaRecord {
                id: store.to_string(),
                name: None,
                revision: *revision,
                created_at_ms: 1,
                committed_at_ms: None,
                incarnation: None,
            };
            tree.insert(META_KEY, serde_json::to_vec(&meta).unwrap()).unwrap();
            for i in 0..*records {
                tree.insert(format!("i/{store}-{i:05}"), format!("item {i}").as_bytes()).unwrap();
            }
            tree.insert(format!("c/{store}"), b"content".as_slice()).unwrap();
            marks.insert(store.to_string(), *revision);
        }
        db.flush().unwrap();
        std::fs::write(path.join(WATERMARK_FILE), serde_json::to_vec(&marks).unwrap()).unwrap();
    }

    fn expect_moved(b: &SledBackend, stores: &[(&str, u64, usize)]) {
        let names: Vec<&str> = stores.iter().map(|s| s.0).collect();
        assert_eq!(b.stores().unwrap(), names);
        for (store, revision, records) in stores {
            let loaded = b.load(store).unwrap();
            assert_eq!(loaded.len(), records + 1, "store {store}");
            let meta: MetaRecord = serde_json::from_slice(&b.get(store, META_KEY).unwrap().unwrap()).unwrap();
            assert_eq!(meta.revision, *revision);
            assert_eq!(b.get(store, format!("c/{store}").as_bytes()).unwrap().as_deref(), Some(&b"content"[..]));
        }
    }

    #[test]
    fn a_directory_of_one_tree_per_store_is_moved_to_one_tree_at_its_first_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let stores = [("a", 3, 2), ("ab", 7, 25_000), ("b", 1, 0)];
        earlier_layout(&path, &stores);
        {
            let b = reopen(&path).unwrap();
            expect_moved(&b, &stores);
            b.commit("b", put("i/new", "after the move")).unwrap();
        }
        let db = raw(&path);
        assert!(!db.tree_names().iter().any(|n| n.starts_with(b"store/")), "the old trees are dropped once moved");
        drop(db);
        assert_eq!(sled_migrate::read_watermark(&path).unwrap(), sled_migrate::Mark::Sequence(2));
        let b = reopen(&path).unwrap();
        assert_eq!(b.get("b", b"i/new").unwrap().as_deref(), Some(&b"after the move"[..]));
        assert_eq!(rec("b", &b).len(), 2, "the meta record and the new one");
        assert_eq!(b.load("ab").unwrap().len(), 25_001);
    }

    #[test]
    fn a_move_cut_short_is_finished_by_the_next_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let stores = [("a", 3, 10), ("b", 4, 10)];
        earlier_layout(&path, &stores);
        {
            // Cut during the copy: part of one store copied, no mark that the copy finished.
            let db = raw(&path);
            let records = db.open_tree(RECORDS_TREE).unwrap();
            records.insert(prefixed(&store_prefix("a"), b"i/a-00000"), b"partial".as_slice()).unwrap();
            records.insert(prefixed(&store_prefix("a"), b"i/stray"), b"partial".as_slice()).unwrap();
            db.flush().unwrap();
        }
        let b = reopen(&path).unwrap();
        expect_moved(&b, &stores);
        assert_eq!(b.get("a", b"i/stray").unwrap(), None, "the cut copy is started again");
        drop(b);

        // Cut after the copy finished, before the old trees were dropped: the copy is kept (a
        // record changed since then in the copy stays) and the old trees go.
        earlier_layout(&dir.path().join("db2"), &stores);
        let path = dir.path().join("db2");
        {
            let db = raw(&path);
            let records = db.open_tree(RECORDS_TREE).unwrap();
            for (store, _, _) in &stores {
                let tree = db.open_tree(format!("store/{store}")).unwrap();
                records.insert(registry_key(store), b"".as_slice()).unwrap();
                for kv in tree.iter() {
                    let (k, v) = kv.unwrap();
                    records.insert(prefixed(&store_prefix(store), &k), v).unwrap();
                }
            }
            records.insert(prefixed(&store_prefix("a"), b"i/a-00000"), b"copied".as_slice()).unwrap();
            records.insert(SEQUENCE_KEY, 1u64.to_be_bytes().as_slice()).unwrap();
            records.insert(b"v", b"one-tree".as_slice()).unwrap();
            db.flush().unwrap();
        }
        let b = reopen(&path).unwrap();
        expect_moved(&b, &stores);
        assert_eq!(b.get("a", b"i/a-00000").unwrap().as_deref(), Some(&b"copied"[..]));
    }

    #[test]
    fn a_damaged_directory_of_the_earlier_layout_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        earlier_layout(&path, &[("a", 3, 1)]);
        let mut marks = BTreeMap::new();
        marks.insert("a".to_string(), 5u64);
        marks.insert("gone".to_string(), 1u64);
        for (name, mark) in [("behind", &marks), ("missing", &BTreeMap::from([("gone".to_string(), 1u64)]))] {
            std::fs::write(path.join(WATERMARK_FILE), serde_json::to_vec(mark).unwrap()).unwrap();
            let err = reopen(&path).err().expect("refused");
            assert!(matches!(err, KernelError::Integrity(_)), "{name}: {err}");
            let db = raw(&path);
            assert!(db.tree_names().iter().any(|n| n.as_ref() == b"store/a"), "{name}: the old tree is kept");
            assert!(
                !db.tree_names().iter().any(|n| n.as_ref() == b"store/gone"),
                "{name}: looking for a missing store does not create it"
            );
            assert!(db.open_tree(RECORDS_TREE).unwrap().is_empty(), "{name}: nothing was moved");
        }
    }

    #[test]
    fn one_sync_covers_every_batch_applied_before_it_whichever_store() {
        let dir = tempfile::tempdir().unwrap();
        let b = SledBackend::open_with_reserve(&dir.path().join("db"), 0).unwrap();
        b.with_db(|o| {
            let batch = |store: &str| {
                let mut batch = sled::Batch::default();
                batch.insert(prefixed(&store_prefix(store), b"k/1"), b"v".as_slice());
                batch
            };
            // Two stores' batches applied before either is synced (two writers at once).
            let first = o.apply(batch("a")).unwrap();
            let second = o.apply(batch("b")).unwrap();
            assert_eq!((first, second), (1, 2));
            o.sync_through(first).unwrap();
            assert_eq!(*o.synced.lock().unwrap(), 2, "the first commit's sync made the second durable too");
            // The second commit finds itself covered; a third applied later is not.
            o.sync_through(second).unwrap();
            let third = o.apply(batch("a")).unwrap();
            assert!(*o.synced.lock().unwrap() < third);
            o.sync_through(third).unwrap();
            assert_eq!(*o.synced.lock().unwrap(), 3);
            Ok(())
        })
        .unwrap();
    }
}
