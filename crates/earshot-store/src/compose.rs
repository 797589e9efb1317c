//! Where the two domains meet each other and the kernel: the composed [`Snapshot`] is the
//! kernel's `State` (its records, commands and dirty sets are those of both domains), and the
//! device reads, which need the participants' names from the memory part, are offered on it.
//! The composed `Records` of a store (the revision record and both domains' records), their
//! decoding, encoding and rebuild, are here too.

use earshot_core::condition::RequestContext;

use crate::devices::apply::{DeviceDirty, DeviceWrite, Written};
use crate::devices::model::{AuthorizeView, ChainView, DependentsView, NewDevice, SchemaView};
use crate::devices::{Devices, RawAuthorization};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::devices::records::DeviceRecords;
use crate::devices::DeviceState;
use crate::error::{Result, StoreError};
use crate::idempotency::{Idempotency, IdempotencyDirty, IdempotencyRecords, KeyRecord};
use crate::kernel::backend::Op;
use crate::kernel::backend::{dec, meta_op, MetaRecord, META_KEY};
use crate::kernel::State;
use crate::memory::apply::{Apply, Dirty as MemoryDirty};
use crate::memory::dense::VectorSpace;
use crate::memory::durable::{
    AudienceRecord, ContentRecord, GrantRecord, IdentityRecord, ItemRecord, MemoryRecords, MemoryRecordsMut,
    ParticipantRecord,
};
use crate::memory::graph::Provenance;
use crate::memory::model::{NewParticipant, Outcome, ParticipantKind};
use crate::memory::snapshot::MemorySnapshot;
use crate::memory::trust::TrustRecord;
use crate::model::{Command, WriteOutcome};
use crate::timeline::Timeline;

/// The composed snapshot is the kernel's state: memory and devices records project into it, and
/// a command is applied by the memory or device half it belongs to.
/// A store's state at one revision: the memory part and the device part. Cloning is O(1)
/// (persistent maps); the writer clones the latest, applies a command and publishes the result,
/// so readers holding an older `Arc<Snapshot>` are never blocked. The memory part's reads
/// (check, lookup, expand, …) are reached through `Deref`; the device reads are below.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) mem: MemorySnapshot,
    pub(crate) dev: DeviceState,
    /// Idempotency keys and item-create digests (see `crate::idempotency`).
    pub(crate) idem: Idempotency,
    /// The instants after this revision's commit at which a judgement changes with time alone
    /// (see `crate::timeline`): whether an `at_exact` answer may be used.
    pub(crate) timeline: Timeline,
}

impl std::ops::Deref for Snapshot {
    type Target = MemorySnapshot;
    fn deref(&self) -> &MemorySnapshot {
        &self.mem
    }
}

/// The records a command touched, per part.
#[derive(Debug, Default)]
pub struct Dirty {
    mem: MemoryDirty,
    dev: DeviceDirty,
    idem: IdempotencyDirty,
}

impl Dirty {
    fn is_empty(&self) -> bool {
        self.mem.is_empty() && self.dev.is_empty() && self.idem.is_empty()
    }
}

impl State for Snapshot {
    type Error = StoreError;
    type Aside = Provenance;
    type Command = Command;
    type Outcome = WriteOutcome;
    type Dirty = Dirty;

    fn load(store: &str, raw: &[(Vec<u8>, Vec<u8>)]) -> Result<(Self, Provenance)> {
        rebuild(store, &Records::decode(raw)?)
    }
    /// Storage conditions keep their variant (and code); anything else becomes a storage
    /// failure with the same message (`StoreError` is not `Clone`: it carries sources).
    fn duplicate_error(e: &StoreError) -> StoreError {
        match e {
            StoreError::InsufficientStorage { available, required } => {
                StoreError::InsufficientStorage { available: *available, required: *required }
            }
            StoreError::StorageUnavailable(m) => StoreError::StorageUnavailable(m.clone()),
            StoreError::WriteConflict(m) => StoreError::WriteConflict(m.clone()),
            StoreError::Integrity(m) => StoreError::Integrity(m.clone()),
            StoreError::Unavailable => StoreError::Unavailable,
            StoreError::StoreReplaced(id) => StoreError::StoreReplaced(id.clone()),
            other => StoreError::Storage(other.to_string()),
        }
    }
    fn tune(&mut self, config: &crate::Config) {
        self.mem.line_builds = crate::memory::line_build::LineBuilds::from_config(config.item_lines_off_writer_from);
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn committed_at_ms(&self) -> i64 {
        self.committed_at_ms
    }
    fn stamp(&mut self, revision: u64, committed_at_ms: i64) {
        self.mem.revision = revision;
        self.mem.committed_at_ms = committed_at_ms;
        self.timeline.prune_through(committed_at_ms);
    }
    fn apply(
        &self,
        graph: &mut Provenance,
        cmd: Command,
        now_ms: i64,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(WriteOutcome, Option<(Self, Dirty)>)> {
        match cmd {
            Command::Keyed { key, fingerprint, command } => {
                self.apply_keyed(graph, key, fingerprint, *command, now_ms, new_id)
            }
            cmd => self.apply_one(graph, cmd, now_ms, new_id),
        }
    }
    fn change(cmd: &Command, out: &WriteOutcome) -> serde_json::Value {
        change(cmd, out)
    }
    fn rewind(&self, graph: &mut Provenance) {
        // Items are only ever appended, and the graph's node `i` is item `i`.
        graph.truncate(self.mem.item_count());
    }
    fn encode(&self, dirty: &Dirty) -> Result<Vec<Op>> {
        let mut ops = crate::memory::durable::encode(&self.mem, &dirty.mem)?;
        crate::devices::records::encode(&self.dev, &self.mem, &dirty.dev, &mut ops)?;
        self.idem.encode(&dirty.idem, &mut ops)?;
        Ok(ops)
    }
}

impl Snapshot {
    /// A write under an `Idempotency-Key`. A key recorded within its window answers its
    /// recorded outcome (revision and token of the write that recorded it) and writes nothing
    /// when the fingerprint matches, and is refused when it does not. Otherwise the command
    /// runs, and if it writes, the key and its answer are recorded in the same revision. A
    /// write that changes nothing (a use answering `denied` or `allowed`, a grant answering `exists`, a
    /// suppressed derivation, a create retried) records nothing, so that a key never costs a
    /// revision of its own: its retry runs again and again changes nothing, or, if the state
    /// has moved meanwhile, writes what the first would have. Refusals are not recorded
    /// either: a retry after a refusal runs again.
    fn apply_keyed(
        &self,
        graph: &mut Provenance,
        key: String,
        fingerprint: String,
        command: Command,
        now_ms: i64,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(WriteOutcome, Option<(Self, Dirty)>)> {
        crate::idempotency::check_key(&key)?;
        if let Some(rec) = self.idem.live(&key, now_ms) {
            if rec.fingerprint != fingerprint {
                return Err(StoreError::IdempotencyKeyReused(key));
            }
            return Ok((rec.outcome.clone(), None));
        }
        // A nested key is refused by `apply_one`.
        let (out, next) = self.apply_one(graph, command, now_ms, new_id)?;
        let Some((mut next, mut dirty)) = next else { return Ok((out, None)) };
        // The kernel commits this as the next revision (see `kernel::writer`).
        let revision = self.revision + 1;
        let recorded = WriteOutcome { revision, token: self.mem.token(revision), ..out.clone() };
        next.idem.record(KeyRecord { key, fingerprint, recorded_at_ms: now_ms, outcome: recorded }, &mut dirty.idem);
        Ok((out, Some((next, dirty))))
    }

    /// One command (not keyed). A command that writes also prunes expired idempotency keys,
    /// in its revision (a function of `now_ms` alone, so a replay prunes the same keys).
    fn apply_one(
        &self,
        graph: &mut Provenance,
        cmd: Command,
        now_ms: i64,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(WriteOutcome, Option<(Self, Dirty)>)> {
        let mut a = Apply { snap: self.mem.clone(), graph, now_ms, dirty: MemoryDirty::default(), new_id };
        let mut dev = self.dev.clone();
        let mut dev_dirty = DeviceDirty::default();
        let mut idem = self.idem.clone();
        let mut idem_dirty = IdempotencyDirty::default();
        let (d, dd) = (&mut dev, &mut dev_dirty);
        // A participant made by `POST /devices` is not a retry of `POST /participants`.
        let not_a_device = |pid| !self.dev.devices.contains_key(&pid);
        let out = match cmd {
            Command::CreateParticipant(p) => a.create_participant(p, &not_a_device).map(from_memory),
            Command::RemoveParticipant { id } => remove_participant(&mut a, d, dd, &id),
            Command::BindIdentity(b) => a.bind_identity(b).map(from_memory),
            Command::CreateItem(i) => create_item(&mut a, &mut idem, &mut idem_dirty, i),
            Command::Lifecycle { item, request } => a.lifecycle(&item, request).map(from_memory),
            Command::Derive { request, issuer } => a.derive(request, &issuer).map(from_memory),
            Command::Grant { item, grant, issuer } => a.grant(&item, grant, &issuer).map(from_memory),
            Command::RevokeGrant { grant } => a.revoke_grant(&grant).map(from_memory),
            Command::Consent { grant, subject } => a.decide_consent(&grant, &subject, true).map(from_memory),
            Command::WithdrawConsent { grant, subject } => a.decide_consent(&grant, &subject, false).map(from_memory),
            Command::CreateTrust { trust, issuer } => a.create_trust(trust, &issuer).map(from_memory),
            Command::RevokeTrust { trust } => a.revoke_trust(&trust).map(from_memory),
            Command::PutSchema(s) => device_write(&mut a, d, dd, |w| w.put_schema(&s.schema)),
            Command::CreateDevice(new) => create_device(&mut a, d, dd, new),
            Command::CreateRelation(r) => device_write(&mut a, d, dd, |w| w.create_relation(r)),
            Command::RevokeRelation { edge, by } => device_write(&mut a, d, dd, |w| w.revoke_relation(&edge, &by)),
            Command::CreateCapability(c) => device_write(&mut a, d, dd, |w| w.create_capability(c)),
            Command::RevokeCapability { capability, by } => {
                device_write(&mut a, d, dd, |w| w.revoke_capability(&capability, &by))
            }
            Command::ConsumeUse(r) => device_write(&mut a, d, dd, |w| w.consume_use(r)),
            Command::Keyed { .. } => Err(StoreError::input("command", "a keyed write cannot be keyed again")),
        }?;
        let mut dirty = Dirty { mem: a.dirty, dev: dev_dirty, idem: idem_dirty };
        if dirty.is_empty() {
            return Ok((out, None));
        }
        a.snap.refresh_item_lines();
        idem.prune(now_ms, &mut dirty.idem);
        let mut timeline = self.timeline.clone();
        timeline.add_written(&a.snap, &dev, &dirty.mem, &dirty.dev);
        Ok((out, Some((Snapshot { mem: a.snap, dev, idem, timeline }, dirty))))
    }

    /// Every fact of this state, both domains and the idempotency records, sorted: what
    /// `verify` compares with a rebuild, and what an import must reproduce.
    pub fn facts(&self) -> Vec<String> {
        let mut out = crate::memory::verify::facts(&self.mem);
        crate::devices::verify::facts(&self.dev, &self.mem, &mut out);
        self.idem.facts(&|iid| self.mem.item(iid).map(|r| r.name.to_string()), &mut out);
        out.sort();
        out
    }

    /// Whether every judgement of this snapshot is the same at its commit time and at `now_ms`
    /// (see `crate::timeline`): an `at_exact` answer of it may then be used.
    pub fn judged_alike_at(&self, now_ms: i64) -> bool {
        self.timeline.judged_alike(self.mem.committed_at_ms, now_ms)
    }

    /// The name of a participant a device record names, a removed one's too (SPEC §1.8: the
    /// records keep it).
    pub(crate) fn party_name(&self, pid: crate::common::Pid) -> Arc<str> {
        self.dev.party_name(&self.mem, pid)
    }

    /// The device part with the participants' names.
    pub(crate) fn devices(&self) -> Devices<'_> {
        Devices { dev: &self.dev, names: &self.mem }
    }

    /// `authorize(principal, device, path, action, context)` at this snapshot and `now_ms`.
    /// A malformed path is an error; unknown names are denials.
    pub fn authorize_raw(
        &self,
        principal: &str,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<RawAuthorization> {
        self.devices().authorize_raw(principal, device, path, action, now_ms, ctx)
    }

    /// [`Snapshot::authorize_raw`], rendered for clients.
    pub fn authorize(
        &self,
        principal: &str,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<AuthorizeView> {
        self.devices().authorize(principal, device, path, action, now_ms, ctx)
    }

    /// `GET /capabilities/{c}/chain`.
    pub fn capability_chain(&self, id: &str) -> Result<ChainView> {
        self.devices().capability_chain(id)
    }

    /// `GET /capabilities/{c}/dependents`: what revoking `id` would invalidate.
    pub fn capability_dependents(&self, id: &str) -> Result<DependentsView> {
        self.devices().capability_dependents(id)
    }

    /// `GET /schema`: the declared relations, their live edges, and the unexercised ones.
    pub fn schema_view(&self) -> Result<SchemaView> {
        self.devices().schema_view()
    }
}

/// Compares `live` with a rebuild from `records` (both domains, and the provenance graph); the
/// error names the first few differences.
pub(crate) fn agreement(live: &Snapshot, records: &Records) -> Result<String> {
    let (rebuilt, graph) = rebuild(live.store(), records)?;
    crate::memory::verify::graph_agrees(&rebuilt, &graph)?;
    crate::memory::verify::audience_order_agrees(&live.mem)?;
    // The writer never forgets an instant, so a rebuild's timeline is a subset of the live one.
    if !live.timeline.covers(&rebuilt.timeline) {
        return Err(StoreError::Integrity(format!(
            "the timeline misses instants of the records: {} live, {} rebuilt",
            live.timeline.len(),
            rebuilt.timeline.len()
        )));
    }
    let a = live.facts();
    let b = rebuilt.facts();
    if a == b {
        return Ok(format!("revision {}, {} items, {} facts agree", live.revision, live.items.len(), a.len()));
    }
    let only_live: Vec<&String> = a.iter().filter(|x| b.binary_search(x).is_err()).take(5).collect();
    let only_disk: Vec<&String> = b.iter().filter(|x| a.binary_search(x).is_err()).take(5).collect();
    Err(StoreError::Integrity(format!(
        "index disagrees with records: only in index {only_live:?}; only on disk {only_disk:?}"
    )))
}

/// Runs a device write on the device part (`dev`, `dirty`) of the working copy whose memory
/// part is `a`'s.
fn device_write(
    a: &mut Apply<'_>,
    dev: &mut DeviceState,
    dirty: &mut DeviceDirty,
    f: impl FnOnce(&mut DeviceWrite<'_>) -> Result<Written>,
) -> Result<WriteOutcome> {
    let mut w =
        DeviceWrite { dev, names: &a.snap, revision: a.snap.revision, now_ms: a.now_ms, dirty, new_id: &mut *a.new_id };
    let done = f(&mut w)?;
    Ok(WriteOutcome {
        outcome: done.outcome.to_string(),
        ids: done.ids,
        invalidated: done.invalidated,
        already_invalid: done.already_invalid,
        decision: done.decision,
        ..WriteOutcome::default()
    })
}

/// Member removal (SPEC §1.8) across both domains, in one write: the device domain may refuse
/// it (a device, or the owner of one); the memory domain removes the participant from every
/// audience and grant; then what the device domain says of it ends (relation grants revoked,
/// held capabilities revoked and what hangs below them invalidated, answered as
/// `invalidated`).
fn remove_participant(
    a: &mut Apply<'_>,
    dev: &mut DeviceState,
    dirty: &mut DeviceDirty,
    id: &str,
) -> Result<WriteOutcome> {
    let pid = a.snap.pid(id);
    let out = a.remove_participant(id, &|p| dev.removal_refused(p, id))?;
    let Some(pid) = pid else { return Err(StoreError::Integrity(format!("removed `{id}` had no id"))) };
    let name: Arc<str> = Arc::from(id);
    let ended = device_write(a, dev, dirty, |w| w.end_participant(pid, &name))?;
    Ok(WriteOutcome { invalidated: ended.invalidated, ..from_memory(out) })
}

/// A device is also a participant (kind `device`, so it can hold capabilities): validated by
/// the device domain, created as a participant by the memory domain, then filed as a device.
fn create_device(
    a: &mut Apply<'_>,
    dev: &mut DeviceState,
    dirty: &mut DeviceDirty,
    d: NewDevice,
) -> Result<WriteOutcome> {
    // A retry of the create that made the device (same owner and name; the records keep every
    // field of the request) answers as that create did and writes nothing.
    let retry = a.snap.pid(&d.id).is_some_and(|pid| {
        let same_part = a
            .snap
            .part(pid)
            .is_some_and(|r| r.kind == ParticipantKind::Device && r.display.as_deref() == d.name.as_deref());
        same_part && dev.devices.get(&pid).is_some_and(|o| Some(*o) == a.snap.pid(&d.owner))
    });
    if retry {
        return Ok(WriteOutcome { outcome: "created".into(), ids: vec![d.id], ..WriteOutcome::default() });
    }
    let mut owner = None;
    device_write(a, dev, dirty, |w| {
        owner = Some(w.new_device_owner(&d)?);
        Ok(Written::default())
    })?;
    let owner = owner.ok_or_else(|| StoreError::Integrity("new device has no owner".into()))?;
    let out = a
        .insert_participant(NewParticipant { id: d.id.clone(), kind: ParticipantKind::Device, name: d.name })
        .map_err(|e| match e {
            StoreError::ParticipantExists(id) => StoreError::DeviceExists(id),
            e => e,
        })?;
    let pid = a.snap.pid(&d.id).ok_or_else(|| StoreError::Integrity("new device vanished".into()))?;
    device_write(a, dev, dirty, |w| {
        w.add_device(pid, owner);
        Ok(Written::default())
    })?;
    Ok(from_memory(out))
}

/// An item create. One under a client id keeps the digest of its request, so that a retry (same
/// id, same digest) answers as it did and writes nothing; a taken id with another request, or
/// with no digest (an item made otherwise, or before digests were kept), stays `item_exists`.
fn create_item(
    a: &mut Apply<'_>,
    idem: &mut Idempotency,
    dirty: &mut IdempotencyDirty,
    i: crate::memory::model::NewItem,
) -> Result<WriteOutcome> {
    let Some(id) = i.id.clone() else { return a.create_item(i).map(from_memory) };
    let digest = crate::idempotency::item_digest(&i)?;
    if let Some(kept) = a.snap.iid(&id).and_then(|iid| idem.item_digest(iid)) {
        if *kept == digest || *kept == crate::idempotency::item_digest_v1(&i)? {
            return Ok(WriteOutcome { outcome: "created".into(), ids: vec![id], ..WriteOutcome::default() });
        }
    }
    let out = a.create_item(i)?;
    let iid =
        a.snap.iid(&id).ok_or_else(|| StoreError::Storage(format!("item `{id}` was created but is not found")))?;
    idem.record_item(iid, &id, digest, dirty);
    Ok(from_memory(out))
}

/// A memory write's answer, as the client's `WriteOutcome` (the writer adds revision and token).
fn from_memory(o: Outcome) -> WriteOutcome {
    WriteOutcome { outcome: o.outcome, ids: o.ids, reason: o.reason, source: o.source, ..WriteOutcome::default() }
}

/// All records of one store, decoded: the revision record, and each domain's records.
#[derive(Debug, Default, Clone)]
pub struct Records {
    pub meta: Option<MetaRecord>,
    pub participants: Vec<ParticipantRecord>,
    pub identities: Vec<IdentityRecord>,
    pub audiences: Vec<AudienceRecord>,
    pub items: Vec<ItemRecord>,
    pub contents: BTreeMap<String, ContentRecord>,
    pub grants: Vec<GrantRecord>,
    pub devices: DeviceRecords,
    pub idempotency: IdempotencyRecords,
    /// Trust delegations (SPEC §6.2).
    pub trust: Vec<TrustRecord>,
    /// The vector space of the store's embeddings, once fixed.
    pub vector_space: Option<VectorSpace>,
}

impl Records {
    /// Decodes raw key-value pairs; any unreadable or unknown record is an integrity failure.
    pub fn decode(raw: &[(Vec<u8>, Vec<u8>)]) -> Result<Self> {
        let mut r = Records::default();
        for (k, v) in raw {
            r.decode_one(k, v)?;
        }
        r.finish_decode();
        Ok(r)
    }

    /// Decodes one raw record into place (an import decodes as it reads); call
    /// [`Records::finish_decode`] after the last.
    pub(crate) fn decode_one(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
        if k == META_KEY {
            self.meta = Some(dec(k, v)?);
        } else if !self.memory_mut().decode(k, v)? && !self.devices.decode(k, v)? && !self.idempotency.decode(k, v)? {
            return Err(StoreError::Integrity(format!("unknown record `{}`", String::from_utf8_lossy(k))));
        }
        Ok(())
    }

    /// Puts the records in the order a rebuild expects, once every record is decoded.
    pub(crate) fn finish_decode(&mut self) {
        self.memory_mut().finish();
    }

    /// The memory records, borrowed.
    pub fn memory(&self) -> MemoryRecords<'_> {
        MemoryRecords {
            participants: &self.participants,
            identities: &self.identities,
            audiences: &self.audiences,
            items: &self.items,
            contents: &self.contents,
            grants: &self.grants,
            trust: &self.trust,
            vector_space: self.vector_space.as_ref(),
        }
    }

    fn memory_mut(&mut self) -> MemoryRecordsMut<'_> {
        MemoryRecordsMut {
            participants: &mut self.participants,
            identities: &mut self.identities,
            audiences: &mut self.audiences,
            items: &mut self.items,
            contents: &mut self.contents,
            grants: &mut self.grants,
            trust: &mut self.trust,
            vector_space: &mut self.vector_space,
        }
    }
}

impl<'a> From<&'a Records> for MemoryRecords<'a> {
    fn from(r: &'a Records) -> Self {
        r.memory()
    }
}

/// Rebuilds the snapshot and provenance graph of one store from its records: the memory part
/// (with the graph), then the device part, whose participants must all exist; stamped with the
/// revision record's revision. Any record that does not add up refuses the start.
pub(crate) fn rebuild(store: &str, r: &Records) -> Result<(Snapshot, Provenance)> {
    let meta = r.meta.as_ref().ok_or_else(|| StoreError::Integrity(format!("store `{store}` has no meta record")))?;
    let (mut mem, graph) = crate::memory::durable::rebuild(store, r.memory())?;
    mem.revision = meta.revision;
    mem.committed_at_ms = meta.committed_at_ms.unwrap_or(meta.created_at_ms);
    mem.set_incarnation(meta.incarnation.as_deref());
    let pid_of =
        |n: &str| mem.pid(n).ok_or_else(|| StoreError::Integrity(format!("unknown participant `{n}` in records")));
    let dev = crate::devices::records::rebuild(&r.devices, &pid_of)?;
    let idem = crate::idempotency::rebuild(&r.idempotency, &|item| mem.iid(item))?;
    let timeline = Timeline::of_state(&mem, &dev, mem.committed_at_ms);
    Ok((Snapshot { mem, dev, idem, timeline }, graph))
}

/// Rebuilds only the snapshot (the projection a reader uses) from records.
pub fn rebuild_snapshot(store: &str, r: &Records) -> Result<Snapshot> {
    rebuild(store, r).map(|(s, _)| s)
}

/// Encodes whole records as ops, for bulk import (benchmarks, tools) straight into a backend.
/// The caller is responsible for the records being consistent; the next start-up rebuild
/// checks them and refuses to start if they are not.
pub fn encode_records(r: &Records) -> Result<Vec<Op>> {
    let mut ops = Vec::new();
    if let Some(m) = &r.meta {
        ops.push(meta_op(m)?);
    }
    crate::memory::durable::encode_records(r.memory(), &mut ops)?;
    r.devices.encode_all(&mut ops)?;
    r.idempotency.encode_all(&mut ops)?;
    Ok(ops)
}

/// What a revision changed, as the watch stream shows it: the kind of write, the ids it names
/// and the ids it created or changed, never content, attributes or conditions.
fn change(cmd: &Command, out: &WriteOutcome) -> serde_json::Value {
    use serde_json::json;
    let subject = match cmd {
        Command::CreateParticipant(p) => json!({"kind": "participant_created", "participant": p.id}),
        Command::RemoveParticipant { id } => json!({"kind": "participant_removed", "participant": id}),
        Command::BindIdentity(b) => json!({"kind": "identity_bound", "participant": b.participant}),
        Command::CreateItem(i) => json!({"kind": "item_created", "owner": i.owner}),
        Command::Lifecycle { item, request } => {
            json!({"kind": "item_lifecycle", "item": item, "action": request.action})
        }
        Command::Derive { request, issuer } => {
            json!({"kind": "item_derived", "owner": request.owner, "sources": request.sources, "issuer": issuer})
        }
        Command::Grant { item, issuer, .. } => json!({"kind": "grant_created", "item": item, "issuer": issuer}),
        Command::RevokeGrant { grant } => json!({"kind": "grant_revoked", "grant": grant}),
        Command::Consent { grant, subject } => json!({"kind": "consent_given", "grant": grant, "subject": subject}),
        Command::WithdrawConsent { grant, subject } => {
            json!({"kind": "consent_withdrawn", "grant": grant, "subject": subject})
        }
        Command::CreateTrust { trust, issuer } => json!({
            "kind": "trust_created", "owner": trust.owner, "participant": trust.participant, "issuer": issuer
        }),
        Command::RevokeTrust { trust } => json!({"kind": "trust_revoked", "trust": trust}),
        Command::PutSchema(_) => json!({"kind": "schema_put"}),
        Command::CreateDevice(d) => json!({"kind": "device_created", "device": d.id, "owner": d.owner}),
        Command::CreateRelation(r) => json!({
            "kind": "relation_created", "grantor": r.grantor, "relation": r.relation, "grantee": r.grantee
        }),
        Command::RevokeRelation { edge, by } => json!({"kind": "relation_revoked", "edge": edge, "by": by}),
        Command::CreateCapability(c) => json!({
            "kind": "capability_created", "issuer": c.issuer, "holder": c.holder, "device": c.device
        }),
        Command::RevokeCapability { capability, by } => {
            json!({"kind": "capability_revoked", "capability": capability, "by": by})
        }
        Command::ConsumeUse(r) => json!({"kind": "use_consumed", "principal": r.principal, "device": r.device}),
        // The key is the client's business; the change is the keyed command's.
        Command::Keyed { command, .. } => return change(command, out),
    };
    let mut v = subject;
    if let Some(m) = v.as_object_mut() {
        m.insert("outcome".into(), json!(out.outcome));
        if !out.ids.is_empty() {
            m.insert("ids".into(), json!(out.ids));
        }
        if !out.invalidated.is_empty() {
            m.insert("invalidated".into(), json!(out.invalidated));
        }
        if !out.already_invalid.is_empty() {
            m.insert("already_invalid".into(), json!(out.already_invalid));
        }
    }
    v
}
