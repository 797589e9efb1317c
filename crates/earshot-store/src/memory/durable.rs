//! The memory domain's durable records (participants, identities, audiences, items, content,
//! grants), their decoding and encoding, and `rebuild`, which projects them into the memory
//! part of a snapshot and refuses to start on any that does not add up. The composed `Records`
//! of a store (these and the device records) is `crate::compose::Records`.
//!
//! The records are the ground truth. Everything in a [`MemorySnapshot`] (postings, the provenance
//! graph, memoised currentness, interned ids) is a projection rebuilt from them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use earshot_core::{AudienceDigest, AudienceKind, Currentness, State};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::kernel::backend::{dec, enc, key, Op};
use crate::memory::apply::Dirty;
use crate::memory::consent::{ConsentRecord, GrantConsent};
use crate::memory::dense::{VectorSpace, SPACE_KEY, SPACE_PREFIX};
use crate::memory::graph::Provenance;
use crate::memory::layered::{FlatVec, NameMap};
use crate::memory::model::{Attributes, ParticipantKind};
use crate::memory::snapshot::{
    Aid, AudRec, Author, Gid, GrantRec, Iid, ItemName, ItemRec, Members, MemorySnapshot, PartRec, Pid, PUBLIC_AID,
};
use crate::memory::trust::{TrustRecord, TRUST_PREFIX};
use earshot_core::consent::MAX_SUBJECTS;
use rustc_hash::{FxBuildHasher, FxHashMap};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParticipantRecord {
    pub id: String,
    pub kind: ParticipantKind,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentityRecord {
    pub transport: String,
    pub identifier: String,
    pub participants: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AudienceRecord {
    pub digest: String,
    pub kind: AudienceKind,
    pub members: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ItemRecord {
    pub id: String,
    pub seq: u32,
    pub owner: String,
    pub audience: String,
    #[serde(default)]
    pub sources: Vec<String>,
    pub state: State,
    #[serde(default)]
    pub superseded_by: Option<String>,
    pub created_rev: u64,
    pub created_at_ms: i64,
    /// The participants the item is about (SPEC §6.3), sorted; absent in records written
    /// before subjects existed and for items without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
    /// The author (SPEC §6.2), only when it is not the owner; absent in records written
    /// before authors existed (their author is the owner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The author is unknown (SPEC §6.2): written without an `author` in front of anyone
    /// besides the owner, judged at write time. Then `author` is absent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub author_unknown: bool,
    /// `author` names a participant since removed (SPEC §1.8): a tombstone, never resolved to
    /// a participant of that id created later.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub author_removed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContentRecord {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    /// The item's embedding as stored: normalised under the store's `cosine` metric (see
    /// `crate::memory::dense`). Absent for an item without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrantRecord {
    pub id: String,
    pub seq: u32,
    pub item: String,
    pub audience: String,
    pub issuer: String,
    #[serde(default)]
    pub reason: Option<String>,
    pub created_at_ms: i64,
    pub created_rev: u64,
    #[serde(default)]
    pub expires_at_ms: Option<i64>,
    pub revoked: bool,
    /// The consent the grant needs and the decisions recorded (SPEC §6.3); absent when it
    /// needs none (and in records written before consent existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentRecord>,
}

/// The memory records of one store, borrowed from the composed `Records` (see `crate::compose`).
#[derive(Debug, Clone, Copy)]
pub struct MemoryRecords<'a> {
    pub participants: &'a [ParticipantRecord],
    pub identities: &'a [IdentityRecord],
    pub audiences: &'a [AudienceRecord],
    pub items: &'a [ItemRecord],
    pub contents: &'a BTreeMap<String, ContentRecord>,
    pub grants: &'a [GrantRecord],
    pub trust: &'a [TrustRecord],
    /// The store's vector space (`v/space`), once an embedding fixed it.
    pub vector_space: Option<&'a VectorSpace>,
}

/// Where decoded memory records go (the fields of the composed `Records`).
pub(crate) struct MemoryRecordsMut<'a> {
    pub participants: &'a mut Vec<ParticipantRecord>,
    pub identities: &'a mut Vec<IdentityRecord>,
    pub audiences: &'a mut Vec<AudienceRecord>,
    pub items: &'a mut Vec<ItemRecord>,
    pub contents: &'a mut BTreeMap<String, ContentRecord>,
    pub grants: &'a mut Vec<GrantRecord>,
    pub trust: &'a mut Vec<TrustRecord>,
    pub vector_space: &'a mut Option<VectorSpace>,
}

impl MemoryRecordsMut<'_> {
    /// Decodes one memory record into place; `false` if `k` is not a memory record.
    pub(crate) fn decode(&mut self, k: &[u8], v: &[u8]) -> Result<bool> {
        match k {
            [b'p', b'/', ..] => self.participants.push(dec(k, v)?),
            [b'x', b'/', ..] => self.identities.push(dec(k, v)?),
            [b'a', b'/', ..] => self.audiences.push(dec(k, v)?),
            [b'i', b'/', ..] => self.items.push(dec(k, v)?),
            [b'c', b'/', rest @ ..] => {
                self.contents.insert(String::from_utf8_lossy(rest).into_owned(), dec(k, v)?);
            }
            [b'g', b'/', ..] => self.grants.push(dec(k, v)?),
            [TRUST_PREFIX, b'/', ..] => self.trust.push(dec(k, v)?),
            [SPACE_PREFIX, b'/', ..] => *self.vector_space = Some(dec(k, v)?),
            // Sealed contexts: audit records, read one by one, never projected.
            [b't', b'/', ..] => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Puts items and grants in sequence order, once every record is decoded.
    pub(crate) fn finish(&mut self) {
        self.items.sort_by_key(|i| i.seq);
        self.grants.sort_by_key(|g| g.seq);
        self.trust.sort_by_key(|t| t.seq);
    }
}

/// Encodes every memory record `dirty` names from the new snapshot `s` (`crate::compose` adds
/// the device records, the kernel the revision).
pub(crate) fn encode(s: &MemorySnapshot, dirty: &Dirty) -> Result<Vec<Op>> {
    let mut ops = Vec::new();
    for d in &dirty.audience_deletes {
        ops.push(Op::Del(key(b'a', &d.to_hex())));
    }
    for name in &dirty.participants {
        let k = key(b'p', name);
        match s.pid(name).and_then(|p| s.part(p)) {
            Some(p) => ops.push(Op::Put(
                k,
                enc(&ParticipantRecord {
                    id: p.name.to_string(),
                    kind: p.kind,
                    name: p.display.as_ref().map(|d| d.to_string()),
                })?,
            )),
            None => ops.push(Op::Del(k)),
        }
    }
    for ik in &dirty.identities {
        let k = key(b'x', ik);
        match s.idents.get(ik.as_str()) {
            Some(bound) => {
                let (transport, identifier) = ik.split_once('\0').unwrap_or((ik.as_str(), ""));
                let participants = bound.iter().map(|p| s.part_name(*p).to_string()).collect();
                ops.push(Op::Put(
                    k,
                    enc(&IdentityRecord { transport: transport.into(), identifier: identifier.into(), participants })?,
                ))
            }
            None => ops.push(Op::Del(k)),
        }
    }
    for &aid in &dirty.audiences {
        let Some(a) = s.aud(aid) else { continue };
        if a.live && aid != PUBLIC_AID {
            ops.push(Op::Put(
                key(b'a', &a.digest.to_hex()),
                enc(&AudienceRecord { digest: a.digest.to_hex(), kind: a.kind, members: s.member_names(a) })?,
            ));
        }
    }
    for &iid in &dirty.items {
        let Some(i) = s.item(iid) else { continue };
        let aud = s.aud(i.aud).ok_or_else(|| StoreError::Integrity(format!("audience {} missing", i.aud)))?;
        let name_of = |x: Iid| s.item(x).map(|r| r.name.to_string()).unwrap_or_default();
        ops.push(Op::Put(
            key(b'i', &i.name),
            enc(&ItemRecord {
                id: i.name.to_string(),
                seq: iid,
                owner: s.part_name(i.owner).to_string(),
                audience: aud.digest.to_hex(),
                sources: i.sources().iter().map(|x| name_of(*x)).collect(),
                state: i.state(),
                superseded_by: i.superseded_by().map(name_of),
                created_rev: i.created_rev,
                created_at_ms: i.created_at_ms,
                subjects: i.subjects().iter().map(|x| x.to_string()).collect(),
                author: match i.author_rec() {
                    Some(Author::Participant(a)) => Some(s.part_name(*a).to_string()),
                    Some(Author::Removed(name)) => Some(name.to_string()),
                    Some(Author::Unknown) | None => None,
                },
                author_unknown: i.author_rec() == Some(&Author::Unknown),
                author_removed: matches!(i.author_rec(), Some(Author::Removed(_))),
            })?,
        ));
    }
    for (iid, c) in &dirty.contents {
        if c.content.is_none() && c.attributes.is_none() && c.embedding.is_none() {
            continue;
        }
        let Some(i) = s.item(*iid) else { continue };
        ops.push(Op::Put(
            key(b'c', &i.name),
            enc(&ContentRecord {
                content: c.content.clone(),
                attributes: c.attributes.clone(),
                embedding: c.embedding.clone(),
            })?,
        ));
    }
    if dirty.vector_space {
        if let Some(space) = &s.vectors {
            ops.push(Op::Put(key(SPACE_PREFIX, SPACE_KEY), enc(space)?));
        }
    }
    for iid in &dirty.content_deletes {
        if let Some(i) = s.item(*iid) {
            ops.push(Op::Del(key(b'c', &i.name)));
        }
    }
    for &gid in &dirty.grants {
        let Some(g) = s.grant(gid) else { continue };
        let aud = s.aud(g.aud).ok_or_else(|| StoreError::Integrity(format!("audience {} missing", g.aud)))?;
        ops.push(Op::Put(
            key(b'g', &g.name),
            enc(&GrantRecord {
                id: g.name.to_string(),
                seq: gid,
                item: s.item(g.item).map(|i| i.name.to_string()).unwrap_or_default(),
                audience: aud.digest.to_hex(),
                issuer: g.issuer.to_string(),
                reason: g.reason.as_ref().map(|r| r.to_string()),
                created_at_ms: g.created_at_ms,
                created_rev: g.created_rev,
                expires_at_ms: g.expires_at_ms,
                revoked: g.revoked,
                consent: g.consent.as_deref().map(GrantConsent::record),
            })?,
        ));
    }
    crate::memory::trust::encode(s, &dirty.trust, &mut ops)?;
    Ok(ops)
}

fn bad(msg: String) -> StoreError {
    StoreError::Integrity(msg)
}

/// Rebuilds the memory part of a snapshot and the provenance graph of one store from its
/// records, checking every digest and reference on the way: a record that does not add up
/// refuses the start. The snapshot is at revision 0; `crate::compose` stamps it and adds the
/// device part.
///
/// Postings and name maps are built in flat collections and frozen once, which is both faster
/// and several times smaller than growing the persistent structures one element at a time.
pub(crate) fn rebuild(store: &str, r: MemoryRecords<'_>) -> Result<(MemorySnapshot, Provenance)> {
    let mut s = MemorySnapshot::empty(store);
    let mut parts: Vec<&ParticipantRecord> = r.participants.iter().collect();
    parts.sort_by(|a, b| a.id.cmp(&b.id));
    let mut pid_by_name: FxHashMap<&str, Pid> = FxHashMap::default();
    let mut pid_names: HashMap<Arc<str>, Pid, FxBuildHasher> = HashMap::default();
    for p in parts {
        let pid = s.parts.len() as Pid;
        let name: Arc<str> = Arc::from(p.id.as_str());
        s.parts.push_back(Some(PartRec {
            name: name.clone(),
            kind: p.kind,
            display: p.name.as_deref().map(Arc::from),
        }));
        pid_names.insert(name, pid);
        if pid_by_name.insert(p.id.as_str(), pid).is_some() {
            return Err(bad(format!("participant `{}` stored twice", p.id)));
        }
    }
    s.pids = NameMap::from_base(pid_names);
    let pid_of =
        |n: &str| pid_by_name.get(n).copied().ok_or_else(|| bad(format!("unknown participant `{n}` in records")));
    let public_hex = s.aud(PUBLIC_AID).map(|a| a.digest.to_hex()).unwrap_or_default();
    let mut aid_by_hex: FxHashMap<&str, Aid> = FxHashMap::default();
    aid_by_hex.insert(public_hex.as_str(), PUBLIC_AID);
    let mut part_auds: Vec<Vec<Aid>> = vec![Vec::new(); pid_by_name.len()];
    for a in r.audiences {
        let digest = AudienceDigest::from_hex(&a.digest).ok_or_else(|| bad(format!("bad digest `{}`", a.digest)))?;
        let mut names = a.members.clone();
        names.sort();
        names.dedup();
        if names.len() != a.members.len()
            || a.kind != AudienceKind::of_members(names.len())
            || a.kind == AudienceKind::Public
        {
            return Err(bad(format!("audience {digest} has a non-canonical kind or member list")));
        }
        if AudienceDigest::compute(a.kind, &names) != digest {
            return Err(bad(format!("audience {digest} does not match its kind and members")));
        }
        let mut members = Vec::with_capacity(names.len());
        for n in &names {
            members.push(pid_of(n)?);
        }
        members.sort_unstable();
        let aid = s.auds.len() as Aid;
        for p in &members {
            if let Some(list) = part_auds.get_mut(*p as usize) {
                list.push(aid);
            }
        }
        s.auds.push_back(AudRec { kind: a.kind, members: Members::Only(members.into()), digest, live: true });
        s.aud_by_digest.insert(digest, aid);
        s.aud_order.insert(digest);
        if aid_by_hex.insert(a.digest.as_str(), aid).is_some() {
            return Err(bad(format!("audience {digest} stored twice")));
        }
    }
    for (pid, auds) in part_auds.into_iter().enumerate() {
        if !auds.is_empty() {
            s.part_auds.insert(pid as Pid, auds.into_iter().collect());
        }
    }
    let aid_of =
        |hex: &str| aid_by_hex.get(hex).copied().ok_or_else(|| bad(format!("reference to unknown audience `{hex}`")));
    let mut graph = Provenance::default();
    let mut iids: HashMap<ItemName, Iid, FxBuildHasher> =
        HashMap::with_capacity_and_hasher(r.items.len(), FxBuildHasher);
    let mut aud_items: Vec<Vec<Iid>> = vec![Vec::new(); s.auds.len()];
    let mut owner_items: Vec<Vec<Iid>> = vec![Vec::new(); pid_by_name.len()];
    let mut owner_public: Vec<Vec<Iid>> = vec![Vec::new(); pid_by_name.len()];
    let mut current: Vec<Currentness<Iid>> = Vec::with_capacity(r.items.len());
    let mut supersessions: Vec<(Iid, &str)> = Vec::new();
    let mut authors: Vec<(Iid, Author)> = Vec::new();
    let mut sources: Vec<Iid> = Vec::new();
    // Built in a plain vector and edited in place, then made the snapshot's flat base once:
    // pushing a million records into a `FlatVec` would fold it again and again.
    let mut items: Vec<ItemRec> = Vec::with_capacity(r.items.len());
    for (n, i) in r.items.iter().enumerate() {
        if i.seq as usize != n {
            return Err(bad(format!("item sequence has a gap at {n}")));
        }
        let iid = i.seq;
        let owner = pid_of(&i.owner)?;
        let aud = aid_of(&i.audience)?;
        if let Some(Members::Only(m)) = s.aud(aud).map(|a| &a.members) {
            if m.binary_search(&owner).is_err() {
                return Err(bad(format!("item `{}` has an audience without its owner", i.id)));
            }
        }
        sources.clear();
        for src in &i.sources {
            let sid =
                iids.get(src.as_str()).ok_or_else(|| bad(format!("item `{}` names unknown source `{src}`", i.id)))?;
            sources.push(*sid);
        }
        let c = Currentness::derive(
            i.state,
            sources.iter().map(|x| (*x, current.get(*x as usize).copied().unwrap_or(Currentness::Current))),
        );
        current.push(c);
        let mut rec = ItemRec::new(
            &i.id,
            owner,
            aud,
            i.state,
            c,
            ItemRec::links_from_sources(&sources),
            i.created_rev,
            i.created_at_ms,
        );
        if !i.subjects.is_empty() {
            // Subjects are names (a removed subject stays named), sorted and distinct.
            if i.subjects.windows(2).any(|w| w.first() >= w.get(1)) || i.subjects.len() > MAX_SUBJECTS {
                return Err(bad(format!("item `{}` has an unsorted, repeated or oversized subject list", i.id)));
            }
            for subject in &i.subjects {
                earshot_core::validate_id(subject)
                    .map_err(|e| bad(format!("item `{}` names a malformed subject: {e}", i.id)))?;
            }
            let subjects: Box<[Arc<str>]> = i.subjects.iter().map(|x| Arc::from(x.as_str())).collect();
            rec.edit_links(|l| l.subjects = subjects);
        }
        items.push(rec);
        if iids.insert(ItemName::new(&i.id), iid).is_some() {
            return Err(bad(format!("item `{}` stored twice", i.id)));
        }
        if let Some(list) = aud_items.get_mut(aud as usize) {
            list.push(iid);
        }
        if let Some(list) = owner_items.get_mut(owner as usize) {
            list.push(iid);
        }
        if aud == PUBLIC_AID {
            if let Some(list) = owner_public.get_mut(owner as usize) {
                list.push(iid);
            }
        }
        graph.add_item(iid, &sources);
        if i.author_unknown {
            if i.author.is_some() {
                return Err(bad(format!("item `{}` names an author and says it is unknown", i.id)));
            }
            authors.push((iid, Author::Unknown));
        } else if i.author_removed {
            let name = i
                .author
                .as_deref()
                .ok_or_else(|| bad(format!("item `{}` has a removed author without a name", i.id)))?;
            earshot_core::validate_id(name)
                .map_err(|e| bad(format!("item `{}` names a malformed removed author: {e}", i.id)))?;
            authors.push((iid, Author::Removed(Arc::from(name))));
        } else if let Some(author) = i.author.as_deref().map(pid_of).transpose()?.filter(|a| *a != owner) {
            authors.push((iid, Author::Participant(author)));
        }
        if let Some(by) = &i.superseded_by {
            supersessions.push((iid, by.as_str()));
        }
    }
    for (iid, author) in authors {
        if let Some(rec) = items.get_mut(iid as usize) {
            rec.edit_links(|l| l.author = Some(author));
        }
    }
    for (iid, by) in supersessions {
        let by = *iids.get(by).ok_or_else(|| bad(format!("unknown superseding item `{by}`")))?;
        if let Some(rec) = items.get_mut(iid as usize) {
            rec.edit_links(|l| l.superseded_by = Some(by));
        }
    }
    let mut gids: HashMap<Arc<str>, Gid, FxBuildHasher> =
        HashMap::with_capacity_and_hasher(r.grants.len(), FxBuildHasher);
    let mut item_grants: BTreeMap<Iid, Vec<Gid>> = BTreeMap::new();
    let mut aud_grants: BTreeMap<Aid, Vec<Gid>> = BTreeMap::new();
    for (n, g) in r.grants.iter().enumerate() {
        if g.seq as usize != n {
            return Err(bad(format!("grant sequence has a gap at {n}")));
        }
        let item = *iids.get(g.item.as_str()).ok_or_else(|| bad(format!("grant `{}` names unknown item", g.id)))?;
        let aud = aid_of(&g.audience)?;
        let consent = match (&g.consent, items.get(item as usize)) {
            (None, _) => None,
            (Some(c), Some(rec)) => {
                Some(Arc::new(GrantConsent::from_record(c, rec).map_err(|e| bad(format!("grant `{}` {e}", g.id)))?))
            }
            (Some(_), None) => return Err(bad(format!("grant `{}` names unknown item", g.id))),
        };
        let name: Arc<str> = Arc::from(g.id.as_str());
        s.grants.push_back(GrantRec {
            name: name.clone(),
            item,
            aud,
            issuer: Arc::from(g.issuer.as_str()),
            reason: g.reason.as_deref().map(Arc::from),
            created_at_ms: g.created_at_ms,
            created_rev: g.created_rev,
            expires_at_ms: g.expires_at_ms,
            revoked: g.revoked,
            consent,
        });
        if gids.insert(name, g.seq).is_some() {
            return Err(bad(format!("grant `{}` stored twice", g.id)));
        }
        item_grants.entry(item).or_default().push(g.seq);
        aud_grants.entry(aud).or_default().push(g.seq);
    }
    for (iid, gs) in item_grants {
        if let Some(rec) = items.get_mut(iid as usize) {
            rec.edit_links(|l| l.grants = gs.into());
        }
    }
    for (aid, list) in aud_items.into_iter().enumerate() {
        if !list.is_empty() {
            s.aud_items.insert(aid as Aid, list.into_iter().collect());
        }
    }
    for (pid, list) in owner_items.into_iter().enumerate() {
        if !list.is_empty() {
            s.owner_items.insert(pid as Pid, list.into_iter().collect());
        }
    }
    for (pid, list) in owner_public.into_iter().enumerate() {
        if !list.is_empty() {
            s.owner_public.insert(pid as Pid, list.into_iter().collect());
        }
    }
    for (aid, list) in aud_grants {
        s.aud_grants.insert(aid, list.into_iter().collect());
    }
    s.items = FlatVec::from_vec(items);
    drop(iids);
    s.gids = NameMap::from_base(gids);
    for x in r.identities {
        let mut bound = Vec::with_capacity(x.participants.len());
        for p in &x.participants {
            bound.push(pid_of(p)?);
        }
        let k = MemorySnapshot::ident_key(&x.transport, &x.identifier);
        s.idents.insert(Arc::from(k.as_str()), Arc::from(bound));
    }
    crate::memory::trust::rebuild(&mut s, r.trust, &pid_of)?;
    s.vectors = r.vector_space.copied();
    // Last, so the lines' summaries see every record as the rebuild leaves it.
    s.rebuild_item_lines();
    Ok((s, graph))
}

/// Encodes whole memory records as ops, for bulk import (see `crate::compose::encode_records`).
pub(crate) fn encode_records(r: MemoryRecords<'_>, ops: &mut Vec<Op>) -> Result<()> {
    for p in r.participants {
        ops.push(Op::Put(key(b'p', &p.id), enc(p)?));
    }
    for x in r.identities {
        ops.push(Op::Put(key(b'x', &MemorySnapshot::ident_key(&x.transport, &x.identifier)), enc(x)?));
    }
    for a in r.audiences {
        ops.push(Op::Put(key(b'a', &a.digest), enc(a)?));
    }
    for i in r.items {
        ops.push(Op::Put(key(b'i', &i.id), enc(i)?));
    }
    for (id, c) in r.contents {
        ops.push(Op::Put(key(b'c', id), enc(c)?));
    }
    for g in r.grants {
        ops.push(Op::Put(key(b'g', &g.id), enc(g)?));
    }
    crate::memory::trust::encode_records(r.trust, ops)?;
    if let Some(space) = r.vector_space {
        ops.push(Op::Put(key(SPACE_PREFIX, SPACE_KEY), enc(space)?));
    }
    Ok(())
}
