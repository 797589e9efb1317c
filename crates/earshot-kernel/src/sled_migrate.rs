//! The sled backend's watermark file, and moving a data directory of the earlier layout (one
//! sled tree per store, a watermark of each store's revision) to the one-tree layout, once, at
//! its first open.

use std::collections::BTreeMap;

use crate::backend::{MetaRecord, META_KEY};
use crate::error::{KernelError, Result};
use crate::sled_backend::{prefixed, read_sequence, registry_key, store_prefix, SEQUENCE_KEY, WATERMARK_FILE};

/// The name prefix of a store's tree in the earlier layout.
const OLD_TREE_PREFIX: &str = "store/";

/// The key, in the records tree, that says every store of the earlier layout was copied into
/// it (the old trees may still be there, waiting to be dropped).
const MOVED_KEY: &[u8] = b"v";

/// How many records one batch of the move copies.
const MOVE_BATCH: usize = 10_000;

/// What the watermark file says is durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    /// No file: nothing to check (a new directory, or one whose file was deliberately removed).
    None,
    /// The earlier layout's file: each store's durable revision.
    PerStore(BTreeMap<String, u64>),
    /// This layout's file: the durable commit sequence.
    Sequence(u64),
}

impl Mark {
    /// The durable commit sequence the file names (0 for the earlier layout's, or none).
    pub(crate) fn sequence(&self) -> u64 {
        match self {
            Mark::Sequence(s) => *s,
            _ => 0,
        }
    }
}

/// The layout's file: `{"layout": "one-tree", "sequence": N}`. The earlier file maps store ids
/// to numbers, so a string value tells the two apart, and an earlier release refuses this file
/// as unreadable rather than serving a directory it cannot read.
#[derive(serde::Serialize, serde::Deserialize)]
struct SequenceFile {
    layout: String,
    sequence: u64,
}

const LAYOUT: &str = "one-tree";

/// Reads the watermark file beside the database at `path`.
pub(crate) fn read_watermark(path: &std::path::Path) -> Result<Mark> {
    let file = path.join(WATERMARK_FILE);
    let text = match std::fs::read(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Mark::None),
        Err(e) => return Err(KernelError::Storage(format!("cannot read {}: {e}", file.display()))),
    };
    let unreadable = |e: serde_json::Error| KernelError::Integrity(format!("{WATERMARK_FILE} is unreadable: {e}"));
    if let Ok(f) = serde_json::from_slice::<SequenceFile>(&text) {
        if f.layout != LAYOUT {
            return Err(KernelError::Integrity(format!(
                "{WATERMARK_FILE} names the layout `{}`, which this release does not know",
                f.layout
            )));
        }
        return Ok(Mark::Sequence(f.sequence));
    }
    serde_json::from_slice::<BTreeMap<String, u64>>(&text).map(Mark::PerStore).map_err(unreadable)
}

/// Writes the watermark file atomically: a synced temporary file renamed over the old one.
pub(crate) fn write_watermark(path: &std::path::Path, sequence: u64) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.join(format!("{WATERMARK_FILE}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    let body = SequenceFile { layout: LAYOUT.into(), sequence };
    f.write_all(&serde_json::to_vec(&body).map_err(std::io::Error::other)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path.join(WATERMARK_FILE))?;
    // The rename itself is made durable with the directory.
    std::fs::File::open(path)?.sync_all()
}

/// Moves every store of the earlier layout into `records`, if the directory has any:
///
/// 1. the earlier watermark is checked against the old trees (a damaged directory is refused
///    before anything is written);
/// 2. unless `MOVED_KEY` says it was done, the records tree is emptied (a move cut short by a
///    crash), every old tree is copied into it under its store's prefix with the store's
///    existence key, then the commit sequence 1 and `MOVED_KEY`, and all of it is made durable;
/// 3. the watermark file is rewritten in this layout's form;
/// 4. the old trees are dropped.
///
/// A crash at any step leaves a directory the next open finishes moving: before step 2 ends
/// the old trees are whole and the copy starts again; after it, the copy is kept.
pub(crate) fn migrate(
    path: &std::path::Path,
    db: &sled::Db,
    records: &sled::Tree,
    log_file: Option<&std::fs::File>,
    mark: &Mark,
) -> Result<()> {
    let old: Vec<String> = db
        .tree_names()
        .iter()
        .filter_map(|n| std::str::from_utf8(n).ok()?.strip_prefix(OLD_TREE_PREFIX).map(str::to_owned))
        .collect();
    if let Mark::PerStore(marks) = mark {
        check_old_marks(db, &old, marks)?;
    }
    if old.is_empty() {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let sync = || -> Result<()> {
        db.flush()?;
        if let Some(f) = log_file {
            f.sync_data().map_err(|e| KernelError::Storage(format!("cannot sync sled's log: {e}")))?;
        }
        Ok(())
    };
    let mut copied = 0usize;
    if records.get(MOVED_KEY)?.is_none() {
        records.clear()?;
        for store in &old {
            let tree = db.open_tree(format!("{OLD_TREE_PREFIX}{store}"))?;
            let prefix = store_prefix(store);
            let mut batch = sled::Batch::default();
            batch.insert(registry_key(store), &[]);
            let mut in_batch = 0;
            for kv in tree.iter() {
                let (k, v) = kv?;
                batch.insert(prefixed(&prefix, &k), v);
                in_batch += 1;
                copied += 1;
                if in_batch == MOVE_BATCH {
                    records.apply_batch(std::mem::take(&mut batch))?;
                    in_batch = 0;
                }
            }
            records.apply_batch(batch)?;
        }
        let mut last = sled::Batch::default();
        last.insert(SEQUENCE_KEY, &1u64.to_be_bytes());
        last.insert(MOVED_KEY, LAYOUT.as_bytes());
        records.apply_batch(last)?;
        sync()?;
    }
    write_watermark(path, read_sequence(records)?)
        .map_err(|e| KernelError::Storage(format!("cannot write the watermark file: {e}")))?;
    for store in &old {
        db.drop_tree(format!("{OLD_TREE_PREFIX}{store}"))?;
    }
    sync()?;
    tracing::info!(
        stores = old.len(),
        records = copied,
        seconds = started.elapsed().as_secs_f64(),
        "moved the data directory from one tree per store to one tree for every store"
    );
    Ok(())
}

/// The earlier layout's check: every store the watermark names has its tree, at or past the
/// revision it names. A tree is never opened (which would create it) to look.
fn check_old_marks(db: &sled::Db, old: &[String], marks: &BTreeMap<String, u64>) -> Result<()> {
    for (store, mark) in marks {
        if !old.iter().any(|s| s == store) {
            return Err(KernelError::Integrity(format!(
                "store `{store}` (durable up to revision {mark}) is missing from the database files"
            )));
        }
        let meta = db
            .open_tree(format!("{OLD_TREE_PREFIX}{store}"))
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
    Ok(())
}
