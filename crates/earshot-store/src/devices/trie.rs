//! The capability trie (SPEC §2.5): every holder's patterns on every device as a segment trie,
//! flattened into one persistent map keyed by (holder, device, depth, hash of the pattern
//! prefix, with `*` as its own segment), how a capability is filed in it, and the walk a
//! decision makes over it.
//!
//! A decision walks the requested path from the root, following at each level the literal
//! segment and `*`, so it only visits pattern prefixes that match the path. The walk is the
//! cold part of a decision over a large working set, so a node is laid out to cost one read:
//! its candidate lists are inline when short, and it says which kinds of child exist, so the
//! walk never probes for a child that is not there.

use std::sync::Arc;

use earshot_core::path::{PathPattern, Segment};

use super::Cid;
use crate::common::Pid;

/// Key of a trie node: holder, device, depth, and a hash of the pattern prefix (`*` hashed as
/// its own segment). A hash collision only adds candidates (and children to try); every
/// candidate is then matched in full.
pub(crate) type CapKey = (Pid, Pid, u8, u64);

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Extends a prefix hash by one segment (FNV-1a over `/segment`).
fn extend_hash(mut h: u64, segment: &str) -> u64 {
    for b in std::iter::once(b'/').chain(segment.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// `CapNode::kids`: some pattern continues below this node with a literal segment.
pub(crate) const LITERAL_CHILD: u8 = 1;
/// `CapNode::kids`: some pattern continues below this node with `*`.
pub(crate) const ANY_CHILD: u8 = 2;

/// Ids inline, up to four, or shared.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cids {
    Inline { len: u8, ids: [Cid; 4] },
    Shared(Arc<[Cid]>),
}

impl Default for Cids {
    fn default() -> Self {
        Cids::Inline { len: 0, ids: [0; 4] }
    }
}

impl Cids {
    fn as_slice(&self) -> &[Cid] {
        match self {
            Cids::Inline { len, ids } => ids.get(..usize::from(*len)).unwrap_or(&[]),
            Cids::Shared(s) => s,
        }
    }

    fn insert(&mut self, at: usize, c: Cid) {
        if let Cids::Inline { len, ids } = self {
            if usize::from(*len) < ids.len() {
                let n = usize::from(*len);
                if let Some(tail) = ids.get_mut(at..=n) {
                    tail.rotate_right(1);
                    if let Some(first) = tail.first_mut() {
                        *first = c;
                    }
                    *len += 1;
                    return;
                }
            }
        }
        let mut v = self.as_slice().to_vec();
        v.insert(at.min(v.len()), c);
        *self = Cids::Shared(v.into());
    }
}

/// One node of the trie: the capabilities whose pattern ends exactly here (`exact`), those
/// whose pattern continues with `**` here (`rest`), and which kinds of child exist. A node
/// exists for every prefix of every pattern.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CapNode {
    /// `exact`, then `rest`.
    cids: Cids,
    exact: u32,
    kids: u8,
}

impl CapNode {
    pub(crate) fn exact(&self) -> &[Cid] {
        let all = self.cids.as_slice();
        all.get(..self.exact as usize).unwrap_or(all)
    }

    pub(crate) fn rest(&self) -> &[Cid] {
        self.cids.as_slice().get(self.exact as usize..).unwrap_or(&[])
    }

    pub(crate) fn kids(&self) -> u8 {
        self.kids
    }

    /// Files `c` in `exact` or `rest`; `false` if it was there already.
    fn file(&mut self, c: Cid, rest: bool) -> bool {
        let (list, at) =
            if rest { (self.rest(), self.cids.as_slice().len()) } else { (self.exact(), self.exact as usize) };
        if list.contains(&c) {
            return false;
        }
        self.cids.insert(at, c);
        if !rest {
            self.exact += 1;
        }
        true
    }
}

/// The trie keys of a pattern, root first: one per prefix, each with the kind of the segment
/// that leads on from it (0 for the last, where the pattern is filed: in `rest` when it ends
/// in `**`, else in `exact`).
pub(crate) fn pattern_keys(holder: Pid, device: Pid, p: &PathPattern) -> Vec<(CapKey, u8)> {
    let mut h = FNV_OFFSET;
    let mut out = Vec::with_capacity(p.segment_count() + 1);
    let mut key = (holder, device, 0, h);
    for (i, seg) in p.segments().enumerate() {
        let (step, kind) = match seg {
            Segment::Literal(l) => (l, LITERAL_CHILD),
            Segment::Any => ("*", ANY_CHILD),
        };
        out.push((key, kind));
        h = extend_hash(h, step);
        key = (holder, device, u8::try_from(i + 1).unwrap_or(u8::MAX), h);
    }
    out.push((key, 0));
    out
}

/// The frontier of a walk: the matching nodes at one depth. Almost always one or two nodes,
/// so it lives on the stack until it outgrows it.
struct Frontier<'a> {
    inline: [(u64, &'a CapNode); 4],
    len: usize,
    spill: Vec<(u64, &'a CapNode)>,
}

impl<'a> Frontier<'a> {
    fn new(fill: &'a CapNode) -> Self {
        Frontier { inline: [(0, fill); 4], len: 0, spill: Vec::new() }
    }
    fn push(&mut self, x: (u64, &'a CapNode)) {
        match self.inline.get_mut(self.len) {
            Some(slot) if self.spill.is_empty() => {
                *slot = x;
                self.len += 1;
            }
            _ => self.spill.push(x),
        }
    }
    fn is_empty(&self) -> bool {
        self.len == 0 && self.spill.is_empty()
    }
    fn iter(&self) -> impl Iterator<Item = &(u64, &'a CapNode)> {
        self.inline.iter().take(self.len).chain(self.spill.iter())
    }
    fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }
}

/// Where `key`'s probe sequence starts: the prefix hash, holder, device and depth mixed
/// (murmur3's finaliser), masked.
fn home(key: &CapKey, mask: usize) -> usize {
    let (holder, device, depth, h) = *key;
    let mut x = h ^ (u64::from(holder) << 32 | u64::from(device)) ^ u64::from(depth).rotate_right(8);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    (x as usize) & mask
}

/// A slot (56 bytes), alone on its 64-byte cache line: a probe reads one line, where slots
/// packed among others straddled two more often than not. Measured in BENCHMARKS.md ("The
/// capability decision at 10,000 held"): 1.1 fewer L2 misses per cold decision, 4% more memory.
#[derive(Clone)]
#[repr(align(64))]
struct Slot(Option<(CapKey, CapNode)>);

// A node that grows past the line would make every probe read two again.
const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// Slots per chunk: a write copies the chunks it touches, 32 slots (2 KiB) each. 16 slots
/// saved 20 MB more in the authorize bench but doubled the chunk pointers (256 KiB at 2^19
/// slots), which a cold probe reads first; its p50 was no better (BENCHMARKS.md, "The
/// capability decision at 10,000 held").
const CHUNK_BITS: u32 = 5;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Chunk pointers per group: a write copies the groups it touches (1 KiB each) and the array
/// of group pointers (1 KiB at 2^19 slots, the authorize bench's size).
const GROUP_BITS: u32 = 7;
const GROUP: usize = 1 << GROUP_BITS;
/// The smallest table: one group.
const MIN_SLOTS: usize = CHUNK * GROUP;

type Chunk = [Slot; CHUNK];
type Group = [Arc<Chunk>; GROUP];

/// Every holder's capability patterns on every device: one open-addressed node table (linear
/// probing over a power-of-two number of slots, at most two-thirds full), split into chunks of
/// 32 slots behind two levels of shared pointers, copied on write a chunk at a time.
///
/// A snapshot clones it in O(1), and the store keeps a snapshot per revision (up to 10,000 for
/// `at_exact`), so what a write copies is what each retained revision costs: here the chunks
/// and groups its nodes fall in and the group array, about 1 KiB plus 3 KiB per node changed.
/// A whole-table copy per fold (the table of the last fold plus a persistent overlay) cost
/// 28 MB a fold at the bench's size, and the retained snapshots kept two or three of them
/// alive (BENCHMARKS.md, "The capability decision at 10,000 held"). A node found cold costs one
/// read (two when its probe runs past its home slot): the group array (1 KiB) and the groups
/// (128 KiB at 2^19 slots) are small enough to stay mostly cached, where a persistent hash map
/// walks several levels of nodes, cold.
///
/// Never full, and nodes are never removed, so a probe for a missing key ends at an empty
/// slot. Empty chunks are one shared chunk until written.
#[derive(Clone)]
pub(crate) struct CapTrie {
    groups: Arc<[Arc<Group>]>,
    /// Slots minus one (the slots are a power of two).
    mask: usize,
    len: usize,
}

impl Default for CapTrie {
    /// A clone of one empty table the whole process shares: its first write copies what it
    /// writes to (`slot_mut`), as for any table a snapshot shares. Most stores hold no
    /// capability, and an empty table of their own cost each about 3 KiB (issue 33).
    fn default() -> Self {
        static EMPTY: std::sync::OnceLock<CapTrie> = std::sync::OnceLock::new();
        EMPTY.get_or_init(|| Self::with_slots(MIN_SLOTS)).clone()
    }
}

impl CapTrie {
    /// An empty table of `slots` slots (a power of two, at least one group): every chunk is
    /// the same empty one, every group the same group, until written.
    fn with_slots(slots: usize) -> Self {
        let slots = slots.max(MIN_SLOTS).next_power_of_two();
        let empty: Arc<Chunk> = Arc::new(std::array::from_fn(|_| Slot(None)));
        let group: Arc<Group> = Arc::new(std::array::from_fn(|_| empty.clone()));
        let groups: Arc<[Arc<Group>]> = (0..slots / MIN_SLOTS).map(|_| group.clone()).collect();
        CapTrie { groups, mask: slots - 1, len: 0 }
    }

    fn slots(&self) -> usize {
        self.mask + 1
    }

    /// Slot `i` (`i <= mask`): the group array (cached), the group (cached), the chunk.
    fn slot(&self, i: usize) -> Option<&Option<(CapKey, CapNode)>> {
        let group = self.groups.get(i >> (CHUNK_BITS + GROUP_BITS))?;
        group.get((i >> CHUNK_BITS) & (GROUP - 1))?.get(i & (CHUNK - 1)).map(|s| &s.0)
    }

    /// Slot `i`, made this table's own: copies what a snapshot still shares on the way.
    fn slot_mut(&mut self, i: usize) -> Option<&mut Option<(CapKey, CapNode)>> {
        let group = Arc::make_mut(&mut self.groups).get_mut(i >> (CHUNK_BITS + GROUP_BITS))?;
        let chunk = Arc::make_mut(group).get_mut((i >> CHUNK_BITS) & (GROUP - 1))?;
        Arc::make_mut(chunk).get_mut(i & (CHUNK - 1)).map(|s| &mut s.0)
    }

    /// Where `key` is, or the empty slot where it would go.
    fn find(&self, key: &CapKey) -> Option<(usize, bool)> {
        let mut i = home(key, self.mask);
        // Never full, so a probe meets an empty slot; the bound guards the loop anyway.
        for _ in 0..self.slots() {
            match self.slot(i)? {
                None => return Some((i, false)),
                Some((k, _)) if k == key => return Some((i, true)),
                Some(_) => i = (i + 1) & self.mask,
            }
        }
        None
    }

    fn get(&self, key: &CapKey) -> Option<&CapNode> {
        let (i, found) = self.find(key)?;
        if !found {
            return None;
        }
        self.slot(i)?.as_ref().map(|(_, n)| n)
    }

    /// Inserts or replaces, growing the table (to twice the slots, every node moved) before a
    /// new node would take it past two-thirds full.
    fn put(&mut self, key: CapKey, node: CapNode) {
        if let Some((i, true)) = self.find(&key) {
            if let Some(slot) = self.slot_mut(i) {
                *slot = Some((key, node));
            }
            return;
        }
        if (self.len + 1) * 3 > self.slots() * 2 {
            let mut bigger = Self::with_slots(self.slots() * 2);
            for (k, n) in self.iter() {
                bigger.put_new(*k, n.clone());
            }
            *self = bigger;
        }
        self.put_new(key, node);
    }

    /// Inserts a key the table lacks, which has room for it.
    fn put_new(&mut self, key: CapKey, node: CapNode) {
        if let Some((i, false)) = self.find(&key) {
            if let Some(slot) = self.slot_mut(i) {
                *slot = Some((key, node));
                self.len += 1;
            }
        }
    }

    /// Every node once, in no particular order (for `verify`).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&CapKey, &CapNode)> {
        self.groups
            .iter()
            .flat_map(|g| g.iter())
            .flat_map(|c| c.iter())
            .filter_map(|s| s.0.as_ref().map(|(k, n)| (k, n)))
    }

    /// Files `cid` under every pattern in `paths` of (`holder`, `device`), creating missing
    /// nodes and marking the kind of child each prefix leads to.
    pub(crate) fn file(&mut self, holder: Pid, device: Pid, paths: &[PathPattern], cid: Cid) {
        for p in paths {
            let keys = pattern_keys(holder, device, p);
            let last = keys.len().saturating_sub(1);
            for (i, (k, kind)) in keys.into_iter().enumerate() {
                let old = self.get(&k);
                let mut changed = old.is_none();
                let mut node = old.cloned().unwrap_or_default();
                if node.kids & kind != kind {
                    node.kids |= kind;
                    changed = true;
                }
                if i == last {
                    changed |= node.file(cid, p.has_rest());
                }
                if changed {
                    self.put(k, node);
                }
            }
        }
    }

    /// Walks the path `segs` in the trie of (`holder`, `device`), calling `visit` with every
    /// candidate list: the `rest` lists of the matching nodes above the path's end and the
    /// `exact` lists of those at its end. A list may be visited more than once (a hash
    /// collision); every candidate must be matched in full by the caller.
    pub(crate) fn walk(&self, holder: Pid, device: Pid, segs: &[&str], mut visit: impl FnMut(&[Cid])) {
        let Some(root) = self.get(&(holder, device, 0, FNV_OFFSET)) else { return };
        let empty = CapNode::default();
        let (mut here, mut next) = (Frontier::new(&empty), Frontier::new(&empty));
        here.push((FNV_OFFSET, root));
        for (k, seg) in segs.iter().enumerate() {
            let depth = u8::try_from(k + 1).unwrap_or(u8::MAX);
            next.clear();
            for &(h, node) in here.iter() {
                visit(node.rest());
                // Probe only for the kinds of child that exist: a probe for a missing key is
                // a walk of the map too, and over a large trie a cold one.
                for (kind, step) in [(LITERAL_CHILD, *seg), (ANY_CHILD, "*")] {
                    if node.kids & kind == 0 {
                        continue;
                    }
                    let h2 = extend_hash(h, step);
                    if let Some(child) = self.get(&(holder, device, depth, h2)) {
                        next.push((h2, child));
                    }
                }
            }
            std::mem::swap(&mut here, &mut next);
            if here.is_empty() {
                return;
            }
        }
        for &(_, node) in here.iter() {
            visit(node.exact());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::Map;

    fn pats(ps: &[&str]) -> Vec<PathPattern> {
        ps.iter().map(|p| PathPattern::parse(p).unwrap()).collect()
    }

    fn found(t: &CapTrie, holder: Pid, path: &str) -> Vec<Cid> {
        let segs: Vec<&str> = path.split('/').collect();
        let mut out = Vec::new();
        t.walk(holder, 9, &segs, |l| out.extend_from_slice(l));
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn the_walk_finds_exactly_the_patterns_on_the_path() {
        let mut t = CapTrie::default();
        t.file(1, 9, &pats(&["a/b/c"]), 0);
        t.file(1, 9, &pats(&["a/*/c", "x/**"]), 1);
        t.file(1, 9, &pats(&["a/**"]), 2);
        t.file(1, 9, &pats(&["*/b/*"]), 3);
        t.file(2, 9, &pats(&["a/b/c"]), 4);
        assert_eq!(found(&t, 1, "a/b/c"), vec![0, 1, 2, 3]);
        assert_eq!(found(&t, 1, "a/z/c"), vec![1, 2]);
        assert_eq!(found(&t, 1, "a"), Vec::<Cid>::new());
        assert_eq!(found(&t, 1, "x/y/z"), vec![1]);
        assert_eq!(found(&t, 1, "q/b/r"), vec![3]);
        assert_eq!(found(&t, 2, "a/b/c"), vec![4]);
        assert_eq!(found(&t, 3, "a/b/c"), Vec::<Cid>::new());
    }

    #[test]
    fn nodes_record_their_kinds_of_child_and_keep_lists_in_order() {
        let mut t = CapTrie::default();
        t.file(1, 9, &pats(&["a/b"]), 0);
        let kids = |t: &CapTrie, depth: u8| -> Vec<u8> {
            let mut v: Vec<u8> = t.iter().filter(|(k, _)| k.2 == depth).map(|(_, n)| n.kids()).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(kids(&t, 0), vec![LITERAL_CHILD]);
        t.file(1, 9, &pats(&["*/c"]), 1);
        assert_eq!(kids(&t, 0), vec![LITERAL_CHILD | ANY_CHILD]);
        assert_eq!(kids(&t, 1), vec![LITERAL_CHILD, LITERAL_CHILD]);
        assert_eq!(kids(&t, 2), vec![0, 0]);
        // Exact and rest lists in one node, past the inline capacity, in filing order.
        for c in 2..9 {
            t.file(1, 9, &pats(&[if c % 2 == 0 { "a/**" } else { "a" }]), c);
        }
        t.file(1, 9, &pats(&["a"]), 3);
        let (_, a) = t.iter().find(|(k, n)| k.2 == 1 && !n.exact().is_empty()).unwrap();
        assert_eq!(a.exact(), &[3, 5, 7]);
        assert_eq!(a.rest(), &[2, 4, 6, 8]);
        assert_eq!(found(&t, 1, "a"), vec![3, 5, 7]);
        assert_eq!(found(&t, 1, "a/b"), vec![0, 2, 4, 6, 8]);
    }

    #[test]
    fn growing_keeps_every_node_and_snapshots_stay_as_they_were() {
        let mut t = CapTrie::default();
        // The reference: one persistent map of every node, filed the same way.
        let mut model: Map<CapKey, CapNode> = Map::default();
        let mut before = None;
        for c in 0..3_000u32 {
            let p = pats(&[&format!("s/x{}/y", c % 1_500), "a/**"]);
            t.file(1, 9, &p, c);
            for q in &p {
                for (k, kind) in pattern_keys(1, 9, q) {
                    let mut n = model.get(&k).cloned().unwrap_or_default();
                    n.kids |= kind;
                    if kind == 0 {
                        n.file(c, q.has_rest());
                    }
                    model.insert(k, n);
                }
            }
            assert!(t.len * 3 <= t.slots() * 2, "at most two-thirds full");
            if c == 100 {
                before = Some(t.clone());
            }
        }
        let mut a: Vec<_> = t.iter().map(|(k, n)| (*k, n.clone())).collect();
        let mut b: Vec<_> = model.iter().map(|(k, n)| (*k, n.clone())).collect();
        a.sort_by_key(|x| x.0);
        b.sort_by_key(|x| x.0);
        assert!(t.slots() > MIN_SLOTS, "grew at least once");
        assert_eq!((t.iter().count(), t.len), (b.len(), b.len()));
        assert!(a == b, "the table holds the same nodes as the map");
        for (k, n) in &b {
            assert_eq!(t.get(k), Some(n));
        }
        assert_eq!(found(&t, 1, "a/b").len(), 3_000);
        assert_eq!(found(&t, 1, "s/x5/y"), (0..3_000).filter(|c| c % 1_500 == 5).collect::<Vec<_>>());
        assert!(found(&t, 1, "s/x1500/y").is_empty() && found(&t, 2, "s/x1/y").is_empty());
        // A clone taken earlier (a snapshot) is untouched by the writes and growth since.
        let before = before.unwrap();
        assert_eq!(found(&before, 1, "a/b").len(), 101);
        assert!(found(&before, 1, "s/x200/y").is_empty());
    }

    #[test]
    fn a_write_copies_only_the_chunks_it_touches() {
        let mut t = CapTrie::default();
        for c in 0..2_000u32 {
            t.file(1, 9, &pats(&[&format!("s/x{c}/y")]), c);
        }
        let snapshot = t.clone();
        t.file(1, 9, &pats(&["s/x5/z"]), 2_000);
        // Chunks the write did not touch are the snapshot's own, shared; the ones it touched
        // (at most one per node changed, plus one where a probe ran past a chunk's end) are not.
        let chunks =
            |t: &CapTrie| -> Vec<*const Chunk> { t.groups.iter().flat_map(|g| g.iter()).map(Arc::as_ptr).collect() };
        let copied = chunks(&t).iter().zip(chunks(&snapshot)).filter(|(a, b)| **a != *b).count();
        assert!((1..=4).contains(&copied), "{copied} chunks copied");
        assert_eq!(found(&snapshot, 1, "s/x5/z"), Vec::<Cid>::new());
        assert_eq!(found(&t, 1, "s/x5/z"), vec![2_000]);
        assert_eq!(found(&t, 1, "s/x5/y"), vec![5]);
    }
}
