//! Durable records of the device half of a store (`s`, `d/…`, `r/…`, `k/…`, `u/…`), their encoding
//! from a snapshot, and the rebuild of the device indexes from them.

use std::collections::BTreeMap;
use std::sync::Arc;

use earshot_core::actions::Actions;
use earshot_core::capability::{Constraints, Window};
use earshot_core::condition::Condition;
use earshot_core::path::PathPattern;
use serde::{Deserialize, Serialize};

use super::apply::DeviceDirty;
use super::{CapRec, Cid, DeviceState, EdgeRec, Eid, Removed, Uid, UseRec};
use crate::common::{Names, Pid};
use crate::error::{Result, StoreError};
use crate::kernel::backend::{key, Op};

pub(crate) const SCHEMA_KEY: &[u8] = b"s";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SchemaRecord {
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceRecord {
    pub id: String,
    pub owner: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintsRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_after_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uses: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EdgeRecord {
    pub id: String,
    pub seq: u32,
    pub grantor: String,
    pub relation: String,
    pub grantee: String,
    #[serde(default)]
    pub constraints: ConstraintsRecord,
    #[serde(default)]
    pub uses_left: Option<u32>,
    pub revoked: bool,
    pub created_rev: u64,
    pub created_at_ms: i64,
    /// The revision that removed the grantor, or the grantee, (SPEC §1.8), if it has been: the name stays,
    /// and is never read as a later participant of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grantor_removed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grantee_removed: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapabilityRecord {
    pub id: String,
    pub seq: u32,
    pub holder: String,
    pub issuer: String,
    pub device: String,
    pub paths: Vec<String>,
    pub actions: Vec<String>,
    #[serde(default)]
    pub constraints: ConstraintsRecord,
    #[serde(default)]
    pub uses_left: Option<u32>,
    #[serde(default)]
    pub parent: Option<String>,
    pub revoked: bool,
    pub created_rev: u64,
    pub created_at_ms: i64,
    /// The revision that removed the holder, or the issuer, (SPEC §1.8), if it has been: the name stays,
    /// and is never read as a later participant of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_removed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_removed: Option<u64>,
}

/// An allowed explicit use by someone other than the device's owner (SPEC §2.4), kept for the
/// aggregation guard (SPEC §6.4). Key `u/<id>`; ids are `use-<seq + 1>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UseRecord {
    pub id: String,
    pub seq: u32,
    pub principal: String,
    pub device: String,
    /// The device's owner when the use was made.
    pub grantor: String,
    pub path: String,
    pub action: String,
    pub at_ms: i64,
    pub created_rev: u64,
    /// The revision that removed the principal (SPEC §1.8), if it has been: the name stays,
    /// and is never read as a later participant of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal_removed: Option<u64>,
}

/// Every device record of one store, decoded.
#[derive(Debug, Clone, Default)]
pub struct DeviceRecords {
    pub schema: Option<SchemaRecord>,
    pub devices: Vec<DeviceRecord>,
    pub edges: Vec<EdgeRecord>,
    pub capabilities: Vec<CapabilityRecord>,
    pub uses: Vec<UseRecord>,
}

fn to_record(c: &Constraints) -> ConstraintsRecord {
    ConstraintsRecord {
        not_before_ms: c.not_before_ms,
        not_after_ms: c.not_after_ms,
        uses: c.uses,
        condition: c.condition.as_ref().map(|x| x.source().to_string()),
    }
}

fn from_record(c: &ConstraintsRecord, owner: &str) -> Result<Constraints> {
    let condition = c
        .condition
        .as_deref()
        // `restore`, not `compile`: a condition stored under wider bounds still loads (and
        // denies at every use), so tightening the bounds never stops a store from starting.
        .map(Condition::restore)
        .transpose()
        .map_err(|e| StoreError::Integrity(format!("`{owner}` has a condition that no longer compiles: {e}")))?;
    Ok(Constraints { not_before_ms: c.not_before_ms, not_after_ms: c.not_after_ms, uses: c.uses, condition })
}

fn enc<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| StoreError::Storage(format!("encode: {e}")))
}

impl DeviceRecords {
    /// Decodes one device record into place; `false` if `k` is not a device record.
    pub(crate) fn decode(&mut self, k: &[u8], v: &[u8]) -> Result<bool> {
        fn dec<T: for<'de> Deserialize<'de>>(k: &[u8], v: &[u8]) -> Result<T> {
            serde_json::from_slice(v).map_err(|e| {
                StoreError::Integrity(format!("record `{}` is unreadable: {e}", String::from_utf8_lossy(k)))
            })
        }
        match k {
            SCHEMA_KEY => self.schema = Some(dec(k, v)?),
            [b'd', b'/', ..] => self.devices.push(dec(k, v)?),
            [b'r', b'/', ..] => self.edges.push(dec(k, v)?),
            [b'k', b'/', ..] => self.capabilities.push(dec(k, v)?),
            [b'u', b'/', ..] => self.uses.push(dec(k, v)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whole records as ops (bulk import).
    pub(crate) fn encode_all(&self, ops: &mut Vec<Op>) -> Result<()> {
        if let Some(s) = &self.schema {
            ops.push(Op::Put(SCHEMA_KEY.to_vec(), enc(s)?));
        }
        for d in &self.devices {
            ops.push(Op::Put(key(b'd', &d.id), enc(d)?));
        }
        for e in &self.edges {
            ops.push(Op::Put(key(b'r', &e.id), enc(e)?));
        }
        for c in &self.capabilities {
            ops.push(Op::Put(key(b'k', &c.id), enc(c)?));
        }
        for u in &self.uses {
            ops.push(Op::Put(key(b'u', &u.id), enc(u)?));
        }
        Ok(())
    }
}

/// Encodes the device records `dirty` names from the new snapshot.
/// Encodes the device records `dirty` names from the device part `d`; participants are named
/// through `names`.
pub(crate) fn encode(d: &DeviceState, names: &dyn Names, dirty: &DeviceDirty, ops: &mut Vec<Op>) -> Result<()> {
    if dirty.schema {
        if let Some(schema) = &d.schema {
            ops.push(Op::Put(SCHEMA_KEY.to_vec(), enc(&SchemaRecord { source: schema.source.clone() })?));
        }
    }
    for &pid in &dirty.devices {
        let Some(owner) = d.devices.get(&pid) else { continue };
        let id = names.part_name(pid).to_string();
        let rec = DeviceRecord { id: id.clone(), owner: names.part_name(*owner).to_string() };
        ops.push(Op::Put(key(b'd', &id), enc(&rec)?));
    }
    for &e in &dirty.edges {
        let Some(r) = d.edge(e) else { continue };
        let rec = EdgeRecord {
            id: r.name.to_string(),
            seq: e,
            grantor: d.party_name(names, r.grantor).to_string(),
            relation: r.relation.to_string(),
            grantee: d.party_name(names, r.grantee).to_string(),
            constraints: to_record(&r.constraints),
            uses_left: r.uses_left,
            revoked: r.revoked,
            created_rev: r.created_rev,
            created_at_ms: r.created_at_ms,
            grantor_removed: d.removed_in(r.grantor),
            grantee_removed: d.removed_in(r.grantee),
        };
        ops.push(Op::Put(key(b'r', &r.name), enc(&rec)?));
    }
    for &c in &dirty.caps {
        let Some(r) = d.cap(c) else { continue };
        let rec = CapabilityRecord {
            id: r.name.to_string(),
            seq: c,
            holder: d.party_name(names, r.holder).to_string(),
            issuer: d.party_name(names, r.issuer).to_string(),
            device: names.part_name(r.device).to_string(),
            paths: r.paths.iter().map(|p| p.to_string()).collect(),
            actions: r.actions.to_vec(),
            constraints: to_record(&r.constraints),
            uses_left: r.uses_left,
            parent: r.parent.and_then(|p| d.cap(p)).map(|p| p.name.to_string()),
            revoked: r.revoked,
            created_rev: r.created_rev,
            created_at_ms: r.created_at_ms,
            holder_removed: d.removed_in(r.holder),
            issuer_removed: d.removed_in(r.issuer),
        };
        ops.push(Op::Put(key(b'k', &r.name), enc(&rec)?));
    }
    for &u in &dirty.uses {
        let Some(r) = d.uses.get(u as usize) else { continue };
        let rec = UseRecord {
            id: r.name.to_string(),
            seq: u,
            principal: d.party_name(names, r.principal).to_string(),
            device: names.part_name(r.device).to_string(),
            grantor: names.part_name(r.grantor).to_string(),
            path: r.path.to_string(),
            action: r.action.to_string(),
            at_ms: r.at_ms,
            created_rev: r.created_rev,
            principal_removed: d.removed_in(r.principal),
        };
        ops.push(Op::Put(key(b'u', &r.name), enc(&rec)?));
    }
    Ok(())
}

fn bad(msg: String) -> StoreError {
    StoreError::Integrity(msg)
}

/// Rebuilds the device indexes from records, checking every reference, the narrowing of every
/// delegation and that no live edge names an undeclared relation.
pub(crate) fn rebuild(r: &DeviceRecords, pid_of: &dyn Fn(&str) -> Result<Pid>) -> Result<DeviceState> {
    let mut st = DeviceState::default();
    // A removed participant is no participant now: each (name, removal) gets an id from the top
    // of the id space, the same for every record that names it, and never a later
    // participant's of that name.
    let mut ghosts: BTreeMap<(String, u64), Pid> = BTreeMap::new();
    let mut party = |st: &mut DeviceState, name: &str, removed: Option<u64>| -> Result<Pid> {
        let Some(revision) = removed else { return pid_of(name) };
        earshot_core::validate_id(name)
            .map_err(|e| bad(format!("a device record names a malformed participant: {e}")))?;
        let next = Pid::MAX - 1 - ghosts.len() as Pid;
        let pid = *ghosts.entry((name.to_string(), revision)).or_insert(next);
        st.removed.insert(pid, Removed { name: Arc::from(name), revision });
        Ok(pid)
    };
    if let Some(s) = &r.schema {
        let schema = earshot_core::schema::parse(&s.source).map_err(|p| {
            bad(format!("stored schema no longer parses: {}", p.first().map(|x| x.to_string()).unwrap_or_default()))
        })?;
        st.schema = Some(Arc::new(schema));
    }
    for d in &r.devices {
        let (pid, owner) = (pid_of(&d.id)?, pid_of(&d.owner)?);
        if st.devices.insert(pid, owner).is_some() {
            return Err(bad(format!("device `{}` stored twice", d.id)));
        }
    }
    let mut edges = r.edges.clone();
    edges.sort_by_key(|e| e.seq);
    for (n, e) in edges.iter().enumerate() {
        if e.seq as usize != n {
            return Err(bad(format!("relation grant sequence has a gap at {n}")));
        }
        let (grantor, grantee) =
            (party(&mut st, &e.grantor, e.grantor_removed)?, party(&mut st, &e.grantee, e.grantee_removed)?);
        if !e.revoked && (e.grantor_removed.is_some() || e.grantee_removed.is_some()) {
            return Err(bad(format!("live relation grant `{}` names a removed participant", e.id)));
        }
        if !e.revoked && st.schema.as_ref().and_then(|s| s.relation(&e.relation)).is_none() {
            return Err(bad(format!("live relation grant `{}` names undeclared relation `{}`", e.id, e.relation)));
        }
        let name: Arc<str> = Arc::from(e.id.as_str());
        st.edges.push_back(EdgeRec {
            name: name.clone(),
            grantor,
            relation: Arc::from(e.relation.as_str()),
            grantee,
            constraints: Arc::new(from_record(&e.constraints, &e.id)?),
            uses_left: e.uses_left,
            revoked: e.revoked,
            created_rev: e.created_rev,
            created_at_ms: e.created_at_ms,
        });
        if st.edge_ids.insert(name, e.seq as Eid).is_some() {
            return Err(bad(format!("relation grant `{}` stored twice", e.id)));
        }
        let mut list = st.edges_by_pair.get(&(grantor, grantee)).map(|l| l.to_vec()).unwrap_or_default();
        list.push(e.seq);
        st.edges_by_pair.insert((grantor, grantee), list.into());
    }
    let mut caps = r.capabilities.clone();
    caps.sort_by_key(|c| c.seq);
    let mut children: std::collections::BTreeMap<Cid, Vec<Cid>> = std::collections::BTreeMap::new();
    for (n, c) in caps.iter().enumerate() {
        if c.seq as usize != n {
            return Err(bad(format!("capability sequence has a gap at {n}")));
        }
        let (holder, issuer, device) = (
            party(&mut st, &c.holder, c.holder_removed)?,
            party(&mut st, &c.issuer, c.issuer_removed)?,
            pid_of(&c.device)?,
        );
        if !c.revoked && c.holder_removed.is_some() {
            return Err(bad(format!("live capability `{}` is held by a removed participant", c.id)));
        }
        let owner = st
            .devices
            .get(&device)
            .copied()
            .ok_or_else(|| bad(format!("capability `{}` names unknown device", c.id)))?;
        let mut paths = Vec::with_capacity(c.paths.len());
        for p in &c.paths {
            paths.push(PathPattern::parse(p).map_err(|e| bad(format!("capability `{}` has a bad path: {e}", c.id)))?);
        }
        let constraints = from_record(&c.constraints, &c.id)?;
        let actions =
            Actions::new(&c.actions).map_err(|e| bad(format!("capability `{}` has bad actions: {e}", c.id)))?;
        let (parent, depth) = match &c.parent {
            None if issuer == owner => (None, 1u8),
            None => return Err(bad(format!("root capability `{}` was not issued by the device's owner", c.id))),
            Some(p) => {
                let pc = *st
                    .cap_ids
                    .get(p.as_str())
                    .ok_or_else(|| bad(format!("capability `{}` names unknown parent", c.id)))?;
                let pr = st.cap(pc).ok_or_else(|| bad(format!("capability `{}` names unknown parent", c.id)))?;
                let parent_scope = earshot_core::capability::Scope {
                    device: pr.device,
                    paths: &pr.paths,
                    actions: &pr.actions,
                    constraints: &pr.constraints,
                    uses_left: pr.constraints.uses,
                };
                let child_scope = earshot_core::capability::Scope {
                    device,
                    paths: &paths,
                    actions: &actions,
                    constraints: &constraints,
                    uses_left: constraints.uses,
                };
                if pr.holder != issuer || !earshot_core::capability::widenings(&child_scope, &parent_scope).is_empty() {
                    return Err(bad(format!("capability `{}` is not a valid delegation of `{p}`", c.id)));
                }
                children.entry(pc).or_default().push(c.seq);
                (Some(pc), pr.depth.saturating_add(1))
            }
        };
        st.trie.file(holder, device, &paths, c.seq);
        let name: Arc<str> = Arc::from(c.id.as_str());
        st.caps.push_back(CapRec {
            name: name.clone(),
            holder,
            issuer,
            device,
            paths: paths.into(),
            actions,
            window: Window::of(&constraints),
            constraints: Arc::new(constraints),
            uses_left: c.uses_left,
            parent,
            depth,
            revoked: c.revoked,
            created_rev: c.created_rev,
            created_at_ms: c.created_at_ms,
        });
        if st.cap_ids.insert(name, c.seq as Cid).is_some() {
            return Err(bad(format!("capability `{}` stored twice", c.id)));
        }
    }
    for (p, kids) in children {
        st.children.insert(p, kids.into());
    }
    let mut uses = r.uses.clone();
    uses.sort_by_key(|u| u.seq);
    for (n, u) in uses.iter().enumerate() {
        if u.seq as usize != n || u.id != super::use_name(u.seq) {
            return Err(bad(format!("use sequence has a gap or a misnamed use at {n} (`{}`)", u.id)));
        }
        let (principal, device, grantor) =
            (party(&mut st, &u.principal, u.principal_removed)?, pid_of(&u.device)?, pid_of(&u.grantor)?);
        earshot_core::path::Path::parse(&u.path).map_err(|e| bad(format!("use `{}` has a bad path: {e}", u.id)))?;
        if !st.devices.contains_key(&device) {
            return Err(bad(format!("use `{}` names unknown device `{}`", u.id, u.device)));
        }
        st.record_use(UseRec {
            name: Arc::from(u.id.as_str()),
            principal,
            device,
            grantor,
            path: Arc::from(u.path.as_str()),
            action: Arc::from(u.action.as_str()),
            at_ms: u.at_ms,
            created_rev: u.created_rev,
        }) as Uid;
    }
    Ok(st)
}
