//! Reads at one snapshot: container resolution, check, lookup over postings, expand, admin view.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use earshot_core::admission::{decide, AuthSet, Basis, Decision, Reason};
use earshot_core::{AudienceDigest, Currentness, Quality, Viewers};

use crate::error::{Result, StoreError};
use crate::memory::id_table::{line_holds_name, Found, LineRole, Summary};
use crate::memory::layered::Posting;
use crate::memory::model::{
    format_time, limits, AudienceView, BlockedBy, ContainerInput, ContainerResolution, DecisionView, GrantView,
    ItemView, LookupPage, UnresolvedReason, ViewersInput,
};
use crate::memory::snapshot::{Aid, AudRec, Gid, Iid, ItemName, ItemRec, MemorySnapshot, Pid};
use crate::memory::trust::RoleView;

/// A container after resolution against one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedContainer {
    /// The acting owner, when it is a known participant.
    pub owner: Option<Pid>,
    pub viewers: Viewers<Pid>,
    /// Whether it resolved and, when not, the first input (in request order: owner,
    /// participants, identities, quality) that made it `U`.
    pub resolution: ContainerResolution,
}

/// A decision in interned terms.
pub type RawDecision = Decision<Iid, Gid>;

/// A check by name's decision, and whether it was made from the item's line (with the role
/// the line names) or its record.
enum Checked {
    Line(Iid, RawDecision, LineRole),
    Record(Iid, RawDecision),
}

/// Stands in for the origin audience's digest in a decision from a line (see
/// `MemorySnapshot::check_by_name`): the core reads a digest only to order grants.
const NO_DIGEST: AudienceDigest = AudienceDigest([0; 32]);

/// The decision for an item whose line's summary holds. The item is current and has no
/// grants (a summary exists only then), so the core decides on the origin audience alone, as
/// `check_rec_with` would. The origin's digest only ever breaks ties between grants; there
/// are none.
fn decide_from_summary(viewers: &Viewers<Pid>, summary: &Summary) -> RawDecision {
    let origin = AuthSet { grant: None, members: summary.member_set(), digest: &NO_DIGEST, pending: false };
    decide(viewers, Currentness::Current, origin, std::iter::empty())
}

impl MemorySnapshot {
    /// Resolves viewer evidence (SPEC §1.2). Anything unknown, ambiguous or not fresh makes the
    /// result `U`; the owner is always added. Exceeding the list bound is an error, not `U`.
    pub fn resolve_viewers(&self, owner: Option<Pid>, input: &ViewersInput) -> Result<Viewers<Pid>> {
        Ok(self.resolve_viewers_explained(owner, input)?.0)
    }

    /// [`MemorySnapshot::resolve_viewers`], with why the viewers did not resolve: the first
    /// unknown participant, unknown or ambiguous identity, or a quality other than `fresh`.
    /// The explanation echoes only the caller's own input. An unknown owner is the caller's
    /// to explain (see [`MemorySnapshot::resolve_container`]).
    pub fn resolve_viewers_explained(
        &self,
        owner: Option<Pid>,
        input: &ViewersInput,
    ) -> Result<(Viewers<Pid>, Option<ContainerResolution>)> {
        if input.participants.len() + input.identities.len() > limits::MAX_VIEWERS {
            return Err(StoreError::LimitExceeded { field: "viewers", limit: limits::MAX_VIEWERS });
        }
        let Some(owner) = owner else { return Ok((Viewers::Unresolved, None)) };
        // One more slot for the owner, which `Viewers::from_resolution` adds to this vector.
        let mut resolved = Vec::with_capacity(input.participants.len() + input.identities.len() + 1);
        let mut why = None;
        for (n, name) in input.participants.iter().enumerate() {
            match self.pid(name) {
                Some(p) => resolved.push(p),
                None => {
                    why = why.or_else(|| {
                        let detail = format!("viewers.participants[{n}]: {name}");
                        Some(ContainerResolution::unresolved(UnresolvedReason::UnknownParticipant, detail))
                    });
                }
            }
        }
        for (n, ident) in input.identities.iter().enumerate() {
            let key = MemorySnapshot::ident_key(&ident.transport, &ident.identifier);
            let reason = match self.idents.get(key.as_str()).map(|b| &b[..]) {
                Some([p]) => {
                    resolved.push(*p);
                    continue;
                }
                None | Some([]) => UnresolvedReason::UnknownIdentity,
                Some(_) => UnresolvedReason::AmbiguousIdentity,
            };
            why = why.or_else(|| {
                let detail = format!("viewers.identities[{n}]: {}:{}", ident.transport, ident.identifier);
                Some(ContainerResolution::unresolved(reason, detail))
            });
        }
        if why.is_none() && input.quality != Quality::Fresh {
            let detail = format!("viewers.quality: {}", quality_name(input.quality));
            why = Some(ContainerResolution::unresolved(UnresolvedReason::EvidenceQuality, detail));
        }
        let viewers = Viewers::from_resolution(owner, resolved, why.is_none(), input.quality);
        Ok((viewers, why))
    }

    /// Resolves a container. An unknown owner makes the container unresolved.
    pub fn resolve_container(&self, c: &ContainerInput) -> Result<ResolvedContainer> {
        let owner = self.pid(&c.owner);
        let (viewers, why) = self.resolve_viewers_explained(owner, &c.viewers)?;
        let resolution = match (owner, why) {
            (None, _) => ContainerResolution::unresolved(UnresolvedReason::UnknownOwner, format!("owner: {}", c.owner)),
            (Some(_), Some(why)) => why,
            (Some(_), None) => ContainerResolution::resolved(),
        };
        Ok(ResolvedContainer { owner, viewers, resolution })
    }

    /// Admission of one item (SPEC §1.9), by interned id. `now_ms` is the snapshot time.
    ///
    /// Like a check by name, it decides from the item's summary in the item lines while that
    /// holds (the lines' by-id column: one read of 16 bytes, BENCHMARKS.md, "The
    /// audience-heavy mix"), and otherwise from the record and its origin audience's. A scan
    /// over many ids in order reads their records, which sit side by side, instead
    /// ([`MemorySnapshot::check_iid_in_record`]).
    pub fn check_iid(&self, iid: Iid, viewers: &Viewers<Pid>, now_ms: i64) -> RawDecision {
        let lines = self.item_lines();
        match self.summary_by_id_holding(lines.first, iid) {
            Some(summary) => decide_from_summary(viewers, &summary),
            None => self.check_iid_in_record(iid, viewers, now_ms),
        }
    }

    /// [`MemorySnapshot::check_iid`] from the item's record and its audience's, never its line.
    pub(crate) fn check_iid_in_record(&self, iid: Iid, viewers: &Viewers<Pid>, now_ms: i64) -> RawDecision {
        let Some(item) = self.item(iid) else {
            return Decision { admitted: false, reason: Reason::DeniedUnknownItem, basis: None, blocked_by: None };
        };
        self.check_rec(item, viewers, now_ms)
    }

    /// Admission of one item record.
    fn check_rec(&self, item: &ItemRec, viewers: &Viewers<Pid>, now_ms: i64) -> RawDecision {
        self.check_rec_with(item, self.aud(item.aud), viewers, now_ms)
    }

    /// Admission of one item record whose origin audience the caller has already looked up
    /// (`origin` must be `self.aud(item.aud)`).
    fn check_rec_with(
        &self,
        item: &ItemRec,
        origin: Option<&AudRec>,
        viewers: &Viewers<Pid>,
        now_ms: i64,
    ) -> RawDecision {
        let Some(origin) = origin else {
            return Decision { admitted: false, reason: Reason::DeniedUnknownItem, basis: None, blocked_by: None };
        };
        let origin_set = AuthSet { grant: None, members: origin.member_set(), digest: &origin.digest, pending: false };
        let grants = item.grants().iter().filter_map(|&gid| {
            let g = self.grant(gid)?;
            if !g.is_live(now_ms) {
                return None;
            }
            let a = self.aud(g.aud)?;
            // SPEC §6.3: a grant still missing a subject's consent admits nothing (the core
            // then names the denial `denied_consent_pending`).
            Some(AuthSet { grant: Some(gid), members: a.member_set(), digest: &a.digest, pending: g.is_pending() })
        });
        decide(viewers, item.current(), origin_set, grants)
    }

    /// A hint that a check of `item` by name follows: starts the cold reads of its lines in the
    /// name table, so that the work in between (resolving the container) overlaps those reads
    /// instead of preceding them. Never changes an answer; only ever makes the check faster.
    pub fn touch_item(&self, item: &str) {
        // No item has a longer name; hashing a longer one ahead would only be wasted work.
        if item.len() <= earshot_core::MAX_ID_LEN {
            self.item_lines().first.touch(item);
        }
    }

    /// Admission of one item by name; an unknown item is an error.
    pub fn check(&self, item: &str, c: &ResolvedContainer, now_ms: i64) -> Result<DecisionView> {
        match self.check_by_name(item, &c.viewers, now_ms) {
            Some(checked) => Ok(self.checked_view(item, &checked)),
            None => Err(StoreError::ItemNotFound(item.to_string())),
        }
    }

    /// Finds an item by name and decides it. `None` for an unknown item.
    ///
    /// The item's line in the name table (`crate::memory::id_table`) carries, for most items, a
    /// summary of the record and the origin audience: then the decision is made from the line
    /// alone, one cold read in all. The summary is used only while it provably still holds
    /// ([`MemorySnapshot::line_summary_holds`]); otherwise the record decides.
    ///
    /// The line also carries the item's origin audience as it was when the line was built (a
    /// hint), so the audience's record is read together with the item's record instead of
    /// after it. The record decides which audience counts: the hint is used only when the
    /// record names the same one (an item's audience changes when a participant is removed).
    fn check_by_name(&self, item: &str, viewers: &Viewers<Pid>, now_ms: i64) -> Option<Checked> {
        let lines = self.item_lines();
        let found = lines.first.find(item, |id, aud_hint| {
            // A name too long for its line is compared in the record: start the hinted
            // audience's read first, so the two reads go out together.
            self.prefetch_aud(aud_hint);
            self.item_name(id)
        });
        let Some(found) = found else {
            let iid = match lines.first.overlay_get(item, |id| self.item_name(id)) {
                Some(iid) => iid,
                None => lines.then?.get(item, |id| self.item_name(id))?,
            };
            return Some(Checked::Record(iid, self.check_iid_in_record(iid, viewers, now_ms)));
        };
        if let Some(summary) = found.summary.filter(|_| self.line_summary_holds(lines.first, found.id)) {
            return Some(Checked::Line(found.id, decide_from_summary(viewers, &summary), found.role));
        }
        let hinted = self.aud(found.hint);
        self.prefetch_aud(found.hint);
        let rec = self.item(found.id)?;
        let origin = if rec.aud == found.hint { hinted } else { self.aud(rec.aud) };
        Some(Checked::Record(found.id, self.check_rec_with(rec, origin, viewers, now_ms)))
    }

    /// Starts the read of audience `aid`'s record without waiting for it (a prefetch: the
    /// address is known without reading the record). Only ever a speed hint.
    fn prefetch_aud(&self, aid: Aid) {
        if let Some(a) = self.aud(aid) {
            prefetch_index::prefetch_index(std::slice::from_ref(a), 0);
        }
    }

    /// The answer to a check by name of `item`.
    fn checked_view(&self, item: &str, checked: &Checked) -> DecisionView {
        match checked {
            // The item is named `item` (the line holds the name, or the record's was
            // compared), and its role is the line's when the line names one.
            Checked::Line(iid, d, role) => self.decision_view_of(*iid, item.to_string(), *role, d),
            Checked::Record(iid, d) => self.decision_view(*iid, d),
        }
    }

    /// Admission of many items; unknown items are denied with `denied_unknown_item`.
    pub fn check_bulk(&self, items: &[String], c: &ResolvedContainer, now_ms: i64) -> Result<Vec<DecisionView>> {
        if items.len() > limits::MAX_BULK_ITEMS {
            return Err(StoreError::LimitExceeded { field: "items", limit: limits::MAX_BULK_ITEMS });
        }
        // The cold reads of a batch overlap one another instead of following one another: every
        // item's lines go out first, then (the lines now arriving) the record and audience of
        // every candidate that cannot be decided from its line, then the names that neither the
        // line nor the record holds inline (long names that are not a UUID's canonical text,
        // which the line holds as bytes), and only then does the first decision wait on any.
        for name in items {
            self.touch_item(name);
        }
        // Each candidate, and whether its line holds its name (else the record's is compared).
        let lines = self.item_lines().first;
        let candidates: Vec<Option<(Found, bool)>> = items
            .iter()
            .map(|n| {
                let found = if n.len() <= earshot_core::MAX_ID_LEN { lines.candidate(n) } else { None };
                found.map(|f| (f, line_holds_name(n)))
            })
            .collect();
        for (f, in_line) in candidates.iter().flatten() {
            // An item decided from its line whose role the line does not name reads its record
            // too, for the role of an admitted answer.
            if f.summary.is_none()
                || f.role == LineRole::FromRecords
                || !in_line
                || !self.line_summary_holds(lines, f.id)
            {
                if let Some(rec) = self.item(f.id) {
                    prefetch_index::prefetch_index(std::slice::from_ref(rec), 0);
                }
                self.prefetch_aud(f.hint);
            }
        }
        for (name, found) in items.iter().zip(&candidates) {
            if let Some((f, false)) = found.filter(|_| name.len() > ItemName::CAPACITY) {
                std::hint::black_box(self.item(f.id).and_then(|r| r.name.as_bytes().first().copied()));
            }
        }
        Ok(items
            .iter()
            .map(|name| match self.check_by_name(name, &c.viewers, now_ms) {
                Some(checked) => self.checked_view(name, &checked),
                None => DecisionView {
                    item: name.clone(),
                    admitted: false,
                    reason: Reason::DeniedUnknownItem.as_str().into(),
                    basis: None,
                    grant: None,
                    blocked_by: None,
                    historical: None,
                    role: None,
                    author: None,
                    data_reason: None,
                    untrusted_source: None,
                },
            })
            .collect())
    }

    pub(crate) fn decision_view(&self, iid: Iid, d: &RawDecision) -> DecisionView {
        let rec = self.item(iid);
        let name = rec.map(|i| i.name.to_string()).unwrap_or_default();
        // Only an item without links skips the lookup here: the record path stays the one
        // that computes every other role in full, which checks from lines are compared with.
        let role = if rec.is_some_and(|r| r.links.is_none()) { LineRole::Instruction } else { LineRole::FromRecords };
        self.decision_view_of(iid, name, role, d)
    }

    /// The view of a decision on item `iid` named `name`, whose role is `role`'s when it names one.
    fn decision_view_of(&self, iid: Iid, name: String, role: LineRole, d: &RawDecision) -> DecisionView {
        let (basis, grant) = match d.basis {
            Some(Basis::Origin) => (Some("origin".into()), None),
            Some(Basis::Grant(g)) => (Some("grant".into()), self.grant(g).map(|g| g.name.to_string())),
            None => (None, None),
        };
        let blocked_by = d.blocked_by.map(|(state, ancestor)| BlockedBy {
            state,
            item: match ancestor {
                Some(a) => self.item(a).map(|i| i.name.to_string()).unwrap_or_default(),
                None => name.clone(),
            },
        });
        let mut view = DecisionView {
            item: name,
            admitted: d.admitted,
            reason: d.reason.as_str().into(),
            basis,
            grant,
            blocked_by,
            historical: None,
            role: None,
            author: None,
            data_reason: None,
            untrusted_source: None,
        };
        if d.admitted {
            // SPEC §6.2: every admitted answer carries the item's role; a line names it for
            // an item whose record alone decides it, without any further lookup.
            view.set_role(RoleView::of_line(role).unwrap_or_else(|| self.role_view(iid)));
        }
        view
    }

    /// Resolves the owner filter of a lookup: named owners, or the container's owner.
    pub fn owner_filter(&self, c: &ResolvedContainer, owners: &[String]) -> Result<Vec<Pid>> {
        if owners.len() > limits::MAX_OWNERS {
            return Err(StoreError::LimitExceeded { field: "owners", limit: limits::MAX_OWNERS });
        }
        // A malformed owner id is refused (fail closed), even when the list would not be used.
        for o in owners {
            crate::error::check_id("owners", o)?;
        }
        if owners.is_empty() {
            return Ok(c.owner.into_iter().collect());
        }
        // Unknown owners own nothing; they filter everything out rather than erroring.
        let mut pids: Vec<Pid> = owners.iter().filter_map(|o| self.pid(o)).collect();
        pids.sort_unstable();
        pids.dedup();
        Ok(pids)
    }

    /// Every admissible item for the container among the given owners' items, in creation order,
    /// starting after `after`, at most `limit`. Candidates come from the postings (audiences
    /// containing the viewers); each candidate is then decided from its record (`check_rec`).
    pub fn lookup_raw(
        &self,
        c: &ResolvedContainer,
        owners: &[Pid],
        after: Option<Iid>,
        limit: usize,
        now_ms: i64,
    ) -> (Vec<(Iid, RawDecision)>, bool) {
        let start = after.map_or(0, |a| a.saturating_add(1));
        let mut streams: Vec<Stream<'_>> = Vec::new();
        match (&c.viewers, c.owner) {
            (Viewers::Resolved(v), Some(o)) if v.len() == 1 && owners == [o] => {
                // Owner-only container over its own memory: every item of o has o in every audience.
                if let Some(p) = self.owner_items.get(&o) {
                    streams.push(Stream::posting(p, start));
                }
            }
            (Viewers::Resolved(v), _) => {
                let candidates = self.candidate_audiences(v);
                for aid in &candidates {
                    if let Some(p) = self.aud_items.get(aid) {
                        streams.push(Stream::posting(p, start));
                    }
                }
                // Items admitted through grants whose audience contains V.
                let mut granted: Vec<Iid> = Vec::new();
                for aid in candidates {
                    if let Some(gs) = self.aud_grants.get(&aid) {
                        for gid in gs.iter() {
                            if let Some(g) = self.grant(gid) {
                                if g.item >= start && g.is_effective(now_ms) {
                                    granted.push(g.item);
                                }
                            }
                        }
                    }
                }
                granted.sort_unstable();
                granted.dedup();
                streams.push(Stream::owned(granted));
                self.public_streams(owners, start, &mut streams);
            }
            (Viewers::Unresolved, _) => self.public_streams(owners, start, &mut streams),
        }
        let mut heap: BinaryHeap<Reverse<(Iid, usize)>> = BinaryHeap::with_capacity(streams.len());
        for (i, s) in streams.iter_mut().enumerate() {
            if let Some(iid) = s.next() {
                heap.push(Reverse((iid, i)));
            }
        }
        let mut out = Vec::with_capacity(limit.min(1024));
        let mut last: Option<Iid> = None;
        while let Some(Reverse((iid, i))) = heap.pop() {
            if let Some(next) = streams.get_mut(i).and_then(Stream::next) {
                heap.push(Reverse((next, i)));
            }
            if last == Some(iid) {
                continue;
            }
            last = Some(iid);
            let Some(item) = self.item(iid) else { continue };
            if !owners.contains(&item.owner) || !item.current().is_current() {
                continue;
            }
            let d = self.check_rec(item, &c.viewers, now_ms);
            if !d.admitted {
                continue;
            }
            if out.len() == limit {
                return (out, true);
            }
            out.push((iid, d));
        }
        (out, false)
    }

    /// The public items of each owner in the filter (the filter is short: at most
    /// `limits::MAX_OWNERS`), rather than the public items of every owner.
    fn public_streams<'a>(&'a self, owners: &[Pid], start: Iid, streams: &mut Vec<Stream<'a>>) {
        for o in owners {
            if let Some(p) = self.owner_public.get(o) {
                streams.push(Stream::posting(p, start));
            }
        }
    }

    /// Audiences whose members include every viewer, found from the smallest viewer posting.
    fn candidate_audiences(&self, viewers: &[Pid]) -> Vec<Aid> {
        let postings: Option<Vec<_>> = viewers.iter().map(|p| self.part_auds.get(p)).collect();
        let Some(postings) = postings else { return Vec::new() };
        let Some(smallest) = postings.iter().min_by_key(|s| s.len()) else { return Vec::new() };
        let v = Viewers::Resolved(viewers.to_vec());
        smallest
            .iter()
            .copied()
            .filter(|aid| self.aud(*aid).is_some_and(|a| a.live && a.member_set().contains_all(&v)))
            .collect()
    }

    /// One page of an exhaustive lookup, with an opaque cursor when more remain.
    pub fn lookup(
        &self,
        c: &ResolvedContainer,
        owners: &[String],
        cursor: Option<&str>,
        limit: Option<usize>,
        now_ms: i64,
    ) -> Result<LookupPage> {
        let limit = limit.unwrap_or(limits::DEFAULT_LOOKUP_LIMIT);
        if limit == 0 {
            return Err(StoreError::input("limit", "must be at least 1"));
        }
        if limit > limits::MAX_LOOKUP_LIMIT {
            return Err(StoreError::LimitExceeded { field: "limit", limit: limits::MAX_LOOKUP_LIMIT });
        }
        let after = cursor.map(decode_cursor).transpose()?;
        let owners = self.owner_filter(c, owners)?;
        let (rows, more) = self.lookup_raw(c, &owners, after, limit, now_ms);
        let cursor = if more { rows.last().map(|(iid, _)| encode_cursor(*iid)) } else { None };
        Ok(LookupPage { items: rows.iter().map(|(iid, d)| self.decision_view(*iid, d)).collect(), cursor })
    }

    /// Every authorized audience of an item at `now_ms`, separately (origin first).
    pub fn expand(&self, item: &str, now_ms: i64) -> Result<Vec<AudienceView>> {
        let iid = self.iid(item).ok_or_else(|| StoreError::ItemNotFound(item.to_string()))?;
        let Some(rec) = self.item(iid) else { return Err(StoreError::ItemNotFound(item.to_string())) };
        let mut out = vec![self.audience_view(rec.aud, None)?];
        for &gid in rec.grants() {
            let Some(g) = self.grant(gid) else { continue };
            if g.is_live(now_ms) {
                let mut v = self.audience_view(g.aud, Some(g.name.to_string()))?;
                v.expires_at = g.expires_at_ms.map(format_time);
                // A pending grant is listed with its consent state (`effective: false`).
                v.consent = g.consent.as_deref().map(|c| c.view(false));
                out.push(v);
            }
        }
        Ok(out)
    }

    fn audience_view(&self, aid: Aid, grant: Option<String>) -> Result<AudienceView> {
        let a = self.aud(aid).ok_or_else(|| StoreError::Integrity(format!("audience {aid} missing")))?;
        Ok(AudienceView {
            source: if grant.is_some() { "grant" } else { "origin" }.to_string(),
            grant,
            kind: a.kind,
            digest: a.digest.to_hex(),
            members: self.member_names(a),
            expires_at: None,
            consent: None,
        })
    }

    /// The admin view of an item (content and attributes are filled in by the caller).
    pub fn item_view(&self, item: &str, now_ms: i64) -> Result<ItemView> {
        let iid = self.iid(item).ok_or_else(|| StoreError::ItemNotFound(item.to_string()))?;
        let Some(rec) = self.item(iid) else { return Err(StoreError::ItemNotFound(item.to_string())) };
        let name_of = |i: Iid| self.item(i).map(|r| r.name.to_string()).unwrap_or_default();
        let blocked_by = match rec.current() {
            Currentness::Current => None,
            Currentness::NotCurrent { state, ancestor } => {
                Some(BlockedBy { state, item: ancestor.map_or_else(|| rec.name.to_string(), name_of) })
            }
        };
        let role = self.role_view(iid);
        let mut grants = Vec::new();
        for &gid in rec.grants() {
            let Some(g) = self.grant(gid) else { continue };
            let a = self.aud(g.aud).ok_or_else(|| StoreError::Integrity(format!("audience {} missing", g.aud)))?;
            grants.push(GrantView {
                id: g.name.to_string(),
                item: rec.name.to_string(),
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
            });
        }
        Ok(ItemView {
            id: rec.name.to_string(),
            owner: self.part_name(rec.owner).to_string(),
            state: rec.state(),
            current: rec.current().is_current(),
            blocked_by,
            audience: self.audience_view(rec.aud, None)?,
            grants,
            sources: rec.sources().iter().map(|s| name_of(*s)).collect(),
            superseded_by: rec.superseded_by().map(name_of),
            created_revision: rec.created_rev,
            content: None,
            attributes: None,
            revision: self.revision,
            token: self.token(self.revision),
            latest_revision: None,
            subjects: rec.subjects().iter().map(|s| s.to_string()).collect(),
            author: self.author_name(iid),
            role: role.role,
            data_reason: role.reason.map(str::to_string),
            untrusted_source: role.source,
        })
    }

    /// The interned id of an item by name.
    pub fn item_id(&self, name: &str) -> Option<Iid> {
        self.iid(name)
    }

    /// The name of an item by interned id.
    pub fn item_name(&self, iid: Iid) -> Option<&str> {
        self.item(iid).map(|i| &*i.name)
    }

    /// The interned id of a participant by name.
    pub fn participant_id(&self, name: &str) -> Option<Pid> {
        self.pid(name)
    }

    /// Names of every item ever created, in creation order.
    pub fn item_names(&self) -> Vec<String> {
        self.items.iter().map(|i| i.name.to_string()).collect()
    }
}

/// A sorted stream of item ids: a posting list read from a start point, or an owned list.
enum Stream<'a> {
    Posting { list: &'a Posting, pos: usize },
    Owned { list: Vec<Iid>, pos: usize },
}

impl<'a> Stream<'a> {
    fn posting(list: &'a Posting, start: Iid) -> Self {
        Stream::Posting { list, pos: list.lower_bound(start) }
    }

    fn owned(list: Vec<Iid>) -> Self {
        Stream::Owned { list, pos: 0 }
    }

    fn next(&mut self) -> Option<Iid> {
        let (v, pos) = match self {
            Stream::Posting { list, pos } => (list.get(*pos), pos),
            Stream::Owned { list, pos } => (list.get(*pos).copied(), pos),
        };
        *pos += 1;
        v
    }
}

fn encode_cursor(iid: Iid) -> String {
    format!("c{iid}")
}

fn decode_cursor(s: &str) -> Result<Iid> {
    s.strip_prefix('c').and_then(|n| n.parse::<Iid>().ok()).ok_or(StoreError::InvalidCursor)
}

/// A quality as the API spells it.
fn quality_name(q: Quality) -> &'static str {
    match q {
        Quality::Fresh => "fresh",
        Quality::Stale => "stale",
        Quality::LowConfidence => "low_confidence",
        Quality::Conflicting => "conflicting",
    }
}
