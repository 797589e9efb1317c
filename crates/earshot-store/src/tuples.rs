//! The store's graph read as typed relationship tuples `resource#relation@subject`, the way
//! `zed relationship read` and OpenFGA's Read show theirs, filtered by resource type and id,
//! relation, and subject type and id, one page at a time at one snapshot.
//!
//! Tuple families, in the order a read walks them (each in its own stable order):
//!
//! | family | resource | relation | subject | order | indexed by |
//! |---|---|---|---|---|---|
//! | 0 | `audience` | `member` | `participant` | digest, member id | resource id, subject id; unfiltered walks the digest order |
//! | 1 | `item` | `origin` | `audience` | item creation | resource id, subject id |
//! | 2 | `item` | `granted` | `audience` | grant creation | resource id, subject id |
//! | 3 | `item` | `derived_from` | `item` | item creation, source | resource id (subject id scans) |
//! | 4 | `device` | `owner` | `participant` | device id | resource id (subject id scans) |
//! | 5 | `participant` | `relation:<name>` | `participant` | edge creation | both ids together (else scans) |
//! | 6 | `capability` | `delegated_from` | `capability` | capability creation | resource id, subject id |
//! | 7 | `capability` | `held_by` | `participant` | capability creation | resource id (subject id scans) |
//!
//! "Scans" means the family's records are walked from the cursor until the page is full; the
//! walk stops there, or after `SCAN_BUDGET` records looked at (`lists::limits`), when the page
//! ends early (fewer results than `limit`, possibly none) with a cursor to continue from, so a
//! page never costs more than the budget whatever the filter matches.
//! Family 0 is keyed by audience digest and member id (interned ids are reassigned by a
//! rebuild): the snapshot keeps the live digests in order (`aud_order`), so a page walks from
//! the cursor's digest and sorts only the members of each audience it reaches. Family 4 (few
//! records: one per device) is collected and sorted per page.

use serde::{Deserialize, Serialize};

use crate::compose::Snapshot;
use crate::error::{Result, StoreError};
use crate::lists::limits::SCAN_BUDGET;
use crate::lists::{seq_key, Page, Pager, Paging};
use crate::memory::model::format_time;
use crate::memory::snapshot::{Aid, Members};

/// One end of a tuple.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectRef {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// A relationship tuple, with what the relation carries beside its ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tuple {
    pub resource: ObjectRef,
    pub relation: String,
    pub subject: ObjectRef,
    /// `granted`: the grant's id.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub grant: Option<String>,
    /// `granted`: when the grant stops counting.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expires_at: Option<String>,
    /// `relation:<name>`: the edge's id.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub edge: Option<String>,
    /// `delegated_from`, `held_by`: the device the capability is for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub device: Option<String>,
    /// `granted`, `relation:<name>`, `delegated_from`, `held_by`: whether it was revoked
    /// (revoked records stay, as they do in the store).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub revoked: Option<bool>,
    /// `granted`: whether the grant counts now (not revoked, not expired).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub live: Option<bool>,
    /// `granted`: present (`true`) while the grant still waits for a subject's consent (SPEC
    /// §6.3): it then admits nothing, live or not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub consent_pending: Option<bool>,
}

impl Tuple {
    fn new(resource: (&str, String), relation: impl Into<String>, subject: (&str, String)) -> Self {
        Tuple {
            resource: ObjectRef { kind: resource.0.into(), id: resource.1 },
            relation: relation.into(),
            subject: ObjectRef { kind: subject.0.into(), id: subject.1 },
            grant: None,
            expires_at: None,
            edge: None,
            device: None,
            revoked: None,
            live: None,
            consent_pending: None,
        }
    }
}

/// `GET /relationships` filters; each is optional, an id needs its type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TupleFilter {
    #[serde(default)]
    pub resource_type: Option<String>,
    #[serde(default)]
    pub resource_id: Option<String>,
    #[serde(default)]
    pub relation: Option<String>,
    #[serde(default)]
    pub subject_type: Option<String>,
    #[serde(default)]
    pub subject_id: Option<String>,
}

const RESOURCE_TYPES: [&str; 5] = ["audience", "item", "device", "participant", "capability"];
const SUBJECT_TYPES: [&str; 4] = ["participant", "audience", "item", "capability"];

/// (resource type, relation, subject type) of each family; `relation:` is family 5's prefix.
const FAMILIES: [(&str, &str, &str); 8] = [
    ("audience", "member", "participant"),
    ("item", "origin", "audience"),
    ("item", "granted", "audience"),
    ("item", "derived_from", "item"),
    ("device", "owner", "participant"),
    ("participant", "relation:", "participant"),
    ("capability", "delegated_from", "capability"),
    ("capability", "held_by", "participant"),
];

/// Collects a page across families: keys are `[family] ++ position`, so the concatenation of
/// the families in order is in key order.
struct Sink<'p> {
    pager: &'p Pager,
    out: Vec<(Vec<u8>, Tuple)>,
    /// Records looked at past the cursor (bounded by [`SCAN_BUDGET`]).
    looked: usize,
    /// The end of the last record looked at: every position up to it has been read.
    done_upto: Option<Vec<u8>>,
    /// Whether the page stopped at the scan budget.
    spent: bool,
}

impl Sink<'_> {
    /// Called before reading each record, with its last position: false once the scan budget
    /// is spent (the page then ends after the records read so far).
    fn look(&mut self, upto: Vec<u8>) -> bool {
        if !self.pager.past(&upto) {
            return true;
        }
        if self.looked >= SCAN_BUDGET {
            self.spent = true;
            return false;
        }
        self.looked += 1;
        if self.done_upto.as_ref().is_none_or(|d| *d < upto) {
            self.done_upto = Some(upto);
        }
        true
    }
    fn full(&self) -> bool {
        self.out.len() > self.pager.limit
    }
    /// Adds one tuple in key order; false once the page (plus one, to know more remain) is full.
    fn push(&mut self, key: Vec<u8>, t: impl FnOnce() -> Option<Tuple>) -> bool {
        if self.full() {
            return false;
        }
        if self.pager.past(&key) {
            if let Some(t) = t() {
                self.out.push((key, t));
            }
        }
        !self.full()
    }
    /// The sequence number family `f`'s walk starts at.
    fn start(&self, f: u8) -> u32 {
        match self.pager.after.as_deref() {
            Some([g, a, b, c, d, ..]) if *g == f => u32::from_be_bytes([*a, *b, *c, *d]),
            _ => 0,
        }
    }
}

fn key(f: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = vec![f];
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            // Ids never hold a NUL, so `a\0b` sorts by `a`, then `b`.
            k.push(0);
        }
        k.extend_from_slice(p);
    }
    k
}

fn seq(f: u8, a: u32, b: u32) -> Vec<u8> {
    let mut k = vec![f];
    k.extend(seq_key(a));
    k.extend(seq_key(b));
    k
}

impl Snapshot {
    /// `GET /relationships`: one page of the tuples the filter selects.
    pub fn read_tuples(&self, f: &TupleFilter, paging: &Paging, now_ms: i64) -> Result<Page<Tuple>> {
        let pager = Pager::new("relationships", self.store(), self.incarnation(), paging)?;
        check_filter(f)?;
        let mut sink = Sink { pager: &pager, out: Vec::new(), looked: 0, done_upto: None, spent: false };
        let after_family = pager.after.as_deref().and_then(|a| a.first().copied()).unwrap_or(0);
        for (n, (rt, rel, st)) in FAMILIES.iter().enumerate() {
            let fam = u8::try_from(n).unwrap_or(u8::MAX);
            let rel_ok = match &f.relation {
                None => true,
                Some(r) if fam == 5 => r.starts_with(rel),
                Some(r) => r == rel,
            };
            if fam < after_family
                || !rel_ok
                || f.resource_type.as_ref().is_some_and(|t| t != rt)
                || f.subject_type.as_ref().is_some_and(|t| t != st)
            {
                continue;
            }
            let go = match fam {
                0 => self.members(f, &mut sink),
                1 => self.origins(f, &mut sink),
                2 => self.granted(f, &mut sink, now_ms),
                3 => self.derivations(f, &mut sink),
                4 => self.owners(f, &mut sink),
                5 => self.edges(f, &mut sink),
                _ => self.capabilities(f, fam, &mut sink),
            };
            if !go {
                break;
            }
        }
        if sink.spent {
            return Ok(pager.finish_partial(sink.out, sink.done_upto));
        }
        Ok(pager.finish(sink.out))
    }

    fn aid_of(&self, digest: &str) -> Option<Aid> {
        let d = earshot_core::AudienceDigest::from_hex(digest)?;
        self.aud_by_digest.get(&d).copied().filter(|a| self.aud(*a).is_some_and(|r| r.live))
    }

    /// Family 0, `audience#member@participant`, by (digest, member id). Unfiltered, the
    /// audiences are walked in digest order from the cursor's (`aud_order`), so a page costs
    /// O(log audiences + page + the members of the audiences it touches), not a sort of every
    /// membership; by subject, that participant's audiences are sorted (one posting).
    fn members(&self, f: &TupleFilter, sink: &mut Sink<'_>) -> bool {
        // The digest the cursor stands in, if it is in this family.
        let from = match sink.pager.after.as_deref() {
            Some([0, rest @ ..]) => {
                let hex = rest.split(|b| *b == 0).next().unwrap_or_default();
                std::str::from_utf8(hex).ok().and_then(earshot_core::AudienceDigest::from_hex)
            }
            _ => None,
        };
        let auds: Box<dyn Iterator<Item = Aid> + '_> = match (&f.resource_id, &f.subject_id) {
            (Some(d), _) => Box::new(self.aid_of(d).into_iter()),
            (None, Some(p)) => {
                let mut v: Vec<(earshot_core::AudienceDigest, Aid)> = match self.pid(p) {
                    Some(pid) => self
                        .part_auds
                        .get(&pid)
                        .map(|s| s.iter().filter_map(|a| self.aud(*a).map(|r| (r.digest, *a))).collect())
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                v.sort_unstable();
                v.retain(|(d, _)| from.is_none_or(|f| *d >= f));
                Box::new(v.into_iter().map(|(_, a)| a))
            }
            (None, None) => {
                let digests: Box<dyn Iterator<Item = &earshot_core::AudienceDigest>> = match from {
                    Some(d) => Box::new(self.aud_order.range(d..)),
                    None => Box::new(self.aud_order.iter()),
                };
                Box::new(digests.filter_map(|d| self.aud_by_digest.get(d).copied()))
            }
        };
        for aid in auds {
            let Some(a) = self.aud(aid).filter(|a| a.live) else { continue };
            let Members::Only(members) = &a.members else { continue };
            let digest = a.digest.to_hex();
            let mut names: Vec<std::sync::Arc<str>> = members.iter().map(|p| self.part_name(*p)).collect();
            names.sort_unstable();
            for name in names {
                if f.subject_id.as_deref().is_some_and(|s| s != &*name) {
                    continue;
                }
                let k = key(0, &[digest.as_bytes(), name.as_bytes()]);
                if !sink.look(k.clone()) {
                    return false;
                }
                let t = || Some(Tuple::new(("audience", digest.clone()), "member", ("participant", name.to_string())));
                if !sink.push(k, t) {
                    return false;
                }
            }
        }
        true
    }

    /// Family 1, `item#origin@audience`, in item creation order.
    fn origins(&self, f: &TupleFilter, sink: &mut Sink<'_>) -> bool {
        let start = sink.start(1);
        let ids: Box<dyn Iterator<Item = u32>> = match (&f.resource_id, &f.subject_id) {
            (Some(i), _) => Box::new(self.iid(i).into_iter()),
            (None, Some(d)) => match self.aid_of(d).and_then(|a| self.aud_items.get(&a)) {
                Some(p) => Box::new(p.iter().skip(p.lower_bound(start)).collect::<Vec<_>>().into_iter()),
                None => Box::new(std::iter::empty()),
            },
            (None, None) => Box::new(start..u32::try_from(self.items.len()).unwrap_or(u32::MAX)),
        };
        for iid in ids {
            if !sink.look(seq(1, iid, 0)) {
                return false;
            }
            let Some(r) = self.item(iid) else { continue };
            let Some(a) = self.aud(r.aud) else { continue };
            let digest = a.digest.to_hex();
            if f.subject_id.as_ref().is_some_and(|d| *d != digest) {
                continue;
            }
            let t = || Some(Tuple::new(("item", r.name.to_string()), "origin", ("audience", digest)));
            if !sink.push(seq(1, iid, 0), t) {
                return false;
            }
        }
        true
    }

    /// Family 2, `item#granted@audience`, in grant creation order.
    fn granted(&self, f: &TupleFilter, sink: &mut Sink<'_>, now_ms: i64) -> bool {
        let start = sink.start(2);
        let ids: Vec<u32> = match (&f.resource_id, &f.subject_id) {
            (Some(i), _) => {
                let mut v = self.iid(i).and_then(|i| self.item(i)).map(|r| r.grants().to_vec()).unwrap_or_default();
                v.sort_unstable();
                v
            }
            (None, Some(d)) => match self.aid_of(d).and_then(|a| self.aud_grants.get(&a)) {
                Some(p) => p.iter().skip(p.lower_bound(start)).collect(),
                None => Vec::new(),
            },
            (None, None) => (start..u32::try_from(self.grants.len()).unwrap_or(u32::MAX)).collect(),
        };
        for gid in ids {
            if !sink.look(seq(2, gid, 0)) {
                return false;
            }
            let Some(g) = self.grant(gid) else { continue };
            let Some(a) = self.aud(g.aud) else { continue };
            let digest = a.digest.to_hex();
            if f.subject_id.as_ref().is_some_and(|d| *d != digest) {
                continue;
            }
            let item = self.item(g.item).map(|r| r.name.to_string()).unwrap_or_default();
            let t = || {
                let mut t = Tuple::new(("item", item), "granted", ("audience", digest));
                t.grant = Some(g.name.to_string());
                t.expires_at = g.expires_at_ms.map(format_time);
                t.revoked = Some(g.revoked);
                t.live = Some(g.is_live(now_ms));
                t.consent_pending = g.is_pending().then_some(true);
                Some(t)
            };
            if !sink.push(seq(2, gid, 0), t) {
                return false;
            }
        }
        true
    }

    /// Family 3, `item#derived_from@item`, by (item creation, source position). The subject
    /// filter scans: the snapshot keeps sources per item, not derivations per source.
    fn derivations(&self, f: &TupleFilter, sink: &mut Sink<'_>) -> bool {
        let start = sink.start(3);
        let ids: Box<dyn Iterator<Item = u32>> = match &f.resource_id {
            Some(i) => Box::new(self.iid(i).into_iter()),
            None => Box::new(start..u32::try_from(self.items.len()).unwrap_or(u32::MAX)),
        };
        for iid in ids {
            if !sink.look(seq(3, iid, u32::MAX)) {
                return false;
            }
            let Some(r) = self.item(iid) else { continue };
            for (n, s) in r.sources().iter().enumerate() {
                let Some(src) = self.item(*s) else { continue };
                if f.subject_id.as_deref().is_some_and(|x| x != &*src.name) {
                    continue;
                }
                let n = u32::try_from(n).unwrap_or(u32::MAX);
                let t =
                    || Some(Tuple::new(("item", r.name.to_string()), "derived_from", ("item", src.name.to_string())));
                if !sink.push(seq(3, iid, n), t) {
                    return false;
                }
            }
        }
        true
    }

    /// Family 4, `device#owner@participant`, by device id.
    fn owners(&self, f: &TupleFilter, sink: &mut Sink<'_>) -> bool {
        let mut rows: Vec<(Vec<u8>, String, String)> = Vec::new();
        let mut add = |d: u32, o: u32| {
            let (dn, on) = (self.part_name(d), self.part_name(o));
            if f.subject_id.as_deref().is_some_and(|s| s != &*on) {
                return;
            }
            let k = key(4, &[dn.as_bytes()]);
            if sink.pager.past(&k) {
                rows.push((k, dn.to_string(), on.to_string()));
            }
        };
        match &f.resource_id {
            Some(d) => {
                if let Some((d, o)) = self.pid(d).and_then(|d| self.dev.devices.get(&d).map(|o| (d, *o))) {
                    add(d, o);
                }
            }
            None => self.dev.devices.iter().for_each(|(d, o)| add(*d, *o)),
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, d, o) in rows {
            if !sink.push(k, || Some(Tuple::new(("device", d), "owner", ("participant", o)))) {
                return false;
            }
        }
        true
    }

    /// Family 5, `participant#relation:<name>@participant` (grantor, grantee), in edge
    /// creation order. Indexed only when both ends are named (the pair's list); else scans.
    fn edges(&self, f: &TupleFilter, sink: &mut Sink<'_>) -> bool {
        let start = sink.start(5);
        let (grantor, grantee) = (f.resource_id.as_deref(), f.subject_id.as_deref());
        let ids: Vec<u32> = match (grantor.map(|g| self.pid(g)), grantee.map(|g| self.pid(g))) {
            (Some(None), _) | (_, Some(None)) => Vec::new(),
            (Some(Some(g)), Some(Some(e))) => {
                let mut v = self.dev.edges_by_pair.get(&(g, e)).map(|l| l.to_vec()).unwrap_or_default();
                v.sort_unstable();
                v
            }
            _ => (start..u32::try_from(self.dev.edges.len()).unwrap_or(u32::MAX)).collect(),
        };
        for e in ids {
            if !sink.look(seq(5, e, 0)) {
                return false;
            }
            let Some(r) = self.dev.edge(e) else { continue };
            let relation = format!("relation:{}", r.relation);
            let (gn, en) = (self.party_name(r.grantor), self.party_name(r.grantee));
            if grantor.is_some_and(|g| g != &*gn)
                || grantee.is_some_and(|g| g != &*en)
                || f.relation.as_ref().is_some_and(|x| *x != relation)
            {
                continue;
            }
            let t = || {
                let mut t = Tuple::new(("participant", gn.to_string()), relation, ("participant", en.to_string()));
                t.edge = Some(r.name.to_string());
                t.revoked = Some(r.revoked);
                Some(t)
            };
            if !sink.push(seq(5, e, 0), t) {
                return false;
            }
        }
        true
    }

    /// Families 6 (`capability#delegated_from@capability`) and 7
    /// (`capability#held_by@participant`), in capability creation order. Indexed by the
    /// resource id, and family 6 by the subject id (the parent's children); else scans.
    fn capabilities(&self, f: &TupleFilter, fam: u8, sink: &mut Sink<'_>) -> bool {
        let start = sink.start(fam);
        let by_id = |id: &str| self.dev.cap_ids.get(id).copied();
        let ids: Vec<u32> = match (&f.resource_id, &f.subject_id) {
            (Some(c), _) => by_id(c).into_iter().collect(),
            (None, Some(p)) if fam == 6 => {
                let mut v = by_id(p).and_then(|p| self.dev.children.get(&p)).map(|l| l.to_vec()).unwrap_or_default();
                v.sort_unstable();
                v
            }
            _ => (start..u32::try_from(self.dev.caps.len()).unwrap_or(u32::MAX)).collect(),
        };
        for c in ids {
            if !sink.look(seq(fam, c, 0)) {
                return false;
            }
            let Some(r) = self.dev.cap(c) else { continue };
            let subject = if fam == 6 {
                match r.parent.and_then(|p| self.dev.cap(p)) {
                    Some(p) => ("capability", p.name.to_string()),
                    None => continue,
                }
            } else {
                ("participant", self.party_name(r.holder).to_string())
            };
            if f.subject_id.as_ref().is_some_and(|s| *s != subject.1) {
                continue;
            }
            let relation = if fam == 6 { "delegated_from" } else { "held_by" };
            let t = || {
                let mut t = Tuple::new(("capability", r.name.to_string()), relation, subject);
                t.device = Some(self.part_name(r.device).to_string());
                t.revoked = Some(r.revoked);
                Some(t)
            };
            if !sink.push(seq(fam, c, 0), t) {
                return false;
            }
        }
        true
    }
}

/// Refuses a filter that cannot mean anything: an unknown type, an id without its type, a
/// malformed id or digest, an unknown relation.
fn check_filter(f: &TupleFilter) -> Result<()> {
    let check_end = |ty_field: &'static str,
                     id_field: &'static str,
                     ty: &Option<String>,
                     id: &Option<String>,
                     types: &[&str]|
     -> Result<()> {
        if let Some(t) = ty {
            if !types.contains(&t.as_str()) {
                return Err(StoreError::input(ty_field, format!("must be one of {}", types.join(", "))));
            }
        }
        match (ty.as_deref(), id) {
            (None, Some(_)) => Err(StoreError::input(id_field, format!("needs `{ty_field}`"))),
            (Some("audience"), Some(d)) if earshot_core::AudienceDigest::from_hex(d).is_none() => {
                Err(StoreError::input(id_field, "an audience id is its digest (64 hex digits)"))
            }
            (Some("audience"), _) | (_, None) => Ok(()),
            (Some(_), Some(id)) => crate::error::check_id(id_field, id),
        }
    };
    check_end("resource_type", "resource_id", &f.resource_type, &f.resource_id, &RESOURCE_TYPES)?;
    check_end("subject_type", "subject_id", &f.subject_type, &f.subject_id, &SUBJECT_TYPES)?;
    if let Some(r) = &f.relation {
        let known = FAMILIES.iter().any(|(_, rel, _)| r == rel && *rel != "relation:")
            || r.strip_prefix("relation:").is_some_and(earshot_core::schema::is_name);
        if !known {
            return Err(StoreError::input(
                "relation",
                "must be member, origin, granted, derived_from, owner, relation:<name>, delegated_from or held_by",
            ));
        }
    }
    Ok(())
}
