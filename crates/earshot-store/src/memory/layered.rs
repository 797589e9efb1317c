//! Compact persistent structures for data that is mostly built once at start-up and then
//! changes a little at a time: name → id maps, the items, the audiences and posting lists.
//!
//! Each keeps a flat, immutable base (shared by every snapshot through an `Arc`) and a small
//! persistent part for what changed since, so cloning a snapshot stays O(1) while the bulk
//! of the data costs what a plain `HashMap` or slice costs, not what a HAMT or RRB tree costs.

use std::collections::HashMap;
use std::sync::Arc;

use earshot_core::compact::InlineStr;
use rustc_hash::FxBuildHasher;

use crate::memory::snapshot::Map;

/// An insert-only map from names to ids: a flat base plus a persistent overlay, folded into a
/// new base when the overlay grows past a quarter of the base (amortised O(1) per insert).
#[derive(Clone)]
pub(crate) struct NameMap<V: Clone> {
    base: Arc<HashMap<NameKey, V, FxBuildHasher>>,
    overlay: Map<Arc<str>, V>,
}

/// Bytes of a name kept in a [`NameKey`] itself.
const INLINE_NAME: usize = 22;

/// A key of a [`NameMap`]'s base: a name of up to 22 bytes inline, a longer one boxed.
///
/// Why: a lookup compares the name where its bucket is instead of following a pointer to it,
/// which is one dependent cache miss fewer for a cold lookup (a container's owner and
/// viewers are resolved this way on every check). It is 24 bytes, 8 more than the `Arc<str>`
/// it replaces (whose heap block the participant's or grant's record shares anyway). Measured
/// in BENCHMARKS.md ("Earshot against Cedar, and the cold check by name").
pub(crate) type NameKey = InlineStr<INLINE_NAME>;

/// Smallest overlay worth folding.
const FOLD_MIN: usize = 4096;

impl<V: Clone + Send + Sync + 'static> Default for NameMap<V> {
    fn default() -> Self {
        NameMap { base: Arc::new(HashMap::default()), overlay: Map::default() }
    }
}

impl<V: Clone + Send + Sync + 'static> NameMap<V> {
    /// A map whose base is `base` (the start-up rebuild).
    pub fn from_base(base: HashMap<Arc<str>, V, FxBuildHasher>) -> Self {
        let mut keyed = HashMap::with_capacity_and_hasher(base.len(), FxBuildHasher);
        keyed.extend(base.into_iter().map(|(name, v)| (NameKey::new(&name), v)));
        NameMap { base: Arc::new(keyed), overlay: Map::default() }
    }

    /// The base is asked first: a name is in the base or in the overlay, never in both
    /// (`insert` takes absent names, `remove` takes a name out of the one that holds it), so a
    /// lookup pays for the persistent overlay only when the base lacks the name.
    pub fn get(&self, name: &str) -> Option<&V> {
        if let Some(v) = self.base.get(name) {
            return Some(v);
        }
        if self.overlay.is_empty() {
            return None;
        }
        self.overlay.get(name)
    }

    /// Removes a name. A name in the base costs a copy of the base (removals are rare: a
    /// participant's removal).
    pub fn remove(&mut self, name: &str) {
        if self.overlay.remove(name).is_none() && self.base.contains_key(name) {
            Arc::make_mut(&mut self.base).remove(name);
        }
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> + '_ {
        self.base.iter().map(|(k, v)| (k.as_str(), v)).chain(self.overlay.iter().map(|(k, v)| (&**k, v)))
    }

    /// Inserts a name that is not yet present (callers check first).
    pub fn insert(&mut self, name: Arc<str>, v: V) {
        self.overlay.insert(name, v);
        if self.overlay.len() > FOLD_MIN.max(self.base.len() / 4) {
            let mut base = (*self.base).clone();
            base.extend(std::mem::take(&mut self.overlay).into_iter().map(|(name, v)| (NameKey::new(&name), v)));
            self.base = Arc::new(base);
        }
    }
}

/// Folds of a [`FlatVec`]'s changes into its base happen when they pass this share of the base.
const ID_FOLD_DIVISOR: usize = 8;

/// Bits of an index that select the slot inside a chunk of a [`ChunkedVec`].
const CHUNK_BITS: usize = 9;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Bits of an index into the tail that select the slot inside one of its pieces.
const PIECE_BITS: usize = 5;
const PIECE: usize = 1 << PIECE_BITS;

/// A persistent vector with two levels: a shared array of pointers to full chunks of 512
/// elements, then the elements past the last full chunk in pieces of 32.
///
/// A read is one index into the pointer array (small, so usually cached) and one into a chunk:
/// a single dependent cache miss for a cold element, where an RRB tree takes three or four. A
/// write in place copies the pointer array and one chunk (copy on write), and every retained
/// snapshot keeps its copies. That suits audiences (read on every check, replaced in place
/// only by an edit), but for items, written on every write, it cost too much (BENCHMARKS.md,
/// "Earshot against Cedar, and the cold check by name"), so items are a [`FlatVec`].
///
/// An append copies only the tail's few pointers and its last piece (at most 31 elements): a
/// store on the audience-heavy mix makes a new audience with most of its first few hundred
/// thousand writes, and an append that copied the pointer array and the last chunk cost a
/// reference count per chunk (391 at 200,000 audiences) and up to 32 KiB of audiences each
/// time (BENCHMARKS.md, "Acknowledged writes as a store grows"). Once the tail holds a whole
/// chunk, it becomes one: a copy of 512 elements and of the pointer array every 512 appends.
#[derive(Clone)]
pub(crate) struct ChunkedVec<T> {
    chunks: Arc<Vec<Arc<Vec<T>>>>,
    /// The elements after the full chunks: pieces of [`PIECE`], all but the last full, fewer
    /// than [`CHUNK`] elements in all.
    tail: Arc<Vec<Arc<Vec<T>>>>,
    len: usize,
    /// Elements replaced in place so far (`set`): what a copy of an element taken earlier
    /// checks to know it is still true (the item lines' summaries copy audiences).
    edits: u64,
}

impl<T: Clone> ChunkedVec<T> {
    pub fn new() -> Self {
        ChunkedVec { chunks: Arc::new(Vec::new()), tail: Arc::new(Vec::new()), len: 0, edits: 0 }
    }

    /// Elements replaced in place since the vector was made.
    pub fn edits(&self) -> u64 {
        self.edits
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Elements in full chunks (the tail's first element is at this index).
    fn in_chunks(&self) -> usize {
        self.chunks.len() << CHUNK_BITS
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        match i.checked_sub(self.in_chunks()) {
            None => self.chunks.get(i >> CHUNK_BITS)?.get(i & (CHUNK - 1)),
            Some(j) => self.tail.get(j >> PIECE_BITS)?.get(j & (PIECE - 1)),
        }
    }

    /// Replaces element `i`; an index past the end is ignored (callers index what they read).
    pub fn set(&mut self, i: usize, v: T) {
        if i >= self.len {
            return;
        }
        self.edits += 1;
        let slot = match i.checked_sub(self.in_chunks()) {
            None => Arc::make_mut(&mut self.chunks)
                .get_mut(i >> CHUNK_BITS)
                .and_then(|c| Arc::make_mut(c).get_mut(i & (CHUNK - 1))),
            Some(j) => Arc::make_mut(&mut self.tail)
                .get_mut(j >> PIECE_BITS)
                .and_then(|p| Arc::make_mut(p).get_mut(j & (PIECE - 1))),
        };
        if let Some(slot) = slot {
            *slot = v;
        }
    }

    pub fn push_back(&mut self, v: T) {
        let in_chunks = self.in_chunks();
        let tail = Arc::make_mut(&mut self.tail);
        if tail.last().is_none_or(|piece| piece.len() == PIECE) {
            // Grown as it fills, not made whole: a new store holds one audience (issue 33).
            tail.push(Arc::new(Vec::new()));
        }
        let Some(last) = tail.last_mut() else { return };
        if Arc::get_mut(last).is_none() {
            // Shared with another snapshot: copied once, with room for the new element
            // (`make_mut` would copy it at its length and `push` copy it again to grow).
            let mut own = Vec::with_capacity(last.len() + 1);
            own.extend_from_slice(last);
            *last = Arc::new(own);
        }
        Arc::make_mut(last).push(v);
        self.len += 1;
        if self.len - in_chunks == CHUNK {
            let chunk: Vec<T> = tail.iter().flat_map(|piece| piece.iter().cloned()).collect();
            Arc::make_mut(&mut self.chunks).push(Arc::new(chunk));
            self.tail = Arc::new(Vec::new());
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().chain(self.tail.iter()).flat_map(|c| c.iter())
    }
}

/// A persistent vector read mostly at random and written a little at a time (the items): full
/// slabs shared by every snapshot, the records replaced in them since the last fold, and the
/// records appended since the last slab was sealed.
///
/// A cold read of a slab record is one dependent load (its slab's pointer is one of a few
/// hundred, which stay cached), where an RRB vector of a million records walks a branch node
/// first (BENCHMARKS.md, "Earshot against Cedar, and the cold check by name"). A bit per slab
/// record says whether it was replaced, so a read of an unchanged record never probes `changed`;
/// the bits sit in 4 KiB chunks (a million records: 128 KiB, which stay cached) and a write
/// copies one chunk.
///
/// Writes stay cheap and never wait long:
/// - a replaced slab record goes to `changed`, a new one to `tail`;
/// - when the records reach a slab's boundary, the tail is sealed into that slab (with the
///   records of the last slab, if it was not full): at most one slab's records are copied, once
///   per [`SLAB`] appends;
/// - when the records changed or added since the last fold pass an eighth of the base, a fold
///   lays `changed` over copies of the slabs it touches and makes every record the base of a new
///   generation (amortised O(1) per write).
///
/// Snapshots retained for `at_exact` keep older slabs alive: with the default retention
/// (`Config::retention_max`, 10,000 revisions) and folds at least 4,096 writes apart, at most
/// four generations of slabs live at once.
///
/// Why the tail is sealed as it grows instead of at the fold: a fold used to copy the whole tail
/// (an eighth of the store, 110,000 records at a million items) into new slabs on the writer,
/// and most of that time went to the kernel zeroing the fresh memory at its first touch
/// (BENCHMARKS.md, "A store grown by single writes, and the writer's pauses").
#[derive(Clone)]
pub(crate) struct FlatVec<T: Clone> {
    /// Every record but the tail's: the base of this generation, then what was sealed since.
    slabs: Slabs<T>,
    /// Records `0..base_len` are this generation's base; those after were appended since.
    base_len: usize,
    /// Names this base among every base made in the process (0: the empty default), so that
    /// what was copied out of one base is never taken for a copy of another.
    generation: u64,
    /// Bit `i` is set when `changed` holds slab record `i`.
    changed_bits: ChunkedVec<u64>,
    changed: Map<u32, T>,
    /// The records past the slabs: fewer than it takes to reach the next slab's boundary.
    tail: Tail<T>,
}

/// Records a [`Tail`] keeps in one exact-size slice before it becomes an imbl vector: imbl's
/// chunk length, below which the slice is never the larger of the two.
const SMALL_TAIL: usize = 64;

/// The records appended to a [`FlatVec`] since its last fold. An imbl vector allocates a whole
/// chunk of 64 records (4 KiB of items) however few it holds, and every write copies it for
/// the new snapshot, so each retained revision of a small store kept 4 KiB of items (issue
/// 33). A short tail is an exact-size shared slice instead, copied whole on a write: no more
/// than the chunk copy the imbl vector makes at the same length, and no bigger than it.
#[derive(Clone)]
enum Tail<T: Clone> {
    Small(Arc<[T]>),
    Large(crate::common::Vector<T>),
}

impl<T: Clone> Default for Tail<T> {
    fn default() -> Self {
        Tail::Small(Arc::from(Vec::new()))
    }
}

impl<T: Clone> Tail<T> {
    fn len(&self) -> usize {
        match self {
            Tail::Small(s) => s.len(),
            Tail::Large(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> Option<&T> {
        match self {
            Tail::Small(s) => s.get(i),
            Tail::Large(v) => v.get(i),
        }
    }

    /// Replaces record `i`, if there is one.
    fn set(&mut self, i: usize, v: T) {
        match self {
            Tail::Small(s) => {
                if i < s.len() {
                    let mut copy = s.to_vec();
                    if let Some(slot) = copy.get_mut(i) {
                        *slot = v;
                    }
                    *s = Arc::from(copy);
                }
            }
            Tail::Large(l) => {
                if let Some(slot) = l.get_mut(i) {
                    *slot = v;
                }
            }
        }
    }

    fn push_back(&mut self, v: T) {
        match self {
            Tail::Small(s) if s.len() < SMALL_TAIL => {
                let mut grown = Vec::with_capacity(s.len() + 1);
                grown.extend(s.iter().cloned());
                grown.push(v);
                *s = Arc::from(grown);
            }
            Tail::Small(s) => {
                let mut large: crate::common::Vector<T> = s.iter().cloned().collect();
                large.push_back(v);
                *self = Tail::Large(large);
            }
            Tail::Large(l) => l.push_back(v),
        }
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &T> + '_> {
        match self {
            Tail::Small(s) => Box::new(s.iter()),
            Tail::Large(v) => Box::new(v.iter()),
        }
    }
}

/// Bits of an index that select a record inside a [`Slabs`] slab: 4,096 records (256 KiB of
/// item records) per slab, so that a seal or a replaced record copies little (a million records
/// take 245 slabs, whose pointers, 4 KiB, stay cached). Tests use slabs of 1,024, so that their
/// small stores span several.
#[cfg(not(test))]
const SLAB_BITS: usize = 12;
#[cfg(test)]
const SLAB_BITS: usize = 10;
const SLAB: usize = 1 << SLAB_BITS;

/// The sealed records of a [`FlatVec`], in slabs of [`SLAB`] records that snapshots share:
/// every slab but the last is full, so record `i` is in slab `i >> SLAB_BITS`.
///
/// Why slabs: the writer waits for a fold, and copying the whole base was its longest pause at
/// a million items once the item lines were rebuilt off the writer (BENCHMARKS.md, "A store
/// grown by single writes, and the writer's pauses"); now a fold copies the slabs that changed
/// and the last one, and a seal the last one.
#[derive(Clone)]
struct Slabs<T> {
    slabs: Arc<[Arc<[T]>]>,
    len: usize,
}

impl<T: Clone> Slabs<T> {
    fn new(slabs: Vec<Arc<[T]>>) -> Self {
        let len = slabs.iter().map(|s| s.len()).sum();
        Slabs { slabs: Arc::from(slabs), len }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn get(&self, i: usize) -> Option<&T> {
        self.slabs.get(i >> SLAB_BITS)?.get(i & (SLAB - 1))
    }

    /// Cuts `all` into slabs.
    fn from_vec(all: Vec<T>) -> Self {
        let mut slabs = Vec::with_capacity(all.len().div_ceil(SLAB));
        let mut rest = all.into_iter();
        loop {
            let slab: Vec<T> = rest.by_ref().take(SLAB).collect();
            if slab.is_empty() {
                break;
            }
            slabs.push(Arc::from(slab));
        }
        Slabs::new(slabs)
    }

    /// These records with `changed` (index, record; ascending) laid over theirs and `tail`
    /// appended. Only the slabs written to are copied; the others are shared.
    ///
    /// Each slab it writes is built once, in its final `Arc`: a copy made as a vector and then
    /// turned into an `Arc` is copied twice, and this runs on the writer (BENCHMARKS.md, "A
    /// store grown by single writes, and the writer's pauses").
    fn fold<'a>(&self, changed: &[(usize, &'a T)], tail: impl Iterator<Item = &'a T>) -> Self
    where
        T: 'a,
    {
        let mut slabs: Vec<Arc<[T]>> = self.slabs.to_vec();
        let mut at = 0;
        while let Some(&(first, _)) = changed.get(at) {
            let which = first >> SLAB_BITS;
            // Every replaced record is in the base (`FlatVec::set`), so its slab exists.
            let Some(old) = slabs.get_mut(which) else { break };
            // Shared with the base this fold replaces: cloned into a new slab of its own.
            let copy = Arc::make_mut(old);
            while let Some(&(i, v)) = changed.get(at).filter(|(i, _)| i >> SLAB_BITS == which) {
                if let Some(slot) = copy.get_mut(i & (SLAB - 1)) {
                    slot.clone_from(v);
                }
                at += 1;
            }
        }
        // Gathered as references first, so that each slab is cloned from an iterator of known
        // length, which an `Arc` slice is built from in place.
        let mut tail = tail.peekable();
        if tail.peek().is_some() {
            if let Some(last) = slabs.last_mut().filter(|l| l.len() < SLAB) {
                let more: Vec<&T> = tail.by_ref().take(SLAB - last.len()).collect();
                *last = last.iter().chain(more.iter().copied()).cloned().collect();
            }
        }
        loop {
            let more: Vec<&T> = tail.by_ref().take(SLAB).collect();
            if more.is_empty() {
                break;
            }
            slabs.push(more.iter().copied().cloned().collect());
        }
        Slabs::new(slabs)
    }
}

impl<T: Clone + Send + Sync + 'static> Default for FlatVec<T> {
    fn default() -> Self {
        FlatVec {
            slabs: Slabs::new(Vec::new()),
            base_len: 0,
            generation: 0,
            changed_bits: ChunkedVec::new(),
            changed: Map::default(),
            tail: Tail::default(),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> FlatVec<T> {
    pub fn len(&self) -> usize {
        self.slabs.len() + self.tail.len()
    }

    /// Which base this is (see the field); a fold makes a new one.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether element `i` is the base's own, unreplaced since the base was made.
    pub fn in_base_unchanged(&self, i: usize) -> bool {
        // Nothing replaced (a store just opened or folded): no bit to read, which is a chain
        // of dependent reads a cold check would otherwise wait on.
        i < self.base_len && (self.changed.is_empty() || !self.is_changed(i))
    }

    fn is_changed(&self, i: usize) -> bool {
        self.changed_bits.get(i >> 6).is_some_and(|w| w & (1 << (i & 63)) != 0)
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        match self.slabs.get(i) {
            Some(v) if !self.is_changed(i) => Some(v),
            Some(_) => self.changed.get(&(i as u32)),
            None => self.tail.get(i - self.slabs.len()),
        }
    }

    /// Replaces element `i`; an index past the end is ignored (callers index what they read).
    pub fn set(&mut self, i: usize, v: T) {
        if i >= self.slabs.len() {
            self.tail.set(i - self.slabs.len(), v);
            return;
        }
        if !self.is_changed(i) {
            let word = self.changed_bits.get(i >> 6).copied().unwrap_or(0);
            self.changed_bits.set(i >> 6, word | (1 << (i & 63)));
        }
        self.changed.insert(i as u32, v);
        self.fold_if_due();
    }

    pub fn push_back(&mut self, v: T) {
        self.tail.push_back(v);
        if self.len().is_multiple_of(SLAB) {
            self.seal();
        }
        self.fold_if_due();
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// Moves the tail, which has just reached a slab's boundary, into the slabs: the last slab
    /// (with the tail's records after its own, if it was not full) or a new one. The base and
    /// its generation stay as they are: the records sealed are not the base's, and the slab
    /// copied holds the same base records (a replaced one is still read from `changed`).
    fn seal(&mut self) {
        self.slabs = self.slabs.fold(&[], self.tail.iter());
        self.tail = Tail::default();
        while self.changed_bits.len() < self.slabs.len().div_ceil(64) {
            self.changed_bits.push_back(0);
        }
    }

    fn fold_if_due(&mut self) {
        let since = self.changed.len() + (self.len() - self.base_len);
        if since > FOLD_MIN.max(self.base_len / ID_FOLD_DIVISOR) {
            self.fold();
        }
    }

    /// A vector whose base is `all` (the start-up rebuild).
    pub fn from_vec(all: Vec<T>) -> Self {
        Self::with_base(Slabs::from_vec(all))
    }

    /// A vector of `base` alone, as a new base (a new generation).
    fn with_base(base: Slabs<T>) -> Self {
        let mut bits = ChunkedVec::new();
        for _ in 0..base.len().div_ceil(64) {
            bits.push_back(0);
        }
        static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let generation = GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        FlatVec {
            base_len: base.len(),
            slabs: base,
            generation,
            changed_bits: bits,
            changed: Map::default(),
            tail: Default::default(),
        }
    }

    /// Makes every record part of one new base, copying only the slabs it writes to (those with
    /// a replaced record, and the last one if the tail is appended to it).
    pub fn fold(&mut self) {
        if self.changed.is_empty() && self.len() == self.base_len {
            return;
        }
        let mut changed: Vec<(usize, &T)> = self.changed.iter().map(|(i, v)| (*i as usize, v)).collect();
        changed.sort_unstable_by_key(|(i, _)| *i);
        let base = self.slabs.fold(&changed, self.tail.iter());
        *self = FlatVec::with_base(base);
    }
}

/// An append-only, ascending list of ids: an exact-size slice built whole, then a persistent
/// tail of the ids appended since, both behind a single pointer once it has grown.
///
/// Why one pointer: a write to a map of postings copies the map's nodes on the way to the one
/// it changes, and with them every posting those nodes hold (up to 32 per node), and the
/// reclaimer later drops every copy. Each posting's reference count lives on a line of its
/// own, cold in a large store, so it is the count of reference counts per posting that a write
/// pays for (at a million items, when a posting held a base and a tail of its own, the copies
/// were 7% of all samples on the writer and the drops 8% on the reclaimer; BENCHMARKS.md,
/// "Acknowledged writes as a store grows"). A clone costs at most one reference count and an
/// empty posting none; only the posting appended to copies its tail. The price is on reads of
/// a grown posting: one pointer more to follow (a lookup pays it once per posting it walks,
/// not per id).
#[derive(Clone, Default)]
pub(crate) enum Posting {
    #[default]
    Empty,
    /// Built whole (at start-up, or by a merge), never appended to since.
    Built(Arc<[u32]>),
    /// Appended to since it was built.
    Grown(Arc<GrownPosting>),
}

/// A [`Posting`] that has been appended to: the ids it was built with and those appended since.
#[derive(Clone)]
pub(crate) struct GrownPosting {
    /// `None` for a posting that began empty, so that it costs no allocation of its own.
    base: Option<Arc<[u32]>>,
    tail: imbl::Vector<u32>,
}

impl FromIterator<u32> for Posting {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let ids: Vec<u32> = iter.into_iter().collect();
        if ids.is_empty() {
            Posting::Empty
        } else {
            Posting::Built(Arc::from(ids))
        }
    }
}

impl Posting {
    /// Appends `id`, which must be larger than every id already present.
    pub fn push(&mut self, id: u32) {
        if let Posting::Grown(grown) = self {
            Arc::make_mut(grown).tail.push_back(id);
            return;
        }
        let base = match std::mem::take(self) {
            Posting::Built(base) => Some(base),
            Posting::Empty | Posting::Grown(_) => None,
        };
        let mut tail = imbl::Vector::new();
        tail.push_back(id);
        *self = Posting::Grown(Arc::new(GrownPosting { base, tail }));
    }

    /// Appends `id` to the posting of `key` in `postings` (a new one when there is none),
    /// copying only the map's path to it, once.
    pub fn push_to<K: std::hash::Hash + Eq + Clone>(postings: &mut Map<K, Posting>, key: K, id: u32) {
        match postings.get_mut(&key) {
            Some(posting) => posting.push(id),
            None => {
                let mut posting = Posting::default();
                posting.push(id);
                postings.insert(key, posting);
            }
        }
    }

    /// The ids it was built with, and the tail appended since (if any).
    fn parts(&self) -> (&[u32], Option<&imbl::Vector<u32>>) {
        match self {
            Posting::Empty => (&[], None),
            Posting::Built(base) => (base, None),
            Posting::Grown(grown) => (grown.base.as_deref().unwrap_or(&[]), Some(&grown.tail)),
        }
    }

    pub fn len(&self) -> usize {
        let (base, tail) = self.parts();
        base.len() + tail.map_or(0, |t| t.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        let (base, tail) = self.parts();
        match base.get(i) {
            Some(v) => Some(*v),
            None => tail?.get(i - base.len()).copied(),
        }
    }

    /// Position of the first id not smaller than `id`.
    pub fn lower_bound(&self, id: u32) -> usize {
        let (base, tail) = self.parts();
        if base.last().is_some_and(|last| *last >= id) {
            return base.partition_point(|x| *x < id);
        }
        let in_tail = match tail.map(|t| t.binary_search(&id)) {
            Some(Ok(p) | Err(p)) => p,
            None => 0,
        };
        base.len() + in_tail
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (base, tail) = self.parts();
        base.iter().copied().chain(tail.into_iter().flat_map(|t| t.iter().copied()))
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
        let mut grown = Posting::default();
        grown.push(4);
        grown.push(8);
        assert_eq!(grown.iter().collect::<Vec<_>>(), vec![4, 8]);
        assert_eq!(([3, 4, 5, 9].map(|x| grown.lower_bound(x)), grown.get(1), grown.len()), ([0, 0, 1, 2], Some(8), 2));
        assert!(matches!(Posting::from_iter(Vec::new()), Posting::Empty));
    }

    #[test]
    fn a_posting_is_three_words_and_a_clone_shares_one_pointer_at_most() {
        // What a copied node of a map of postings costs per posting (see `Posting`).
        assert!(std::mem::size_of::<Posting>() <= 24, "{}", std::mem::size_of::<Posting>());
        let mut p: Posting = [1, 2].into_iter().collect();
        p.push(3);
        let Posting::Grown(grown) = &p else { panic!("an appended posting is grown") };
        let before = Arc::strong_count(grown);
        let copy = p.clone();
        assert_eq!(Arc::strong_count(grown), before + 1);
        drop(copy);
    }

    #[test]
    fn posting_clones_share_nothing_a_push_can_change() {
        let mut p: Posting = [1, 3].into_iter().collect();
        p.push(5);
        let before = p.clone();
        p.push(7);
        let mut other = before.clone();
        other.push(6);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![1, 3, 5, 7]);
        assert_eq!(before.iter().collect::<Vec<_>>(), vec![1, 3, 5]);
        assert_eq!(other.iter().collect::<Vec<_>>(), vec![1, 3, 5, 6]);

        let mut postings: Map<u32, Posting> = Map::default();
        Posting::push_to(&mut postings, 9, 1);
        let kept = postings.clone();
        Posting::push_to(&mut postings, 9, 2);
        Posting::push_to(&mut postings, 4, 3);
        let ids = |m: &Map<u32, Posting>, k: u32| m.get(&k).map(|p| p.iter().collect::<Vec<_>>());
        assert_eq!((ids(&postings, 9), ids(&postings, 4)), (Some(vec![1, 2]), Some(vec![3])));
        assert_eq!((ids(&kept, 9), ids(&kept, 4)), (Some(vec![1]), None));
    }

    #[test]
    fn chunked_vec_agrees_with_a_plain_vector_and_keeps_every_snapshot() {
        // Appends and replacements at random across the tail's pieces, the turn of the tail
        // into a chunk, and full chunks; every snapshot taken on the way must stay as it was.
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let mut v: ChunkedVec<u32> = ChunkedVec::new();
        let mut model: Vec<u32> = Vec::new();
        let mut kept: Vec<(ChunkedVec<u32>, Vec<u32>)> = Vec::new();
        for step in 0..3 * CHUNK as u32 + 77 {
            if !model.is_empty() && next(4) == 0 {
                let i = next(model.len());
                v.set(i, step + 1_000_000);
                model[i] = step + 1_000_000;
            } else {
                v.push_back(step);
                model.push(step);
            }
            if next(16) == 0 {
                kept.push((v.clone(), model.clone()));
            }
        }
        kept.push((v, model));
        for (snapshot, model) in &kept {
            assert_eq!(snapshot.len(), model.len());
            assert_eq!(snapshot.iter().copied().collect::<Vec<_>>(), *model);
            assert!((0..model.len()).all(|i| snapshot.get(i) == model.get(i)));
            assert_eq!(snapshot.get(model.len()), None);
        }
        let (last, model) = &kept[kept.len() - 1];
        assert_eq!(last.chunks.len(), model.len() / CHUNK, "every full chunk is a chunk");
        assert!(last.tail.iter().all(|piece| piece.len() <= PIECE));
    }

    #[test]
    fn chunked_vec_is_persistent() {
        let mut v = ChunkedVec::new();
        for i in 0..2_000u32 {
            v.push_back(i);
        }
        let before = v.clone();
        v.set(1_000, 7);
        v.set(5_000, 7);
        v.push_back(2_000);
        assert_eq!((v.len(), v.get(1_000), v.get(2_000), v.get(2_001)), (2_001, Some(&7), Some(&2_000), None));
        assert_eq!((before.len(), before.get(1_000), before.get(2_000)), (2_000, Some(&1_000), None));
        assert!(v.iter().enumerate().all(|(i, x)| *x == if i == 1_000 { 7 } else { i as u32 }));
    }

    #[test]
    fn flat_vec_is_persistent_across_folds() {
        let mut v: FlatVec<u32> = FlatVec::default();
        let mut model: Vec<u32> = Vec::new();
        let mut kept: Vec<(FlatVec<u32>, Vec<u32>)> = Vec::new();
        let mut x = 7u64;
        for step in 0..40_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if model.is_empty() || !x.is_multiple_of(3) {
                v.push_back(step);
                model.push(step);
            } else {
                let i = (x as usize / 3) % model.len();
                v.set(i, step);
                model[i] = step;
            }
            if step.is_multiple_of(9_999) {
                kept.push((v.clone(), model.clone()));
            }
        }
        v.set(model.len(), 1);
        for (snap, m) in kept.iter().chain([(v.clone(), model.clone())].iter()) {
            assert_eq!(snap.len(), m.len());
            assert!(m.iter().enumerate().all(|(i, x)| snap.get(i) == Some(x)));
            assert_eq!(snap.get(m.len()), None);
            assert!(snap.iter().eq(m.iter()));
        }
        v.fold();
        assert!(v.iter().eq(model.iter()) && v.tail.len() == 0 && v.changed.is_empty());
        assert!((0..model.len()).all(|i| v.in_base_unchanged(i)), "a fold makes every record the base's own");
    }

    #[test]
    fn the_tail_is_sealed_at_each_slab_boundary_without_a_new_base() {
        // A base with a partial last slab, one record of it replaced.
        let mut v: FlatVec<u32> = FlatVec::from_vec((0..SLAB as u32 + 10).collect());
        let generation = v.generation();
        v.set(SLAB + 3, 7);
        let before = v.clone();
        let mut model: Vec<u32> = (0..SLAB as u32 + 10).collect();
        model[SLAB + 3] = 7;
        for x in 0..2 * SLAB as u32 + 5 {
            v.push_back(x);
            model.push(x);
            assert!(v.tail.len() < SLAB, "the tail never holds a slab's worth");
        }
        // Sealed at 2 and at 3 slabs; no fold (an eighth of the base is the minimum, 4,096).
        assert_eq!((v.slabs.slabs.len(), v.tail.len(), v.generation()), (3, 15, generation));
        v.set(2 * SLAB + 1, 9);
        v.set(3 * SLAB + 1, 8);
        model[2 * SLAB + 1] = 9;
        model[3 * SLAB + 1] = 8;
        assert!(v.iter().eq(model.iter()));
        assert!(before.iter().copied().eq((0..SLAB as u32 + 10).map(|x| if x == SLAB as u32 + 3 { 7 } else { x })));
        // Only the base's records are the base's own; what was sealed since is not.
        assert!((0..SLAB + 10).all(|i| v.in_base_unchanged(i) == (i != SLAB + 3)));
        assert!((SLAB + 10..model.len()).all(|i| !v.in_base_unchanged(i)));
        v.fold();
        assert_ne!(v.generation(), generation);
        assert!(v.iter().eq(model.iter()) && (0..model.len()).all(|i| v.in_base_unchanged(i)));
    }

    #[test]
    fn a_fold_copies_only_the_slabs_it_writes_to() {
        let mut v: FlatVec<u32> = FlatVec::from_vec((0..5 * SLAB as u32 + 7).collect());
        let before = v.clone();
        v.set(SLAB + 3, 1);
        v.set(SLAB + 9, 2);
        v.push_back(9);
        v.fold();
        let (old, new) = (&before.slabs.slabs, &v.slabs.slabs);
        let shared: Vec<bool> = old.iter().zip(new.iter()).map(|(a, b)| Arc::ptr_eq(a, b)).collect();
        // Slab 1 was written to and the last one appended to; the others are the old ones.
        assert_eq!(shared, [true, false, true, true, true, false]);
        assert_eq!(
            (v.get(SLAB + 3), v.get(SLAB + 9), v.get(5 * SLAB + 7), v.len()),
            (Some(&1), Some(&2), Some(&9), 5 * SLAB + 8)
        );
        assert!(before.iter().copied().eq(0..5 * SLAB as u32 + 7), "the old base is unchanged");
        // Appending past a full last slab starts new slabs.
        for x in 0..2 * SLAB as u32 {
            v.push_back(x);
        }
        v.fold();
        assert_eq!(v.slabs.slabs.len(), 8);
        assert!(v.slabs.slabs.iter().rev().skip(1).all(|s| s.len() == SLAB), "every slab but the last is full");
        assert_eq!(v.get(7 * SLAB + 7), Some(&(2 * SLAB as u32 - 1)));
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
        // Removal from the base and from the overlay; a removed name can come back.
        m.remove("n5");
        m.remove("late");
        assert_eq!((m.get("n5"), m.get("late"), snapshot.get("n5")), (None, None, Some(&5)));
        m.insert(Arc::from("n5"), 7);
        assert_eq!((m.get("n5"), m.iter().count(), snapshot.iter().count()), (Some(&7), 10_000, 10_000));
    }

    #[test]
    fn name_keys_inline_and_shared_find_exactly_their_own_name() {
        // Either side of the inline limit, multibyte text, and names that share a prefix.
        let names = [
            "",
            "a",
            "é",
            "participant-0000000001",
            "participant-00000000012",
            "participant-000000000123",
            "日本語の名前です日本",
        ];
        let mut base: HashMap<Arc<str>, usize, FxBuildHasher> = HashMap::default();
        for (i, n) in names.iter().enumerate() {
            base.insert(Arc::from(*n), i);
        }
        let mut m = NameMap::from_base(base);
        assert!(NameKey::new("participant-0000000001").is_inline());
        assert!(!NameKey::new("participant-00000000012").is_inline());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(m.get(n), Some(&i), "{n}");
        }
        for absent in ["participant-000000000", "participant-00000000013", "A", "e"] {
            assert_eq!(m.get(absent), None, "{absent}");
        }
        let mut seen: Vec<&str> = m.iter().map(|(k, _)| k).collect();
        seen.sort_unstable();
        let mut want = names.to_vec();
        want.sort_unstable();
        assert_eq!(seen, want);
        m.remove("participant-00000000012");
        m.remove("a");
        assert_eq!((m.get("participant-00000000012"), m.get("a"), m.get("é")), (None, None, Some(&2)));
    }
}
