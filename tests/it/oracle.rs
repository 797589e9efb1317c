//! Owns the reference oracle: a deliberately naive model of SPEC §1 (participants, identities,
//! items, derivations, grants, lifecycle, member removal, admission Eq. (1)), of SPEC §6.2
//! (item authors, trust delegations, the role of an item) and of SPEC §6.3 (items' subjects,
//! consent to grants and its withdrawal) that the property and differential
//! tests compare the store against.
//!
//! Nothing here calls admission, derivation, lifecycle or audience logic of `earshot-core` or
//! `earshot-store`: it reads the request shapes (`Command` and friends, plain data) and the
//! label enums (`State`, `Action`, `Disposition`, `Quality`), and re-derives every rule from the
//! text of the SPEC with sets of names. Audiences are `Option<BTreeSet<String>>`, `None` being
//! `public` (everyone, including the anonymous participant).
//!
//! Where the SPEC is silent, the oracle takes a stated reading (each marked "reading:" below)
//! and the tests require the store to agree with it exactly, refusals included.

#![allow(dead_code, reason = "helpers shared by several test modules; not every one uses all")]

use std::collections::{BTreeMap, BTreeSet};

use earshot_core::{Action, Disposition, Quality, State};
use earshot_store::model::{
    Command, ContainerInput, DeriveRequest, NewGrant, NewItem, NewParticipant, OriginInput, OriginKeyword,
    ParticipantKind, ViewersInput,
};

/// An audience: `None` is public (everyone), `Some(members)` a finite set of names.
pub type Audience = Option<BTreeSet<String>>;

/// `V(C)` by name: a finite set that contains the owner, or everyone (unresolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OViewers {
    Everyone,
    Set(BTreeSet<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OItem {
    pub id: String,
    pub owner: String,
    pub audience: Audience,
    pub state: State,
    pub sources: Vec<String>,
    /// SPEC §6.3: the participants the item is about.
    pub subjects: BTreeSet<String>,
    /// SPEC §6.2: whose words it carries (the owner for the owner's notes and for derived
    /// items); `None` when unknown (written without an author in front of anyone else).
    pub author: Option<String>,
    /// SPEC §1.8: the author has been removed since; the name stays, as a tombstone.
    pub author_removed: bool,
}

/// SPEC §6.2: `owner` trusts `participant`'s words while not revoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OTrust {
    pub id: String,
    pub owner: String,
    pub participant: String,
    pub revoked: bool,
    /// SPEC §1.8: one of the two was removed (the delegation ended then).
    pub removed: bool,
}

/// SPEC §6.2: an item's role and, for data, its author and every untrusted-authored item in its
/// provenance (itself included), as (item, author).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ORole {
    pub instruction: bool,
    pub author: Option<String>,
    pub author_removed: bool,
    pub untrusted: BTreeSet<(String, Option<String>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OGrant {
    pub id: String,
    pub item: String,
    /// Always includes the item's owner.
    pub members: BTreeSet<String>,
    pub expires_at_ms: Option<i64>,
    pub reason: Option<String>,
    pub revoked: bool,
    /// SPEC §6.3: "every subject other than its issuer" must consent; the issuer acts for the
    /// item's owner (§1.6), so: the item's subjects without the owner, fixed when granted.
    pub needs_consent_of: BTreeSet<String>,
    /// Every consent decision recorded, in order: (subject, consented?).
    pub decisions: Vec<(String, bool)>,
}

/// SPEC §6.3: a grant is effective only once every subject whose consent it needs has
/// consented, and a withdrawal undoes that: each such subject's latest decision must be a
/// consent.
pub fn consent_complete(g: &OGrant) -> bool {
    g.needs_consent_of.iter().all(|s| g.decisions.iter().rev().find(|(who, _)| who == s).is_some_and(|(_, yes)| *yes))
}

/// What an accepted write did, in the store's outcome vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OOutcome {
    pub outcome: &'static str,
    /// Items (or participants) created; empty for grants, lifecycle and suppression.
    pub ids: Vec<String>,
    /// Whether the write changed anything (a new revision). `false` for a suppression, a
    /// replayed grant (`exists`) and a create retried with the same id and body (issue 10).
    pub wrote: bool,
}

/// Why the oracle refuses a write (a short code; only accept/refuse is compared with the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ORefusal(pub &'static str);

type OResult = Result<OOutcome, ORefusal>;

fn ok(outcome: &'static str, ids: Vec<String>) -> OResult {
    let wrote = !matches!(outcome, "suppressed" | "exists");
    Ok(OOutcome { outcome, ids, wrote })
}

/// Issue 10: a create retried with the same id and body answers as the first did, and writes
/// nothing.
fn retried(ids: Vec<String>) -> OResult {
    Ok(OOutcome { outcome: "created", ids, wrote: false })
}

/// Whether two item creates are the same body (docs/RULES.md, "sets are sets"): the same
/// fields, with the origin's participants and identities and the subjects compared as sets.
fn same_item_request(a: &NewItem, b: &NewItem) -> bool {
    let as_sets = |i: &NewItem| {
        let mut i = i.clone();
        if let OriginInput::Viewers(v) = &mut i.origin {
            v.participants = v.participants.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
            v.identities = v.identities.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
        }
        i.subjects = i.subjects.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
        i
    };
    as_sets(a) == as_sets(b)
}

fn no<T>(code: &'static str) -> Result<T, ORefusal> {
    Err(ORefusal(code))
}

/// The whole modelled state of one store.
#[derive(Debug, Clone, Default)]
pub struct Oracle {
    pub participants: BTreeSet<String>,
    /// The request that created each participant (a retry of it is recognised by equality).
    pub participant_requests: BTreeMap<String, NewParticipant>,
    /// The request that created each item with `POST /items` (not derivations).
    pub item_requests: BTreeMap<String, NewItem>,
    /// `(transport, identifier)` → every participant it was bound to (more than one: ambiguous).
    pub identities: BTreeMap<(String, String), Vec<String>>,
    /// In creation order.
    pub items: Vec<OItem>,
    /// In creation order.
    pub grants: Vec<OGrant>,
    /// Trust delegations (SPEC §6.2), in creation order.
    pub trust: Vec<OTrust>,
    /// A deliberately broken rule (`faults.rs`); `None` for the reference oracle. Only the
    /// entry points below dispatch on it, so the reference rules themselves stay untouched.
    pub fault: Option<crate::faults::Fault>,
    /// The instant writes are applied at (a replayed grant is judged live against it).
    pub now_ms: i64,
}

/// `V ⊆ A`, with public containing everything and `U` contained only in public.
pub fn contains(aud: &Audience, v: &OViewers) -> bool {
    match (aud, v) {
        (None, _) => true,
        (Some(_), OViewers::Everyone) => false,
        (Some(m), OViewers::Set(s)) => s.is_subset(m),
    }
}

/// `A ⊆ B` for audiences (public is the top).
pub fn audience_within(a: &Audience, b: &Audience) -> bool {
    match (a, b) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(a), Some(b)) => a.is_subset(b),
    }
}

/// A grant counts at `now` iff not revoked and `now < expires_at`.
pub fn grant_live(g: &OGrant, now_ms: i64) -> bool {
    !g.revoked && g.expires_at_ms.is_none_or(|e| now_ms < e)
}

/// Parses the RFC 3339 instants the tests write (`YYYY-MM-DDTHH:MM:SS[.fff]Z`), independently
/// of the store's parser.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, mo, da) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, b),
        None => (time, "0"),
    };
    let mut t = hms.split(':').map(|x| x.parse::<i64>().ok());
    let (h, mi, se) = (t.next()??, t.next()??, t.next()??);
    let ms: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + se * 1000 + ms)
}

/// reading: the lifecycle table. SPEC §1.7 names the states, says frozen is reversible (by
/// unfreeze) and quarantined reversible by release; revoked and deleted end an item's life,
/// except that a revoked item may still be deleted; supersession applies to a live item.
fn next_state(from: State, action: Action) -> Option<State> {
    use Action as A;
    use State as S;
    Some(match (action, from) {
        (A::Supersede, S::Active | S::Frozen) => S::Superseded,
        (A::Freeze, S::Active) => S::Frozen,
        (A::Unfreeze, S::Frozen) => S::Active,
        (A::Quarantine, S::Active | S::Frozen) => S::Quarantined,
        (A::Release, S::Quarantined) => S::Active,
        (A::Revoke, S::Active | S::Frozen | S::Quarantined | S::Superseded) => S::Revoked,
        (A::Delete, s) if s != S::Deleted => S::Deleted,
        _ => return None,
    })
}

impl Oracle {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn item(&self, id: &str) -> Option<&OItem> {
        self.items.iter().find(|i| i.id == id)
    }

    fn item_mut(&mut self, id: &str) -> Option<&mut OItem> {
        self.items.iter_mut().find(|i| i.id == id)
    }

    pub fn grant_by_id(&self, id: &str) -> Option<&OGrant> {
        self.grants.iter().find(|g| g.id == id)
    }

    /// Grants of one item, in creation order.
    pub fn grants_of<'a>(&'a self, item: &'a str) -> impl Iterator<Item = &'a OGrant> + 'a {
        self.grants.iter().filter(move |g| g.item == item)
    }

    /// SPEC §1.2: every id and identity must resolve and the quality be fresh, else everyone.
    /// reading: an unknown acting owner makes the container unresolved too.
    pub fn resolve(&self, owner: &str, v: &ViewersInput) -> OViewers {
        if !self.participants.contains(owner) || v.quality != Quality::Fresh {
            return OViewers::Everyone;
        }
        let mut set = BTreeSet::from([owner.to_string()]);
        for p in &v.participants {
            if !self.participants.contains(p) {
                return OViewers::Everyone;
            }
            set.insert(p.clone());
        }
        for ident in &v.identities {
            let key = (ident.transport.clone(), ident.identifier.clone());
            match self.identities.get(&key).map(Vec::as_slice) {
                Some([one]) if self.participants.contains(one) => {
                    set.insert(one.clone());
                }
                _ => return OViewers::Everyone,
            }
        }
        OViewers::Set(set)
    }

    pub fn resolve_container(&self, c: &ContainerInput) -> OViewers {
        let v = self.resolve(&c.owner, &c.viewers);
        match self.fault {
            Some(f) => crate::faults::resolve_for_read(self, f, c, v),
            None => v,
        }
    }

    /// `Current(m)`: m and every transitive source exist and are active.
    pub fn current(&self, id: &str) -> bool {
        self.item(id).is_some_and(|i| i.state == State::Active && i.sources.iter().all(|s| self.current(s)))
    }

    /// Live grants of `item` whose audience contains `v` and whose consent is complete (SPEC
    /// §6.3: a pending grant admits nothing).
    pub fn admitting_grants<'a>(&'a self, item: &'a str, v: &OViewers, now_ms: i64) -> Vec<&'a OGrant> {
        self.grants_of(item)
            .filter(|g| grant_live(g, now_ms) && consent_complete(g) && contains(&Some(g.members.clone()), v))
            .collect()
    }

    /// Eq. (1): `Current(m) ∧ ∃ A ∈ {Aud(m)} ∪ live grants : V ⊆ A`.
    pub fn admits_v(&self, item: &str, v: &OViewers, now_ms: i64) -> bool {
        if self.fault.is_some() {
            return crate::faults::admits(self, item, v, now_ms, crate::faults::Access::Check);
        }
        let Some(i) = self.item(item) else { return false };
        self.current(item) && (contains(&i.audience, v) || !self.admitting_grants(item, v, now_ms).is_empty())
    }

    /// SPEC §2.6: whether an `at_exact` read of the newest revision, committed at `then` and
    /// asked at `now`, may admit: only when its judgement, made at `then`, could not differ from
    /// one at `now`. A grant counts while `now < expires_at`, so its judgement changes when
    /// time reaches `expires_at`. Reading: the judgement could differ as soon as any grant window
    /// of the store ends in `(then, now]`, whichever item it is on and whether or not it was
    /// revoked since (the snapshot is judged as a whole); and nothing can be said of a `now`
    /// before `then`.
    pub fn exact_usable(&self, then: i64, now: i64) -> bool {
        then <= now && !self.grants.iter().any(|g| g.expires_at_ms.is_some_and(|e| then < e && e <= now))
    }

    pub fn admits(&self, item: &str, c: &ContainerInput, now_ms: i64) -> bool {
        self.admits_v(item, &self.resolve_container(c), now_ms)
    }

    /// Exhaustive lookup: every item of `owners` (default: the container's owner) that the
    /// container admits, in creation order.
    pub fn lookup(&self, c: &ContainerInput, owners: &[String], now_ms: i64) -> Vec<String> {
        let v = self.resolve_container(c);
        let owners: Vec<String> = if owners.is_empty() { vec![c.owner.clone()] } else { owners.to_vec() };
        self.items
            .iter()
            .filter(|i| owners.contains(&i.owner) && self.admits_listed(&i.id, &v, now_ms))
            .map(|i| i.id.clone())
            .collect()
    }

    /// Eq. (1) for an item a lookup lists (the same rule as a direct check, unless a fault
    /// breaks one of the two).
    fn admits_listed(&self, item: &str, v: &OViewers, now_ms: i64) -> bool {
        if self.fault.is_some() {
            return crate::faults::admits(self, item, v, now_ms, crate::faults::Access::Lookup);
        }
        self.admits_v(item, v, now_ms)
    }

    /// SPEC §6.2: "its author is the owner or a participant the owner has explicitly delegated
    /// authority to (a revocable, recorded delegation)".
    /// An unknown author is nobody's: never trusted.
    pub fn author_trusted(&self, item: &OItem) -> bool {
        let Some(author) = &item.author else { return false };
        // SPEC §1.8: a removed author is nobody now (its delegations ended with it).
        if item.author_removed {
            return false;
        }
        *author == item.owner
            || self.trust.iter().any(|t| !t.revoked && t.owner == item.owner && t.participant == *author)
    }

    /// SPEC §6.2: "a derived item is trusted only when every transitive source is".
    pub fn trusted(&self, id: &str) -> bool {
        self.item(id).is_some_and(|i| self.author_trusted(i) && i.sources.iter().all(|s| self.trusted(s)))
    }

    /// Every item of `id`'s provenance (itself and its transitive sources) whose author its
    /// owner does not trust, as (item, author).
    pub fn untrusted_in_provenance(&self, id: &str) -> BTreeSet<(String, Option<String>)> {
        let mut out = BTreeSet::new();
        let mut todo = vec![id.to_string()];
        let mut seen = BTreeSet::new();
        while let Some(x) = todo.pop() {
            if !seen.insert(x.clone()) {
                continue;
            }
            let Some(i) = self.item(&x) else { continue };
            if !self.author_trusted(i) {
                out.insert((i.id.clone(), i.author.clone()));
            }
            todo.extend(i.sources.iter().cloned());
        }
        out
    }

    /// The role of an item (SPEC §6.2), under the oracle's fault when one is set.
    pub fn role(&self, id: &str) -> Option<ORole> {
        let i = self.item(id)?;
        let instruction = match self.fault {
            Some(f) => crate::faults::trusted(self, f, id),
            None => self.trusted(id),
        };
        Some(ORole {
            instruction,
            author: i.author.clone(),
            author_removed: i.author_removed,
            untrusted: self.untrusted_in_provenance(id),
        })
    }

    /// Applies one write. Every refusal is decided before anything changes. `grant_id` names the
    /// grant a `Grant` or declassification creates (the store chooses grant ids).
    pub fn apply(&mut self, cmd: &Command, grant_id: &str) -> OResult {
        if let Some(f) = self.fault.take() {
            let r = crate::faults::apply(self, f, cmd, grant_id);
            self.fault = Some(f);
            return r;
        }
        match cmd {
            Command::CreateParticipant(p) => {
                if self.participants.contains(&p.id) {
                    // reading (issue 10): the same request again is a retry.
                    if self.participant_requests.get(&p.id) == Some(p) {
                        return retried(vec![p.id.clone()]);
                    }
                    return no("participant_exists");
                }
                self.participants.insert(p.id.clone());
                self.participant_requests.insert(p.id.clone(), p.clone());
                ok("created", vec![p.id.clone()])
            }
            Command::RemoveParticipant { id } => self.remove_participant(id),
            Command::BindIdentity(b) => {
                if !self.participants.contains(&b.participant) {
                    return no("participant_not_found");
                }
                let bound = self.identities.entry((b.transport.clone(), b.identifier.clone())).or_default();
                if bound.contains(&b.participant) {
                    // The binding is the whole request: binding it again is a retry.
                    return retried(vec![format!("{}:{}", b.transport, b.identifier)]);
                }
                bound.push(b.participant.clone());
                ok("created", vec![format!("{}:{}", b.transport, b.identifier)])
            }
            Command::CreateItem(i) => {
                let Some(id) = i.id.clone() else { return no("oracle_needs_explicit_ids") };
                if self.item(&id).is_some() {
                    if self.item_requests.get(&id).is_some_and(|first| same_item_request(first, i)) {
                        return retried(vec![id]);
                    }
                    return no("item_exists");
                }
                if !self.participants.contains(&i.owner) {
                    return no("participant_not_found");
                }
                let subjects = self.named_subjects(&i.subjects, BTreeSet::new())?;
                // SPEC §6.2: the author is a known participant.
                if i.author.as_ref().is_some_and(|a| !self.participants.contains(a)) {
                    return no("author_not_found");
                }
                // Write-time binding: the origin decides, never the content.
                let audience = match &i.origin {
                    OriginInput::Keyword(OriginKeyword::Public) => None,
                    OriginInput::Keyword(OriginKeyword::OwnerPrivate) => Some(BTreeSet::from([i.owner.clone()])),
                    OriginInput::Viewers(v) => match self.resolve(&i.owner, v) {
                        OViewers::Everyone => return no("origin_unresolved"),
                        OViewers::Set(s) => Some(s),
                    },
                };
                // SPEC §6.2: "the author is the origin speaker given at write time, the owner
                // only for the owner's own notes": without one, an origin audience of the owner
                // alone, or public, is the owner's note; any other is nobody known.
                let owners_note = audience.as_ref().is_none_or(|a| a.len() == 1 && a.contains(&i.owner));
                let author = match &i.author {
                    Some(a) => Some(a.clone()),
                    None if owners_note => Some(i.owner.clone()),
                    None => None,
                };
                self.items.push(OItem {
                    id: id.clone(),
                    owner: i.owner.clone(),
                    audience,
                    state: State::Active,
                    sources: vec![],
                    subjects,
                    author,
                    author_removed: false,
                });
                self.item_requests.insert(id.clone(), i.clone());
                ok("created", vec![id])
            }
            Command::Lifecycle { item, request } => {
                let Some(cur) = self.item(item) else { return no("item_not_found") };
                let Some(to) = next_state(cur.state, request.action) else { return no("invalid_transition") };
                match (&request.by, request.action) {
                    (Some(by), Action::Supersede) => {
                        // SPEC §1.7 "superseded (by a newer item)": `by` must exist and have been
                        // created after the item.
                        let position = |id: &str| self.items.iter().position(|i| i.id == id);
                        let Some(by_at) = position(by) else { return no("item_not_found") };
                        if position(item).is_none_or(|at| by_at <= at) {
                            return no("invalid_request");
                        }
                    }
                    (Some(_), _) => return no("invalid_request"),
                    (None, _) => {}
                }
                if let Some(i) = self.item_mut(item) {
                    i.state = to;
                }
                ok("updated", vec![])
            }
            Command::Derive { request, .. } => self.derive(request, grant_id),
            Command::Grant { item, grant, .. } => self.add_grant(item, grant, grant_id),
            Command::RevokeGrant { grant } => match self.grants.iter_mut().find(|g| &g.id == grant) {
                None => no("grant_not_found"),
                Some(g) if g.revoked => no("grant_already_revoked"),
                Some(g) => {
                    g.revoked = true;
                    ok("revoked", vec![])
                }
            },
            Command::Consent { grant, subject } => self.decide_consent(grant, subject, true),
            Command::WithdrawConsent { grant, subject } => self.decide_consent(grant, subject, false),
            Command::CreateTrust { trust, .. } => {
                for p in [&trust.owner, &trust.participant] {
                    if !self.participants.contains(p) {
                        return no("participant_not_found");
                    }
                }
                if trust.owner == trust.participant {
                    return no("trust_self_delegation");
                }
                // reading: a live delegation between the same two is the request retried.
                let live = self
                    .trust
                    .iter()
                    .find(|t| !t.revoked && t.owner == trust.owner && t.participant == trust.participant);
                if let Some(t) = live {
                    return ok("exists", vec![t.id.clone()]);
                }
                self.trust.push(OTrust {
                    id: grant_id.to_string(),
                    owner: trust.owner.clone(),
                    participant: trust.participant.clone(),
                    revoked: false,
                    removed: false,
                });
                ok("created", vec![grant_id.to_string()])
            }
            Command::RevokeTrust { trust } => match self.trust.iter_mut().find(|t| &t.id == trust) {
                None => no("trust_not_found"),
                Some(t) if t.revoked => no("already_revoked"),
                Some(t) => {
                    t.revoked = true;
                    ok("revoked", vec![trust.clone()])
                }
            },
            // Devices (SPEC §2) have their own reference in `devices_reference.rs`.
            _ => no("not_modelled_here"),
        }
    }

    /// SPEC §1.8: the participant leaves every audience and grant; refused for an owner of
    /// items (reading: any item, whatever its state, since the record still names its owner).
    fn remove_participant(&mut self, id: &str) -> OResult {
        if !self.participants.contains(id) {
            return no("participant_not_found");
        }
        if self.items.iter().any(|i| i.owner == id) {
            return no("participant_owns_items");
        }
        // RULES §2.6: a device is never removed, whichever route made it; refused before
        // anything changes.
        if self.participant_requests.get(id).is_some_and(|p| p.kind == ParticipantKind::Device) {
            return no("participant_is_device");
        }
        // SPEC §1.8 (issue 36): the items it wrote keep it as a tombstoned author (never
        // trusted); delegations to or from it end.
        for i in &mut self.items {
            if i.author.as_deref() == Some(id) {
                i.author_removed = true;
            }
        }
        for t in &mut self.trust {
            if t.owner == id || t.participant == id {
                t.revoked = true;
                t.removed = true;
            }
        }
        self.participants.remove(id);
        self.participant_requests.remove(id);
        for i in &mut self.items {
            if let Some(m) = &mut i.audience {
                m.remove(id);
            }
        }
        for g in &mut self.grants {
            g.members.remove(id);
        }
        // reading: its identity bindings go with it (a binding must name an existing participant).
        for bound in self.identities.values_mut() {
            bound.retain(|p| p != id);
        }
        self.identities.retain(|_, b| !b.is_empty());
        ok("removed", vec![id.to_string()])
    }

    /// SPEC §6.3: the subjects a write names (each a participant; reading: at most 32 on an
    /// item, its inherited ones included) joined to those it inherits.
    fn named_subjects(&self, named: &[String], inherited: BTreeSet<String>) -> Result<BTreeSet<String>, ORefusal> {
        if named.len() > 32 {
            return no("limit_exceeded");
        }
        if named.iter().any(|s| !self.participants.contains(s)) {
            return no("subject_not_found");
        }
        let all: BTreeSet<String> = inherited.into_iter().chain(named.iter().cloned()).collect();
        if all.len() > 32 {
            return no("limit_exceeded");
        }
        Ok(all)
    }

    /// SPEC §6.3: consent is recorded by a subject whose consent the grant needs (reading: one
    /// still a participant), never on a revoked grant; repeating the decision in force changes
    /// nothing.
    fn decide_consent(&mut self, grant: &str, subject: &str, consent: bool) -> OResult {
        let participant = self.participants.contains(subject);
        let Some(g) = self.grants.iter_mut().find(|g| g.id == grant) else { return no("grant_not_found") };
        if !participant || !g.needs_consent_of.contains(subject) {
            return no("not_a_subject");
        }
        if g.revoked {
            return no("grant_already_revoked");
        }
        let outcome = if consent { "consented" } else { "withdrawn" };
        let in_force = g.decisions.iter().rev().find(|(who, _)| who == subject).is_some_and(|(_, yes)| *yes);
        if in_force == consent {
            return Ok(OOutcome { outcome, ids: vec![], wrote: false });
        }
        g.decisions.push((subject.to_string(), consent));
        ok(outcome, vec![])
    }

    fn add_grant(&mut self, item: &str, g: &NewGrant, grant_id: &str) -> OResult {
        let Some(owner) = self.item(item).map(|i| i.owner.clone()) else { return no("item_not_found") };
        let needs_consent_of: BTreeSet<String> =
            self.item(item).map(|i| i.subjects.iter().filter(|s| **s != owner).cloned().collect()).unwrap_or_default();
        if g.members.is_empty() {
            return no("invalid_request");
        }
        if g.members.iter().any(|m| !self.participants.contains(m)) {
            return no("participant_not_found");
        }
        let expires_at_ms = match &g.expires_at {
            Some(s) => match parse_rfc3339_ms(s) {
                Some(ms) => Some(ms),
                None => return no("invalid_request"),
            },
            None => None,
        };
        // A grant counts while `now < expires_at`: one that would never count is refused.
        if expires_at_ms.is_some_and(|e| e <= self.now_ms) {
            return no("window_in_the_past");
        }
        let mut members: BTreeSet<String> = g.members.iter().cloned().collect();
        members.insert(owner);
        // A replay of a live grant (same members, reason, expiry) answers it and adds nothing.
        let twin = self.grants.iter().find(|o| {
            o.item == item
                && o.members == members
                && o.reason == g.reason
                && o.expires_at_ms == expires_at_ms
                && grant_live(o, self.now_ms)
        });
        if let Some(twin) = twin {
            return ok("exists", vec![twin.id.clone()]);
        }
        self.grants.push(OGrant {
            id: grant_id.to_string(),
            item: item.to_string(),
            members,
            expires_at_ms,
            reason: g.reason.clone(),
            revoked: false,
            needs_consent_of,
            decisions: vec![],
        });
        ok("granted", vec![])
    }

    /// SPEC §1.5. reading: the suppress rule is applied before the outputs of a partition are
    /// validated (a suppressed derivation creates nothing, so its outputs do not matter).
    fn derive(&mut self, r: &DeriveRequest, grant_id: &str) -> OResult {
        if r.sources.is_empty() {
            return no("invalid_request");
        }
        if !self.participants.contains(&r.owner) {
            return no("participant_not_found");
        }
        let mut seen = BTreeSet::new();
        for s in &r.sources {
            let Some(src) = self.item(s) else { return no("source_not_found") };
            if !seen.insert(s.clone()) {
                return no("invalid_request");
            }
            if src.owner != r.owner {
                return no("source_owner_mismatch");
            }
        }
        let d = r.disposition;
        let one = matches!(d, Disposition::Intersection | Disposition::Quarantine);
        if (r.outputs.is_some() && d != Disposition::Partition)
            || (r.members.is_some() && d != Disposition::Declassification)
            || ((r.id.is_some() || r.content.is_some() || r.attributes.is_some()) && !one)
        {
            return no("invalid_request");
        }
        if d == Disposition::Declassification && !r.subjects.is_empty() {
            return no("invalid_request");
        }
        if d == Disposition::Declassification {
            let ([source], Some(members)) = (r.sources.as_slice(), &r.members) else { return no("invalid_request") };
            let g = NewGrant { members: members.clone(), reason: r.reason.clone(), expires_at: r.expires_at.clone() };
            return self.add_grant(source, &g, grant_id);
        }
        if r.reason.is_some() || r.expires_at.is_some() || (!r.subjects.is_empty() && !one) {
            return no("invalid_request");
        }
        if d == Disposition::Suppress {
            return ok("suppressed", vec![]);
        }
        let container = r.container.as_ref().map(|v| self.resolve(&r.owner, v));
        // Derivation reads each source's origin audience, never its grants.
        let suppressed = r.sources.iter().any(|s| {
            let src = self.item(s);
            !self.current(s) || container.as_ref().is_some_and(|v| !src.is_some_and(|i| contains(&i.audience, v)))
        });
        let aud_of = |o: &Oracle, s: &str| o.item(s).and_then(|i| i.audience.clone());
        match d {
            Disposition::Intersection | Disposition::Quarantine => {
                if suppressed && d == Disposition::Intersection {
                    return ok("suppressed", vec![]);
                }
                let Some(id) = r.id.clone() else { return no("oracle_needs_explicit_ids") };
                if self.item(&id).is_some() {
                    return no("item_exists");
                }
                // SPEC §6.3: a derived item is about whoever its sources are about.
                let inherited =
                    r.sources.iter().filter_map(|s| self.item(s)).flat_map(|i| i.subjects.clone()).collect();
                let subjects = self.named_subjects(&r.subjects, inherited)?;
                // ∩ Aud(s), public being the identity.
                let mut acc: Audience = None;
                for s in &r.sources {
                    if let Some(m) = aud_of(self, s) {
                        acc = Some(match acc {
                            None => m,
                            Some(a) => a.intersection(&m).cloned().collect(),
                        });
                    }
                }
                let (state, outcome) = if d == Disposition::Quarantine {
                    (State::Quarantined, "quarantined")
                } else {
                    (State::Active, "created")
                };
                self.items.push(OItem {
                    id: id.clone(),
                    owner: r.owner.clone(),
                    audience: acc,
                    state,
                    sources: r.sources.clone(),
                    subjects,
                    // SPEC §6.2: a derived item is the owner's agent's words.
                    author: Some(r.owner.clone()),
                    author_removed: false,
                });
                ok(outcome, vec![id])
            }
            Disposition::Partition => {
                if suppressed {
                    return ok("suppressed", vec![]);
                }
                let Some(outputs) = &r.outputs else { return no("invalid_request") };
                if outputs.is_empty() {
                    return no("invalid_request");
                }
                let mut used = BTreeSet::new();
                let mut plan: Vec<(String, Audience, Vec<String>, BTreeSet<String>)> = Vec::new();
                for out in outputs {
                    if out.sources.is_empty() {
                        return no("invalid_request");
                    }
                    for s in &out.sources {
                        if !r.sources.contains(s) || !used.insert(s.clone()) {
                            return no("invalid_request");
                        }
                    }
                    // The sources' shared audience, or a refusal when they differ.
                    let first = aud_of(self, &out.sources[0]);
                    if out.sources.iter().any(|s| aud_of(self, s) != first) {
                        return no("partition_mixed_audiences");
                    }
                    let inherited =
                        out.sources.iter().filter_map(|s| self.item(s)).flat_map(|i| i.subjects.clone()).collect();
                    let subjects = self.named_subjects(&out.subjects, inherited)?;
                    let Some(id) = out.id.clone() else { return no("oracle_needs_explicit_ids") };
                    if self.item(&id).is_some() || plan.iter().any(|p| p.0 == id) {
                        return no("item_exists");
                    }
                    plan.push((id, first, out.sources.clone(), subjects));
                }
                if used.len() != r.sources.len() {
                    return no("invalid_request");
                }
                let ids = plan.iter().map(|p| p.0.clone()).collect();
                for (id, audience, sources, subjects) in plan {
                    self.items.push(OItem {
                        id,
                        owner: r.owner.clone(),
                        audience,
                        state: State::Active,
                        sources,
                        subjects,
                        author: Some(r.owner.clone()),
                        author_removed: false,
                    });
                }
                ok("created", ids)
            }
            Disposition::Declassification | Disposition::Suppress => no("unreachable"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_parser_matches_known_instants() {
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339_ms("2026-01-01T00:00:00.000Z"), Some(1_767_225_600_000));
        assert_eq!(parse_rfc3339_ms("2026-01-01T00:00:05.250Z"), Some(1_767_225_605_250));
        assert_eq!(parse_rfc3339_ms("2024-02-29T12:00:00Z"), Some(1_709_208_000_000));
        assert_eq!(parse_rfc3339_ms("nonsense"), None);
    }

    #[test]
    fn containment_reads_public_as_everyone() {
        let ab: Audience = Some(BTreeSet::from(["a".to_string(), "b".to_string()]));
        let a = OViewers::Set(BTreeSet::from(["a".to_string()]));
        assert!(contains(&ab, &a));
        assert!(!contains(&ab, &OViewers::Everyone));
        assert!(contains(&None, &OViewers::Everyone));
        assert!(audience_within(&ab, &None));
        assert!(!audience_within(&None, &ab));
    }
}
