//! Reading a store's records as they were at one revision while writes go on (an export): a
//! pin, and the writer's side of it, which saves the value each wanted key had at the pinned
//! revision before its first commit that overwrites or deletes it (copy-on-write pre-images).
//!
//! A pin is taken between two commits of this process's writer (`Pins` is locked from the
//! saving of pre-images to the end of the commit), so the records it reads are exactly those of
//! one revision: a key's current value when no commit has touched it since, else the value
//! saved before the first commit that did (absent for a key created since). Reads look at the
//! backend first and at the saved values second: a value saved in between is then the older
//! one, which is the one wanted. Commits from *other* processes (replicas over a shared
//! datastore) do not pass through here; the reader detects them by the revision record, which
//! it reads through the pin like any other key.
//!
//! The saved values are bounded ([`MAX_SAVED_BYTES`] per pin): past it, or when a pre-image
//! cannot be read, the pin fails (its reads answer `write_conflict`, safe to retry) and keeps
//! nothing, so a slow reader of a busy store costs bounded memory and never fails a write.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use super::backend::{Backend, Op, RecordsView};
use crate::error::{KernelError, Result};

/// Most bytes (keys and values) a pin keeps for the writes made while it is open.
pub const MAX_SAVED_BYTES: usize = 256 * 1024 * 1024;

/// What a pin saved: each key's value at the pinned revision (`None`: the key did not exist).
#[derive(Default)]
struct Saved {
    before: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    bytes: usize,
    /// Why the pin can no longer answer, once it cannot.
    failed: Option<String>,
}

struct Shared {
    /// The keys the pin reads (others are never saved).
    wanted: fn(&[u8]) -> bool,
    saved: Mutex<Saved>,
}

/// The open pins of one store, kept by its writer.
#[derive(Default)]
pub struct Pins {
    open: Mutex<Vec<Weak<Shared>>>,
}

impl Pins {
    /// Pins the records of `store` as they are now: between two commits of this writer.
    pub fn pin(&self, backend: Arc<dyn Backend>, store: &str, wanted: fn(&[u8]) -> bool) -> PinnedRecords {
        let shared = Arc::new(Shared { wanted, saved: Mutex::default() });
        let mut open = lock(&self.open);
        open.retain(|w| w.strong_count() > 0);
        open.push(Arc::downgrade(&shared));
        PinnedRecords { backend, store: store.to_string(), shared, view: None }
    }

    /// Commits `ops` with `commit`, first saving for every open pin the value each key it
    /// wants had before (once per key and pin: later values are not the pinned revision's).
    pub fn commit(
        &self,
        backend: &dyn Backend,
        store: &str,
        ops: Vec<Op>,
        commit: impl FnOnce(Vec<Op>) -> Result<()>,
    ) -> Result<()> {
        let mut open = lock(&self.open);
        open.retain(|w| w.strong_count() > 0);
        for pin in open.iter().filter_map(Weak::upgrade) {
            save(&pin, backend, store, &ops);
        }
        // Held until the commit returns: a pin taken meanwhile would miss its pre-images.
        let done = commit(ops);
        drop(open);
        done
    }

    /// Pins open now (an export keeps its store loaded).
    pub fn open(&self) -> usize {
        lock(&self.open).iter().filter(|w| w.strong_count() > 0).count()
    }
}

fn save(pin: &Shared, backend: &dyn Backend, store: &str, ops: &[Op]) {
    let mut saved = lock(&pin.saved);
    if saved.failed.is_some() {
        return;
    }
    for op in ops {
        let k = match op {
            Op::Put(k, _) | Op::Del(k) => k,
        };
        if !(pin.wanted)(k) || saved.before.contains_key(k) {
            continue;
        }
        let value = match backend.get(store, k) {
            Ok(v) => v,
            Err(e) => {
                fail(&mut saved, format!("the record before a write could not be read: {e}"));
                return;
            }
        };
        saved.bytes += k.len() + value.as_ref().map_or(0, Vec::len) + 64;
        if saved.bytes > MAX_SAVED_BYTES {
            fail(&mut saved, format!("more than {MAX_SAVED_BYTES} bytes of its records changed while it was read"));
            return;
        }
        saved.before.insert(k.clone(), value);
    }
}

fn fail(saved: &mut Saved, why: String) {
    saved.before = BTreeMap::new();
    saved.failed = Some(why);
}

/// Records as `(key, value)`, in key order.
pub type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// The records of one store at the revision of its pin (or, made with
/// [`PinnedRecords::unpinned`], simply the backend's current records; made with
/// [`PinnedRecords::viewed`], those of the datastore's own snapshot).
pub struct PinnedRecords {
    backend: Arc<dyn Backend>,
    store: String,
    shared: Arc<Shared>,
    /// The datastore's snapshot, when it has one: read in place of the backend and the saved
    /// values, and unchanged by any process's commits.
    view: Option<Mutex<Box<dyn RecordsView>>>,
}

impl PinnedRecords {
    /// The records of `view`, the datastore's snapshot of `store` ([`Backend::snapshot`]).
    pub fn viewed(backend: Arc<dyn Backend>, store: &str, view: Box<dyn RecordsView>) -> Self {
        PinnedRecords {
            backend,
            store: store.to_string(),
            shared: Arc::new(Shared { wanted: |_| false, saved: Mutex::default() }),
            view: Some(Mutex::new(view)),
        }
    }

    /// The backend's records read as they are (an offline export: no writer runs).
    pub fn unpinned(backend: Arc<dyn Backend>, store: &str) -> Self {
        PinnedRecords {
            backend,
            store: store.to_string(),
            shared: Arc::new(Shared { wanted: |_| false, saved: Mutex::default() }),
            view: None,
        }
    }

    pub fn store(&self) -> &str {
        &self.store
    }

    fn failed(&self, saved: &Saved) -> Result<()> {
        match &saved.failed {
            Some(why) => Err(KernelError::WriteConflict(format!(
                "the read of store `{}` at one revision was given up: {why}; retry",
                self.store
            ))),
            None => Ok(()),
        }
    }

    /// One record at the pinned revision.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(view) = &self.view {
            return lock(view).get(key);
        }
        let now = self.backend.get(&self.store, key)?;
        let saved = lock(&self.shared.saved);
        self.failed(&saved)?;
        Ok(match saved.before.get(key) {
            Some(before) => before.clone(),
            None => now,
        })
    }

    /// The records with keys in `[from, to)` at the pinned revision, in key order, read from at
    /// most `limit` of the backend's current records; with the key to continue from, `None`
    /// once the range is done.
    pub fn scan(&self, from: &[u8], to: &[u8], limit: usize) -> Result<(Rows, Option<Vec<u8>>)> {
        let rows = match &self.view {
            Some(view) => lock(view).scan(from, to, limit)?,
            None => self.backend.scan(&self.store, from, to, limit)?,
        };
        // The part of the range these rows cover: up to the last row when the scan was cut
        // short by `limit`, else the whole range.
        let (upto, next) = match rows.last() {
            Some((last, _)) if rows.len() >= limit => {
                let mut next = last.clone();
                next.push(0);
                (next.clone(), Some(next))
            }
            _ => (to.to_vec(), None),
        };
        let saved = lock(&self.shared.saved);
        self.failed(&saved)?;
        if saved.before.is_empty() || from >= upto.as_slice() {
            return Ok((rows, next));
        }
        let mut merged: BTreeMap<Vec<u8>, Vec<u8>> = rows.into_iter().collect();
        for (k, before) in saved.before.range(from.to_vec()..upto) {
            match before {
                Some(v) => merged.insert(k.clone(), v.clone()),
                None => merged.remove(k),
            };
        }
        Ok((merged.into_iter().collect(), next))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use crate::backend::MemoryBackend;

    fn put(k: &str, v: &str) -> Op {
        Op::Put(k.as_bytes().to_vec(), v.as_bytes().to_vec())
    }

    fn all(p: &PinnedRecords, limit: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut from = Vec::new();
        loop {
            let (rows, next) = p.scan(&from, &[0xff], limit).unwrap();
            out.extend(rows.into_iter().map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap())));
            match next {
                Some(n) => from = n,
                None => return out,
            }
        }
    }

    #[test]
    fn a_pin_reads_the_records_of_its_revision_whatever_is_written_after() {
        let backend: Arc<dyn Backend> = Arc::new(MemoryBackend::default());
        let pins = Pins::default();
        let commit = |ops: Vec<Op>| pins.commit(&*backend, "s", ops, |ops| backend.commit("s", ops)).unwrap();
        commit(vec![put("a", "1"), put("b", "1"), put("c", "1"), put("x", "keep")]);
        let pin = pins.pin(backend.clone(), "s", |k| k != b"x");
        let before = all(&pin, 2);
        // Overwritten, deleted, created, overwritten twice; `x` is not wanted.
        commit(vec![put("a", "2"), Op::Del(b"b".to_vec()), put("bb", "new"), put("c", "2")]);
        commit(vec![put("c", "3"), put("x", "changed"), put("d", "new")]);
        for limit in [1, 2, 3, 100] {
            let mut expect = before.clone();
            expect.iter_mut().filter(|(k, _)| k == "x").for_each(|(_, v)| *v = "changed".into());
            assert_eq!(all(&pin, limit), expect, "limit {limit}");
        }
        assert_eq!(pin.get(b"b").unwrap(), Some(b"1".to_vec()));
        assert_eq!(pin.get(b"d").unwrap(), None);
        assert_eq!(pins.open(), 1);
        drop(pin);
        assert_eq!(pins.open(), 0);
        // Unpinned: the records as they are.
        let now = PinnedRecords::unpinned(backend.clone(), "s");
        assert_eq!(all(&now, 2).len(), 5);
    }
}
