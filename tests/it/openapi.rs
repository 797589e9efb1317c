//! Keeps `api/openapi.json` in sync with the code: the same (method, path) set as
//! `earshot_api::routes()`, served verbatim at `/openapi.json`, every route reachable, every
//! `$ref` resolving, and the documented error codes equal to the codes the code base produces.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use earshot_api::{ApiError, Scope, TokenConfig, MAX_BODY_BYTES, OPENAPI_JSON};
use earshot_core::{Action, IdError, State, TransitionError};
use earshot_store::StoreError;
use earshot_tests::TestApp;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// Keys of an OpenAPI path item that are operations.
const HTTP_METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

fn doc() -> Value {
    serde_json::from_str(OPENAPI_JSON).expect("api/openapi.json is not valid JSON")
}

fn doc_on_disk() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../api/openapi.json");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn paths(doc: &Value) -> &serde_json::Map<String, Value> {
    doc["paths"].as_object().expect("`paths` is an object")
}

/// Every (method, path) the document describes.
fn documented_operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in paths(doc) {
        let item = item.as_object().unwrap_or_else(|| panic!("path item {path} is not an object"));
        for key in item.keys().filter(|k| HTTP_METHODS.contains(&k.as_str())) {
            out.insert((key.clone(), path.clone()));
        }
    }
    out
}

/// Every (method, path) the router answers, from the route table it is built from.
fn routed_operations() -> BTreeSet<(String, String)> {
    earshot_api::routes()
        .iter()
        .flat_map(|r| r.methods().map(move |m| (m.to_ascii_lowercase(), r.path.to_string())))
        .collect()
}

fn show(set: &BTreeSet<(String, String)>) -> String {
    set.iter().map(|(m, p)| format!("\n    {} {p}", m.to_uppercase())).collect()
}

#[test]
fn documented_operations_equal_the_route_table() {
    let documented = documented_operations(&doc());
    let routed = routed_operations();
    let undocumented: BTreeSet<_> = routed.difference(&documented).cloned().collect();
    let unrouted: BTreeSet<_> = documented.difference(&routed).cloned().collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "api/openapi.json and earshot_api::routes() disagree\n  routed but not documented:{}\n  documented but not routed:{}",
        show(&undocumented),
        show(&unrouted),
    );
}

/// The console's routes (`earshot_api::console::PATHS`: the page and its static assets) are not
/// API operations, so they are excluded from the comparison above by construction: they are not
/// in `routes()` and must not be documented (nor reach the typed clients generated from the
/// document). They are still served by the same router, without a token (they hold no data).
#[test]
fn console_routes_are_excluded_from_the_document_and_the_route_table() {
    let doc = doc();
    for path in earshot_api::console::PATHS {
        assert!(paths(&doc).get(path).is_none(), "{path} is static, not an API operation: do not document it");
        assert!(!routed_operations().iter().any(|(_, p)| p == path), "{path} must stay out of earshot_api::routes()");
    }
}

/// `{name}` segments of a path template.
fn template_params(path: &str) -> BTreeSet<String> {
    path.split('/').filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}'))).map(str::to_string).collect()
}

fn path_params(params: Option<&Value>) -> BTreeSet<String> {
    params
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "path")
        .map(|p| {
            assert_eq!(p["required"], true, "path parameter {p} must be required");
            p["name"].as_str().expect("parameter name").to_string()
        })
        .collect()
}

#[test]
fn path_parameters_and_security_match_each_route() {
    let doc = doc();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["security"], json!([{"bearer": []}]), "bearer must be the default security requirement");
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    for route in earshot_api::routes() {
        let item = &doc["paths"][route.path];
        for method in route.methods() {
            let op = &item[method.to_ascii_lowercase()];
            let mut declared = path_params(item.get("parameters"));
            declared.extend(path_params(op.get("parameters")));
            assert_eq!(declared, template_params(route.path), "path parameters of {method} {}", route.path);
            let open = op.get("security").is_some_and(|s| s == &json!([]));
            assert_eq!(
                open, !route.authenticated,
                "{method} {}: `security: []` must be set exactly on unauthenticated routes",
                route.path
            );
            let responses =
                op["responses"].as_object().unwrap_or_else(|| panic!("{method} {} has no responses", route.path));
            assert!(
                responses.keys().any(|s| s.starts_with('2')),
                "{method} {} documents no success response",
                route.path
            );
            if route.authenticated {
                assert!(responses.contains_key("401"), "{method} {} must document 401", route.path);
            }
        }
    }
}

#[tokio::test]
async fn openapi_json_is_served_verbatim() {
    let on_disk = doc_on_disk();
    assert_eq!(OPENAPI_JSON, on_disk, "the compiled-in document differs from api/openapi.json; rebuild");
    let app = TestApp::new();
    let req = Request::builder().method("GET").uri("/openapi.json").body(Body::empty()).expect("request");
    let resp = app.router.clone().oneshot(req).await.expect("infallible router");
    assert_eq!(resp.status(), StatusCode::OK);
    let ctype = resp.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    assert!(ctype.starts_with("application/json"), "content type {ctype}");
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    let served: Value = serde_json::from_slice(&body).expect("served document is JSON");
    let file: Value = serde_json::from_str(&on_disk).expect("api/openapi.json is JSON");
    assert_eq!(served, file, "GET /openapi.json differs from api/openapi.json");
    assert_eq!(&body[..], on_disk.as_bytes(), "GET /openapi.json is not byte-identical to the file");
}

/// A concrete path for a template: `{store}` becomes `s`, every other parameter `x`.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|seg| match seg {
            "{store}" => "s",
            s if s.starts_with('{') => "x",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_documented_route_is_reachable() {
    let app = TestApp::new();
    let mut failures = Vec::new();
    for (method, path) in documented_operations(&doc()) {
        let uri = concrete(&path);
        let body = matches!(method.as_str(), "post" | "put" | "patch").then(|| json!({}));
        let (status, resp) = app.call(&method.to_uppercase(), &uri, body).await;
        let code = resp["error"]["code"].as_str().unwrap_or_default();
        if status == StatusCode::METHOD_NOT_ALLOWED || (status == StatusCode::NOT_FOUND && code == "route_not_found") {
            failures.push(format!("{} {uri} (documented as {path}) -> {status} {resp}", method.to_uppercase()));
        }
    }
    assert!(failures.is_empty(), "documented routes the router does not answer:\n  {}", failures.join("\n  "));
}

fn collect_refs<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    out.push((at.clone(), x.as_str().unwrap_or_else(|| panic!("non-string $ref at {at}"))));
                } else {
                    collect_refs(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                collect_refs(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_ref_resolves_and_every_schema_is_used() {
    let doc: Value = serde_json::from_str(&doc_on_disk()).expect("api/openapi.json is not valid JSON");
    let mut refs = Vec::new();
    collect_refs(&doc, String::new(), &mut refs);
    assert!(refs.len() > 50, "only {} $refs found; is the walk broken?", refs.len());
    let dangling: Vec<String> = refs
        .iter()
        .filter(|(_, r)| r.strip_prefix('#').is_none_or(|p| doc.pointer(p).is_none()))
        .map(|(at, r)| format!("{at}: {r}"))
        .collect();
    assert!(dangling.is_empty(), "$refs that do not resolve within the document:\n  {}", dangling.join("\n  "));
    let used: BTreeSet<&str> = refs.iter().filter_map(|(_, r)| r.strip_prefix("#/components/schemas/")).collect();
    let unused: Vec<&String> = doc["components"]["schemas"]
        .as_object()
        .expect("components/schemas")
        .keys()
        .filter(|k| !used.contains(k.as_str()))
        .collect();
    assert!(unused.is_empty(), "schemas nothing refers to: {unused:?}");
}

/// Every alternative of a `oneOf`/`anyOf` written inline (not a `$ref`) that a generator turns into
/// a type of its own: an object, or an enum of strings. `null` and single `const` alternatives
/// become no type (`None`, a literal).
fn collect_inline_alternatives<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(m) => {
            for key in ["oneOf", "anyOf"] {
                for (i, alt) in m.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
                    let makes_a_type = alt.get("$ref").is_none()
                        && (alt.get("type") == Some(&json!("object"))
                            || alt.get("properties").is_some()
                            || alt.get("enum").is_some());
                    if makes_a_type {
                        out.push((format!("{at}/{key}/{i}"), alt));
                    }
                }
            }
            for (k, x) in m {
                collect_inline_alternatives(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                collect_inline_alternatives(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The generated clients name a union's inline alternatives by their `title` (openapi-python-client
/// otherwise calls them `OriginType0`, `AuthorityType2`, …): each has one, unique, and no
/// component schema has the same name.
#[test]
fn inline_alternatives_have_titles_people_would_write() {
    let doc = doc();
    let mut alternatives = Vec::new();
    collect_inline_alternatives(&doc, String::new(), &mut alternatives);
    assert!(alternatives.len() >= 6, "only {} inline alternatives found; is the walk broken?", alternatives.len());
    let schemas = doc["components"]["schemas"].as_object().expect("components/schemas");
    let mut seen = BTreeMap::new();
    let mut problems = Vec::new();
    for (at, alt) in &alternatives {
        match alt.get("title").and_then(Value::as_str) {
            None => problems.push(format!("{at}: no `title` (a generated client would call it `…Type<N>`)")),
            Some(title) if schemas.contains_key(title) => {
                problems.push(format!("{at}: title {title:?} is also a component schema's name"))
            }
            Some(title) => {
                if let Some(first) = seen.insert(title.to_string(), at.clone()) {
                    problems.push(format!("{at}: title {title:?} already names {first}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "inline alternatives the generated clients cannot name:\n  {}", problems.join("\n  "));
}

// ---------------------------------------------------------------------------------------------
// Error codes.

/// One value of every `StoreError` variant (and both codes `InvalidId` can carry).
fn every_store_error() -> Vec<StoreError> {
    use StoreError as E;
    let s = || "x".to_string();
    vec![
        E::InvalidId { field: "id", value: s(), source: IdError::BadChar },
        E::InvalidId { field: "id", value: s(), source: IdError::Anonymous },
        E::InvalidInput { field: "f", message: s() },
        E::LimitExceeded { field: "f", limit: 1 },
        E::StoreNotFound(s()),
        E::StoreExists(s()),
        E::ParticipantNotFound(s()),
        E::ParticipantExists(s()),
        E::ParticipantOwnsItems(s()),
        E::AnonymousParticipant,
        E::InvalidIdempotencyKey,
        E::IdempotencyKeyReused(s()),
        E::ItemNotFound(s()),
        E::ItemExists(s()),
        E::SourceNotFound(s()),
        E::SourceOwnerMismatch { source_id: s(), source_owner: s(), owner: s() },
        E::OriginUnresolved,
        E::InvalidTransition(TransitionError { from: State::Deleted, action: Action::Freeze }),
        E::PartitionMixedAudiences { output: 0 },
        E::GrantNotFound(s()),
        E::GrantAlreadyRevoked(s()),
        E::SubjectNotFound(s()),
        E::NotASubject { grant: s(), subject: s() },
        E::InvalidToken,
        E::TokenStoreMismatch,
        E::RevisionExpired { requested: 1, oldest: 2 },
        E::ConsistencyTimeout { requested: 2, latest: 1 },
        E::AttemptNotFound(s()),
        E::AttemptCapacity,
        E::InvalidCursor,
        E::Integrity(s()),
        E::Storage(s()),
        E::Unavailable,
        E::SchemaInvalid(vec![]),
        E::SchemaNotFound,
        E::RelationInUse { relation: s(), edges: 1 },
        E::UnknownRelation(s()),
        E::RelationNotFound(s()),
        E::RelationExists(s()),
        E::NotGrantor { edge: s() },
        E::AlreadyRevoked(s()),
        E::DeviceNotFound(s()),
        E::DeviceExists(s()),
        E::NotDeviceOwner { issuer: s(), device: s() },
        E::NotCapabilityHolder { issuer: s(), capability: s() },
        E::NotRevoker { capability: s() },
        E::CapabilityNotFound(s()),
        E::CapabilityExists(s()),
        E::CapabilityNotWithinParent(vec![]),
        E::ParentNotValid { capability: s(), reason: "denied_revoked" },
        E::ParticipantIsDevice(s()),
        E::ParticipantOwnsDevices { participant: s(), devices: 1 },
        E::InvalidPath { field: "path", message: s() },
        E::InvalidCondition { message: s() },
        E::AttemptSealed(s()),
        E::SearchLagging { indexed: 1, needed: 2 },
        E::Search(s()),
        E::RevisionNotLatest { requested: 1, latest: 2 },
        E::InsufficientStorage { available: 1, required: 2 },
        E::StorageUnavailable(s()),
        // The same variant with the datastore's marker: its own code, `datastore_unavailable`.
        StoreError::datastore_unavailable(s()),
        E::WriteConflict(s()),
        E::ImportInvalid { line: 1, message: s() },
        E::AuthorNotFound(s()),
        E::TrustNotFound(s()),
        E::TrustSelf(s()),
        E::TokenIncarnationMismatch(s()),
        E::CursorIncarnationMismatch(s()),
        E::StoreReplaced(s()),
        E::WindowInThePast { field: "expires_at", ends_at: s(), now: s() },
        E::EmbeddingDimensionMismatch { field: "embedding", expected: 3, got: 2 },
        E::InvalidEmbedding { field: "embedding", message: s() },
    ]
}

/// Exhaustive on purpose: a new `StoreError` variant fails to compile here, and the test below
/// then fails until `every_store_error` lists it (and the document gains its code).
fn variant_index(e: &StoreError) -> usize {
    use StoreError as E;
    match e {
        E::InvalidId { .. } => 0,
        E::InvalidInput { .. } => 1,
        E::LimitExceeded { .. } => 2,
        E::StoreNotFound(_) => 3,
        E::StoreExists(_) => 4,
        E::ParticipantNotFound(_) => 5,
        E::ParticipantExists(_) => 6,
        E::ParticipantOwnsItems(_) => 7,
        E::AnonymousParticipant => 8,
        E::InvalidIdempotencyKey => 9,
        E::ItemNotFound(_) => 10,
        E::ItemExists(_) => 11,
        E::SourceNotFound(_) => 12,
        E::SourceOwnerMismatch { .. } => 13,
        E::OriginUnresolved => 14,
        E::InvalidTransition(_) => 15,
        E::PartitionMixedAudiences { .. } => 16,
        E::GrantNotFound(_) => 17,
        E::GrantAlreadyRevoked(_) => 18,
        E::InvalidToken => 19,
        E::TokenStoreMismatch => 20,
        E::RevisionExpired { .. } => 21,
        E::ConsistencyTimeout { .. } => 22,
        E::AttemptNotFound(_) => 23,
        E::AttemptCapacity => 24,
        E::InvalidCursor => 25,
        E::Integrity(_) => 26,
        E::Storage(_) => 27,
        E::Unavailable => 28,
        E::SchemaInvalid(_) => 29,
        E::SchemaNotFound => 30,
        E::RelationInUse { .. } => 31,
        E::UnknownRelation(_) => 32,
        E::RelationNotFound(_) => 33,
        E::RelationExists(_) => 34,
        E::NotGrantor { .. } => 35,
        E::AlreadyRevoked(_) => 36,
        E::DeviceNotFound(_) => 37,
        E::DeviceExists(_) => 38,
        E::NotDeviceOwner { .. } => 39,
        E::NotCapabilityHolder { .. } => 40,
        E::NotRevoker { .. } => 41,
        E::CapabilityNotFound(_) => 42,
        E::CapabilityExists(_) => 43,
        E::CapabilityNotWithinParent(_) => 44,
        E::ParentNotValid { .. } => 45,
        E::ParticipantIsDevice(_) => 46,
        E::InvalidPath { .. } => 47,
        E::InvalidCondition { .. } => 48,
        E::AttemptSealed(_) => 49,
        E::SearchLagging { .. } => 50,
        E::Search(_) => 51,
        E::RevisionNotLatest { .. } => 52,
        E::InsufficientStorage { .. } => 53,
        E::StorageUnavailable(_) => 54,
        E::WriteConflict(_) => 55,
        E::IdempotencyKeyReused(_) => 56,
        E::ImportInvalid { .. } => 57,
        E::SubjectNotFound(_) => 58,
        E::NotASubject { .. } => 59,
        E::AuthorNotFound(_) => 60,
        E::TrustNotFound(_) => 61,
        E::TrustSelf(_) => 62,
        E::TokenIncarnationMismatch(_) => 63,
        E::CursorIncarnationMismatch(_) => 64,
        E::StoreReplaced(_) => 65,
        E::WindowInThePast { .. } => 66,
        E::ParticipantOwnsDevices { .. } => 67,
        E::EmbeddingDimensionMismatch { .. } => 68,
        E::InvalidEmbedding { .. } => 69,
    }
}
const STORE_VARIANTS: usize = 70;

/// Codes the API layer creates itself (crates/earshot-api: error.rs, auth.rs, lib.rs, writes.rs,
/// server.rs, lists.rs), with their status. Each but `internal_error` (a panicked blocking task) and
/// `request_timeout` (added by the server around the router; triggered in `hostile.rs`) and
/// `body_timeout` (an import body that stalls; triggered in `export.rs`) is triggered over HTTP
/// in `api_error_codes_are_what_the_router_answers`.
const API_CODES: [(&str, u16); 13] = [
    ("unauthenticated", 401),
    ("forbidden", 403),
    ("route_not_found", 404),
    ("method_not_allowed", 405),
    ("unsupported_media_type", 415),
    ("body_too_large", 413),
    ("malformed_json", 400),
    ("invalid_request", 400),
    ("invalid_path", 400),
    ("internal_error", 500),
    ("request_timeout", 503),
    ("body_timeout", 408),
    ("confirmation_required", 400),
];

/// code -> statuses, as the code base produces them.
fn produced_codes() -> BTreeMap<String, BTreeSet<u16>> {
    let errors = every_store_error();
    let listed: BTreeSet<usize> = errors.iter().map(variant_index).collect();
    assert_eq!(listed, (0..STORE_VARIANTS).collect(), "every_store_error() misses a StoreError variant");
    let mut out: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    for e in errors {
        let a = ApiError::from(e);
        out.entry(a.code.to_string()).or_default().insert(a.status.as_u16());
    }
    for (code, status) in API_CODES {
        out.entry(code.to_string()).or_default().insert(status);
    }
    out
}

/// code -> statuses, as the document's root `x-error-codes` lists them.
fn documented_codes(doc: &Value) -> BTreeMap<String, BTreeSet<u16>> {
    doc["x-error-codes"]
        .as_object()
        .expect("the document has a root `x-error-codes` object")
        .iter()
        .map(|(code, v)| {
            let statuses = v["status"]
                .as_array()
                .unwrap_or_else(|| panic!("x-error-codes.{code}.status is not an array"))
                .iter()
                .map(|s| s.as_u64().and_then(|s| u16::try_from(s).ok()).expect("status is a number"))
                .collect();
            (code.clone(), statuses)
        })
        .collect()
}

#[test]
fn documented_error_codes_equal_the_produced_ones() {
    let doc = doc();
    let documented = documented_codes(&doc);
    let produced = produced_codes();
    let mut diff = Vec::new();
    for (code, statuses) in &produced {
        match documented.get(code) {
            None => diff.push(format!("produced but not documented: {code} {statuses:?}")),
            Some(d) if d != statuses => diff.push(format!("{code}: produced with {statuses:?}, documented with {d:?}")),
            Some(_) => {}
        }
    }
    for code in documented.keys().filter(|c| !produced.contains_key(*c)) {
        diff.push(format!("documented but never produced: {code}"));
    }
    assert!(diff.is_empty(), "x-error-codes in api/openapi.json disagrees with the code:\n  {}", diff.join("\n  "));

    let enumerated: BTreeSet<String> = doc["components"]["schemas"]["Error"]["properties"]["error"]["properties"]
        ["code"]["enum"]
        .as_array()
        .expect("Error.error.code has an enum")
        .iter()
        .map(|c| c.as_str().expect("code is a string").to_string())
        .collect();
    let keys: BTreeSet<String> = documented.keys().cloned().collect();
    assert_eq!(enumerated, keys, "the Error schema's code enum differs from x-error-codes");

    // Each operation's error responses name only codes that carry that status.
    let mut wrong = Vec::new();
    for (path, item) in paths(&doc) {
        for (method, op) in item.as_object().into_iter().flatten().filter(|(k, _)| HTTP_METHODS.contains(&k.as_str())) {
            for (status, resp) in op["responses"].as_object().into_iter().flatten() {
                // `/readyz` answers 503 with its own document when degraded, marked as such.
                let is_error = !status.starts_with('2') && resp.get("x-not-an-error").is_none();
                let codes = resp.get("x-error-codes").and_then(Value::as_array);
                if is_error && codes.is_none() {
                    wrong.push(format!("{method} {path} {status}: no x-error-codes"));
                }
                if is_error && resp["content"]["application/json"]["schema"]["$ref"] != "#/components/schemas/Error" {
                    wrong.push(format!("{method} {path} {status}: body is not the Error schema"));
                }
                for code in codes.into_iter().flatten().filter_map(Value::as_str) {
                    let ok = status.parse::<u16>().is_ok_and(|s| documented.get(code).is_some_and(|d| d.contains(&s)));
                    if !ok {
                        wrong.push(format!("{method} {path}: `{code}` listed under {status}"));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "operation error responses disagree with x-error-codes:\n  {}", wrong.join("\n  "));
}

fn raw(method: &str, uri: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(c) = content_type {
        b = b.header(header::CONTENT_TYPE, c);
    }
    b.body(body.into()).expect("request")
}

fn assert_code(what: &str, (status, body): (StatusCode, Value), want_status: u16, want_code: &str) {
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str().unwrap_or_default()),
        (want_status, want_code),
        "{what}: {body}"
    );
    let listed = produced_codes().get(want_code).is_some_and(|s| s.contains(&want_status));
    assert!(listed, "{what}: {want_code} {want_status} is not a listed code");
}

#[tokio::test]
async fn api_error_codes_are_what_the_router_answers() {
    let app = TestApp::new();
    assert_code("unknown route", app.call("GET", "/nope", None).await, 404, "route_not_found");
    assert_code("wrong method", app.call("DELETE", "/v1/stores", None).await, 405, "method_not_allowed");
    assert_code(
        "no content type",
        app.send(raw("POST", "/v1/stores", None, r#"{"id":"s"}"#)).await,
        415,
        "unsupported_media_type",
    );
    let big = format!(r#"{{"id":"{}"}}"#, "a".repeat(MAX_BODY_BYTES));
    assert_code(
        "huge body",
        app.send(raw("POST", "/v1/stores", Some("application/json"), big)).await,
        413,
        "body_too_large",
    );
    assert_code(
        "not JSON",
        app.send(raw("POST", "/v1/stores", Some("application/json"), "{")).await,
        400,
        "malformed_json",
    );
    assert_code(
        "unknown field",
        app.call("POST", "/v1/stores", Some(json!({"id": "s", "bogus": 1}))).await,
        400,
        "invalid_request",
    );
    assert_code("bad path", app.call("GET", "/v1/stores/%FF", None).await, 400, "invalid_path");
    assert_code("no store", app.call("GET", "/v1/stores/nope", None).await, 404, "store_not_found");
    assert_code("bad store id", app.call("POST", "/v1/stores", Some(json!({"id": "Bad!"}))).await, 400, "invalid_id");
    assert_code("unconfirmed delete", app.call("DELETE", "/v1/stores/nope", None).await, 400, "confirmation_required");
    assert_eq!(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await.0, StatusCode::CREATED);
    let other = Some(json!({"id": "s", "name": "another"}));
    assert_code("store twice", app.call("POST", "/v1/stores", other).await, 409, "store_exists");

    let token =
        |name: &str, scope| TokenConfig { name: name.into(), token: format!("{name}-secret"), scope, stores: None };
    let app = TestApp::with_tokens(vec![token("admin", Scope::Admin), token("reader", Scope::Reader)]);
    assert_code("no token", app.call("GET", "/v1/stores/s", None).await, 401, "unauthenticated");
    let create = app.call_with("POST", "/v1/stores", Some(json!({"id": "s"})), Some("reader-secret")).await;
    assert_code("reader writes", create, 403, "forbidden");
    let open = app.call("GET", "/healthz", None).await;
    assert_eq!(open.0, StatusCode::OK, "healthz is documented without security: {}", open.1);
}
