//! The item name table: item name → item id, one 64-byte line per item that also carries what
//! a check of the item needs, so that a cold check by name reads one line and decides.
//! A name is held as text up to [`LINE_NAME`] bytes, or as 16 bytes when it is a UUID's
//! canonical text (see [`Spelling`]).
//!
//! Why a line per item: at a million items every dependent read is a cache miss (about 150 ns
//! on the machines measured), and a check by name used to make two in series, the name's slot
//! and then the item's record with its origin audience. A line holds the name itself (up to
//! [`LINE_NAME`] bytes), the id, and a [`Summary`] of the record and the audience, so the common
//! check (a current item without grants or provenance, with a small or public audience) is one
//! trip to memory (BENCHMARKS.md, "Earshot against Cedar, and the cold check by name").
//!
//! Where a line goes: each name has three possible lines, derived from its hash (three-way
//! cuckoo hashing). A lookup reads all three at once (three independent misses, one trip),
//! which lets the table be 85% full with one entry per cache line. A name that the build cannot
//! place stays in the overlay (`crate::memory::name_overlay`), which a lookup asks when the
//! lines lack the name.
//!
//! The table also keeps each entry's summary in a column by id, 16 bytes each, for a check
//! that starts from an item's id and so cannot find its line (`MemorySnapshot::check_iid`).
//!
//! A summary is a copy, so it can go stale; the table never decides whether it is still true.
//! It records the [`LineStamp`] it was built against, and the snapshot uses a summary only when
//! the stamp is still its own and the item's record is unchanged since (see
//! `MemorySnapshot::check_by_name`). Everything else in a line is a fact that never changes (a
//! name and its id) or a hint that is checked before use.

use std::collections::VecDeque;
use std::sync::Arc;

use earshot_core::audience::MemberSet;
use rustc_hash::FxBuildHasher;

use crate::memory::name_overlay::NameOverlay;

/// Members a line's summary can carry (most audiences have 1–5).
pub(crate) const LINE_MEMBERS: usize = 5;

/// Bytes of a name a line carries; a longer name is compared in the item's record.
pub(crate) const LINE_NAME: usize = 28;

/// Lines per entry, at least: the table is at most 85% full (three-way cuckoo hashing places
/// entries reliably up to about 91%).
const LOAD_NUM: usize = 20;
const LOAD_DEN: usize = 17;

/// Evictions one insertion may make before its entry goes to the overlay instead.
const MAX_KICKS: usize = 500;

/// Entries a build hashes, and whose three lines it asks memory for, before it places them: at
/// a million items each of an entry's lines is a cache miss, and an entry placed this many
/// entries after its prefetches finds them arrived (BENCHMARKS.md, "A store grown by single
/// writes, and the writer's pauses").
const PLACE_AHEAD: usize = 16;

/// Entries a cancellable build places between two looks at whether it was cancelled.
const CANCEL_EVERY: usize = 4096;

/// What a check of an item needs beyond its name, copied from its record and its origin
/// audience when its line was built. Only an item that is current and has no grants and whose
/// origin audience is public or has at most [`LINE_MEMBERS`] members has one: for such an item
/// admission is origin containment alone (sources, subjects and the author bear on an item's
/// currentness, its grants' consent and its role, never on origin containment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Summary {
    Public,
    Members { len: u8, ids: [u32; LINE_MEMBERS] },
}

impl Summary {
    /// The summary of an audience's members, if a line can carry them.
    pub fn of_members(members: &[u32]) -> Option<Summary> {
        if members.is_empty() || members.len() > LINE_MEMBERS {
            return None;
        }
        let mut ids = [0; LINE_MEMBERS];
        for (slot, p) in ids.iter_mut().zip(members) {
            *slot = *p;
        }
        Some(Summary::Members { len: members.len() as u8, ids })
    }

    pub fn member_set(&self) -> MemberSet<'_, u32> {
        match self {
            Summary::Public => MemberSet::Everyone,
            Summary::Members { len, ids } => MemberSet::Only(ids.get(..usize::from(*len)).unwrap_or(ids)),
        }
    }
}

/// What a table's summaries were computed against: the item vector's base (its generation) and
/// the audiences' in-place edits. A summary is usable only under the stamp it was built with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LineStamp {
    pub items: u64,
    pub audience_edits: u64,
}

/// One entry to build a table from.
#[derive(Clone, Copy)]
pub(crate) struct LineEntry<'a> {
    pub id: u32,
    pub name: &'a str,
    pub hint: u32,
    pub summary: Option<Summary>,
    pub role: LineRole,
}

/// What a build reads: its entries, a bound on their ids (the by-id column's length, and the
/// count the lines are sized for), and each id's name (for an entry that ends in the overlay).
pub(crate) struct BuildSource<E, N> {
    pub entries: E,
    pub ids: usize,
    pub name_of: N,
}

/// What an admitted answer from a line says of the item's role (SPEC §6.2), when the item's
/// record alone decides it (`MemorySnapshot::line_role`); otherwise the answer looks it up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum LineRole {
    /// Looked up at answer time (sources or a named author: the role depends on other records).
    #[default]
    FromRecords,
    /// An owner's own, underived item: an instruction.
    Instruction,
    /// Written without an `author` in front of others: data, author unknown.
    AuthorUnknown,
}

impl LineRole {
    fn byte(self) -> u8 {
        match self {
            LineRole::FromRecords => 0,
            LineRole::Instruction => 1,
            LineRole::AuthorUnknown => 2,
        }
    }

    fn of_byte(b: u8) -> LineRole {
        match b {
            1 => LineRole::Instruction,
            2 => LineRole::AuthorUnknown,
            _ => LineRole::FromRecords,
        }
    }
}

/// A name found in the lines: its id, hint and summary (as built; see [`LineStamp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub id: u32,
    pub hint: u32,
    pub summary: Option<Summary>,
    pub role: LineRole,
}

/// `summary` of a line: no summary, else the member count, or public.
const NO_SUMMARY: u8 = 0;
const PUBLIC_SUMMARY: u8 = u8::MAX;
/// `name_len` of a line whose name is longer than [`LINE_NAME`] and not a canonical UUID.
const NAME_NOT_INLINE: u8 = u8::MAX;
/// `name_len` of a line whose name is a canonical UUID, held as its 16 bytes (see [`Spelling`]).
const NAME_UUID: u8 = u8::MAX - 1;

/// How a line spells a name. Many clients name items by UUID (36 bytes), which is past
/// [`LINE_NAME`]; comparing such a name in the item's record would cost a second trip to
/// memory. A name that is exactly a UUID's canonical text (hyphenated, lowercase hex) is the
/// same information as the UUID's 16 bytes, so the line holds those instead. Any other
/// spelling of a UUID (uppercase, braces, no hyphens) is a different name, and stays text.
///
/// A name that fits in a line is carried zero-padded to [`LINE_NAME`] bytes, as the line holds
/// it, so comparing it with a line is a fixed-size comparison inside that line's 64 bytes. A
/// comparison of the name's own length (the C library's `bcmp`) reads past the line's end: the
/// line's name ends on its boundary, and glibc's short comparison on AVX-512 loads 32 bytes
/// under a mask. Measured, that cost a lookup a second cold trip to memory, the line after its
/// own by all the evidence (BENCHMARKS.md, "Earshot against Cedar, and the cold check by name").
#[derive(Clone, Copy)]
enum Spelling {
    /// Up to [`LINE_NAME`] bytes: their count and the bytes, zero-padded.
    Short {
        len: u8,
        padded: [u8; LINE_NAME],
    },
    /// Longer than a line holds and not a UUID's canonical text.
    Long,
    Uuid([u8; 16]),
}

/// Whether a line holds `name` itself (so a lookup of it never reads the item's record).
pub(crate) fn line_holds_name(name: &str) -> bool {
    name.len() <= LINE_NAME || canonical_uuid(name.as_bytes()).is_some()
}

impl Spelling {
    fn of(name: &str) -> Self {
        let text = name.as_bytes();
        if let Some(bytes) = canonical_uuid(text) {
            return Spelling::Uuid(bytes);
        }
        if text.len() > LINE_NAME {
            return Spelling::Long;
        }
        let mut padded = [0; LINE_NAME];
        for (slot, byte) in padded.iter_mut().zip(text) {
            *slot = *byte;
        }
        Spelling::Short { len: text.len() as u8, padded }
    }
}

/// The 16 bytes of `text` when it is a UUID's canonical text (`8-4-4-4-12` lowercase hex
/// digits), else `None`. Exactly the strings whose bytes print back to themselves, so the
/// mapping is one to one (a test holds it to the `uuid` crate's parse and print). Written out
/// because it runs on every lookup of a 36-byte name: table lookups without branches, rather
/// than the crate's parse followed by printing back to compare, which was slower in the peer
/// bench (BENCHMARKS.md, "Earshot against Cedar, and the cold check by name").
fn canonical_uuid(text: &[u8]) -> Option<[u8; 16]> {
    /// Where each byte's first digit is in the text (the second follows it).
    const DIGITS: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    /// A lowercase hex digit's value; 16 for every other byte.
    const NIBBLE: [u8; 256] = {
        let mut t = [16u8; 256];
        let mut i = 0;
        while i < 10 {
            t[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            t[b'a' as usize + i] = 10 + i as u8;
            i += 1;
        }
        t
    };
    let text: &[u8; 36] = text.try_into().ok()?;
    if text[8] != b'-' || text[13] != b'-' || text[18] != b'-' || text[23] != b'-' {
        return None;
    }
    let mut out = [0u8; 16];
    let mut invalid = 0u8;
    for (byte, at) in out.iter_mut().zip(DIGITS) {
        let (hi, lo) = (NIBBLE[usize::from(text[at])], NIBBLE[usize::from(text[at + 1])]);
        invalid |= hi | lo;
        *byte = hi << 4 | (lo & 15);
    }
    (invalid & 16 == 0).then_some(out)
}

/// One item's line: 64 bytes on a 64-byte boundary, so it is read with one cache miss.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line {
    /// The id plus one; 0: an empty line.
    id1: u32,
    /// 32 bits of the name's hash: a lookup compares them before the name, and the line's
    /// three places derive from them (so a build moves lines without their names).
    hash: u32,
    /// The caller's value for the entry (for items: the origin audience when built).
    hint: u32,
    name_len: u8,
    summary: u8,
    /// [`LineRole`] as a byte.
    role: u8,
    _pad: u8,
    members: [u32; LINE_MEMBERS],
    name: [u8; LINE_NAME],
}

const _: () = assert!(std::mem::size_of::<Line>() == 64);

impl Line {
    fn new(e: &LineEntry<'_>, hash: u32) -> Line {
        let mut line = Line { id1: e.id.wrapping_add(1), hash, hint: e.hint, role: e.role.byte(), ..Line::default() };
        match Spelling::of(e.name) {
            Spelling::Short { len, padded } => {
                line.name_len = len;
                line.name = padded;
            }
            Spelling::Long => line.name_len = NAME_NOT_INLINE,
            Spelling::Uuid(bytes) => {
                line.name_len = NAME_UUID;
                for (slot, byte) in line.name.iter_mut().zip(bytes) {
                    *slot = byte;
                }
            }
        }
        match e.summary {
            None => line.summary = NO_SUMMARY,
            Some(Summary::Public) => line.summary = PUBLIC_SUMMARY,
            Some(Summary::Members { len, ids }) => {
                line.summary = len;
                line.members = ids;
            }
        }
        line
    }

    fn is_empty(&self) -> bool {
        self.id1 == 0
    }

    fn id(&self) -> u32 {
        self.id1.wrapping_sub(1)
    }

    /// The name when the line holds it as text.
    #[cfg(test)]
    fn inline_name(&self) -> Option<&[u8]> {
        self.name.get(..usize::from(self.name_len))
    }

    /// Whether this line's name is `name` (spelt as [`Spelling::of`] spells it); `None` when
    /// the line does not hold its name, which must then be compared elsewhere.
    ///
    /// Reads nothing outside the line (see [`Spelling`]): both comparisons are of fixed size.
    fn holds_name(&self, name: &Spelling) -> Option<bool> {
        match self.name_len {
            NAME_NOT_INLINE => None,
            NAME_UUID => Some(matches!(name, Spelling::Uuid(u) if self.name.first_chunk() == Some(u))),
            held => Some(matches!(name, Spelling::Short { len, padded } if *len == held && *padded == self.name)),
        }
    }

    fn found(&self) -> Found {
        let summary = match self.summary {
            NO_SUMMARY => None,
            PUBLIC_SUMMARY => Some(Summary::Public),
            len => Some(Summary::Members { len, ids: self.members }),
        };
        Found { id: self.id(), hint: self.hint, summary, role: LineRole::of_byte(self.role) }
    }
}

/// Places `cur` in its lines or, when it cannot (or there are no lines), the entry left out in
/// the overlay, by its name. An id without a name would be lost to lookups, so such a build
/// gives no table (`None`).
fn settle<'a>(
    slots: &mut [Line],
    overlay: &mut NameOverlay,
    rng: &mut u64,
    name_of: &impl Fn(u32) -> Option<&'a str>,
    mut cur: Line,
) -> Option<()> {
    if !slots.is_empty() && place(slots, &mut cur, rng) {
        return Some(());
    }
    let id = cur.id();
    overlay.insert(name_of(id)?, id);
    Some(())
}

/// Places `cur` in one of its three lines of `slots` (not empty), evicting and placing others
/// as three-way cuckoo hashing does, at most [`MAX_KICKS`] times. When it gives up, `cur` is
/// the line left out (the last one evicted) and the answer is false.
fn place(slots: &mut [Line], cur: &mut Line, rng: &mut u64) -> bool {
    let n = slots.len();
    let mut last = usize::MAX;
    for _ in 0..MAX_KICKS {
        let at = places(cur.hash, n);
        if let Some(p) = at.into_iter().find(|p| slots.get(*p).is_some_and(Line::is_empty)) {
            if let Some(l) = slots.get_mut(p) {
                *l = *cur;
                return true;
            }
        }
        // All three taken: evict one at random (not the one just placed), and place it.
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        let pick = (*rng % 3) as usize;
        let p = at.into_iter().cycle().skip(pick).take(3).find(|p| *p != last).unwrap_or(at[0]);
        if let Some(l) = slots.get_mut(p) {
            std::mem::swap(l, cur);
        }
        last = p;
    }
    false
}

fn name_hash(name: &str) -> u32 {
    use std::hash::BuildHasher;
    // FxHash, then a final mix (murmur3's), so the high half depends on the whole name.
    let mut h = FxBuildHasher.hash_one(name);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    ((h ^ (h >> 33)) >> 32) as u32
}

/// The three lines a name with hash `hash` may sit in, of `n`.
fn places(hash: u32, n: usize) -> [usize; 3] {
    let mix = |salt: u64| {
        let mut x = (u64::from(hash) ^ salt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 29;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^ (x >> 32)
    };
    // Multiply-shift maps 32 random bits onto 0..n without a power-of-two size.
    let range = |x: u64| (((x & 0xffff_ffff) * n as u64) >> 32) as usize;
    [range(u64::from(hash)), range(mix(1)), range(mix(2))]
}

/// Item name → item id with a line per item (see the module docs), plus a persistent overlay
/// for names added since the lines were built. Names are never removed, so the lines are asked
/// first and the overlay only when they lack the name.
#[derive(Clone, Default)]
pub(crate) struct IdTable {
    lines: Arc<[Line]>,
    stamp: LineStamp,
    /// Ids of names not in the lines.
    overlay: NameOverlay,
    /// Each entry's summary again, by id: a check by id (`MemorySnapshot::check_iid`) has no
    /// name to find its line with, and reads its 16 bytes here instead, one trip to memory.
    by_id: Arc<[PackedSummary]>,
}

/// A [`Summary`] in 16 bytes, for the by-id column: the tag (`NO_SUMMARY`, `PUBLIC_SUMMARY` or
/// the member count) and up to [`LINE_MEMBERS`] member ids of 24 bits each. An audience with a
/// member id past 24 bits has no packed summary (its checks read the records).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(16))]
struct PackedSummary {
    tag: u8,
    members: [u8; 3 * LINE_MEMBERS],
}

const _: () = assert!(std::mem::size_of::<PackedSummary>() == 16);

impl PackedSummary {
    fn of(summary: Option<Summary>) -> PackedSummary {
        let mut packed = PackedSummary::default();
        match summary {
            None => {}
            Some(Summary::Public) => packed.tag = PUBLIC_SUMMARY,
            Some(Summary::Members { len, ids }) => {
                let held = ids.get(..usize::from(len)).unwrap_or(&ids);
                if held.iter().any(|p| *p >= 1 << 24) {
                    return packed;
                }
                for (slot, p) in packed.members.chunks_exact_mut(3).zip(held) {
                    slot.copy_from_slice(&p.to_le_bytes()[..3]);
                }
                packed.tag = len;
            }
        }
        packed
    }

    fn summary(&self) -> Option<Summary> {
        match self.tag {
            NO_SUMMARY => None,
            PUBLIC_SUMMARY => Some(Summary::Public),
            len => {
                let mut ids = [0; LINE_MEMBERS];
                for (id, b) in ids.iter_mut().zip(self.members.chunks_exact(3)) {
                    *id = u32::from_le_bytes([b[0], b[1], b[2], 0]);
                }
                Some(Summary::Members { len, ids })
            }
        }
    }
}

impl IdTable {
    /// A table of `entries`, whose summaries were computed under `stamp`. An entry the build
    /// cannot place goes to the overlay, with its name.
    #[cfg(test)]
    pub fn build<'a>(entries: impl ExactSizeIterator<Item = LineEntry<'a>>, stamp: LineStamp) -> Self {
        let entries: Vec<LineEntry<'a>> = entries.collect();
        Self::build_hashed(Self::test_source(&entries), stamp, name_hash, &|| false).unwrap_or_default()
    }

    /// `entries` as a build's source: their ids are below the largest one plus one, and each
    /// id's name is its entry's.
    #[cfg(test)]
    fn test_source<'e, 'a>(
        entries: &'e [LineEntry<'a>],
    ) -> BuildSource<impl Iterator<Item = LineEntry<'a>> + 'e, impl Fn(u32) -> Option<&'a str> + 'e> {
        let ids = entries.iter().map(|e| e.id as usize + 1).max().unwrap_or(0);
        let name_of = move |id: u32| entries.iter().find(|e| e.id == id).map(|e| e.name);
        BuildSource { entries: entries.iter().copied(), ids, name_of }
    }

    /// [`IdTable::build`] of `source` that gives up (`None`) as soon as `cancelled` answers
    /// true; it is asked every few thousand entries (a build off the writer whose lines went
    /// stale).
    pub fn build_unless<'a, E, N>(
        source: BuildSource<E, N>,
        stamp: LineStamp,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Self>
    where
        E: Iterator<Item = LineEntry<'a>>,
        N: Fn(u32) -> Option<&'a str>,
    {
        Self::build_hashed(source, stamp, name_hash, cancelled)
    }

    /// The build. Every block it fills is allocated once, at its final size, and filled in
    /// place: at a million items the lines are 75 MiB and the by-id column 16 MiB, and a build
    /// that collected every entry, filled vectors and then copied them into their `Arc`s held
    /// about 260 MiB at its peak. Its time is the cache misses of placing entries, which the
    /// prefetches ahead of placement hide (BENCHMARKS.md, "A store grown by single writes, and
    /// the writer's pauses").
    fn build_hashed<'a, E, N>(
        source: BuildSource<E, N>,
        stamp: LineStamp,
        hash_of: fn(&str) -> u32,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Self>
    where
        E: Iterator<Item = LineEntry<'a>>,
        N: Fn(u32) -> Option<&'a str>,
    {
        let BuildSource { entries, ids, name_of } = source;
        let wanted = if ids == 0 { 0 } else { ids * LOAD_NUM / LOAD_DEN + 64 };
        // Collected from an iterator of known length, an `Arc` slice is allocated once and
        // written in place; `get_mut` of the only reference then lends it to fill. (Were it
        // ever refused, every line would stay empty and every entry would go to the overlay,
        // and the column would hold no summaries: slower lookups, the same answers.)
        let mut lines: Arc<[Line]> = std::iter::repeat_n(Line::default(), wanted).collect();
        let mut by_id: Arc<[PackedSummary]> = std::iter::repeat_n(PackedSummary::default(), ids).collect();
        let mut no_lines: [Line; 0] = [];
        let slots: &mut [Line] = Arc::get_mut(&mut lines).unwrap_or(&mut no_lines);
        let mut no_column: [PackedSummary; 0] = [];
        let column: &mut [PackedSummary] = Arc::get_mut(&mut by_id).unwrap_or(&mut no_column);
        let n = slots.len();
        let mut overlay = NameOverlay::default();
        let mut rng: u64 = 0x2545_f491_4f6c_dd1d;
        let mut ahead: VecDeque<Line> = VecDeque::with_capacity(PLACE_AHEAD + 1);
        for (k, e) in entries.enumerate() {
            if k % CANCEL_EVERY == CANCEL_EVERY - 1 && cancelled() {
                return None;
            }
            if let Some(slot) = column.get_mut(e.id as usize) {
                *slot = PackedSummary::of(e.summary);
            }
            let line = Line::new(&e, hash_of(e.name));
            if n > 0 {
                for p in places(line.hash, n) {
                    prefetch_index::prefetch_index(&*slots, p);
                }
            }
            ahead.push_back(line);
            if ahead.len() > PLACE_AHEAD {
                if let Some(cur) = ahead.pop_front() {
                    settle(slots, &mut overlay, &mut rng, &name_of, cur)?;
                }
            }
        }
        while let Some(cur) = ahead.pop_front() {
            settle(slots, &mut overlay, &mut rng, &name_of, cur)?;
        }
        Some(IdTable { lines, stamp, overlay, by_id })
    }

    /// The stamp the summaries were built under.
    pub fn stamp(&self) -> LineStamp {
        self.stamp
    }

    /// The three lines of `name` (none when the table has no lines), read together.
    fn lines_of(&self, name: &str) -> Option<(u32, [&Line; 3])> {
        if self.lines.is_empty() {
            return None;
        }
        let hash = name_hash(name);
        let [a, b, c] = places(hash, self.lines.len());
        Some((hash, [self.lines.get(a)?, self.lines.get(b)?, self.lines.get(c)?]))
    }

    /// `name` in the lines. A name longer than a line holds is compared with `name_of`, which
    /// gets the candidate's id and hint (so it can start the reads a caller makes next).
    pub fn find<'a>(&self, name: &str, name_of: impl Fn(u32, u32) -> Option<&'a str>) -> Option<Found> {
        let (hash, lines) = self.lines_of(name)?;
        // The three cold reads go out together (prefetches), and the lines are then compared
        // in order: a name found in its first line does not wait for the other two.
        for l in &lines[1..] {
            prefetch_index::prefetch_index(std::slice::from_ref(*l), 0);
        }
        let spelling = Spelling::of(name);
        lines.into_iter().find_map(|l| {
            if l.hash != hash || l.is_empty() {
                return None;
            }
            let same = match l.holds_name(&spelling) {
                Some(same) => same,
                None => name_of(l.id(), l.hint) == Some(name),
            };
            same.then(|| l.found())
        })
    }

    /// The summary entry `id` was built with, found by id (see `by_id`); `None` for an entry
    /// without one, one whose members do not pack, or an id the build did not have.
    pub fn summary_by_id(&self, id: u32) -> Option<Summary> {
        self.by_id.get(id as usize)?.summary()
    }

    /// Replaces entry `id`'s summary in the by-id column only (a test's lying column).
    #[cfg(test)]
    pub fn set_summary_by_id(&mut self, id: u32, summary: Option<Summary>) {
        let mut column = self.by_id.to_vec();
        if let Some(slot) = column.get_mut(id as usize) {
            *slot = PackedSummary::of(summary);
        }
        self.by_id = Arc::from(column);
    }

    /// The first line whose hash matches `name`'s, without comparing the name: a candidate to
    /// read ahead of a lookup, never an answer (two names may share the hash bits).
    pub fn candidate(&self, name: &str) -> Option<Found> {
        let (hash, lines) = self.lines_of(name)?;
        lines.into_iter().find(|l| !l.is_empty() && l.hash == hash).map(Line::found)
    }

    /// Starts the reads of `name`'s lines, for a lookup of `name` that follows other work (a
    /// check resolves its container first), so their cache misses overlap that work. Reads
    /// nothing it returns; only ever a speed hint.
    pub fn touch(&self, name: &str) {
        if self.lines.is_empty() {
            return;
        }
        // A prefetch, not a read: a read would have to complete before the instructions after
        // it retire, so the work meant to overlap it would stall behind it instead.
        for at in places(name_hash(name), self.lines.len()) {
            prefetch_index::prefetch_index(&*self.lines, at);
        }
    }

    /// Ids not in the lines (added since they were built, or not placed by the build), as the
    /// asker's items confirm them: `name_of` gives the name of the asker's item of an id, and
    /// an id whose item has another name (or none) is never the answer.
    pub fn overlay_get<'a>(&self, name: &str, name_of: impl Fn(u32) -> Option<&'a str>) -> Option<u32> {
        self.overlay.get(name, name_of)
    }

    pub fn get<'a>(&self, name: &str, name_of: impl Fn(u32) -> Option<&'a str>) -> Option<u32> {
        match self.find(name, |id, _| name_of(id)) {
            Some(f) => Some(f.id),
            None => self.overlay_get(name, name_of),
        }
    }

    /// Adds a name that is not yet present (callers check first) to the overlay. The table
    /// never rebuilds itself: the snapshot rebuilds it when the items fold
    /// (`MemorySnapshot::refresh_item_lines`), which bounds the overlay.
    pub fn insert(&mut self, name: &str, id: u32) {
        self.overlay.insert(name, id);
    }

    /// Names in the overlay.
    #[cfg(test)]
    pub fn overlay_len(&self) -> usize {
        self.overlay.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(names: &[String]) -> impl ExactSizeIterator<Item = LineEntry<'_>> {
        names.iter().enumerate().map(|(i, n)| LineEntry {
            id: i as u32,
            name: n,
            hint: i as u32 * 3,
            summary: Summary::of_members(&[i as u32]),
            role: [LineRole::FromRecords, LineRole::Instruction, LineRole::AuthorUnknown][i % 3],
        })
    }

    #[test]
    fn every_name_is_found_with_its_hint_and_summary() {
        // Short names sit in their lines; names past `LINE_NAME` bytes are compared by `name_of`.
        let names: Vec<String> =
            (0..20_000u32).map(|i| if i % 5 == 0 { format!("{i:0>40}") } else { format!("item-{i}") }).collect();
        let name_of = |i: u32| names.get(i as usize).map(String::as_str);
        let mut t = IdTable::build(entries(&names), LineStamp { items: 7, audience_edits: 1 });
        assert_eq!(t.stamp(), LineStamp { items: 7, audience_edits: 1 });
        for (i, name) in names.iter().enumerate() {
            let i = i as u32;
            assert_eq!(t.get(name, name_of), Some(i), "{name}");
            if let Some(f) = t.find(name, |id, _| name_of(id)) {
                assert_eq!((f.id, f.hint, f.summary), (i, i * 3, Summary::of_members(&[i])));
                assert_eq!(f.role.byte(), (i % 3) as u8, "{name} keeps its role");
                assert_eq!(t.candidate(name), Some(f), "no two of these names share hash bits");
                assert_eq!(t.summary_by_id(i), f.summary, "{name} by id");
            } else {
                assert_eq!(t.overlay_get(name, name_of), Some(i), "{name} is in the lines or the overlay");
                assert_eq!(t.summary_by_id(i), Summary::of_members(&[i]), "{name} by id, though not in a line");
            }
            t.touch(name);
        }
        assert!(t.overlay_len() < 20, "the build placed almost every name: {}", t.overlay_len());
        for absent in ["item-20000", "", "item-1 ", &format!("{:0>40}", 3)] {
            assert_eq!(t.get(absent, name_of), None, "{absent}");
        }
        let added = |i: u32| if i == 20_000 { Some("added") } else { name_of(i) };
        t.insert("added", 20_000);
        assert_eq!((t.get("added", added), t.get("added", name_of)), (Some(20_000), None));
        assert_eq!(
            (t.summary_by_id(20_000), t.summary_by_id(u32::MAX), IdTable::default().summary_by_id(0)),
            (None, None, None)
        );
        IdTable::default().touch("anything");
        assert_eq!((IdTable::default().candidate("x"), IdTable::default().get("x", name_of)), (None, None));
    }

    #[test]
    fn a_packed_summary_is_the_summary_or_none() {
        let top = (1 << 24) - 1;
        for members in [&[0][..], &[7, top], &[1, 2, 3, 4, top], &[top - 1, top, 0x12_3456]] {
            let s = Summary::of_members(members);
            assert!(s.is_some());
            assert_eq!(PackedSummary::of(s).summary(), s, "{members:?}");
        }
        assert_eq!(PackedSummary::of(Some(Summary::Public)).summary(), Some(Summary::Public));
        assert_eq!(PackedSummary::of(None).summary(), None);
        // A member id past 24 bits does not pack: no summary, never a truncated one.
        assert_eq!(PackedSummary::of(Summary::of_members(&[3, 1 << 24])).summary(), None);
        assert_eq!(PackedSummary::of(Summary::of_members(&[u32::MAX])).summary(), None);
    }

    #[test]
    fn a_name_the_build_cannot_place_goes_to_the_overlay_with_its_own_id() {
        // Every name given the same hash has the same three lines: three are placed after
        // evictions, the rest must reach the overlay, each under its own id.
        let names: Vec<String> = (0..12u32).map(|i| format!("n{i}")).collect();
        let name_of = |i: u32| names.get(i as usize).map(String::as_str);
        let all: Vec<LineEntry<'_>> = entries(&names).collect();
        let t = IdTable::build_hashed(IdTable::test_source(&all), LineStamp::default(), |_| 42, &|| false).unwrap();
        let placed: Vec<&Line> = t.lines.iter().filter(|l| !l.is_empty()).collect();
        assert_eq!((placed.len(), t.overlay_len()), (3, 9));
        for l in placed {
            let name = names.get(l.id() as usize).map(String::as_bytes);
            assert_eq!((l.inline_name(), l.hint), (name, l.id() * 3), "a line keeps its own name and hint");
            let name = std::str::from_utf8(l.inline_name().unwrap_or_default()).unwrap_or("");
            assert_eq!(t.overlay_get(name, name_of), None, "{name} is in a line, not the overlay");
        }
        let mut in_overlay = t.overlay.ids();
        in_overlay.sort_unstable();
        for id in &in_overlay {
            let name = names.get(*id as usize).map(String::as_str).unwrap_or_default();
            assert_eq!(t.overlay_get(name, name_of), Some(*id), "{name} is in the overlay under its own id");
            assert_eq!(t.summary_by_id(*id), Summary::of_members(&[*id]), "{name} by id, in the overlay");
        }
    }

    #[test]
    fn canonical_uuid_text_is_exactly_what_the_uuid_crate_prints() {
        // The crate's parse accepts more spellings; a canonical one is one it prints back.
        let by_crate = |t: &[u8]| {
            let u = uuid::Uuid::try_parse_ascii(t).ok()?;
            (u.hyphenated().to_string().as_bytes() == t).then(|| u.into_bytes())
        };
        let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"0123456789abcdefABCDEF-{}gz ";
        for i in 0..200_000u32 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let mut text = uuid::Uuid::from_u64_pair(rng, rng.rotate_left(17)).hyphenated().to_string().into_bytes();
            // Most texts get one or two bytes changed to anything from the alphabet, so every
            // position sees every kind of wrong byte (and sometimes a right one).
            for k in 0..(i % 3) {
                let at = (rng >> (8 * k)) as usize % text.len();
                text[at] = alphabet[(rng >> (8 * k + 5)) as usize % alphabet.len()];
            }
            if i % 97 == 0 {
                text.push(b'0');
            }
            assert_eq!(canonical_uuid(&text), by_crate(&text), "{}", String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn a_short_name_matches_its_line_and_no_name_a_byte_away() {
        // Short names are compared zero-padded: a trailing NUL, a byte more or less, or any one
        // byte changed must still differ (the padding must not hide the length).
        for len in 0..=LINE_NAME {
            let name: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let line =
                Line::new(&LineEntry { id: 1, name: &name, hint: 0, summary: None, role: LineRole::FromRecords }, 0);
            assert_eq!(line.holds_name(&Spelling::of(&name)), Some(true), "{name}");
            assert_eq!(line.inline_name(), Some(name.as_bytes()));
            let mut others = vec![format!("{name}\0"), format!("{name}a")];
            if let Some(shorter) = name.get(..len.saturating_sub(1)).filter(|_| len > 0) {
                others.push(shorter.to_string());
            }
            for at in 0..len {
                let mut b = name.clone().into_bytes();
                b[at] = b'Z';
                others.push(String::from_utf8(b.clone()).unwrap_or_default());
                b[at] = 0;
                others.push(String::from_utf8(b).unwrap_or_default());
            }
            for other in others {
                assert_eq!(line.holds_name(&Spelling::of(&other)), Some(false), "{name:?} against {other:?}");
            }
        }
        // A line that does not hold its name leaves the comparison to the record.
        let long = "x".repeat(LINE_NAME + 1);
        let line = Line::new(&LineEntry { id: 1, name: &long, hint: 0, summary: None, role: LineRole::FromRecords }, 0);
        assert_eq!(line.holds_name(&Spelling::of(&long)), None);
        assert_eq!(line.holds_name(&Spelling::of("x")), None);
    }

    #[test]
    fn a_canonical_uuid_name_is_held_in_its_line_and_no_other_spelling_matches_it() {
        let lower = "0f1e2d3c-4b5a-4697-8877-665544332211";
        let upper = "0F1E2D3C-4B5A-4697-8877-665544332211";
        assert!(matches!(Spelling::of(lower), Spelling::Uuid(_)));
        for other in
            [upper, "0f1e2d3c4b5a46978877665544332211", "{0f1e2d3c-4b5a-4697-8877-665544332211}", &"x".repeat(36)]
        {
            assert!(matches!(Spelling::of(other), Spelling::Long), "{other}");
        }
        assert!(line_holds_name(lower) && line_holds_name("short") && !line_holds_name(upper));
        // The line's comparison itself (a lookup compares hash bits first, which would hide a
        // comparison that ignores part of the name): the name matches, every other spelling
        // and every name one digit away does not.
        let line = Line::new(&LineEntry { id: 1, name: lower, hint: 0, summary: None, role: LineRole::FromRecords }, 0);
        assert_eq!(line.holds_name(&Spelling::of(lower)), Some(true));
        assert_eq!(line.holds_name(&Spelling::of(upper)), Some(false));
        for at in (0..36).filter(|&i| ![8, 13, 18, 23].contains(&i)) {
            for digit in "0123456789abcdef".chars() {
                let mut near: Vec<char> = lower.chars().collect();
                if near[at] == digit {
                    continue;
                }
                near[at] = digit;
                let near: String = near.into_iter().collect();
                assert_eq!(line.holds_name(&Spelling::of(&near)), Some(false), "{near}");
            }
        }
        let text = Line::new(
            &LineEntry {
                id: 1,
                name: "0f1e2d3c-4b5a-4697-8877-66554433221",
                hint: 0,
                summary: None,
                role: LineRole::FromRecords,
            },
            0,
        );
        assert_eq!(text.holds_name(&Spelling::of(lower)), None, "a 35-byte name is not in its line");
        // 3,000 lowercase UUIDs, and the uppercase spelling of every tenth as a name of its own.
        let mut names: Vec<String> = (1..=3_000u128)
            .map(|i| uuid::Uuid::from_u128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)).to_string())
            .collect();
        let uppers: Vec<String> = names.iter().step_by(10).map(|n| n.to_uppercase()).collect();
        assert!(uppers.iter().all(|u| !names.contains(u)), "every uppercase spelling differs");
        names.extend(uppers);
        let t = IdTable::build(entries(&names), LineStamp::default());
        // A lowercase UUID is decided by its line alone: its record's name is never asked for.
        let never = |_: u32| -> Option<&str> { None };
        let name_of = |i: u32| names.get(i as usize).map(String::as_str);
        for (i, name) in names.iter().enumerate() {
            let i = i as u32;
            if i < 3_000 {
                assert_eq!(t.find(name, |id, _| never(id)).map(|f| f.id), Some(i), "{name}");
            } else {
                assert_eq!(t.get(name, name_of), Some(i), "{name}");
            }
        }
        // The uppercase spelling of a UUID stored only in lowercase is another, absent, name.
        for name in names.iter().skip(1).step_by(10).take(300) {
            assert_eq!(t.get(&name.to_uppercase(), name_of), None, "{name}");
            assert_eq!(t.get(&format!("{{{name}}}"), name_of), None, "{name}");
        }
    }

    #[test]
    fn summaries_round_trip_through_a_line() {
        let summaries = [Some(Summary::Public), Summary::of_members(&[1, 2, 3, 4, 5]), Summary::of_members(&[9]), None];
        let roles = [LineRole::FromRecords, LineRole::Instruction, LineRole::AuthorUnknown];
        for (s, role) in summaries.into_iter().flat_map(|s| roles.map(|r| (s, r))) {
            let e = LineEntry { id: 4, name: "x", hint: 2, summary: s, role };
            assert_eq!(Line::new(&e, 0).found(), Found { id: 4, hint: 2, summary: s, role });
        }
        assert_eq!(Summary::of_members(&[1, 2, 3, 4, 5, 6]), None);
        assert_eq!(Summary::of_members(&[]), None);
        assert_eq!(Summary::of_members(&[3, 8]).map(|s| s.member_set().size()), Some(2));
    }
}
