//! The running stores by id: read on the decision path without a lock or a shared reference
//! count, changed by publishing a new map under a mutex.
//!
//! Every read of a store used to take a shard lock of a concurrent map and clone the store's
//! handle: two atomic writes to cache lines that every core's reads share, so two cores
//! serving checks at once passed those lines back and forth on every request. Here a read
//! loads the current map through [`ArcSwap`] (which marks the load in a slot of the reading
//! thread, not in the map) and borrows the handle from it. Creating, importing, starting and
//! deleting a store are rare: each publishes a new map, a persistent one ([`imbl::HashMap`]),
//! so that a change copies a path of the map, not every entry.

use std::sync::{Arc, Mutex};

use arc_swap::{ArcSwap, Guard};

/// The running stores of one process (`V` is a store's handle; tests use plain values).
pub(crate) struct Registry<V: Clone> {
    map: ArcSwap<imbl::HashMap<String, V>>,
    /// Serialises changes, so that two changes never publish maps that each miss the other's.
    change: Mutex<()>,
}

/// The running stores as they were at one instant, borrowed: see [`crate::Earshot::running_now`].
pub struct Running<V: Clone>(Guard<Arc<imbl::HashMap<String, V>>>);

impl<V: Clone> Running<V> {
    /// The store `id`, if it was running at that instant.
    pub fn get(&self, id: &str) -> Option<&V> {
        self.0.get(id)
    }
}

impl<V: Clone> Registry<V> {
    pub(crate) fn new() -> Self {
        Registry { map: ArcSwap::from_pointee(imbl::HashMap::new()), change: Mutex::new(()) }
    }

    pub(crate) fn get(&self, id: &str) -> Option<V> {
        self.map.load().get(id).cloned()
    }

    pub(crate) fn now(&self) -> Running<V> {
        Running(self.map.load())
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.map.load().contains_key(id)
    }

    /// Every running store, as of now.
    pub(crate) fn all(&self) -> Arc<imbl::HashMap<String, V>> {
        self.map.load_full()
    }

    pub(crate) fn insert(&self, id: String, h: V) {
        self.change(|m| {
            m.insert(id, h);
        });
    }

    pub(crate) fn remove(&self, id: &str) -> Option<V> {
        self.change(|m| m.remove(id))
    }

    fn change<R>(&self, f: impl FnOnce(&mut imbl::HashMap<String, V>) -> R) -> R {
        let _one_at_a_time = self.change.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = imbl::HashMap::clone(&self.map.load());
        let out = f(&mut next);
        self.map.store(Arc::new(next));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_seen_by_later_reads_and_not_by_a_borrow_taken_before() {
        let r = Registry::new();
        r.insert("a".to_string(), Arc::new(1));
        let before = r.now();
        r.insert("b".to_string(), Arc::new(2));
        let removed = r.remove("a");
        assert_eq!(removed.as_deref(), Some(&1));
        assert_eq!(r.remove("a"), None);
        // The borrow taken before still reads the map of its instant, and keeps `a` alive.
        assert_eq!(before.get("a").map(|v| **v), Some(1));
        assert!(before.get("b").is_none());
        let now = r.now();
        assert!(now.get("a").is_none());
        assert_eq!(now.get("b").map(|v| **v), Some(2));
        assert!(r.contains("b") && !r.contains("a"));
        assert_eq!(r.get("b").as_deref(), Some(&2));
        assert_eq!(r.all().keys().collect::<Vec<_>>(), vec!["b"]);
    }

    /// Changes from several threads at once each land: none publishes a map missing another's.
    #[test]
    fn concurrent_changes_are_never_lost() {
        let r = Registry::new();
        r.insert("kept".to_string(), 0u32);
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let r = &r;
                s.spawn(move || {
                    for i in 0..200u32 {
                        let id = format!("{t}-{i}");
                        r.insert(id.clone(), i);
                        assert_eq!(r.now().get("kept"), Some(&0), "a store nobody removed went missing");
                        if i % 2 == 0 {
                            assert_eq!(r.remove(&id), Some(i));
                        }
                    }
                });
            }
        });
        let all = r.all();
        assert_eq!(all.len(), 1 + 4 * 100);
        assert!((0..4).all(|t| (0..200).all(|i| all.contains_key(&format!("{t}-{i}")) == (i % 2 == 1))));
    }
}
