//! Device `authorize` (SPEC §2.5, issue 3): the cost of a decision for a principal holding 20,
//! 100, 1,000 and 10,000 relation grants and capabilities, and of delegation chains of depth 1–8.
//!
//! One store, built once through the real write path (`Earshot::open_with` over `MemBackend`,
//! then `StoreHandle::write`), holds every principal measured, so the store around them is the
//! same for every size and only what the principal holds changes:
//! - a schema of three relations opening a few patterns;
//! - 5,000 owners, one device each; principal `hold-N` receives relation grants from owners
//!   `0..N/2` and holds `N/2` root capabilities spread over up to 50 of those devices (literal,
//!   `*` and `**` patterns, some with two patterns);
//! - per size, two devices of its own (not counted in `N`): one on which `hold-N` holds `N` more
//!   capabilities with distinct literal paths (the adversarial layout for a scan), and one on
//!   which it holds `N` capabilities that share the literal prefix `zone` before a `*` (all filed
//!   under one key of the prefix index: the layout the index does not help);
//! - noise: 12 other principals each holding 2,000 capabilities (half on the devices the measured
//!   principals use), and a grant from every owner to one of them;
//! - two delegation chains of depth 8, authorized by the holder of each link (so depth d is the
//!   chain of link d): a *long* one where every link narrows the paths by one segment, so every
//!   depth is asked about the same 9-segment path; and a *short* one on the 3-segment path
//!   `home/hall/light` (`home/**`, `home/hall/*`, then `home/hall/light` with a shrinking
//!   `not_after` per link); plus a short depth-3 chain with a CEL condition on its middle link.
//!
//! Criterion medians are over one fixed request per case (in cache). A per-call report follows,
//! each call timed on its own (the figures include the clock read): 20,000 requests per case
//! drawn at random over everything the principal holds (so the records read grow with `N`), and
//! the same count cycling over 16 fixed targets spread over what it holds (the same working set
//! for every `N`, so only the amount held differs).
//!
//! Run with `cargo bench -p earshot-benches --bench authorize`. Knobs: see [`per_call_report`]
//! and [`build`].

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use earshot_benches::{quantile, MemBackend, XorShift, NOW_MS};
use earshot_core::capability::AuthReason;
use earshot_core::condition::{ContextValue, RequestContext};
use earshot_store::devices::model::{ConstraintsInput, NewCapability, NewDevice, NewRelation, SchemaInput};
use earshot_store::devices::RawAuthority;
use earshot_store::model::{format_time, Command, NewParticipant, ParticipantKind};
use earshot_store::{Config, Earshot, ManualClock, Snapshot, StoreHandle};

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const STORE: &str = "devices";
const SIZES: [usize; 4] = [20, 100, 1_000, 10_000];
/// Owners (and devices): enough for the largest size's `N/2` grantors.
const OWNERS: usize = 5_000;
/// Devices over which a principal's ordinary capabilities are spread.
const CAP_DEVICES: usize = 50;
const NOISE_PRINCIPALS: usize = 12;
const NOISE_CAPS_EACH: usize = 2_000;
const CHAIN_DEPTH: usize = 8;
/// Setup writers: the store's writer commits whatever is queued as one group.
const SETUP_THREADS: usize = 16;
/// Requests per case and size in the per-call report.
const CALLS: usize = 20_000;

const SCHEMA: &str = "relation family {\n  opens status/waking\n  opens medication/**\n}\n\
relation care_provider {\n  opens vitals/** for read, subscribe\n}\n\
relation colleague {\n  opens calendar/next-start\n}\n";
const RELATIONS: [&str; 3] = ["family", "care_provider", "colleague"];

fn owner(k: usize) -> String {
    format!("o{k:05}")
}
fn device(k: usize) -> String {
    format!("d{k:05}")
}
fn holder(n: usize) -> String {
    format!("hold-{n}")
}
fn one_device(n: usize) -> String {
    format!("flat-{n}")
}
fn prefix_device(n: usize) -> String {
    format!("zone-{n}")
}
fn chain_holder(j: usize) -> String {
    format!("chain-{j}")
}
fn short_holder(j: usize) -> String {
    format!("short-{j}")
}
fn cond_holder(j: usize) -> String {
    format!("cond-{j}")
}

/// A path the relation opens for `read`.
fn relation_path(relation: &str) -> &'static str {
    match relation {
        "family" => "status/waking",
        "care_provider" => "vitals/heart",
        _ => "calendar/next-start",
    }
}

/// The patterns of a principal's `i`-th ordinary capability: literal, `*` or `**`; every
/// seventh has a second pattern.
fn cap_paths(i: usize) -> Vec<String> {
    let mut v = vec![match i % 3 {
        0 => format!("sensors/s{i}/reading"),
        1 => format!("logs/l{i}/*"),
        _ => format!("files/f{i}/**"),
    }];
    if i.is_multiple_of(7) {
        v.push(format!("status/c{i}/*"));
    }
    v
}

/// A concrete path the `i`-th capability covers.
fn cap_request(i: usize) -> String {
    match i % 3 {
        0 => format!("sensors/s{i}/reading"),
        1 => format!("logs/l{i}/today"),
        _ => format!("files/f{i}/2026/01/notes"),
    }
}

fn cap_device(i: usize, n: usize) -> usize {
    i % (n / 2).min(CAP_DEVICES)
}

fn participant(id: String, kind: ParticipantKind) -> Command {
    Command::CreateParticipant(NewParticipant { id, kind, name: None })
}

fn root_cap(issuer: String, holder: String, device: String, paths: Vec<String>, actions: &[&str]) -> Command {
    Command::CreateCapability(NewCapability {
        id: None,
        issuer,
        holder,
        device,
        paths,
        actions: actions.iter().map(|a| a.to_string()).collect(),
        constraints: None,
        parent: None,
    })
}

/// Writes `cmds` from [`SETUP_THREADS`] threads; every write must succeed.
fn write_all(store: &StoreHandle, cmds: Vec<Command>) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..SETUP_THREADS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(cmd) = cmds.get(i) else { break };
                if let Err(e) = store.write(cmd.clone()) {
                    panic!("setup write {cmd:?} refused: {e}");
                }
            });
        }
    });
}

/// Ids of a delegation chain, root first.
fn chain_ids(prefix: &str, depth: usize) -> Vec<String> {
    (1..=depth).map(|j| format!("{prefix}-k{j}")).collect()
}

/// Pattern of link `j` (1-based): the root opens `home/**`, each link one segment deeper.
fn chain_pattern(j: usize) -> String {
    let mut p = String::from("home");
    for s in 2..=j {
        p.push_str(&format!("/s{s}"));
    }
    p.push_str("/**");
    p
}

/// The request every link of the long chain covers.
const CHAIN_PATH: &str = "home/s2/s3/s4/s5/s6/s7/s8/leaf";

/// Pattern of link `j` of the short chains.
fn short_pattern(j: usize) -> String {
    match j {
        1 => "home/**".into(),
        2 => "home/hall/*".into(),
        _ => "home/hall/light".into(),
    }
}

/// The request every link of the short chains covers.
const SHORT_PATH: &str = "home/hall/light";

/// One link of a chain: root minted by the device's owner, the others delegated by the holder
/// of the previous link.
struct Link {
    id: String,
    issuer: String,
    holder: String,
    paths: Vec<String>,
    constraints: Option<ConstraintsInput>,
}

fn write_chain(store: &StoreHandle, links: Vec<Link>) {
    let mut parent: Option<String> = None;
    for (j, l) in links.into_iter().enumerate() {
        store
            .write(Command::CreateCapability(NewCapability {
                id: Some(l.id.clone()),
                issuer: l.issuer,
                holder: l.holder,
                device: "chain-dev".into(),
                paths: l.paths,
                actions: if j == 0 { vec!["read".into(), "write".into()] } else { vec!["read".into()] },
                constraints: l.constraints,
                parent: parent.replace(l.id),
            }))
            .expect("chain link");
    }
}

/// The process's resident set (Linux), a rough figure for comparing layouts.
fn resident() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).map(|l| l.trim_start_matches("VmRSS:").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn open(backend: &Arc<MemBackend>) -> Earshot {
    Earshot::open_with(backend.clone(), Arc::new(ManualClock::new(NOW_MS)), Config::default()).expect("opens")
}

/// The store built by writes, or with `EARSHOT_AUTHORIZE_REBUILT=1` the same records opened
/// again (the indexes rebuilt at start-up, as after a restart).
fn build() -> (Earshot, Arc<StoreHandle>) {
    let backend = Arc::new(MemBackend::default());
    let (earshot, store) = build_in(&backend);
    if std::env::var("EARSHOT_AUTHORIZE_REBUILT").is_ok_and(|v| v == "1") {
        let revision = store.latest().revision();
        drop(store);
        earshot.shutdown();
        let t = Instant::now();
        let earshot = open(&backend);
        let store = earshot.store(STORE).expect("store runs");
        assert_eq!(store.latest().revision(), revision);
        eprintln!("reopened: indexes rebuilt from the records in {:.1?}; resident {}", t.elapsed(), resident());
        return (earshot, store);
    }
    (earshot, store)
}

fn build_in(backend: &Arc<MemBackend>) -> (Earshot, Arc<StoreHandle>) {
    let t = Instant::now();
    let earshot = open(backend);
    earshot.create_store(STORE, None).expect("store created");
    let store = earshot.store(STORE).expect("store runs");
    store.write(Command::PutSchema(SchemaInput { schema: SCHEMA.into() })).expect("schema");

    // Participants.
    let mut cmds: Vec<Command> = (0..OWNERS).map(|k| participant(owner(k), ParticipantKind::Person)).collect();
    cmds.extend(SIZES.iter().map(|&n| participant(holder(n), ParticipantKind::Agent)));
    cmds.extend((0..NOISE_PRINCIPALS).map(|j| participant(format!("noise-{j}"), ParticipantKind::Agent)));
    cmds.extend((1..=CHAIN_DEPTH).map(|j| participant(chain_holder(j), ParticipantKind::Agent)));
    cmds.extend((1..=CHAIN_DEPTH).map(|j| participant(short_holder(j), ParticipantKind::Agent)));
    cmds.extend((1..=3).map(|j| participant(cond_holder(j), ParticipantKind::Agent)));
    cmds.push(participant("special-owner".into(), ParticipantKind::Person));
    write_all(&store, cmds);

    // Devices.
    let mut cmds: Vec<Command> =
        (0..OWNERS).map(|k| Command::CreateDevice(NewDevice { id: device(k), owner: owner(k), name: None })).collect();
    for &n in &SIZES {
        for id in [one_device(n), prefix_device(n)] {
            cmds.push(Command::CreateDevice(NewDevice { id, owner: "special-owner".into(), name: None }));
        }
    }
    cmds.push(Command::CreateDevice(NewDevice { id: "chain-dev".into(), owner: "special-owner".into(), name: None }));
    write_all(&store, cmds);

    // Relation grants, ordinary capabilities, the one-device layouts and the noise.
    let mut cmds = Vec::new();
    for &n in &SIZES {
        for k in 0..n / 2 {
            cmds.push(Command::CreateRelation(NewRelation {
                id: None,
                grantor: owner(k),
                relation: RELATIONS[k % 3].into(),
                grantee: holder(n),
                constraints: None,
            }));
            let d = cap_device(k, n);
            let actions: &[&str] = if k.is_multiple_of(2) { &["read"] } else { &["read", "write"] };
            cmds.push(root_cap(owner(d), holder(n), device(d), cap_paths(k), actions));
        }
        for i in 0..n {
            cmds.push(root_cap(
                "special-owner".into(),
                holder(n),
                one_device(n),
                vec![format!("zone/z{i}/state")],
                &["read"],
            ));
            cmds.push(root_cap(
                "special-owner".into(),
                holder(n),
                prefix_device(n),
                vec![format!("zone/*/z{i}")],
                &["read"],
            ));
        }
    }
    let mut rng = XorShift::new(0xa07_4012e);
    for j in 0..NOISE_PRINCIPALS {
        for i in 0..NOISE_CAPS_EACH {
            // Half on the devices the measured principals use; the same pattern shapes.
            let d = if i.is_multiple_of(2) { rng.below(CAP_DEVICES) } else { rng.below(OWNERS) };
            cmds.push(root_cap(owner(d), format!("noise-{j}"), device(d), cap_paths(i), &["read"]));
        }
    }
    for k in 0..OWNERS {
        cmds.push(Command::CreateRelation(NewRelation {
            id: None,
            grantor: owner(k),
            relation: RELATIONS[(k + 1) % 3].into(),
            grantee: format!("noise-{}", k % NOISE_PRINCIPALS),
            constraints: None,
        }));
    }
    let total = cmds.len();
    write_all(&store, cmds);

    // Chains, one link at a time (each needs its parent).
    let issuer = |j: usize, holder: fn(usize) -> String| if j == 1 { "special-owner".into() } else { holder(j - 1) };
    let ids = chain_ids("chain", CHAIN_DEPTH);
    write_chain(
        &store,
        (1..=CHAIN_DEPTH)
            .map(|j| Link {
                id: ids[j - 1].clone(),
                issuer: issuer(j, chain_holder),
                holder: chain_holder(j),
                paths: vec![chain_pattern(j)],
                constraints: None,
            })
            .collect(),
    );
    let ids = chain_ids("short", CHAIN_DEPTH);
    write_chain(
        &store,
        (1..=CHAIN_DEPTH)
            .map(|j| Link {
                id: ids[j - 1].clone(),
                issuer: issuer(j, short_holder),
                holder: short_holder(j),
                paths: vec![short_pattern(j)],
                // From link 4 on, the paths cannot narrow further: the window does.
                constraints: (j >= 4).then(|| ConstraintsInput {
                    not_after: Some(format_time(NOW_MS + (100 - j as i64) * 86_400_000)),
                    ..Default::default()
                }),
            })
            .collect(),
    );
    let ids = chain_ids("cond", 3);
    write_chain(
        &store,
        (1..=3)
            .map(|j| Link {
                id: ids[j - 1].clone(),
                issuer: issuer(j, cond_holder),
                holder: cond_holder(j),
                paths: vec![short_pattern(j)],
                constraints: (j == 2).then(|| ConstraintsInput {
                    condition: Some("human_in_cell == false".into()),
                    ..Default::default()
                }),
            })
            .collect(),
    );
    let snap = store.latest();
    eprintln!(
        "setup: {} owners and devices, {} grants and capabilities in the bulk phase; revision {}; built in {:.1?}; resident {}",
        OWNERS,
        total,
        snap.revision(),
        t.elapsed(),
        resident()
    );
    (earshot, store)
}

/// One request and the decision it must get.
#[derive(Clone)]
struct Req {
    principal: String,
    device: String,
    path: String,
    action: &'static str,
    expect: AuthReason,
}

impl Req {
    fn new(
        principal: String,
        device: String,
        path: impl Into<String>,
        action: &'static str,
        expect: AuthReason,
    ) -> Self {
        Req { principal, device, path: path.into(), action, expect }
    }
}

fn decide(s: &Snapshot, r: &Req, ctx: &RequestContext) -> AuthReason {
    s.authorize_raw(&r.principal, &r.device, &r.path, r.action, NOW_MS, ctx).expect("well-formed request").reason
}

/// The cases measured for a principal holding `n`; `k` picks which grant or capability.
fn held_case(case: &str, n: usize, k: usize) -> Req {
    let p = holder(n);
    let half = n / 2;
    match case {
        // Via the grant from owner k (its device may also carry capabilities of the principal).
        "relation_allowed" => {
            let k = k % half;
            Req::new(p, device(k), relation_path(RELATIONS[k % 3]), "read", AuthReason::AllowedRelation)
        }
        // Capability i covers it; the device's owner has granted a relation that does not.
        "capability_allowed" => {
            let i = k % half;
            Req::new(p, device(cap_device(i, n)), cap_request(i), "read", AuthReason::AllowedCapability)
        }
        // The owner's grant does not open `delete`, and the capability filed under the path's
        // prefix is found and matched but covers only read/write: every index hit, no authority.
        "denied" => {
            let i = k % half;
            Req::new(p, device(cap_device(i, n)), cap_request(i), "delete", AuthReason::DeniedNoAuthority)
        }
        "one_device_allowed" => {
            let i = k % n;
            Req::new(p, one_device(n), format!("zone/z{i}/state"), "read", AuthReason::AllowedCapability)
        }
        "one_device_denied" => {
            let i = k % n;
            Req::new(p, one_device(n), format!("zone/z{i}/other"), "read", AuthReason::DeniedNoAuthority)
        }
        "shared_prefix_allowed" => {
            let i = k % n;
            Req::new(p, prefix_device(n), format!("zone/a/z{i}"), "read", AuthReason::AllowedCapability)
        }
        _ => {
            let i = k % n;
            Req::new(p, prefix_device(n), format!("zone/a/y{i}"), "read", AuthReason::DeniedNoAuthority)
        }
    }
}

const CASES: [&str; 7] = [
    "relation_allowed",
    "capability_allowed",
    "denied",
    "one_device_allowed",
    "one_device_denied",
    "shared_prefix_allowed",
    "shared_prefix_denied",
];

fn chain_req(depth: usize) -> Req {
    Req::new(chain_holder(depth), "chain-dev".into(), CHAIN_PATH, "read", AuthReason::AllowedCapability)
}

fn short_req(depth: usize) -> Req {
    Req::new(short_holder(depth), "chain-dev".into(), SHORT_PATH, "read", AuthReason::AllowedCapability)
}

fn cond_req() -> Req {
    Req::new(cond_holder(3), "chain-dev".into(), SHORT_PATH, "read", AuthReason::AllowedCapability)
}

fn cond_ctx() -> RequestContext {
    let mut ctx = RequestContext::new();
    ctx.insert("human_in_cell".into(), ContextValue::Bool(false));
    ctx
}

/// Checks every case's answer (and that a chain's authority is the leaf) before timing it.
fn verify(s: &Snapshot) {
    let empty = RequestContext::new();
    for &n in &SIZES {
        for case in CASES {
            for k in [0, 1, 2, n / 4, n / 2 - 1, n - 1] {
                let r = held_case(case, n, k);
                assert_eq!(decide(s, &r, &empty), r.expect, "{case} n={n} k={k} {}", r.path);
            }
        }
    }
    for d in 1..=CHAIN_DEPTH {
        for (r, prefix) in [(chain_req(d), "chain"), (short_req(d), "short")] {
            let raw = s.authorize_raw(&r.principal, &r.device, &r.path, r.action, NOW_MS, &empty).expect("request");
            assert_eq!(raw.reason, r.expect, "{prefix} depth {d}");
            assert!(matches!(raw.authority, Some(RawAuthority::Capability(_))), "{prefix} depth {d}");
            let chain = s.capability_chain(&format!("{prefix}-k{d}")).expect("chain");
            assert_eq!(chain.chain.len(), d, "{prefix} depth {d}");
        }
    }
    let r = cond_req();
    assert_eq!(decide(s, &r, &cond_ctx()), AuthReason::AllowedCapability);
    assert_eq!(decide(s, &r, &empty), AuthReason::DeniedConditionError);
}

fn held(c: &mut Criterion, s: &Snapshot) {
    let ctx = RequestContext::new();
    for case in CASES {
        let mut g = c.benchmark_group(format!("authorize/{case}"));
        for &n in &SIZES {
            // A fixed request from the middle of what the principal holds.
            let r = held_case(case, n, n / 4 + 1);
            g.bench_with_input(BenchmarkId::from_parameter(n), &r, |b, r| {
                b.iter(|| {
                    s.authorize_raw(black_box(&r.principal), &r.device, black_box(&r.path), r.action, NOW_MS, &ctx)
                })
            });
        }
        g.finish();
    }
}

fn chains(c: &mut Criterion, s: &Snapshot) {
    let empty = RequestContext::new();
    for (group, req) in
        [("authorize/chain_depth_long_path", chain_req as fn(usize) -> Req), ("authorize/chain_depth", short_req)]
    {
        let mut g = c.benchmark_group(group);
        for d in 1..=CHAIN_DEPTH {
            let r = req(d);
            g.bench_with_input(BenchmarkId::from_parameter(d), &r, |b, r| {
                b.iter(|| {
                    s.authorize_raw(black_box(&r.principal), &r.device, black_box(&r.path), r.action, NOW_MS, &empty)
                })
            });
        }
        g.finish();
    }
    let ctx = cond_ctx();
    let mut g = c.benchmark_group("authorize/chain_condition");
    let r = cond_req();
    g.bench_function("depth_3_condition_on_link_2", |b| {
        b.iter(|| s.authorize_raw(black_box(&r.principal), &r.device, black_box(&r.path), r.action, NOW_MS, &ctx))
    });
    g.finish();
}

fn per_call(s: &Snapshot, reqs: &[Req], ctx: &RequestContext) -> Vec<Duration> {
    let mut lat = Vec::with_capacity(reqs.len());
    for r in reqs {
        let t = Instant::now();
        black_box(s.authorize_raw(black_box(&r.principal), &r.device, &r.path, r.action, NOW_MS, ctx).ok());
        lat.push(t.elapsed());
    }
    lat.sort_unstable();
    lat
}

/// Requests per per-call row: the shared-prefix layout is linear in what is held, so it gets
/// fewer calls at the larger sizes.
fn calls_for(case: &str, n: usize) -> usize {
    if case.starts_with("shared_prefix") {
        (200_000 / n).clamp(50, CALLS)
    } else {
        CALLS
    }
}

fn ns(lat: &[Duration], q: f64) -> String {
    format!("{} ns", quantile(lat, q).as_nanos())
}

/// Per-call percentiles. For each case and size: `CALLS` requests at random over everything
/// the principal holds (p50/p99/p99.9), then as many cycling over 16 fixed targets (p50).
///
/// Knobs (for a quick, repeated measurement of one row): `EARSHOT_AUTHORIZE_CASES` (comma list
/// of case names; when set, the chain rows run only if it names `chains`),
/// `EARSHOT_AUTHORIZE_HELD` (comma list of sizes) and `EARSHOT_AUTHORIZE_REPEAT` (passes over
/// the rows, default 1). The store built is the same whatever they say.
fn per_call_report(s: &Snapshot) {
    let empty = RequestContext::new();
    let list = |var: &str| std::env::var(var).ok().map(|v| v.split(',').map(|x| x.trim().to_string()).collect());
    let cases: Option<Vec<String>> = list("EARSHOT_AUTHORIZE_CASES");
    let held: Option<Vec<String>> = list("EARSHOT_AUTHORIZE_HELD");
    let repeat: usize = std::env::var("EARSHOT_AUTHORIZE_REPEAT").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let case_wanted = |c: &str| cases.as_ref().is_none_or(|l| l.iter().any(|x| x == c));
    let held_wanted = |n: usize| held.as_ref().is_none_or(|l| l.iter().any(|x| *x == n.to_string()));
    eprintln!("\nauthorize latency per call (each call timed on its own; includes the clock read):");
    eprintln!(
        "{:>24} {:>7} {:>7} {:>10} {:>10} {:>10} {:>12}",
        "case", "held", "calls", "p50 rand", "p99 rand", "p99.9 rand", "p50 16 fixed"
    );
    for pass in 0..repeat {
        if repeat > 1 {
            eprintln!("pass {}", pass + 1);
        }
        held_rows(s, &empty, &case_wanted, &held_wanted);
    }
    if !case_wanted("chains") && cases.is_some() {
        return;
    }
    chain_rows(s, &empty);
}

/// The per-call rows of the held-authority cases (see [`per_call_report`]).
fn held_rows(
    s: &Snapshot,
    empty: &RequestContext,
    case_wanted: &dyn Fn(&str) -> bool,
    held_wanted: &dyn Fn(usize) -> bool,
) {
    let mut rng = XorShift::new(0xd1ce);
    for case in CASES {
        for &n in &SIZES {
            // The same random requests whichever rows are asked for.
            if !case_wanted(case) || !held_wanted(n) {
                let calls = calls_for(case, n);
                for _ in 0..calls {
                    rng.below(n);
                }
                continue;
            }
            let calls = calls_for(case, n);
            let random: Vec<Req> = (0..calls).map(|_| held_case(case, n, rng.below(n))).collect();
            let targets: Vec<Req> = (0..16).map(|t| held_case(case, n, t * n / 16 + 1)).collect();
            let fixed: Vec<Req> = (0..calls).map(|i| targets[i % 16].clone()).collect();
            // Answers first (untimed), then the timed passes.
            for r in random.iter().step_by(97).chain(&targets) {
                assert_eq!(decide(s, r, empty), r.expect, "{case} n={n} {}", r.path);
            }
            let rand = per_call(s, &random, empty);
            let fix = per_call(s, &fixed, empty);
            eprintln!(
                "{case:>24} {n:>7} {calls:>7} {:>10} {:>10} {:>10} {:>12}",
                ns(&rand, 0.5),
                ns(&rand, 0.99),
                ns(&rand, 0.999),
                ns(&fix, 0.5)
            );
        }
    }
}

/// The per-call rows of the delegation chains.
fn chain_rows(s: &Snapshot, empty: &RequestContext) {
    let row = |label: String, r: Req, ctx: &RequestContext| {
        let lat = per_call(s, &vec![r; CALLS], ctx);
        eprintln!(
            "{label:>24} {:>7} {CALLS:>7} {:>10} {:>10} {:>10} {:>12}",
            1,
            ns(&lat, 0.5),
            ns(&lat, 0.99),
            ns(&lat, 0.999),
            "-"
        );
    };
    for d in 1..=CHAIN_DEPTH {
        row(format!("chain depth {d}, 3 segs"), short_req(d), empty);
    }
    row("chain 3 + condition".into(), cond_req(), &cond_ctx());
    for d in 1..=CHAIN_DEPTH {
        row(format!("chain depth {d}, 9 segs"), chain_req(d), empty);
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let (earshot, store) = build();
    let snap = store.latest();
    verify(&snap);
    held(&mut c, &snap);
    chains(&mut c, &snap);
    c.final_summary();
    // As in `decisions`: a plain substring or `a|b` alternation decides whether the per-call
    // report was asked for.
    let wanted =
        |target: &str| filters.is_empty() || filters.iter().any(|f| f.split('|').any(|part| target.contains(part)));
    if wanted("authorize/latency") {
        per_call_report(&snap);
    }
    earshot.shutdown();
}
