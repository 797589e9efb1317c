//! The memory part of one immutable revision of a store's state, in persistent (structurally
//! shared) maps.
//!
//! A `MemorySnapshot` is the projection of the memory records at one revision: interned
//! participants, audiences, items and grants, plus the postings that answer userset containment
//! without scanning. Cloning is O(1); the writer clones the latest snapshot (this part and the
//! device part, see `crate::compose`), applies a command and publishes the result.

use earshot_core::audience::MemberSet;
use earshot_core::{AudienceDigest, AudienceKind, Currentness, State};
use std::num::NonZeroU32;
use std::sync::Arc;

use crate::memory::consent::GrantConsent;
use crate::memory::id_table::{BuildSource, IdTable, LineEntry, LineStamp, Summary};
use crate::memory::layered::{ChunkedVec, FlatVec, NameMap, Posting};
use crate::memory::line_build::{LineBuild, LineBuilds};
use crate::memory::model::ParticipantKind;
use crate::memory::trust::line_role;

pub use crate::common::Pid;
/// Item index: its creation sequence number, stable across restarts.
pub type Iid = u32;
/// Interned audience.
pub type Aid = u32;
/// Grant index: its creation sequence number.
pub type Gid = u32;

pub(crate) use crate::common::{Map, OrdSet, Vector};

/// The public audience always has this index.
pub const PUBLIC_AID: Aid = 0;

#[derive(Debug, Clone)]
pub(crate) struct PartRec {
    pub name: Arc<str>,
    pub kind: ParticipantKind,
    pub display: Option<Arc<str>>,
}

/// Items ahead of the one a build of the item lines reads whose name and audience it asks
/// memory for (`MemorySnapshot::build_item_lines_unless`).
const READ_AHEAD: Iid = 16;

/// Members of an audience: everyone (public) or a list sorted by `Pid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Members {
    Everyone,
    Only(MemberList),
}

/// Audiences of at most this many members keep them inline in their record (most audiences
/// have 1–5), so a check reads the record and its members in one place: one cache miss
/// fewer for a cold check (BENCHMARKS.md, "Earshot against Cedar, and the cold check by name").
/// It also keeps `AudRec` at 64 bytes.
const INLINE_MEMBERS: usize = 5;

/// A sorted member list: inline when short, else a shared slice.
#[derive(Debug, Clone)]
pub(crate) enum MemberList {
    Inline { len: u8, ids: [Pid; INLINE_MEMBERS] },
    Shared(Arc<[Pid]>),
}

impl std::ops::Deref for MemberList {
    type Target = [Pid];
    fn deref(&self) -> &[Pid] {
        match self {
            MemberList::Inline { len, ids } => ids.get(..usize::from(*len)).unwrap_or(ids),
            MemberList::Shared(m) => m,
        }
    }
}

impl From<&[Pid]> for MemberList {
    fn from(m: &[Pid]) -> Self {
        if m.len() <= INLINE_MEMBERS {
            let mut ids = [0; INLINE_MEMBERS];
            for (slot, p) in ids.iter_mut().zip(m) {
                *slot = *p;
            }
            MemberList::Inline { len: m.len() as u8, ids }
        } else {
            MemberList::Shared(Arc::from(m))
        }
    }
}

impl From<Vec<Pid>> for MemberList {
    fn from(m: Vec<Pid>) -> Self {
        MemberList::from(m.as_slice())
    }
}

impl PartialEq for MemberList {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for MemberList {}

#[derive(Debug, Clone)]
pub(crate) struct AudRec {
    pub kind: AudienceKind,
    pub members: Members,
    pub digest: AudienceDigest,
    /// False once the audience was merged into another by member removal.
    pub live: bool,
}

impl AudRec {
    pub fn member_set(&self) -> MemberSet<'_, Pid> {
        match &self.members {
            Members::Everyone => MemberSet::Everyone,
            Members::Only(m) => MemberSet::Only(m),
        }
    }
}

/// One item in the index: 64 bytes on a cache-line boundary, so a cold check reads the whole
/// record with one miss. What most items lack (sources, grants, a successor) lives behind one
/// optional pointer.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub(crate) struct ItemRec {
    /// Inline up to 22 bytes: a check by name compares it in the record it has just read
    /// instead of following a pointer to a heap block (BENCHMARKS.md, "Earshot against
    /// Cedar, and the cold check by name").
    pub name: ItemName,
    pub links: Option<Arc<ItemLinks>>,
    pub created_rev: u64,
    pub created_at_ms: i64,
    pub owner: Pid,
    pub aud: Aid,
    lifecycle: Lifecycle,
}

/// An item's own state and its currentness, packed into 8 bytes (`Currentness<Iid>` and
/// `State` side by side take 16, which would push the record past a cache line).
#[derive(Debug, Clone, Copy)]
struct Lifecycle {
    /// The ancestor that stops the item, as its id plus one (`None`: none, or current).
    ancestor: Option<NonZeroU32>,
    state: State,
    /// `None` when current; else the state that stops it.
    stopped_by: Option<State>,
}

impl Lifecycle {
    fn new(state: State, current: Currentness<Iid>) -> Self {
        let (stopped_by, ancestor) = match current {
            Currentness::Current => (None, None),
            Currentness::NotCurrent { state, ancestor } => (Some(state), ancestor),
        };
        // An id of u32::MAX has no `+ 1`; the ancestor only names the blocking item in an
        // explanation (never the decision, which `stopped_by` carries), and the store holds
        // far fewer items than that.
        let ancestor = ancestor.and_then(|a| a.checked_add(1)).and_then(NonZeroU32::new);
        Lifecycle { ancestor, state, stopped_by }
    }

    fn current(self) -> Currentness<Iid> {
        match self.stopped_by {
            None => Currentness::Current,
            Some(state) => Currentness::NotCurrent { state, ancestor: self.ancestor.map(|a| a.get() - 1) },
        }
    }
}

/// The rarer relations of an item.
#[derive(Debug, Clone, Default)]
pub(crate) struct ItemLinks {
    pub sources: Box<[Iid]>,
    pub grants: Box<[Gid]>,
    pub superseded_by: Option<Iid>,
    /// The participants the item is about (SPEC §6.3), sorted names: names rather than
    /// interned ids, because a subject stays named after its removal (§1.8; see
    /// `crate::memory::consent`).
    pub subjects: Box<[Arc<str>]>,
    /// The author (SPEC §6.2), only when it is not the owner: an owner's own item (the common
    /// case) has no links for it, so its check reads nothing more.
    pub author: Option<Author>,
}

/// The author of an item that is not its owner (SPEC §6.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Author {
    /// A participant of the store, named at write time.
    Participant(Pid),
    /// Nobody known: an item written without an `author` in front of anyone besides its owner
    /// (judged once, at write time). Never trusted.
    Unknown,
    /// A participant since removed (SPEC §1.8), kept by name as a tombstone: never trusted, and
    /// never the participant a later create of the same id makes.
    Removed(Arc<str>),
}

/// The interned id that stands for an unknown author in the integrity rule: no participant
/// has it, and no delegation names it, so an item carrying it is never trusted.
pub(crate) const NO_AUTHOR: Pid = Pid::MAX;

// One cache line, and part of the memory budget (BENCHMARKS.md, "Start-up rebuild and memory").
const _: () = assert!(std::mem::size_of::<ItemRec>() == 64);

/// An item's name: inline up to the name map's inline length, like its keys.
pub(crate) type ItemName = crate::memory::layered::NameKey;

impl ItemRec {
    #[allow(
        clippy::too_many_arguments,
        reason = "one constructor for the two places that build a record (a write and the rebuild), each field named at the call"
    )]
    pub fn new(
        name: &str,
        owner: Pid,
        aud: Aid,
        state: State,
        current: Currentness<Iid>,
        links: Option<Arc<ItemLinks>>,
        created_rev: u64,
        created_at_ms: i64,
    ) -> Self {
        ItemRec {
            name: ItemName::new(name),
            links,
            created_rev,
            created_at_ms,
            owner,
            aud,
            lifecycle: Lifecycle::new(state, current),
        }
    }

    /// The item's own state (SPEC §1.5).
    pub fn state(&self) -> State {
        self.lifecycle.state
    }

    /// Whether the item and every ancestor is active (SPEC §1.5), and if not what stops it.
    pub fn current(&self) -> Currentness<Iid> {
        self.lifecycle.current()
    }

    pub fn set_state(&mut self, state: State) {
        self.lifecycle.state = state;
    }

    pub fn set_current(&mut self, current: Currentness<Iid>) {
        self.lifecycle = Lifecycle::new(self.lifecycle.state, current);
    }

    pub fn sources(&self) -> &[Iid] {
        self.links.as_deref().map_or(&[], |l| &l.sources)
    }
    pub fn grants(&self) -> &[Gid] {
        self.links.as_deref().map_or(&[], |l| &l.grants)
    }
    pub fn superseded_by(&self) -> Option<Iid> {
        self.links.as_deref().and_then(|l| l.superseded_by)
    }
    pub fn subjects(&self) -> &[Arc<str>] {
        self.links.as_deref().map_or(&[], |l| &l.subjects)
    }

    /// The participant whose words the item carries (SPEC §6.2): the owner unless recorded.
    pub fn author(&self) -> Pid {
        match self.links.as_deref().and_then(|l| l.author.as_ref()) {
            None => self.owner,
            Some(Author::Participant(p)) => *p,
            Some(Author::Unknown | Author::Removed(_)) => NO_AUTHOR,
        }
    }
    /// The recorded author when it is not the owner.
    pub fn author_rec(&self) -> Option<&Author> {
        self.links.as_deref().and_then(|l| l.author.as_ref())
    }
    /// Changes the links, dropping the pointer when nothing is left.
    pub fn edit_links(&mut self, f: impl FnOnce(&mut ItemLinks)) {
        let mut links = self.links.as_deref().cloned().unwrap_or_default();
        f(&mut links);
        let empty = links.sources.is_empty()
            && links.grants.is_empty()
            && links.superseded_by.is_none()
            && links.subjects.is_empty()
            && links.author.is_none();
        self.links = (!empty).then(|| Arc::new(links));
    }
    /// Links holding only `sources` (none when empty).
    pub fn links_from_sources(sources: &[Iid]) -> Option<Arc<ItemLinks>> {
        (!sources.is_empty()).then(|| Arc::new(ItemLinks { sources: sources.into(), ..ItemLinks::default() }))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct GrantRec {
    pub name: Arc<str>,
    pub item: Iid,
    pub aud: Aid,
    pub issuer: Arc<str>,
    pub reason: Option<Arc<str>>,
    pub created_at_ms: i64,
    pub created_rev: u64,
    pub expires_at_ms: Option<i64>,
    pub revoked: bool,
    /// The consent the grant needs from its item's subjects (SPEC §6.3); `None` when it needs
    /// none (the item has no subject other than its owner), which is every grant's common case.
    pub consent: Option<Arc<GrantConsent>>,
}

impl GrantRec {
    pub fn is_live(&self, now_ms: i64) -> bool {
        earshot_core::admission::grant_is_live(self.revoked, self.expires_at_ms, now_ms)
    }
    /// Still waiting for (or withdrawn from) a subject's consent: it admits nothing.
    pub fn is_pending(&self) -> bool {
        self.consent.as_deref().is_some_and(|c| !c.effective)
    }
    /// Live and not pending: the grant admits whoever its audience contains.
    pub fn is_effective(&self, now_ms: i64) -> bool {
        self.is_live(now_ms) && !self.is_pending()
    }
}

/// The memory part of a store's state at one revision (the composed `crate::Snapshot` adds the
/// device part).
#[derive(Clone)]
pub struct MemorySnapshot {
    pub(crate) store: Arc<str>,
    /// The store's incarnation (`MetaRecord::incarnation`): tokens and cursors name it.
    pub(crate) incarnation: Option<Arc<str>>,
    /// The store's consistency-token tag, computed once (`kernel::token::tag`).
    pub(crate) token_tag: Arc<str>,
    pub(crate) revision: u64,
    pub(crate) committed_at_ms: i64,
    pub(crate) pids: NameMap<Pid>,
    pub(crate) parts: Vector<Option<PartRec>>,
    /// `transport \0 identifier` → bound participants (more than one: ambiguous).
    pub(crate) idents: Map<Arc<str>, Arc<[Pid]>>,
    pub(crate) auds: ChunkedVec<AudRec>,
    pub(crate) aud_by_digest: Map<AudienceDigest, Aid>,
    /// The digests of `aud_by_digest` (live audiences) in order: relationship reads page
    /// audience memberships by digest from a cursor without sorting every audience.
    pub(crate) aud_order: OrdSet<AudienceDigest>,
    pub(crate) iids: IdTable,
    /// The item lines being rebuilt off the writer, if they are (`crate::memory::line_build`):
    /// lookups ask them first once they are done and still hold.
    pub(crate) next_lines: Arc<LineBuild>,
    /// Where the writer rebuilds stale item lines (set from the store's `Config`).
    pub(crate) line_builds: LineBuilds,
    pub(crate) items: FlatVec<ItemRec>,
    pub(crate) gids: NameMap<Gid>,
    pub(crate) grants: Vector<GrantRec>,
    /// Postings: participant → audiences containing it (the public audience is implicit).
    pub(crate) part_auds: Map<Pid, OrdSet<Aid>>,
    /// Postings: audience → items whose origin audience it is, ascending.
    pub(crate) aud_items: Map<Aid, Posting>,
    /// Postings: audience → grants whose audience it is, ascending.
    pub(crate) aud_grants: Map<Aid, Posting>,
    /// Postings: owner → its items, ascending (the owner-only container's fast path).
    pub(crate) owner_items: Map<Pid, Posting>,
    /// Postings: owner → its public items, ascending (so a lookup filtered by owner never
    /// walks the public items of every other owner).
    pub(crate) owner_public: Map<Pid, Posting>,
    /// Trust delegations (SPEC §6.2), see `crate::memory::trust`.
    pub(crate) trust: crate::memory::trust::Trust,
    /// The dimension and metric of the store's embeddings, fixed by the first one written
    /// (`crate::memory::dense`); `None` while the store has never held one.
    pub(crate) vectors: Option<crate::memory::dense::VectorSpace>,
}

impl MemorySnapshot {
    /// An empty store at revision 0, holding only the public audience.
    pub(crate) fn empty(store: &str) -> Self {
        let mut s = MemorySnapshot {
            store: Arc::from(store),
            incarnation: None,
            token_tag: Arc::from(crate::kernel::token::tag(store, None)),
            revision: 0,
            committed_at_ms: 0,
            pids: NameMap::default(),
            parts: Vector::new(),
            idents: Map::default(),
            auds: ChunkedVec::new(),
            aud_by_digest: Map::default(),
            aud_order: OrdSet::default(),
            iids: IdTable::default(),
            next_lines: Arc::default(),
            line_builds: LineBuilds::default(),
            items: FlatVec::default(),
            gids: NameMap::default(),
            grants: Vector::new(),
            part_auds: Map::default(),
            aud_items: Map::default(),
            aud_grants: Map::default(),
            owner_items: Map::default(),
            owner_public: Map::default(),
            trust: crate::memory::trust::Trust::default(),
            vectors: None,
        };
        let digest = AudienceDigest::compute::<&str>(AudienceKind::Public, &[]);
        s.auds.push_back(AudRec { kind: AudienceKind::Public, members: Members::Everyone, digest, live: true });
        s.aud_by_digest.insert(digest, PUBLIC_AID);
        s.aud_order.insert(digest);
        s
    }

    /// The revision this snapshot is.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// When this revision was committed: the instant an `at_exact` read of it is judged at.
    pub fn committed_at_ms(&self) -> i64 {
        self.committed_at_ms
    }

    /// The store this snapshot belongs to.
    pub fn store(&self) -> &str {
        &self.store
    }

    /// The store's incarnation: which life of its id this is (see `MetaRecord::incarnation`).
    pub fn incarnation(&self) -> Option<&str> {
        self.incarnation.as_deref()
    }

    /// The consistency token of `revision` of this store.
    pub fn token(&self, revision: u64) -> String {
        crate::kernel::token::encode_with_tag(&self.token_tag, revision)
    }

    /// Names this snapshot's store incarnation (when it is rebuilt from its revision record).
    pub(crate) fn set_incarnation(&mut self, incarnation: Option<&str>) {
        self.incarnation = incarnation.map(Arc::from);
        self.token_tag = Arc::from(crate::kernel::token::tag(&self.store, incarnation));
    }

    /// Number of items ever created (including deleted ones).
    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// Whether checks by name of this snapshot can decide from item lines that hold: false
    /// for the while a large store rebuilds its item lines off the writer (see
    /// `Config::item_lines_off_writer_from`), when checks decide from the records instead.
    /// Answers are the same either way; benchmarks wait for it to measure the settled store.
    pub fn item_lines_hold(&self) -> bool {
        self.item_lines().first.stamp() == self.line_stamp()
    }

    /// Builds the item lines of this snapshot's records and drops them, changing nothing: what
    /// a start-up rebuild, and a build off the writer after the items fold, spend on the lines,
    /// for benchmarks to time alone (`benches/rebuild.rs`). Answers whether a table was built.
    pub fn build_item_lines_once(&self) -> bool {
        self.build_item_lines_unless(&|| false).is_some()
    }

    /// How many items a check by id or by name would decide from their line's summary now: a
    /// count over every item, for benchmarks and diagnostics (BENCHMARKS.md, "The
    /// audience-heavy mix").
    pub fn items_decided_from_lines(&self) -> usize {
        let lines = self.item_lines();
        (0..self.items.len() as Iid).filter(|&iid| self.summary_by_id_holding(lines.first, iid).is_some()).count()
    }

    /// Number of live audiences, including the public one.
    pub fn audience_count(&self) -> usize {
        self.auds.iter().filter(|a| a.live).count()
    }

    pub(crate) fn pid(&self, name: &str) -> Option<Pid> {
        self.pids.get(name).copied()
    }

    pub(crate) fn part(&self, pid: Pid) -> Option<&PartRec> {
        self.parts.get(pid as usize).and_then(Option::as_ref)
    }

    pub(crate) fn part_name(&self, pid: Pid) -> Arc<str> {
        self.part(pid).map(|p| p.name.clone()).unwrap_or_else(|| Arc::from("?"))
    }

    pub(crate) fn iid(&self, name: &str) -> Option<Iid> {
        let name_of = |i: u32| self.item_name(i);
        let lines = self.item_lines();
        lines.first.get(name, name_of).or_else(|| lines.then?.get(name, name_of))
    }

    /// The item lines a lookup by name asks: the lines of a finished build off the writer that
    /// hold under this snapshot's stamp, then this snapshot's own table for the names added
    /// since that build's snapshot; else only the own table. Either way every item's name is
    /// found, and a summary is used only from lines whose stamp is this snapshot's.
    pub(crate) fn item_lines(&self) -> ItemLines<'_> {
        let stamp = self.line_stamp();
        if self.iids.stamp() != stamp {
            if let Some(built) = self.next_lines.ready(stamp) {
                return ItemLines { first: built, then: Some(&self.iids) };
            }
        }
        ItemLines { first: &self.iids, then: None }
    }

    pub(crate) fn item(&self, iid: Iid) -> Option<&ItemRec> {
        self.items.get(iid as usize)
    }

    /// What the item lines' summaries are valid under: this snapshot's item base and its
    /// audiences' in-place edits (see `crate::memory::id_table`).
    pub(crate) fn line_stamp(&self) -> LineStamp {
        LineStamp { items: self.items.generation(), audience_edits: self.auds.edits() }
    }

    /// Whether item `iid`'s summary in the lines still tells what its record and audience do:
    /// the lines were built under this snapshot's stamp and the record is the base's own,
    /// unreplaced since (every change of an item replaces its record).
    ///
    /// `lines` are the lines the summary came from: a build off the writer may finish between
    /// two calls of [`MemorySnapshot::item_lines`], so the table is asked once per lookup and
    /// passed here, never looked up again.
    pub(crate) fn line_summary_holds(&self, lines: &IdTable, iid: Iid) -> bool {
        lines.stamp() == self.line_stamp() && self.items.in_base_unchanged(iid as usize)
    }

    /// Item `iid`'s summary in the by-id column of `lines` (`IdTable::summary_by_id`), only
    /// while it holds ([`MemorySnapshot::line_summary_holds`]).
    pub(crate) fn summary_by_id_holding(&self, lines: &IdTable, iid: Iid) -> Option<Summary> {
        lines.summary_by_id(iid).filter(|_| self.line_summary_holds(lines, iid))
    }

    /// The summary an item's line carries: only for an item whose record is the base's own,
    /// that is current, has no grants and whose origin audience is public or small. For such
    /// an item admission is containment in the origin audience alone (SPEC §1.9), which is all
    /// a decision from the line computes. Its other links (sources, subjects, an author other
    /// than the owner) bear on its role in an answer (`line_role`), not on admission.
    fn line_summary(&self, iid: Iid, rec: &ItemRec) -> Option<Summary> {
        if !self.items.in_base_unchanged(iid as usize) || !rec.grants().is_empty() {
            return None;
        }
        if !matches!(rec.current(), Currentness::Current) {
            return None;
        }
        match &self.aud(rec.aud)?.members {
            Members::Everyone => Some(Summary::Public),
            Members::Only(m) => Summary::of_members(m),
        }
    }

    /// Whether item `iid`'s line tells the truth: its name leads to `iid`, and a summary it
    /// carries that a check would use (`line_summary_holds`) is the one the record and the
    /// audience give now, with the role the record gives; and so is the summary the lines keep
    /// by id (`IdTable::summary_by_id`). `verify` renders this as a fact, so a stale summary is
    /// a disagreement.
    pub(crate) fn item_line_agrees(&self, iid: Iid) -> bool {
        let Some(rec) = self.item(iid) else { return false };
        let lines = self.item_lines();
        let by_id = self.summary_by_id_holding(lines.first, iid);
        if by_id.is_some() && by_id != self.line_summary(iid, rec) {
            return false;
        }
        let found = lines.first.find(&rec.name, |id, _| self.item_name(id));
        match found {
            Some(f) if f.id == iid => {
                f.summary.is_none()
                    || !self.line_summary_holds(lines.first, iid)
                    || (f.summary == self.line_summary(iid, rec) && f.role == line_role(rec))
            }
            Some(_) => false,
            None => match lines.first.overlay_get(&rec.name, |id| self.item_name(id)) {
                Some(id) => id == iid,
                // Not in a finished build's lines: only an item added after its snapshot.
                None => lines.then.is_some_and(|own| {
                    iid >= self.next_lines.covers() && own.get(&rec.name, |id| self.item_name(id)) == Some(iid)
                }),
            },
        }
    }

    /// Builds the item lines anew from the records, under the current stamp, here and now.
    pub(crate) fn rebuild_item_lines(&mut self) {
        if let Some(lines) = self.build_item_lines_unless(&|| false) {
            self.iids = lines;
        }
        self.next_lines = Arc::default();
    }

    /// The item lines of this snapshot's records, under its stamp; `None` when `cancelled`
    /// answered true first (it is asked every few thousand items).
    pub(crate) fn build_item_lines_unless(&self, cancelled: &dyn Fn() -> bool) -> Option<IdTable> {
        let stamp = self.line_stamp();
        // Streamed into the build, never collected: at a million items a vector of the entries
        // alone was 56 MiB of fresh memory.
        let entries = (0..self.items.len() as Iid).filter_map(|iid| {
            // The name and origin audience of an item further on, asked of memory now: each is
            // a cache miss at a million items, and it arrives by the time that item's turn comes
            // (as the build's own lines do: `id_table::PLACE_AHEAD`).
            if let Some(ahead) = self.item(iid.wrapping_add(READ_AHEAD)) {
                prefetch_index::prefetch_index(ahead.name.as_bytes(), 0);
                if let Some(aud) = self.aud(ahead.aud) {
                    prefetch_index::prefetch_index(std::slice::from_ref(aud), 0);
                }
            }
            let rec = self.item(iid)?;
            Some(LineEntry {
                id: iid,
                name: &rec.name,
                hint: rec.aud,
                summary: self.line_summary(iid, rec),
                role: line_role(rec),
            })
        });
        let source = BuildSource { entries, ids: self.items.len(), name_of: |iid| self.item_name(iid) };
        IdTable::build_unless(source, stamp, cancelled)
    }

    /// Brings the item lines up to date when their stamp is no longer this snapshot's: after
    /// the items folded into a new base or an audience changed in place. The writer calls it
    /// after every command. Until the lines are rebuilt, checks find every name in the old
    /// lines and decide from the records, never from a stale summary (`line_summary_holds`).
    ///
    /// A small store rebuilds them here. A large one starts a build off the writer (see
    /// `crate::memory::line_build`), which lookups use as soon as it is done; a later call
    /// makes its lines this snapshot's own, with the names added since it started.
    pub(crate) fn refresh_item_lines(&mut self) {
        let stamp = self.line_stamp();
        if self.iids.stamp() == stamp {
            return;
        }
        let off_writer = match self.line_builds {
            LineBuilds::OffWriterFrom(from) => self.items.len() >= from,
            #[cfg(test)]
            LineBuilds::Deferred => true,
        };
        if off_writer {
            self.start_line_build();
        } else {
            self.rebuild_item_lines();
        }
    }

    /// Installs a finished build that holds, leaves a running one be, or starts a new one.
    fn start_line_build(&mut self) {
        let stamp = self.line_stamp();
        if let Some(built) = self.next_lines.ready(stamp) {
            let mut lines = built.clone();
            // The build has every item before `covers`; the names added since join its overlay.
            for iid in self.next_lines.covers()..self.items.len() as Iid {
                if let Some(rec) = self.item(iid) {
                    lines.insert(&rec.name, iid);
                }
            }
            self.iids = lines;
            self.next_lines = Arc::default();
            return;
        }
        if self.next_lines.serves(stamp) {
            return;
        }
        // A build under another stamp would give stale lines: stop it, and start this one.
        self.next_lines.abandon();
        let build = Arc::new(LineBuild::new(self.clone()));
        self.next_lines = build.clone();
        #[cfg(test)]
        if self.line_builds == LineBuilds::Deferred {
            return;
        }
        let spawned =
            std::thread::Builder::new().name(format!("earshot-lines-{}", self.store)).spawn(move || build.run());
        if let Err(e) = spawned {
            tracing::warn!(store = %self.store, error = %e, "cannot start a thread to rebuild the item lines; rebuilding them in the write");
            self.rebuild_item_lines();
        }
    }

    pub(crate) fn aud(&self, aid: Aid) -> Option<&AudRec> {
        self.auds.get(aid as usize)
    }

    pub(crate) fn grant(&self, gid: Gid) -> Option<&GrantRec> {
        self.grants.get(gid as usize)
    }

    /// Sorted member names of an audience (empty for public).
    pub(crate) fn member_names(&self, aud: &AudRec) -> Vec<String> {
        match &aud.members {
            Members::Everyone => Vec::new(),
            Members::Only(m) => {
                let mut names: Vec<String> = m.iter().map(|p| self.part_name(*p).to_string()).collect();
                names.sort();
                names
            }
        }
    }

    /// Identity key used in `idents`.
    pub(crate) fn ident_key(transport: &str, identifier: &str) -> String {
        let mut k = String::with_capacity(transport.len() + identifier.len() + 1);
        k.push_str(transport);
        k.push('\0');
        k.push_str(identifier);
        k
    }
}

/// The item lines a lookup asks, in order (see [`MemorySnapshot::item_lines`]).
#[derive(Clone, Copy)]
pub(crate) struct ItemLines<'a> {
    pub first: &'a IdTable,
    /// The snapshot's own table, when `first` is a finished build's: the names added since.
    pub then: Option<&'a IdTable>,
}

impl crate::common::Names for MemorySnapshot {
    fn pid(&self, name: &str) -> Option<Pid> {
        MemorySnapshot::pid(self, name)
    }
    fn part_name(&self, pid: Pid) -> Arc<str> {
        MemorySnapshot::part_name(self, pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packed_lifecycle_gives_back_what_was_stored() {
        let states =
            [State::Active, State::Superseded, State::Frozen, State::Quarantined, State::Revoked, State::Deleted];
        for own in states {
            let mut currents = vec![Currentness::Current];
            for stop in states {
                for ancestor in [None, Some(0), Some(7), Some(u32::MAX - 1)] {
                    currents.push(Currentness::NotCurrent { state: stop, ancestor });
                }
            }
            for current in currents {
                let mut rec = ItemRec::new("i", 1, 2, own, current, None, 3, 4);
                assert_eq!((rec.state(), rec.current()), (own, current));
                rec.set_state(State::Revoked);
                assert_eq!((rec.state(), rec.current()), (State::Revoked, current));
                rec.set_current(Currentness::Current);
                assert_eq!((rec.state(), rec.current()), (State::Revoked, Currentness::Current));
            }
        }
    }

    #[test]
    fn short_member_lists_are_inline_and_compare_by_content() {
        assert!(std::mem::size_of::<AudRec>() <= 64, "{}", std::mem::size_of::<AudRec>());
        for n in 0..9u32 {
            let v: Vec<Pid> = (0..n).map(|p| p * 3).collect();
            let m = MemberList::from(v.as_slice());
            assert_eq!((&*m, matches!(m, MemberList::Inline { .. })), (v.as_slice(), n as usize <= INLINE_MEMBERS));
            assert_eq!(m, MemberList::Shared(Arc::from(v.as_slice())));
        }
        assert_ne!(MemberList::from(vec![1, 2]), MemberList::from(vec![1, 3]));
    }
}
