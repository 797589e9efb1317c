//! The peer benchmark: Earshot against Cedar (`cedar-policy` 4) on one generated workload,
//! interleaved in one run, every decision of both checked against the generator's answer.
//!
//! Workload, per size (1k, 100k, 1M items by default) and mix: participants `items / 100` (at
//! least 10) and ten audiences per participant as owner (the standard mix), or `items / 20` and
//! four (the audience-heavy mix, `EARSHOT_PEER_MIX`: both run by default), each of 1–5 participants (the owner and up to
//! four others, drawn uniformly); every item has one origin audience (uniform over all
//! audiences; the item's owner is the audience's owner), and a tenth of the items carry one
//! grant to another audience of the same owner. A query is one viewer and one uniformly random
//! item; half the viewers are drawn from the item's authorized audiences (so about half the
//! answers are allows), half from all participants. Each variant decides its own queries,
//! drawn alike, so that no variant finds in cache the items another has just read.
//!
//! Earshot: a container whose owner is the viewer (`V = {viewer}`), checked by name
//! (`latest` + `touch_item` + `resolve_container` + `check`, the service's path minus HTTP) and pre-resolved
//! (`check_iid` with the interned viewer). Cedar: participants are `User`s whose parents are the
//! `Audience`s they belong to; items are `Item`s with an `origin` audience and a `grants` set;
//! one policy, `principal in resource.origin || principal in resource.grants`. By name builds
//! the `EntityUid`s and the `Request` in the call; pre-resolved reuses a built `Request`.
//!
//! Run with `cargo bench -p earshot-benches --features peer --bench peer`. Sizes from
//! `EARSHOT_PEER_SIZES` (comma-separated), calls per variant and size from
//! `EARSHOT_PEER_CALLS` (default 100,000); `EARSHOT_PEER_BUILD=writes` builds Earshot's store
//! by one write per item and grant instead of opening it from records (see [`Build`]);
//! `EARSHOT_PEER_NAMES=uuid` names the items like UUIDs (36 bytes) instead of `i0000042`.
//! Each size also reports what one dependent random read costs over a working set of its
//! item records' size ([`dependent_read_ns`]): the floor under a cold check's growth.

use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicySet,
    Request, RestrictedExpression,
};
use earshot_benches::{import, quantile, MemBackend, XorShift, NOW_MS, STORE, T0_MS};
use earshot_core::{AudienceDigest, AudienceKind, State, Viewers};
use earshot_store::durable::{AudienceRecord, GrantRecord, ItemRecord, MetaRecord, ParticipantRecord};
use earshot_store::model::{Command, ContainerInput, NewGrant, NewItem, OriginInput, ParticipantKind, ViewersInput};
use earshot_store::{Config, Earshot, ManualClock, Records, StoreHandle};

/// The service's allocator, for both systems (see `crates/earshot/src/main.rs`): the figures
/// are taken on the memory layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The shape of a workload (`EARSHOT_PEER_MIX`): how many participants and audiences per item.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mix {
    /// `items / 100` participants, ten audiences each as owner (`items / 10` audiences).
    Standard,
    /// `items / 20` participants, four audiences each as owner (`items / 5` audiences): the
    /// mix of issue 34, where more of a check's reads are of audiences.
    AudienceHeavy,
}

impl Mix {
    fn participants(self, items: usize) -> usize {
        match self {
            Mix::Standard => (items / 100).max(10),
            Mix::AudienceHeavy => (items / 20).max(10),
        }
    }

    fn audiences_per_owner(self) -> usize {
        match self {
            Mix::Standard => 10,
            Mix::AudienceHeavy => 4,
        }
    }
}

/// The mixes to run (`EARSHOT_PEER_MIX`: `standard`, `audience_heavy`, or both by default).
fn mixes_from_env() -> Vec<Mix> {
    match std::env::var("EARSHOT_PEER_MIX").as_deref() {
        Ok("standard") => vec![Mix::Standard],
        Ok("audience_heavy") => vec![Mix::AudienceHeavy],
        Ok("both") | Err(_) => vec![Mix::Standard, Mix::AudienceHeavy],
        Ok(other) => panic!("EARSHOT_PEER_MIX must be `standard`, `audience_heavy` or `both`, not {other:?}"),
    }
}

/// One generated workload with its expected answers.
struct Workload {
    participants: usize,
    /// Audiences each participant owns.
    per_owner: usize,
    /// Sorted member pids of each audience; audience `a` belongs to owner `a / per_owner`.
    audiences: Vec<Vec<u32>>,
    /// Origin audience and optional grant audience of each item.
    items: Vec<(u32, Option<u32>)>,
    /// (viewer, item, expected admission).
    queries: Vec<(u32, u32, bool)>,
}

fn pname(p: u32) -> String {
    format!("u{p:06}")
}

/// An item's name: `i0000042`, or with `EARSHOT_PEER_NAMES=uuid` a UUID-shaped one (36 bytes,
/// too long to sit inline in the item record) derived from the index.
fn iname(i: u32) -> String {
    static UUID: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *UUID.get_or_init(|| std::env::var("EARSHOT_PEER_NAMES").is_ok_and(|v| v == "uuid")) {
        let h = XorShift::new(u64::from(i)).next_u64();
        format!("{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}", h >> 32, (h >> 16) & 0xffff, h & 0xfff, i >> 20, i)
    } else {
        format!("i{i:07}")
    }
}

fn aname(a: u32) -> String {
    format!("a{a:07}")
}

fn generate(items: usize, calls: usize, seed: u64, mix: Mix) -> Workload {
    let mut rng = XorShift::new(seed);
    let participants = mix.participants(items);
    let per_owner = mix.audiences_per_owner();
    let mut audiences = Vec::with_capacity(participants * per_owner);
    for owner in 0..participants as u32 {
        let mut seen: HashSet<Vec<u32>> = HashSet::new();
        while seen.len() < per_owner {
            let size = 1 + rng.below(5);
            let mut m = vec![owner];
            while m.len() < size {
                let p = rng.below(participants) as u32;
                if !m.contains(&p) {
                    m.push(p);
                }
            }
            m.sort_unstable();
            if seen.insert(m.clone()) {
                audiences.push(m);
            }
        }
    }
    let items: Vec<(u32, Option<u32>)> = (0..items)
        .map(|_| {
            let origin = rng.below(audiences.len()) as u32;
            let grant = (rng.below(10) == 0).then(|| {
                let base = origin - origin % per_owner as u32;
                base + ((origin - base) + 1 + rng.below(per_owner - 1) as u32) % per_owner as u32
            });
            (origin, grant)
        })
        .collect();
    let queries = (0..calls)
        .map(|_| {
            let item = rng.below(items.len()) as u32;
            let (origin, grant) = items[item as usize];
            let viewer = if rng.below(2) == 0 {
                let a = match grant {
                    Some(g) if rng.below(2) == 0 => g,
                    _ => origin,
                };
                let m = &audiences[a as usize];
                m[rng.below(m.len())]
            } else {
                rng.below(participants) as u32
            };
            let inside = |a: u32| audiences[a as usize].binary_search(&viewer).is_ok();
            (viewer, item, inside(origin) || grant.is_some_and(inside))
        })
        .collect();
    Workload { participants, per_owner, audiences, items, queries }
}

/// How the Earshot store is built (`EARSHOT_PEER_BUILD`): `records` (default) opens it from
/// its records, the start-up rebuild; `writes` opens a store holding only the participants and
/// then makes every item and grant by one write each (an item's grant right after it), as a
/// store that grew one request at a time. Issue 12 asks both to meet the check
/// target; their in-memory layouts differ (folds, overlays, allocation order).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Build {
    Records,
    Writes,
}

fn build_from_env() -> Build {
    match std::env::var("EARSHOT_PEER_BUILD").as_deref() {
        Ok("writes") => Build::Writes,
        Ok("records") | Err(_) => Build::Records,
        Ok(other) => panic!("EARSHOT_PEER_BUILD must be `records` or `writes`, not {other:?}"),
    }
}

/// The workload as an Earshot store, built as `build` says.
fn earshot_store(w: &Workload, build: Build) -> (Earshot, Arc<StoreHandle>) {
    match build {
        Build::Records => earshot_from_records(w),
        Build::Writes => earshot_from_writes(w),
    }
}

/// Clients writing at once when the store is built by single writes.
const WRITE_CLIENTS: usize = 16;

/// The participants as records, then every item and grant by a single write through the
/// store's writer (the path of `POST /items` and `POST /items/{id}/grants`, minus HTTP), from
/// [`WRITE_CLIENTS`] threads.
fn earshot_from_writes(w: &Workload) -> (Earshot, Arc<StoreHandle>) {
    let records = Records {
        meta: Some(MetaRecord {
            id: STORE.into(),
            name: Some("peer".into()),
            revision: 1,
            created_at_ms: T0_MS,
            committed_at_ms: None,
            incarnation: None,
        }),
        participants: (0..w.participants as u32)
            .map(|p| ParticipantRecord { id: pname(p), kind: ParticipantKind::Person, name: None })
            .collect(),
        ..Records::default()
    };
    let backend = Arc::new(MemBackend::default());
    import(&*backend, &records).expect("records import");
    let earshot =
        Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("the store opens");
    let store = earshot.store(STORE).expect("the store runs");
    let members = |a: u32| -> Vec<String> { w.audiences[a as usize].iter().map(|&p| pname(p)).collect() };
    // Several clients, as a service sees them (the writer commits their writes in groups); client
    // `c` writes the items `c, c + WRITE_CLIENTS, …`, each item's grant right after it. Every
    // write is timed: the writer's pauses (the items folding into a new base, the name table's
    // lines rebuilt after it) show as the slowest writes.
    let mut latency: Vec<Duration> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..WRITE_CLIENTS)
            .map(|client| {
                let (store, members) = (&store, &members);
                s.spawn(move || {
                    let mut lat = Vec::with_capacity(w.items.len() / WRITE_CLIENTS * 2);
                    let mut timed = |command: Command| {
                        let t = Instant::now();
                        store.write(command).expect("the write is applied");
                        lat.push(t.elapsed());
                    };
                    for (seq, &(origin, grant)) in w.items.iter().enumerate().skip(client).step_by(WRITE_CLIENTS) {
                        let item = iname(seq as u32);
                        let create = NewItem {
                            id: Some(item.clone()),
                            owner: pname(origin / w.per_owner as u32),
                            content: None,
                            attributes: None,
                            origin: OriginInput::Viewers(ViewersInput {
                                participants: members(origin),
                                ..ViewersInput::default()
                            }),
                            subjects: Vec::new(),
                            author: None,
                            embedding: None,
                            embedding_metric: None,
                        };
                        timed(Command::CreateItem(create));
                        if let Some(g) = grant {
                            let grant = NewGrant { members: members(g), reason: None, expires_at: None };
                            timed(Command::Grant { item, grant, issuer: "admin".into() });
                        }
                    }
                    lat
                })
            })
            .collect();
        clients.into_iter().flat_map(|c| c.join().expect("a writing client")).collect()
    });
    latency.sort_unstable();
    let q = |p: f64| quantile(&latency, p);
    let slow = latency.iter().filter(|l| **l >= Duration::from_millis(100)).count();
    eprintln!(
        "{} single writes from {WRITE_CLIENTS} clients, latency p50 {:.1?}, p99 {:.1?}, p99.9 {:.1?}, max {:.1?}; {slow} took 100 ms or more",
        latency.len(),
        q(0.5),
        q(0.99),
        q(0.999),
        latency.last().copied().unwrap_or_default(),
    );
    // A large store rebuilds its item lines off the writer after the items fold; until that
    // build is done, checks decide from the records. Measure the settled store.
    let t = Instant::now();
    while !store.latest().item_lines_hold() && t.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let snap = store.latest();
    eprintln!(
        "item lines hold {:.1?} after the last write; {} of {} items are decided from their lines",
        t.elapsed(),
        snap.items_decided_from_lines(),
        snap.item_count()
    );
    (earshot, store)
}

/// The workload as Earshot records, opened from an in-memory backend (the start-up rebuild).
fn earshot_from_records(w: &Workload) -> (Earshot, Arc<StoreHandle>) {
    let digest = |m: &[u32]| {
        let names: Vec<String> = m.iter().map(|&p| pname(p)).collect();
        let kind = AudienceKind::of_members(names.len());
        (kind, names.clone(), AudienceDigest::compute(kind, &names).to_hex())
    };
    let audiences: Vec<AudienceRecord> = w
        .audiences
        .iter()
        .map(|m| {
            let (kind, members, digest) = digest(m);
            AudienceRecord { digest, kind, members }
        })
        .collect();
    let owner = |a: u32| pname(a / w.per_owner as u32);
    let items: Vec<ItemRecord> = w
        .items
        .iter()
        .enumerate()
        .map(|(seq, &(origin, _))| ItemRecord {
            subjects: Vec::new(),
            id: iname(seq as u32),
            seq: seq as u32,
            owner: owner(origin),
            audience: audiences[origin as usize].digest.clone(),
            sources: Vec::new(),
            state: State::Active,
            superseded_by: None,
            created_rev: seq as u64 + 2,
            created_at_ms: T0_MS + seq as i64,
            author: None,
            author_unknown: false,
            author_removed: false,
        })
        .collect();
    let rev0 = items.len() as u64 + 2;
    let grants: Vec<GrantRecord> = w
        .items
        .iter()
        .enumerate()
        .filter_map(|(seq, &(_, g))| g.map(|g| (seq, g)))
        .enumerate()
        .map(|(n, (seq, g))| GrantRecord {
            consent: None,
            id: format!("g{n:07}"),
            seq: n as u32,
            item: iname(seq as u32),
            audience: audiences[g as usize].digest.clone(),
            issuer: "admin".into(),
            reason: None,
            created_at_ms: T0_MS + w.items.len() as i64 + n as i64,
            created_rev: rev0 + n as u64,
            expires_at_ms: None,
            revoked: false,
        })
        .collect();
    let records = Records {
        meta: Some(MetaRecord {
            id: STORE.into(),
            name: Some("peer".into()),
            revision: rev0 + grants.len() as u64,
            created_at_ms: T0_MS,
            committed_at_ms: None,
            incarnation: None,
        }),
        participants: (0..w.participants as u32)
            .map(|p| ParticipantRecord { id: pname(p), kind: ParticipantKind::Person, name: None })
            .collect(),
        audiences,
        items,
        grants,
        ..Records::default()
    };
    let backend = Arc::new(MemBackend::default());
    import(&*backend, &records).expect("records import");
    let earshot =
        Earshot::open_with(backend, Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("the store opens");
    let store = earshot.store(STORE).expect("the store runs");
    (earshot, store)
}

struct Cedar {
    policies: PolicySet,
    entities: Entities,
    authorizer: Authorizer,
    user: EntityTypeName,
    item: EntityTypeName,
    view: EntityUid,
}

impl Cedar {
    fn build(w: &Workload) -> Cedar {
        let ty = |s: &str| EntityTypeName::from_str(s).expect("type name");
        let (user, audience, item) = (ty("User"), ty("Audience"), ty("Item"));
        let uid = |t: &EntityTypeName, id: String| EntityUid::from_type_name_and_id(t.clone(), EntityId::new(id));
        let mut parents: Vec<HashSet<EntityUid>> = vec![HashSet::new(); w.participants];
        for (a, m) in w.audiences.iter().enumerate() {
            for &p in m {
                parents[p as usize].insert(uid(&audience, aname(a as u32)));
            }
        }
        let mut entities: Vec<Entity> = Vec::with_capacity(w.participants + w.audiences.len() + w.items.len());
        for (p, ps) in parents.into_iter().enumerate() {
            entities.push(Entity::new_no_attrs(uid(&user, pname(p as u32)), ps));
        }
        for a in 0..w.audiences.len() as u32 {
            entities.push(Entity::new_no_attrs(uid(&audience, aname(a)), HashSet::new()));
        }
        for (i, &(origin, grant)) in w.items.iter().enumerate() {
            let attrs = HashMap::from([
                ("origin".to_string(), RestrictedExpression::new_entity_uid(uid(&audience, aname(origin)))),
                (
                    "grants".to_string(),
                    RestrictedExpression::new_set(
                        grant.map(|g| RestrictedExpression::new_entity_uid(uid(&audience, aname(g)))),
                    ),
                ),
            ]);
            entities.push(Entity::new(uid(&item, iname(i as u32)), attrs, HashSet::new()).expect("item entity"));
        }
        let entities = Entities::from_entities(entities, None).expect("entities");
        let policies = PolicySet::from_str(
            r#"permit(principal, action == Action::"view", resource)
               when { principal in resource.origin || principal in resource.grants };"#,
        )
        .expect("policy parses");
        let view = EntityUid::from_str(r#"Action::"view""#).expect("action");
        Cedar { policies, entities, authorizer: Authorizer::new(), user, item, view }
    }

    fn request(&self, viewer: &str, item: &str) -> Request {
        let p = EntityUid::from_type_name_and_id(self.user.clone(), EntityId::new(viewer));
        let r = EntityUid::from_type_name_and_id(self.item.clone(), EntityId::new(item));
        Request::new(p, self.view.clone(), r, Context::empty(), None).expect("request")
    }

    fn decide(&self, req: &Request) -> bool {
        self.authorizer.is_authorized(req, &self.policies, &self.entities).decision() == CedarDecision::Allow
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Variant {
    EarshotByName,
    CedarByName,
    EarshotPre,
    CedarPre,
    /// The parts of Earshot's by-name path, timed alone: `latest` + `resolve_container`, and the
    /// item's name → id lookup.
    EarshotResolveOnly,
    EarshotNameOnly,
}

const VARIANTS: [Variant; 6] = [
    Variant::EarshotByName,
    Variant::CedarByName,
    Variant::EarshotPre,
    Variant::CedarPre,
    Variant::EarshotResolveOnly,
    Variant::EarshotNameOnly,
];

/// How much of the process's memory sits on transparent huge pages (Linux; "unknown"
/// elsewhere): a cold check's cost is mostly dependent loads, and on this class of machine a
/// load that also misses the TLB costs about twice as much on 4 KiB pages (BENCHMARKS.md).
fn huge_pages() -> String {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |name: &str| {
        rollup.lines().find_map(|l| l.strip_prefix(name)?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
    };
    match (field("AnonHugePages:"), field("Rss:")) {
        (Some(huge), Some(rss)) => format!("{} of {} MiB resident on huge pages", huge >> 10, rss >> 10),
        _ => "huge pages unknown".into(),
    }
}

/// Items per bulk check in [`bulk_per_item`].
const BULK: usize = 100;

/// `check/bulk` as the service runs it (`latest`, `resolve_container`, `check_bulk`) for the
/// queries in batches of [`BULK`]: the batch's first viewer, the batch's items. Every answer is
/// compared with a single check's, after the timing. Per item, p50 / p95 over the batches.
fn bulk_per_item(store: &StoreHandle, names: &[(String, String)], containers: &[ContainerInput]) -> String {
    let mut per_item = Vec::with_capacity(names.len() / BULK);
    for (batch, container) in names.chunks_exact(BULK).zip(containers.iter().step_by(BULK)) {
        let items: Vec<String> = batch.iter().map(|(_, i)| i.clone()).collect();
        let t = Instant::now();
        let s = store.latest();
        let rc = s.resolve_container(black_box(container)).expect("resolves");
        let answers = s.check_bulk(black_box(&items), &rc, NOW_MS).expect("bulk check");
        per_item.push(t.elapsed() / BULK as u32);
        for (item, answer) in items.iter().zip(&answers) {
            let single = s.check(item, &rc, NOW_MS).expect("check");
            if answer.admitted != single.admitted || answer.reason != single.reason {
                eprintln!("check/bulk decided {answer:?} for {item}, a single check {single:?}");
                std::process::abort();
            }
        }
    }
    per_item.sort_unstable();
    format!("{} / {} ns", quantile(&per_item, 0.5).as_nanos(), quantile(&per_item, 0.95).as_nanos())
}

/// What one dependent random read costs on this machine over a working set of `lines` cache
/// lines (one line per item, the size of the item records): a pointer chase through a random
/// single cycle (Sattolo's shuffle), so every read's address comes from the read before, as a
/// check's reads do. Mean ns per read over 2,000,000 reads, after one warm lap. A check that
/// must read anything from a cold store costs at least this on top of its in-cache work.
fn dependent_read_ns(lines: usize) -> f64 {
    const WORDS_PER_LINE: usize = 8;
    let lines = lines.max(1024);
    let mut order: Vec<usize> = (0..lines).collect();
    let mut rng = XorShift::new(0x05a7_7010);
    for i in (1..lines).rev() {
        order.swap(i, rng.below(i));
    }
    let mut next = vec![0u64; lines * WORDS_PER_LINE];
    for (k, &line) in order.iter().enumerate() {
        next[line * WORDS_PER_LINE] = (order[(k + 1) % lines] * WORDS_PER_LINE) as u64;
    }
    let mut at = 0usize;
    for _ in 0..lines.min(2_000_000) {
        at = next[at] as usize;
    }
    const READS: u32 = 2_000_000;
    let t = Instant::now();
    for _ in 0..READS {
        at = next[black_box(at)] as usize;
    }
    black_box(at);
    t.elapsed().as_secs_f64() * 1e9 / f64::from(READS)
}

fn run_size(items: usize, calls: usize, build: Build, mix: Mix) {
    let t = Instant::now();
    // Every variant decides its own queries (drawn alike): a variant that decided the same
    // items just before would have brought their lines into the cache for the next one, and
    // the by-name check's figure is meant to be of a cold item.
    let w = generate(items, calls * VARIANTS.len(), 0x9ee2_0000 + items as u64, mix);
    let allows = w.queries.iter().filter(|q| q.2).count();
    let queries = w.queries.len();
    let gen_time = t.elapsed();
    let t = Instant::now();
    let (earshot, store) = earshot_store(&w, build);
    let earshot_time = t.elapsed();
    let t = Instant::now();
    let cedar = Cedar::build(&w);
    let cedar_time = t.elapsed();
    eprintln!(
        "\n{items} items, {mix:?} mix: {} participants, {} audiences, {} grants; {queries} queries, {calls} per variant ({allows} allows); {}; \
         generated in {gen_time:.1?}, Earshot built from {build:?} in {earshot_time:.1?}, Cedar entities built in {cedar_time:.1?}",
        w.participants,
        w.audiences.len(),
        w.items.iter().filter(|i| i.1.is_some()).count(),
        huge_pages(),
    );

    // Inputs as each path receives them: names for by-name, resolved forms for pre-resolved.
    let names: Vec<(String, String)> = w.queries.iter().map(|&(v, i, _)| (pname(v), iname(i))).collect();
    let containers: Vec<ContainerInput> = names
        .iter()
        .map(|(v, _)| ContainerInput {
            owner: v.clone(),
            viewers: ViewersInput { participants: vec![v.clone()], ..ViewersInput::default() },
        })
        .collect();
    let snap = store.latest();
    let resolved: Vec<(u32, Viewers<u32>)> = names
        .iter()
        .map(|(v, i)| {
            let pid = snap.participant_id(v).expect("viewer interned");
            (snap.item_id(i).expect("item interned"), Viewers::Resolved(vec![pid]))
        })
        .collect();
    let requests: Vec<Request> = names.iter().map(|(v, i)| cedar.request(v, i)).collect();

    // Interleaved: rounds over blocks of queries, each block decided by every variant in an
    // order that rotates per round. Each call is timed alone (the figure includes the clock read).
    let mut lat: HashMap<Variant, Vec<Duration>> = VARIANTS.iter().map(|v| (*v, Vec::with_capacity(calls))).collect();
    const BLOCK: usize = 10_000;
    for (round, start) in (0..calls).step_by(BLOCK).enumerate() {
        let end = (start + BLOCK).min(calls);
        for k in 0..VARIANTS.len() {
            let at = (round + k) % VARIANTS.len();
            let variant = VARIANTS[at];
            let out = lat.get_mut(&variant).expect("variant");
            for q in (start..end).map(|q| at * calls + q) {
                let t = Instant::now();
                let allowed = match variant {
                    Variant::EarshotByName => {
                        let s = store.latest();
                        s.touch_item(black_box(&names[q].1));
                        let rc = s.resolve_container(black_box(&containers[q])).expect("resolves");
                        s.check(black_box(&names[q].1), &rc, NOW_MS).expect("check").admitted
                    }
                    Variant::EarshotPre => {
                        let (iid, viewers) = &resolved[q];
                        snap.check_iid(black_box(*iid), viewers, NOW_MS).admitted
                    }
                    Variant::CedarByName => {
                        cedar.decide(&cedar.request(black_box(&names[q].0), black_box(&names[q].1)))
                    }
                    Variant::CedarPre => cedar.decide(black_box(&requests[q])),
                    Variant::EarshotResolveOnly => {
                        let s = store.latest();
                        let rc = s.resolve_container(black_box(&containers[q])).expect("resolves");
                        black_box(rc);
                        w.queries[q].2
                    }
                    Variant::EarshotNameOnly => {
                        black_box(snap.item_id(black_box(&names[q].1)).expect("known item"));
                        w.queries[q].2
                    }
                };
                out.push(t.elapsed());
                let expected = w.queries[q].2;
                if allowed != expected {
                    eprintln!("{variant:?} decided {allowed} for query {q} {:?}, expected {expected}", names[q]);
                    std::process::abort();
                }
            }
        }
    }
    let stat = |v: Variant| {
        let mut l = lat.get(&v).cloned().unwrap_or_default();
        l.sort_unstable();
        (quantile(&l, 0.5), quantile(&l, 0.95))
    };
    eprintln!(
        "{:>10} {:>14} {:>12} {:>12} {:>12} {:>12} {:>14}",
        "items", "path", "Earshot p50", "p95", "Cedar p50", "p95", "Cedar/Earshot"
    );
    for (path, e, c) in [
        ("by name", Variant::EarshotByName, Variant::CedarByName),
        ("pre-resolved", Variant::EarshotPre, Variant::CedarPre),
    ] {
        let (e50, e95) = stat(e);
        let (c50, c95) = stat(c);
        eprintln!(
            "{items:>10} {path:>14} {:>12} {:>12} {:>12} {:>12} {:>13.1}×",
            format!("{} ns", e50.as_nanos()),
            format!("{} ns", e95.as_nanos()),
            format!("{} ns", c50.as_nanos()),
            format!("{} ns", c95.as_nanos()),
            c50.as_secs_f64() / e50.as_secs_f64().max(1e-12),
        );
    }
    let part = |v: Variant| {
        let (p50, p95) = stat(v);
        format!("{} / {} ns", p50.as_nanos(), p95.as_nanos())
    };
    eprintln!(
        "{items:>10} Earshot parts (p50 / p95): latest + resolve_container {}; item name → id {}",
        part(Variant::EarshotResolveOnly),
        part(Variant::EarshotNameOnly)
    );
    let bulk = bulk_per_item(&store, &names[..calls], &containers[..calls]);
    eprintln!("{items:>10} Earshot check/bulk of {BULK} items by name, per item (p50 / p95): {bulk}");
    eprintln!(
        "{items:>10} one dependent random read over {items} cache lines ({} MiB): {:.0} ns",
        (items * 64) >> 20,
        dependent_read_ns(items)
    );
    drop(requests);
    drop(cedar);
    earshot.shutdown();
}

fn main() {
    let sizes: Vec<usize> = std::env::var("EARSHOT_PEER_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().replace('_', "").parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 100_000, 1_000_000]);
    let calls: usize =
        std::env::var("EARSHOT_PEER_CALLS").ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(100_000);
    let build = build_from_env();
    eprintln!(
        "peer benchmark: Earshot vs Cedar, single-viewer checks, {calls} calls per variant and size; \
         Earshot store built from {build:?}"
    );
    let mixes = mixes_from_env();
    for items in sizes {
        for &mix in &mixes {
            run_size(items, calls, build, mix);
        }
    }
}
