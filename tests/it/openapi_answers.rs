//! Validates real answers against `api/openapi.json` (issue 36): every request the fixture
//! scenarios make, and the requests behind the drifts issue 36 found, go through a target that
//! checks each request body against the operation's `requestBody` schema (a body the document
//! calls invalid must be refused with a 4xx), each answer's status against the documented ones,
//! each JSON answer against its schema, and each error code against the status's `x-error-codes`.
//!
//! The schemas are checked with a small validator for the JSON Schema subset the document uses
//! (`type`, `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`, the
//! size bounds, `minimum`/`maximum`, `uniqueItems`, `propertyNames`, `$ref`, `allOf`, `anyOf`,
//! `oneOf`); `pattern` and `format` are not checked. [`a_schema_violation_is_reported`] shows that
//! it fails.

use std::cell::RefCell;

use axum::http::StatusCode;
use earshot_api::OPENAPI_JSON;
use earshot_tests::TestApp;
use serde_json::{json, Map, Value};

use crate::scenarios::{fixture_files, parse, run_scenario_on};

fn doc() -> Value {
    serde_json::from_str(OPENAPI_JSON).expect("api/openapi.json is not valid JSON")
}

/// The schema `$ref` points at (`#/components/schemas/X`).
fn resolve<'d>(doc: &'d Value, reference: &str) -> Option<&'d Value> {
    doc.pointer(reference.strip_prefix('#')?)
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        _ => false,
    }
}

fn as_usize(v: &Value) -> usize {
    v.as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX)
}

/// Appends to `errs` every way `v` (at JSON pointer `at`) breaks `schema`.
fn validate(doc: &Value, schema: &Value, v: &Value, at: &str, errs: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errs.push(format!("{at}: not allowed here"));
        }
        return;
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        match resolve(doc, r) {
            Some(target) => validate(doc, target, v, at, errs),
            None => errs.push(format!("{at}: unresolved $ref {r}")),
        }
    }
    match s.get("type") {
        Some(Value::String(t)) if !type_matches(t, v) => {
            errs.push(format!("{at}: {v} is not of type {t}"));
            return;
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t.as_str().is_some_and(|t| type_matches(t, v))) => {
            errs.push(format!("{at}: {v} is not of any type {ts:?}"));
            return;
        }
        _ => {}
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errs.push(format!("{at}: {v} is not one of {}", Value::Array(e.clone())));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            errs.push(format!("{at}: {v} is not {c}"));
        }
    }
    for sub in s.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        validate(doc, sub, v, at, errs);
    }
    let matching = |key: &str| {
        s.get(key).and_then(Value::as_array).map(|subs| {
            subs.iter()
                .filter(|sub| {
                    let mut e = Vec::new();
                    validate(doc, sub, v, at, &mut e);
                    e.is_empty()
                })
                .count()
        })
    };
    if matching("anyOf") == Some(0) {
        errs.push(format!("{at}: {v} matches none of anyOf"));
    }
    if let Some(n) = matching("oneOf").filter(|n| *n != 1) {
        errs.push(format!("{at}: {v} matches {n} of oneOf, not exactly one"));
    }
    match v {
        Value::Object(o) => validate_object(doc, s, o, at, errs),
        Value::Array(a) => {
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    validate(doc, items, x, &format!("{at}/{i}"), errs);
                }
            }
            if s.get("minItems").is_some_and(|m| a.len() < as_usize(m)) {
                errs.push(format!("{at}: fewer items than minItems"));
            }
            if s.get("maxItems").is_some_and(|m| a.len() > as_usize(m)) {
                errs.push(format!("{at}: more items than maxItems"));
            }
            if s.get("uniqueItems") == Some(&Value::Bool(true)) && a.iter().enumerate().any(|(i, x)| a[..i].contains(x))
            {
                errs.push(format!("{at}: items are not unique"));
            }
        }
        Value::String(x) => {
            let n = x.chars().count();
            if s.get("minLength").is_some_and(|m| n < as_usize(m))
                || s.get("maxLength").is_some_and(|m| n > as_usize(m))
            {
                errs.push(format!("{at}: length {n} out of bounds"));
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if s.get("minimum").and_then(Value::as_f64).is_some_and(|m| x < m)
                || s.get("maximum").and_then(Value::as_f64).is_some_and(|m| x > m)
            {
                errs.push(format!("{at}: {n} out of bounds"));
            }
        }
        _ => {}
    }
}

fn validate_object(doc: &Value, s: &Map<String, Value>, o: &Map<String, Value>, at: &str, errs: &mut Vec<String>) {
    let props = s.get("properties").and_then(Value::as_object);
    for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
        if let Some(k) = r.as_str().filter(|k| !o.contains_key(*k)) {
            errs.push(format!("{at}: required `{k}` is missing"));
        }
    }
    for (k, x) in o {
        let here = format!("{at}/{k}");
        if let Some(names) = s.get("propertyNames") {
            validate(doc, names, &Value::String(k.clone()), &here, errs);
        }
        match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
            (Some(p), _) => validate(doc, p, x, &here, errs),
            (None, Some(Value::Bool(false))) => errs.push(format!("{at}: `{k}` is not a documented property")),
            (None, Some(extra)) => validate(doc, extra, x, &here, errs),
            (None, None) => {}
        }
    }
    if s.get("maxProperties").is_some_and(|m| o.len() > as_usize(m)) {
        errs.push(format!("{at}: more properties than maxProperties"));
    }
}

/// The documented operation a request reaches: the path template matching `path` (without its
/// query) with the most literal segments, and its method.
fn operation<'d>(doc: &'d Value, method: &str, path: &str) -> Option<(&'d str, &'d Value)> {
    let path = path.split('?').next().unwrap_or(path);
    let segs: Vec<&str> = path.split('/').collect();
    let mut best: Option<(usize, &str, &Value)> = None;
    for (template, item) in doc["paths"].as_object()? {
        let tsegs: Vec<&str> = template.split('/').collect();
        if tsegs.len() != segs.len() {
            continue;
        }
        let fits = tsegs.iter().zip(&segs).all(|(t, s)| t.starts_with('{') || t == s);
        let literal = tsegs.iter().filter(|t| !t.starts_with('{')).count();
        if let Some(op) = item.get(method.to_lowercase()).filter(|_| fits) {
            if best.is_none_or(|(l, _, _)| literal > l) {
                best = Some((literal, template.as_str(), op));
            }
        }
    }
    best.map(|(_, t, op)| (t, op))
}

fn json_schema(v: &Value) -> Option<&Value> {
    v.get("content")?.get("application/json")?.get("schema")
}

/// What one request and its answer break in the document; empty when they agree.
fn check_exchange(
    doc: &Value,
    method: &str,
    path: &str,
    body: Option<&Value>,
    status: StatusCode,
    resp: &Value,
) -> Vec<String> {
    let mut errs = Vec::new();
    let Some((template, op)) = operation(doc, method, path) else {
        // An undocumented route is `route_not_found` (the route table test covers the rest).
        if resp["error"]["code"] != "route_not_found" {
            errs.push(format!("{method} {path}: no documented operation, answered {status} {resp}"));
        }
        return errs;
    };
    let what = format!("{method} {path} ({template}) -> {status}");
    if let (Some(b), Some(schema)) = (body, op.get("requestBody").and_then(json_schema)) {
        let mut invalid = Vec::new();
        validate(doc, schema, b, "body", &mut invalid);
        if !invalid.is_empty() && status.is_success() {
            errs.push(format!("{what}: accepted a body the document calls invalid ({}): {b}", invalid.join("; ")));
        }
    }
    let code = status.as_str();
    let Some(documented) = op["responses"].get(code).or_else(|| op["responses"].get("default")) else {
        errs.push(format!("{what}: status {code} is not documented: {resp}"));
        return errs;
    };
    if let Some(codes) = documented.get("x-error-codes").and_then(Value::as_array) {
        let answered = &resp["error"]["code"];
        if !codes.contains(answered) {
            errs.push(format!("{what}: error code {answered} is not in this status's x-error-codes {codes:?}"));
        }
    }
    if let Some(schema) = json_schema(documented) {
        let mut bad = Vec::new();
        validate(doc, schema, resp, "answer", &mut bad);
        errs.extend(bad.into_iter().map(|e| format!("{what}: {e}")));
    }
    errs
}

/// A `TestApp` that checks every exchange against the document.
struct Checked {
    app: TestApp,
    doc: Value,
    exchanges: RefCell<usize>,
    violations: RefCell<Vec<String>>,
}

impl Checked {
    fn new() -> Self {
        Checked { app: TestApp::new(), doc: doc(), exchanges: RefCell::new(0), violations: RefCell::new(Vec::new()) }
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let (status, resp) = self.app.call(method, path, body.clone()).await;
        *self.exchanges.borrow_mut() += 1;
        let errs = check_exchange(&self.doc, method, path, body.as_ref(), status, &resp);
        self.violations.borrow_mut().extend(errs);
        (status, resp)
    }

    fn violations(&self) -> Vec<String> {
        self.violations.borrow().clone()
    }
}

impl earshot::validate::Target for Checked {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        Checked::call(self, method, path, body).await
    }

    fn revision(&self, store: &str) -> u64 {
        self.app.revision(store)
    }

    fn set_clock(&self, ms: i64) {
        self.app.clock.set(ms);
    }
}

/// Every request of every fixture scenario, and its answer, agree with the document.
#[tokio::test]
async fn every_fixture_exchange_agrees_with_the_document() {
    let mut violations = Vec::new();
    let mut exchanges = 0;
    for f in fixture_files() {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
        let sc = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let target = Checked::new();
        let failures = run_scenario_on(&target, &sc).await;
        assert!(failures.is_empty(), "{}: {failures:?}", f.display());
        exchanges += *target.exchanges.borrow();
        violations.extend(target.violations().into_iter().map(|v| format!("{}: {v}", sc.name)));
    }
    assert!(exchanges > 500, "the fixtures exercise the API: {exchanges} exchanges");
    assert!(violations.is_empty(), "answers that disagree with api/openapi.json:\n  {}", violations.join("\n  "));
}

/// The validator can fail: a wrong type, a missing required field, an undocumented property, an
/// undocumented status or error code, and an accepted invalid body are each reported.
#[test]
fn a_schema_violation_is_reported() {
    let doc = doc();
    let ok = json!({"outcome": "created", "ids": ["s"], "revision": 1, "token": "1.0123456789abcdef"});
    assert_eq!(
        check_exchange(&doc, "POST", "/v1/stores", Some(&json!({"id": "s"})), StatusCode::CREATED, &ok),
        Vec::<String>::new()
    );
    for (status, body, resp) in [
        (
            StatusCode::CREATED,
            json!({"id": "s"}),
            json!({"outcome": "created", "revision": "1", "token": "1.0123456789abcdef"}),
        ),
        (StatusCode::CREATED, json!({"id": "s"}), json!({"outcome": "created", "token": "1.0123456789abcdef"})),
        (
            StatusCode::CREATED,
            json!({"id": "s"}),
            json!({"outcome": "made", "revision": 1, "token": "1.0123456789abcdef"}),
        ),
        (StatusCode::IM_A_TEAPOT, json!({"id": "s"}), json!({})),
        (
            StatusCode::BAD_REQUEST,
            json!({"id": "s"}),
            json!({"error": {"code": "participant_is_device", "message": "m"}}),
        ),
        (StatusCode::CREATED, json!(["s"]), ok.clone()),
    ] {
        let errs = check_exchange(&doc, "POST", "/v1/stores", Some(&body), status, &resp);
        assert!(!errs.is_empty(), "{status} {body} {resp}: no violation reported");
    }
    let path = "/v1/stores/s/check";
    let array = json!({"item": "f1", "container": {"owner": "o", "viewers": {"identities": [["email", "b@x"]]}}});
    let decided = json!({"decision": {}, "revision": 1, "token": "1.0123456789abcdef"});
    assert!(!check_exchange(&doc, "POST", path, Some(&array), StatusCode::OK, &decided).is_empty());
}

/// Issue 36, item 10: the drifts found between the documents and the product, each now one
/// behaviour, checked against the document by the same target.
#[tokio::test]
async fn the_issue_36_drifts_answer_as_documented() {
    let app = Checked::new();
    app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await;
    for p in ["owner", "ann", "bob"] {
        app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await;
    }

    // An identity is an object: the array of its fields is refused, in viewers and in a binding.
    let (status, resp) = app
        .call(
            "POST",
            "/v1/stores/s/identities",
            Some(json!({"transport": "email", "identifier": "b@x", "participant": "bob"})),
        )
        .await;
    assert!(status.is_success(), "{resp}");
    let array = json!({"owner": "owner", "viewers": {"identities": [["email", "b@x"]]}});
    let (status, resp) = app.call("POST", "/v1/stores/s/lookup", Some(json!({"container": array}))).await;
    assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (400, Some("invalid_request")), "{resp}");
    let (status, resp) = app.call("POST", "/v1/stores/s/identities", Some(json!(["email", "c@x", "bob"]))).await;
    assert_eq!(status.as_u16(), 400, "{resp}");

    // A device cannot be removed, whichever route made it.
    app.call("POST", "/v1/stores/s/participants", Some(json!({"id": "lamp", "kind": "device"}))).await;
    app.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "ann"}))).await;
    for device in ["lamp", "fridge"] {
        let (status, resp) = app.call("DELETE", &format!("/v1/stores/s/participants/{device}"), None).await;
        assert_eq!(
            (status.as_u16(), resp["error"]["code"].as_str()),
            (409, Some("participant_is_device")),
            "{device}: {resp}"
        );
        assert_eq!(resp["error"]["details"]["participant"], device, "{device}: {resp}");
    }
    let (status, resp) = app.call("DELETE", "/v1/stores/s/participants/bob", None).await;
    assert!(status.is_success(), "a person is still removable: {resp}");

    // A quarantine always carries its reason: `requested` when nothing would have suppressed it.
    app.call(
        "POST",
        "/v1/stores/s/items",
        Some(json!({"id": "f1", "owner": "owner", "origin": {"participants": ["ann"]}})),
    )
    .await;
    let quarantine = json!({"disposition": "quarantine", "owner": "owner", "sources": ["f1"], "id": "q1"});
    let (status, resp) = app.call("POST", "/v1/stores/s/derivations", Some(quarantine)).await;
    assert_eq!(status.as_u16(), 201, "{resp}");
    assert_eq!((resp["outcome"].as_str(), resp["reason"].as_str()), (Some("quarantined"), Some("requested")), "{resp}");

    // 65 context variables: `limit_exceeded`, as the document says.
    let context: Map<String, Value> = (0..65).map(|i| (format!("v{i}"), json!(i))).collect();
    let ask = json!({"principal": "ann", "device": "fridge", "path": "a", "action": "read", "context": context});
    let (status, resp) = app.call("POST", "/v1/stores/s/authorize", Some(ask)).await;
    assert_eq!((status.as_u16(), resp["error"]["code"].as_str()), (400, Some("limit_exceeded")), "{resp}");
    let described =
        doc()["components"]["schemas"]["RequestContext"]["description"].as_str().unwrap_or_default().to_string();
    assert!(described.contains("64 variables, else 400 `limit_exceeded`"), "{described}");

    assert!(
        app.violations().is_empty(),
        "answers that disagree with api/openapi.json:\n  {}",
        app.violations().join("\n  ")
    );
}
