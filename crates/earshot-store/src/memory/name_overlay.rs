//! The item names added since an item table's lines were built (`crate::memory::id_table`):
//! an append-only hash table of `(name hash, item id)` slots that every snapshot descending
//! from the one that made it shares, so adding a name copies nothing.
//!
//! Why not a persistent map: the overlay held up to an eighth of the items (a million-item
//! store folds at 125,000), and a persistent hash map copied a path of four nodes per create,
//! each holding up to 32 shared names whose reference counts the copy and, later, the
//! reclaiming thread touched: dozens of cache misses per create at a million items.
//!
//! Why sharing is safe: the table only ever gains slots, and a lookup believes a slot only
//! when the snapshot asking has an item at that id with exactly that name (`name_of`). A slot
//! another snapshot added (a later create, or an apply that was dropped or decided again) names
//! an id the asker does not have, or one whose name differs, and is passed over. A name the
//! asker does have was added before the asker was published, into this table or into the one
//! it was copied to when it grew (each copy takes every slot), and slots are never emptied, so
//! the probe that reaches it then reaches it still.
//!
//! Writers (only ever the store's writer thread in practice) take the table's lock; readers take
//! none.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxBuildHasher;

/// An empty slot. No slot holds it: a name's tag is never `u32::MAX` (see [`tag`]).
const EMPTY: u64 = u64::MAX;

/// Slots of the first table: small, since most stores are small (a store of ten items keeps
/// 32 slots, 256 bytes); each growth doubles, so a name is copied at most about twice on average.
const FIRST_CAPACITY: usize = 16;

/// The overlay of one item table (cheap to clone: clones share the table).
#[derive(Clone, Default)]
pub(crate) struct NameOverlay {
    table: Option<Arc<Table>>,
}

struct Table {
    /// `tag << 32 | id`, or [`EMPTY`]; a power of two of them, at most half full.
    slots: Box<[AtomicU64]>,
    /// Slots filled, counted under the lock every writer of this table takes.
    filled: Mutex<usize>,
}

/// A name's tag: its slot's upper half, which also places it (`tag & mask`). Never `u32::MAX`.
fn tag(name: &str) -> u32 {
    use std::hash::BuildHasher;
    let mut h = FxBuildHasher.hash_one(name);
    // A final mix (murmur3's), so every bit of the tag depends on the whole name.
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h as u32).min(u32::MAX - 1)
}

impl Table {
    fn with_capacity(capacity: usize) -> Table {
        Table { slots: (0..capacity).map(|_| AtomicU64::new(EMPTY)).collect(), filled: Mutex::new(0) }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Writes `slot` into the first empty slot of its probe (the caller holds the lock and has
    /// made room, so there is one).
    fn place(&self, slot: u64) {
        let mask = self.mask();
        let mut at = (slot >> 32) as usize & mask;
        for _ in 0..self.slots.len() {
            if let Some(s) = self.slots.get(at) {
                if s.load(Ordering::Relaxed) == EMPTY {
                    s.store(slot, Ordering::Release);
                    return;
                }
            }
            at = (at + 1) & mask;
        }
    }
}

fn lock(m: &Mutex<usize>) -> std::sync::MutexGuard<'_, usize> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl NameOverlay {
    /// The id of `name`, if a slot names it and the asker's item at that id has that name.
    pub fn get<'a>(&self, name: &str, name_of: impl Fn(u32) -> Option<&'a str>) -> Option<u32> {
        let table = self.table.as_deref()?;
        let tag = tag(name);
        let mask = table.mask();
        let mut at = tag as usize & mask;
        // At most half the slots are filled, so every probe meets an empty one.
        for _ in 0..table.slots.len() {
            let slot = table.slots.get(at)?.load(Ordering::Acquire);
            if slot == EMPTY {
                return None;
            }
            if (slot >> 32) as u32 == tag {
                let id = slot as u32;
                if name_of(id) == Some(name) {
                    return Some(id);
                }
            }
            at = (at + 1) & mask;
        }
        None
    }

    /// Adds `name` as item `id`. Clones made before see the slot too, and pass over it (see the
    /// module docs); the table grows (into a copy this overlay alone then holds) when half full.
    pub fn insert(&mut self, name: &str, id: u32) {
        let slot = (u64::from(tag(name)) << 32) | u64::from(id);
        let table = self.table.get_or_insert_with(|| Arc::new(Table::with_capacity(FIRST_CAPACITY))).clone();
        let mut filled = lock(&table.filled);
        if (*filled + 1) * 2 > table.slots.len() {
            let bigger = Table::with_capacity(table.slots.len() * 2);
            for s in table.slots.iter() {
                let s = s.load(Ordering::Relaxed);
                if s != EMPTY {
                    bigger.place(s);
                }
            }
            bigger.place(slot);
            *lock(&bigger.filled) = *filled + 1;
            drop(filled);
            self.table = Some(Arc::new(bigger));
            return;
        }
        table.place(slot);
        *filled += 1;
    }

    /// Slots filled (names added, counting any a dropped apply added).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.table.as_deref().map_or(0, |t| *lock(&t.filled))
    }

    /// The ids in the slots, in slot order (tests).
    #[cfg(test)]
    pub fn ids(&self) -> Vec<u32> {
        self.table.as_deref().map_or_else(Vec::new, |t| {
            t.slots.iter().map(|s| s.load(Ordering::Relaxed)).filter(|s| *s != EMPTY).map(|s| s as u32).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_by_their_own_ids_across_growth() {
        let names: Vec<String> = (0..50_000u32).map(|i| format!("item-{i}")).collect();
        let name_of = |i: u32| names.get(i as usize).map(String::as_str);
        let mut o = NameOverlay::default();
        assert_eq!(o.get("item-0", name_of), None);
        for (i, n) in names.iter().enumerate() {
            o.insert(n, i as u32);
        }
        assert_eq!(o.len(), names.len());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(o.get(n, name_of), Some(i as u32), "{n}");
        }
        for absent in ["item-50000", "", "item-1 "] {
            assert_eq!(o.get(absent, name_of), None, "{absent}");
        }
    }

    #[test]
    fn a_slot_is_believed_only_for_the_asker_s_own_item_of_that_name() {
        // The writer's state adds "x" as item 3 in an apply it then drops; the state it keeps
        // gives item 3 to "y". Both share the table.
        let mut kept = NameOverlay::default();
        kept.insert("a", 0);
        let published = kept.clone();
        let mut dropped = kept.clone();
        dropped.insert("x", 3);
        kept.insert("y", 3);
        let kept_names = ["a", "b", "c", "y"];
        let of_kept = |i: u32| kept_names.get(i as usize).copied();
        assert_eq!((kept.get("y", of_kept), kept.get("x", of_kept)), (Some(3), None));
        // The published snapshot has one item: a slot naming a later id is passed over.
        let of_published = |i: u32| ["a"].get(i as usize).copied();
        assert_eq!((published.get("a", of_published), published.get("y", of_published)), (Some(0), None));
    }

    #[test]
    fn a_clone_keeps_finding_its_names_after_the_other_grows_the_table() {
        let names: Vec<String> = (0..3000u32).map(|i| format!("n{i}")).collect();
        let name_of = |i: u32| names.get(i as usize).map(String::as_str);
        let mut writer = NameOverlay::default();
        for (i, n) in names.iter().enumerate().take(500) {
            writer.insert(n, i as u32);
        }
        // The reader is a snapshot of the first 500 items: its items end there.
        let reader = writer.clone();
        let reader_of = |i: u32| if i < 500 { name_of(i) } else { None };
        for (i, n) in names.iter().enumerate().skip(500) {
            writer.insert(n, i as u32);
        }
        assert!(!Arc::ptr_eq(writer.table.as_ref().unwrap(), reader.table.as_ref().unwrap()), "the writer grew");
        for (i, n) in names.iter().enumerate() {
            assert_eq!(writer.get(n, name_of), Some(i as u32));
            assert_eq!(reader.get(n, reader_of), (i < 500).then_some(i as u32), "{n}");
            // Its table holds a few later names (added before the writer grew it): only ever
            // believed by an asker that has those items.
            assert_eq!(reader.get(n, name_of).is_some(), i < 512, "{n}");
        }
    }

    #[test]
    fn names_sharing_a_tag_are_told_apart_by_their_items() {
        // Slots are compared by tag first; a tag shared by two names must still lead to each.
        let mut o = NameOverlay::default();
        let names = ["p", "q"];
        let name_of = |i: u32| names.get(i as usize).copied();
        let t = Table::with_capacity(8);
        let slot_of = |id: u32| (u64::from(tag("p")) << 32) | u64::from(id);
        t.place(slot_of(1));
        t.place(slot_of(0));
        *lock(&t.filled) = 2;
        o.table = Some(Arc::new(t));
        assert_eq!(o.get("p", name_of), Some(0), "the slot naming q's id under p's tag is passed over");
        assert_eq!(o.get("q", name_of), None);
        let mut ids = o.ids();
        ids.sort_unstable();
        assert_eq!(ids, vec![0, 1]);
    }

    #[test]
    fn readers_on_other_threads_find_exactly_their_snapshot_s_names_while_the_writer_grows_it() {
        // The writer adds names and publishes a clone with the count of names it holds; readers
        // take whatever was published last and must find every name below its count and none
        // above, while the writer keeps adding and growing the table under them.
        const N: u32 = 60_000;
        let names: Arc<Vec<String>> = Arc::new((0..N).map(|i| format!("item-{i}")).collect());
        let published: Arc<Mutex<(NameOverlay, u32)>> = Arc::new(Mutex::new((NameOverlay::default(), 0)));
        let readers: Vec<_> = (0..2u32)
            .map(|r| {
                let (names, published) = (names.clone(), published.clone());
                std::thread::spawn(move || {
                    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15 ^ u64::from(r);
                    loop {
                        let (overlay, count) = published.lock().unwrap().clone();
                        let name_of = |i: u32| if i < count { names.get(i as usize).map(String::as_str) } else { None };
                        for _ in 0..64 {
                            rng ^= rng << 13;
                            rng ^= rng >> 7;
                            rng ^= rng << 17;
                            let i = (rng % u64::from(N)) as u32;
                            let want = (i < count).then_some(i);
                            assert_eq!(overlay.get(&names[i as usize], name_of), want, "item-{i} at {count}");
                        }
                        if count == N {
                            return;
                        }
                    }
                })
            })
            .collect();
        let mut writer = NameOverlay::default();
        for (i, n) in names.iter().enumerate() {
            writer.insert(n, i as u32);
            if i % 97 == 0 || i as u32 == N - 1 {
                *published.lock().unwrap() = (writer.clone(), i as u32 + 1);
            }
        }
        for r in readers {
            r.join().unwrap();
        }
    }
}
