//! The flat evaluator: admission computed straight from the durable records by scanning, with
//! no postings, no interning and no memoised currentness. Differential tests compare it with
//! the indexed evaluator; it is deliberately simple and slow. Viewers are resolved from the
//! participant and identity records too ([`resolve`]), independently of the index.

use std::collections::{BTreeMap, BTreeSet};

use earshot_core::admission::grant_is_live;
use earshot_core::{AudienceKind, Quality, State};

use crate::memory::durable::{AudienceRecord, ItemRecord, MemoryRecords};
use crate::memory::model::ContainerInput;

/// The viewers of a container as the flat evaluator sees them: member names, or everyone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlatViewers {
    Everyone,
    Set(BTreeSet<String>),
}

/// `V(C)` by name from the durable records (SPEC §1.2): the owner and every id must be
/// participants, every identity bound to exactly one, and the quality fresh; else everyone.
pub fn resolve<'a>(records: impl Into<MemoryRecords<'a>>, c: &ContainerInput) -> FlatViewers {
    let records: MemoryRecords<'a> = records.into();
    let known = |p: &str| records.participants.iter().any(|r| r.id == p);
    if !known(&c.owner) || c.viewers.quality != Quality::Fresh {
        return FlatViewers::Everyone;
    }
    let mut set = BTreeSet::from([c.owner.clone()]);
    for p in &c.viewers.participants {
        if !known(p) {
            return FlatViewers::Everyone;
        }
        set.insert(p.clone());
    }
    for i in &c.viewers.identities {
        let bound = records.identities.iter().find(|x| x.transport == i.transport && x.identifier == i.identifier);
        match bound.map(|x| x.participants.as_slice()) {
            Some([one]) if known(one) => {
                set.insert(one.clone());
            }
            _ => return FlatViewers::Everyone,
        }
    }
    FlatViewers::Set(set)
}

/// A decision from the flat evaluator: admitted, and by which grant id if not by origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatDecision {
    pub admitted: bool,
    pub grant: Option<String>,
}

/// Admission over the durable records of one store.
pub struct Flat<'a> {
    items: BTreeMap<&'a str, &'a ItemRecord>,
    audiences: BTreeMap<&'a str, &'a AudienceRecord>,
    records: MemoryRecords<'a>,
}

impl<'a> Flat<'a> {
    pub fn new(records: impl Into<MemoryRecords<'a>>) -> Self {
        let records: MemoryRecords<'a> = records.into();
        Flat {
            items: records.items.iter().map(|i| (i.id.as_str(), i)).collect(),
            audiences: records.audiences.iter().map(|a| (a.digest.as_str(), a)).collect(),
            records,
        }
    }

    fn current(&self, id: &str, depth: usize) -> bool {
        if depth > 10_000 {
            return false;
        }
        match self.items.get(id) {
            Some(i) => i.state == State::Active && i.sources.iter().all(|s| self.current(s, depth + 1)),
            None => false,
        }
    }

    /// `None` for the public audience, else the members.
    fn members(&self, digest: &str) -> Option<Option<BTreeSet<&'a str>>> {
        match self.audiences.get(digest) {
            Some(a) if a.kind != AudienceKind::Public => Some(Some(a.members.iter().map(String::as_str).collect())),
            Some(_) => Some(None),
            // The public audience has no record; any other unknown digest is unknown.
            None => None,
        }
    }

    fn contains(&self, digest: &str, viewers: &FlatViewers, public_digest: &str) -> bool {
        if digest == public_digest {
            return true;
        }
        match (self.members(digest), viewers) {
            (Some(Some(m)), FlatViewers::Set(v)) => v.iter().all(|x| m.contains(x.as_str())),
            _ => false,
        }
    }

    /// Decides one item by scanning its records. Among admitting grants, the basis is the
    /// smallest audience, ties by digest, as SPEC §1.9 fixes.
    pub fn check(&self, item: &str, viewers: &FlatViewers, now_ms: i64) -> FlatDecision {
        let no = FlatDecision { admitted: false, grant: None };
        let Some(rec) = self.items.get(item) else { return no };
        if !self.current(item, 0) {
            return no;
        }
        let public = earshot_core::AudienceDigest::compute::<&str>(AudienceKind::Public, &[]).to_hex();
        if self.contains(&rec.audience, viewers, &public) {
            return FlatDecision { admitted: true, grant: None };
        }
        let mut best: Option<(usize, &str, &str)> = None;
        for g in self.records.grants {
            if g.item != item || !grant_is_live(g.revoked, g.expires_at_ms, now_ms) || !consent_complete(g) {
                continue;
            }
            if self.contains(&g.audience, viewers, &public) {
                let size = self.audiences.get(g.audience.as_str()).map_or(usize::MAX, |a| a.members.len());
                let cand = (size, g.audience.as_str(), g.id.as_str());
                if best.is_none_or(|b| (cand.0, cand.1) < (b.0, b.1)) {
                    best = Some(cand);
                }
            }
        }
        match best {
            Some((_, _, gid)) => FlatDecision { admitted: true, grant: Some(gid.to_string()) },
            None => no,
        }
    }

    /// Every admissible item of the given owners, in creation order, by scanning all items.
    pub fn lookup(&self, viewers: &FlatViewers, owners: &[String], now_ms: i64) -> Vec<String> {
        self.records
            .items
            .iter()
            .filter(|i| owners.contains(&i.owner))
            .filter(|i| self.check(&i.id, viewers, now_ms).admitted)
            .map(|i| i.id.clone())
            .collect()
    }
}

/// SPEC §6.3 read straight from the grant record: every required subject's last recorded
/// decision is a consent (no consent record: nothing is required).
fn consent_complete(g: &crate::memory::durable::GrantRecord) -> bool {
    let Some(c) = &g.consent else { return true };
    c.required.iter().all(|r| {
        let last = c.events.iter().rev().find(|e| &e.subject == r);
        last.is_some_and(|e| e.action == crate::memory::model::ConsentAction::Consented)
    })
}
