//! Fuzz targets as plain functions: the `fuzz/` crate (cargo fuzz, nightly) calls them on
//! generated inputs, and `tests/it/fuzz_replay.rs` (stable, every CI run) replays the checked-in
//! corpus through the very same code.
//!
//! [`http_request`] decodes one HTTP request from raw bytes, sends it through the real router
//! (`tower::ServiceExt::oneshot`) of a small, pre-populated store, and asserts the invariants the
//! issue asks for: no panic, no 5xx (except the documented `503 consistency_timeout`), and no
//! write (no revision, no new store) on a rejected request.
//!
//! Input layout (every byte string is a valid input; short ones are padded with zeros):
//! `[method, route, flags, segment bytes.., b'\n', body bytes..]`. `route` picks one of
//! [`ROUTES`]; `{x}` in it is replaced by the percent-encoded segment; the last route takes the
//! segment as the raw path. `flags` picks the content type and an optional bearer header.
//!
//! To add a target (for example the schema parser once it lands): write `pub fn schema(data:
//! &[u8])` here, add `fuzz/fuzz_targets/schema.rs` calling it, seed `fuzz/corpus/schema/`, and add
//! its name to `TARGETS` in `tests/it/fuzz_replay.rs`.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, reason = "a fuzz target reports by panicking")]

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use earshot_api::{AppState, Auth};
use earshot_store::{Config, Earshot, ManualClock, SledBackend};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::T0_MS;

/// The store every fuzzed request can reach.
pub const STORE: &str = "s";

/// Route templates, `{x}` standing for the fuzzed segment. Index = `data[1] % ROUTES.len()`.
pub const ROUTES: [&str; 37] = [
    "/v1/stores",
    "/v1/stores/s",
    "/v1/stores/s/participants",
    "/v1/stores/s/participants/{x}",
    "/v1/stores/s/identities",
    "/v1/stores/s/items",
    "/v1/stores/s/items/{x}",
    "/v1/stores/s/items/{x}/lifecycle",
    "/v1/stores/s/items/{x}/grants",
    "/v1/stores/s/items/{x}/audiences",
    "/v1/stores/s/derivations",
    "/v1/stores/s/grants/{x}",
    "/v1/stores/s/check",
    "/v1/stores/s/check/bulk",
    "/v1/stores/s/lookup",
    "/v1/stores/s/attempts",
    "/v1/stores/s/attempts/{x}",
    "/v1/stores/{x}",
    "/metrics",
    "/readyz",
    "/openapi.json",
    "/v1/stores/s/schema",
    "/v1/stores/s/devices",
    "/v1/stores/s/relations",
    "/v1/stores/s/relations/{x}",
    "/v1/stores/s/capabilities",
    "/v1/stores/s/capabilities/{x}",
    "/v1/stores/s/capabilities/{x}/chain",
    "/v1/stores/s/capabilities/{x}/dependents",
    "/v1/stores/s/authorize",
    "/v1/stores/s/uses",
    "/v1/stores/s/attempts/{x}/context",
    "/v1/stores/s/trust",
    "/v1/stores/s/trust/{x}",
    "/v1/stores/s/grants/{x}/consents",
    "/v1/stores/s/grants/{x}/consents/alice",
    "{x}",
];

const METHODS: [&str; 6] = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD"];

/// Inputs served by one app before it is rebuilt, so accepted writes do not pile up forever.
const APP_REUSE: u32 = 2000;

struct App {
    earshot: Arc<Earshot>,
    router: axum::Router,
    served: u32,
}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    static APP: RefCell<Option<App>> = const { RefCell::new(None) };
}

/// A store `s` with three participants, an identity, items of each audience kind, a grant, a
/// derived item and an open attempt `a1`-style id (whatever the store chose).
async fn build_app() -> App {
    let clock = Arc::new(ManualClock::new(T0_MS));
    let config = Config { consistency_wait: Duration::from_millis(5), max_attempts: 64, ..Config::default() };
    let backend = SledBackend::temporary().expect("temporary sled");
    let earshot = Arc::new(Earshot::open_with(Arc::new(backend), clock, config).expect("earshot"));
    let router = earshot_api::router(AppState::new(earshot.clone(), Auth::disabled()));
    let app = App { earshot, router, served: 0 };
    let setup: [(&str, &str, Value); 18] = [
        ("POST", "/v1/stores", json!({"id": STORE})),
        ("POST", "/v1/stores/s/participants", json!({"id": "owner", "kind": "person"})),
        ("POST", "/v1/stores/s/participants", json!({"id": "alice", "kind": "agent"})),
        ("POST", "/v1/stores/s/participants", json!({"id": "bob", "kind": "device"})),
        ("POST", "/v1/stores/s/identities", json!({"transport": "email", "identifier": "bob@x", "participant": "bob"})),
        (
            "POST",
            "/v1/stores/s/items",
            json!({"id": "f1", "owner": "owner", "origin": {"participants": ["alice", "bob"]}}),
        ),
        ("POST", "/v1/stores/s/items", json!({"id": "f2", "owner": "owner", "origin": "owner_private"})),
        ("POST", "/v1/stores/s/items", json!({"id": "p1", "owner": "owner", "origin": "public", "content": "hi"})),
        ("POST", "/v1/stores/s/items/f2/grants", json!({"members": ["bob"], "reason": "fuzz"})),
        // SPEC §6.2 and §6.3: an item about alice in bob's words, a grant waiting for alice's
        // consent, and a trust delegation.
        (
            "POST",
            "/v1/stores/s/items",
            json!({"id": "s1", "owner": "owner", "origin": "owner_private", "subjects": ["alice"], "author": "bob"}),
        ),
        ("POST", "/v1/stores/s/items/s1/grants", json!({"members": ["bob"]})),
        ("POST", "/v1/stores/s/trust", json!({"owner": "owner", "participant": "alice", "reason": "fuzz"})),
        (
            "POST",
            "/v1/stores/s/derivations",
            json!({"disposition": "intersection", "owner": "owner", "sources": ["f1", "p1"], "id": "d1"}),
        ),
        (
            "POST",
            "/v1/stores/s/attempts",
            json!({"container": {"owner": "owner", "viewers": {"participants": ["bob"]}}}),
        ),
        (
            "PUT",
            "/v1/stores/s/schema",
            json!({"schema": "relation family {\n opens status/*\n opens medication/**\n}\n"}),
        ),
        ("POST", "/v1/stores/s/devices", json!({"id": "fridge", "owner": "owner"})),
        (
            "POST",
            "/v1/stores/s/relations",
            json!({"id": "e1", "grantor": "owner", "relation": "family", "grantee": "alice"}),
        ),
        (
            "POST",
            "/v1/stores/s/capabilities",
            json!({"id": "k1", "issuer": "owner", "holder": "alice", "device": "fridge", "paths": ["calendar/**"],
                   "actions": ["read"], "constraints": {"uses": 3, "condition": "ok == true"}}),
        ),
    ];
    for (method, path, body) in setup {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .expect("setup request");
        let resp = app.router.clone().oneshot(req).await.expect("infallible router");
        assert!(resp.status().is_success(), "fuzz setup {method} {path} failed: {}", resp.status());
    }
    app
}

/// Percent-encodes every byte outside the unreserved set, so any segment makes a valid URI.
fn encode_segment(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~@".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The request an input stands for, or `None` when it is not a valid HTTP request at all (a URI
/// that does not parse): those never reach the service.
pub fn decode(data: &[u8]) -> Option<Request<Body>> {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let method = METHODS[usize::from(byte(0)) % METHODS.len()];
    let route = ROUTES[usize::from(byte(1)) % ROUTES.len()];
    let flags = byte(2);
    let rest = data.get(3..).unwrap_or(&[]);
    let (segment, body) = match rest.iter().position(|b| *b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let uri = if route == "{x}" {
        String::from_utf8_lossy(segment).into_owned()
    } else {
        route.replace("{x}", &encode_segment(segment))
    };
    let mut req = Request::builder().method(Method::from_bytes(method.as_bytes()).ok()?).uri(uri);
    match flags % 4 {
        0 | 1 => req = req.header("content-type", "application/json"),
        2 => req = req.header("content-type", "text/plain"),
        _ => {}
    }
    if flags & 0x10 != 0 {
        req = req.header("authorization", "Bearer not-a-token");
    }
    req.body(Body::from(body.to_vec())).ok()
}

/// What a store looks like from outside: its id and latest revision, for every store.
fn revisions(e: &Earshot) -> Vec<(String, u64)> {
    let mut ids = e.store_ids();
    ids.sort();
    ids.into_iter()
        .map(|id| {
            let rev = e.store(&id).map(|h| h.latest().revision()).unwrap_or(0);
            (id, rev)
        })
        .collect()
}

/// The HTTP fuzz target: one request through the real router. Panics on a violated invariant.
pub fn http_request(data: &[u8]) {
    let Some(req) = decode(data) else { return };
    let label = format!("{} {}", req.method(), req.uri());
    let is_head = req.method() == Method::HEAD;
    RUNTIME.with(|rt| {
        rt.block_on(async {
            let (earshot, router) = {
                let existing = APP.with(|a| {
                    let mut a = a.borrow_mut();
                    match a.as_mut() {
                        Some(app) if app.served < APP_REUSE => {
                            app.served += 1;
                            Some((app.earshot.clone(), app.router.clone()))
                        }
                        _ => None,
                    }
                });
                match existing {
                    Some(x) => x,
                    None => {
                        let app = build_app().await;
                        let x = (app.earshot.clone(), app.router.clone());
                        APP.with(|a| {
                            if let Some(old) = a.borrow_mut().replace(app) {
                                old.earshot.shutdown();
                            }
                        });
                        x
                    }
                }
            };
            let before = revisions(&earshot);
            let resp = router.oneshot(req).await.expect("infallible router");
            let status = resp.status();
            let bytes = resp.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let after = revisions(&earshot);
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let code = body.pointer("/error/code").and_then(Value::as_str).unwrap_or("");
            // The one documented 5xx a client can cause: waiting for a revision that never comes.
            let documented = status.as_u16() == 503 && code == "consistency_timeout";
            assert!(!status.is_server_error() || documented, "{label}: {status} {body}");
            if !status.is_success() {
                assert_eq!(before, after, "{label}: rejected ({status} {code}) but wrote");
                // Every refusal carries a stable code (a HEAD answer has no body to carry it).
                assert!(is_head || !code.is_empty(), "{label}: {status} without an error code: {body}");
            }
        })
    });
}

/// Seed inputs for [`http_request`]: one well-formed request per route (and a few malformed),
/// used to (re)write `fuzz/corpus/http/` with `EARSHOT_FUZZ_SEEDS=1`.
pub fn http_seeds() -> Vec<Vec<u8>> {
    let route = |p: &str| ROUTES.iter().position(|r| *r == p).expect("route in table") as u8;
    let input = |method: u8, r: &str, segment: &str, body: &str| {
        let mut v = vec![method, route(r), 0];
        v.extend_from_slice(segment.as_bytes());
        v.push(b'\n');
        v.extend_from_slice(body.as_bytes());
        v
    };
    let (get, post, delete) = (0u8, 1u8, 2u8);
    let c = r#"{"owner":"owner","viewers":{"participants":["bob"]}}"#;
    vec![
        input(post, "/v1/stores", "", r#"{"id":"t2","name":"n"}"#),
        input(get, "/v1/stores/s", "", ""),
        input(post, "/v1/stores/s/participants", "", r#"{"id":"carol","kind":"person","name":"C"}"#),
        input(delete, "/v1/stores/s/participants/{x}", "alice", ""),
        input(post, "/v1/stores/s/identities", "", r#"{"transport":"chat","identifier":"U1","participant":"alice"}"#),
        input(post, "/v1/stores/s/items", "", r#"{"id":"n1","owner":"owner","origin":{"participants":["alice"]}}"#),
        input(
            post,
            "/v1/stores/s/items",
            "",
            r#"{"owner":"owner","content":"x","attributes":{"k":1},"origin":{"identities":[{"transport":"email","identifier":"bob@x"}],"quality":"stale"}}"#,
        ),
        input(get, "/v1/stores/s/items/{x}", "f1", ""),
        input(post, "/v1/stores/s/items/{x}/lifecycle", "f1", r#"{"action":"freeze"}"#),
        input(post, "/v1/stores/s/items/{x}/lifecycle", "f1", r#"{"action":"supersede","by":"d1"}"#),
        input(
            post,
            "/v1/stores/s/items/{x}/grants",
            "f1",
            r#"{"members":["bob"],"expires_at":"2026-01-01T00:00:05Z"}"#,
        ),
        input(get, "/v1/stores/s/items/{x}/audiences", "f2", ""),
        input(
            post,
            "/v1/stores/s/derivations",
            "",
            r#"{"disposition":"partition","owner":"owner","sources":["f1","f2"],"container":{"participants":["bob"]},"outputs":[{"id":"o1","sources":["f1"]},{"id":"o2","sources":["f2"]}]}"#,
        ),
        input(
            post,
            "/v1/stores/s/derivations",
            "",
            r#"{"disposition":"declassification","owner":"owner","sources":["f2"],"members":["alice"],"reason":"r"}"#,
        ),
        input(delete, "/v1/stores/s/grants/{x}", "g-unknown", ""),
        input(post, "/v1/stores/s/check", "", &format!(r#"{{"item":"f1","container":{c}}}"#)),
        input(
            post,
            "/v1/stores/s/check",
            "",
            &format!(r#"{{"item":"f1","container":{c},"consistency":{{"at_least":"99.zz"}}}}"#),
        ),
        input(post, "/v1/stores/s/check/bulk", "", &format!(r#"{{"items":["f1","f2","p1","zz"],"container":{c}}}"#)),
        input(post, "/v1/stores/s/lookup", "", &format!(r#"{{"container":{c},"limit":1,"owners":["owner"]}}"#)),
        input(post, "/v1/stores/s/lookup", "", &format!(r#"{{"container":{c},"cursor":"not-a-cursor"}}"#)),
        input(post, "/v1/stores/s/attempts", "", &format!(r#"{{"container":{c}}}"#)),
        input(get, "/v1/stores/s/attempts/{x}", "nope", ""),
        input(get, "/v1/stores/{x}", "s", ""),
        input(get, "/metrics", "", ""),
        input(get, "/readyz", "", ""),
        input(get, "/openapi.json", "", ""),
        input(get, "{x}", "/v1/stores/s/items/f1?x=1", ""),
        input(
            3,
            "/v1/stores/s/schema",
            "",
            r#"{"schema":"relation care {\n opens vitals/** for read, subscribe\n includes family\n}\n"}"#,
        ),
        input(get, "/v1/stores/s/schema", "", ""),
        input(post, "/v1/stores/s/trust", "", r#"{"owner":"owner","participant":"bob","reason":"r"}"#),
        input(get, "/v1/stores/s/trust", "", ""),
        input(get, "/v1/stores/s/trust/{x}", "w-unknown", ""),
        input(delete, "/v1/stores/s/trust/{x}", "w-unknown", ""),
        input(post, "/v1/stores/s/grants/{x}/consents", "g-unknown", r#"{"subject":"alice"}"#),
        input(delete, "/v1/stores/s/grants/{x}/consents/alice", "g-unknown", ""),
        input(
            post,
            "/v1/stores/s/items",
            "",
            r#"{"owner":"owner","origin":"public","subjects":["alice","bob"],"author":"alice"}"#,
        ),
        input(post, "/v1/stores/s/devices", "", r#"{"id":"clock","owner":"owner","name":"c"}"#),
        input(
            post,
            "/v1/stores/s/relations",
            "",
            r#"{"grantor":"owner","relation":"family","grantee":"bob","constraints":{"not_after":"2026-01-02T00:00:00Z"}}"#,
        ),
        input(delete, "/v1/stores/s/relations/{x}", "e1?by=owner", ""),
        input(
            post,
            "/v1/stores/s/capabilities",
            "",
            r#"{"issuer":"alice","holder":"bob","device":"fridge","paths":["calendar/next-start"],"actions":["read"],"parent":"k1","constraints":{"uses":1}}"#,
        ),
        input(delete, "/v1/stores/s/capabilities/{x}", "k1?by=owner", ""),
        input(get, "/v1/stores/s/capabilities/{x}/chain", "k1", ""),
        input(get, "/v1/stores/s/capabilities/{x}/dependents", "k1", ""),
        input(
            post,
            "/v1/stores/s/authorize",
            "",
            r#"{"principal":"alice","device":"fridge","path":"calendar/next-start","action":"read","context":{"ok":true}}"#,
        ),
        input(
            post,
            "/v1/stores/s/uses",
            "",
            r#"{"principal":"alice","device":"fridge","path":"calendar/x","action":"read","context":{"ok":true}}"#,
        ),
        input(post, "/v1/stores/s/attempts/{x}/context", "nope", r#"{"query":"hi","fetch":20,"k":5}"#),
        input(post, "/v1/stores/s/items", "", r#"{"owner":"owner","origin":"#),
    ]
}

/// The relation schema parser (`earshot_core::schema::parse`) on any text: it never panics; a
/// refusal lists between one and `MAX_PROBLEMS` problems, each at a line and column inside the
/// text with a known code; an accepted schema parses again from its own source to the same
/// relations, and every relation it opens refers only to declared relations.
pub fn schema(data: &[u8]) {
    use earshot_core::schema::{parse, MAX_PROBLEMS};
    const CODES: [&str; 8] = [
        "syntax",
        "bad_name",
        "bad_pattern",
        "unknown_relation",
        "duplicate_relation",
        "duplicate_pattern",
        "include_cycle",
        "too_large",
    ];
    let text = String::from_utf8_lossy(data);
    match parse(&text) {
        Ok(s) => {
            let again = parse(&s.source).expect("an accepted schema parses again");
            assert_eq!(again.relations, s.relations);
            for r in s.relations.values() {
                for inc in &r.includes {
                    assert!(s.relations.contains_key(inc), "relation `{}` includes undeclared `{inc}`", r.name);
                }
            }
        }
        Err(problems) => {
            assert!(!problems.is_empty() && problems.len() <= MAX_PROBLEMS, "{} problems", problems.len());
            let lines = text.lines().count().max(1);
            for p in &problems {
                assert!(CODES.contains(&p.code), "unknown problem code {}", p.code);
                assert!(p.line >= 1 && p.line <= lines, "line {} outside 1..={lines}: {p}", p.line);
                let width = text.lines().nth(p.line - 1).map_or(0, |l| l.chars().count());
                assert!(p.column >= 1 && p.column <= width + 1, "column {} outside the line: {p}", p.column);
            }
        }
    }
}

/// Seed inputs for [`schema`]: the household schema, the README's example and one of each problem.
pub fn schema_seeds() -> Vec<Vec<u8>> {
    [
        include_str!("../schema/household.schema"),
        "relation family {\n    opens status/waking\n    opens medication/**\n}\nrelation care_provider {\n    opens vitals/** for read, subscribe\n}\nrelation guardian {\n    includes family\n    opens location/*\n}\n",
        "relation family {\n  opens calendar/priv*\n}\n",
        "relation guardian {\n  includes parent\n}\n",
        "relation family {\n}\nrelation family {\n}\n",
        "relation a {\n opens x\n opens x\n}\n",
        "relation a {\n includes b\n}\nrelation b {\n includes a\n}\n",
        "relation Bad {\n}\n",
        "relation a {\n opens x for read,\n",
        "opens x\n}\n# comment only\n",
        "relation a { # c\n opens */**\n opens a/*/b for read, write, move\n}\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}
