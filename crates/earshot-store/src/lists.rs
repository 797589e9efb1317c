//! Lists of a store's records at one snapshot (participants, identities, items, grants,
//! devices, relation edges, capabilities), with filters, a bounded `limit` and opaque cursors.
//!
//! Every list has one stable order, so that a cursor resumes exactly after the last element
//! of the previous page and pages visit every element once:
//! - records with a creation sequence number that never changes (items, grants, relation
//!   edges, capabilities: the same on every replica and after every restart) are listed in
//!   that order, walked from the cursor's position without sorting;
//! - records interned by something else (participants, identities, devices: their interned
//!   ids are reassigned by a rebuild) are listed by id, collected and sorted per page.
//!
//! A cursor is `<list>.<store tag>.<hex position>`: it names its list and store, so one from
//! another list or store is refused (`invalid_cursor`) rather than silently misread.

use serde::{Deserialize, Serialize};

use crate::compose::Snapshot;
use crate::devices::model::{CapabilityView, ConstraintsView};
use crate::devices::{Cid, Eid};
use crate::error::{Result, StoreError};
use crate::memory::model::{format_time, AudienceView, BlockedBy, GrantView, ParticipantKind};
use crate::memory::snapshot::Author;
use crate::memory::snapshot::{Gid, Iid, Pid};

/// Bounds of a page.
pub mod limits {
    /// Elements per page when the request names no `limit`.
    pub const DEFAULT_LIST_LIMIT: usize = 100;
    /// Most elements per page.
    pub const MAX_LIST_LIMIT: usize = 1000;
    /// Longest cursor accepted (positions are at most two ids long).
    pub const MAX_CURSOR_LEN: usize = 1200;
    /// Most records one page of a list looks at. A filter the list's order does not index
    /// (items by `state` alone, grants by `status` alone, …) may match few of them: the page
    /// then ends early, with fewer results than `limit` (possibly none) and a `next_cursor` to
    /// continue from. A page without `next_cursor` is the last.
    pub const SCAN_BUDGET: usize = 10_000;
}

/// Paging of a list request: how many, and after which position.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paging {
    pub limit: Option<usize>,
    pub cursor: Option<String>,
}

/// One page: the elements, and the cursor of the next page when more remain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub results: Vec<T>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next_cursor: Option<String>,
}

/// The tag a cursor carries for its store (not the token's tag: a token is not a cursor): 16
/// hex digits, the first 8 naming the store id and the last 8 its incarnation, so that a cursor
/// of a store deleted and created again is refused with its own error; a store without an
/// incarnation (created before they were kept) keeps the tag it always had.
fn tag(store: &str, incarnation: Option<&str>) -> String {
    crate::kernel::token::store_tag(b"earshot.cursor.v1\0", b"earshot.cursor.incarnation\0", store, incarnation)
}

/// Reads a page's bounds and the position after which it starts.
pub(crate) struct Pager {
    list: &'static str,
    /// The cursor tag of the store's incarnation.
    tag: String,
    pub limit: usize,
    pub after: Option<Vec<u8>>,
}

impl Pager {
    pub(crate) fn new(list: &'static str, store: &str, incarnation: Option<&str>, paging: &Paging) -> Result<Self> {
        let limit = paging.limit.unwrap_or(limits::DEFAULT_LIST_LIMIT);
        if limit == 0 {
            return Err(StoreError::input("limit", "must be at least 1"));
        }
        if limit > limits::MAX_LIST_LIMIT {
            return Err(StoreError::LimitExceeded { field: "limit", limit: limits::MAX_LIST_LIMIT });
        }
        let tag = tag(store, incarnation);
        let after = paging.cursor.as_deref().map(|c| decode_cursor(list, store, &tag, c)).transpose()?;
        Ok(Pager { list, tag, limit, after })
    }

    /// Whether `key` comes after the cursor's position.
    pub(crate) fn past(&self, key: &[u8]) -> bool {
        self.after.as_deref().is_none_or(|a| key > a)
    }

    /// The page of the candidates: those after the cursor, in key order, at most `limit`.
    /// Candidates may come in any order and may include ones before the cursor.
    pub(crate) fn page<T>(&self, mut candidates: Vec<(Vec<u8>, T)>) -> Page<T> {
        candidates.retain(|(k, _)| self.past(k));
        candidates.sort_by(|a, b| a.0.cmp(&b.0));
        self.finish(candidates)
    }

    /// The page of candidates already in key order and after the cursor; at most `limit + 1`
    /// are needed to know whether more remain.
    pub(crate) fn finish<T>(&self, mut sorted: Vec<(Vec<u8>, T)>) -> Page<T> {
        let more = sorted.len() > self.limit;
        sorted.truncate(self.limit);
        let next_cursor = if more { sorted.last().map(|(k, _)| encode_cursor(self.list, &self.tag, k)) } else { None };
        Page { results: sorted.into_iter().map(|(_, v)| v).collect(), next_cursor }
    }

    /// A page cut short by the scan budget: `out` (at most `limit`, in key order) and, when
    /// records remain, a cursor after `last`, the last position looked at (after the last
    /// result when that is later).
    pub(crate) fn finish_partial<T>(&self, out: Vec<(Vec<u8>, T)>, last: Option<Vec<u8>>) -> Page<T> {
        if out.len() > self.limit {
            return self.finish(out);
        }
        let at = match (last, out.last().map(|(k, _)| k.clone())) {
            (Some(l), Some(r)) => Some(l.max(r)),
            (l, r) => l.or(r).or_else(|| self.after.clone()),
        };
        let next_cursor = at.map(|k| encode_cursor(self.list, &self.tag, &k));
        Page { results: out.into_iter().map(|(_, v)| v).collect(), next_cursor }
    }

    /// The first sequence number a walk in creation order starts from (the cursor's, which
    /// `past` then skips).
    pub(crate) fn start_seq(&self) -> u32 {
        self.after.as_deref().and_then(|a| a.get(..4)).and_then(|b| b.try_into().ok()).map_or(0, u32::from_be_bytes)
    }
}

fn encode_cursor(list: &str, tag: &str, key: &[u8]) -> String {
    format!("{list}.{tag}.{}", hex::encode(key))
}

fn decode_cursor(list: &str, store: &str, tag: &str, cursor: &str) -> Result<Vec<u8>> {
    if cursor.len() > limits::MAX_CURSOR_LEN {
        return Err(StoreError::InvalidCursor);
    }
    let mut parts = cursor.splitn(3, '.');
    let (Some(l), Some(t), Some(k)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(StoreError::InvalidCursor);
    };
    if l == list && t != tag && t.len() == tag.len() && t.get(..8) == tag.get(..8) {
        return Err(StoreError::CursorIncarnationMismatch(store.chars().take(128).collect()));
    }
    if l != list || t != tag {
        return Err(StoreError::InvalidCursor);
    }
    hex::decode(k).map_err(|_| StoreError::InvalidCursor)
}

/// A sequence number as a position that sorts in creation order.
pub(crate) fn seq_key(n: u32) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// A list walked in creation order from the cursor: `get(i)` for `i` from the cursor's
/// position on, until `limit + 1` elements pass `keep`, or at most `len`; at most
/// [`limits::SCAN_BUDGET`] records are looked at (see [`walk_ids`]).
fn walk<R, T>(
    pager: &Pager,
    len: usize,
    get: impl Fn(u32) -> Option<R>,
    keep: impl FnMut(&R) -> bool,
    view: impl Fn(R) -> T,
) -> Page<T> {
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    walk_ids(pager, pager.start_seq()..len, get, keep, view)
}

/// The same over a sorted list of sequence numbers (a posting or an index entry). A filter
/// that the walk's order does not index (`state`, `status`, …) may reject many records in a
/// row: after [`limits::SCAN_BUDGET`] records looked at, the page ends where the walk stopped,
/// with fewer elements than `limit` (possibly none) and a cursor from there, so one request
/// costs at most the budget whatever the filter matches.
fn walk_ids<R, T>(
    pager: &Pager,
    ids: impl Iterator<Item = u32>,
    get: impl Fn(u32) -> Option<R>,
    mut keep: impl FnMut(&R) -> bool,
    view: impl Fn(R) -> T,
) -> Page<T> {
    let mut out = Vec::new();
    let mut looked = 0usize;
    for i in ids {
        let key = seq_key(i);
        if !pager.past(&key) {
            continue;
        }
        if looked >= limits::SCAN_BUDGET {
            // Spent: continue after the last record looked at (`i - 1` or earlier).
            let last = i.checked_sub(1).map(seq_key);
            return pager.finish_partial(out, last);
        }
        looked += 1;
        let Some(r) = get(i) else { continue };
        if keep(&r) {
            out.push((key, view(r)));
            if out.len() > pager.limit {
                break;
            }
        }
    }
    pager.finish(out)
}

// ---- shapes ----------------------------------------------------------------------------

/// A store as `GET /v1/stores` lists it. A store not started on this replica yet (created by
/// another, or not used since start-up with `lazy_stores`) has no revision here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSummary {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub revision: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParticipantView {
    pub id: String,
    pub kind: ParticipantKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticipantFilter {
    #[serde(default)]
    pub kind: Option<ParticipantKind>,
}

/// A transport identity and whom it is bound to; `resolves` is false when it is bound to more
/// than one participant (ambiguous: it resolves to nobody).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityView {
    pub transport: String,
    pub identifier: String,
    pub participants: Vec<String>,
    pub resolves: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityFilter {
    #[serde(default)]
    pub transport: Option<String>,
    #[serde(default)]
    pub participant: Option<String>,
}

/// One item as a list shows it: the admin view without content (a list reads no on-demand
/// records) and with its grants by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemSummary {
    pub id: String,
    pub owner: String,
    /// The participant whose words the item carries (SPEC §6.2), when it is not the owner.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub author: Option<String>,
    /// The author is unknown (SPEC §6.2: written without an `author` in front of anyone
    /// besides the owner); `author` is then absent.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub author_unknown: bool,
    /// `author` names a participant since removed (SPEC §1.8): a tombstone.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub author_removed: bool,
    pub state: earshot_core::State,
    pub current: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub blocked_by: Option<BlockedBy>,
    pub audience: AudienceView,
    pub grants: Vec<String>,
    pub sources: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub superseded_by: Option<String>,
    pub created_revision: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemFilter {
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub state: Option<earshot_core::State>,
    /// Items whose origin audience is this one (its digest).
    #[serde(default)]
    pub audience: Option<String>,
    /// Items whose origin audience lists this participant (public items list nobody).
    #[serde(default)]
    pub member: Option<String>,
    /// Items whose author (SPEC §6.2) is this participant; an item recorded without an author
    /// is its owner's when its origin audience was `{owner}` or public (an unknown author
    /// matches nobody).
    #[serde(default)]
    pub author: Option<String>,
}

/// Which grants a grant list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantStatus {
    /// Counting now: not revoked and not expired.
    Live,
    Revoked,
    /// Not revoked, past its `expires_at`.
    Expired,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantFilter {
    #[serde(default)]
    pub item: Option<String>,
    /// Grants whose audience lists this participant.
    #[serde(default)]
    pub member: Option<String>,
    #[serde(default)]
    pub status: Option<GrantStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceView {
    pub id: String,
    pub owner: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFilter {
    #[serde(default)]
    pub owner: Option<String>,
}

/// A relation grant (edge) `grantor --relation--> grantee`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeView {
    pub id: String,
    pub grantor: String,
    pub relation: String,
    pub grantee: String,
    pub constraints: ConstraintsView,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub uses_left: Option<u32>,
    pub revoked: bool,
    pub created_at: String,
    pub created_revision: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeFilter {
    #[serde(default)]
    pub grantor: Option<String>,
    #[serde(default)]
    pub grantee: Option<String>,
    #[serde(default)]
    pub relation: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityFilter {
    #[serde(default)]
    pub holder: Option<String>,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub issuer: Option<String>,
}

/// A participant named by a filter: `None` when it does not exist (the filter then matches
/// nothing); a malformed id is refused.
fn filter_pid(s: &Snapshot, field: &'static str, name: Option<&String>) -> Result<Option<Option<Pid>>> {
    match name {
        None => Ok(None),
        Some(n) => {
            crate::error::check_id(field, n)?;
            Ok(Some(s.pid(n)))
        }
    }
}

// ---- the lists ------------------------------------------------------------------------

impl Snapshot {
    /// `GET /participants`, by id.
    pub fn list_participants(&self, f: &ParticipantFilter, paging: &Paging) -> Result<Page<ParticipantView>> {
        let pager = Pager::new("participants", self.store(), self.incarnation(), paging)?;
        // Sorted per page: participants are interned in an order a rebuild does not keep.
        let candidates = self
            .pids
            .iter()
            .filter(|(name, _)| pager.past(name.as_bytes()))
            .filter_map(|(name, pid)| self.part(*pid).map(|p| (name, p)))
            .filter(|(_, p)| f.kind.is_none_or(|k| p.kind == k))
            .map(|(name, p)| {
                let v = ParticipantView {
                    id: name.to_string(),
                    kind: p.kind,
                    name: p.display.as_ref().map(|d| d.to_string()),
                };
                (name.as_bytes().to_vec(), v)
            })
            .collect();
        Ok(pager.page(candidates))
    }

    /// `GET /identities`, by (transport, identifier).
    pub fn list_identities(&self, f: &IdentityFilter, paging: &Paging) -> Result<Page<IdentityView>> {
        let pager = Pager::new("identities", self.store(), self.incarnation(), paging)?;
        let who = filter_pid(self, "participant", f.participant.as_ref())?;
        if who == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let candidates = self
            .idents
            .iter()
            // The key is `transport \0 identifier`: its byte order is (transport, identifier).
            .filter(|(k, _)| pager.past(k.as_bytes()))
            .filter_map(|(k, bound)| {
                let (transport, identifier) = k.split_once('\0')?;
                if f.transport.as_ref().is_some_and(|t| t != transport) || bound.is_empty() {
                    return None;
                }
                if let Some(Some(p)) = who {
                    if !bound.contains(&p) {
                        return None;
                    }
                }
                let mut participants: Vec<String> = bound.iter().map(|p| self.part_name(*p).to_string()).collect();
                participants.sort();
                let v = IdentityView {
                    transport: transport.to_string(),
                    identifier: identifier.to_string(),
                    resolves: bound.len() == 1,
                    participants,
                };
                Some((k.as_bytes().to_vec(), v))
            })
            .collect();
        Ok(pager.page(candidates))
    }

    /// `GET /items`, in creation order. Indexed: `owner` (the owner's posting), `audience`
    /// (the audience's posting), `member` (the postings of the audiences listing the member);
    /// `state` or `author` alone scans the items from the cursor.
    pub fn list_items(&self, f: &ItemFilter, paging: &Paging) -> Result<Page<ItemSummary>> {
        let pager = Pager::new("items", self.store(), self.incarnation(), paging)?;
        let owner = filter_pid(self, "owner", f.owner.as_ref())?;
        let member = filter_pid(self, "member", f.member.as_ref())?;
        let author = filter_pid(self, "author", f.author.as_ref())?;
        let audience = match &f.audience {
            None => None,
            Some(d) => {
                let digest = earshot_core::AudienceDigest::from_hex(d)
                    .ok_or_else(|| StoreError::input("audience", "not an audience digest (64 hex digits)"))?;
                Some(self.aud_by_digest.get(&digest).copied().filter(|a| self.aud(*a).is_some_and(|r| r.live)))
            }
        };
        if owner == Some(None) || member == Some(None) || audience == Some(None) || author == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let (owner, member, audience, author) =
            (owner.flatten(), member.flatten(), audience.flatten(), author.flatten());
        let keep = |iid: &Iid| {
            let Some(r) = self.item(*iid) else { return false };
            owner.is_none_or(|o| r.owner == o)
                && author.is_none_or(|a| r.author() == a)
                && f.state.is_none_or(|s| r.state() == s)
                && audience.is_none_or(|a| r.aud == a)
                && member.is_none_or(|m| self.aud(r.aud).is_some_and(|a| lists_member(a, m)))
        };
        let start = pager.start_seq();
        let get = |i: u32| Some(i);
        let view = |i: Iid| self.item_summary(i);
        let page = if let Some(a) = audience {
            // Lazily from the cursor: a page reads only what it walks of the posting.
            let ids = self.aud_items.get(&a).into_iter().flat_map(|p| p.iter().skip(p.lower_bound(start)));
            walk_ids(&pager, ids, get, keep, view)
        } else if let Some(o) = owner {
            // Lazily from the cursor: a page reads only what it walks of the posting.
            let ids = self.owner_items.get(&o).into_iter().flat_map(|p| p.iter().skip(p.lower_bound(start)));
            walk_ids(&pager, ids, get, keep, view)
        } else if let Some(m) = member {
            let postings = self.part_auds.get(&m).into_iter().flatten().filter_map(|a| self.aud_items.get(a));
            walk_ids(&pager, merged(postings.collect(), start), get, keep, view)
        } else {
            walk(&pager, self.items.len(), get, keep, view)
        };
        Ok(Page { results: page.results.into_iter().flatten().collect(), next_cursor: page.next_cursor })
    }

    fn item_summary(&self, iid: Iid) -> Option<ItemSummary> {
        let rec = self.item(iid)?;
        let name_of = |i: Iid| self.item(i).map(|r| r.name.to_string()).unwrap_or_default();
        let a = self.aud(rec.aud)?;
        let blocked_by = match rec.current() {
            earshot_core::Currentness::Current => None,
            earshot_core::Currentness::NotCurrent { state, ancestor } => {
                Some(BlockedBy { state, item: ancestor.map_or_else(|| rec.name.to_string(), name_of) })
            }
        };
        Some(ItemSummary {
            id: rec.name.to_string(),
            owner: self.part_name(rec.owner).to_string(),
            author: match rec.author_rec() {
                Some(Author::Participant(a)) => Some(self.part_name(*a).to_string()),
                Some(Author::Removed(name)) => Some(name.to_string()),
                Some(Author::Unknown) | None => None,
            },
            author_unknown: rec.author_rec() == Some(&Author::Unknown),
            author_removed: matches!(rec.author_rec(), Some(Author::Removed(_))),
            state: rec.state(),
            current: rec.current().is_current(),
            blocked_by,
            audience: AudienceView {
                source: "origin".into(),
                grant: None,
                kind: a.kind,
                digest: a.digest.to_hex(),
                members: self.member_names(a),
                expires_at: None,
                consent: None,
            },
            grants: rec.grants().iter().filter_map(|g| self.grant(*g)).map(|g| g.name.to_string()).collect(),
            sources: rec.sources().iter().map(|s| name_of(*s)).collect(),
            superseded_by: rec.superseded_by().map(name_of),
            created_revision: rec.created_rev,
        })
    }

    /// `GET /trust` (SPEC §6.2), in creation order; the filters scan from the cursor (trust
    /// delegations are few).
    pub fn list_trust(
        &self,
        f: &crate::memory::trust::TrustFilter,
        paging: &Paging,
    ) -> Result<Page<crate::memory::trust::TrustView>> {
        let pager = Pager::new("trust", self.store(), self.incarnation(), paging)?;
        let owner = filter_pid(self, "owner", f.owner.as_ref())?;
        let participant = filter_pid(self, "participant", f.participant.as_ref())?;
        if owner == Some(None) || participant == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let (owner, participant) = (owner.flatten(), participant.flatten());
        let keep = |t: &&crate::memory::trust::TrustRec| {
            owner.is_none_or(|o| t.owner == o)
                && participant.is_none_or(|p| t.participant == p)
                && f.live.is_none_or(|live| live == t.revoked.is_none())
        };
        Ok(walk(&pager, self.trust.dels.len(), |i| self.trust.get(i), keep, |t| self.trust_view_of(t)))
    }

    /// `GET /grants`, in creation order. Indexed: `item` (the item's grants), `member` (the
    /// grant postings of the audiences listing the member); `status` alone scans.
    pub fn list_grants(&self, f: &GrantFilter, paging: &Paging, now_ms: i64) -> Result<Page<GrantView>> {
        let pager = Pager::new("grants", self.store(), self.incarnation(), paging)?;
        let member = filter_pid(self, "member", f.member.as_ref())?;
        let item = match &f.item {
            None => None,
            Some(n) => {
                crate::error::check_id("item", n)?;
                Some(self.iid(n))
            }
        };
        if member == Some(None) || item == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let (member, item) = (member.flatten(), item.flatten());
        let keep = |gid: &Gid| {
            let Some(g) = self.grant(*gid) else { return false };
            let status = match f.status {
                None => true,
                Some(GrantStatus::Live) => g.is_live(now_ms),
                Some(GrantStatus::Revoked) => g.revoked,
                Some(GrantStatus::Expired) => !g.revoked && !g.is_live(now_ms),
            };
            status
                && item.is_none_or(|i| g.item == i)
                && member.is_none_or(|m| self.aud(g.aud).is_some_and(|a| lists_member(a, m)))
        };
        let start = pager.start_seq();
        let get = |i: u32| Some(i);
        let view = |g: Gid| self.grant_view(g, now_ms);
        let page = if let Some(i) = item {
            let mut ids: Vec<Gid> = self.item(i).map(|r| r.grants().to_vec()).unwrap_or_default();
            ids.sort_unstable();
            walk_ids(&pager, ids.into_iter().filter(|g| *g >= start), get, keep, view)
        } else if let Some(m) = member {
            let postings = self.part_auds.get(&m).into_iter().flatten().filter_map(|a| self.aud_grants.get(a));
            walk_ids(&pager, merged(postings.collect(), start), get, keep, view)
        } else {
            walk(&pager, self.grants.len(), get, keep, view)
        };
        Ok(Page { results: page.results.into_iter().flatten().collect(), next_cursor: page.next_cursor })
    }

    pub(crate) fn grant_view(&self, gid: Gid, now_ms: i64) -> Option<GrantView> {
        let g = self.grant(gid)?;
        let a = self.aud(g.aud)?;
        Some(GrantView {
            id: g.name.to_string(),
            item: self.item(g.item).map(|r| r.name.to_string()).unwrap_or_default(),
            kind: a.kind,
            digest: a.digest.to_hex(),
            members: self.member_names(a),
            issuer: g.issuer.to_string(),
            reason: g.reason.as_ref().map(|r| r.to_string()),
            created_at: format_time(g.created_at_ms),
            expires_at: g.expires_at_ms.map(format_time),
            revoked: g.revoked,
            live: g.is_live(now_ms),
            consent: g.consent.as_deref().map(|c| c.view(true)),
        })
    }

    /// `GET /devices`, by id.
    pub fn list_devices(&self, f: &DeviceFilter, paging: &Paging) -> Result<Page<DeviceView>> {
        let pager = Pager::new("devices", self.store(), self.incarnation(), paging)?;
        let owner = filter_pid(self, "owner", f.owner.as_ref())?;
        if owner == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let owner = owner.flatten();
        let candidates = self
            .dev
            .devices
            .iter()
            .filter(|(_, o)| owner.is_none_or(|x| **o == x))
            .filter_map(|(d, o)| {
                let name = self.part_name(*d);
                if !pager.past(name.as_bytes()) {
                    return None;
                }
                let v = DeviceView {
                    id: name.to_string(),
                    owner: self.part_name(*o).to_string(),
                    name: self.part(*d).and_then(|p| p.display.as_ref()).map(|x| x.to_string()),
                };
                Some((name.as_bytes().to_vec(), v))
            })
            .collect();
        Ok(pager.page(candidates))
    }

    /// `GET /relations`, in creation order. Indexed when both `grantor` and `grantee` are
    /// named (the pair's edge list); otherwise the edges are scanned from the cursor.
    pub fn list_relations(&self, f: &EdgeFilter, paging: &Paging) -> Result<Page<EdgeView>> {
        let pager = Pager::new("relations", self.store(), self.incarnation(), paging)?;
        let grantor = filter_pid(self, "grantor", f.grantor.as_ref())?;
        let grantee = filter_pid(self, "grantee", f.grantee.as_ref())?;
        if grantor == Some(None) || grantee == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let (grantor, grantee) = (grantor.flatten(), grantee.flatten());
        let keep = |e: &Eid| {
            self.dev.edge(*e).is_some_and(|r| {
                grantor.is_none_or(|g| r.grantor == g)
                    && grantee.is_none_or(|g| r.grantee == g)
                    && f.relation.as_ref().is_none_or(|n| &*r.relation == n.as_str())
            })
        };
        let get = |i: u32| Some(i);
        let view = |e: Eid| self.edge_view(e);
        let page = match (grantor, grantee) {
            (Some(g), Some(e)) => {
                let mut ids: Vec<Eid> = self.dev.edges_by_pair.get(&(g, e)).map(|l| l.to_vec()).unwrap_or_default();
                ids.sort_unstable();
                walk_ids(&pager, ids.into_iter(), get, keep, view)
            }
            _ => walk(&pager, self.dev.edges.len(), get, keep, view),
        };
        Ok(Page { results: page.results.into_iter().flatten().collect(), next_cursor: page.next_cursor })
    }

    pub(crate) fn edge_view(&self, e: Eid) -> Option<EdgeView> {
        let r = self.dev.edge(e)?;
        Some(EdgeView {
            id: r.name.to_string(),
            grantor: self.party_name(r.grantor).to_string(),
            relation: r.relation.to_string(),
            grantee: self.party_name(r.grantee).to_string(),
            constraints: crate::devices::constraints_view(&r.constraints),
            uses_left: r.uses_left,
            revoked: r.revoked,
            created_at: format_time(r.created_at_ms),
            created_revision: r.created_rev,
        })
    }

    /// `GET /capabilities`, in creation order; scanned from the cursor (the capability trie
    /// is keyed for `authorize`, by holder, device and path, not for listing).
    pub fn list_capabilities(&self, f: &CapabilityFilter, paging: &Paging) -> Result<Page<CapabilityView>> {
        let pager = Pager::new("capabilities", self.store(), self.incarnation(), paging)?;
        let holder = filter_pid(self, "holder", f.holder.as_ref())?;
        let device = filter_pid(self, "device", f.device.as_ref())?;
        let issuer = filter_pid(self, "issuer", f.issuer.as_ref())?;
        if holder == Some(None) || device == Some(None) || issuer == Some(None) {
            return Ok(pager.finish(Vec::new()));
        }
        let (holder, device, issuer) = (holder.flatten(), device.flatten(), issuer.flatten());
        let keep = |c: &Cid| {
            self.dev.cap(*c).is_some_and(|r| {
                holder.is_none_or(|h| r.holder == h)
                    && device.is_none_or(|d| r.device == d)
                    && issuer.is_none_or(|i| r.issuer == i)
            })
        };
        let devices = self.devices();
        let page = walk(&pager, self.dev.caps.len(), Some, keep, |c| devices.capability_view(c));
        Ok(Page { results: page.results.into_iter().flatten().collect(), next_cursor: page.next_cursor })
    }
}

/// The ids of several ascending postings from `start` on, merged in ascending order without
/// repeats, lazily: a page pulls only as far as it needs, whatever the other filters reject.
fn merged(postings: Vec<&crate::memory::layered::Posting>, start: u32) -> impl Iterator<Item = u32> + '_ {
    use std::cmp::Reverse;
    let mut pos: Vec<usize> = postings.iter().map(|p| p.lower_bound(start)).collect();
    let mut heap: std::collections::BinaryHeap<Reverse<(u32, usize)>> = postings
        .iter()
        .enumerate()
        .filter_map(|(i, p)| pos.get(i).and_then(|&at| p.get(at)).map(|v| Reverse((v, i))))
        .collect();
    let mut last = None;
    std::iter::from_fn(move || loop {
        let Reverse((v, i)) = heap.pop()?;
        if let (Some(p), Some(at)) = (postings.get(i), pos.get_mut(i)) {
            *at += 1;
            if let Some(next) = p.get(*at) {
                heap.push(Reverse((next, i)));
            }
        }
        if last != Some(v) {
            last = Some(v);
            return Some(v);
        }
    })
}

/// Whether an audience lists `p` as a member (the public audience lists nobody).
fn lists_member(a: &crate::memory::snapshot::AudRec, p: Pid) -> bool {
    match &a.members {
        crate::memory::snapshot::Members::Everyone => false,
        crate::memory::snapshot::Members::Only(m) => m.binary_search(&p).is_ok(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn merged_postings_are_ascending_without_repeats_from_the_start() {
        use crate::memory::layered::Posting;
        let a: Posting = [1, 4, 9, 12].into_iter().collect();
        let b: Posting = [2, 4, 10].into_iter().collect();
        let c: Posting = Posting::default();
        assert_eq!(merged(vec![&a, &b, &c], 0).collect::<Vec<_>>(), [1, 2, 4, 9, 10, 12]);
        assert_eq!(merged(vec![&a, &b], 4).collect::<Vec<_>>(), [4, 9, 10, 12]);
        assert_eq!(merged(vec![], 0).count(), 0);
    }

    #[test]
    fn cursors_name_their_list_store_and_incarnation() {
        let here = tag("s", Some("a1"));
        let c = encode_cursor("items", &here, &seq_key(7));
        assert_eq!(decode_cursor("items", "s", &here, &c).unwrap(), seq_key(7));
        for (list, store, cursor) in
            [("grants", "s", c.as_str()), ("items", "t", c.as_str()), ("items", "s", "x"), ("items", "s", "items..zz")]
        {
            let t = tag(store, Some("a1"));
            assert!(matches!(decode_cursor(list, store, &t, cursor), Err(StoreError::InvalidCursor)), "{cursor}");
        }
        // The same store id, another life of it (or none recorded): refused as such.
        for other in [Some("b2"), None] {
            let t = tag("s", other);
            assert!(matches!(decode_cursor("items", "s", &t, &c), Err(StoreError::CursorIncarnationMismatch(_))));
        }
        // A store without an incarnation keeps the cursor spelling of every earlier release.
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"earshot.cursor.v1\0s");
        assert_eq!(tag("s", None), hex::encode(&h.finalize()[..8]));
    }
}
