//! Crate-level tests of the read path and the indexes (`read`, `snapshot`, `layered`, the
//! posting upkeep in `apply`): deterministic random histories written through a real
//! `StoreHandle`, with every check, bulk check and lookup page compared after each write with the
//! flat evaluator (a scan of the durable records), reason codes checked against the item views,
//! and the live index compared with a rebuild from disk (`verify`).
//!
//! They are what `cargo mutants -p earshot-store` runs (see TESTING.md): fast, because only this
//! crate rebuilds per mutant, and strong, because any wrong posting, cursor or basis shows up as
//! a disagreement with the flat scan.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "tests")]

use std::collections::BTreeMap;
use std::sync::Arc;

use earshot_core::{Action, AudienceKind, Disposition, Quality};

use crate::memory::flat::{Flat, FlatViewers};
use crate::model::{
    format_time, Command, ContainerInput, DecisionView, DeriveRequest, Identity, LifecycleRequest, NewGrant,
    NewIdentity, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind, PartitionOutput, ViewersInput,
};
use crate::{Earshot, ManualClock, StoreHandle};

const T0: i64 = 1_767_225_600_000;
const PARTS: [&str; 5] = ["p0", "p1", "p2", "p3", "p4"];
const OWNERS: [&str; 2] = ["p0", "p1"];

/// A small deterministic generator (SplitMix64), so mutation runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            xs.get(self.below(xs.len()))
        }
    }

    fn subset(&mut self, xs: &[&str]) -> Vec<String> {
        xs.iter().filter(|_| self.below(3) == 0).map(|s| s.to_string()).collect()
    }
}

struct World {
    /// Kept so the store stays open; `None` only while reopening.
    earshot: Option<Earshot>,
    clock: Arc<ManualClock>,
    store: Arc<StoreHandle>,
    now: i64,
    items: Vec<String>,
    grants: Vec<String>,
    seq: usize,
    /// What the writes asked for, kept independently of the store: each derived item's sources
    /// and each superseded item's successor.
    sources: BTreeMap<String, Vec<String>>,
    superseded_by: BTreeMap<String, String>,
    /// What a reopened instance is opened with.
    config: crate::Config,
}

fn ident(i: &str) -> Identity {
    Identity { transport: "email".into(), identifier: i.into() }
}

impl World {
    fn new() -> Self {
        let clock = Arc::new(ManualClock::new(T0));
        let earshot = Earshot::temporary(clock.clone()).unwrap();
        Self::on(earshot, clock)
    }

    /// A world on sled in `path`, so that it can be reopened ([`World::reopen`]).
    fn on_sled(path: &std::path::Path) -> Self {
        Self::on_sled_with(path, crate::Config::default())
    }

    /// [`World::on_sled`] with `config` (kept for [`World::reopen`]).
    fn on_sled_with(path: &std::path::Path, config: crate::Config) -> Self {
        let clock = Arc::new(ManualClock::new(T0));
        let backend = crate::SledBackend::open(path).unwrap();
        let earshot = Earshot::open_with(Arc::new(backend), clock.clone(), config.clone()).unwrap();
        let mut w = Self::on(earshot, clock);
        w.config = config;
        w
    }

    /// A world on an opened instance (a temporary one, or sled in a directory).
    fn on(earshot: Earshot, clock: Arc<ManualClock>) -> Self {
        earshot.create_store("t", None).unwrap();
        let store = earshot.store("t").unwrap();
        let mut w = World {
            earshot: Some(earshot),
            clock,
            store,
            now: T0,
            items: vec![],
            grants: vec![],
            seq: 0,
            sources: BTreeMap::new(),
            superseded_by: BTreeMap::new(),
            config: crate::Config::default(),
        };
        for p in PARTS {
            w.write(Command::CreateParticipant(NewParticipant {
                id: p.into(),
                kind: ParticipantKind::Person,
                name: None,
            }));
        }
        for (i, p) in [("e0", "p2"), ("e1", "p3"), ("e1", "p4")] {
            w.write(Command::BindIdentity(NewIdentity {
                transport: "email".into(),
                identifier: i.into(),
                participant: p.into(),
            }));
        }
        w
    }

    fn write(&mut self, cmd: Command) {
        let snap = self.store.latest();
        let before = snap.revision();
        let adds_items = matches!(&cmd, Command::CreateItem(_) | Command::Derive { .. });
        let (want_outcome, want_reason) = expected_outcome(&snap, &cmd, self.now);
        let asked = cmd.clone();
        match self.store.write(cmd) {
            Ok(out) => {
                match &asked {
                    Command::Derive { request, .. } if out.outcome == "created" || out.outcome == "quarantined" => {
                        match &request.outputs {
                            Some(outputs) => {
                                for (o, id) in outputs.iter().zip(&out.ids) {
                                    self.sources.insert(id.clone(), o.sources.clone());
                                }
                            }
                            None => {
                                for id in &out.ids {
                                    self.sources.insert(id.clone(), request.sources.clone());
                                }
                            }
                        }
                    }
                    Command::Lifecycle {
                        item,
                        request: LifecycleRequest { action: Action::Supersede, by: Some(b) },
                    } => {
                        self.superseded_by.insert(item.clone(), b.clone());
                    }
                    _ => {}
                }
                if out.outcome == "granted" {
                    self.grants.extend(out.ids.iter().cloned());
                } else if adds_items {
                    self.items.extend(out.ids.iter().cloned());
                }
                let after = self.store.latest().revision();
                // A replayed live grant answers `exists` and writes nothing (the oracle of the
                // integration tests decides when; here it must name a grant already issued).
                let exists = out.outcome == "exists";
                if exists {
                    assert!(out.ids.len() == 1 && self.grants.contains(&out.ids[0]), "{out:?}");
                }
                let expect = if out.outcome == "suppressed" || exists { before } else { before + 1 };
                assert_eq!(after, expect, "{out:?}");
                assert_eq!(out.revision, after, "{out:?}");
                assert_eq!(out.token, crate::token::encode("t", self.store.incarnation(), after), "{out:?}");
                if let Some(w) = want_outcome.filter(|w| !(exists && *w == "granted")) {
                    assert_eq!(out.outcome, w, "{out:?}");
                }
                if let Some(w) = want_reason {
                    assert_eq!((out.reason.as_deref(), out.source.as_deref()), (w.0, w.1.as_deref()), "{out:?}");
                }
                let makes_ids = out.outcome != "suppressed";
                assert_eq!(!out.ids.is_empty(), makes_ids, "{out:?}");
                if adds_items && out.outcome != "granted" && !exists {
                    for id in &out.ids {
                        assert_eq!(self.store.latest().item_view(id, self.now).unwrap().created_revision, after);
                    }
                }
            }
            Err(e) => {
                assert!(!matches!(e.code(), "integrity_failure" | "storage_failure"), "{e}");
                assert_eq!(self.store.latest().revision(), before, "a refused write moved the revision: {e}");
            }
        }
    }

    /// Every answer a client can get, as text: decisions, lookup pages and item views.
    fn answers(&self) -> Vec<String> {
        let snap = self.store.latest();
        let mut out = vec![format!("revision {}", snap.revision())];
        for c in Self::containers() {
            let r = snap.resolve_container(&c).unwrap();
            for n in snap.item_names() {
                out.push(format!("{:?}", snap.check(&n, &r, self.now).unwrap()));
            }
            let mut cursor: Option<String> = None;
            for _ in 0..200 {
                let page = snap.lookup(&r, &[], cursor.as_deref(), Some(2), self.now).unwrap();
                out.push(format!("{page:?}"));
                cursor = page.cursor;
                if cursor.is_none() {
                    break;
                }
            }
        }
        for n in snap.item_names() {
            out.push(format!("{:?} {:?}", snap.item_view(&n, self.now).unwrap(), snap.expand(&n, self.now).unwrap()));
        }
        out
    }

    /// Closes the instance and opens it again from `path`, as a restart does.
    fn reopen(&mut self, path: &std::path::Path) {
        // Every handle holds the backend: swap ours for a throwaway one before closing.
        let placeholder = Earshot::temporary(self.clock.clone()).unwrap();
        placeholder.create_store("t", None).unwrap();
        self.store = placeholder.store("t").unwrap();
        drop(self.earshot.take());
        let mut tries = 0;
        let backend = loop {
            match crate::SledBackend::open(path) {
                Ok(b) => break b,
                // sled lets go of its file lock from a background thread, shortly after.
                Err(e) if tries < 250 && e.to_string().contains("could not acquire lock") => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => panic!("reopening: {e}"),
            }
        };
        let earshot = Earshot::open_with(Arc::new(backend), self.clock.clone(), self.config.clone()).unwrap();
        self.store = earshot.store("t").unwrap();
        self.earshot = Some(earshot);
    }

    /// A new item name: short, or a UUID's canonical text (held in the name table's line as 16
    /// bytes), or a 36-byte name of the same shape that is not a UUID (held as text elsewhere).
    fn fresh(&mut self) -> String {
        self.seq += 1;
        let uuid = || uuid::Uuid::from_u128((self.seq as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835));
        match self.seq % 6 {
            1 | 4 => uuid().hyphenated().to_string(),
            2 => format!("{}g", &uuid().hyphenated().to_string()[..35]),
            _ => format!("i{}", self.seq),
        }
    }

    fn viewers(&mut self, r: &mut Rng) -> ViewersInput {
        let mut v = ViewersInput { participants: r.subset(&PARTS), ..Default::default() };
        match r.below(8) {
            0 => v.identities = vec![ident("e0")],
            1 => v.participants.push("ghost".into()),
            2 => v.quality = Quality::Stale,
            _ => {}
        }
        v
    }

    fn step(&mut self, r: &mut Rng) {
        let owner = OWNERS[r.below(2)].to_string();
        let item = r.pick(&self.items).cloned().unwrap_or_else(|| "none".into());
        let cmd = match r.below(12) {
            0..=2 => {
                let origin = match r.below(4) {
                    0 => OriginInput::Keyword(OriginKeyword::Public),
                    1 => OriginInput::Keyword(OriginKeyword::OwnerPrivate),
                    _ => OriginInput::Viewers(self.viewers(r)),
                };
                let id = if r.below(6) == 0 { None } else { Some(self.fresh()) };
                Command::CreateItem(NewItem {
                    subjects: Vec::new(),
                    id,
                    owner,
                    content: Some("c".into()),
                    attributes: None,
                    origin,
                    author: None,
                    embedding: None,
                    embedding_metric: None,
                })
            }
            3 | 4 => {
                let mut members = r.subset(&PARTS);
                if members.is_empty() {
                    members.push(PARTS[r.below(5)].into());
                }
                let expires_at = (r.below(2) == 0).then(|| format_time(self.now + 500 * (1 + r.below(6) as i64)));
                if r.below(4) == 0 {
                    Command::Derive {
                        request: DeriveRequest {
                            subjects: Vec::new(),
                            disposition: Disposition::Declassification,
                            owner: self.store.latest().item_view(&item, self.now).map_or(owner, |v| v.owner),
                            sources: vec![item],
                            id: None,
                            content: None,
                            attributes: None,
                            container: None,
                            outputs: None,
                            members: Some(members),
                            reason: Some("r".into()),
                            expires_at,
                        },
                        issuer: "admin".into(),
                    }
                } else {
                    Command::Grant {
                        item,
                        grant: NewGrant { members, reason: None, expires_at },
                        issuer: "admin".into(),
                    }
                }
            }
            5 => Command::RevokeGrant { grant: r.pick(&self.grants).cloned().unwrap_or_else(|| "g".into()) },
            6 | 7 => {
                let actions = [
                    Action::Supersede,
                    Action::Freeze,
                    Action::Unfreeze,
                    Action::Quarantine,
                    Action::Release,
                    Action::Revoke,
                    Action::Delete,
                ];
                let action = actions[r.below(actions.len())];
                // A successor is usually the newest item (valid unless it is the item itself).
                let by = match r.below(4) {
                    0 => None,
                    1 => r.pick(&self.items).cloned(),
                    _ => self.items.last().cloned(),
                }
                .filter(|_| action == Action::Supersede);
                Command::Lifecycle { item, request: LifecycleRequest { action, by } }
            }
            8 | 9 => {
                let snap = self.store.latest();
                let mine: Vec<String> = self
                    .items
                    .iter()
                    .filter(|i| snap.item_view(i, self.now).is_ok_and(|v| v.owner == owner))
                    .cloned()
                    .collect();
                let mut sources: Vec<String> = Vec::new();
                for _ in 0..1 + r.below(3) {
                    if let Some(s) = r.pick(&mine) {
                        if !sources.contains(s) {
                            sources.push(s.clone());
                        }
                    }
                }
                let container = (r.below(2) == 0).then(|| self.viewers(r));
                if r.below(3) == 0 {
                    // A partition: one output per distinct source audience.
                    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
                    for s in &sources {
                        let d = snap.item_view(s, self.now).map(|v| v.audience.digest).unwrap_or_default();
                        match groups.iter_mut().find(|g| g.0 == d) {
                            Some(g) => g.1.push(s.clone()),
                            None => groups.push((d, vec![s.clone()])),
                        }
                    }
                    let outputs = groups
                        .into_iter()
                        .map(|(_, sources)| PartitionOutput {
                            subjects: Vec::new(),
                            id: None,
                            content: None,
                            attributes: None,
                            sources,
                        })
                        .collect();
                    Command::Derive {
                        request: DeriveRequest {
                            subjects: Vec::new(),
                            disposition: Disposition::Partition,
                            owner,
                            sources,
                            id: None,
                            content: None,
                            attributes: None,
                            container,
                            outputs: Some(outputs),
                            members: None,
                            reason: None,
                            expires_at: None,
                        },
                        issuer: "admin".into(),
                    }
                } else {
                    let disposition = if r.below(4) == 0 { Disposition::Quarantine } else { Disposition::Intersection };
                    Command::Derive {
                        request: DeriveRequest {
                            subjects: Vec::new(),
                            disposition,
                            owner,
                            sources,
                            id: Some(self.fresh()),
                            content: None,
                            attributes: None,
                            container,
                            outputs: None,
                            members: None,
                            reason: None,
                            expires_at: None,
                        },
                        issuer: "admin".into(),
                    }
                }
            }
            10 => {
                let p = ["p3", "p4", "p2"][r.below(3)];
                if self.store.latest().pid(p).is_some() {
                    Command::RemoveParticipant { id: p.into() }
                } else {
                    Command::CreateParticipant(NewParticipant {
                        id: p.into(),
                        kind: ParticipantKind::Agent,
                        name: None,
                    })
                }
            }
            _ => {
                self.now += 500 * (1 + r.below(4) as i64);
                self.clock.set(self.now);
                return;
            }
        };
        self.write(cmd);
    }

    fn containers() -> Vec<ContainerInput> {
        let c = |owner: &str, ps: &[&str], ids: &[&str], quality: Quality| ContainerInput {
            owner: owner.into(),
            viewers: ViewersInput {
                participants: ps.iter().map(|p| p.to_string()).collect(),
                identities: ids.iter().map(|i| ident(i)).collect(),
                quality,
            },
        };
        let mut out = Vec::new();
        for o in OWNERS {
            let other = if o == "p0" { "p1" } else { "p0" };
            out.push(c(o, &[], &[], Quality::Fresh));
            out.push(c(o, &[other], &[], Quality::Fresh));
            out.push(c(o, &["p2"], &[], Quality::Fresh));
            out.push(c(o, &["p2", "p3"], &[], Quality::Fresh));
            out.push(c(o, &PARTS, &[], Quality::Fresh));
            out.push(c(o, &["ghost"], &[], Quality::Fresh));
            out.push(c(o, &[], &[], Quality::Stale));
            out.push(c(o, &[], &["e0"], Quality::Fresh));
            out.push(c(o, &[], &["e1"], Quality::Fresh));
        }
        out.push(c("ghost", &[], &[], Quality::Fresh));
        out
    }

    /// Every read against the flat evaluator and the item views; the index against a rebuild.
    fn compare(&self) {
        let snap = self.store.latest();
        let records = self.store.durable_records().unwrap();
        let flat = Flat::new(&records);
        let names = snap.item_names();
        let views: Vec<_> = names.iter().map(|n| snap.item_view(n, self.now).unwrap()).collect();
        for c in Self::containers() {
            let r = snap.resolve_container(&c).unwrap();
            let fv = crate::memory::flat::resolve(&records, &c);
            let mut singles: Vec<DecisionView> = Vec::new();
            for (name, view) in names.iter().zip(&views) {
                let d = snap.check(name, &r, self.now).unwrap();
                let f = flat.check(name, &fv, self.now);
                let iid = snap.mem.iid(name).unwrap();
                assert_eq!(
                    snap.mem.check_iid(iid, &r.viewers, self.now),
                    snap.mem.check_iid_in_record(iid, &r.viewers, self.now),
                    "`{name}` by id, from its line and from its record, in {c:?}"
                );
                let by_record = snap.mem.decision_view(iid, &snap.mem.check_iid_in_record(iid, &r.viewers, self.now));
                assert_eq!(d, by_record, "`{name}` by name (perhaps from its line) and from its record, in {c:?}");
                assert_eq!((d.admitted, &d.grant), (f.admitted, &f.grant), "`{name}` in {c:?}: {d:?} vs {f:?}");
                let reason = if !view.current {
                    "denied_not_current"
                } else if d.admitted && d.grant.is_none() {
                    if view.audience.kind == AudienceKind::Public {
                        "admitted_public"
                    } else {
                        "admitted_origin"
                    }
                } else if d.admitted {
                    "admitted_grant"
                } else if fv == FlatViewers::Everyone {
                    "denied_unresolved_viewers"
                } else {
                    "denied_not_in_audience"
                };
                assert_eq!(d.reason, reason, "`{name}` in {c:?}: {d:?}");
                let basis = match (d.admitted, &d.grant) {
                    (false, _) => None,
                    (true, None) => Some("origin"),
                    (true, Some(_)) => Some("grant"),
                };
                assert_eq!(d.basis.as_deref(), basis, "{d:?}");
                assert_eq!(d.blocked_by, view.blocked_by, "{d:?} vs {view:?}");
                assert_eq!(d.item, *name);
                singles.push(d);
            }
            let mut asked = names.clone();
            // Unknown names, among them UUIDs one digit away from a known one.
            let near: Vec<String> = names
                .iter()
                .filter(|n| n.len() == 36)
                .map(|n| format!("{}{}", &n[..35], if n.ends_with('0') { '1' } else { '0' }))
                .filter(|n| !names.contains(n))
                .chain(["unknown".to_string()])
                .collect();
            asked.extend(near.iter().cloned());
            let bulk = snap.check_bulk(&asked, &r, self.now).unwrap();
            assert_eq!(bulk.get(..singles.len()), Some(&singles[..]), "bulk vs single in {c:?}");
            for (d, name) in bulk.iter().skip(singles.len()).zip(&near) {
                assert_eq!((&d.item, d.admitted, &*d.reason), (name, false, "denied_unknown_item"));
                let single = snap.check(name, &r, self.now);
                assert!(matches!(single, Err(crate::StoreError::ItemNotFound(_))), "{name}: {single:?}");
            }
            for owners in
                [vec![], OWNERS.iter().map(|o| o.to_string()).collect(), vec!["p1".to_string()], vec!["x".into()]]
            {
                let filter = if owners.is_empty() { vec![c.owner.clone()] } else { owners.clone() };
                let want = flat.lookup(&fv, &filter, self.now);
                for limit in [1, 2, 1000] {
                    let mut got: Vec<String> = Vec::new();
                    let mut cursor: Option<String> = None;
                    for _ in 0..200 {
                        let page = snap.lookup(&r, &owners, cursor.as_deref(), Some(limit), self.now).unwrap();
                        assert!(page.items.len() <= limit);
                        for d in &page.items {
                            let single = singles.iter().find(|s| s.item == d.item).unwrap();
                            assert_eq!(d, single, "lookup decision vs check");
                        }
                        got.extend(page.items.into_iter().map(|d| d.item));
                        cursor = page.cursor;
                        if cursor.is_none() {
                            break;
                        }
                    }
                    assert!(cursor.is_none(), "cursor loop");
                    assert_eq!(got, want, "lookup {c:?} owners {owners:?} limit {limit}");
                }
            }
        }
        for (name, view) in names.iter().zip(&views) {
            let expand = snap.expand(name, self.now).unwrap();
            let live: Vec<&str> = view.grants.iter().filter(|g| g.live).map(|g| g.id.as_str()).collect();
            let got: Vec<&str> = expand.iter().skip(1).filter_map(|a| a.grant.as_deref()).collect();
            assert_eq!(got, live, "expand {name}");
            assert_eq!(expand.first().map(|a| &a.digest), Some(&view.audience.digest));
            for g in &view.grants {
                let expired = g
                    .expires_at
                    .as_ref()
                    .is_some_and(|e| crate::memory::model::parse_time("e", e).unwrap() <= self.now);
                assert_eq!(g.live, !g.revoked && !expired, "{g:?}");
            }
        }
        assert_eq!(snap.item_count(), names.len());
        assert_eq!(snap.store(), "t");
        // The public audience has no record; every other live audience has one.
        assert_eq!(snap.audience_count(), records.audiences.len() + 1);
        // The views against the durable records themselves (a fault that the live index and a
        // rebuild would share is invisible to `verify`).
        assert_eq!(records.items.len(), views.len());
        for v in &views {
            assert_eq!(v.sources, self.sources.get(&v.id).cloned().unwrap_or_default(), "sources of {}", v.id);
            assert_eq!(v.superseded_by.as_ref(), self.superseded_by.get(&v.id), "successor of {}", v.id);
        }
        for rec in &records.items {
            let v = views.iter().find(|v| v.id == rec.id).unwrap();
            assert_eq!(
                (&v.owner, v.state, &v.sources, &v.superseded_by, &v.audience.digest, v.created_revision),
                (&rec.owner, rec.state, &rec.sources, &rec.superseded_by, &rec.audience, rec.created_rev),
                "item view vs record"
            );
        }
        for g in &records.grants {
            // Grants are revoked by name: every recorded grant must be found by its name.
            assert!(snap.gids.get(&g.id).is_some(), "grant {} cannot be found by name", g.id);
            let v = views.iter().find(|v| v.id == g.item).unwrap();
            let gv = v.grants.iter().find(|x| x.id == g.id).unwrap();
            assert_eq!(
                (gv.revoked, gv.expires_at.clone(), gv.created_at.clone(), &gv.issuer, &gv.reason, &gv.digest),
                (
                    g.revoked,
                    g.expires_at_ms.map(format_time),
                    format_time(g.created_at_ms),
                    &g.issuer,
                    &g.reason,
                    &g.audience
                ),
                "grant view vs record"
            );
        }
        self.store.verify().unwrap();
    }
}

/// What a write should answer, decided from the snapshot before it: the outcome word and, for a
/// derivation, the suppress reason and source (`None`: not checked, e.g. for a refusal).
type Reason = (Option<&'static str>, Option<String>);

fn expected_outcome(snap: &crate::Snapshot, cmd: &Command, now: i64) -> (Option<&'static str>, Option<Reason>) {
    let r = match cmd {
        Command::CreateParticipant(_) | Command::BindIdentity(_) | Command::CreateItem(_) => {
            return (Some("created"), None)
        }
        Command::RemoveParticipant { .. } => return (Some("removed"), None),
        Command::Lifecycle { .. } => return (Some("updated"), None),
        Command::Grant { .. } => return (Some("granted"), None),
        Command::RevokeGrant { .. } => return (Some("revoked"), None),
        Command::Derive { request, .. } => request,
        // Device commands (SPEC §2) are not generated by these histories.
        _ => return (None, None),
    };
    if r.disposition == Disposition::Declassification {
        return (Some("granted"), None);
    }
    if r.disposition == Disposition::Suppress {
        return (Some("suppressed"), Some((Some("requested"), None)));
    }
    // SPEC §1.5 suppress rule, restated from the item views: incomplete provenance first, then
    // a container that reaches a source only through a grant, or not at all.
    let views: Vec<_> = r.sources.iter().filter_map(|s| snap.item_view(s, now).ok()).collect();
    let mut reason: Option<(&'static str, String)> =
        views.iter().find(|v| !v.current).map(|v| ("source_not_current", v.id.clone()));
    if reason.is_none() {
        if let Some(c) = &r.container {
            let viewers = snap.resolve_viewers(snap.pid(&r.owner), c).ok();
            for v in &views {
                let members = |kind: AudienceKind, m: &[String]| match &viewers {
                    Some(earshot_core::Viewers::Resolved(ps)) => {
                        kind == AudienceKind::Public
                            || ps.iter().all(|p| m.iter().any(|x| Some(x.as_str()) == snap.part(*p).map(|r| &*r.name)))
                    }
                    _ => kind == AudienceKind::Public,
                };
                if !members(v.audience.kind, &v.audience.members) {
                    let by_grant = v.grants.iter().any(|g| g.live && members(g.kind, &g.members));
                    let code = if by_grant { "source_reachable_only_through_grant" } else { "source_not_admissible" };
                    reason = Some((code, v.id.clone()));
                    break;
                }
            }
        }
    }
    let outcome = match (r.disposition, &reason) {
        (Disposition::Quarantine, _) => "quarantined",
        (_, Some(_)) => "suppressed",
        _ => "created",
    };
    let reason = match (reason, r.disposition) {
        (Some((code, source)), _) => (Some(code), Some(source)),
        // A quarantine always says why: `requested` when nothing would have suppressed it.
        (None, Disposition::Quarantine) => (Some("requested"), None),
        (None, _) => (None, None),
    };
    (Some(outcome), Some(reason))
}

#[test]
fn random_histories_agree_with_the_flat_evaluator() {
    for seed in 0..12u64 {
        let mut r = Rng(seed);
        let mut w = World::new();
        w.compare();
        for _ in 0..40 {
            w.step(&mut r);
            w.compare();
        }
    }
}

#[test]
fn lookup_refuses_bad_limits_and_cursors() {
    let w = World::new();
    let snap = w.store.latest();
    let c = ContainerInput { owner: "p0".into(), viewers: ViewersInput::default() };
    let r = snap.resolve_container(&c).unwrap();
    assert!(snap.lookup(&r, &[], None, Some(0), w.now).is_err());
    assert!(snap.lookup(&r, &[], None, Some(crate::memory::model::limits::MAX_LOOKUP_LIMIT), w.now).is_ok());
    assert!(snap.lookup(&r, &[], None, Some(crate::memory::model::limits::MAX_LOOKUP_LIMIT + 1), w.now).is_err());
    for bad in ["", "c", "x1", "c-1", "cx"] {
        assert!(snap.lookup(&r, &[], Some(bad), None, w.now).is_err(), "{bad}");
    }
    assert!(snap.lookup(&r, &[], Some("c0"), None, w.now).is_ok());
    let too_many: Vec<String> = (0..=crate::memory::model::limits::MAX_OWNERS).map(|i| format!("o{i}")).collect();
    assert!(snap.lookup(&r, &too_many, None, None, w.now).is_err());
    // Exactly at each bound is still accepted.
    assert!(snap.lookup(&r, &too_many[1..], None, None, w.now).is_ok());
    let at_bound = ViewersInput {
        participants: (0..crate::memory::model::limits::MAX_VIEWERS).map(|i| format!("v{i}")).collect(),
        ..Default::default()
    };
    assert_eq!(snap.resolve_viewers(snap.pid("p0"), &at_bound).ok(), Some(earshot_core::Viewers::Unresolved));
    let at_items: Vec<String> = (0..crate::memory::model::limits::MAX_BULK_ITEMS).map(|i| format!("i{i}")).collect();
    assert_eq!(snap.check_bulk(&at_items, &r, w.now).map(|v| v.len()).ok(), Some(at_items.len()));
    let many_viewers = ViewersInput {
        participants: (0..=crate::memory::model::limits::MAX_VIEWERS).map(|i| format!("v{i}")).collect(),
        ..Default::default()
    };
    assert!(snap.resolve_viewers(snap.pid("p0"), &many_viewers).is_err());
    let too_many_items: Vec<String> =
        (0..=crate::memory::model::limits::MAX_BULK_ITEMS).map(|i| format!("i{i}")).collect();
    assert!(snap.check_bulk(&too_many_items, &r, w.now).is_err());
    assert!(snap.check("nope", &r, w.now).is_err());
    assert!(snap.expand("nope", w.now).is_err());
    assert!(snap.item_view("nope", w.now).is_err());
}

#[test]
fn a_new_store_answers_its_first_revision() {
    let clock = Arc::new(ManualClock::new(T0));
    let earshot = Earshot::temporary(clock).unwrap();
    let out = earshot.create_store("fresh", None).unwrap();
    assert_eq!(out.outcome, "created");
    assert_eq!(out.ids, vec!["fresh".to_string()]);
    assert_eq!(out.revision, 1);
    let incarnation = earshot.store("fresh").unwrap().incarnation().map(str::to_string);
    assert!(incarnation.as_ref().is_some_and(|i| i.len() == 16), "a new store has an incarnation: {incarnation:?}");
    assert_eq!(out.token, crate::token::encode("fresh", incarnation.as_deref(), 1));
    // The same request again is a retry: it answers as the first did (issue 10) ...
    assert_eq!(earshot.create_store("fresh", None).unwrap(), out);
    // ... and another request for the same id is refused.
    let err = earshot.create_store("fresh", Some("other".into())).unwrap_err();
    assert_eq!(err.code(), "store_exists");
    assert_eq!(earshot.store("fresh").unwrap().latest().revision(), 1);
}

#[test]
fn a_running_store_spells_its_tokens_as_encode_does() {
    // The handle caches its store's token tag; each store must answer with its own.
    let earshot = Earshot::temporary(Arc::new(ManualClock::new(T0))).unwrap();
    for id in ["alpha", "beta"] {
        earshot.create_store(id, None).unwrap();
        let h = earshot.store(id).unwrap();
        for rev in [1, 7, u64::MAX] {
            assert_eq!(h.token(rev), crate::token::encode(id, h.incarnation(), rev));
            assert_eq!(h.token(rev), h.latest().token(rev));
            assert_eq!(crate::token::decode(id, h.incarnation(), &h.token(rev)).ok(), Some(rev));
        }
    }
}

#[test]
fn only_a_participant_without_items_can_be_removed() {
    let mut w = World::new();
    w.write(Command::CreateItem(NewItem {
        subjects: Vec::new(),
        id: Some("m".into()),
        owner: "p0".into(),
        content: None,
        attributes: None,
        origin: OriginInput::Keyword(OriginKeyword::OwnerPrivate),
        author: None,
        embedding: None,
        embedding_metric: None,
    }));
    let err = w.store.write(Command::RemoveParticipant { id: "p0".into() }).unwrap_err();
    assert_eq!(err.code(), "participant_owns_items");
    // p1 owns nothing: it goes, and with it its identity-free postings.
    let out = w.store.write(Command::RemoveParticipant { id: "p1".into() }).unwrap();
    assert_eq!(out.outcome, "removed");
    assert!(w.store.latest().pid("p1").is_none());
    w.store.verify().unwrap();
}

#[test]
fn a_suppress_disposition_writes_nothing_and_says_so() {
    let mut w = World::new();
    w.write(Command::CreateItem(NewItem {
        subjects: Vec::new(),
        id: Some("m".into()),
        owner: "p0".into(),
        content: None,
        attributes: None,
        origin: OriginInput::Keyword(OriginKeyword::Public),
        author: None,
        embedding: None,
        embedding_metric: None,
    }));
    let before = w.store.latest().revision();
    let request = DeriveRequest {
        subjects: Vec::new(),
        disposition: Disposition::Suppress,
        owner: "p0".into(),
        sources: vec!["m".into()],
        id: None,
        content: None,
        attributes: None,
        container: None,
        outputs: None,
        members: None,
        reason: None,
        expires_at: None,
    };
    let out = w.store.write(Command::Derive { request, issuer: "admin".into() }).unwrap();
    assert_eq!(
        (out.outcome.as_str(), out.reason.as_deref(), out.source.as_deref()),
        ("suppressed", Some("requested"), None)
    );
    assert!(out.ids.is_empty());
    assert_eq!(w.store.latest().revision(), before);
    assert_eq!(w.store.latest().item_count(), 1);
}

#[test]
fn a_lookup_always_finishes() {
    // A lookup merges sorted posting streams; a stream that never ends would spin forever. The
    // lookup runs on another thread so that such a fault fails here within seconds.
    let mut r = Rng(7);
    let mut w = World::new();
    for _ in 0..30 {
        w.step(&mut r);
    }
    let snap = w.store.latest();
    let now = w.now;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut pages = 0;
        for c in World::containers() {
            let Ok(rc) = snap.resolve_container(&c) else { continue };
            let _ = snap.lookup(&rc, &[], None, Some(1000), now);
            pages += 1;
        }
        let _ = tx.send(pages);
    });
    let done = rx.recv_timeout(std::time::Duration::from_secs(20));
    assert_eq!(done.ok(), Some(World::containers().len()), "a lookup did not finish within 20 s");
}

#[test]
fn a_reopened_store_answers_exactly_as_before() {
    // The start-up rebuild (records → snapshot, the flat bases of every index) against the
    // snapshot the writer grew step by step.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut w = World::on_sled(&path);
    let mut r = Rng(11);
    for round in 0..3 {
        for _ in 0..25 {
            w.step(&mut r);
        }
        let before = w.answers();
        w.reopen(&path);
        let after = w.answers();
        assert_eq!(before.len(), after.len(), "round {round}");
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(b, a, "round {round}: an answer changed across a restart");
        }
        w.compare();
    }
}

#[test]
fn a_wrong_audience_hint_in_the_name_table_never_decides() {
    // The item name table's lines carry each item's origin audience as a hint, so a check by
    // name reads the audience together with the record. A hint goes stale when a participant's
    // removal moves items to another audience; the check must then decide from the record.
    // Here every hint is made wrong (the public audience, or a neighbour's), and every answer
    // by name must stay what the true table gives.
    let mut r = Rng(5);
    let mut w = World::new();
    for _ in 0..80 {
        w.step(&mut r);
    }
    let truth = w.store.latest();
    let mut wrong = truth.mem.clone();
    let n = wrong.items.len() as u32;
    let auds = wrong.auds.len() as u32;
    // No summaries: the lines send every check to the records, where the hint is read.
    let entries: Vec<_> = (0..n)
        .filter_map(|i| {
            let rec = truth.item(i)?;
            let hint = if i % 2 == 0 { crate::memory::snapshot::PUBLIC_AID } else { (rec.aud + 1) % auds.max(1) };
            let role = crate::memory::id_table::LineRole::FromRecords;
            Some(crate::memory::id_table::LineEntry { id: i, name: &rec.name, hint, summary: None, role })
        })
        .collect();
    wrong.iids = crate::memory::id_table::IdTable::build(entries.into_iter(), truth.mem.line_stamp());
    let mut compared = 0;
    for c in World::containers() {
        let (Ok(want_c), Ok(got_c)) = (truth.resolve_container(&c), wrong.resolve_container(&c)) else { continue };
        for name in truth.item_names() {
            let want = truth.check(&name, &want_c, w.now).unwrap();
            let got = wrong.check(&name, &got_c, w.now).unwrap();
            assert_eq!(got, want, "{name} for {c:?}");
            compared += 1;
        }
    }
    assert!(compared > 100, "too few answers compared: {compared}");
}

/// Items of `snap` whose check by name would be decided from a line's summary, in the lines it
/// asks first (a finished build's off the writer, or its own).
/// The summary item `iid` has in the lines of `mem` by id.
fn first_summary(mem: &crate::memory::snapshot::MemorySnapshot, iid: u32) -> Option<crate::memory::id_table::Summary> {
    mem.item_lines().first.summary_by_id(iid)
}

fn decided_from_lines(snap: &crate::Snapshot) -> Vec<String> {
    let mem = &snap.mem;
    let first = mem.item_lines().first;
    let names = snap.item_names();
    names
        .into_iter()
        .filter(|n| {
            first.find(n, |_, _| None).is_some_and(|f| f.summary.is_some() && mem.line_summary_holds(first, f.id))
        })
        .collect()
}

#[test]
fn a_decision_from_an_item_line_is_the_records_decision_after_every_write() {
    // After a restart every unlinked, current item with a small audience is decided from its
    // line's summary, a copy of its record and audience. Writes then change records and
    // audiences without rebuilding the lines; every answer must stay the flat evaluator's.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut w = World::on_sled(&path);
    let mut r = Rng(21);
    for _ in 0..150 {
        w.step(&mut r);
    }
    w.reopen(&path);
    let at_open = decided_from_lines(&w.store.latest());
    assert!(at_open.len() >= 5, "too few items decided from their lines: {at_open:?}");
    w.compare();

    // Lines that lie (every summary says public) under the right stamp: `verify`'s facts
    // name each private item whose line a check would believe.
    let snap = w.store.latest();
    let mem = &snap.mem;
    let mut lying = mem.clone();
    let entries: Vec<_> = (0..mem.items.len() as u32)
        .filter_map(|i| {
            let rec = mem.item(i)?;
            let summary = Some(crate::memory::id_table::Summary::Public);
            let role = crate::memory::trust::line_role(rec);
            Some(crate::memory::id_table::LineEntry { id: i, name: &rec.name, hint: rec.aud, summary, role })
        })
        .collect();
    lying.iids = crate::memory::id_table::IdTable::build(entries.into_iter(), mem.line_stamp());
    let private = |n: &&String| {
        mem.iid(n).and_then(|i| mem.item(i)).is_some_and(|r| r.aud != crate::memory::snapshot::PUBLIC_AID)
    };
    let liar = at_open.iter().find(private).and_then(|n| mem.iid(n)).expect("a private item decided from its line");
    assert!(mem.item_line_agrees(liar) && !lying.item_line_agrees(liar));
    // A check by id believes the lying line too, so `compare`'s line-against-record assertion
    // would catch such a line.
    let believed = at_open.iter().filter(private).filter_map(|n| mem.iid(n)).any(|iid| {
        World::containers().iter().any(|c| {
            let viewers = lying.resolve_container(c).unwrap().viewers;
            lying.check_iid(iid, &viewers, w.now) != lying.check_iid_in_record(iid, &viewers, w.now)
        })
    });
    assert!(believed, "no check by id believed a lying line");
    // Only the by-id column lies: `verify` still names the item, and a check by id believes it.
    let mut lying_column = mem.clone();
    lying_column.iids.set_summary_by_id(liar, Some(crate::memory::id_table::Summary::Public));
    assert!(!lying_column.item_line_agrees(liar), "a lying by-id summary is a disagreement");
    assert_ne!(crate::memory::verify::facts(&lying_column), crate::memory::verify::facts(mem));
    let by_id_believed = World::containers().iter().any(|c| {
        let viewers = lying_column.resolve_container(c).unwrap().viewers;
        lying_column.check_iid(liar, &viewers, w.now) != lying_column.check_iid_in_record(liar, &viewers, w.now)
    });
    assert!(by_id_believed, "a check by id decides from the column");
    // Lines that name the wrong role (every item an instruction): an item by an unknown author
    // admitted from its line would be answered as an instruction, and `verify` names it.
    use crate::memory::id_table::{LineEntry, LineRole};
    let mut lying_roles = mem.clone();
    let entries: Vec<_> = (0..mem.items.len() as u32)
        .filter_map(|i| {
            let rec = mem.item(i)?;
            let summary = first_summary(mem, i);
            Some(LineEntry { id: i, name: &rec.name, hint: rec.aud, summary, role: LineRole::Instruction })
        })
        .collect();
    lying_roles.iids = crate::memory::id_table::IdTable::build(entries.into_iter(), mem.line_stamp());
    let first = mem.item_lines().first;
    let unknown_authors: Vec<&String> = at_open
        .iter()
        .filter(|n| first.find(n, |_, _| None).is_some_and(|f| f.role == LineRole::AuthorUnknown))
        .collect();
    assert!(!unknown_authors.is_empty(), "no item by an unknown author is decided from its line");
    let wrong_role = unknown_authors.iter().any(|n| {
        World::containers().iter().any(|c| {
            let rc = lying_roles.resolve_container(c).unwrap();
            let (lied, truth) = (lying_roles.check(n, &rc, w.now).unwrap(), mem.check(n, &rc, w.now).unwrap());
            lied.admitted && lied != truth
        })
    });
    assert!(wrong_role, "no answer took its role from a lying line");
    let iid = mem.iid(unknown_authors[0]).unwrap();
    assert!(mem.item_line_agrees(iid) && !lying_roles.item_line_agrees(iid));
    assert_ne!(crate::memory::verify::facts(&lying), crate::memory::verify::facts(mem));

    // Revoking an item its line admits: the line still says current, the record not.
    let owner_only = ContainerInput { owner: "p0".into(), viewers: ViewersInput::default() };
    let snap = w.store.latest();
    let rc = snap.resolve_container(&owner_only).unwrap();
    let admitted = |n: &String| snap.check(n, &rc, w.now).unwrap().admitted;
    let victim = at_open.iter().find(|n| admitted(n)).cloned().expect("an item p0 sees, decided from its line");
    w.write(Command::Lifecycle {
        item: victim.clone(),
        request: LifecycleRequest { action: Action::Revoke, by: None },
    });
    let snap = w.store.latest();
    let rc = snap.resolve_container(&owner_only).unwrap();
    let d = snap.check(&victim, &rc, w.now).unwrap();
    assert_eq!((d.admitted, &*d.reason), (false, "denied_not_current"), "{victim}: {d:?}");
    assert!(!decided_from_lines(&snap).contains(&victim), "a revoked item's line no longer decides");
    // A fold makes every record the base's own again: lines built before it must not decide
    // until they are rebuilt (the writer rebuilds them after the command that folds).
    let mut folded = snap.mem.clone();
    folded.items.fold();
    let d = folded.check(&victim, &folded.resolve_container(&owner_only).unwrap(), w.now).unwrap();
    assert_eq!((d.admitted, &*d.reason), (false, "denied_not_current"), "{victim} after a fold: {d:?}");
    folded.refresh_item_lines();
    let d = folded.check(&victim, &folded.resolve_container(&owner_only).unwrap(), w.now).unwrap();
    assert_eq!((d.admitted, &*d.reason), (false, "denied_not_current"), "{victim} after a rebuild: {d:?}");
    w.compare();

    for _ in 0..60 {
        w.step(&mut r);
        w.compare();
    }
    let still = decided_from_lines(&w.store.latest());
    assert!(
        !still.is_empty() && still.len() < at_open.len() + 40,
        "{} of {} still from lines",
        still.len(),
        at_open.len()
    );
}

/// A store on sled in `path` that rebuilds its item lines off the writer even when small;
/// `held` keeps every build waiting until the test runs it
/// ([`crate::memory::line_build::LineBuild::run`]). After `steps` random writes it is reopened,
/// so that its items are an item base whose lines carry summaries.
fn lines_off_the_writer(path: &std::path::Path, held: bool, r: &mut Rng, steps: usize) -> World {
    use crate::memory::line_build::HELD_FOR_TESTS;
    let config =
        crate::Config { item_lines_off_writer_from: if held { HELD_FOR_TESTS } else { 0 }, ..crate::Config::default() };
    let mut w = World::on_sled_with(path, config);
    for _ in 0..steps {
        w.step(r);
    }
    w.reopen(path);
    w
}

#[test]
fn item_lines_built_off_the_writer_decide_only_while_they_hold() {
    // A participant's removal edits audiences in place, so the item lines go stale and the
    // writer starts a build off its thread, held here until the test runs it. Whether the
    // build is waiting, finished, installed by a later write or abandoned for a newer one,
    // every answer must stay the flat evaluator's (`compare`, which ends with `verify`).
    let (mut builds_run, mut decided_from_builds, mut abandoned) = (0, 0, 0);
    // Puts a participant in an item's audience and removes it, which edits that audience in
    // place (or retires it into an equal one): the lines go stale.
    let toggle = |w: &mut World, r: &mut Rng| {
        let p = ["p3", "p4", "p2"][r.below(3)];
        if w.store.latest().pid(p).is_none() {
            w.write(Command::CreateParticipant(NewParticipant {
                id: p.into(),
                kind: ParticipantKind::Agent,
                name: None,
            }));
        }
        let mut viewers = ViewersInput { participants: r.subset(&PARTS), ..Default::default() };
        viewers.participants.push(p.into());
        let id = Some(w.fresh());
        w.write(Command::CreateItem(NewItem {
            subjects: Vec::new(),
            id,
            owner: OWNERS[r.below(2)].into(),
            content: None,
            attributes: None,
            origin: OriginInput::Viewers(viewers),
            author: None,
            embedding: None,
            embedding_metric: None,
        }));
        w.write(Command::RemoveParticipant { id: p.into() });
    };
    for seed in 0..4u64 {
        let mut r = Rng(100 + seed);
        let dir = tempfile::tempdir().unwrap();
        let mut w = lines_off_the_writer(&dir.path().join("db"), true, &mut r, 60);
        for round in 0..16 {
            toggle(&mut w, &mut r);
            let before = w.store.latest();
            let (pending, stamp) = (before.mem.next_lines.clone(), before.mem.line_stamp());
            w.compare();
            if !pending.serves(stamp) {
                continue;
            }
            // Writes while the build waits: new items are found in the store's own lines, and
            // changed records decide, never their stale summaries. Sometimes a second removal
            // makes the waiting build stale before it ran.
            for _ in 0..r.below(4) {
                w.step(&mut r);
            }
            if r.below(3) == 0 {
                toggle(&mut w, &mut r);
            }
            w.compare();
            let now = w.store.latest();
            if now.mem.line_stamp() != stamp {
                // Replaced by a newer build: it stops at once and gives no lines.
                pending.run();
                assert!(pending.ready(stamp).is_none() && !pending.serves(stamp), "seed {seed} round {round}");
                abandoned += 1;
                continue;
            }
            pending.run();
            builds_run += 1;
            let now = w.store.latest();
            assert!(now.mem.item_lines().then.is_some(), "a finished build that holds is asked first");
            decided_from_builds += decided_from_lines(&now).len();
            w.compare();
            // The next write that changes something makes the build's lines the store's own.
            for _ in 0..20 {
                w.step(&mut r);
                let mem = &w.store.latest().mem;
                if mem.iids.stamp() == mem.line_stamp() && mem.item_lines().then.is_none() {
                    break;
                }
            }
            w.compare();
        }
    }
    assert!(builds_run >= 6 && abandoned >= 2, "{builds_run} builds run, {abandoned} abandoned");
    assert!(decided_from_builds > 0, "no check was decided from a finished build's lines");
}

#[test]
fn random_histories_agree_with_item_lines_built_off_the_writer_on_threads() {
    // The same as with lines built in the write, with real threads: a build finishes whenever
    // it does, before, between or after the checks of a comparison.
    for seed in 0..6u64 {
        let mut r = Rng(200 + seed);
        let dir = tempfile::tempdir().unwrap();
        let mut w = lines_off_the_writer(&dir.path().join("db"), false, &mut r, 30);
        for _ in 0..40 {
            w.step(&mut r);
            w.compare();
        }
    }
}
