//! Property tests for SPEC §2 (paths, narrowing, relation grants, capabilities, uses) against a naive reference.
//!
//! The reference shares no code with `earshot_core::path`, `earshot_core::capability` or the
//! store's device indexes: paths are matched by a recursion over `/`-split strings, containment is
//! brute force over every concrete path of a small alphabet, and `authorize` is a plain scan of a
//! list of edges and capabilities in creation order with a parent-pointer chain walk.
//!
//! Decisions the fixtures document and the reference encodes: `**` matches one or more remaining
//! segments; windows are half-open `[not_before, not_after)`; an allowed use consumes one from
//! every counted link of its authority; a denial reports the first covering authority's failure in
//! creation order, relations before capabilities (within a chain, the link nearest the leaf); a
//! delegation carries at most the parent's uses left; every chain link's condition must hold.
//!
//! `PROPTEST_CASES` overrides every case count here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Barrier};

use earshot_core::actions::Actions;
use earshot_core::capability::{widenings, Constraints, Scope};
use earshot_core::condition::{ContextValue, RequestContext};
use earshot_core::path::{Path, PathPattern};
use earshot_store::devices::model::{
    AuthorityView, AuthorizeRequest, AuthorizeView, ConstraintsInput, NewCapability, NewDevice, NewRelation,
    SchemaInput,
};
use earshot_store::model::{format_time, Command, Consistency, NewParticipant, ParticipantKind, WriteOutcome};
use earshot_store::{Earshot, ManualClock, StoreError, StoreHandle};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const T0_MS: i64 = earshot_tests::T0_MS;
const STORE: &str = "devprops";

fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases);
    ProptestConfig { cases, failure_persistence: None, max_shrink_iters: 1024, ..ProptestConfig::default() }
}

fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

// ---- 1. the reference path matcher and brute-force containment ----------------------------------

/// Literal segments of generated patterns and paths.
const SEGS: [&str; 3] = ["a", "b", "c"];
/// A literal no generated pattern names: stands for every other segment in brute force.
const FRESH: &str = "z";

/// Segment-wise matching, by recursion: `*` one segment, a trailing `**` one or more.
fn ref_matches(pattern: &[&str], path: &[&str]) -> bool {
    match (pattern.split_first(), path.split_first()) {
        (Some((&"**", rest)), _) => rest.is_empty() && !path.is_empty(),
        (Some((p, prest)), Some((s, srest))) => (*p == "*" || p == s) && ref_matches(prest, srest),
        (None, None) => true,
        _ => false,
    }
}

fn ref_match_str(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    ref_matches(&p, &s)
}

/// Longest concrete path brute force enumerates: generated patterns have at most five segments.
const MAX_BRUTE_LEN: usize = 7;

/// Every concrete path over `SEGS` plus [`FRESH`] with 1..=[`MAX_BRUTE_LEN`] segments, shortest
/// first; computed once.
fn all_paths() -> &'static [Vec<&'static str>] {
    static PATHS: std::sync::OnceLock<Vec<Vec<&'static str>>> = std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        let alphabet = [SEGS[0], SEGS[1], SEGS[2], FRESH];
        let mut out: Vec<Vec<&'static str>> = Vec::new();
        let mut layer: Vec<Vec<&'static str>> = vec![vec![]];
        for _ in 0..MAX_BRUTE_LEN {
            let next: Vec<Vec<&'static str>> = layer
                .iter()
                .flat_map(|p| {
                    alphabet.iter().map(move |s| {
                        let mut q = p.clone();
                        q.push(s);
                        q
                    })
                })
                .collect();
            out.extend(next.iter().cloned());
            layer = next;
        }
        out
    })
}

/// Brute force: every concrete path `child` matches is matched by `parent`. A counterexample,
/// if any, is at most one segment longer than the longer pattern, and needs no literal but the
/// patterns' own and one fresh one; paths up to two segments longer are tried.
fn ref_within(child: &str, parent: &str) -> bool {
    let c: Vec<&str> = child.split('/').collect();
    let p: Vec<&str> = parent.split('/').collect();
    let max = c.len().max(p.len()) + 2;
    assert!(max <= MAX_BRUTE_LEN, "`{child}` / `{parent}` are longer than brute force covers");
    all_paths().iter().take_while(|path| path.len() <= max).all(|path| !ref_matches(&c, path) || ref_matches(&p, path))
}

fn pattern_str() -> impl Strategy<Value = String> {
    let seg = prop::sample::select(vec!["a", "b", "c", "*"]);
    (prop::collection::vec(seg, 0..4), any::<bool>()).prop_map(|(mut segs, rest)| {
        if rest || segs.is_empty() {
            segs.push("**");
        }
        segs.join("/")
    })
}

fn path_str(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(SEGS.to_vec()), 1..=max).prop_map(|s| s.join("/"))
}

fn pat(s: &str) -> PathPattern {
    PathPattern::parse(s).unwrap_or_else(|e| panic!("pattern `{s}`: {e}"))
}

proptest! {
    #![proptest_config(config(256))]

    /// `PathPattern::matches` agrees with the recursive reference on random patterns and paths.
    #[test]
    fn path_matching_agrees_with_the_reference(p in pattern_str(), paths in prop::collection::vec(path_str(5), 1..12)) {
        let compiled = pat(&p);
        for s in &paths {
            let path = Path::parse(s).map_err(|e| fail(format!("path `{s}`: {e}")))?;
            prop_assert_eq!(compiled.matches(&path), ref_match_str(&p, s), "pattern `{}` vs path `{}`", p, s);
        }
    }

    /// `PathPattern::within` agrees with brute-force containment over every concrete path.
    #[test]
    fn path_containment_agrees_with_brute_force(child in pattern_str(), parent in pattern_str()) {
        let expect = ref_within(&child, &parent);
        prop_assert_eq!(pat(&child).within(&pat(&parent)), expect, "`{}` within `{}`", child, parent);
    }
}

/// The reference itself on the SPEC's and fixtures' examples, so the brute force is not vacuous.
#[test]
fn the_reference_matcher_reads_the_spec_examples() {
    assert!(ref_match_str("medication/**", "medication/a/b"));
    assert!(!ref_match_str("medication/**", "medication"));
    assert!(!ref_match_str("a/*", "a/b/c"));
    assert!(ref_within("a/*/**", "a/**"));
    assert!(!ref_within("a/**", "a/*/**"));
    assert!(ref_within("a/b", "*/b"));
    assert!(!ref_within("*/b", "a/b"));
    assert!(!ref_within("a", "a/**"));
    assert!(ref_within("**", "**"));
    assert!(!ref_within("**", "*/**"));
}

/// Matching is never by string prefix: not in the core, and not through the store.
#[test]
fn string_prefixes_never_match() {
    assert!(PathPattern::parse("calendar/priv*").is_err());
    assert!(PathPattern::parse("calendar/*private").is_err());
    assert!(PathPattern::parse("a/**/b").is_err());
    let m = |p: &str, s: &str| pat(p).matches(&Path::parse(s).unwrap());
    assert!(!m("status/waking", "status/waking-time"));
    assert!(!m("status/waking", "status/wakin"));
    assert!(!m("medication/**", "medications/x"));
    assert!(!m("calendar/next", "calendar/next-start"));
    assert!(!m("cal/**", "calendar/x"));
    assert!(!pat("calendar/private").within(&pat("calendar/priv")));
    assert!(!pat("calendar/private/**").within(&pat("calendar/priv/**")));
    assert!(!pat("status/waking-time").within(&pat("status/waking")));

    let u = Uni::new(Variant::Exact).unwrap();
    let cap = |id: &str, paths: &[&str], parent: Option<&str>, issuer: &str, holder: &str| {
        Command::CreateCapability(NewCapability {
            id: Some(id.into()),
            issuer: issuer.into(),
            holder: holder.into(),
            device: "d0".into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            actions: vec!["read".into()],
            constraints: None,
            parent: parent.map(str::to_string),
        })
    };
    let e = u.store.write(cap("p0", &["calendar/priv*"], None, "ann", "bob")).expect_err("a partial wildcard");
    assert_eq!(e.code(), "invalid_slice_path");
    u.store.write(cap("p1", &["status/waking", "calendar/priv/**"], None, "ann", "bob")).unwrap();
    let e = u.store.write(cap("p2", &["calendar/private"], Some("p1"), "bob", "cat")).expect_err("not within");
    assert_eq!(e.code(), "capability_not_within_parent");
    let e = u.store.write(cap("p3", &["status/waking-time"], Some("p1"), "bob", "cat")).expect_err("not within");
    assert_eq!(e.code(), "capability_not_within_parent");
    let snap = u.store.latest();
    let ctx = RequestContext::new();
    for path in ["status/waking-time", "calendar/private/x", "status/wakin", "calendar/priv"] {
        let d = snap.authorize("bob", "d0", path, "read", T0_MS, &ctx).unwrap();
        assert_eq!(d.reason, "denied_no_authority", "{path}");
    }
    let d = snap.authorize("bob", "d0", "calendar/priv/x", "read", T0_MS, &ctx).unwrap();
    assert_eq!(d.reason, "allowed_capability");
}

// ---- 2. narrowing -------------------------------------------------------------------------------

const ACTIONS: [&str; 3] = ["read", "write", "move"];

/// A scope as the reference sees it; times in seconds after `T0`.
#[derive(Debug, Clone)]
struct RScope {
    device: u8,
    paths: Vec<String>,
    actions: BTreeSet<&'static str>,
    nb: Option<i64>,
    na: Option<i64>,
    uses: Option<u32>,
}

fn ms(sec: i64) -> i64 {
    T0_MS + sec * 1000
}

/// Every dimension in which `child` is not within `parent`, by the reference.
fn ref_widened(child: &RScope, parent: &RScope) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    if child.device != parent.device {
        out.insert("device");
    }
    if !child.paths.iter().all(|c| parent.paths.iter().any(|p| ref_within(c, p))) {
        out.insert("paths");
    }
    if !child.actions.is_subset(&parent.actions) {
        out.insert("actions");
    }
    // A parent bound must be matched by a child bound on the inside.
    let widens = |parent: Option<i64>, child: Option<i64>, inside: fn(i64, i64) -> bool| match (parent, child) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(p), Some(c)) => !inside(c, p),
    };
    if widens(parent.nb, child.nb, |c, p| c >= p) {
        out.insert("not_before");
    }
    if widens(parent.na, child.na, |c, p| c <= p) {
        out.insert("not_after");
    }
    if widens(parent.uses.map(i64::from), child.uses.map(i64::from), |c, p| c <= p) {
        out.insert("uses");
    }
    out
}

fn dimension_name(d: &impl serde::Serialize) -> String {
    serde_json::to_value(d).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn actions_of(mask: u8) -> BTreeSet<&'static str> {
    let m = match mask % 8 {
        0 => 1,
        m => m,
    };
    ACTIONS.iter().enumerate().filter(|(i, _)| m & (1 << i) != 0).map(|(_, a)| *a).collect()
}

/// A pattern within `p` (or `p` itself), chosen by `seed`.
fn narrow_pattern(p: &str, seed: u8) -> String {
    let mut segs: Vec<String> = p.split('/').map(str::to_string).collect();
    let lit = SEGS[usize::from(seed / 4) % 3].to_string();
    let rest = segs.last().is_some_and(|s| s == "**");
    match seed % 4 {
        1 => {
            if let Some(s) = segs.iter_mut().find(|s| *s == "*") {
                *s = lit;
            }
        }
        // `**` becomes a literal or `*`, followed (while short) by a new `**`.
        2 | 3 if rest => {
            segs.pop();
            segs.push(if seed % 4 == 2 { lit } else { "*".into() });
            if seed % 8 >= 4 && segs.len() < 5 {
                segs.push("**".into());
            }
        }
        _ => {}
    }
    segs.join("/")
}

fn scope_strategy() -> impl Strategy<Value = RScope> {
    (
        prop::collection::vec(pattern_str(), 1..3),
        1u8..8,
        prop::option::weighted(0.6, 0i64..5),
        prop::option::weighted(0.6, 1i64..6),
        prop::option::weighted(0.6, 0u32..4),
    )
        .prop_map(|(paths, mask, nb, dur, uses)| RScope {
            device: 0,
            paths,
            actions: actions_of(mask),
            nb,
            // Always a non-empty window, so a parent can be minted.
            na: dur.map(|d| nb.unwrap_or(0) + d),
            uses,
        })
}

/// A parent and a child mostly derived from it by narrowing, sometimes at random.
fn pair_strategy() -> impl Strategy<Value = (RScope, RScope)> {
    (
        scope_strategy(),
        scope_strategy(),
        prop::collection::vec((any::<u8>(), prop::bool::weighted(0.2)), 1..3),
        any::<u16>(),
    )
        .prop_map(|(parent, raw, picks, bits)| {
            let bit = |n: u16| bits & (1 << n) != 0;
            let mut child = raw.clone();
            child.device = u8::from(bit(0) && bit(1));
            child.paths = picks
                .iter()
                .enumerate()
                .map(|(i, (seed, random))| match (random, raw.paths.get(i)) {
                    (true, Some(r)) => r.clone(),
                    _ => narrow_pattern(&parent.paths[usize::from(*seed) % parent.paths.len()], *seed),
                })
                .collect();
            if !bit(2) {
                let narrowed: BTreeSet<&str> = child.actions.intersection(&parent.actions).copied().collect();
                child.actions = if narrowed.is_empty() { parent.actions.clone() } else { narrowed };
            }
            if !bit(3) && parent.nb.is_some() {
                child.nb = parent.nb.map(|n| n + i64::from(bit(4)));
            }
            if !bit(5) && parent.na.is_some() {
                child.na = parent.na.map(|n| n - i64::from(bit(6)));
            }
            if !bit(7) && parent.uses.is_some() {
                child.uses = parent.uses.map(|u| u.saturating_sub(u32::from(bit(8))));
            }
            (parent, child)
        })
}

fn compile_paths(ps: &[String]) -> Vec<PathPattern> {
    ps.iter().map(|p| pat(p)).collect()
}

fn core_constraints(s: &RScope) -> Constraints {
    Constraints { not_before_ms: s.nb.map(ms), not_after_ms: s.na.map(ms), uses: s.uses, condition: None }
}

fn constraints_input(nb: Option<i64>, na: Option<i64>, uses: Option<u32>) -> ConstraintsInput {
    ConstraintsInput {
        not_before: nb.map(|s| format_time(ms(s))),
        not_after: na.map(|s| format_time(ms(s))),
        uses,
        condition: None,
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// `widenings(child, parent)` names exactly the dimensions the reference finds widened; in
    /// particular it is empty iff the child lies within the parent in every dimension.
    #[test]
    fn widenings_agree_with_the_reference((parent, child) in pair_strategy()) {
        let (pp, cp) = (compile_paths(&parent.paths), compile_paths(&child.paths));
        // Generated sets are never empty (`actions_of`), so both are lists of action names.
        let pa = Actions::new(&parent.actions.iter().copied().collect::<Vec<_>>()).expect("actions");
        let ca = Actions::new(&child.actions.iter().copied().collect::<Vec<_>>()).expect("actions");
        let (pc, cc) = (core_constraints(&parent), core_constraints(&child));
        let ps = Scope { device: parent.device, paths: &pp, actions: &pa, constraints: &pc, uses_left: parent.uses };
        let cs = Scope { device: child.device, paths: &cp, actions: &ca, constraints: &cc, uses_left: child.uses };
        let got: BTreeSet<String> = widenings(&cs, &ps).iter().map(|w| dimension_name(&w.dimension)).collect();
        let expect: BTreeSet<String> = ref_widened(&child, &parent).into_iter().map(str::to_string).collect();
        prop_assert_eq!(got.is_empty(), expect.is_empty(), "parent {:?} child {:?}", parent, child);
        prop_assert_eq!(got, expect, "parent {:?} child {:?}", parent, child);
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Through the store: a delegation it accepts is within its parent by the reference, and a
    /// refused one names exactly the dimensions the reference finds widened.
    #[test]
    fn the_store_refuses_exactly_the_widening_delegations(
        pairs in prop::collection::vec((pair_strategy(), 0i64..12, prop::bool::weighted(0.85)), 1..10),
    ) {
        narrowing_through_the_store(&pairs).map_err(fail)?;
    }
}

/// Each pair at `T0` + `half_secs` × 500 ms, or (`inside`) that far into the parent's window,
/// stopping short of its end.
fn narrowing_through_the_store(pairs: &[((RScope, RScope), i64, bool)]) -> Result<(), String> {
    let u = Uni::new(Variant::Exact)?;
    let devices = ["d0", "d2"];
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for (n, ((parent, child), half_secs, inside)) in pairs.iter().enumerate() {
        let now = if *inside {
            let start = ms(parent.nb.unwrap_or(0)) + half_secs * 500;
            parent.na.map_or(start, |na| start.min(ms(na) - 500))
        } else {
            T0_MS + half_secs * 500
        };
        // The parent is minted before every window of the run begins (a window already over
        // when written is refused), so that delegating from an expired parent is tried too.
        u.clock.set(T0_MS - 1000);
        // The parent is a root on d0 (minted by its owner `ann`) held by `cat`.
        let (pdev, powner) = ("d0", "ann");
        let pid = format!("p{n}");
        let root = NewCapability {
            id: Some(pid.clone()),
            issuer: powner.into(),
            holder: "cat".into(),
            device: pdev.into(),
            paths: parent.paths.clone(),
            actions: parent.actions.iter().map(|a| a.to_string()).collect(),
            constraints: Some(constraints_input(parent.nb, parent.na, parent.uses)),
            parent: None,
        };
        u.store.write(Command::CreateCapability(root)).map_err(|e| format!("root {parent:?}: {e}"))?;
        u.clock.set(now);
        // The child names the parent's device, or another (device 1: d2).
        let cdev = devices[usize::from(child.device) % 2];
        let req = NewCapability {
            id: Some(format!("c{n}")),
            issuer: "cat".into(),
            holder: "dan".into(),
            device: cdev.into(),
            paths: child.paths.clone(),
            actions: child.actions.iter().map(|a| a.to_string()).collect(),
            constraints: Some(constraints_input(child.nb, child.na, child.uses)),
            parent: Some(pid),
        };
        let res = u.store.write(Command::CreateCapability(req.clone()));
        let parent_valid = parent.nb.is_none_or(|nb| now >= ms(nb))
            && parent.na.is_none_or(|na| now < ms(na))
            && parent.uses != Some(0);
        let empty_window = matches!((child.nb, child.na), (Some(b), Some(a)) if b >= a);
        let child_over = child.na.is_some_and(|na| ms(na) <= now);
        let widened = ref_widened(child, parent);
        let ctx = || format!("parent {parent:?} at T0+{}ms\nchild {req:?}\n=> {res:?}", now - T0_MS);
        let outcome = match &res {
            Ok(_) => "accepted".to_string(),
            Err(StoreError::CapabilityNotWithinParent(ws)) => format!("widened {}", ws.len()),
            Err(e) => e.code().to_string(),
        };
        *outcomes.entry(outcome).or_default() += 1;
        match &res {
            Ok(_) => {
                if empty_window || child_over || !parent_valid || !widened.is_empty() {
                    return Err(format!(
                        "accepted a delegation the reference refuses (widened {widened:?}, parent valid \
                         {parent_valid})\n{}",
                        ctx()
                    ));
                }
            }
            Err(StoreError::CapabilityNotWithinParent(ws)) => {
                let got: BTreeSet<String> = ws.iter().map(|w| dimension_name(&w.dimension)).collect();
                let expect: BTreeSet<String> = widened.iter().map(|d| d.to_string()).collect();
                if got.is_empty() || got != expect || empty_window || child_over || !parent_valid {
                    return Err(format!("refusal names {got:?}, the reference finds {expect:?}\n{}", ctx()));
                }
            }
            Err(e) => {
                let expect = if empty_window {
                    "invalid_request"
                } else if child_over {
                    "window_in_the_past"
                } else if !parent_valid {
                    "parent_capability_invalid"
                } else if !widened.is_empty() {
                    "capability_not_within_parent"
                } else {
                    "accepted"
                };
                if e.code() != expect {
                    return Err(format!("refused with `{}` where the reference expects {expect}\n{}", e.code(), ctx()));
                }
            }
        }
    }
    if std::env::var_os("EARSHOT_PROPTEST_STATS").is_some() {
        eprintln!("narrowing: {outcomes:?}");
    }
    Ok(())
}

// ---- 3. authorize against the reference model ---------------------------------------------------

/// Participants: people, devices (also participants) and `ghost`, who never exists.
const NAMES: [&str; 8] = ["ann", "bob", "cat", "dan", "d0", "d1", "d2", "ghost"];
const PEOPLE: [&str; 4] = ["ann", "bob", "cat", "dan"];
/// Devices and their owners.
const DEVICES: [(&str, &str); 3] = [("d0", "ann"), ("d1", "ann"), ("d2", "bob")];
const CONDITIONS: [&str; 3] = ["x == 1", "y", "x < 3"];
const RELATIONS: [&str; 4] = ["family", "care", "guardian", "nope"];

/// A schema's text and, written out by hand, what each relation opens once `includes` is flattened.
type Openings = &'static [(&'static str, &'static [&'static str])];
struct SchemaDef {
    text: &'static str,
    relations: &'static [(&'static str, Openings)],
}

const SCHEMAS: [SchemaDef; 3] = [
    SchemaDef {
        text: "relation family {\n  opens a/*\n  opens b/**\n}\nrelation care {\n  opens c/** for read, write\n}\n\
               relation guardian {\n  includes family\n  opens c/a for move\n}\n",
        relations: &[
            ("family", &[("a/*", &["read"]), ("b/**", &["read"])]),
            ("care", &[("c/**", &["read", "write"])]),
            ("guardian", &[("a/*", &["read"]), ("b/**", &["read"]), ("c/a", &["move"])]),
        ],
    },
    SchemaDef {
        text: "relation family {\n  opens a/a\n  opens c/*\n}\nrelation care {\n  opens c/** for read\n}\n",
        relations: &[("family", &[("a/a", &["read"]), ("c/*", &["read"])]), ("care", &[("c/**", &["read"])])],
    },
    SchemaDef { text: "relation guardian {\n  opens **\n}\n", relations: &[("guardian", &[("**", &["read"])])] },
];

/// The request context: `x` and `y`, each absent or one of a few values.
#[derive(Debug, Clone, Copy)]
enum XVal {
    Int(i64),
    Str,
}

#[derive(Debug, Clone, Copy)]
enum YVal {
    Bool(bool),
    Int,
}

#[derive(Debug, Clone, Copy)]
struct Ctx {
    x: Option<XVal>,
    y: Option<YVal>,
}

impl Ctx {
    const ALL_TRUE: Ctx = Ctx { x: Some(XVal::Int(1)), y: Some(YVal::Bool(true)) };
    const ALL_FALSE: Ctx = Ctx { x: Some(XVal::Int(5)), y: Some(YVal::Bool(false)) };
    const EMPTY: Ctx = Ctx { x: None, y: None };

    fn to_request(self) -> RequestContext {
        let mut c = RequestContext::new();
        match self.x {
            Some(XVal::Int(i)) => c.insert("x".into(), ContextValue::Int(i)),
            Some(XVal::Str) => c.insert("x".into(), ContextValue::String("1".into())),
            None => None,
        };
        match self.y {
            Some(YVal::Bool(b)) => c.insert("y".into(), ContextValue::Bool(b)),
            Some(YVal::Int) => c.insert("y".into(), ContextValue::Int(1)),
            None => None,
        };
        c
    }
}

/// The truth of condition `i` in `ctx`, computed directly: `Err` for a missing variable, a type
/// error or a non-boolean result.
fn ref_condition(i: usize, ctx: &Ctx) -> Result<bool, ()> {
    match (i, ctx.x, ctx.y) {
        // `x == 1`: CEL's heterogeneous equality makes a string simply unequal.
        (0, Some(XVal::Int(n)), _) => Ok(n == 1),
        (0, Some(XVal::Str), _) => Ok(false),
        // `y`: only a boolean is a verdict.
        (1, _, Some(YVal::Bool(b))) => Ok(b),
        // `x < 3`: no ordering between a string and an int.
        (2, Some(XVal::Int(n)), _) => Ok(n < 3),
        _ => Err(()),
    }
}

fn ctx_strategy() -> impl Strategy<Value = Ctx> {
    let x = prop_oneof![
        2 => Just(None),
        3 => Just(Some(XVal::Int(1))),
        1 => Just(Some(XVal::Int(2))),
        1 => Just(Some(XVal::Int(5))),
        1 => Just(Some(XVal::Str)),
    ];
    let y = prop_oneof![
        2 => Just(None),
        3 => Just(Some(YVal::Bool(true))),
        1 => Just(Some(YVal::Bool(false))),
        1 => Just(Some(YVal::Int)),
    ];
    (x, y).prop_map(|(x, y)| Ctx { x, y })
}

/// Generated constraints: times in seconds after `T0`.
#[derive(Debug, Clone, Default)]
struct GCons {
    nb: Option<u8>,
    na: Option<u8>,
    uses: Option<u8>,
    cond: Option<u8>,
}

fn cons_strategy() -> impl Strategy<Value = GCons> {
    (
        prop::option::weighted(0.25, 0u8..6),
        prop::option::weighted(0.3, 1u8..10),
        prop::option::weighted(0.45, prop_oneof![1 => Just(0u8), 8 => 1u8..4]),
        prop::option::weighted(0.25, 0u8..3),
    )
        .prop_map(|(nb, na, uses, cond)| GCons { nb, na, uses, cond })
}

#[derive(Debug, Clone)]
struct Query {
    principal: u8,
    device: u8,
    path: String,
    action: u8,
    ctx: Ctx,
}

fn name_strategy() -> impl Strategy<Value = u8> {
    prop_oneof![20 => 0u8..7, 1 => Just(7u8)]
}

fn query_strategy() -> impl Strategy<Value = Query> {
    (
        name_strategy(),
        prop_oneof![12 => 0u8..3, 1 => 3u8..5],
        path_str(3),
        prop_oneof![4 => Just(0u8), 1 => 1u8..3],
        ctx_strategy(),
    )
        .prop_map(|(principal, device, path, action, ctx)| Query { principal, device, path, action, ctx })
}

/// Who revokes a capability.
#[derive(Debug, Clone)]
enum By {
    Owner,
    /// The holder of a strict ancestor (the owner when there is none).
    Ancestor(u8),
    Anyone(u8),
}

/// One generated step; indices are resolved against the reference state when the step runs.
#[derive(Debug, Clone)]
enum Step {
    Schema(u8),
    Relate {
        grantor: u8,
        relation: u8,
        grantee: u8,
        cons: GCons,
    },
    Unrelate {
        edge: u8,
        by: Option<u8>,
    },
    Root {
        device: u8,
        wrong_issuer: Option<u8>,
        holder: u8,
        paths: Vec<String>,
        actions: u8,
        cons: GCons,
    },
    Delegate {
        parent: u8,
        wrong_issuer: Option<u8>,
        holder: u8,
        other_device: Option<u8>,
        /// Per path: a seed narrowing one of the parent's patterns, or a random pattern.
        paths: Vec<(u8, Option<String>)>,
        actions: u8,
        wild_actions: bool,
        /// Random (possibly widening) window and uses instead of narrowed ones.
        wild: bool,
        narrow: u8,
        cons: GCons,
    },
    Revoke {
        cap: u8,
        by: By,
    },
    /// A use: of the query as generated, or (`Some`) aimed at a capability (even) or an edge (odd)
    /// as its holder or grantee would.
    Use(Query, Option<u8>),
    /// Advances the clock by `n` × 500 ms.
    Tick(u8),
    /// Removes `NAMES[n % 8]` (SPEC §1.8).
    Remove(u8),
    /// Creates again a removed person, `NAMES[n % 8]` (nothing when it is not removed).
    Recreate(u8),
}

fn relate_step() -> impl Strategy<Value = Step> {
    // Mostly the device owners, whose edges open something.
    let grantor = prop_oneof![6 => 0u8..2, 2 => 2u8..4, 1 => 4u8..8];
    let relation = prop_oneof![8 => 0u8..3, 1 => Just(3u8)];
    (grantor, relation, name_strategy(), cons_strategy()).prop_map(|(grantor, relation, grantee, cons)| Step::Relate {
        grantor,
        relation,
        grantee,
        cons,
    })
}

fn root_step() -> impl Strategy<Value = Step> {
    let device = prop_oneof![12 => 0u8..3, 1 => 3u8..5];
    let actions = prop_oneof![3 => Just(1u8), 1 => 1u8..8];
    (
        device,
        prop::option::weighted(0.08, any::<u8>()),
        name_strategy(),
        prop::collection::vec(pattern_str(), 1..3),
        actions,
        cons_strategy(),
    )
        .prop_map(|(device, wrong_issuer, holder, paths, actions, cons)| Step::Root {
            device,
            wrong_issuer,
            holder,
            paths,
            actions,
            cons,
        })
}

fn delegate_step() -> impl Strategy<Value = Step> {
    let paths = prop::collection::vec((any::<u8>(), prop::option::weighted(0.2, pattern_str())), 1..3);
    (
        (
            any::<u8>(),
            prop::option::weighted(0.08, any::<u8>()),
            name_strategy(),
            prop::option::weighted(0.08, any::<u8>()),
        ),
        paths,
        (1u8..8, prop::bool::weighted(0.15)),
        (prop::bool::weighted(0.25), any::<u8>()),
        cons_strategy(),
    )
        .prop_map(
            |((parent, wrong_issuer, holder, other_device), paths, (actions, wild_actions), (wild, narrow), cons)| {
                Step::Delegate {
                    parent,
                    wrong_issuer,
                    holder,
                    other_device,
                    paths,
                    actions,
                    wild_actions,
                    wild,
                    narrow,
                    cons,
                }
            },
        )
}

fn revoke_step() -> impl Strategy<Value = Step> {
    let by = prop_oneof![
        2 => Just(By::Owner),
        2 => any::<u8>().prop_map(By::Ancestor),
        1 => any::<u8>().prop_map(By::Anyone),
    ];
    (any::<u8>(), by).prop_map(|(cap, by)| Step::Revoke { cap, by })
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => (0u8..3).prop_map(Step::Schema),
        4 => relate_step(),
        1 => (any::<u8>(), prop::option::weighted(0.2, any::<u8>())).prop_map(|(edge, by)| Step::Unrelate { edge, by }),
        5 => root_step(),
        7 => delegate_step(),
        2 => revoke_step(),
        6 => (query_strategy(), prop::option::weighted(0.9, any::<u8>())).prop_map(|(q, t)| Step::Use(q, t)),
        3 => (0u8..5).prop_map(Step::Tick),
        // Mostly cat and dan (2, 3): the people a removal ends something for.
        2 => prop_oneof![3 => 2u8..4, 1 => any::<u8>()].prop_map(Step::Remove),
        1 => (2u8..4).prop_map(Step::Recreate),
    ]
}

#[derive(Debug, Clone)]
struct Universe {
    steps: Vec<Step>,
    queries: Vec<Query>,
}

fn universe_strategy(max_steps: usize) -> impl Strategy<Value = Universe> {
    // A few edges and roots first, so that uses and delegations have something to aim at.
    let first = prop::collection::vec(prop_oneof![1 => relate_step(), 2 => root_step()], 1..4);
    (first, prop::collection::vec(step_strategy(), 1..max_steps), prop::collection::vec(query_strategy(), 8..24))
        .prop_map(|(mut steps, more, queries)| {
            steps.extend(more);
            Universe { steps, queries }
        })
}

/// Reference constraints, absolute times in ms.
#[derive(Debug, Clone, Default)]
struct RCons {
    nb: Option<i64>,
    na: Option<i64>,
    uses: Option<u32>,
    cond: Option<usize>,
}

impl RCons {
    fn input(&self) -> ConstraintsInput {
        ConstraintsInput {
            not_before: self.nb.map(format_time),
            not_after: self.na.map(format_time),
            uses: self.uses,
            condition: self.cond.map(|c| CONDITIONS[c].to_string()),
        }
    }
    fn empty_window(&self) -> bool {
        matches!((self.nb, self.na), (Some(b), Some(a)) if b >= a)
    }
    /// A window that ends at or before `now` (the write's time) would never hold: refused.
    fn over_at(&self, now: i64) -> bool {
        self.na.is_some_and(|a| a <= now)
    }
}

fn rcons(g: &GCons) -> RCons {
    RCons {
        nb: g.nb.map(|s| ms(i64::from(s))),
        na: g.na.map(|s| ms(i64::from(s))),
        uses: g.uses.map(u32::from),
        cond: g.cond.map(|c| usize::from(c) % CONDITIONS.len()),
    }
}

#[derive(Debug, Clone)]
struct REdge {
    id: String,
    grantor: &'static str,
    relation: &'static str,
    grantee: &'static str,
    c: RCons,
    uses_left: Option<u32>,
    revoked: bool,
}

#[derive(Debug, Clone)]
struct RCap {
    id: String,
    holder: &'static str,
    device: &'static str,
    paths: Vec<String>,
    actions: BTreeSet<&'static str>,
    c: RCons,
    uses_left: Option<u32>,
    parent: Option<usize>,
    depth: usize,
    revoked: bool,
}

/// Deliberately wrong readings of SPEC §2, to show the comparison catches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    Exact,
    /// Patterns match by string prefix.
    PrefixMatch,
    /// `not_after` is inclusive.
    ClosedWindow,
    /// Only the principal's own capability is checked, not its ancestors.
    LeafOnly,
    /// Uses are never consumed.
    NoUseCount,
    /// A delegation wider than its parent is accepted (issue 5's fault table).
    AcceptWidening,
    /// An ancestor's revocation is not looked at (issue 5's fault table).
    RevokedAncestorIgnored,
}

/// Runs the authorize harness with a reference `variant` over deterministic random universes;
/// the first disagreement with the store, if any (issue 5's fault table, property column).
pub(crate) fn variant_verdict(variant: Variant, cases: u32) -> Option<String> {
    use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};
    let config = PtConfig { cases, failure_persistence: None, max_shrink_iters: 0, ..PtConfig::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&universe_strategy(32), |u| {
        let mut uni = Uni::new(variant).map_err(fail)?;
        uni.run_universe(&u).map_err(fail)?;
        Ok(())
    });
    result.err().map(|e| e.to_string().lines().next().unwrap_or("").chars().take(160).collect())
}

/// A decision as the reference makes it: reason, authority id, failing link.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RDecision {
    reason: &'static str,
    authority: Option<String>,
    link: Option<String>,
}

impl RDecision {
    fn bare(reason: &'static str) -> Self {
        RDecision { reason, authority: None, link: None }
    }
}

/// The reference: plain lists, scanned in creation order; no indexes.
struct Reference {
    variant: Variant,
    schema: Option<usize>,
    edges: Vec<REdge>,
    caps: Vec<RCap>,
    now: i64,
    /// People removed (SPEC §1.8) and not created again.
    removed: Vec<&'static str>,
}

/// What a record names in place of a removed participant: nobody any query or write can name
/// (a later participant of the same id is someone else).
const GONE: &str = "gone";

fn exists(name: &str) -> bool {
    NAMES.contains(&name) && name != "ghost"
}

fn owner_of(device: &str) -> Option<&'static str> {
    DEVICES.iter().find(|(d, _)| *d == device).map(|(_, o)| *o)
}

impl Reference {
    fn new(variant: Variant) -> Self {
        Reference { variant, schema: None, edges: Vec::new(), caps: Vec::new(), now: T0_MS, removed: Vec::new() }
    }

    fn exists(&self, name: &str) -> bool {
        exists(name) && !self.removed.contains(&name)
    }

    /// Capabilities no link of whose chain is revoked, by index.
    fn unrevoked_chains(&self) -> Vec<bool> {
        (0..self.caps.len()).map(|i| self.chain_up(i).iter().all(|&x| !self.caps[x].revoked)).collect()
    }

    /// SPEC §1.8 over the device half, read straight: a device, or the owner of one, is
    /// refused; otherwise every relation grant naming the participant is revoked and every
    /// capability it holds is revoked, and the records name nobody in its place.
    fn remove(&mut self, id: &str) -> Result<&'static str, &'static str> {
        let id = name(id);
        if !self.exists(id) {
            return Err("participant_not_found");
        }
        if owner_of(id).is_some() {
            return Err("participant_is_device");
        }
        if DEVICES.iter().any(|(_, o)| *o == id) {
            return Err("participant_owns_devices");
        }
        for e in &mut self.edges {
            if e.grantor == id || e.grantee == id {
                e.revoked = true;
                e.grantor = if e.grantor == id { GONE } else { e.grantor };
                e.grantee = if e.grantee == id { GONE } else { e.grantee };
            }
        }
        for c in &mut self.caps {
            if c.holder == id {
                c.revoked = true;
                c.holder = GONE;
            }
        }
        self.removed.push(id);
        Ok("removed")
    }

    fn matches(&self, pattern: &str, path: &str) -> bool {
        match self.variant {
            Variant::PrefixMatch => path.starts_with(pattern.trim_end_matches("**").trim_end_matches('*')),
            _ => ref_match_str(pattern, path),
        }
    }

    fn relation_opens(&self, relation: &str, path: &str, action: &str) -> bool {
        let Some(s) = self.schema else { return false };
        SCHEMAS[s]
            .relations
            .iter()
            .filter(|(r, _)| *r == relation)
            .any(|(_, opens)| opens.iter().any(|(p, acts)| acts.contains(&action) && self.matches(p, path)))
    }

    fn link_fails(&self, revoked: bool, c: &RCons, uses_left: Option<u32>, ctx: &Ctx) -> Option<&'static str> {
        let now = self.now;
        if revoked {
            return Some("denied_revoked");
        }
        if c.nb.is_some_and(|nb| now < nb) {
            return Some("denied_not_yet_valid");
        }
        let expired = match self.variant {
            Variant::ClosedWindow => c.na.is_some_and(|na| now > na),
            _ => c.na.is_some_and(|na| now >= na),
        };
        if expired {
            return Some("denied_expired");
        }
        if uses_left == Some(0) {
            return Some("denied_uses_exhausted");
        }
        match c.cond.map(|i| ref_condition(i, ctx)) {
            None | Some(Ok(true)) => None,
            Some(Ok(false)) => Some("denied_condition_false"),
            Some(Err(())) => Some("denied_condition_error"),
        }
    }

    /// Leaf first, then each ancestor.
    fn chain_up(&self, leaf: usize) -> Vec<usize> {
        let mut out = vec![leaf];
        let mut at = self.caps[leaf].parent;
        while let Some(p) = at {
            out.push(p);
            at = self.caps[p].parent;
        }
        out
    }

    fn chain_fails(&self, leaf: usize, ctx: &Ctx) -> Option<(usize, &'static str)> {
        let links = if self.variant == Variant::LeafOnly { vec![leaf] } else { self.chain_up(leaf) };
        links.into_iter().find_map(|i| {
            let c = &self.caps[i];
            let revoked = c.revoked && (i == leaf || self.variant != Variant::RevokedAncestorIgnored);
            self.link_fails(revoked, &c.c, c.uses_left, ctx).map(|r| (i, r))
        })
    }

    fn authorize(&self, principal: &str, device: &str, path: &str, action: &str, ctx: &Ctx) -> RDecision {
        if !self.exists(principal) {
            return RDecision::bare("denied_unknown_principal");
        }
        let Some(owner) = owner_of(device) else { return RDecision::bare("denied_unknown_device") };
        if owner == principal {
            return RDecision { reason: "allowed_owner", authority: Some("owner".into()), link: None };
        }
        let mut first: Option<RDecision> = None;
        for e in &self.edges {
            if e.grantor != owner || e.grantee != principal || !self.relation_opens(e.relation, path, action) {
                continue;
            }
            match self.link_fails(e.revoked, &e.c, e.uses_left, ctx) {
                None => return RDecision { reason: "allowed_relation", authority: Some(e.id.clone()), link: None },
                Some(r) => {
                    first.get_or_insert(RDecision {
                        reason: r,
                        authority: Some(e.id.clone()),
                        link: Some(e.id.clone()),
                    });
                }
            }
        }
        for (i, c) in self.caps.iter().enumerate() {
            let covers = c.actions.contains(action) && c.paths.iter().any(|p| self.matches(p, path));
            if c.holder != principal || c.device != device || !covers {
                continue;
            }
            match self.chain_fails(i, ctx) {
                None => return RDecision { reason: "allowed_capability", authority: Some(c.id.clone()), link: None },
                Some((at, r)) => {
                    first.get_or_insert(RDecision {
                        reason: r,
                        authority: Some(c.id.clone()),
                        link: Some(self.caps[at].id.clone()),
                    });
                }
            }
        }
        first.unwrap_or_else(|| RDecision::bare("denied_no_authority"))
    }

    /// Unrevoked strict descendants of `c`, in creation order.
    /// The descendants of `c` a revocation of `c` would newly invalidate (no link of their
    /// chain revoked), and those already invalid (some link of their chain, up to the root,
    /// revoked), each in creation order.
    fn dependents(&self, c: usize) -> (Vec<String>, Vec<String>) {
        let (mut newly, mut already) = (Vec::new(), Vec::new());
        for i in (0..self.caps.len()).filter(|&i| i != c && self.chain_up(i).contains(&c)) {
            let invalid = self.chain_up(i).iter().any(|&x| self.caps[x].revoked);
            if invalid { &mut already } else { &mut newly }.push(self.caps[i].id.clone());
        }
        (newly, already)
    }

    /// Applies a command; `Ok(outcome)` or `Err(code)`.
    fn apply(&mut self, cmd: &Command) -> Result<&'static str, &'static str> {
        match cmd {
            Command::PutSchema(s) => {
                let k = SCHEMAS.iter().position(|d| d.text == s.schema).ok_or("schema_invalid")?;
                let declared = |r: &str| SCHEMAS[k].relations.iter().any(|(n, _)| *n == r);
                if self.edges.iter().any(|e| !e.revoked && !declared(e.relation)) {
                    return Err("relation_in_use");
                }
                self.schema = Some(k);
                Ok("updated")
            }
            Command::CreateRelation(r) => {
                let (grantor, grantee) = (name(&r.grantor), name(&r.grantee));
                if !self.exists(grantor) || !self.exists(grantee) {
                    return Err("participant_not_found");
                }
                if grantor == grantee {
                    return Err("invalid_request");
                }
                let declared = self.schema.is_some_and(|k| SCHEMAS[k].relations.iter().any(|(n, _)| *n == r.relation));
                if !declared {
                    return Err("unknown_relation");
                }
                let c = cons_of(r.constraints.as_ref());
                if c.empty_window() {
                    return Err("invalid_request");
                }
                if c.over_at(self.now) {
                    return Err("window_in_the_past");
                }
                let relation = RELATIONS.iter().find(|x| **x == r.relation).copied().unwrap_or("nope");
                self.edges.push(REdge {
                    id: r.id.clone().unwrap_or_default(),
                    grantor,
                    relation,
                    grantee,
                    uses_left: c.uses,
                    c,
                    revoked: false,
                });
                Ok("granted")
            }
            Command::RevokeRelation { edge, by } => {
                if !self.exists(by) {
                    return Err("participant_not_found");
                }
                let e = self.edges.iter_mut().find(|e| e.id == *edge).ok_or("relation_not_found")?;
                if e.grantor != by {
                    return Err("not_grantor");
                }
                if e.revoked {
                    return Err("already_revoked");
                }
                e.revoked = true;
                Ok("revoked")
            }
            Command::CreateCapability(c) => {
                let (issuer, holder) = (name(&c.issuer), name(&c.holder));
                if !self.exists(issuer) || !self.exists(holder) {
                    return Err("participant_not_found");
                }
                let device = DEVICES.iter().find(|(d, _)| *d == c.device).map(|(d, _)| *d).ok_or("device_not_found")?;
                let cons = cons_of(c.constraints.as_ref());
                if cons.empty_window() {
                    return Err("invalid_request");
                }
                if cons.over_at(self.now) {
                    return Err("window_in_the_past");
                }
                let actions: BTreeSet<&'static str> =
                    c.actions.iter().filter_map(|a| ACTIONS.iter().find(|x| *x == a).copied()).collect();
                let (parent, depth) = match &c.parent {
                    None => {
                        if owner_of(device) != Some(issuer) {
                            return Err("not_device_owner");
                        }
                        (None, 1)
                    }
                    Some(pid) => {
                        let p = self.caps.iter().position(|x| x.id == *pid).ok_or("capability_not_found")?;
                        if self.caps[p].holder != issuer {
                            return Err("not_capability_holder");
                        }
                        if self.caps[p].depth >= 16 {
                            return Err("limit_exceeded");
                        }
                        // What the holder holds now: every link unrevoked, in window, with uses.
                        let no_cond = Ctx::EMPTY;
                        for i in self.chain_up(p) {
                            let x = &self.caps[i];
                            let c = RCons { cond: None, ..x.c.clone() };
                            if self.link_fails(x.revoked, &c, x.uses_left, &no_cond).is_some() {
                                return Err("parent_capability_invalid");
                            }
                        }
                        let px = &self.caps[p];
                        let dev = |d: &str| DEVICES.iter().position(|(x, _)| *x == d).unwrap_or(9) as u8;
                        let child = RScope {
                            device: dev(device),
                            paths: c.paths.clone(),
                            actions: actions.clone(),
                            nb: cons.nb,
                            na: cons.na,
                            uses: cons.uses,
                        };
                        let parent = RScope {
                            device: dev(px.device),
                            paths: px.paths.clone(),
                            actions: px.actions.clone(),
                            nb: px.c.nb,
                            na: px.c.na,
                            uses: px.uses_left,
                        };
                        if self.variant != Variant::AcceptWidening && !ref_widened(&child, &parent).is_empty() {
                            return Err("capability_not_within_parent");
                        }
                        (Some(p), px.depth + 1)
                    }
                };
                self.caps.push(RCap {
                    id: c.id.clone().unwrap_or_default(),
                    holder,
                    device,
                    paths: c.paths.clone(),
                    actions,
                    uses_left: cons.uses,
                    c: cons,
                    parent,
                    depth,
                    revoked: false,
                });
                Ok("created")
            }
            Command::RevokeCapability { capability, by } => {
                if !self.exists(by) {
                    return Err("participant_not_found");
                }
                let i = self.caps.iter().position(|x| x.id == *capability).ok_or("capability_not_found")?;
                let ancestor_holder = self.chain_up(i).into_iter().skip(1).any(|a| self.caps[a].holder == by);
                if owner_of(self.caps[i].device) != Some(by.as_str()) && !ancestor_holder {
                    return Err("not_revoker");
                }
                if self.caps[i].revoked {
                    return Err("already_revoked");
                }
                self.caps[i].revoked = true;
                Ok("revoked")
            }
            Command::RemoveParticipant { id } => self.remove(id),
            Command::CreateParticipant(p) => {
                let id = name(&p.id);
                if !self.removed.contains(&id) {
                    return Err("not a removed person");
                }
                self.removed.retain(|x| *x != id);
                Ok("created")
            }
            Command::ConsumeUse(_) => Err("use commands go through Reference::consume"),
            _ => Err("not a device command"),
        }
    }

    /// `ConsumeUse`: the decision and the outcome (`consumed`, `allowed` or `denied`).
    fn consume(&mut self, q: &ResolvedQuery) -> (RDecision, &'static str) {
        let d = self.authorize(q.principal, q.device, &q.path, q.action, &q.ctx);
        if !d.reason.starts_with("allowed") {
            return (d, "denied");
        }
        let mut consumed = false;
        if self.variant == Variant::NoUseCount {
            let counted = |u: Option<u32>| u.is_some();
            consumed = match d.reason {
                "allowed_relation" => {
                    self.edges.iter().any(|e| Some(&e.id) == d.authority.as_ref() && counted(e.uses_left))
                }
                "allowed_capability" => self
                    .caps
                    .iter()
                    .position(|c| Some(&c.id) == d.authority.as_ref())
                    .is_some_and(|i| self.chain_up(i).into_iter().any(|x| counted(self.caps[x].uses_left))),
                _ => false,
            };
            return (d, if consumed { "consumed" } else { "allowed" });
        }
        match d.reason {
            "allowed_relation" => {
                if let Some(e) = self.edges.iter_mut().find(|e| Some(&e.id) == d.authority.as_ref()) {
                    if let Some(n) = e.uses_left.as_mut() {
                        *n = n.saturating_sub(1);
                        consumed = true;
                    }
                }
            }
            "allowed_capability" => {
                if let Some(i) = self.caps.iter().position(|c| Some(&c.id) == d.authority.as_ref()) {
                    for x in self.chain_up(i) {
                        if let Some(n) = self.caps[x].uses_left.as_mut() {
                            *n = n.saturating_sub(1);
                            consumed = true;
                        }
                    }
                }
            }
            _ => {}
        }
        (d, if consumed { "consumed" } else { "allowed" })
    }
}

fn name(s: &str) -> &'static str {
    NAMES.iter().find(|n| **n == s).copied().unwrap_or("ghost")
}

fn cons_of(c: Option<&ConstraintsInput>) -> RCons {
    let Some(c) = c else { return RCons::default() };
    let t = |s: &Option<String>| s.as_deref().map(|s| earshot_store::model::parse_time("t", s).unwrap_or(i64::MIN));
    RCons {
        nb: t(&c.not_before),
        na: t(&c.not_after),
        uses: c.uses,
        cond: c.condition.as_deref().and_then(|s| CONDITIONS.iter().position(|x| *x == s)),
    }
}

/// A query with its names resolved.
#[derive(Debug, Clone)]
struct ResolvedQuery {
    principal: &'static str,
    device: &'static str,
    path: String,
    action: &'static str,
    ctx: Ctx,
}

impl ResolvedQuery {
    fn of(q: &Query) -> Self {
        let device = match q.device % 5 {
            d @ 0..=2 => DEVICES[usize::from(d)].0,
            3 => "dan",
            _ => "ghost",
        };
        ResolvedQuery {
            principal: NAMES[usize::from(q.principal) % NAMES.len()],
            device,
            path: q.path.clone(),
            action: ACTIONS[usize::from(q.action) % ACTIONS.len()],
            ctx: q.ctx,
        }
    }

    fn request(&self) -> AuthorizeRequest {
        AuthorizeRequest {
            principal: self.principal.into(),
            device: self.device.into(),
            path: self.path.clone(),
            action: self.action.into(),
            context: self.ctx.to_request(),
            consistency: None,
        }
    }
}

/// One concrete path a pattern matches (`*` → `a`, `**` → `b/c`).
fn instance(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|s| match s {
            "*" => "a",
            "**" => "b/c",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The authority a store decision names, as the reference spells it.
fn authority_id(v: &AuthorizeView) -> Option<String> {
    v.authority.as_ref().map(|a| match a {
        AuthorityView::Owner { .. } => "owner".to_string(),
        AuthorityView::Relation { edge, .. } => edge.clone(),
        AuthorityView::Capability { chain } => chain.last().map(|l| l.capability.clone()).unwrap_or_default(),
    })
}

/// The store and the reference, driven by the same steps.
struct Uni {
    // Drop order: the handle before the instance.
    store: Arc<StoreHandle>,
    _earshot: Earshot,
    clock: Arc<ManualClock>,
    reference: Reference,
    seq: usize,
    log: Vec<String>,
    stats: BTreeMap<String, usize>,
}

impl Uni {
    /// A store with `ann`, `bob`, `cat`, `dan`, devices `d0`, `d1` (ann's) and `d2` (bob's), and
    /// the first schema.
    fn new(variant: Variant) -> Result<Self, String> {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let earshot = Earshot::temporary(clock.clone()).map_err(|e| format!("temporary store: {e}"))?;
        earshot.create_store(STORE, None).map_err(|e| format!("create store: {e}"))?;
        let store = earshot.store(STORE).map_err(|e| e.to_string())?;
        let mut u = Uni {
            store,
            _earshot: earshot,
            clock,
            reference: Reference::new(variant),
            seq: 0,
            log: Vec::new(),
            stats: BTreeMap::new(),
        };
        for p in PEOPLE {
            let cmd =
                Command::CreateParticipant(NewParticipant { id: p.into(), kind: ParticipantKind::Person, name: None });
            u.store.write(cmd).map_err(|e| format!("participant {p}: {e}"))?;
        }
        for (d, o) in DEVICES {
            let cmd = Command::CreateDevice(NewDevice { id: d.into(), owner: o.into(), name: None });
            u.store.write(cmd).map_err(|e| format!("device {d}: {e}"))?;
        }
        u.write(&Command::PutSchema(SchemaInput { schema: SCHEMAS[0].text.into() }))?;
        Ok(u)
    }

    fn explain(&self, e: String) -> String {
        format!("{e}\n--- trace ---\n{}", self.log.join("\n"))
    }

    fn bump(&mut self, key: impl Into<String>) {
        *self.stats.entry(key.into()).or_default() += 1;
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.seq += 1;
        format!("{prefix}{}", self.seq)
    }

    /// Writes to both; both must accept with the same outcome or refuse with the same code, and
    /// the revision moves by one exactly on an accepted write.
    fn write(&mut self, cmd: &Command) -> Result<(), String> {
        let before = self.store.latest().revision();
        let res = self.store.write(cmd.clone());
        let after = self.store.latest().revision();
        // A revocation answers what it newly invalidates and what was already invalid: the
        // reference's dependents before it.
        let mut deps = match cmd {
            Command::RevokeCapability { capability, .. } => {
                self.reference.caps.iter().position(|x| x.id == *capability).map(|i| self.reference.dependents(i))
            }
            _ => None,
        }
        .unwrap_or_default();
        let valid_before = self.reference.unrevoked_chains();
        let expect = self.reference.apply(cmd);
        // A removal answers every capability it made invalid (SPEC §1.8): those it revoked and
        // those below them, in creation order.
        if let (Command::RemoveParticipant { .. }, Ok(_)) = (cmd, &expect) {
            let after = self.reference.unrevoked_chains();
            deps.0 = (0..after.len())
                .filter(|&i| valid_before[i] && !after[i])
                .map(|i| self.reference.caps[i].id.clone())
                .collect();
        }
        self.log.push(format!(
            "{cmd:?}\n    => store {:?} / reference {expect:?}",
            res.as_ref().map(|o| &o.outcome).map_err(|e| e.code())
        ));
        match (&res, expect) {
            (Ok(o), Ok(x))
                if o.outcome == x
                    && after == before + 1
                    && o.revision == after
                    && (&o.invalidated, &o.already_invalid) == (&deps.0, &deps.1) =>
            {
                self.bump(format!("write {x}"));
                if let Command::CreateCapability(NewCapability { parent: Some(_), .. }) = cmd {
                    let depth = self.reference.caps.last().map_or(0, |c| c.depth);
                    self.bump(format!("write delegation at depth {depth}"));
                }
                Ok(())
            }
            (Err(e), Err(x)) if e.code() == x && after == before => {
                self.bump(format!("refused {x}"));
                Ok(())
            }
            _ => Err(self.explain(format!("store {res:?} (revision {before} -> {after}) but reference {expect:?}"))),
        }
    }

    fn consume(&mut self, q: &ResolvedQuery) -> Result<(), String> {
        let before = self.store.latest().revision();
        let res = self.store.write(Command::ConsumeUse(q.request()));
        let after = self.store.latest().revision();
        let (d, outcome) = self.reference.consume(q);
        self.log.push(format!(
            "use {q:?}\n    => store {:?} / reference {outcome} {d:?}",
            res.as_ref().map(|o| (&o.outcome, o.decision.as_ref().map(|d| &d.reason)))
        ));
        let res: WriteOutcome = res.map_err(|e| self.explain(format!("use refused: {e}")))?;
        let view = res.decision.clone().ok_or_else(|| self.explain("a use without a decision".into()))?;
        let moved = if outcome == "consumed" { before + 1 } else { before };
        if res.outcome != outcome || after != moved {
            return Err(self.explain(format!(
                "use: store `{}` (revision {before} -> {after}), reference `{outcome}`",
                res.outcome
            )));
        }
        self.bump(format!("use {outcome} {}", d.reason));
        self.check_decision("use", q, &view, &d)
    }

    fn check_decision(&self, what: &str, q: &ResolvedQuery, v: &AuthorizeView, d: &RDecision) -> Result<(), String> {
        let got_link = v.failure.as_ref().map(|f| f.link.clone());
        let allowed = d.reason.starts_with("allowed");
        if v.reason != d.reason || v.allowed != allowed || authority_id(v) != d.authority || got_link != d.link {
            return Err(self.explain(format!(
                "{what} at T0+{}ms {q:?}:\n  store     {} authority {:?} link {:?}\n  \
                 reference {} authority {:?} link {:?}",
                self.reference.now - T0_MS,
                v.reason,
                authority_id(v),
                got_link,
                d.reason,
                d.authority,
                d.link
            )));
        }
        Ok(())
    }

    /// The universe's queries, plus one per capability and edge that its holder or grantee
    /// would plausibly ask, under contexts that make conditions true, false and erroneous.
    fn queries(&self, universe: &[Query]) -> Vec<ResolvedQuery> {
        let mut out: Vec<ResolvedQuery> = universe.iter().map(ResolvedQuery::of).collect();
        let ctxs = [Ctx::ALL_TRUE, Ctx::ALL_FALSE, Ctx::EMPTY];
        for (i, c) in self.reference.caps.iter().enumerate() {
            for p in c.paths.iter().take(2) {
                out.push(ResolvedQuery {
                    principal: c.holder,
                    device: c.device,
                    path: instance(p),
                    action: c.actions.iter().next().copied().unwrap_or("read"),
                    ctx: ctxs[i % 3],
                });
            }
        }
        for (i, e) in self.reference.edges.iter().enumerate() {
            let Some((device, _)) = DEVICES.iter().find(|(_, o)| *o == e.grantor) else { continue };
            let opens = self.reference.schema.and_then(|k| SCHEMAS[k].relations.iter().find(|(r, _)| *r == e.relation));
            for (p, acts) in opens.map(|(_, o)| o.iter()).into_iter().flatten() {
                out.push(ResolvedQuery {
                    principal: e.grantee,
                    device,
                    path: instance(p),
                    action: acts[0],
                    ctx: ctxs[i % 3],
                });
            }
        }
        out
    }

    /// Every query decided by the store's latest snapshot and the reference; every capability's
    /// uses left, revocation and dependents compared.
    fn compare(&mut self, universe: &[Query]) -> Result<(), String> {
        let snap = self.store.latest();
        for q in self.queries(universe) {
            let v = snap
                .authorize(q.principal, q.device, &q.path, q.action, self.reference.now, &q.ctx.to_request())
                .map_err(|e| self.explain(format!("authorize {q:?}: {e}")))?;
            let d = self.reference.authorize(q.principal, q.device, &q.path, q.action, &q.ctx);
            self.check_decision("authorize", &q, &v, &d)?;
            self.bump(format!("decision {}", d.reason));
        }
        for (i, c) in self.reference.caps.iter().enumerate() {
            let chain = snap.capability_chain(&c.id).map_err(|e| self.explain(format!("chain {}: {e}", c.id)))?;
            let leaf = chain.chain.last().ok_or_else(|| self.explain(format!("empty chain for {}", c.id)))?;
            let ids: Vec<String> = chain.chain.iter().map(|l| l.id.clone()).collect();
            let mut expect_ids: Vec<String> =
                self.reference.chain_up(i).into_iter().map(|x| self.reference.caps[x].id.clone()).collect();
            expect_ids.reverse();
            if leaf.uses_left != c.uses_left || leaf.revoked != c.revoked || ids != expect_ids {
                return Err(self.explain(format!(
                    "capability {}: store uses_left {:?} revoked {} chain {ids:?}; reference {:?} {} {expect_ids:?}",
                    c.id, leaf.uses_left, leaf.revoked, c.uses_left, c.revoked
                )));
            }
            let deps = snap.capability_dependents(&c.id).map_err(|e| self.explain(format!("dependents: {e}")))?;
            let expect = self.reference.dependents(i);
            if (&deps.invalidates, &deps.already_invalid) != (&expect.0, &expect.1) {
                return Err(self.explain(format!(
                    "dependents of {}: store {:?} already invalid {:?}, reference {:?} already invalid {:?}",
                    c.id, deps.invalidates, deps.already_invalid, expect.0, expect.1
                )));
            }
        }
        self.compare_exact(universe)
    }

    /// SPEC §2.6: `at_exact` of the newest revision, asked now. Every decision is judged at the
    /// revision's commit time (the reference's decisions then), and the answer is usable exactly
    /// when no edge's or capability's window opened or closed since: reading, any window of the
    /// store, revoked or not, whose `not_before` or `not_after` lies in `(then, now]` (the rules
    /// are `now >= not_before` and `now < not_after`, which change only there).
    fn compare_exact(&mut self, universe: &[Query]) -> Result<(), String> {
        let snap = self.store.latest();
        let (then, now) = (snap.committed_at_ms(), self.reference.now);
        let token = self.store.token(snap.revision());
        let point = self
            .store
            .read_point(&Consistency::AtExact(token), now)
            .map_err(|e| self.explain(format!("at_exact read: {e}")))?;
        let windows = self.reference.edges.iter().map(|e| &e.c).chain(self.reference.caps.iter().map(|c| &c.c));
        let moved = windows.flat_map(|c| [c.nb, c.na]).flatten().any(|i| then < i && i <= now);
        let usable = then <= now && !moved;
        if point.at_ms != then || point.historical.is_none() != usable {
            return Err(self.explain(format!(
                "at_exact of revision {} committed T0+{}ms asked at T0+{}ms: store judged at T0+{}ms, usable {}; \
                 reference usable {usable}",
                snap.revision(),
                then - T0_MS,
                now - T0_MS,
                point.at_ms - T0_MS,
                point.historical.is_none()
            )));
        }
        self.reference.now = then;
        let mut result = Ok(());
        for q in self.queries(universe) {
            let v = match point.snapshot.authorize(
                q.principal,
                q.device,
                &q.path,
                q.action,
                point.at_ms,
                &q.ctx.to_request(),
            ) {
                Ok(v) => v,
                Err(e) => {
                    result = Err(self.explain(format!("authorize at_exact {q:?}: {e}")));
                    break;
                }
            };
            let d = self.reference.authorize(q.principal, q.device, &q.path, q.action, &q.ctx);
            result = self.check_decision("authorize at_exact (judged then)", &q, &v, &d);
            if result.is_err() {
                break;
            }
        }
        self.reference.now = now;
        result
    }

    /// Turns a step into a command (or runs it, for uses and ticks).
    fn run(&mut self, step: &Step) -> Result<(), String> {
        let r = &self.reference;
        let cmd = match step {
            Step::Remove(n) => Command::RemoveParticipant { id: NAMES[usize::from(*n) % 8].into() },
            Step::Recreate(n) => {
                let id = NAMES[usize::from(*n) % 8];
                if !r.removed.contains(&id) {
                    return Ok(());
                }
                Command::CreateParticipant(NewParticipant { id: id.into(), kind: ParticipantKind::Person, name: None })
            }
            Step::Tick(n) => {
                self.reference.now += i64::from(*n) * 500;
                self.clock.set(self.reference.now);
                self.log.push(format!("tick -> T0+{}ms", self.reference.now - T0_MS));
                return Ok(());
            }
            Step::Use(q, target) => {
                let mut rq = ResolvedQuery::of(q);
                // Aimed at a capability (even) or an edge (odd), as its holder or grantee would.
                let aimed = match target {
                    Some(t) if t % 2 == 0 && !r.caps.is_empty() => {
                        let c = &r.caps[usize::from(t / 2) % r.caps.len()];
                        let action = c.actions.iter().next().copied().unwrap_or("read");
                        Some((c.holder, c.device, instance(&c.paths[usize::from(t / 2) % c.paths.len()]), action))
                    }
                    Some(t) if !r.edges.is_empty() => {
                        let e = &r.edges[usize::from(t / 2) % r.edges.len()];
                        let device = DEVICES.iter().find(|(_, o)| *o == e.grantor).map(|(d, _)| *d);
                        let opening = r
                            .schema
                            .and_then(|k| SCHEMAS[k].relations.iter().find(|(n, _)| *n == e.relation))
                            .and_then(|(_, o)| o.first());
                        device.zip(opening).map(|(d, (p, acts))| (e.grantee, d, instance(p), acts[0]))
                    }
                    _ => None,
                };
                if let Some((principal, device, path, action)) = aimed {
                    rq = ResolvedQuery { principal, device, path, action, ctx: rq.ctx };
                    if target.is_some_and(|t| t % 8 != 0) {
                        rq.ctx = Ctx::ALL_TRUE;
                    }
                    self.bump("use aimed");
                }
                return self.consume(&rq);
            }
            Step::Schema(k) => Command::PutSchema(SchemaInput { schema: SCHEMAS[usize::from(*k) % 3].text.into() }),
            Step::Relate { grantor, relation, grantee, cons } => {
                let id = self.fresh("e");
                Command::CreateRelation(NewRelation {
                    id: Some(id),
                    grantor: NAMES[usize::from(*grantor) % 8].into(),
                    relation: RELATIONS[usize::from(*relation) % 4].into(),
                    grantee: NAMES[usize::from(*grantee) % 8].into(),
                    constraints: Some(rcons(cons).input()),
                })
            }
            Step::Unrelate { edge, by } => {
                let e = (!r.edges.is_empty()).then(|| &r.edges[usize::from(*edge) % r.edges.len()]);
                let by = match by {
                    Some(b) => NAMES[usize::from(*b) % 8],
                    None => e.map_or("ann", |e| e.grantor),
                };
                Command::RevokeRelation { edge: e.map_or("nope".into(), |e| e.id.clone()), by: by.into() }
            }
            Step::Root { device, wrong_issuer, holder, paths, actions, cons } => {
                let device = match device % 5 {
                    d @ 0..=2 => DEVICES[usize::from(d)].0,
                    3 => "dan",
                    _ => "ghost",
                };
                let issuer = match wrong_issuer {
                    Some(i) => NAMES[usize::from(*i) % 8],
                    None => owner_of(device).unwrap_or("ann"),
                };
                let id = self.fresh("k");
                Command::CreateCapability(NewCapability {
                    id: Some(id),
                    issuer: issuer.into(),
                    holder: NAMES[usize::from(*holder) % 8].into(),
                    device: device.into(),
                    paths: paths.clone(),
                    actions: actions_of(*actions).iter().map(|a| a.to_string()).collect(),
                    constraints: Some(rcons(cons).input()),
                    parent: None,
                })
            }
            Step::Delegate {
                parent,
                wrong_issuer,
                holder,
                other_device,
                paths,
                actions,
                wild_actions,
                wild,
                narrow,
                cons,
            } => {
                if r.caps.is_empty() {
                    return Ok(());
                }
                // Half the time one of the two newest, so chains grow deep.
                let n = r.caps.len();
                let i = if *parent < 128 { n - 1 - usize::from(*parent) % n.min(2) } else { usize::from(*parent) % n };
                let p = &r.caps[i];
                let issuer = wrong_issuer.map_or(p.holder, |i| NAMES[usize::from(i) % 8]);
                let device = other_device.map_or(p.device, |d| match d % 4 {
                    d @ 0..=2 => DEVICES[usize::from(d)].0,
                    _ => "dan",
                });
                let child_paths: Vec<String> = paths
                    .iter()
                    .map(|(seed, random)| match random {
                        Some(x) => x.clone(),
                        None => narrow_pattern(&p.paths[usize::from(*seed) % p.paths.len()], *seed),
                    })
                    .collect();
                let mut acts = actions_of(*actions);
                if !wild_actions {
                    let kept: BTreeSet<&str> = acts.intersection(&p.actions).copied().collect();
                    acts = if kept.is_empty() { p.actions.clone() } else { kept };
                }
                let raw = rcons(cons);
                let bit = |n: u8| narrow & (1 << n) != 0;
                let c = if *wild {
                    raw
                } else {
                    RCons {
                        nb: p.c.nb.map(|t| t + 1000 * i64::from(bit(0))).or(raw.nb),
                        na: p.c.na.map(|t| t - 1000 * i64::from(bit(1))).or(raw.na),
                        uses: p.uses_left.map(|u| u.saturating_sub(u32::from(bit(2)))).or(raw.uses),
                        cond: raw.cond,
                    }
                };
                let parent_id = p.id.clone();
                let holder = NAMES[usize::from(*holder) % 8];
                let id = self.fresh("k");
                Command::CreateCapability(NewCapability {
                    id: Some(id),
                    issuer: issuer.into(),
                    holder: holder.into(),
                    device: device.into(),
                    paths: child_paths,
                    actions: acts.iter().map(|a| a.to_string()).collect(),
                    constraints: Some(c.input()),
                    parent: Some(parent_id),
                })
            }
            Step::Revoke { cap, by } => {
                if r.caps.is_empty() {
                    return Ok(());
                }
                let i = usize::from(*cap) % r.caps.len();
                let c = &r.caps[i];
                let owner = owner_of(c.device).unwrap_or("ann");
                let by = match by {
                    By::Owner => owner,
                    By::Ancestor(k) => {
                        let up: Vec<usize> = r.chain_up(i).into_iter().skip(1).collect();
                        if up.is_empty() {
                            owner
                        } else {
                            r.caps[up[usize::from(*k) % up.len()]].holder
                        }
                    }
                    By::Anyone(k) => NAMES[usize::from(*k) % 8],
                };
                Command::RevokeCapability { capability: c.id.clone(), by: by.into() }
            }
        };
        self.write(&cmd)
    }

    fn run_universe(&mut self, u: &Universe) -> Result<(), String> {
        self.compare(&u.queries)?;
        for s in &u.steps {
            self.run(s)?;
            self.compare(&u.queries)?;
        }
        self.store.verify().map_err(|e| self.explain(format!("verify: {e}")))?;
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Random universes through the real store agree with the reference on every decision
    /// (allowed or denied, reason, authority, failing link), every write's acceptance or refusal
    /// code, every use's outcome, and every capability's uses left, chain and dependents.
    #[test]
    fn authorize_agrees_with_the_reference(u in universe_strategy(32)) {
        let mut uni = Uni::new(Variant::Exact).map_err(fail)?;
        uni.run_universe(&u).map_err(fail)?;
        if std::env::var_os("EARSHOT_PROPTEST_STATS").is_some() {
            eprintln!("{:?}", uni.stats);
            if std::env::var_os("EARSHOT_PROPTEST_TRACE").is_some() {
                eprintln!("{}", uni.log.join("\n"));
            }
        }
    }
}

// ---- 4. the last use under concurrency -----------------------------------------------------------

/// Two writers race for the last use, 50 times with fresh capabilities: exactly one consumes it,
/// the other is denied with `denied_uses_exhausted`. Even rounds race two uses of one capability;
/// odd rounds race two holders of sibling delegations for their common parent's last use.
#[test]
fn the_last_use_goes_to_exactly_one_of_two_racers() {
    let u = Uni::new(Variant::Exact).unwrap();
    let cap = |id: String, issuer: &str, holder: &str, path: &str, uses: u32, parent: Option<String>| {
        Command::CreateCapability(NewCapability {
            id: Some(id),
            issuer: issuer.into(),
            holder: holder.into(),
            device: "d0".into(),
            paths: vec![path.into()],
            actions: vec!["read".into()],
            constraints: Some(ConstraintsInput { uses: Some(uses), ..ConstraintsInput::default() }),
            parent,
        })
    };
    for round in 0..50 {
        let root = format!("r{round}");
        let path = format!("r{round}/x");
        let principals = if round % 2 == 0 {
            u.store.write(cap(root.clone(), "ann", "bob", &format!("r{round}/*"), 1, None)).unwrap();
            ["bob", "bob"]
        } else {
            u.store.write(cap(root.clone(), "ann", "bob", &format!("r{round}/**"), 1, None)).unwrap();
            for h in ["cat", "dan"] {
                u.store.write(cap(format!("{root}-{h}"), "bob", h, &path, 1, Some(root.clone()))).unwrap();
            }
            ["cat", "dan"]
        };
        let barrier = Barrier::new(2);
        let results: Vec<WriteOutcome> = std::thread::scope(|s| {
            let handles: Vec<_> = principals
                .iter()
                .map(|p| {
                    let (store, barrier, path) = (&u.store, &barrier, &path);
                    s.spawn(move || {
                        barrier.wait();
                        store
                            .write(Command::ConsumeUse(AuthorizeRequest {
                                principal: p.to_string(),
                                device: "d0".into(),
                                path: path.clone(),
                                action: "read".into(),
                                context: RequestContext::new(),
                                consistency: None,
                            }))
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut outcomes: Vec<&str> = results.iter().map(|r| r.outcome.as_str()).collect();
        outcomes.sort_unstable();
        assert_eq!(outcomes, ["consumed", "denied"], "round {round}: {results:?}");
        let denied = results.iter().find(|r| r.outcome == "denied").and_then(|r| r.decision.clone()).unwrap();
        assert_eq!(denied.reason, "denied_uses_exhausted", "round {round}: {denied:?}");
        assert_eq!(denied.failure.map(|f| f.link), Some(root.clone()), "round {round}");
        let chain = u.store.latest().capability_chain(&root).unwrap();
        assert_eq!(chain.chain[0].uses_left, Some(0), "round {round}");
    }
}

// ---- 5. the comparison can fail ------------------------------------------------------------------

/// A fixed universe that a wrong reference must disagree with: a prefix-looking path, a window
/// ending exactly on a tick, a use that spends a delegation's only use, a revoked ancestor.
fn fixed_universe() -> Universe {
    let none = GCons::default;
    let q = |principal: u8, device: u8, path: &str| Query {
        principal,
        device,
        path: path.into(),
        action: 0,
        ctx: Ctx::ALL_TRUE,
    };
    let steps = vec![
        // k1: ann → bob on d0, `a/a`, until T0+2s; k2: bob → cat, same path, one use.
        Step::Root {
            device: 0,
            wrong_issuer: None,
            holder: 1,
            paths: vec!["a/a".into()],
            actions: 1,
            cons: GCons { na: Some(2), ..none() },
        },
        Step::Delegate {
            parent: 0,
            wrong_issuer: None,
            holder: 2,
            other_device: None,
            paths: vec![(0, None)],
            actions: 1,
            wild_actions: false,
            wild: false,
            narrow: 0,
            cons: GCons { uses: Some(1), ..none() },
        },
        // k3: ann → bob on d1, `b/*`; k4: bob → cat, `b/a`.
        Step::Root { device: 1, wrong_issuer: None, holder: 1, paths: vec!["b/*".into()], actions: 1, cons: none() },
        Step::Delegate {
            parent: 2,
            wrong_issuer: None,
            holder: 2,
            other_device: None,
            paths: vec![(1, None)],
            actions: 1,
            wild_actions: false,
            wild: false,
            narrow: 0,
            cons: none(),
        },
        Step::Use(q(2, 0, "a/a"), None),
        Step::Revoke { cap: 2, by: By::Owner },
        Step::Tick(4),
    ];
    Universe { steps, queries: vec![q(1, 0, "a/a/b"), q(1, 0, "a/a"), q(2, 1, "b/a"), q(2, 0, "a/a")] }
}

#[test]
fn the_comparison_catches_a_wrong_reference() {
    // The path comparison catches a reference matcher that lets `**` match zero segments.
    let zero_or_more = |p: &str, s: &str| ref_match_str(p, s) || p.strip_suffix("/**").is_some_and(|q| q == s);
    let core = |p: &str, s: &str| pat(p).matches(&Path::parse(s).unwrap());
    assert!(["a/**", "b/*/**"].iter().any(|p| ["a", "b/c"].iter().any(|s| core(p, s) != zero_or_more(p, s))));
    assert!(["a/**", "b/*/**"].iter().all(|p| ["a", "b/c", "a/b"].iter().all(|s| core(p, s) == ref_match_str(p, s))));

    let run = |v: Variant| Uni::new(v).and_then(|mut u| u.run_universe(&fixed_universe()));
    run(Variant::Exact).unwrap_or_else(|e| panic!("the exact reference must agree: {e}"));
    // Each wrong reading is caught where it goes wrong: the store's side of the first
    // disagreement shows the decision the wrong reference missed.
    for (v, store_says) in [
        (Variant::PrefixMatch, "store     denied_no_authority"),
        (Variant::ClosedWindow, "store     denied_expired"),
        (Variant::LeafOnly, "store     denied_revoked"),
        (Variant::NoUseCount, "store     denied_uses_exhausted"),
    ] {
        let e = run(v).expect_err("a wrong reference must disagree");
        let first = e.split("--- trace ---").next().unwrap_or_default();
        assert!(first.contains(store_says) && first.contains("reference allowed_capability"), "{v:?}: {e}");
    }
}
