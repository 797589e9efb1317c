//! Origin-bound integrity in the store (SPEC §6.2): trust delegations (the snapshot part, the
//! writes that record and revoke them, their durable `w/<id>` records and rebuild, their facts),
//! item authors, and the role of an item at one snapshot, decided by
//! `earshot_core::integrity` from the snapshot alone (nothing is memoised, so a revocation
//! counts from the next revision by construction).

use std::sync::Arc;

use earshot_core::integrity::{integrity, may_delegate, Integrity, Origin, ProvenanceView, Role, Taint};
use serde::{Deserialize, Serialize};

use crate::error::{check_id, Result, StoreError};
use crate::kernel::backend::{enc, key, Op};
use crate::memory::apply::{check_text, outcome, Apply};
use crate::memory::id_table::LineRole;
use crate::memory::model::{format_time, Outcome};
use crate::memory::snapshot::{Author, Iid, ItemRec, Map, MemorySnapshot, Pid, Vector, NO_AUTHOR};

/// Trust delegation index: its creation sequence number.
pub type Tid = u32;

/// Key prefix of a trust delegation's record (`w/<id>`).
pub(crate) const TRUST_PREFIX: u8 = b'w';

/// One trust delegation: `owner` trusts the words of `participant` (SPEC §6.2).
#[derive(Debug, Clone)]
pub(crate) struct TrustRec {
    pub name: Arc<str>,
    /// The two participants, interned; [`NO_AUTHOR`] for one since removed (SPEC §1.8: its
    /// delegations ended with its removal, and a later participant of the same id is another).
    pub owner: Pid,
    pub participant: Pid,
    /// Their names, which the record keeps after a removal.
    pub owner_name: Arc<str>,
    pub participant_name: Arc<str>,
    pub issuer: Arc<str>,
    pub reason: Option<Arc<str>>,
    pub created_at_ms: i64,
    pub created_rev: u64,
    /// The revision and time of the revocation.
    pub revoked: Option<(u64, i64)>,
}

/// The trust part of a memory snapshot.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trust {
    pub dels: Vector<TrustRec>,
    pub by_name: Map<Arc<str>, Tid>,
    /// (owner, participant) → its live delegation (at most one).
    pub live: Map<(Pid, Pid), Tid>,
}

impl Trust {
    pub(crate) fn get(&self, tid: Tid) -> Option<&TrustRec> {
        self.dels.get(tid as usize)
    }
}

/// `POST /trust`: the owner delegates authority to a participant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTrust {
    pub owner: String,
    pub participant: String,
    #[serde(default)]
    pub reason: Option<String>,
}

/// A trust delegation as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustView {
    pub id: String,
    pub owner: String,
    pub participant: String,
    /// The authenticated caller that recorded it.
    pub issuer: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    pub created_at: String,
    pub created_revision: u64,
    pub revoked: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub revoked_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub revoked_revision: Option<u64>,
}

/// Filters of `GET /trust`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustFilter {
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub participant: Option<String>,
    /// Only live (`true`) or only revoked (`false`) delegations.
    #[serde(default, deserialize_with = "bool_from_text")]
    pub live: Option<bool>,
}

/// A query-string boolean (`true` / `false`), also accepted as a JSON boolean.
fn bool_from_text<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum B {
        B(bool),
        S(String),
    }
    match B::deserialize(d)? {
        B::B(b) => Ok(Some(b)),
        B::S(s) if s == "true" => Ok(Some(true)),
        B::S(s) if s == "false" => Ok(Some(false)),
        B::S(_) => Err(serde::de::Error::custom("`live` is `true` or `false`")),
    }
}

/// The durable record of a trust delegation (`w/<id>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrustRecord {
    pub id: String,
    pub seq: u32,
    pub owner: String,
    pub participant: String,
    pub issuer: String,
    #[serde(default)]
    pub reason: Option<String>,
    pub created_at_ms: i64,
    pub created_rev: u64,
    #[serde(default)]
    pub revoked_rev: Option<u64>,
    #[serde(default)]
    pub revoked_at_ms: Option<i64>,
    /// The owner, or the participant, has been removed since (SPEC §1.8; the delegation is
    /// then revoked): the name is kept, and never resolved to a later participant of that id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub owner_removed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub participant_removed: bool,
}

/// Why an admitted item is data, in client terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntrustedSource {
    pub item: String,
    /// The source's author; absent when it is unknown (an item written without an `author` in
    /// front of others, SPEC §6.2).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub author: Option<String>,
}

/// The role of an item and, for data, its attribution, as answers carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleView {
    pub role: Role,
    /// For data: the item's author (absent when unknown).
    pub author: Option<String>,
    /// For data: `untrusted_author`, `author_unknown`, `untrusted_source` or
    /// `provenance_incomplete`.
    pub reason: Option<&'static str>,
    /// For data made so by a source: that source and its author.
    pub source: Option<UntrustedSource>,
}

impl RoleView {
    const INSTRUCTION: RoleView = RoleView { role: Role::Instruction, author: None, reason: None, source: None };

    /// The role a line names, when it names one ([`LineRole`]): what `role_view` finds for
    /// such an item, without reading anything.
    pub(crate) fn of_line(role: LineRole) -> Option<RoleView> {
        match role {
            LineRole::FromRecords => None,
            LineRole::Instruction => Some(RoleView::INSTRUCTION),
            // An unknown author is never trusted (SPEC §6.2), whatever the item's sources: the
            // item is data on its own author's account, and there is no author to name.
            LineRole::AuthorUnknown => {
                Some(RoleView { role: Role::Data, author: None, reason: Some(AUTHOR_UNKNOWN), source: None })
            }
        }
    }
}

/// The role an item's record alone decides, for its line (see [`LineRole`]): an item without
/// links is an instruction and one by an unknown author is data, whatever else changes; any
/// other item's role depends on other records (its sources', trust delegations).
pub(crate) fn line_role(rec: &ItemRec) -> LineRole {
    if rec.links.is_none() {
        LineRole::Instruction
    } else if rec.author_rec() == Some(&Author::Unknown) {
        LineRole::AuthorUnknown
    } else {
        LineRole::FromRecords
    }
}

impl ProvenanceView<Iid, Pid> for MemorySnapshot {
    fn origin(&self, item: Iid) -> Option<Origin<'_, Iid, Pid>> {
        self.item(item).map(|r| Origin { owner: r.owner, author: r.author(), sources: r.sources() })
    }
    fn delegated(&self, owner: Pid, participant: Pid) -> bool {
        self.trust.live.contains_key(&(owner, participant))
    }
}

impl MemorySnapshot {
    /// The integrity of an item at this snapshot (SPEC §6.2). An item without links (an owner's
    /// own note, not derived) is trusted without any further lookup.
    pub fn integrity_of(&self, iid: Iid) -> Integrity<Iid, Pid> {
        match self.item(iid) {
            Some(r) if r.links.is_none() => Integrity::Trusted,
            _ => integrity(iid, self),
        }
    }

    /// [`MemorySnapshot::integrity_of`] in client terms.
    pub(crate) fn role_view(&self, iid: Iid) -> RoleView {
        match self.integrity_of(iid) {
            Integrity::Trusted => RoleView::INSTRUCTION,
            Integrity::Untrusted(t) => {
                let author = self.author_name(iid);
                let source = match t {
                    Taint::Source { item, .. } => Some(UntrustedSource {
                        item: self.item(item).map(|r| r.name.to_string()).unwrap_or_default(),
                        author: self.author_name(item),
                    }),
                    Taint::Author | Taint::Incomplete => None,
                };
                let reason = match (t, self.item(iid).and_then(|r| r.author_rec())) {
                    (Taint::Author, Some(Author::Unknown)) => AUTHOR_UNKNOWN,
                    (Taint::Author, Some(Author::Removed(_))) => AUTHOR_REMOVED,
                    _ => t.code(),
                };
                RoleView { role: Role::Data, author, reason: Some(reason), source }
            }
        }
    }

    /// The author of an item by interned id, by name (`GET /items/{id}`): a removed author's
    /// name too; `None` when the item is unknown or its author is.
    pub(crate) fn author_name(&self, iid: Iid) -> Option<String> {
        let r = self.item(iid)?;
        match r.author_rec() {
            None => Some(self.part_name(r.owner).to_string()),
            Some(Author::Participant(p)) => Some(self.part_name(*p).to_string()),
            Some(Author::Removed(name)) => Some(name.to_string()),
            Some(Author::Unknown) => None,
        }
    }

    /// `GET /trust/{id}`.
    pub fn trust_view(&self, id: &str) -> Result<TrustView> {
        check_id("trust", id)?;
        let tid = *self.trust.by_name.get(id).ok_or_else(|| StoreError::TrustNotFound(id.to_string()))?;
        let t = self.trust.get(tid).ok_or_else(|| StoreError::TrustNotFound(id.to_string()))?;
        Ok(self.trust_view_of(t))
    }

    pub(crate) fn trust_view_of(&self, t: &TrustRec) -> TrustView {
        TrustView {
            id: t.name.to_string(),
            owner: t.owner_name.to_string(),
            participant: t.participant_name.to_string(),
            issuer: t.issuer.to_string(),
            reason: t.reason.as_ref().map(|r| r.to_string()),
            created_at: format_time(t.created_at_ms),
            created_revision: t.created_rev,
            revoked: t.revoked.is_some(),
            revoked_at: t.revoked.map(|(_, at)| format_time(at)),
            revoked_revision: t.revoked.map(|(rev, _)| rev),
        }
    }
}

impl Apply<'_> {
    /// Records that `owner` trusts `participant` (SPEC §6.2). A live delegation between the two
    /// already there is this request retried: it answers that delegation (`exists`) and writes
    /// nothing.
    pub(crate) fn create_trust(&mut self, t: NewTrust, issuer: &str) -> Result<Outcome> {
        check_id("owner", &t.owner)?;
        check_id("participant", &t.participant)?;
        check_text("reason", t.reason.as_deref())?;
        let owner = self.snap.pid(&t.owner).ok_or_else(|| StoreError::ParticipantNotFound(t.owner.clone()))?;
        let participant =
            self.snap.pid(&t.participant).ok_or_else(|| StoreError::ParticipantNotFound(t.participant.clone()))?;
        if !may_delegate(&owner, &participant) {
            return Err(StoreError::TrustSelf(t.owner));
        }
        if let Some(tid) = self.snap.trust.live.get(&(owner, participant)) {
            let name = self.snap.trust.get(*tid).map(|r| r.name.to_string()).unwrap_or_default();
            return Ok(outcome("exists", vec![name]));
        }
        let name = (self.new_id)();
        check_id("trust", &name)?;
        let name: Arc<str> = Arc::from(name);
        let tid = self.snap.trust.dels.len() as Tid;
        let trust = &mut self.snap.trust;
        trust.dels.push_back(TrustRec {
            name: name.clone(),
            owner,
            participant,
            owner_name: Arc::from(t.owner.as_str()),
            participant_name: Arc::from(t.participant.as_str()),
            issuer: Arc::from(issuer),
            reason: t.reason.map(Arc::from),
            created_at_ms: self.now_ms,
            created_rev: self.snap.revision + 1,
            revoked: None,
        });
        trust.by_name.insert(name.clone(), tid);
        trust.live.insert((owner, participant), tid);
        self.dirty.trust.push(tid);
        Ok(outcome("created", vec![name.to_string()]))
    }

    /// Revokes a trust delegation: from the next revision its participant's items (and every
    /// item derived from them) are data.
    pub(crate) fn revoke_trust(&mut self, id: &str) -> Result<Outcome> {
        check_id("trust", id)?;
        let tid = *self.snap.trust.by_name.get(id).ok_or_else(|| StoreError::TrustNotFound(id.to_string()))?;
        let mut rec = self.snap.trust.get(tid).cloned().ok_or_else(|| StoreError::TrustNotFound(id.to_string()))?;
        if rec.revoked.is_some() {
            return Err(StoreError::AlreadyRevoked(id.to_string()));
        }
        rec.revoked = Some((self.snap.revision + 1, self.now_ms));
        self.snap.trust.live.remove(&(rec.owner, rec.participant));
        self.snap.trust.dels.set(tid as usize, rec);
        self.dirty.trust.push(tid);
        Ok(outcome("revoked", vec![id.to_string()]))
    }

    /// The author named by an item create: a known participant (`author_not_found` otherwise).
    /// An absent one is judged by [`author_for`] once the origin audience is known.
    pub(crate) fn author_of(&self, owner: Pid, author: Option<&str>) -> Result<NamedAuthor> {
        let Some(name) = author else { return Ok(NamedAuthor::NotGiven) };
        check_id("author", name)?;
        let pid = self.snap.pid(name).ok_or_else(|| StoreError::AuthorNotFound(name.to_string()))?;
        Ok(if pid == owner { NamedAuthor::Owner } else { NamedAuthor::Other(pid) })
    }

    /// Records a newly created item's author (only when it is not the owner).
    pub(crate) fn set_author(&mut self, iid: Iid, author: Author) {
        if let Some(mut rec) = self.snap.item(iid).cloned() {
            rec.edit_links(|l| l.author = Some(author));
            self.snap.items.set(iid as usize, rec);
        }
    }
}

/// The stable `data_reason` of an item whose author is unknown (SPEC §6.2).
pub const AUTHOR_UNKNOWN: &str = "author_unknown";

/// The stable `data_reason` of an item whose author has been removed (SPEC §1.8, §6.2).
pub const AUTHOR_REMOVED: &str = "author_removed";

impl Apply<'_> {
    /// What removing `pid` (named `name`) does to authorship and trust (SPEC §1.8, §6.2): the
    /// items it wrote keep it as a tombstoned author (never trusted, whoever takes its id
    /// later), and every live delegation to or from it ends (revoked in this revision). Scans
    /// the items: a removal is rare, and no index of authors is kept for it.
    pub(crate) fn tombstone_author(&mut self, pid: Pid, name: &Arc<str>) {
        let authored: Vec<Iid> = self
            .snap
            .items
            .iter()
            .enumerate()
            .filter(|(_, r)| r.author_rec() == Some(&Author::Participant(pid)))
            .map(|(i, _)| i as Iid)
            .collect();
        for iid in authored {
            if let Some(mut rec) = self.snap.item(iid).cloned() {
                rec.edit_links(|l| l.author = Some(Author::Removed(name.clone())));
                self.snap.items.set(iid as usize, rec);
                self.dirty.items.push(iid);
            }
        }
        let named: Vec<Tid> = self
            .snap
            .trust
            .dels
            .iter()
            .enumerate()
            .filter(|(_, t)| t.owner == pid || t.participant == pid)
            .map(|(i, _)| i as Tid)
            .collect();
        for tid in named {
            let Some(mut rec) = self.snap.trust.get(tid).cloned() else { continue };
            if rec.revoked.is_none() {
                rec.revoked = Some((self.snap.revision + 1, self.now_ms));
                self.snap.trust.live.remove(&(rec.owner, rec.participant));
            }
            // The interned id goes with the participant; the record keeps the name.
            if rec.owner == pid {
                rec.owner = NO_AUTHOR;
            }
            if rec.participant == pid {
                rec.participant = NO_AUTHOR;
            }
            self.snap.trust.dels.set(tid as usize, rec);
            self.dirty.trust.push(tid);
        }
    }
}

/// The `author` an item create names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NamedAuthor {
    NotGiven,
    Owner,
    Other(Pid),
}

/// The author recorded for a new item (SPEC §6.2), judged once, at write time: the named one;
/// without one, the owner when the origin audience holds nobody but the owner (`{owner}`) or
/// is public (the owner's own note or announcement), and otherwise unknown: the words may be
/// anyone's who was there, so they are never trusted. `None` stands for the owner.
pub(crate) fn author_for(named: NamedAuthor, owner_only_or_public: bool) -> Option<Author> {
    match named {
        NamedAuthor::Other(p) => Some(Author::Participant(p)),
        NamedAuthor::Owner => None,
        NamedAuthor::NotGiven if owner_only_or_public => None,
        NamedAuthor::NotGiven => Some(Author::Unknown),
    }
}

/// Encodes the trust records `dirty` names.
pub(crate) fn encode(s: &MemorySnapshot, dirty: &[Tid], ops: &mut Vec<Op>) -> Result<()> {
    for &tid in dirty {
        let Some(t) = s.trust.get(tid) else { continue };
        ops.push(Op::Put(key(TRUST_PREFIX, &t.name), enc(&record_of(tid, t))?));
    }
    Ok(())
}

fn record_of(seq: Tid, t: &TrustRec) -> TrustRecord {
    TrustRecord {
        id: t.name.to_string(),
        seq,
        owner: t.owner_name.to_string(),
        participant: t.participant_name.to_string(),
        issuer: t.issuer.to_string(),
        reason: t.reason.as_ref().map(|r| r.to_string()),
        created_at_ms: t.created_at_ms,
        created_rev: t.created_rev,
        revoked_rev: t.revoked.map(|(r, _)| r),
        revoked_at_ms: t.revoked.map(|(_, at)| at),
        owner_removed: t.owner == NO_AUTHOR,
        participant_removed: t.participant == NO_AUTHOR,
    }
}

/// Projects the trust records (in sequence order) into `s`, whose participants and items are
/// already rebuilt; any record that does not add up refuses the start.
pub(crate) fn rebuild(
    s: &mut MemorySnapshot,
    records: &[TrustRecord],
    pid_of: &dyn Fn(&str) -> Result<Pid>,
) -> Result<()> {
    let bad = |m: String| StoreError::Integrity(m);
    for (n, r) in records.iter().enumerate() {
        if r.seq as usize != n {
            return Err(bad(format!("trust delegation sequence has a gap at {n}")));
        }
        let revoked = match (r.revoked_rev, r.revoked_at_ms) {
            (Some(rev), Some(at)) => Some((rev, at)),
            (None, None) => None,
            _ => return Err(bad(format!("trust delegation `{}` is half revoked", r.id))),
        };
        // A delegation naming a participant since removed (SPEC §1.8) ended with the removal:
        // that side is nobody interned, even if a participant of that id was created again.
        let side = |name: &str, removed: bool| -> Result<Pid> {
            match (removed, revoked) {
                (false, _) => pid_of(name),
                (true, Some(_)) => Ok(NO_AUTHOR),
                (true, None) => {
                    Err(bad(format!("trust delegation `{}` names a removed participant and is live", r.id)))
                }
            }
        };
        let (owner, participant) = (side(&r.owner, r.owner_removed)?, side(&r.participant, r.participant_removed)?);
        for n in [&r.owner, &r.participant] {
            earshot_core::validate_id(n)
                .map_err(|e| bad(format!("trust delegation `{}` names a malformed participant: {e}", r.id)))?;
        }
        if r.owner == r.participant {
            return Err(bad(format!("trust delegation `{}` names its owner as the participant", r.id)));
        }
        let name: Arc<str> = Arc::from(r.id.as_str());
        let t = &mut s.trust;
        if t.by_name.insert(name.clone(), r.seq).is_some() {
            return Err(bad(format!("trust delegation `{}` stored twice", r.id)));
        }
        if revoked.is_none() && t.live.insert((owner, participant), r.seq).is_some() {
            return Err(bad(format!("two live trust delegations from `{}` to `{}`", r.owner, r.participant)));
        }
        t.dels.push_back(TrustRec {
            name,
            owner,
            participant,
            owner_name: Arc::from(r.owner.as_str()),
            participant_name: Arc::from(r.participant.as_str()),
            issuer: Arc::from(r.issuer.as_str()),
            reason: r.reason.as_deref().map(Arc::from),
            created_at_ms: r.created_at_ms,
            created_rev: r.created_rev,
            revoked,
        });
    }
    Ok(())
}

/// Encodes whole trust records, for bulk import.
pub(crate) fn encode_records(records: &[TrustRecord], ops: &mut Vec<Op>) -> Result<()> {
    for r in records {
        ops.push(Op::Put(key(TRUST_PREFIX, &r.id), enc(r)?));
    }
    Ok(())
}

/// The trust facts of a snapshot (delegations with their removed sides, the live index), for
/// `verify`.
pub(crate) fn facts(s: &MemorySnapshot, out: &mut Vec<String>) {
    for (tid, t) in s.trust.dels.iter().enumerate() {
        out.push(format!(
            "trust #{tid} {} owner={}{} participant={}{} issuer={} reason={:?} at={} rev={} revoked={:?}",
            t.name,
            t.owner_name,
            if t.owner == NO_AUTHOR { " (removed)" } else { "" },
            t.participant_name,
            if t.participant == NO_AUTHOR { " (removed)" } else { "" },
            t.issuer,
            t.reason,
            t.created_at_ms,
            t.created_rev,
            t.revoked
        ));
    }
    for ((o, p), tid) in s.trust.live.iter() {
        let name = s.trust.get(*tid).map(|t| t.name.to_string()).unwrap_or_default();
        out.push(format!("trust live {} -> {} {name}", s.part_name(*o), s.part_name(*p)));
    }
}
