//! Two compact persistent structures for data that is mostly built once at start-up and then
//! grows slowly: a name → id map and an append-only posting list.
//!
//! Both keep a flat, immutable base (shared by every snapshot through an `Arc`) and a small
//! persistent tail for what was added since, so cloning a snapshot stays O(1) while the bulk
//! of the data costs what a plain `HashMap` or slice costs, not what a HAMT or RRB tree costs.

use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxBuildHasher;

use crate::snapshot::Map;

/// An insert-only map from names to ids: a flat base plus a persistent overlay, folded into a
/// new base when the overlay grows past a quarter of the base (amortised O(1) per insert).
#[derive(Clone)]
pub(crate) struct NameMap<V: Clone> {
    base: Arc<HashMap<Arc<str>, V, FxBuildHasher>>,
    overlay: Map<Arc<str>, V>,
}

/// Smallest overlay worth folding.
const FOLD_MIN: usize = 4096;

impl<V: Clone> Default for NameMap<V> {
    fn default() -> Self {
        NameMap { base: Arc::new(HashMap::default()), overlay: Map::default() }
    }
}

impl<V: Clone> NameMap<V> {
    /// A map whose base is `base` (the start-up rebuild).
    pub fn from_base(base: HashMap<Arc<str>, V, FxBuildHasher>) -> Self {
        NameMap { base: Arc::new(base), overlay: Map::default() }
    }

    pub fn get(&self, name: &str) -> Option<&V> {
        if !self.overlay.is_empty() {
            if let Some(v) = self.overlay.get(name) {
                return Some(v);
            }
        }
        self.base.get(name)
    }

    /// Inserts a name that is not yet present (callers check first).
    pub fn insert(&mut self, name: Arc<str>, v: V) {
        self.overlay.insert(name, v);
        if self.overlay.len() > FOLD_MIN.max(self.base.len() / 4) {
            let mut base = (*self.base).clone();
            base.extend(std::mem::take(&mut self.overlay));
            self.base = Arc::new(base);
        }
    }
}

/// An append-only, ascending list of ids: an exact-size base slice plus a persistent tail.
#[derive(Clone)]
pub(crate) struct Posting {
    base: Arc<[u32]>,
    tail: imbl::Vector<u32>,
}

impl Default for Posting {
    fn default() -> Self {
        Posting { base: Arc::from(Vec::new()), tail: imbl::Vector::new() }
    }
}

impl FromIterator<u32> for Posting {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        Posting { base: iter.into_iter().collect(), tail: imbl::Vector::new() }
    }
}

impl Posting {
    /// Appends `id`, which must be larger than every id already present.
    pub fn push(&mut self, id: u32) {
        self.tail.push_back(id);
    }

    pub fn len(&self) -> usize {
        self.base.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        match self.base.get(i) {
            Some(v) => Some(*v),
            None => self.tail.get(i - self.base.len()).copied(),
        }
    }

    /// Position of the first id not smaller than `id`.
    pub fn lower_bound(&self, id: u32) -> usize {
        if self.base.last().is_some_and(|last| *last >= id) {
            return self.base.partition_point(|x| *x < id);
        }
        let in_tail = match self.tail.binary_search(&id) {
            Ok(p) | Err(p) => p,
        };
        self.base.len() + in_tail
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.base.iter().copied().chain(self.tail.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posting_reads_across_base_and_tail() {
        let mut p: Posting = [1, 3, 5].into_iter().collect();
        p.push(7);
        p.push(9);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![1, 3, 5, 7, 9]);
        assert_eq!((p.len(), p.get(2), p.get(3), p.get(5)), (5, Some(5), Some(7), None));
        assert_eq!([0, 1, 2, 5, 6, 9, 10].map(|x| p.lower_bound(x)), [0, 0, 1, 2, 3, 4, 5]);
        let empty = Posting::default();
        assert_eq!((empty.lower_bound(3), empty.get(0), empty.is_empty()), (0, None, true));
    }

    #[test]
    fn name_map_folds_without_losing_entries() {
        let mut m: NameMap<u32> = NameMap::default();
        for i in 0..10_000u32 {
            m.insert(Arc::from(format!("n{i}").as_str()), i);
        }
        let snapshot = m.clone();
        m.insert(Arc::from("late"), 99);
        assert!((0..10_000u32).all(|i| m.get(&format!("n{i}")) == Some(&i)));
        assert_eq!((m.get("late"), snapshot.get("late"), snapshot.get("n9999")), (Some(&99), None, Some(&9999)));
    }
}
