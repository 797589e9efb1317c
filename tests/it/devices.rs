//! Devices, relations and capabilities (SPEC §2) beyond the scenario files: the four-fridges run,
//! durability and index agreement across a restart, token scopes on the device routes, and a
//! sweep of malformed device requests (never a 5xx, never a write).

use std::sync::Arc;

use earshot_api::{Scope, TokenConfig};
use earshot_core::condition::{ContextValue, RequestContext};
use earshot_store::devices::model::{ConstraintsInput, NewCapability, NewDevice, NewRelation, SchemaInput};
use earshot_store::model::{Command, NewParticipant, ParticipantKind};
use earshot_store::{Config, Earshot, SledBackend, StoreHandle};
use earshot_tests::{TestApp, T0_MS};
use serde_json::{json, Value};

#[test]
fn the_four_fridges_run_leaks_nothing_through_the_gate_and_denies_nothing_permitted() {
    let report = earshot::fridges::run("test-seed").expect("the demo runs");
    // The control: without the gate the guest does reach forbidden facts, so a zero below is
    // the gate's doing and not a guest that never reached the boundary.
    assert!(report.ungated.forbidden_returned > 0, "{}", report.text);
    assert_eq!(report.ungated.forbidden_returned, report.ungated.forbidden_total, "{}", report.text);
    assert_eq!(report.gated.forbidden_returned, 0, "{}", report.text);
    assert!(report.gated.forbidden_total > 50, "{}", report.text);
    // No false denials: every permitted fact still comes back through the gate.
    assert_eq!(report.gated.permitted_returned, report.gated.permitted_total, "{}", report.text);
    assert!(report.gated.permitted_total > 20, "{}", report.text);
    for line in [
        "chain recorded: glasses -> clock -> vacuum",
        "refused, capability_not_within_parent",
        "declared but exercised by no edge: colleague",
        "calendar/next-start is denied_revoked",
    ] {
        assert!(report.text.contains(line), "missing `{line}` in\n{}", report.text);
    }
    // Deterministic: the same seed prints the same run.
    assert_eq!(earshot::fridges::run("test-seed").expect("again").text, report.text);
}

fn w(h: &StoreHandle, cmd: Command) {
    if let Err(e) = h.write(cmd) {
        panic!("write refused: {e}");
    }
}

fn cap(id: &str, issuer: &str, holder: &str, device: &str, paths: &[&str], parent: Option<&str>) -> NewCapability {
    NewCapability {
        id: Some(id.into()),
        issuer: issuer.into(),
        holder: holder.into(),
        device: device.into(),
        paths: paths.iter().map(|s| s.to_string()).collect(),
        actions: vec!["read".into()],
        constraints: None,
        parent: parent.map(str::to_string),
    }
}

/// A small household with every kind of device record.
fn build(h: &StoreHandle) {
    for p in ["ann", "bob", "cy"] {
        w(h, Command::CreateParticipant(NewParticipant { id: p.into(), kind: ParticipantKind::Person, name: None }));
    }
    for (d, o) in [("fridge", "ann"), ("glasses", "ann"), ("clock", "ann")] {
        w(h, Command::CreateDevice(NewDevice { id: d.into(), owner: o.into(), name: None }));
    }
    let schema = "relation family {\n opens status/*\n opens medication/**\n}\nrelation care {\n opens vitals/**\n}\n";
    w(h, Command::PutSchema(SchemaInput { schema: schema.into() }));
    let rel = |id: &str, g: &str, r: &str, e: &str, c: Option<ConstraintsInput>| NewRelation {
        id: Some(id.into()),
        grantor: g.into(),
        relation: r.into(),
        grantee: e.into(),
        constraints: c,
    };
    w(h, Command::CreateRelation(rel("e1", "ann", "family", "bob", None)));
    let limited = ConstraintsInput { uses: Some(3), condition: Some("awake == true".into()), ..Default::default() };
    w(h, Command::CreateRelation(rel("e2", "ann", "care", "cy", Some(limited))));
    w(h, Command::CreateCapability(cap("g", "ann", "glasses", "glasses", &["calendar/**"], None)));
    w(h, Command::CreateCapability(cap("c", "glasses", "clock", "glasses", &["calendar/next-start"], Some("g"))));
    let mut counted = cap("v", "clock", "bob", "glasses", &["calendar/next-start"], Some("c"));
    counted.constraints = Some(ConstraintsInput { uses: Some(2), ..Default::default() });
    w(h, Command::CreateCapability(counted));
    w(h, Command::RevokeRelation { edge: "e1".into(), by: "ann".into() });
    w(h, Command::CreateRelation(rel("e3", "ann", "family", "bob", None)));
}

/// Every decision over a grid of principals, devices, paths and contexts.
fn decisions(h: &StoreHandle) -> Vec<String> {
    let snap = h.latest();
    let mut awake = RequestContext::new();
    awake.insert("awake".into(), ContextValue::Bool(true));
    let mut out = Vec::new();
    for p in ["ann", "bob", "cy", "glasses", "clock", "ghost"] {
        for d in ["fridge", "glasses", "clock"] {
            for path in ["status/a", "medication/x/y", "vitals/hr", "calendar/next-start", "calendar/private"] {
                for ctx in [&RequestContext::new(), &awake] {
                    let v = snap.authorize(p, d, path, "read", T0_MS, ctx).expect("well-formed request");
                    out.push(format!("{p} {d} {path} {} {} {:?}", ctx.len(), v.reason, v.authority));
                }
            }
        }
    }
    out
}

#[test]
fn device_state_survives_a_restart_and_its_indexes_agree_with_its_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(earshot_store::ManualClock::new(T0_MS));
    let open = || {
        let backend = Arc::new(SledBackend::open(dir.path()).expect("sled"));
        Earshot::open_with(backend, clock.clone(), Config::default()).expect("open")
    };
    let (before, uses_before) = {
        let e = open();
        e.create_store("s", None).expect("store");
        let h = e.store("s").expect("handle");
        build(&h);
        let use_ = earshot_store::devices::model::AuthorizeRequest {
            principal: "bob".into(),
            device: "glasses".into(),
            path: "calendar/next-start".into(),
            action: "read".into(),
            context: RequestContext::new(),
            consistency: None,
        };
        let out = h.write(Command::ConsumeUse(use_)).expect("use");
        assert_eq!(out.outcome, "consumed");
        h.verify().expect("live index agrees with its records");
        let d = decisions(&h);
        let left = h.latest().capability_chain("v").expect("chain").chain.last().and_then(|c| c.uses_left);
        e.shutdown();
        (d, left)
    };
    assert_eq!(uses_before, Some(1));
    let e = open();
    let h = e.store("s").expect("store reopened");
    h.verify().expect("rebuilt index agrees with its records");
    assert_eq!(decisions(&h), before, "a decision changed across the restart");
    let left = h.latest().capability_chain("v").expect("chain").chain.last().and_then(|c| c.uses_left);
    assert_eq!(left, uses_before, "a consumed use was lost across the restart");
    // The revoked edge stays revoked and the new one still allows.
    let v = h.latest().authorize("bob", "fridge", "status/a", "read", T0_MS, &RequestContext::new()).expect("ok");
    assert_eq!((v.reason.as_str(), v.authority.is_some()), ("allowed_relation", true));
    e.shutdown();
}

fn tokens() -> Vec<TokenConfig> {
    let t =
        |name: &str, secret: &str, scope| TokenConfig { name: name.into(), token: secret.into(), scope, stores: None };
    vec![t("admin", "admin-secret", Scope::Admin), t("app", "reader-secret", Scope::Reader)]
}

#[tokio::test]
async fn readers_decide_and_use_but_only_admins_change_authority() {
    let app = TestApp::with_tokens(tokens());
    let admin = Some("admin-secret");
    let reader = Some("reader-secret");
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    ok(app.call_with("POST", "/v1/stores", Some(json!({"id": "s"})), admin).await);
    for p in ["ann", "bob"] {
        ok(app.call_with("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"})), admin).await);
    }
    ok(app.call_with("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"})), admin).await);
    let schema = json!({"schema": "relation family {\n opens status/*\n}\n"});
    let relation = json!({"id": "e", "grantor": "ann", "relation": "family", "grantee": "bob"});
    let capability =
        json!({"id": "k", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["x"], "actions": ["read"]});
    let writes = [
        ("PUT", "/v1/stores/s/schema", Some(schema.clone())),
        ("POST", "/v1/stores/s/devices", Some(json!({"id": "toaster", "owner": "ann"}))),
        ("POST", "/v1/stores/s/relations", Some(relation.clone())),
        ("POST", "/v1/stores/s/capabilities", Some(capability.clone())),
    ];
    for (m, path, body) in writes.clone() {
        let before = app.revision("s");
        let (status, resp) = app.call_with(m, path, body, reader).await;
        assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (403, Some("forbidden")), "{m} {path}");
        assert_eq!(app.revision("s"), before);
    }
    ok(app.call_with("PUT", "/v1/stores/s/schema", Some(schema), admin).await);
    ok(app.call_with("POST", "/v1/stores/s/relations", Some(relation), admin).await);
    ok(app.call_with("POST", "/v1/stores/s/capabilities", Some(capability), admin).await);
    for path in ["/v1/stores/s/relations/e?by=ann", "/v1/stores/s/capabilities/k?by=ann"] {
        let (status, _) = app.call_with("DELETE", path, None, reader).await;
        assert_eq!(status.as_u16(), 403, "{path}");
    }
    let ask = json!({"principal": "bob", "device": "fridge", "path": "status/a", "action": "read"});
    let d = ok(app.call_with("POST", "/v1/stores/s/authorize", Some(ask.clone()), reader).await);
    assert_eq!(d["reason"], "allowed_relation");
    assert!(d["token"].is_string() && d["revision"].is_u64(), "{d}");
    let u = ok(app.call_with("POST", "/v1/stores/s/uses", Some(ask.clone()), reader).await);
    assert_eq!((u["outcome"].as_str(), u["decision"]["reason"].as_str()), (Some("allowed"), Some("allowed_relation")));
    for path in ["/v1/stores/s/schema", "/v1/stores/s/capabilities/k/chain", "/v1/stores/s/capabilities/k/dependents"] {
        ok(app.call_with("GET", path, None, reader).await);
    }
    let (status, _) = app.call_with("POST", "/v1/stores/s/authorize", Some(ask), None).await;
    assert_eq!(status.as_u16(), 401);
    // An at_least token from a later revision is honoured by authorize.
    let token = d["token"].as_str().unwrap_or_default().to_string();
    let pinned = json!({"principal": "bob", "device": "fridge", "path": "status/a", "action": "read",
                        "consistency": {"at_exact": token}});
    let again = ok(app.call_with("POST", "/v1/stores/s/authorize", Some(pinned), reader).await);
    assert_eq!(again["revision"], d["revision"]);
}

#[tokio::test]
async fn malformed_device_requests_are_refused_with_a_code_and_write_nothing() {
    let app = TestApp::new();
    app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await;
    app.call("POST", "/v1/stores/s/participants", Some(json!({"id": "ann", "kind": "person"}))).await;
    app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await;
    let long = "x".repeat(300);
    let deep = vec!["a"; 40].join("/");
    let many_paths: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
    let huge_schema = "#".repeat(70_000);
    let mut context = serde_json::Map::new();
    for i in 0..100 {
        context.insert(format!("v{i}"), json!(i));
    }
    let cases: Vec<(&str, &str, Value)> = vec![
        ("PUT", "schema", json!({})),
        ("PUT", "schema", json!({"schema": 7})),
        ("PUT", "schema", json!({"schema": huge_schema})),
        ("PUT", "schema", json!({"schema": "relation {"})),
        ("PUT", "schema", json!({"schema": "x", "extra": 1})),
        ("POST", "devices", json!({"id": "d"})),
        ("POST", "devices", json!({"id": long, "owner": "ann"})),
        ("POST", "devices", json!({"id": "Bad Id", "owner": "ann"})),
        ("POST", "relations", json!({"grantor": "ann", "relation": "family"})),
        (
            "POST",
            "relations",
            json!({"grantor": "ann", "relation": "family", "grantee": "ann", "constraints": {"uses": -1}}),
        ),
        (
            "POST",
            "relations",
            json!({"grantor": "ann", "relation": "family", "grantee": "bob", "constraints": {"colour": 1}}),
        ),
        (
            "POST",
            "capabilities",
            json!({"issuer": "ann", "holder": "ann", "device": "fridge", "paths": [deep], "actions": ["read"]}),
        ),
        (
            "POST",
            "capabilities",
            json!({"issuer": "ann", "holder": "ann", "device": "fridge", "paths": many_paths, "actions": ["read"]}),
        ),
        (
            "POST",
            "capabilities",
            json!({"issuer": "ann", "holder": "ann", "device": "fridge", "paths": ["a"], "actions": ["read"], "constraints": {"not_before": "yesterday"}}),
        ),
        (
            "POST",
            "capabilities",
            json!({"issuer": "ann", "holder": "ann", "device": "fridge", "paths": ["a"], "actions": ["read"], "constraints": {"condition": "x".repeat(2000)}}),
        ),
        (
            "POST",
            "capabilities",
            json!({"issuer": "ann", "holder": "ann", "device": "fridge", "paths": ["a/**/b"], "actions": ["read"]}),
        ),
        (
            "POST",
            "capabilities",
            json!({"issuer": "ann", "holder": "ann", "device": "fridge", "paths": ["a"], "actions": ["read"], "parent": "Bad Id"}),
        ),
        ("POST", "authorize", json!({"principal": "ann", "device": "fridge", "path": long, "action": "read"})),
        (
            "POST",
            "authorize",
            json!({"principal": "ann", "device": "fridge", "path": "a", "action": "read", "context": context}),
        ),
        (
            "POST",
            "authorize",
            json!({"principal": "ann", "device": "fridge", "path": "a", "action": "read", "consistency": {"at_least": "nope"}}),
        ),
        ("POST", "authorize", json!({"principal": "ann", "device": "fridge", "path": "..", "action": "read"})),
        (
            "POST",
            "uses",
            json!({"principal": "ann", "device": "fridge", "path": "a", "action": "read", "consistency": "latest"}),
        ),
        ("POST", "uses", json!({"principal": "ann", "device": "fridge", "path": "a/*", "action": "read"})),
        ("DELETE", "relations/nope", json!(null)),
        ("DELETE", "relations/nope?by=ann&extra=1", json!(null)),
        ("DELETE", "capabilities/nope?by=Bad%20Id", json!(null)),
        ("GET", "capabilities/Bad%20Id/chain", json!(null)),
    ];
    for (method, path, body) in cases {
        let before = app.revision("s");
        let body = (!body.is_null()).then_some(body);
        let (status, resp) = app.call(method, &format!("/v1/stores/s/{path}"), body.clone()).await;
        let code = resp.pointer("/error/code").and_then(Value::as_str).unwrap_or("");
        assert!(status.is_client_error() && !code.is_empty(), "{method} {path} {body:?}: {status} {resp}");
        assert_eq!(app.revision("s"), before, "{method} {path} wrote something: {resp}");
    }
}

/// Issue 9, SPEC §2.6 (the "new enemy" rule): a token taken before a revocation, or before the
/// last use was consumed, never authorizes afterwards. `at_exact` of an older revision answers
/// what was decided then, marked historical, with `allowed: false`.
#[tokio::test]
async fn an_old_token_never_authorizes_after_a_revocation_or_the_last_use() {
    let app = TestApp::new();
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    ok(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await);
    for p in ["ann", "bob"] {
        ok(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await);
    }
    ok(app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await);
    let root = json!({"id": "k", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["x/**"],
                      "actions": ["read"]});
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(root)).await);
    let once = json!({"id": "k1", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["y/once"],
                      "actions": ["read"], "constraints": {"uses": 1}});
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(once)).await);

    let ask = |path: &str, consistency: Option<&Value>| {
        let mut a = json!({"principal": "bob", "device": "fridge", "path": path, "action": "read"});
        if let Some(c) = consistency {
            a["consistency"] = c.clone();
        }
        a
    };
    // Before: allowed, and the token of that decision is remembered.
    let before = ok(app.call("POST", "/v1/stores/s/authorize", Some(ask("x/a", None))).await);
    assert_eq!(before["reason"], "allowed_capability", "{before}");
    let old = json!({"at_exact": before["token"]});

    // The last use of k1 is consumed; then the root is revoked.
    let before_once = ok(app.call("POST", "/v1/stores/s/authorize", Some(ask("y/once", None))).await);
    assert_eq!((before_once["reason"].as_str(), &before_once["token"]), (Some("allowed_capability"), &before["token"]));
    let used = ok(app.call("POST", "/v1/stores/s/uses", Some(ask("y/once", None))).await);
    assert_eq!(used["outcome"], "consumed", "{used}");
    ok(app.call("DELETE", "/v1/stores/s/capabilities/k?by=ann", None).await);
    let latest = app.revision("s");

    for path in ["x/a", "y/once"] {
        let now = ok(app.call("POST", "/v1/stores/s/authorize", Some(ask(path, None))).await);
        assert_eq!(now["allowed"], false, "{now}");
        // Quoting the old token: the decision of then, as history, never a usable allow.
        let then = ok(app.call("POST", "/v1/stores/s/authorize", Some(ask(path, Some(&old)))).await);
        assert_eq!(then["allowed"], false, "{path}: an old token authorized after the revocation: {then}");
        assert_eq!(then["reason"], "denied_historical_revision", "{then}");
        assert_eq!(then["historical"]["allowed"], true, "{then}");
        assert_eq!(then["historical"]["reason"], "allowed_capability", "{then}");
        assert_eq!(then["revision"], before["revision"], "{then}");
        assert_eq!(then["latest_revision"].as_u64(), Some(latest), "{then}");
        assert!(then.get("authority").is_none(), "a historical answer carries no usable authority: {then}");
        // `at_least` the old token reads the newest state.
        let least = json!({"at_least": before["token"]});
        let fresh = ok(app.call("POST", "/v1/stores/s/authorize", Some(ask(path, Some(&least)))).await);
        assert_eq!((fresh["allowed"].as_bool(), fresh["revision"].as_u64()), (Some(false), Some(latest)), "{fresh}");
        assert!(fresh.get("historical").is_none(), "{fresh}");
    }
}

/// SPEC §2.6 (time is part of the state): a capability and a relation edge whose windows close
/// with no write after them. `at_exact` of the newest revision is judged at that revision's
/// time, where both allow; at the time of the request neither does, so the exact answer is
/// historical (never allows), through `authorize` and `authorize/principals`. A window that
/// opens after the revision makes the exact answer historical as well (judged then: denied).
#[tokio::test]
async fn a_closed_window_is_not_reopened_by_quoting_the_newest_token() {
    let app = TestApp::new();
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    let at = |ms: i64| earshot_store::model::format_time(earshot_tests::T0_MS + ms);
    ok(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await);
    for p in ["ann", "bob", "cy", "di"] {
        ok(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await);
    }
    ok(app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await);
    ok(app.call("PUT", "/v1/stores/s/schema", Some(json!({"schema": "relation family { opens status/** }"}))).await);
    let cap = json!({"id": "k", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["x/**"],
                     "actions": ["read"], "constraints": {"not_after": at(2_000)}});
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(cap)).await);
    let edge =
        json!({"grantor": "ann", "relation": "family", "grantee": "cy", "constraints": {"not_after": at(2_000)}});
    ok(app.call("POST", "/v1/stores/s/relations", Some(edge)).await);
    let later =
        json!({"grantor": "ann", "relation": "family", "grantee": "di", "constraints": {"not_before": at(3_000)}});
    let w = ok(app.call("POST", "/v1/stores/s/relations", Some(later)).await);
    let (token, revision) = (w["token"].clone(), w["revision"].as_u64());
    let exact = json!({"at_exact": token});
    let ask = |who: &str, path: &str, consistency: Option<&Value>| {
        let mut a = json!({"principal": who, "device": "fridge", "path": path, "action": "read"});
        if let Some(c) = consistency {
            a["consistency"] = c.clone();
        }
        a
    };
    let authorize = |who: &'static str, path: &'static str, c: Option<Value>| {
        let app = &app;
        async move { ok(app.call("POST", "/v1/stores/s/authorize", Some(ask(who, path, c.as_ref()))).await) }
    };

    // Inside both windows the newest revision's exact answer is usable.
    app.clock.set(earshot_tests::T0_MS + 1_000);
    for (who, path) in [("bob", "x/a"), ("cy", "status/a")] {
        let d = authorize(who, path, Some(exact.clone())).await;
        assert_eq!(d["allowed"], true, "{who}: {d}");
        assert!(d.get("historical").is_none() && d.get("latest_revision").is_none(), "{d}");
    }

    // Both windows close, nothing is written.
    app.clock.set(earshot_tests::T0_MS + 4_000);
    for (who, path, then) in [("bob", "x/a", "allowed_capability"), ("cy", "status/a", "allowed_relation")] {
        let now = authorize(who, path, None).await;
        assert_eq!((now["allowed"].as_bool(), &now["token"]), (Some(false), &token), "{who}: {now}");
        let d = authorize(who, path, Some(exact.clone())).await;
        assert_eq!(d["allowed"], false, "{who}: a closed window allowed through the newest token: {d}");
        assert_eq!(d["reason"], "denied_historical_revision", "{d}");
        assert_eq!(d["historical"]["reason"], then, "judged at the revision's time: {d}");
        assert_eq!((d["revision"].as_u64(), d["latest_revision"].as_u64()), (revision, revision), "{d}");
    }
    // A window that opened since: allowed now, historical (denied then) under the token.
    assert_eq!(authorize("di", "status/a", None).await["allowed"], true);
    let d = authorize("di", "status/a", Some(exact.clone())).await;
    assert_eq!(
        (d["reason"].as_str(), d["historical"]["allowed"].as_bool()),
        (Some("denied_historical_revision"), Some(false)),
        "{d}"
    );

    // Who can reach the slice, quoting the token: nobody usable (the owner's entry included).
    let who = json!({"device": "fridge", "path": "status/a", "action": "read", "consistency": exact});
    let reach = ok(app.call("POST", "/v1/stores/s/authorize/principals", Some(who)).await);
    let principals = reach["principals"].as_array().expect("principals");
    assert!(principals.iter().any(|p| p["principal"] == "cy" && p["historical"]["allowed"] == true), "{reach}");
    assert!(principals.iter().all(|p| p["allowed"] == false), "{reach}");
    assert_eq!(reach["latest_revision"].as_u64(), revision, "{reach}");
}

/// Issue 36: a condition calling a function conditions do not support (`matches`, `timestamp`,
/// `duration`) is refused when written with `invalid_condition` naming it, and a type used as a
/// value (`type(x) == int`) evaluates instead of denying as a missing variable.
#[tokio::test]
async fn unsupported_condition_functions_are_refused_when_written_and_type_names_evaluate() {
    let app = TestApp::new();
    app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await;
    for p in ["ann", "bob"] {
        app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await;
    }
    app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await;
    let capability = |id: &str, condition: &str| {
        json!({"id": id, "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["a"], "actions": ["read"],
               "constraints": {"condition": condition}})
    };
    let before = app.revision("s");
    for (condition, name) in [
        ("room.matches('^kit')", "`matches`"),
        ("timestamp('2026-01-01T00:00:00Z') < now", "`timestamp`"),
        ("duration('1h') > wait", "`duration`"),
    ] {
        let (status, resp) = app.call("POST", "/v1/stores/s/capabilities", Some(capability("k0", condition))).await;
        assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (422, Some("invalid_condition")), "{resp}");
        assert!(resp["error"]["message"].as_str().unwrap_or("").contains(name), "{resp}");
    }
    assert_eq!(app.revision("s"), before, "a refused condition writes nothing");

    let (status, resp) = app
        .call("POST", "/v1/stores/s/capabilities", Some(capability("k1", "type(n) == int && room.startsWith('kit')")))
        .await;
    assert!(status.is_success(), "{resp}");
    let ask = |n: serde_json::Value| json!({"principal": "bob", "device": "fridge", "path": "a", "action": "read", "context": {"n": n, "room": "kitchen"}});
    let (_, allowed) = app.call("POST", "/v1/stores/s/authorize", Some(ask(json!(3)))).await;
    assert_eq!(allowed["reason"], "allowed_capability", "{allowed}");
    let (_, denied) = app.call("POST", "/v1/stores/s/authorize", Some(ask(json!("3")))).await;
    assert_eq!(denied["reason"], "denied_condition_false", "{denied}");
}

/// Issue 36: docs/RULES.md §5.6 lists exactly the functions, macros and type names the
/// write-time check accepts (`earshot_core::condition::{FUNCTIONS, MACROS, TYPES}`, each of which
/// the core's `every_accepted_function_evaluates` runs).
#[test]
fn rules_lists_exactly_the_supported_condition_language() {
    use earshot_core::condition::{FUNCTIONS, MACROS, TYPES};
    use std::collections::BTreeSet;
    let rules =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/RULES.md")).expect("docs/RULES.md");
    // The identifiers in backticks in the second cell of the table row `| kind | ... |`.
    let row = |kind: &str| -> BTreeSet<String> {
        let line = rules.lines().find(|l| l.trim_start().starts_with(&format!("| {kind} |"))).unwrap_or_default();
        let cell = line.trim_start().split('|').nth(2).unwrap_or_default();
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_string)
            .collect()
    };
    let names = |table: &[(&str, &str)]| -> BTreeSet<String> {
        table
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(row("functions"), names(FUNCTIONS), "RULES §5.6 `functions` row");
    assert_eq!(row("macros"), names(MACROS), "RULES §5.6 `macros` row");
    assert_eq!(row("types as values"), names(TYPES), "RULES §5.6 `types as values` row");
}

/// SPEC §2.6, issue 9: a condition is bounded when written (422 `invalid_condition` naming the
/// bound) and when used: a context that would make it run long denies with
/// `denied_condition_error` before anything runs, so `POST /uses` (decided on the store's writer)
/// and `POST /authorize` answer at once and the writer is free for the next write. The budget is
/// per decision, shared by every condition on the chain.
#[tokio::test]
async fn over_budget_conditions_are_refused_when_written_and_deny_at_once_when_used() {
    let app = TestApp::new();
    app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await;
    for p in ["ann", "bob"] {
        app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await;
    }
    app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await;
    let capability = |id: &str, condition: &str| {
        json!({"id": id, "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["a"], "actions": ["read"],
               "constraints": {"condition": condition}})
    };

    // The reported attack: comprehensions nested seven deep over nine-element lists.
    let mut attack = "true".to_string();
    for i in 0..7 {
        attack = format!("[1,2,3,4,5,6,7,8,9].all(v{i}, {attack})");
    }
    let before = app.revision("s");
    let (status, resp) = app.call("POST", "/v1/stores/s/capabilities", Some(capability("k0", &attack))).await;
    assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (422, Some("invalid_condition")), "{resp}");
    assert!(resp["error"]["message"].as_str().unwrap_or("").contains("comprehensions"), "{resp}");
    let wide =
        format!("{0}.all(a, {0}.all(b, a + b >= 0))", serde_json::to_string(&(0..100).collect::<Vec<_>>()).unwrap());
    let (status, resp) = app.call("POST", "/v1/stores/s/capabilities", Some(capability("k0", &wide))).await;
    assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (422, Some("invalid_condition")), "{resp}");
    assert!(resp["error"]["message"].as_str().unwrap_or("").contains("estimated evaluation cost"), "{resp}");
    assert_eq!(app.revision("s"), before, "a refused condition writes nothing");

    // Comprehension variables are not context variables.
    let (status, resp) =
        app.call("POST", "/v1/stores/s/capabilities", Some(capability("k1", "xs.all(a, xs.all(b, a + b >= 0))"))).await;
    assert!(status.is_success(), "{resp}");
    let ask = |xs: Vec<i64>| json!({"principal": "bob", "device": "fridge", "path": "a", "action": "read", "context": {"xs": xs}});
    let (_, small) = app.call("POST", "/v1/stores/s/uses", Some(ask(vec![1, 2, 3]))).await;
    assert_eq!(small["decision"]["reason"], "allowed_capability", "{small}");

    // 2,000 elements are within the context bounds, but 4,000,000 pairs are over the budget.
    let started = std::time::Instant::now();
    let (status, used) = app.call("POST", "/v1/stores/s/uses", Some(ask((0..2_000).collect()))).await;
    let (_, decided) = app.call("POST", "/v1/stores/s/authorize", Some(ask((0..2_000).collect()))).await;
    let elapsed = started.elapsed();
    assert!(status.is_success(), "{used}");
    assert_eq!(used["decision"]["reason"], "denied_condition_error", "{used}");
    assert_eq!(decided["reason"], "denied_condition_error", "{decided}");
    let message = decided["failure"]["message"].as_str().unwrap_or("");
    assert!(message.contains("over the evaluation budget"), "the denial names the budget: {decided}");
    // Unbounded, the pairs alone take seconds even in release (far longer in a debug build);
    // bounded, both answers are quick even in a debug build on a loaded shared machine.
    assert!(elapsed < std::time::Duration::from_secs(5), "took {elapsed:?}");

    // One budget per decision, shared along the chain: each link's condition fits alone, both
    // together do not, so the parent (checked after the leaf) is denied for the budget.
    app.call("POST", "/v1/stores/s/participants", Some(json!({"id": "cy", "kind": "person"}))).await;
    let each = "xs.all(a, a >= 0)";
    let xs: Vec<i64> = (0..2_000).collect();
    let mut context = RequestContext::new();
    context.insert("xs".into(), ContextValue::List(xs.iter().map(|&x| ContextValue::Int(x)).collect()));
    let cost = earshot_core::condition::Condition::compile(each).unwrap().estimated_cost(&context).unwrap();
    let budget = earshot_core::condition::COST_BUDGET;
    assert!(cost <= budget && 2 * cost > budget, "{cost} against {budget}");
    let parent = json!({"id": "p", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["b"],
                        "actions": ["read"], "constraints": {"condition": each}});
    let (status, resp) = app.call("POST", "/v1/stores/s/capabilities", Some(parent)).await;
    assert!(status.is_success(), "{resp}");
    let child = json!({"id": "q", "issuer": "bob", "holder": "cy", "device": "fridge", "paths": ["b"],
                       "actions": ["read"], "parent": "p", "constraints": {"condition": each}});
    let (status, resp) = app.call("POST", "/v1/stores/s/capabilities", Some(child)).await;
    assert!(status.is_success(), "{resp}");
    let ask_b =
        |who: &str| json!({"principal": who, "device": "fridge", "path": "b", "action": "read", "context": {"xs": xs}});
    let (_, alone) = app.call("POST", "/v1/stores/s/authorize", Some(ask_b("bob"))).await;
    assert_eq!(alone["reason"], "allowed_capability", "{alone}");
    let (_, chained) = app.call("POST", "/v1/stores/s/authorize", Some(ask_b("cy"))).await;
    assert_eq!(
        (chained["reason"].as_str(), chained["failure"]["link"].as_str()),
        (Some("denied_condition_error"), Some("p")),
        "{chained}"
    );
    assert!(chained["failure"]["message"].as_str().unwrap_or("").contains("left of"), "{chained}");

    // A context over its own bounds is refused before any condition sees it.
    let (status, resp) = app.call("POST", "/v1/stores/s/uses", Some(ask((0..20_000).collect()))).await;
    assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (400, Some("invalid_request")), "{resp}");
    assert!(resp["error"]["message"].as_str().unwrap_or("").contains("size"), "{resp}");
}

/// Issue 11, one truth on revoked descendants: revoking a capability answers it alone as
/// revoked and its descendants as `invalidated`; their chain view says `revoked: false` with
/// `invalidated_by` the revoked ancestor, and they authorize nothing.
#[tokio::test]
async fn a_revocation_invalidates_descendants_through_their_ancestor() {
    let app = TestApp::new();
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    ok(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await);
    for p in ["ann", "bob", "cat", "dan"] {
        ok(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await);
    }
    ok(app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await);
    let cap = |id: &str, issuer: &str, holder: &str, parent: Option<&str>| {
        let mut c = json!({"id": id, "issuer": issuer, "holder": holder, "device": "fridge", "paths": ["x/**"],
                           "actions": ["read"]});
        if let Some(p) = parent {
            c["parent"] = json!(p);
        }
        c
    };
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(cap("k", "ann", "bob", None))).await);
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(cap("k2", "bob", "cat", Some("k")))).await);
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(cap("k3", "cat", "dan", Some("k2")))).await);

    let revoked = ok(app.call("DELETE", "/v1/stores/s/capabilities/k?by=ann", None).await);
    assert_eq!(
        (&revoked["outcome"], &revoked["ids"], &revoked["invalidated"]),
        (&json!("revoked"), &json!(["k"]), &json!(["k2", "k3"])),
        "{revoked}"
    );

    let chain = ok(app.call("GET", "/v1/stores/s/capabilities/k3/chain", None).await);
    let links: Vec<(Value, Value, Value)> = chain["chain"]
        .as_array()
        .expect("chain")
        .iter()
        .map(|l| (l["id"].clone(), l["revoked"].clone(), l.get("invalidated_by").cloned().unwrap_or(Value::Null)))
        .collect();
    assert_eq!(
        links,
        vec![
            (json!("k"), json!(true), Value::Null),
            (json!("k2"), json!(false), json!("k")),
            (json!("k3"), json!(false), json!("k")),
        ],
        "{chain}"
    );
    let ask = json!({"principal": "dan", "device": "fridge", "path": "x/a", "action": "read"});
    let d = ok(app.call("POST", "/v1/stores/s/authorize", Some(ask)).await);
    assert_eq!(d["allowed"], false, "{d}");
    // Revoking k2 as well (its holder's ancestor holder may): the nearest revoked ancestor of k3
    // is then k2.
    // k3 was already invalid through k, so k2's revocation invalidates nothing new (issue 36).
    let again = ok(app.call("DELETE", "/v1/stores/s/capabilities/k2?by=bob", None).await);
    assert_eq!(
        (&again["ids"], again.get("invalidated"), &again["already_invalid"]),
        (&json!(["k2"]), None, &json!(["k3"])),
        "{again}"
    );
    let chain = ok(app.call("GET", "/v1/stores/s/capabilities/k3/chain", None).await);
    assert_eq!(chain["chain"][2]["invalidated_by"], "k2", "{chain}");
}

/// Issue 36, item 4: the dependents of a capability and the answer of its revocation list only
/// what the revocation would newly invalidate; descendants already invalid through a revocation
/// (revoked, or below a revoked link) are listed apart, as `already_invalid`. Chain
/// k1 → k2 → k3, and k4 a second child of k1.
#[tokio::test]
async fn dependents_and_revocations_list_only_what_they_newly_invalidate() {
    let app = TestApp::new();
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    ok(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await);
    for p in ["ann", "bob", "cat", "dan", "eve"] {
        ok(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await);
    }
    ok(app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await);
    let cap = |id: &str, issuer: &str, holder: &str, parent: Option<&str>| {
        json!({"id": id, "issuer": issuer, "holder": holder, "device": "fridge", "paths": ["x/**"],
               "actions": ["read"], "parent": parent})
    };
    for c in [
        cap("k1", "ann", "bob", None),
        cap("k2", "bob", "cat", Some("k1")),
        cap("k3", "cat", "dan", Some("k2")),
        cap("k4", "bob", "eve", Some("k1")),
    ] {
        ok(app.call("POST", "/v1/stores/s/capabilities", Some(c)).await);
    }
    let dependents = |c: &'static str| {
        let app = &app;
        async move {
            let d = ok(app.call("GET", &format!("/v1/stores/s/capabilities/{c}/dependents"), None).await);
            (d["invalidates"].clone(), d["already_invalid"].clone())
        }
    };
    assert_eq!(dependents("k1").await, (json!(["k2", "k3", "k4"]), json!([])));
    assert_eq!(dependents("k2").await, (json!(["k3"]), json!([])));

    let r = ok(app.call("DELETE", "/v1/stores/s/capabilities/k2?by=ann", None).await);
    assert_eq!((&r["invalidated"], r.get("already_invalid")), (&json!(["k3"]), None), "{r}");
    // The case: k3 is invalid through k2 now; revoking k1 would newly invalidate k4 only.
    assert_eq!(dependents("k1").await, (json!(["k4"]), json!(["k2", "k3"])));
    assert_eq!(dependents("k2").await, (json!([]), json!(["k3"])));
    let r = ok(app.call("DELETE", "/v1/stores/s/capabilities/k1?by=ann", None).await);
    assert_eq!((&r["invalidated"], &r["already_invalid"]), (&json!(["k4"]), &json!(["k2", "k3"])), "{r}");
    assert_eq!(dependents("k1").await, (json!([]), json!(["k2", "k3", "k4"])));
    // Below a revoked ancestor, everything is already invalid; a leaf has no dependents.
    assert_eq!(dependents("k4").await, (json!([]), json!([])));
    let r = ok(app.call("DELETE", "/v1/stores/s/capabilities/k3?by=ann", None).await);
    assert_eq!((r.get("invalidated"), r.get("already_invalid")), (None, None), "{r}");
}

/// Issue 36, item 3: a relation grant or a capability (root or delegated) whose window ends at
/// or before the time of the write would never hold, so it is refused with `422
/// window_in_the_past` and nothing is written. The time is the writer's clock at the write: an
/// instant that was ahead is refused once the clock has passed it. A window that has not yet
/// begun is fine; an empty one (`not_before` not before `not_after`) stays `400 invalid_request`.
#[tokio::test]
async fn a_window_already_over_is_refused_on_every_route() {
    let app = TestApp::new();
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    let at = |ms: i64| earshot_store::model::format_time(T0_MS + ms);
    ok(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await);
    for p in ["ann", "bob", "cat"] {
        ok(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await);
    }
    ok(app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await);
    ok(app.call("PUT", "/v1/stores/s/schema", Some(json!({"schema": "relation family { opens status/** }"}))).await);
    let edge = |c: Value| json!({"grantor": "ann", "relation": "family", "grantee": "bob", "constraints": c});
    let root = |c: Value| {
        json!({"issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["x/**"], "actions": ["read"],
               "constraints": c})
    };
    let child = |c: Value| {
        json!({"issuer": "bob", "holder": "cat", "device": "fridge", "paths": ["x/a"], "actions": ["read"],
               "parent": "k", "constraints": c})
    };
    ok(app
        .call(
            "POST",
            "/v1/stores/s/capabilities",
            Some(json!({"id": "k", "issuer": "ann", "holder": "bob",
        "device": "fridge", "paths": ["x/**"], "actions": ["read"], "constraints": {"not_after": at(60_000)}})),
        )
        .await);
    let refused = |path: &'static str, body: Value, status: u16, code: &'static str| {
        let app = &app;
        async move {
            let before = app.revision("s");
            let (st, r) = app.call("POST", &format!("/v1/stores/s/{path}"), Some(body.clone())).await;
            assert_eq!((st.as_u16(), r["error"]["code"].as_str()), (status, Some(code)), "{path} {body}: {r}");
            if code == "window_in_the_past" {
                assert_eq!(r["error"]["details"]["field"], "constraints.not_after", "{r}");
            }
            assert_eq!(app.revision("s"), before, "{path} {body}: a refused write wrote");
        }
    };
    let ended = [
        json!({"not_after": "1970-01-01T00:00:00Z"}),
        json!({"not_after": at(0)}),
        json!({"not_before": "1970-01-01T00:00:00Z", "not_after": at(0)}),
    ];
    for c in ended {
        refused("relations", edge(c.clone()), 422, "window_in_the_past").await;
        refused("capabilities", root(c.clone()), 422, "window_in_the_past").await;
        refused("capabilities", child(c), 422, "window_in_the_past").await;
    }
    let empty = json!({"not_before": at(9_000), "not_after": at(8_000)});
    refused("relations", edge(empty.clone()), 400, "invalid_request").await;
    refused("capabilities", child(empty), 400, "invalid_request").await;
    // Ending one millisecond after the write, or beginning later: accepted.
    for c in [json!({"not_after": at(1)}), json!({"not_before": at(5_000), "not_after": at(6_000)})] {
        ok(app.call("POST", "/v1/stores/s/relations", Some(edge(c.clone()))).await);
        ok(app.call("POST", "/v1/stores/s/capabilities", Some(root(c.clone()))).await);
        ok(app.call("POST", "/v1/stores/s/capabilities", Some(child(c))).await);
    }
    // At T0 + 10 s, an end at T0 + 6 s is in the past; T0 + 10.001 s is not.
    app.clock.set(T0_MS + 10_000);
    for c in [json!({"not_after": at(6_000)}), json!({"not_after": at(10_000)})] {
        refused("relations", edge(c.clone()), 422, "window_in_the_past").await;
        refused("capabilities", root(c.clone()), 422, "window_in_the_past").await;
        refused("capabilities", child(c), 422, "window_in_the_past").await;
    }
    let c = json!({"not_after": at(10_001)});
    ok(app.call("POST", "/v1/stores/s/relations", Some(edge(c.clone()))).await);
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(root(c.clone()))).await);
    ok(app.call("POST", "/v1/stores/s/capabilities", Some(child(c))).await);
}

/// Issue 36, item 6: `outcome` says what a use wrote. An allowed use that counts nothing and
/// that no aggregation conflict needs writes nothing (`allowed`: no record, the same revision
/// and token); one the aggregation guard keeps is `recorded` (a `use-<n>` record, one
/// revision); a counted one `consumed`; an owner's use is never kept.
#[tokio::test]
async fn a_use_answers_what_it_wrote() {
    let app = TestApp::new();
    let ok = |r: (axum::http::StatusCode, Value)| {
        assert!(r.0.is_success(), "{} {}", r.0, r.1);
        r.1
    };
    ok(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await);
    for p in ["ann", "bob", "cat"] {
        ok(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await);
    }
    ok(app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await);
    let schema = "relation family {\n opens status/**\n opens location/**\n opens calendar/**\n}\n\
                  conflict empty_home { location/**, calendar/** within 1h }\n";
    ok(app.call("PUT", "/v1/stores/s/schema", Some(json!({"schema": schema}))).await);
    ok(app
        .call(
            "POST",
            "/v1/stores/s/relations",
            Some(json!({"grantor": "ann", "relation": "family",
        "grantee": "bob"})),
        )
        .await);
    ok(app
        .call(
            "POST",
            "/v1/stores/s/relations",
            Some(json!({"grantor": "ann", "relation": "family",
        "grantee": "cat", "constraints": {"uses": 5}})),
        )
        .await);
    let uses = [
        // (principal, path, outcome, revisions written, a use record named)
        ("bob", "status/a", "allowed", 0, false),
        ("bob", "status/a", "allowed", 0, false),
        ("ann", "location/home", "allowed", 0, false),
        ("bob", "location/home", "recorded", 1, true),
        ("cat", "status/a", "consumed", 1, false),
        ("bob", "calendar/today", "denied", 0, false),
    ];
    for (who, path, outcome, wrote, record) in uses {
        let before = ok(app.call("GET", "/v1/stores/s", None).await);
        let ask = json!({"principal": who, "device": "fridge", "path": path, "action": "read"});
        let u = ok(app.call("POST", "/v1/stores/s/uses", Some(ask)).await);
        let after = app.revision("s");
        let from = before["revision"].as_u64().expect("revision");
        assert_eq!((u["outcome"].as_str(), after), (Some(outcome), from + wrote), "{who} {path}: {u}");
        assert_eq!(u["revision"].as_u64(), Some(after), "{u}");
        assert_eq!(u.get("ids").is_some(), record, "{who} {path}: {u}");
        if wrote == 0 {
            assert_eq!(u["token"], before["token"], "{who} {path}: nothing written, the same token: {u}");
        }
    }
}
