//! Applying one memory write to a working copy of the memory part of the latest snapshot.
//!
//! Every command is validated against the working copy before anything durable is produced;
//! the caller discards the copy on error, so a refused write leaves no trace (no partial
//! writes). On success the command returns its outcome and the set of records it touched,
//! which the durable layer encodes from the new snapshot.

use std::sync::Arc;

use earshot_core::audience::{MemberSet, OwnedMembers};
use earshot_core::derivation::{intersection_audience, partition_audience, suppression, SourceView};
use earshot_core::lifecycle::transition;
use earshot_core::{Action, AudienceDigest, AudienceKind, Currentness, Disposition, State, Viewers};

use crate::error::{check_id, Result, StoreError};
use crate::memory::graph::Provenance;
use crate::memory::layered::Posting;
use crate::memory::model::{
    limits, parse_time, Attributes, DeriveRequest, LifecycleRequest, NewGrant, NewIdentity, NewItem, NewParticipant,
    OriginInput, OriginKeyword, Outcome, ParticipantKind,
};
use crate::memory::snapshot::{
    Aid, AudRec, Gid, GrantRec, Iid, ItemRec, Map, Members, MemorySnapshot, OrdSet, PartRec, Pid, PUBLIC_AID,
};

/// One output of a partition, planned before any is created: id, audience, sources, subjects
/// (SPEC §6.3) and content.
type PlannedOutput = (String, Aid, Vec<Iid>, Box<[Arc<str>]>, NewContent);

/// Content and attributes of a newly created item (durable only; never in the index).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewContent {
    pub content: Option<String>,
    pub attributes: Option<Attributes>,
    /// The embedding as stored (normalised under `cosine`), see `crate::memory::dense`.
    pub embedding: Option<Vec<f32>>,
}

/// Records a command touched; the durable layer re-encodes them from the new snapshot.
#[derive(Debug, Default)]
pub(crate) struct Dirty {
    pub participants: Vec<Arc<str>>,
    pub identities: Vec<String>,
    pub audiences: Vec<Aid>,
    /// Digests whose audience records must be deleted (shrunk or merged by member removal).
    pub audience_deletes: Vec<AudienceDigest>,
    pub items: Vec<Iid>,
    pub contents: Vec<(Iid, NewContent)>,
    pub content_deletes: Vec<Iid>,
    pub grants: Vec<Gid>,
    /// Trust delegations (SPEC §6.2).
    pub trust: Vec<crate::memory::trust::Tid>,
    /// The store's vector space was fixed by this command (its `v/space` record is written).
    pub vector_space: bool,
}

impl Dirty {
    pub fn is_empty(&self) -> bool {
        self.participants.is_empty()
            && self.identities.is_empty()
            && self.audiences.is_empty()
            && self.audience_deletes.is_empty()
            && self.items.is_empty()
            && self.contents.is_empty()
            && self.content_deletes.is_empty()
            && self.grants.is_empty()
            && self.trust.is_empty()
            && !self.vector_space
    }
}

/// The writer's mutable context for one command.
pub(crate) struct Apply<'a> {
    pub snap: MemorySnapshot,
    pub graph: &'a mut Provenance,
    pub now_ms: i64,
    pub dirty: Dirty,
    /// Generates ids for items and grants created without one.
    pub new_id: &'a mut dyn FnMut() -> String,
}

impl Apply<'_> {
    /// Creates a participant. A retry of the create that made an existing one (same kind and
    /// name; the record keeps every field of the request) answers as that create did and
    /// writes nothing, unless `replayable` (the other parts of the store) says the existing
    /// participant was made by another kind of request (a device); anything else with a taken
    /// id is `participant_exists`.
    pub(crate) fn create_participant(
        &mut self,
        p: NewParticipant,
        replayable: &dyn Fn(Pid) -> bool,
    ) -> Result<Outcome> {
        check_id("id", &p.id)?;
        check_text("name", p.name.as_deref())?;
        if let Some(pid) = self.snap.pid(&p.id) {
            let same =
                self.snap.part(pid).is_some_and(|r| r.kind == p.kind && r.display.as_deref() == p.name.as_deref());
            if same && replayable(pid) {
                return Ok(outcome("created", vec![p.id]));
            }
            return Err(StoreError::ParticipantExists(p.id));
        }
        self.insert_participant(p)
    }

    /// Creates a participant whose id is not taken (`participant_exists` otherwise, never a
    /// replay: the caller decides what a retry of its own request is).
    pub(crate) fn insert_participant(&mut self, p: NewParticipant) -> Result<Outcome> {
        check_id("id", &p.id)?;
        check_text("name", p.name.as_deref())?;
        if self.snap.pid(&p.id).is_some() {
            return Err(StoreError::ParticipantExists(p.id));
        }
        let pid = self.snap.parts.len() as Pid;
        let name: Arc<str> = Arc::from(p.id.as_str());
        self.snap.parts.push_back(Some(PartRec { name: name.clone(), kind: p.kind, display: p.name.map(Arc::from) }));
        self.snap.pids.insert(name.clone(), pid);
        self.dirty.participants.push(name);
        Ok(outcome("created", vec![p.id]))
    }

    pub(crate) fn bind_identity(&mut self, b: NewIdentity) -> Result<Outcome> {
        check_transport(&b.transport)?;
        check_identifier(&b.identifier)?;
        check_id("participant", &b.participant)?;
        let pid =
            self.snap.pid(&b.participant).ok_or_else(|| StoreError::ParticipantNotFound(b.participant.clone()))?;
        let key = MemorySnapshot::ident_key(&b.transport, &b.identifier);
        let mut bound: Vec<Pid> = self.snap.idents.get(key.as_str()).map(|v| v.to_vec()).unwrap_or_default();
        let answer = format!("{}:{}", b.transport, b.identifier);
        if bound.contains(&pid) {
            // The request is the binding itself, so a binding already there is this request
            // retried: it answers as the first did and writes nothing.
            return Ok(outcome("created", vec![answer]));
        }
        // A second binding to another participant is recorded: the identity is then ambiguous
        // and no longer resolves (SPEC §1.1), which is what the transport evidence means.
        bound.push(pid);
        self.snap.idents.insert(Arc::from(key.as_str()), Arc::from(bound));
        self.dirty.identities.push(key);
        Ok(outcome("created", vec![answer]))
    }

    /// Removes a participant that owns no items and that `refused` (the device part of the
    /// store) does not refuse (SPEC §1.8): out of every audience and grant, its identities
    /// unbound, its authored items tombstoned and its trust delegations ended, in one write.
    /// What the device part says of it ends in the same write (`crate::compose`).
    pub(crate) fn remove_participant(
        &mut self,
        id: &str,
        refused: &dyn Fn(Pid) -> Option<StoreError>,
    ) -> Result<Outcome> {
        check_id("participant", id)?;
        let pid = self.snap.pid(id).ok_or_else(|| StoreError::ParticipantNotFound(id.to_string()))?;
        if self.snap.owner_items.get(&pid).is_some_and(|v| !v.is_empty()) {
            return Err(StoreError::ParticipantOwnsItems(id.to_string()));
        }
        // A device is refused whichever route made it: `POST /devices`, or `POST /participants`
        // with `kind: device` (RULES §2.6).
        if self.snap.part(pid).is_some_and(|p| p.kind == ParticipantKind::Device) {
            return Err(StoreError::ParticipantIsDevice(id.to_string()));
        }
        if let Some(refusal) = refused(pid) {
            return Err(refusal);
        }
        // Its words stay its own, under a tombstone; its delegations end (SPEC §1.8, §6.2).
        let name: Arc<str> = Arc::from(id);
        self.tombstone_author(pid, &name);
        let affected: Vec<Aid> = self.snap.part_auds.get(&pid).map(|s| s.iter().copied().collect()).unwrap_or_default();
        for aid in affected {
            self.shrink_audience(aid, pid)?;
        }
        // Unbind every identity of the participant.
        let keys: Vec<Arc<str>> =
            self.snap.idents.iter().filter(|(_, v)| v.contains(&pid)).map(|(k, _)| k.clone()).collect();
        for k in keys {
            let rest: Vec<Pid> =
                self.snap.idents.get(&k).map(|v| v.iter().copied().filter(|p| *p != pid).collect()).unwrap_or_default();
            if rest.is_empty() {
                self.snap.idents.remove(&k);
            } else {
                self.snap.idents.insert(k.clone(), Arc::from(rest));
            }
            self.dirty.identities.push(k.to_string());
        }
        self.snap.part_auds.remove(&pid);
        self.snap.pids.remove(id);
        self.snap.parts.set(pid as usize, None);
        self.dirty.participants.push(Arc::from(id));
        Ok(outcome("removed", vec![id.to_string()]))
    }

    /// Deletes `pid` from audience `aid` (SPEC §1.8). If the smaller member set already exists
    /// as another audience, items and grants move to it and `aid` is retired.
    fn shrink_audience(&mut self, aid: Aid, pid: Pid) -> Result<()> {
        let old = self.snap.aud(aid).cloned().ok_or_else(|| integrity(format!("audience {aid} missing")))?;
        let Members::Only(members) = &old.members else { return Ok(()) };
        let rest: Vec<Pid> = members.iter().copied().filter(|p| *p != pid).collect();
        if rest.is_empty() {
            return Err(integrity(format!("audience {} would become empty", old.digest)));
        }
        let (kind, digest) = self.digest_of(&rest)?;
        self.snap.aud_by_digest.remove(&old.digest);
        self.snap.aud_order.remove(&old.digest);
        self.dirty.audience_deletes.push(old.digest);
        match self.snap.aud_by_digest.get(&digest).copied() {
            Some(target) => {
                // Merge: re-point items and grants of `aid` to `target`, retire `aid`.
                for iid in move_posting(&mut self.snap.aud_items, aid, target) {
                    if let Some(mut rec) = self.snap.item(iid).cloned() {
                        rec.aud = target;
                        self.snap.items.set(iid as usize, rec);
                        self.dirty.items.push(iid);
                    }
                }
                for gid in move_posting(&mut self.snap.aud_grants, aid, target) {
                    if let Some(mut g) = self.snap.grant(gid).cloned() {
                        g.aud = target;
                        self.snap.grants.set(gid as usize, g);
                        self.dirty.grants.push(gid);
                    }
                }
                for p in members.iter() {
                    if let Some(set) = self.snap.part_auds.get_mut(p) {
                        set.remove(&aid);
                    }
                }
                let mut retired = old.clone();
                retired.live = false;
                self.snap.auds.set(aid as usize, retired);
            }
            None => {
                let rec = AudRec { kind, members: Members::Only(rest.into()), digest, live: true };
                self.snap.auds.set(aid as usize, rec);
                self.snap.aud_by_digest.insert(digest, aid);
                self.snap.aud_order.insert(digest);
                // Items and grants keep `aid` but their durable records name the digest.
                if let Some(v) = self.snap.aud_items.get(&aid) {
                    self.dirty.items.extend(v.iter());
                }
                if let Some(v) = self.snap.aud_grants.get(&aid) {
                    self.dirty.grants.extend(v.iter());
                }
            }
        }
        self.dirty.audiences.push(aid);
        Ok(())
    }

    fn digest_of(&self, sorted_pids: &[Pid]) -> Result<(AudienceKind, AudienceDigest)> {
        let mut names: Vec<Arc<str>> = Vec::with_capacity(sorted_pids.len());
        for p in sorted_pids {
            names.push(
                self.snap
                    .part(*p)
                    .map(|r| r.name.clone())
                    .ok_or_else(|| integrity(format!("participant {p} missing")))?,
            );
        }
        names.sort();
        let kind = AudienceKind::of_members(names.len());
        Ok((kind, AudienceDigest::compute(kind, &names)))
    }

    /// Finds or creates the canonical audience for a member set. A digest hit whose stored kind
    /// or members differ is an integrity failure, never treated as a miss (SPEC §1.3).
    fn intern_audience(&mut self, mut members: Vec<Pid>) -> Result<Aid> {
        members.sort_unstable();
        members.dedup();
        let (kind, digest) = self.digest_of(&members)?;
        if let Some(&aid) = self.snap.aud_by_digest.get(&digest) {
            let rec = self.snap.aud(aid).ok_or_else(|| integrity(format!("audience {aid} missing")))?;
            if rec.kind != kind || rec.members != Members::Only(members.as_slice().into()) {
                return Err(integrity(format!("audience digest {digest} collides with different members")));
            }
            return Ok(aid);
        }
        let aid = self.snap.auds.len() as Aid;
        for p in &members {
            // In place: the map's path to the set is copied once, not by a lookup and an insert.
            match self.snap.part_auds.get_mut(p) {
                Some(set) => {
                    set.insert(aid);
                }
                None => {
                    let mut set = OrdSet::default();
                    set.insert(aid);
                    self.snap.part_auds.insert(*p, set);
                }
            }
        }
        self.snap.auds.push_back(AudRec { kind, members: Members::Only(members.into()), digest, live: true });
        self.snap.aud_by_digest.insert(digest, aid);
        self.snap.aud_order.insert(digest);
        self.dirty.audiences.push(aid);
        Ok(aid)
    }

    fn audience_from(&mut self, m: OwnedMembers<Pid>) -> Result<Aid> {
        match m {
            OwnedMembers::Everyone => Ok(PUBLIC_AID),
            OwnedMembers::Only(v) => self.intern_audience(v),
        }
    }

    fn fresh_item_id(&mut self, id: Option<String>) -> Result<String> {
        let id = id.unwrap_or_else(|| (self.new_id)());
        check_id("id", &id)?;
        if self.snap.iid(&id).is_some() {
            return Err(StoreError::ItemExists(id));
        }
        Ok(id)
    }

    fn owner_pid(&self, owner: &str) -> Result<Pid> {
        check_id("owner", owner)?;
        self.snap.pid(owner).ok_or_else(|| StoreError::ParticipantNotFound(owner.to_string()))
    }

    pub(crate) fn create_item(&mut self, i: NewItem) -> Result<Outcome> {
        let id = self.fresh_item_id(i.id)?;
        let owner = self.owner_pid(&i.owner)?;
        let author = self.author_of(owner, i.author.as_deref())?;
        check_content(i.content.as_deref(), i.attributes.as_ref())?;
        let embedding = match (&i.embedding, i.embedding_metric) {
            (Some(e), metric) => Some(crate::memory::dense::prepare_item(e, metric, self.snap.vectors)?),
            (None, Some(_)) => return Err(StoreError::input("embedding_metric", "needs an `embedding`")),
            (None, None) => None,
        };
        let subjects = self.subjects_for(&i.subjects, &[])?;
        // Write-time binding (SPEC §1.4): the audience comes from the origin, never the content.
        let aid = match &i.origin {
            OriginInput::Keyword(OriginKeyword::Public) => PUBLIC_AID,
            OriginInput::Keyword(OriginKeyword::OwnerPrivate) => self.intern_audience(vec![owner])?,
            OriginInput::Viewers(v) => match self.snap.resolve_viewers(Some(owner), v)? {
                Viewers::Unresolved => return Err(StoreError::OriginUnresolved),
                Viewers::Resolved(members) => self.intern_audience(members)?,
            },
        };
        let owner_only_or_public = aid == PUBLIC_AID
            || self.snap.aud(aid).is_some_and(|a| matches!(&a.members, Members::Only(m) if **m == [owner]));
        let author = crate::memory::trust::author_for(author, owner_only_or_public);
        let iid = self.push_item(
            &id,
            owner,
            aid,
            State::Active,
            (&[], subjects),
            NewContent {
                content: i.content,
                attributes: i.attributes,
                embedding: embedding.as_ref().map(|e| e.1.clone()),
            },
        );
        if let Some((space, _)) = embedding {
            if self.snap.vectors.is_none() {
                self.snap.vectors = Some(space);
                self.dirty.vector_space = true;
            }
        }
        if let Some(author) = author {
            self.set_author(iid, author);
        }
        Ok(outcome("created", vec![id]))
    }

    /// Adds an item; `links` are its sources and its subjects (SPEC §6.3).
    fn push_item(
        &mut self,
        id: &str,
        owner: Pid,
        aud: Aid,
        state: State,
        links: (&[Iid], Box<[Arc<str>]>),
        content: NewContent,
    ) -> Iid {
        let (sources, subjects) = links;
        let iid = self.snap.items.len() as Iid;
        let current = Currentness::derive(state, sources.iter().map(|s| (*s, self.current_of(*s))));
        self.snap.items.push_back(ItemRec::new(
            id,
            owner,
            aud,
            state,
            current,
            ItemRec::links_from_sources(sources),
            self.snap.revision + 1,
            self.now_ms,
        ));
        if !subjects.is_empty() {
            if let Some(mut rec) = self.snap.item(iid).cloned() {
                rec.edit_links(|l| l.subjects = subjects);
                self.snap.items.set(iid as usize, rec);
            }
        }
        self.snap.iids.insert(id, iid);
        Posting::push_to(&mut self.snap.aud_items, aud, iid);
        Posting::push_to(&mut self.snap.owner_items, owner, iid);
        if aud == PUBLIC_AID {
            Posting::push_to(&mut self.snap.owner_public, owner, iid);
        }
        self.graph.add_item(iid, sources);
        self.dirty.items.push(iid);
        self.dirty.contents.push((iid, content));
        iid
    }

    /// A derived item's subjects: the union of its sources' and those it names (SPEC §6.3).
    fn inherited_subjects(&self, sources: &[Iid], named: &[String]) -> Result<Box<[Arc<str>]>> {
        let inherited: Vec<&[Arc<str>]> =
            sources.iter().filter_map(|s| self.snap.item(*s)).map(|r| r.subjects()).collect();
        self.subjects_for(named, &inherited)
    }

    fn current_of(&self, iid: Iid) -> Currentness<Iid> {
        self.snap
            .item(iid)
            .map_or(Currentness::NotCurrent { state: State::Deleted, ancestor: Some(iid) }, |r| r.current())
    }

    fn item_iid(&self, field: &'static str, name: &str) -> Result<Iid> {
        check_id(field, name)?;
        self.snap.iid(name).ok_or_else(|| StoreError::ItemNotFound(name.to_string()))
    }

    pub(crate) fn lifecycle(&mut self, item: &str, req: LifecycleRequest) -> Result<Outcome> {
        let iid = self.item_iid("item", item)?;
        let mut rec = self.snap.item(iid).cloned().ok_or_else(|| StoreError::ItemNotFound(item.to_string()))?;
        let to = transition(rec.state(), req.action).map_err(StoreError::InvalidTransition)?;
        match (&req.by, req.action) {
            (Some(by), Action::Supersede) => {
                let by_iid = self.item_iid("by", by)?;
                // "Superseded by a newer item" (SPEC §1.7): the successor was created later.
                if by_iid <= iid {
                    return Err(StoreError::input("by", "an item can only be superseded by a newer item"));
                }
                rec.edit_links(|l| l.superseded_by = Some(by_iid));
            }
            (Some(_), _) => return Err(StoreError::input("by", "only `supersede` takes `by`")),
            (None, _) => {}
        }
        rec.set_state(to);
        if req.action == Action::Delete {
            self.dirty.content_deletes.push(iid);
        }
        self.snap.items.set(iid as usize, rec);
        self.dirty.items.push(iid);
        self.refresh_currentness(iid);
        Ok(outcome("updated", vec![item.to_string()]))
    }

    /// Recomputes the memoised currentness of `root` and every descendant, sources first.
    fn refresh_currentness(&mut self, root: Iid) {
        let mut order = vec![root];
        order.extend(self.graph.descendants(root));
        for iid in order {
            let Some(rec) = self.snap.item(iid) else { continue };
            let c = Currentness::derive(rec.state(), rec.sources().iter().map(|s| (*s, self.current_of(*s))));
            if c != rec.current() {
                let mut rec = rec.clone();
                rec.set_current(c);
                self.snap.items.set(iid as usize, rec);
            }
        }
    }

    pub(crate) fn derive(&mut self, req: DeriveRequest, issuer: &str) -> Result<Outcome> {
        if req.sources.is_empty() {
            return Err(StoreError::input("sources", "a derivation needs at least one source"));
        }
        if req.sources.len() > limits::MAX_SOURCES {
            return Err(StoreError::LimitExceeded { field: "sources", limit: limits::MAX_SOURCES });
        }
        let owner = self.owner_pid(&req.owner)?;
        let mut sources: Vec<Iid> = Vec::with_capacity(req.sources.len());
        for s in &req.sources {
            check_id("sources", s)?;
            let iid = self.snap.iid(s).ok_or_else(|| StoreError::SourceNotFound(s.clone()))?;
            if sources.contains(&iid) {
                return Err(StoreError::input("sources", format!("source `{s}` is listed twice")));
            }
            let rec = self.snap.item(iid).ok_or_else(|| StoreError::SourceNotFound(s.clone()))?;
            if rec.owner != owner {
                return Err(StoreError::SourceOwnerMismatch {
                    source_id: s.clone(),
                    source_owner: self.snap.part_name(rec.owner).to_string(),
                    owner: req.owner.clone(),
                });
            }
            sources.push(iid);
        }
        let only = |field: &'static str, present: bool, which: &str| -> Result<()> {
            if present {
                Err(StoreError::input(field, format!("only {which} takes `{field}`")))
            } else {
                Ok(())
            }
        };
        let d = req.disposition;
        only("outputs", req.outputs.is_some() && d != Disposition::Partition, "partition")?;
        only("members", req.members.is_some() && d != Disposition::Declassification, "declassification")?;
        let creates_one = matches!(d, Disposition::Intersection | Disposition::Quarantine);
        only("id", req.id.is_some() && !creates_one, "intersection or quarantine")?;
        only("content", req.content.is_some() && !creates_one, "intersection or quarantine")?;
        only("attributes", req.attributes.is_some() && !creates_one, "intersection or quarantine")?;
        only("subjects", !req.subjects.is_empty() && !creates_one, "intersection or quarantine")?;

        if d == Disposition::Declassification {
            // An authenticated, object-specific decision: one grant on one existing item.
            let [source] = req.sources.as_slice() else {
                return Err(StoreError::input("sources", "declassification names exactly one item"));
            };
            let members =
                req.members.ok_or_else(|| StoreError::input("members", "declassification needs `members`"))?;
            let grant = NewGrant { members, reason: req.reason, expires_at: req.expires_at };
            return self.grant(source, grant, issuer);
        }
        only("reason", req.reason.is_some(), "declassification")?;
        only("expires_at", req.expires_at.is_some(), "declassification")?;
        if d == Disposition::Suppress {
            return Ok(Outcome {
                outcome: "suppressed".into(),
                reason: Some("requested".into()),
                ..Default::default()
            });
        }

        let container = match &req.container {
            Some(v) => Some(self.snap.resolve_viewers(Some(owner), v)?),
            None => None,
        };
        let views: Vec<SourceView<'_, Iid, Pid>> = sources
            .iter()
            .filter_map(|&iid| {
                let rec = self.snap.item(iid)?;
                let aud = self.snap.aud(rec.aud)?;
                // Grants are consulted only to name the reason; they never shape an audience.
                let by_grant = container.as_ref().is_some_and(|v| {
                    rec.grants().iter().any(|g| {
                        self.snap.grant(*g).is_some_and(|g| {
                            g.is_effective(self.now_ms)
                                && self.snap.aud(g.aud).is_some_and(|a| a.member_set().contains_all(v))
                        })
                    })
                });
                Some(SourceView {
                    id: iid,
                    current: rec.current().is_current(),
                    origin: aud.member_set(),
                    reachable_by_grant: by_grant,
                })
            })
            .collect();
        if views.len() != sources.len() {
            return Err(integrity("a source vanished during derivation".into()));
        }
        let suppressed = suppression(container.as_ref(), &views);
        let name_of = |snap: &MemorySnapshot, i: Iid| snap.item(i).map(|r| r.name.to_string()).unwrap_or_default();

        match d {
            Disposition::Intersection | Disposition::Quarantine => {
                if let (Some(reason), Disposition::Intersection) = (suppressed, d) {
                    return Ok(Outcome {
                        outcome: "suppressed".into(),
                        reason: Some(reason.code().into()),
                        source: Some(name_of(&self.snap, *reason.source())),
                        ..Default::default()
                    });
                }
                let sets: Vec<MemberSet<'_, Pid>> = views.iter().map(|v| v.origin).collect();
                let members = intersection_audience(&sets);
                let id = self.fresh_item_id(req.id)?;
                check_content(req.content.as_deref(), req.attributes.as_ref())?;
                let subjects = self.inherited_subjects(&sources, &req.subjects)?;
                let aid = self.audience_from(members)?;
                let state = if d == Disposition::Quarantine { State::Quarantined } else { State::Active };
                self.push_item(
                    &id,
                    owner,
                    aid,
                    state,
                    (&sources, subjects),
                    NewContent { content: req.content, attributes: req.attributes, embedding: None },
                );
                // A quarantine always says why: the suppression it was created despite, else
                // `requested` (the disposition asked for it), as a `suppress` does.
                let reason = match (suppressed, d) {
                    (Some(r), _) => Some(r.code().into()),
                    (None, Disposition::Quarantine) => Some("requested".into()),
                    (None, _) => None,
                };
                Ok(Outcome {
                    outcome: if d == Disposition::Quarantine { "quarantined" } else { "created" }.into(),
                    ids: vec![id],
                    reason,
                    source: suppressed.map(|r| name_of(&self.snap, *r.source())),
                })
            }
            Disposition::Partition => {
                if let Some(reason) = suppressed {
                    return Ok(Outcome {
                        outcome: "suppressed".into(),
                        reason: Some(reason.code().into()),
                        source: Some(name_of(&self.snap, *reason.source())),
                        ..Default::default()
                    });
                }
                self.partition(owner, &req, &sources)
            }
            Disposition::Declassification | Disposition::Suppress => Err(integrity("unreachable disposition".into())),
        }
    }

    /// Partition: each output's sources share one audience, which the output inherits; every
    /// source of the request goes to exactly one output.
    fn partition(&mut self, owner: Pid, req: &DeriveRequest, sources: &[Iid]) -> Result<Outcome> {
        let outputs = req.outputs.as_ref().ok_or_else(|| StoreError::input("outputs", "partition needs `outputs`"))?;
        if outputs.is_empty() || outputs.len() > limits::MAX_OUTPUTS {
            return Err(StoreError::LimitExceeded { field: "outputs", limit: limits::MAX_OUTPUTS });
        }
        let mut plan: Vec<PlannedOutput> = Vec::with_capacity(outputs.len());
        let mut seen: Vec<Iid> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        for (n, out) in outputs.iter().enumerate() {
            if out.sources.is_empty() {
                return Err(StoreError::input("outputs", format!("output {n} has no sources")));
            }
            let mut out_sources = Vec::with_capacity(out.sources.len());
            for s in &out.sources {
                let iid = self.snap.iid(s).filter(|i| sources.contains(i)).ok_or_else(|| {
                    StoreError::input("outputs", format!("output {n} names `{s}`, which is not among `sources`"))
                })?;
                if seen.contains(&iid) {
                    return Err(StoreError::input("outputs", format!("source `{s}` appears in two outputs")));
                }
                seen.push(iid);
                out_sources.push(iid);
            }
            let sets: Vec<MemberSet<'_, Pid>> = out_sources
                .iter()
                .filter_map(|i| self.snap.item(*i).and_then(|r| self.snap.aud(r.aud)).map(|a| a.member_set()))
                .collect();
            let shared = partition_audience(&sets).ok_or(StoreError::PartitionMixedAudiences { output: n })?;
            let aid = match shared {
                MemberSet::Everyone => PUBLIC_AID,
                MemberSet::Only(m) => {
                    let (_, digest) = self.digest_of(m)?;
                    *self.snap.aud_by_digest.get(&digest).ok_or_else(|| integrity("source audience missing".into()))?
                }
            };
            check_content(out.content.as_deref(), out.attributes.as_ref())?;
            let subjects = self.inherited_subjects(&out_sources, &out.subjects)?;
            let id = self.fresh_item_id(out.id.clone())?;
            if ids.contains(&id) {
                return Err(StoreError::ItemExists(id));
            }
            ids.push(id.clone());
            plan.push((
                id,
                aid,
                out_sources,
                subjects,
                NewContent { content: out.content.clone(), attributes: out.attributes.clone(), embedding: None },
            ));
        }
        if seen.len() != sources.len() {
            return Err(StoreError::input("outputs", "every source must go to exactly one output"));
        }
        for (id, aid, out_sources, subjects, content) in plan {
            self.push_item(&id, owner, aid, State::Active, (&out_sources, subjects), content);
        }
        Ok(outcome("created", ids))
    }

    pub(crate) fn grant(&mut self, item: &str, g: NewGrant, issuer: &str) -> Result<Outcome> {
        let iid = self.item_iid("item", item)?;
        if g.members.is_empty() {
            return Err(StoreError::input("members", "a grant names at least one member"));
        }
        if g.members.len() > limits::MAX_GRANT_MEMBERS {
            return Err(StoreError::LimitExceeded { field: "members", limit: limits::MAX_GRANT_MEMBERS });
        }
        check_text("reason", g.reason.as_deref())?;
        let mut members = Vec::with_capacity(g.members.len() + 1);
        for m in &g.members {
            check_id("members", m)?;
            members.push(self.snap.pid(m).ok_or_else(|| StoreError::ParticipantNotFound(m.clone()))?);
        }
        let expires_at_ms = g.expires_at.as_deref().map(|e| parse_time("expires_at", e)).transpose()?;
        crate::common::check_window_ends_later("expires_at", expires_at_ms, self.now_ms)?;
        let rec = self.snap.item(iid).cloned().ok_or_else(|| StoreError::ItemNotFound(item.to_string()))?;
        // Every authorized audience contains the item's owner (SPEC §1.9).
        members.push(rec.owner);
        members.sort_unstable();
        members.dedup();
        // A replay of a live grant (same members, reason and expiry) answers that grant and
        // writes nothing: no second grant, no new revision.
        if let Some(twin) = self.live_twin(&rec, &members, g.reason.as_deref(), expires_at_ms) {
            return Ok(outcome("exists", vec![twin]));
        }
        let aid = self.intern_audience(members)?;
        // SPEC §6.3: on an item with subjects other than its owner, the grant waits for them.
        let consent = crate::memory::consent::for_new_grant(&self.snap, &rec);
        let pending = consent.as_deref().is_some_and(|c| !c.effective);
        let gid = self.snap.grants.len() as Gid;
        let name = (self.new_id)();
        check_id("grant", &name)?;
        let name: Arc<str> = Arc::from(name);
        self.snap.grants.push_back(GrantRec {
            name: name.clone(),
            item: iid,
            aud: aid,
            issuer: Arc::from(issuer),
            reason: g.reason.map(Arc::from),
            created_at_ms: self.now_ms,
            created_rev: self.snap.revision + 1,
            expires_at_ms,
            revoked: false,
            consent,
        });
        self.snap.gids.insert(name.clone(), gid);
        let mut rec = rec;
        rec.edit_links(|l| {
            let mut gs = l.grants.to_vec();
            gs.push(gid);
            l.grants = gs.into();
        });
        self.snap.items.set(iid as usize, rec);
        Posting::push_to(&mut self.snap.aud_grants, aid, gid);
        self.dirty.grants.push(gid);
        let reason = pending.then(|| "consent_pending".to_string());
        Ok(Outcome { reason, ..outcome("granted", vec![name.to_string()]) })
    }

    /// The name of a live grant of `rec` with exactly these (sorted) members, reason and expiry.
    fn live_twin(&self, rec: &ItemRec, members: &[Pid], reason: Option<&str>, expires: Option<i64>) -> Option<String> {
        rec.grants().iter().find_map(|&gid| {
            let g = self.snap.grant(gid)?;
            let same = g.is_live(self.now_ms)
                && g.expires_at_ms == expires
                && g.reason.as_deref() == reason
                && self.snap.aud(g.aud).is_some_and(|a| a.members == Members::Only(members.into()));
            same.then(|| g.name.to_string())
        })
    }

    pub(crate) fn revoke_grant(&mut self, grant: &str) -> Result<Outcome> {
        check_id("grant", grant)?;
        let gid = *self.snap.gids.get(grant).ok_or_else(|| StoreError::GrantNotFound(grant.to_string()))?;
        let mut g = self.snap.grant(gid).cloned().ok_or_else(|| StoreError::GrantNotFound(grant.to_string()))?;
        if g.revoked {
            return Err(StoreError::GrantAlreadyRevoked(grant.to_string()));
        }
        g.revoked = true;
        self.snap.grants.set(gid as usize, g);
        self.dirty.grants.push(gid);
        Ok(outcome("revoked", vec![grant.to_string()]))
    }
}

/// Moves the posting list of audience `from` into that of `to`, keeping it sorted, and returns
/// the moved ids. Leaves no empty list behind: a rebuild from the records never creates one.
fn move_posting(postings: &mut Map<Aid, Posting>, from: Aid, to: Aid) -> Vec<u32> {
    let moved: Vec<u32> = postings.remove(&from).map(|v| v.iter().collect()).unwrap_or_default();
    let mut merged: Vec<u32> = postings.get(&to).map(|v| v.iter().collect()).unwrap_or_default();
    merged.extend(moved.iter().copied());
    merged.sort_unstable();
    if !merged.is_empty() {
        postings.insert(to, merged.into_iter().collect());
    }
    moved
}

pub(crate) fn outcome(kind: &str, ids: Vec<String>) -> Outcome {
    Outcome { outcome: kind.to_string(), ids, ..Default::default() }
}

fn integrity(msg: String) -> StoreError {
    StoreError::Integrity(msg)
}

pub(crate) fn check_text(field: &'static str, s: Option<&str>) -> Result<()> {
    if s.is_some_and(|s| s.len() > limits::MAX_TEXT_BYTES) {
        return Err(StoreError::LimitExceeded { field, limit: limits::MAX_TEXT_BYTES });
    }
    Ok(())
}

fn check_content(content: Option<&str>, attributes: Option<&Attributes>) -> Result<()> {
    if content.is_some_and(|c| c.len() > limits::MAX_CONTENT_BYTES) {
        return Err(StoreError::LimitExceeded { field: "content", limit: limits::MAX_CONTENT_BYTES });
    }
    if let Some(attrs) = attributes {
        if attrs.len() > limits::MAX_ATTRIBUTES {
            return Err(StoreError::LimitExceeded { field: "attributes", limit: limits::MAX_ATTRIBUTES });
        }
        for (k, v) in attrs {
            if k.is_empty() || k.len() > limits::MAX_TRANSPORT_LEN {
                return Err(StoreError::input("attributes", "attribute names are 1 to 64 bytes"));
            }
            let scalar =
                matches!(v, serde_json::Value::String(_) | serde_json::Value::Number(_) | serde_json::Value::Bool(_));
            if !scalar {
                return Err(StoreError::input(
                    "attributes",
                    format!("attribute `{k}` must be a string, number or boolean"),
                ));
            }
            if v.to_string().len() > limits::MAX_ATTRIBUTE_BYTES {
                return Err(StoreError::LimitExceeded { field: "attributes", limit: limits::MAX_ATTRIBUTE_BYTES });
            }
        }
    }
    Ok(())
}

fn check_transport(t: &str) -> Result<()> {
    let ok = !t.is_empty()
        && t.len() <= limits::MAX_TRANSPORT_LEN
        && t.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(StoreError::input("transport", "transports are 1 to 64 of `a-z0-9_-`"))
    }
}

fn check_identifier(i: &str) -> Result<()> {
    let ok = !i.is_empty() && i.len() <= limits::MAX_IDENTIFIER_LEN && !i.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(StoreError::input("identifier", "identifiers are 1 to 256 bytes without control characters"))
    }
}
