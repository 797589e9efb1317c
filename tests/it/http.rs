//! HTTP API tests, in process: bearer-token auth and scopes, stable error codes for bad input
//! (with no write leaking through), consistency tokens, attempts, bulk check and the admin views.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use earshot_api::{Scope, TokenConfig, MAX_BODY_BYTES};
use earshot_tests::TestApp;
use serde_json::{json, Value};

const ADMIN: &str = "admin-secret-0123456789";
const READER: &str = "reader-secret-0123456789";
const LIMITED: &str = "limited-secret-0123456789";

fn token(name: &str, secret: &str, scope: Scope, stores: Option<&[&str]>) -> TokenConfig {
    TokenConfig {
        name: name.to_string(),
        token: secret.to_string(),
        scope,
        stores: stores.map(|s| s.iter().map(|x| x.to_string()).collect()),
    }
}

/// The error code of an error body.
fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<no error code>")
}

/// Asserts status and error code, with the whole body in the message.
#[track_caller]
fn refused(got: &(StatusCode, Value), status: u16, expected_code: &str) {
    assert_eq!((got.0.as_u16(), code(&got.1)), (status, expected_code), "unexpected answer: {} {}", got.0, got.1);
}

#[track_caller]
fn ok(got: &(StatusCode, Value), status: u16) {
    assert_eq!(got.0.as_u16(), status, "unexpected answer: {} {}", got.0, got.1);
}

fn container(owner: &str, viewers: &[&str]) -> Value {
    json!({"owner": owner, "viewers": {"participants": viewers}})
}

/// Store `s` with participants owner, alice, bob, carol and items:
/// `shared` {owner, alice}, `private` {owner}, `pub1` public.
async fn setup(app: &TestApp, tok: Option<&str>) {
    ok(&app.call_with("POST", "/v1/stores", Some(json!({"id": "s"})), tok).await, 201);
    for p in ["owner", "alice", "bob", "carol"] {
        let r = app.call_with("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"})), tok).await;
        ok(&r, 201);
    }
    let items = [
        json!({"id": "shared", "owner": "owner", "content": "lunch plans", "origin": {"participants": ["alice"]}}),
        json!({"id": "private", "owner": "owner", "origin": "owner_private"}),
        json!({"id": "pub1", "owner": "owner", "origin": "public"}),
    ];
    for item in items {
        ok(&app.call_with("POST", "/v1/stores/s/items", Some(item), tok).await, 201);
    }
}

fn raw(method: &str, path: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(path);
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    b.body(body.into()).expect("request")
}

#[tokio::test]
async fn auth_requires_a_known_token_with_the_right_scope_and_store() {
    let app = TestApp::with_tokens(vec![
        token("root", ADMIN, Scope::Admin, None),
        token("viewer", READER, Scope::Reader, None),
        token("tenant-s", LIMITED, Scope::Admin, Some(&["s"])),
    ]);
    setup(&app, Some(ADMIN)).await;
    ok(&app.call_with("POST", "/v1/stores", Some(json!({"id": "t"})), Some(ADMIN)).await, 201);
    let rev = app.revision("s");
    let new_part = || Some(json!({"id": "dave", "kind": "person"}));

    // No token, a wrong token, a non-bearer scheme: 401.
    refused(&app.call_with("POST", "/v1/stores/s/participants", new_part(), None).await, 401, "unauthenticated");
    refused(&app.call_with("GET", "/v1/stores/s", None, None).await, 401, "unauthenticated");
    refused(
        &app.call_with("POST", "/v1/stores/s/participants", new_part(), Some("nope")).await,
        401,
        "unauthenticated",
    );
    refused(&app.call_with("GET", "/v1/stores/s", None, Some(&format!("{ADMIN}x"))).await, 401, "unauthenticated");
    let basic = Request::builder()
        .method("GET")
        .uri("/v1/stores/s")
        .header("authorization", format!("Basic {ADMIN}"))
        .body(Body::empty())
        .expect("request");
    refused(&app.send(basic).await, 401, "unauthenticated");
    // The scheme name is case-insensitive.
    let lower = Request::builder()
        .method("GET")
        .uri("/v1/stores/s")
        .header("authorization", format!("bearer {READER}"))
        .body(Body::empty())
        .expect("request");
    ok(&app.send(lower).await, 200);
    refused(&app.call_with("GET", "/metrics", None, None).await, 401, "unauthenticated");

    // A reader may read, not write; nor see the admin views.
    refused(&app.call_with("POST", "/v1/stores/s/participants", new_part(), Some(READER)).await, 403, "forbidden");
    refused(&app.call_with("POST", "/v1/stores", Some(json!({"id": "u"})), Some(READER)).await, 403, "forbidden");
    refused(&app.call_with("GET", "/v1/stores/s/items/shared", None, Some(READER)).await, 403, "forbidden");
    refused(&app.call_with("GET", "/v1/stores/s/items/shared/audiences", None, Some(READER)).await, 403, "forbidden");
    refused(
        &app.call_with("POST", "/v1/stores/s/items/shared/lifecycle", Some(json!({"action": "revoke"})), Some(READER))
            .await,
        403,
        "forbidden",
    );
    ok(&app.call_with("GET", "/v1/stores/s", None, Some(READER)).await, 200);
    let check = json!({"item": "shared", "container": container("owner", &["alice"])});
    let r = app.call_with("POST", "/v1/stores/s/check", Some(check.clone()), Some(READER)).await;
    ok(&r, 200);
    assert_eq!(r.1["admitted"], true, "{}", r.1);

    // A store-limited token works on its store only, and cannot create stores.
    refused(&app.call_with("POST", "/v1/stores/t/participants", new_part(), Some(LIMITED)).await, 403, "forbidden");
    refused(&app.call_with("GET", "/v1/stores/t", None, Some(LIMITED)).await, 403, "forbidden");
    refused(&app.call_with("POST", "/v1/stores/t/check", Some(check.clone()), Some(LIMITED)).await, 403, "forbidden");
    refused(&app.call_with("POST", "/v1/stores", Some(json!({"id": "u"})), Some(LIMITED)).await, 403, "forbidden");
    assert_eq!(app.revision("s"), rev, "refused requests must not write");
    assert_eq!(app.revision("t"), 1, "refused requests must not write");
    assert_eq!(app.earshot.store_ids(), vec!["s".to_string(), "t".to_string()]);
    ok(&app.call_with("GET", "/v1/stores/s", None, Some(LIMITED)).await, 200);
    ok(&app.call_with("POST", "/v1/stores/s/check", Some(check), Some(LIMITED)).await, 200);

    // An admin token writes, and the grant records the token's name as its issuer.
    let r = app.call_with("POST", "/v1/stores/s/participants", new_part(), Some(LIMITED)).await;
    ok(&r, 201);
    assert_eq!(app.revision("s"), rev + 1);
    let r = app
        .call_with("POST", "/v1/stores/s/items/private/grants", Some(json!({"members": ["bob"]})), Some(ADMIN))
        .await;
    ok(&r, 201);
    let view = app.call_with("GET", "/v1/stores/s/items/private", None, Some(ADMIN)).await;
    ok(&view, 200);
    assert_eq!(view.1["grants"][0]["issuer"], "root", "{}", view.1);

    // Metrics only list the stores a token may see.
    let (status, _) = app.call_with("GET", "/metrics", None, Some(LIMITED)).await;
    assert_eq!(status, StatusCode::OK);

    // Health, readiness and the OpenAPI document need no token.
    for path in ["/healthz", "/readyz", "/openapi.json"] {
        let (status, body) = app.call_with("GET", path, None, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert!(body.is_object(), "{path} answers JSON: {body}");
    }
    assert_eq!(app.call("GET", "/readyz", None).await.1["stores"], 2);
}

#[tokio::test]
async fn bad_input_is_refused_with_a_stable_code_and_writes_nothing() {
    let app = TestApp::new();
    setup(&app, None).await;
    let rev = app.revision("s");
    let long_id = "a".repeat(129);

    let cases: Vec<(&str, String, Option<Value>, u16, &str)> = vec![
        // Decoding.
        (
            "POST",
            "/v1/stores/s/participants".into(),
            Some(json!({"id": "dave", "kind": "person", "bogus": 1})),
            400,
            "invalid_request",
        ),
        ("POST", "/v1/stores/s/participants".into(), Some(json!({"id": 7, "kind": "person"})), 400, "invalid_request"),
        (
            "POST",
            "/v1/stores/s/participants".into(),
            Some(json!({"id": "dave", "kind": "robot"})),
            400,
            "invalid_request",
        ),
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"owner": "owner", "origin": "everyone"})),
            400,
            "invalid_request",
        ),
        ("POST", "/v1/stores/s/items".into(), Some(json!({"owner": "owner"})), 400, "invalid_request"),
        ("POST", "/v1/stores/s/check".into(), Some(json!({"item": "shared"})), 400, "invalid_request"),
        // Identifiers.
        ("POST", "/v1/stores/s/participants".into(), Some(json!({"id": long_id, "kind": "person"})), 400, "invalid_id"),
        ("POST", "/v1/stores/s/participants".into(), Some(json!({"id": "Dave", "kind": "person"})), 400, "invalid_id"),
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"id": long_id, "owner": "owner", "origin": "public"})),
            400,
            "invalid_id",
        ),
        ("POST", "/v1/stores".into(), Some(json!({"id": long_id})), 400, "invalid_id"),
        // The same id with another body (the same body is a retry: tests/it/idempotency.rs).
        ("POST", "/v1/stores".into(), Some(json!({"id": "s", "name": "other"})), 409, "store_exists"),
        // Unknown things.
        ("GET", "/v1/stores/s/items/nope".into(), None, 404, "item_not_found"),
        ("GET", "/v1/stores/s/items/nope/audiences".into(), None, 404, "item_not_found"),
        ("POST", "/v1/stores/s/items/nope/lifecycle".into(), Some(json!({"action": "revoke"})), 404, "item_not_found"),
        ("POST", "/v1/stores/s/items/nope/grants".into(), Some(json!({"members": ["bob"]})), 404, "item_not_found"),
        (
            "POST",
            "/v1/stores/s/check".into(),
            Some(json!({"item": "nope", "container": container("owner", &[])})),
            404,
            "item_not_found",
        ),
        ("GET", format!("/v1/stores/s/items/{long_id}"), None, 400, "invalid_path"),
        ("GET", "/v1/stores/nope".into(), None, 404, "store_not_found"),
        (
            "POST",
            "/v1/stores/nope/participants".into(),
            Some(json!({"id": "dave", "kind": "person"})),
            404,
            "store_not_found",
        ),
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"owner": "nobody", "origin": "public"})),
            404,
            "participant_not_found",
        ),
        ("DELETE", "/v1/stores/s/participants/nobody".into(), None, 404, "participant_not_found"),
        (
            "POST",
            "/v1/stores/s/identities".into(),
            Some(json!({"transport": "email", "identifier": "x@y", "participant": "nobody"})),
            404,
            "participant_not_found",
        ),
        ("DELETE", "/v1/stores/s/grants/nope".into(), None, 404, "grant_not_found"),
        // Conflicts.
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"id": "shared", "owner": "owner", "origin": "public"})),
            409,
            "item_exists",
        ),
        (
            "POST",
            "/v1/stores/s/participants".into(),
            Some(json!({"id": "alice", "kind": "agent"})),
            409,
            "participant_exists",
        ),
        ("DELETE", "/v1/stores/s/participants/owner".into(), None, 409, "participant_owns_items"),
        // Grants: unknown or anonymous members.
        (
            "POST",
            "/v1/stores/s/items/shared/grants".into(),
            Some(json!({"members": ["nobody"]})),
            404,
            "participant_not_found",
        ),
        (
            "POST",
            "/v1/stores/s/items/shared/grants".into(),
            Some(json!({"members": ["anonymous"]})),
            422,
            "anonymous_participant",
        ),
        (
            "POST",
            "/v1/stores/s/items/shared/grants".into(),
            Some(json!({"members": ["*"]})),
            422,
            "anonymous_participant",
        ),
        (
            "POST",
            "/v1/stores/s/items/shared/grants".into(),
            Some(json!({"members": ["bob", "⊥"]})),
            422,
            "anonymous_participant",
        ),
        ("POST", "/v1/stores/s/items/shared/grants".into(), Some(json!({"members": []})), 400, "invalid_request"),
        (
            "POST",
            "/v1/stores/s/items/shared/grants".into(),
            Some(json!({"members": ["bob"], "expires_at": "tomorrow"})),
            400,
            "invalid_request",
        ),
        // Origins and derivations.
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"owner": "owner", "origin": {"participants": ["stranger"]}})),
            422,
            "origin_unresolved",
        ),
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"owner": "owner", "origin": {"participants": ["alice"], "quality": "stale"}})),
            422,
            "origin_unresolved",
        ),
        (
            "POST",
            "/v1/stores/s/derivations".into(),
            Some(json!({"disposition": "intersection", "owner": "owner", "sources": ["shared", "missing"]})),
            404,
            "source_not_found",
        ),
        (
            "POST",
            "/v1/stores/s/derivations".into(),
            Some(json!({"disposition": "intersection", "owner": "owner", "sources": []})),
            400,
            "invalid_request",
        ),
        (
            "POST",
            "/v1/stores/s/items/shared/lifecycle".into(),
            Some(json!({"action": "release"})),
            409,
            "invalid_transition",
        ),
        // Limits.
        (
            "POST",
            "/v1/stores/s/items".into(),
            Some(json!({"owner": "owner", "origin": {"participants": many_viewers()}})),
            400,
            "limit_exceeded",
        ),
        (
            "POST",
            "/v1/stores/s/check".into(),
            Some(
                json!({"item": "shared", "container": {"owner": "owner", "viewers": {"participants": many_viewers()}}}),
            ),
            400,
            "limit_exceeded",
        ),
        (
            "POST",
            "/v1/stores/s/lookup".into(),
            Some(json!({"container": container("owner", &[]), "limit": 0})),
            400,
            "invalid_request",
        ),
        (
            "POST",
            "/v1/stores/s/check/bulk".into(),
            Some(json!({"items": vec!["x"; 1001], "container": container("owner", &[])})),
            400,
            "limit_exceeded",
        ),
        // Cursors and routes.
        (
            "POST",
            "/v1/stores/s/lookup".into(),
            Some(json!({"container": container("owner", &[]), "cursor": "garbage"})),
            400,
            "invalid_cursor",
        ),
        (
            "POST",
            "/v1/stores/s/lookup".into(),
            Some(json!({"container": container("owner", &[]), "cursor": "c-1"})),
            400,
            "invalid_cursor",
        ),
        ("GET", "/v1/nothing/here".into(), None, 404, "route_not_found"),
        ("PUT", "/v1/stores/s/items".into(), None, 405, "method_not_allowed"),
        ("DELETE", "/v1/stores/s/items/shared".into(), None, 405, "method_not_allowed"),
        ("PUT", "/v1/stores".into(), Some(json!({"id": "x"})), 405, "method_not_allowed"),
    ];
    for (method, path, body, status, expected) in cases {
        let got = app.call(method, &path, body.clone()).await;
        assert_eq!(
            (got.0.as_u16(), code(&got.1)),
            (status, expected),
            "{method} {path} {body:?} answered {} {}",
            got.0,
            got.1
        );
        assert!(got.1["error"]["message"].is_string(), "{method} {path}: error without a message: {}", got.1);
        assert_eq!(app.revision("s"), rev, "{method} {path} was refused but changed the revision");
    }

    // Bodies the JSON extractor refuses before any handler logic.
    let p = "/v1/stores/s/participants";
    refused(&app.send(raw("POST", p, Some("application/json"), "{\"id\": ")).await, 400, "malformed_json");
    refused(&app.send(raw("POST", p, Some("application/json"), "")).await, 400, "malformed_json");
    refused(&app.send(raw("POST", p, Some("application/json"), "{\"id\": \"dave\",}")).await, 400, "malformed_json");
    refused(&app.send(raw("POST", p, None, r#"{"id":"dave","kind":"person"}"#)).await, 415, "unsupported_media_type");
    refused(
        &app.send(raw("POST", p, Some("text/plain"), r#"{"id":"dave","kind":"person"}"#)).await,
        415,
        "unsupported_media_type",
    );
    let huge = json!({"owner": "owner", "origin": "public", "content": "x".repeat(MAX_BODY_BYTES + 1)}).to_string();
    refused(
        &app.send(raw("POST", "/v1/stores/s/items", Some("application/json"), huge.clone())).await,
        413,
        "body_too_large",
    );
    let with_length = Request::builder()
        .method("POST")
        .uri("/v1/stores/s/items")
        .header("content-type", "application/json")
        .header("content-length", huge.len())
        .body(Body::from(huge))
        .expect("request");
    refused(&app.send(with_length).await, 413, "body_too_large");
    // Under the body limit but over the content limit: a store limit, not a transport one.
    let big = json!({"owner": "owner", "origin": "public", "content": "x".repeat(100 * 1024)});
    refused(&app.call("POST", "/v1/stores/s/items", Some(big)).await, 400, "limit_exceeded");
    assert_eq!(app.revision("s"), rev, "refused bodies must not write");

    // The reads read their bodies themselves (`JsonBody`, bounded without axum's limit
    // wrapper): the same bodies are refused there with the same codes.
    let check = "/v1/stores/s/check";
    let good = json!({"item": "shared", "container": container("owner", &[])}).to_string();
    refused(&app.send(raw("POST", check, Some("application/json"), "{\"item\": ")).await, 400, "malformed_json");
    refused(&app.send(raw("POST", check, Some("application/json"), "")).await, 400, "malformed_json");
    refused(&app.send(raw("POST", check, None, good.clone())).await, 415, "unsupported_media_type");
    refused(&app.send(raw("POST", check, Some("text/plain"), good.clone())).await, 415, "unsupported_media_type");
    let unknown = json!({"item": "shared", "container": container("owner", &[]), "extra": 1}).to_string();
    refused(&app.send(raw("POST", check, Some("application/json"), unknown)).await, 400, "invalid_request");
    let huge_check = json!({"item": "shared", "container": container("owner", &[]), "pad": "x".repeat(MAX_BODY_BYTES)});
    let huge_check = huge_check.to_string();
    refused(&app.send(raw("POST", check, Some("application/json"), huge_check.clone())).await, 413, "body_too_large");
    let declared = Request::builder()
        .method("POST")
        .uri(check)
        .header("content-type", "application/json")
        .header("content-length", huge_check.len())
        .body(Body::from(huge_check))
        .expect("request");
    refused(&app.send(declared).await, 413, "body_too_large");
    // A check whose body arrives in frames of `frame` bytes, with no declared length.
    let in_frames = |body: &str, frame: usize| {
        let chunks: Vec<Result<axum::body::Bytes, std::io::Error>> =
            body.as_bytes().chunks(frame).map(|c| Ok(axum::body::Bytes::copy_from_slice(c))).collect();
        Request::builder()
            .method("POST")
            .uri(check)
            .header("content-type", "application/json")
            .body(Body::from_stream(futures_util::stream::iter(chunks)))
            .expect("request")
    };
    // A body in many frames, just under the limit in all, is read whole (then refused for its
    // unknown field, which it can only be once all of it has been read).
    let mut framed = json!({"item": "shared", "container": container("owner", &[]), "pad": ""}).to_string();
    framed.insert_str(framed.len() - 2, &"y".repeat(MAX_BODY_BYTES - framed.len()));
    assert_eq!(framed.len(), MAX_BODY_BYTES);
    refused(&app.send(in_frames(&framed, 4096)).await, 400, "invalid_request");
    // One byte more: refused as it arrives.
    framed.insert(framed.len() - 2, 'y');
    refused(&app.send(in_frames(&framed, 4096)).await, 413, "body_too_large");
    let streamed = in_frames(&good, 7);
    let answer = app.send(streamed).await;
    assert_eq!(answer.0, StatusCode::OK, "a body in frames: {}", answer.1);
    assert_eq!(answer.1["item"], "shared", "{}", answer.1);

    // Paths that do not decode.
    let r = app.send(raw("GET", "/v1/stores/s/items/%FF%FE", None, Body::empty())).await;
    assert!(r.0.is_client_error(), "undecodable path: {} {}", r.0, r.1);

    // A rejected write leaves nothing behind: the same request, corrected, succeeds.
    ok(
        &app.call("POST", "/v1/stores/s/items", Some(json!({"id": "later", "owner": "owner", "origin": "public"})))
            .await,
        201,
    );
    assert_eq!(app.revision("s"), rev + 1);
}

fn many_viewers() -> Vec<String> {
    (0..257).map(|i| format!("v{i}")).collect()
}

#[tokio::test]
async fn no_client_mistake_yields_a_server_error() {
    let app = TestApp::new();
    setup(&app, None).await;
    let rev = app.revision("s");
    let paths = [
        "/v1/stores",
        "/v1/stores/s",
        "/v1/stores/s/participants",
        "/v1/stores/s/participants/nobody",
        "/v1/stores/s/identities",
        "/v1/stores/s/items",
        "/v1/stores/s/items/shared",
        "/v1/stores/s/items/shared/lifecycle",
        "/v1/stores/s/items/shared/grants",
        "/v1/stores/s/items/shared/audiences",
        "/v1/stores/s/derivations",
        "/v1/stores/s/grants/g1",
        "/v1/stores/s/check",
        "/v1/stores/s/check/bulk",
        "/v1/stores/s/lookup",
        "/v1/stores/s/attempts",
        "/v1/stores/s/attempts/a1",
        "/v1/stores/S/items",
        "/v1/stores/%20/items",
        "/v1/stores/s/items/a%2Fb/grants",
        "/healthz",
        "/metrics",
    ];
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    let long =
        format!("{{\"id\": \"{}\", \"owner\": \"{0}\", \"item\": \"{0}\", \"origin\": \"public\"}}", "a".repeat(5000));
    let bodies: Vec<Option<&str>> = vec![
        None,
        Some(&deep),
        Some(&long),
        Some("{\"id\": 1e400}"),
        Some("{\"limit\": 18446744073709551616, \"container\": {\"owner\": \"owner\"}}"),
        Some("{\"limit\": -1, \"container\": {\"owner\": \"owner\"}}"),
        Some("{\"id\": \"\\ud800\"}"),
        Some(""),
        Some("null"),
        Some("[]"),
        Some("{}"),
        Some("\"x\""),
        Some("{\"id\": null}"),
        Some("{\"item\": 1, \"container\": []}"),
        Some("{\"container\": {\"owner\": \"owner\", \"viewers\": {\"identities\": [{\"transport\": 1}]}}}"),
        Some("{\"consistency\": {\"at_least\": 5}}"),
        Some("{\"consistency\": \"latest\", \"item\": \"shared\", \"container\": {\"owner\": \"\"}}"),
        Some("{\"members\": [\"\"], \"disposition\": \"partition\", \"owner\": \"owner\", \"sources\": [\"shared\", \"shared\"]}"),
        Some("\u{0}\u{1}"),
    ];
    for path in paths {
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            for body in &bodies {
                let req = match body {
                    Some(b) => raw(method, path, Some("application/json"), b.to_string()),
                    None => raw(method, path, None, Body::empty()),
                };
                let (status, v) = app.send(req).await;
                assert!(!status.is_server_error(), "{method} {path} {body:?} answered {status} {v}");
                if status.is_client_error() {
                    assert!(v["error"]["code"].is_string(), "{method} {path} {body:?}: {status} without a code: {v}");
                }
            }
        }
    }
    assert_eq!(app.revision("s"), rev, "none of these requests is a valid write");
}

/// Replaces the revision part of a token (`<revision>.<tag>`).
fn with_revision(token: &str, revision: u64) -> String {
    let (_, tag) = token.split_once('.').expect("token has a tag");
    format!("{revision}.{tag}")
}

#[tokio::test]
async fn consistency_tokens_pick_the_snapshot() {
    let app = TestApp::new();
    setup(&app, None).await;
    ok(&app.call("POST", "/v1/stores", Some(json!({"id": "t"}))).await, 201);
    let alice = container("owner", &["alice"]);

    let w1 = app
        .call(
            "POST",
            "/v1/stores/s/items",
            Some(json!({"id": "x", "owner": "owner", "origin": {"participants": ["alice"]}})),
        )
        .await;
    ok(&w1, 201);
    let t1 = w1.1["token"].as_str().expect("write token").to_string();
    let r1 = w1.1["revision"].as_u64().expect("write revision");
    assert_eq!(r1, app.revision("s"));

    // at_least: reads at (or after) the write's revision and sees it.
    let c = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_least": t1}})),
        )
        .await;
    ok(&c, 200);
    assert_eq!(c.1["admitted"], true, "{}", c.1);
    assert_eq!(c.1["reason"], "admitted_origin");
    assert!(c.1["revision"].as_u64().expect("revision") >= r1);

    // A later write revokes x.
    let w2 = app.call("POST", "/v1/stores/s/items/x/lifecycle", Some(json!({"action": "revoke"}))).await;
    ok(&w2, 200);
    let t2 = w2.1["token"].as_str().expect("write token").to_string();
    let r2 = w2.1["revision"].as_u64().expect("write revision");
    assert_eq!(r2, r1 + 1);

    // at_exact the older token shows the older decision, as history only (SPEC §2.6: never a
    // usable admission, so the revocation is not undone by quoting t1); at_exact the newer
    // shows the newer.
    let old = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_exact": t1}})),
        )
        .await;
    ok(&old, 200);
    assert_eq!((old.1["admitted"].clone(), old.1["revision"].as_u64()), (json!(false), Some(r1)), "{}", old.1);
    assert_eq!(old.1["reason"], "denied_historical_revision", "{}", old.1);
    assert_eq!(old.1["historical"]["admitted"], true, "{}", old.1);
    assert_eq!(old.1["historical"]["reason"], "admitted_origin", "{}", old.1);
    assert_eq!(old.1["latest_revision"].as_u64(), Some(r2), "{}", old.1);
    assert_eq!(old.1["token"], t1.as_str());
    let new = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_exact": t2}})),
        )
        .await;
    ok(&new, 200);
    assert_eq!((new.1["admitted"].clone(), new.1["revision"].as_u64()), (json!(false), Some(r2)), "{}", new.1);
    assert_eq!(new.1["reason"], "denied_not_current");
    assert!(new.1.get("historical").is_none() && new.1.get("latest_revision").is_none(), "{}", new.1);
    // at_least the older token reads the latest, which is newer.
    let least = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_least": t1}})),
        )
        .await;
    ok(&least, 200);
    assert_eq!(least.1["admitted"], false, "{}", least.1);
    assert_eq!(least.1["revision"].as_u64(), Some(r2));
    // Latest (no consistency) and the lookup agree.
    let latest = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "x", "container": alice}))).await;
    assert_eq!(latest.1["admitted"], false, "{}", latest.1);
    let old_lookup = app
        .call("POST", "/v1/stores/s/lookup", Some(json!({"container": alice, "consistency": {"at_exact": t1}})))
        .await;
    ok(&old_lookup, 200);
    let items = old_lookup.1["items"].as_array().expect("items");
    let ids: Vec<&str> = items.iter().filter_map(|i| i["item"].as_str()).collect();
    assert_eq!(ids, ["shared", "pub1", "x"], "{}", old_lookup.1);
    assert!(items.iter().all(|i| i["admitted"] == false && i["historical"]["admitted"] == true), "{}", old_lookup.1);
    assert_eq!(old_lookup.1["revision"].as_u64(), Some(r1));

    // A token one revision ahead waits (boundedly) for the write that makes that revision.
    let ahead = with_revision(&t2, r2 + 1);
    let read = app.call(
        "POST",
        "/v1/stores/s/check",
        Some(json!({"item": "x", "container": alice, "consistency": {"at_exact": ahead}})),
    );
    let write = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        app.call("POST", "/v1/stores/s/items", Some(json!({"id": "z", "owner": "owner", "origin": "public"}))).await
    };
    let (read, write) = tokio::join!(read, write);
    ok(&write, 201);
    ok(&read, 200);
    assert_eq!(read.1["revision"].as_u64(), Some(r2 + 1), "{}", read.1);
    assert_eq!(write.1["revision"].as_u64(), Some(r2 + 1), "{}", write.1);

    // A token of another store, garbage, and tokens of the wrong type.
    let other = app.call("GET", "/v1/stores/t", None).await.1["token"].as_str().expect("token").to_string();
    for consistency in [json!({"at_least": other}), json!({"at_exact": other})] {
        let r = app
            .call(
                "POST",
                "/v1/stores/s/check",
                Some(json!({"item": "x", "container": alice, "consistency": consistency})),
            )
            .await;
        refused(&r, 400, "consistency_token_store_mismatch");
    }
    for bad in ["garbage", "", "12", "x.0011223344556677", "-1.0011223344556677", &"9".repeat(100)] {
        let r = app
            .call("POST", "/v1/stores/s/lookup", Some(json!({"container": alice, "consistency": {"at_least": bad}})))
            .await;
        refused(&r, 400, "invalid_consistency_token");
    }
    let r = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"sometime": t1}})),
        )
        .await;
    refused(&r, 400, "invalid_request");

    // Past the retention window, an exact read of an old revision is gone (410), not wrong.
    app.clock.set(earshot_tests::T0_MS + 3_600_000);
    ok(
        &app.call("POST", "/v1/stores/s/items", Some(json!({"id": "y", "owner": "owner", "origin": "public"}))).await,
        201,
    );
    let gone = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_exact": t1}})),
        )
        .await;
    refused(&gone, 410, "revision_expired");

    // A revision far in the future is not waited for forever (one bounded 2 s wait).
    let future = with_revision(&t2, r2 + 1_000_000);
    let started = std::time::Instant::now();
    let r = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_least": future}})),
        )
        .await;
    refused(&r, 503, "consistency_timeout");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "the wait is bounded");
    assert_eq!(r.1["error"]["details"]["requested"].as_u64(), Some(r2 + 1_000_000), "{}", r.1);
}

#[tokio::test]
async fn attempts_pin_their_snapshot() {
    let app = TestApp::new();
    setup(&app, None).await;
    // A grant lets bob see the private item.
    let g = app
        .call("POST", "/v1/stores/s/items/private/grants", Some(json!({"members": ["bob"], "reason": "asked"})))
        .await;
    ok(&g, 201);
    let grant = g.1["ids"][0].as_str().expect("grant id").to_string();

    let a = app.call("POST", "/v1/stores/s/attempts", Some(json!({"container": container("owner", &["alice"])}))).await;
    ok(&a, 201);
    let attempt = a.1["attempt"].as_str().expect("attempt id").to_string();
    let pinned = a.1["revision"].as_u64().expect("revision");
    assert_eq!(a.1["resolved"], true);
    let b = app.call("POST", "/v1/stores/s/attempts", Some(json!({"container": container("owner", &["bob"])}))).await;
    ok(&b, 201);
    let bob_attempt = b.1["attempt"].as_str().expect("attempt id").to_string();

    // Later writes: revoke the shared item, revoke bob's grant.
    ok(&app.call("POST", "/v1/stores/s/items/shared/lifecycle", Some(json!({"action": "revoke"}))).await, 200);
    ok(&app.call("DELETE", &format!("/v1/stores/s/grants/{grant}"), None).await, 200);
    assert_eq!(app.revision("s"), pinned + 2);

    // Under the attempt: the pinned snapshot.
    let under = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "shared", "attempt": attempt}))).await;
    ok(&under, 200);
    assert_eq!((under.1["admitted"].clone(), under.1["revision"].as_u64()), (json!(true), Some(pinned)), "{}", under.1);
    let under_bob =
        app.call("POST", "/v1/stores/s/check", Some(json!({"item": "private", "attempt": bob_attempt}))).await;
    assert_eq!(under_bob.1["admitted"], true, "{}", under_bob.1);
    assert_eq!(under_bob.1["reason"], "admitted_grant");
    assert_eq!(under_bob.1["grant"], grant.as_str());
    let looked = app.call("POST", "/v1/stores/s/lookup", Some(json!({"attempt": attempt}))).await;
    ok(&looked, 200);
    let ids: Vec<&str> =
        looked.1["items"].as_array().expect("items").iter().filter_map(|i| i["item"].as_str()).collect();
    assert_eq!(ids, ["shared", "pub1"], "{}", looked.1);
    let bulk = app
        .call("POST", "/v1/stores/s/check/bulk", Some(json!({"items": ["shared", "private"], "attempt": attempt})))
        .await;
    ok(&bulk, 200);
    assert_eq!(bulk.1["results"][0]["admitted"], true, "{}", bulk.1);
    assert_eq!(bulk.1["revision"].as_u64(), Some(pinned));

    // Latest: the later writes govern.
    let latest = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "shared", "container": container("owner", &["alice"])})),
        )
        .await;
    assert_eq!(latest.1["admitted"], false, "{}", latest.1);
    assert_eq!(latest.1["reason"], "denied_not_current");
    let latest_bob = app
        .call("POST", "/v1/stores/s/check", Some(json!({"item": "private", "container": container("owner", &["bob"])})))
        .await;
    assert_eq!(latest_bob.1["admitted"], false, "{}", latest_bob.1);
    assert_eq!(latest_bob.1["reason"], "denied_not_in_audience");

    // The attempt reads back.
    let got = app.call("GET", &format!("/v1/stores/s/attempts/{attempt}"), None).await;
    ok(&got, 200);
    assert_eq!(got.1["revision"].as_u64(), Some(pinned));
    assert_eq!(got.1["container"]["owner"], "owner");

    // Unknown attempts, and naming both an attempt and a container (or consistency).
    refused(&app.call("GET", "/v1/stores/s/attempts/nope", None).await, 404, "attempt_not_found");
    refused(
        &app.call("POST", "/v1/stores/s/check", Some(json!({"item": "shared", "attempt": "nope"}))).await,
        404,
        "attempt_not_found",
    );
    refused(&app.call("POST", "/v1/stores/s/lookup", Some(json!({"attempt": "nope"}))).await, 404, "attempt_not_found");
    let both = json!({"item": "shared", "attempt": attempt, "container": container("owner", &["alice"])});
    refused(&app.call("POST", "/v1/stores/s/check", Some(both)).await, 400, "invalid_request");
    let tok = app.call("GET", "/v1/stores/s", None).await.1["token"].clone();
    let both = json!({"item": "shared", "attempt": attempt, "consistency": {"at_least": tok}});
    refused(&app.call("POST", "/v1/stores/s/check", Some(both)).await, 400, "invalid_request");
    let both = json!({"attempt": attempt, "container": container("owner", &[])});
    refused(&app.call("POST", "/v1/stores/s/lookup", Some(both)).await, 400, "invalid_request");
    // An attempt of another store is not found in this one.
    ok(&app.call("POST", "/v1/stores", Some(json!({"id": "t"}))).await, 201);
    refused(&app.call("GET", &format!("/v1/stores/t/attempts/{attempt}"), None).await, 404, "attempt_not_found");

    // An attempt is where memory is used, so it pins only the newest state (SPEC §2.6): an
    // older token is refused, the newest one (or `at_least` an older one) is accepted.
    let at_pinned = a.1["token"].clone();
    let c = app
        .call(
            "POST",
            "/v1/stores/s/attempts",
            Some(json!({"container": container("owner", &["alice"]), "consistency": {"at_exact": at_pinned}})),
        )
        .await;
    refused(&c, 409, "revision_not_latest");
    assert_eq!(c.1["error"]["details"]["requested"].as_u64(), Some(pinned), "{}", c.1);
    let newest = app.call("GET", "/v1/stores/s", None).await.1["token"].clone();
    for consistency in [json!({"at_exact": newest}), json!({"at_least": at_pinned})] {
        let c = app
            .call(
                "POST",
                "/v1/stores/s/attempts",
                Some(json!({"container": container("owner", &["alice"]), "consistency": consistency})),
            )
            .await;
        ok(&c, 201);
        assert!(c.1["revision"].as_u64() > Some(pinned), "{}", c.1);
    }
    // An attempt over unresolved viewers is allowed and reports it.
    let u =
        app.call("POST", "/v1/stores/s/attempts", Some(json!({"container": container("owner", &["stranger"])}))).await;
    ok(&u, 201);
    assert_eq!(u.1["resolved"], false);

    // An attempt also pins the time: a grant that expires later still counts under it.
    let g = app
        .call(
            "POST",
            "/v1/stores/s/items/private/grants",
            Some(json!({"members": ["carol"], "expires_at": "2026-01-01T01:00:00Z"})),
        )
        .await;
    ok(&g, 201);
    let carol = container("owner", &["carol"]);
    let a = app.call("POST", "/v1/stores/s/attempts", Some(json!({"container": carol}))).await;
    ok(&a, 201);
    let carol_attempt = a.1["attempt"].as_str().expect("attempt id").to_string();
    app.clock.set(earshot_tests::T0_MS + 2 * 3_600_000);
    let under =
        app.call("POST", "/v1/stores/s/check", Some(json!({"item": "private", "attempt": carol_attempt}))).await;
    assert_eq!(under.1["reason"], "admitted_grant", "{}", under.1);
    let latest = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "private", "container": carol}))).await;
    assert_eq!(latest.1["reason"], "denied_not_in_audience", "{}", latest.1);
}

#[tokio::test]
async fn bulk_check_answers_per_item() {
    let app = TestApp::new();
    setup(&app, None).await;
    let items = json!(["shared", "nope", "private", "pub1", "shared"]);
    let r = app
        .call(
            "POST",
            "/v1/stores/s/check/bulk",
            Some(json!({"items": items, "container": container("owner", &["alice"])})),
        )
        .await;
    ok(&r, 200);
    let results = r.1["results"].as_array().expect("results");
    let got: Vec<(&str, bool, &str)> = results
        .iter()
        .map(|d| {
            (
                d["item"].as_str().unwrap_or(""),
                d["admitted"].as_bool().unwrap_or(true),
                d["reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("shared", true, "admitted_origin"),
            ("nope", false, "denied_unknown_item"),
            ("private", false, "denied_not_in_audience"),
            ("pub1", true, "admitted_public"),
            ("shared", true, "admitted_origin"),
        ],
        "{}",
        r.1
    );
    assert_eq!(r.1["revision"].as_u64(), Some(app.revision("s")));
    // Unresolved viewers: public only.
    let r = app
        .call(
            "POST",
            "/v1/stores/s/check/bulk",
            Some(json!({"items": ["shared", "pub1"], "container": container("owner", &["stranger"])})),
        )
        .await;
    ok(&r, 200);
    assert_eq!(r.1["results"][0]["reason"], "denied_unresolved_viewers", "{}", r.1);
    assert_eq!(r.1["results"][1]["admitted"], true, "{}", r.1);
    // An empty list is a valid, empty answer.
    let r = app
        .call("POST", "/v1/stores/s/check/bulk", Some(json!({"items": [], "container": container("owner", &[])})))
        .await;
    ok(&r, 200);
    assert_eq!(r.1["results"], json!([]));
}

#[tokio::test]
async fn admin_view_and_expand_list_grants_separately() {
    let app = TestApp::new();
    setup(&app, None).await;
    let mut grants = Vec::new();
    for who in ["bob", "carol"] {
        let r = app
            .call(
                "POST",
                "/v1/stores/s/items/shared/grants",
                Some(json!({"members": [who], "reason": format!("for {who}")})),
            )
            .await;
        ok(&r, 201);
        assert_eq!(r.1["outcome"], "granted");
        grants.push(r.1["ids"][0].as_str().expect("grant id").to_string());
    }

    let view = app.call("GET", "/v1/stores/s/items/shared", None).await;
    ok(&view, 200);
    let v = &view.1;
    assert_eq!(v["id"], "shared");
    assert_eq!(v["owner"], "owner");
    assert_eq!(v["state"], "active");
    assert_eq!(v["current"], true);
    assert_eq!(v["content"], "lunch plans");
    assert_eq!(v["audience"]["kind"], "shared");
    assert_eq!(v["audience"]["members"], json!(["alice", "owner"]));
    let gs = v["grants"].as_array().expect("grants");
    assert_eq!(gs.len(), 2, "{v}");
    assert_eq!(gs[0]["id"], grants[0].as_str());
    assert_eq!(gs[0]["members"], json!(["bob", "owner"]));
    assert_eq!(gs[0]["reason"], "for bob");
    assert_eq!(gs[0]["issuer"], "local");
    assert_eq!(gs[0]["live"], true);
    assert_eq!(gs[1]["members"], json!(["carol", "owner"]));

    let exp = app.call("GET", "/v1/stores/s/items/shared/audiences", None).await;
    ok(&exp, 200);
    let auds = exp.1["audiences"].as_array().expect("audiences");
    let shape: Vec<(&str, Value)> =
        auds.iter().map(|a| (a["source"].as_str().unwrap_or(""), a["members"].clone())).collect();
    assert_eq!(
        shape,
        [
            ("origin", json!(["alice", "owner"])),
            ("grant", json!(["bob", "owner"])),
            ("grant", json!(["carol", "owner"])),
        ],
        "{}",
        exp.1
    );
    assert_eq!(auds[1]["grant"], grants[0].as_str());
    assert!(auds[0].get("grant").is_none());
    // Distinct audiences have distinct digests; the item's origin digest matches the view.
    assert_eq!(auds[0]["digest"], v["audience"]["digest"]);
    assert_ne!(auds[1]["digest"], auds[2]["digest"]);

    // Never unioned: bob alone is admitted by his grant; bob and carol together are not.
    let one = app
        .call("POST", "/v1/stores/s/check", Some(json!({"item": "shared", "container": container("owner", &["bob"])})))
        .await;
    assert_eq!((one.1["admitted"].clone(), one.1["basis"].clone()), (json!(true), json!("grant")), "{}", one.1);
    assert_eq!(one.1["grant"], grants[0].as_str());
    let two = app
        .call(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "shared", "container": container("owner", &["bob", "carol"])})),
        )
        .await;
    assert_eq!(two.1["admitted"], false, "{}", two.1);

    // A revoked grant stays in the admin view (revoked) but leaves the expansion.
    ok(&app.call("DELETE", &format!("/v1/stores/s/grants/{}", grants[1]), None).await, 200);
    refused(
        &app.call("DELETE", &format!("/v1/stores/s/grants/{}", grants[1]), None).await,
        409,
        "grant_already_revoked",
    );
    let view = app.call("GET", "/v1/stores/s/items/shared", None).await;
    assert_eq!(view.1["grants"][1]["revoked"], true, "{}", view.1);
    assert_eq!(view.1["grants"][1]["live"], false);
    let exp = app.call("GET", "/v1/stores/s/items/shared/audiences", None).await;
    assert_eq!(exp.1["audiences"].as_array().map(Vec::len), Some(2), "{}", exp.1);
}

/// A concrete path for a route template: every `{param}` becomes a well-formed identifier.
fn concrete(template: &str, store: &str) -> String {
    template
        .split('/')
        .map(|s| {
            if s == "{store}" {
                store
            } else if s.starts_with('{') {
                "x1"
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Issue 32: no query parameter is ignored. On every authenticated route and method of the
/// route table, an unknown parameter (or a consistency token where the route reads none) is
/// `400 invalid_request` naming it, before anything is read or written.
#[tokio::test]
async fn an_unknown_query_parameter_is_refused_on_every_route() {
    let app = TestApp::new();
    setup(&app, None).await;
    let rev = app.revision("s");
    let token = app.call("GET", "/v1/stores/s", None).await.1["token"].as_str().expect("token").to_string();
    let mut probed = 0;
    for route in earshot_api::routes().iter().filter(|r| r.authenticated) {
        for (method, _) in route.access {
            let method = method.to_ascii_uppercase();
            let path = concrete(route.path, "s");
            // The GET reads of a store's snapshot take the consistency parameters; only `bogus`
            // is unknown to them.
            let no_snapshot = [
                "/v1/stores",
                "/v1/stores/{store}/attempts/{attempt}",
                "/v1/stores/{store}/export",
                "/metrics",
                "/v1/stores/{store}/watch",
            ];
            let reads_consistency = method == "GET" && !no_snapshot.contains(&route.path);
            for (query, name) in
                [("bogus=1", "bogus"), ("at_least=", "at_least"), (&*format!("at_exact={token}"), "at_exact")]
            {
                if name != "bogus" && reads_consistency {
                    continue;
                }
                let got = app.call(&method, &format!("{path}?{query}"), Some(json!({}))).await;
                assert_eq!(
                    (got.0.as_u16(), code(&got.1)),
                    (400, "invalid_request"),
                    "{method} {path}?{query}: {}",
                    got.1
                );
                let message = got.1["error"]["message"].as_str().unwrap_or("");
                assert!(message.contains(name), "{method} {path}?{query} does not name `{name}`: {}", got.1);
                probed += 1;
            }
        }
    }
    assert!(probed > 100, "only {probed} probes");
    assert_eq!(app.revision("s"), rev, "a refused request wrote something");
}

/// Issue 32: the reads of one record take the consistency parameters too, so a client can read
/// its own write there across replicas (`at_least`), and read the record as it was (`at_exact`:
/// marked by `latest_revision`; the authorized audiences of then authorize nobody now).
#[tokio::test]
async fn reads_of_one_record_take_a_consistency() {
    let app = TestApp::new();
    setup(&app, None).await;
    let g = app.call("POST", "/v1/stores/s/items/private/grants", Some(json!({"members": ["carol"]}))).await;
    ok(&g, 201);
    let (token, granted) = (g.1["token"].as_str().expect("token").to_string(), g.1["revision"].as_u64());
    let grant = g.1["ids"][0].as_str().expect("grant").to_string();
    for path in ["/v1/stores/s", "/v1/stores/s/items/private", "/v1/stores/s/items/private/audiences"] {
        let r = app.call("GET", &format!("{path}?at_least={token}"), None).await;
        ok(&r, 200);
        assert_eq!(r.1["revision"].as_u64(), granted, "{path}: {}", r.1);
        assert!(r.1.get("latest_revision").is_none(), "{path}: {}", r.1);
        let r = app.call("GET", &format!("{path}?consistency=fully_consistent"), None).await;
        ok(&r, 200);
    }
    ok(&app.call("DELETE", &format!("/v1/stores/s/grants/{grant}"), None).await, 200);
    let latest = app.revision("s");
    let view = app.call("GET", &format!("/v1/stores/s/items/private?at_exact={token}"), None).await;
    ok(&view, 200);
    assert_eq!((view.1["revision"].as_u64(), view.1["latest_revision"].as_u64()), (granted, Some(latest)));
    assert_eq!(view.1["grants"][0]["revoked"], false, "the record as it was: {}", view.1);
    let then = app.call("GET", &format!("/v1/stores/s/items/private/audiences?at_exact={token}"), None).await;
    ok(&then, 200);
    assert_eq!(then.1["audiences"], json!([]), "a historical expansion authorizes nobody: {}", then.1);
    assert_eq!(then.1["historical"]["audiences"].as_array().map(Vec::len), Some(2), "{}", then.1);
    assert_eq!(then.1["latest_revision"].as_u64(), Some(latest));
    let bad = app.call("GET", "/v1/stores/s/items/private?limit=1", None).await;
    refused(&bad, 400, "invalid_request");
}

/// Issue 9: scope is decided before the body is read. For every authenticated route and
/// method of the route table, a caller without the access it needs gets 403 whatever the body
/// (an empty object, garbage, no content type), never a body error that reveals the shape.
#[tokio::test]
async fn access_is_decided_before_the_body_on_every_route() {
    use earshot_api::Access;
    let app = TestApp::with_tokens(vec![
        token("root", ADMIN, Scope::Admin, None),
        token("viewer", READER, Scope::Reader, None),
        token("tenant-t", LIMITED, Scope::Admin, Some(&["t"])),
    ]);
    setup(&app, Some(ADMIN)).await;
    let rev = app.revision("s");
    let bodies: [(Option<&str>, &str); 3] =
        [(Some("application/json"), "{}"), (Some("application/json"), "{nope"), (None, "")];
    let mut probed = 0;
    for route in earshot_api::routes().iter().filter(|r| r.authenticated) {
        for (method, access) in route.access {
            let method = method.to_ascii_uppercase();
            let path = concrete(route.path, "s");
            // Who must be refused: a reader on admin routes; a token limited to another store
            // on every route that names a store.
            let mut refused_tokens = Vec::new();
            if matches!(access, Access::Admin | Access::GlobalAdmin) {
                refused_tokens.push(READER);
            }
            if route.path.contains("{store}") || *access == Access::GlobalAdmin {
                refused_tokens.push(LIMITED);
            }
            for tok in refused_tokens {
                for (ct, body) in bodies {
                    let mut b = Request::builder()
                        .method(method.as_str())
                        .uri(&path)
                        .header("authorization", format!("Bearer {tok}"));
                    if let Some(ct) = ct {
                        b = b.header("content-type", ct);
                    }
                    let got = app.send(b.body(Body::from(body)).expect("request")).await;
                    assert_eq!(
                        (got.0.as_u16(), code(&got.1)),
                        (403, "forbidden"),
                        "{method} {path} with body {body:?}: {}",
                        got.1
                    );
                    probed += 1;
                }
            }
        }
    }
    assert!(probed > 60, "only {probed} probes: the route table lost its gated routes");
    assert_eq!(app.revision("s"), rev, "a refused request changed the store");
}

/// A method a route does not list is answered 405 by the gate itself, with the route's methods
/// in `allow`, before authentication and before any handler: HEAD on a GET route (which axum
/// would otherwise serve with the GET handler) never reaches a handler either.
#[tokio::test]
async fn methods_outside_a_routes_table_are_405_and_reach_no_handler() {
    use tower::ServiceExt;
    let app = TestApp::with_tokens(vec![token("root", ADMIN, Scope::Admin, None)]);
    setup(&app, Some(ADMIN)).await;
    let rev = app.revision("s");
    let cases: [(&str, &str, Option<&str>, &str); 5] = [
        ("PUT", "/v1/stores/s/items", None, "GET,POST"),
        ("PUT", "/v1/stores/s/items", Some(ADMIN), "GET,POST"),
        ("HEAD", "/v1/stores/s/items", Some(ADMIN), "GET,POST"),
        ("HEAD", "/v1/stores/s/items/shared", None, "GET"),
        ("GET", "/v1/stores/s/check", Some(ADMIN), "POST"),
    ];
    for (method, path, tok, allow) in cases {
        let mut b = Request::builder().method(method).uri(path);
        if let Some(t) = tok {
            b = b.header("authorization", format!("Bearer {t}"));
        }
        let resp = app.router.clone().oneshot(b.body(Body::empty()).expect("request")).await.expect("router");
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(resp.headers().get("allow").and_then(|v| v.to_str().ok()), Some(allow), "{method} {path}");
    }
    // The router's own 405 (an open route) is unchanged.
    let got = app.call("POST", "/healthz", None).await;
    assert_eq!((got.0.as_u16(), code(&got.1)), (405, "method_not_allowed"));
    assert_eq!(app.revision("s"), rev);
}

/// Issue 9: a malformed identifier in the path is a path error, not "not found".
#[tokio::test]
async fn malformed_path_identifiers_are_path_errors() {
    let app = TestApp::new();
    setup(&app, None).await;
    for path in ["/v1/stores/s/items/%ZZ", "/v1/stores/s/items/Shared", "/v1/stores/S", "/v1/stores/s/attempts/a%20b"] {
        let got = app.call("GET", path, None).await;
        refused(&got, 400, "invalid_path");
    }
    let long = "a".repeat(129);
    refused(&app.call("GET", &format!("/v1/stores/s/items/{long}"), None).await, 400, "invalid_path");
    // A well-formed unknown id is still "not found".
    refused(&app.call("GET", "/v1/stores/s/items/nope", None).await, 404, "item_not_found");
}

/// SPEC §2.6 for `check/bulk`: after a grant is revoked, a bulk check quoting an older token
/// admits none of its items. Each result is history (`admitted: false`, reason
/// `denied_historical_revision`) with the decision of then under `historical`, denials included.
#[tokio::test]
async fn a_bulk_check_at_an_older_revision_is_history_and_admits_nothing() {
    let app = TestApp::new();
    setup(&app, None).await;
    let g = app.call("POST", "/v1/stores/s/items/private/grants", Some(json!({"members": ["carol"]}))).await;
    ok(&g, 201);
    let grant = g.1["ids"][0].as_str().expect("grant id").to_string();
    let carol = container("owner", &["carol"]);
    let items = json!(["shared", "private", "pub1"]);
    let ask = json!({"items": items, "container": carol, "consistency": {"at_exact": g.1["token"]}});
    let before = app.call("POST", "/v1/stores/s/check/bulk", Some(ask.clone())).await;
    ok(&before, 200);
    let admitted: Vec<&Value> =
        before.1["results"].as_array().expect("results").iter().map(|r| &r["admitted"]).collect();
    assert_eq!(admitted, [&json!(false), &json!(true), &json!(true)], "{}", before.1);
    ok(&app.call("DELETE", &format!("/v1/stores/s/grants/{grant}"), None).await, 200);
    let latest = app.revision("s");

    let then = app.call("POST", "/v1/stores/s/check/bulk", Some(ask)).await;
    ok(&then, 200);
    assert_eq!(then.1["revision"], before.1["revision"], "{}", then.1);
    assert_eq!(then.1["latest_revision"].as_u64(), Some(latest), "{}", then.1);
    let results = then.1["results"].as_array().expect("results");
    let then_reasons: Vec<(&str, &str)> = results
        .iter()
        .map(|r| {
            assert_eq!(r["admitted"], false, "an old token admitted an item: {r}");
            assert_eq!(r["reason"], "denied_historical_revision", "{r}");
            assert!(r.get("basis").is_none() && r.get("grant").is_none() && r.get("role").is_none(), "{r}");
            assert_eq!(r["historical"]["item"], r["item"], "{r}");
            (r["item"].as_str().unwrap_or(""), r["historical"]["reason"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(
        then_reasons,
        [("shared", "denied_not_in_audience"), ("private", "admitted_grant"), ("pub1", "admitted_public")],
        "{}",
        then.1
    );
    assert_eq!(results[1]["historical"]["grant"].as_str(), Some(grant.as_str()), "{}", then.1);

    // The newest state: the revoked grant admits nothing, and the answer is no history.
    let now = app.call("POST", "/v1/stores/s/check/bulk", Some(json!({"items": items, "container": carol}))).await;
    ok(&now, 200);
    assert!(now.1.get("latest_revision").is_none(), "{}", now.1);
    let now: Vec<(&str, bool)> = now.1["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| (r["reason"].as_str().unwrap_or(""), r.get("historical").is_some()))
        .collect();
    assert_eq!(now, [("denied_not_in_audience", false), ("denied_not_in_audience", false), ("admitted_public", false)]);
}

/// SPEC §2.6 (time is part of the state): with no write after a grant's window closes, the
/// newest revision is still the one the grant was written in. `at_exact` of it is judged at that
/// revision's time (so the same token gives the same judgement), and because that judgement now
/// differs from one at the time of the request, it is historical: it never admits, through a
/// check, a bulk check or a lookup. Before the window closes the same read is usable.
#[tokio::test]
async fn an_expiry_is_not_undone_by_quoting_the_newest_token() {
    let app = TestApp::new();
    setup(&app, None).await;
    let expires = earshot_store::model::format_time(earshot_tests::T0_MS + 3_000);
    let g = app
        .call("POST", "/v1/stores/s/items/private/grants", Some(json!({"members": ["carol"], "expires_at": expires})))
        .await;
    ok(&g, 201);
    let (token, revision) = (g.1["token"].clone(), g.1["revision"].as_u64());
    let carol = container("owner", &["carol"]);
    let exact = json!({"at_exact": token});
    let check = json!({"item": "private", "container": carol, "consistency": exact});
    let bulk = json!({"items": ["private", "pub1"], "container": carol, "consistency": exact});
    let lookup = json!({"container": carol, "consistency": exact});

    // Inside the window the newest revision's exact answer is the latest one: usable.
    app.clock.set(earshot_tests::T0_MS + 2_999);
    let usable = app.call("POST", "/v1/stores/s/check", Some(check.clone())).await;
    assert_eq!((usable.1["admitted"].as_bool(), usable.1["reason"].as_str()), (Some(true), Some("admitted_grant")));
    assert!(usable.1.get("latest_revision").is_none() && usable.1.get("historical").is_none(), "{}", usable.1);

    // The window closes; nothing is written.
    app.clock.set(earshot_tests::T0_MS + 5_000);
    let latest = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "private", "container": carol}))).await;
    assert_eq!(latest.1["reason"], "denied_not_in_audience", "{}", latest.1);
    assert_eq!(latest.1["token"], token, "no write: the latest read answers the same token");

    let then = app.call("POST", "/v1/stores/s/check", Some(check)).await;
    ok(&then, 200);
    assert_eq!(then.1["admitted"], false, "an expired grant admitted through the newest token: {}", then.1);
    assert_eq!(then.1["reason"], "denied_historical_revision", "{}", then.1);
    assert_eq!(then.1["historical"]["reason"], "admitted_grant", "judged at the revision's time: {}", then.1);
    assert_eq!((then.1["revision"].as_u64(), then.1["latest_revision"].as_u64()), (revision, revision), "{}", then.1);

    let bulk = app.call("POST", "/v1/stores/s/check/bulk", Some(bulk)).await;
    ok(&bulk, 200);
    for r in bulk.1["results"].as_array().expect("results") {
        assert_eq!((r["admitted"].as_bool(), r["reason"].as_str()), (Some(false), Some("denied_historical_revision")));
    }
    let found = app.call("POST", "/v1/stores/s/lookup", Some(lookup)).await;
    ok(&found, 200);
    let items = found.1["items"].as_array().expect("items");
    assert!(
        items.iter().any(|i| i["item"] == "private" && i["historical"]["reason"] == "admitted_grant"),
        "{}",
        found.1
    );
    assert!(items.iter().all(|i| i["admitted"] == false), "a lookup admitted through the newest token: {}", found.1);

    // An attempt is where memory is used: it refuses the token now.
    let attempt =
        app.call("POST", "/v1/stores/s/attempts", Some(json!({"container": carol, "consistency": exact}))).await;
    refused(&attempt, 409, "revision_not_latest");
}

/// Issue 32: a token names its store's incarnation. A store deleted and created again under the
/// same id is another store: its old `at_exact` and `at_least` tokens, its old list cursors and
/// its old watch position are refused with their own codes (410), never read against the new
/// store (where the same token would answer differently).
#[tokio::test]
async fn a_token_of_a_deleted_store_never_reads_its_successor() {
    let app = TestApp::new();
    ok(&app.call("POST", "/v1/stores", Some(json!({"id": "zt"}))).await, 201);
    for p in ["owner", "alice"] {
        ok(&app.call("POST", "/v1/stores/zt/participants", Some(json!({"id": p, "kind": "person"}))).await, 201);
    }
    let item = json!({"id": "x", "owner": "owner", "origin": {"participants": ["alice"]}});
    let w = app.call("POST", "/v1/stores/zt/items", Some(item)).await;
    ok(&w, 201);
    let token = w.1["token"].as_str().expect("token").to_string();
    let alice = container("owner", &["alice"]);
    let exact = json!({"item": "x", "container": alice, "consistency": {"at_exact": token}});
    let least = json!({"item": "x", "container": alice, "consistency": {"at_least": token}});
    let before = app.call("POST", "/v1/stores/zt/check", Some(exact.clone())).await;
    assert_eq!(before.1["reason"], "admitted_origin", "{}", before.1);
    let page = app.call("GET", "/v1/stores/zt/participants?limit=1", None).await;
    ok(&page, 200);
    let cursor = page.1["next_cursor"].as_str().expect("a second page").to_string();

    // The same id again: a new store, in which x is only the owner's.
    ok(&app.call("DELETE", "/v1/stores/zt?confirm=zt", None).await, 200);
    let again = app.call("POST", "/v1/stores", Some(json!({"id": "zt"}))).await;
    ok(&again, 201);
    assert_ne!(again.1["token"], json!(format!("1.{}", token.split_once('.').map_or("", |t| t.1))), "{}", again.1);
    for p in ["owner", "alice"] {
        ok(&app.call("POST", "/v1/stores/zt/participants", Some(json!({"id": p, "kind": "person"}))).await, 201);
    }
    let mine = json!({"id": "x", "owner": "owner", "origin": "owner_private"});
    let w2 = app.call("POST", "/v1/stores/zt/items", Some(mine)).await;
    ok(&w2, 201);
    assert_eq!(w2.1["revision"], w.1["revision"], "the new store reached the old token's revision");

    for (what, ask) in [("at_exact", exact), ("at_least", least)] {
        let r = app.call("POST", "/v1/stores/zt/check", Some(ask)).await;
        refused(&r, 410, "consistency_token_incarnation_mismatch");
        assert_eq!(r.1["error"]["details"]["store"], "zt", "{what}: {}", r.1);
    }
    let listed = app.call("GET", &format!("/v1/stores/zt/participants?limit=1&cursor={cursor}"), None).await;
    refused(&listed, 410, "cursor_incarnation_mismatch");
    let watched = app.call("GET", &format!("/v1/stores/zt/watch?after={token}"), None).await;
    refused(&watched, 410, "consistency_token_incarnation_mismatch");
    // The new store's own tokens and cursors work, and another store's are still its own error.
    let fresh = w2.1["token"].as_str().expect("token");
    let now = app
        .call(
            "POST",
            "/v1/stores/zt/check",
            Some(json!({"item": "x", "container": alice, "consistency": {"at_exact": fresh}})),
        )
        .await;
    assert_eq!(now.1["reason"], "denied_not_in_audience", "{}", now.1);
    ok(&app.call("POST", "/v1/stores", Some(json!({"id": "zu"}))).await, 201);
    let other = app
        .call(
            "POST",
            "/v1/stores/zu/lookup",
            Some(json!({"container": {"owner": "owner"}, "consistency": {"at_least": fresh}})),
        )
        .await;
    refused(&other, 400, "consistency_token_store_mismatch");
}

/// SPEC §2.6: an `at_exact` read is judged at the time recorded with its revision, so the same
/// token always gives the same answer: a grant that has expired since still shows as the basis
/// of the (historical) decision of then, while the newest state denies.
#[tokio::test]
async fn an_exact_read_is_judged_at_its_revision_time() {
    let app = TestApp::new();
    setup(&app, None).await;
    let expires = earshot_store::model::format_time(earshot_tests::T0_MS + 60_000);
    let g = app
        .call("POST", "/v1/stores/s/items/private/grants", Some(json!({"members": ["carol"], "expires_at": expires})))
        .await;
    ok(&g, 201);
    let token = g.1["token"].clone();
    let carol = container("owner", &["carol"]);
    let ask = json!({"item": "private", "container": carol, "consistency": {"at_exact": token}});
    let before = app.call("POST", "/v1/stores/s/check", Some(ask.clone())).await;
    assert_eq!(
        (before.1["admitted"].as_bool(), before.1["reason"].as_str()),
        (Some(true), Some("admitted_grant")),
        "{}",
        before.1
    );
    // The grant expires; a later write makes the token's revision historical.
    app.clock.set(earshot_tests::T0_MS + 120_000);
    ok(
        &app.call("POST", "/v1/stores/s/items", Some(json!({"id": "later", "owner": "owner", "origin": "public"})))
            .await,
        201,
    );
    let then = app.call("POST", "/v1/stores/s/check", Some(ask)).await;
    assert_eq!(then.1["admitted"], false, "{}", then.1);
    assert_eq!(
        then.1["historical"]["reason"], "admitted_grant",
        "judged at the request's time, not the revision's: {}",
        then.1
    );
    let now = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "private", "container": carol}))).await;
    assert_eq!(
        (now.1["admitted"].as_bool(), now.1["reason"].as_str()),
        (Some(false), Some("denied_not_in_audience")),
        "{}",
        now.1
    );
}

/// Issue 9, the smaller refusals: each says what is actually wrong.
#[tokio::test]
async fn small_refusals_name_the_real_cause() {
    let app = TestApp::new();
    setup(&app, None).await;
    let tok = app.call("GET", "/v1/stores/s", None).await.1["token"].clone();
    let both = json!({"item": "shared", "container": container("owner", &["alice"]),
                      "consistency": {"at_least": tok, "at_exact": tok}});
    let r = app.call("POST", "/v1/stores/s/check", Some(both)).await;
    refused(&r, 400, "invalid_request");
    assert!(r.1["error"]["message"].as_str().is_some_and(|m| m.contains("not both")), "{}", r.1);
    let r =
        app.call("POST", "/v1/stores/s/lookup", Some(json!({"container": container("owner", &[]), "limit": 0}))).await;
    refused(&r, 400, "invalid_request");
    assert!(r.1["error"]["message"].as_str().is_some_and(|m| m.contains("at least 1")), "{}", r.1);
    let zone_less = json!({"members": ["carol"], "expires_at": "2026-06-01T00:00:00"});
    let r = app.call("POST", "/v1/stores/s/items/private/grants", Some(zone_less)).await;
    refused(&r, 400, "invalid_request");
    assert!(r.1["error"]["message"].as_str().is_some_and(|m| m.contains("needs a zone")), "{}", r.1);
}

/// Every read for a container says whether it resolved and, when not, why, naming the
/// caller's own input; fail-closed stays: an unresolved container sees public items only.
#[tokio::test]
async fn every_container_answer_says_whether_and_why_it_resolved() {
    let app = TestApp::new();
    setup(&app, None).await;
    let bind = |ident: &str, p: &str| json!({"transport": "sms", "identifier": ident, "participant": p});
    ok(&app.call("POST", "/v1/stores/s/identities", Some(bind("+1", "alice"))).await, 201);
    ok(&app.call("POST", "/v1/stores/s/identities", Some(bind("+2", "alice"))).await, 201);
    ok(&app.call("POST", "/v1/stores/s/identities", Some(bind("+2", "bob"))).await, 201);
    let ident = |n: &str| json!({"transport": "sms", "identifier": n});
    let cases = [
        (
            json!({"owner": "nobody", "viewers": {"participants": ["alice"]}}),
            json!({"resolved": false, "reason": "unknown_owner", "detail": "owner: nobody"}),
        ),
        (
            container("owner", &["alice", "zed"]),
            json!({"resolved": false, "reason": "unknown_participant", "detail": "viewers.participants[1]: zed"}),
        ),
        (
            json!({"owner": "owner", "viewers": {"identities": [ident("+1"), ident("+9")]}}),
            json!({"resolved": false, "reason": "unknown_identity", "detail": "viewers.identities[1]: sms:+9"}),
        ),
        (
            json!({"owner": "owner", "viewers": {"identities": [ident("+2")]}}),
            json!({"resolved": false, "reason": "ambiguous_identity", "detail": "viewers.identities[0]: sms:+2"}),
        ),
        (
            json!({"owner": "owner", "viewers": {"participants": ["alice"], "quality": "stale"}}),
            json!({"resolved": false, "reason": "evidence_quality", "detail": "viewers.quality: stale"}),
        ),
        (
            json!({"owner": "owner", "viewers": {"participants": ["alice"], "identities": [ident("+1")]}}),
            json!({"resolved": true}),
        ),
    ];
    for (c, want) in cases {
        let resolved = want["resolved"] == true;
        let check = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "shared", "container": c}))).await;
        ok(&check, 200);
        assert_eq!(check.1["container"], want, "check {c}: {}", check.1);
        assert_eq!(check.1["admitted"], resolved, "fail-closed {c}: {}", check.1);
        let bulk = app
            .call("POST", "/v1/stores/s/check/bulk", Some(json!({"items": ["shared", "pub1"], "container": c})))
            .await;
        ok(&bulk, 200);
        assert_eq!(bulk.1["container"], want, "bulk {c}: {}", bulk.1);
        let look = app.call("POST", "/v1/stores/s/lookup", Some(json!({"container": c, "owners": ["owner"]}))).await;
        ok(&look, 200);
        assert_eq!(look.1["container"], want, "lookup {c}: {}", look.1);
        let a = app.call("POST", "/v1/stores/s/attempts", Some(json!({"container": c}))).await;
        ok(&a, 201);
        assert_eq!((a.1["resolution"].clone(), a.1["resolved"].clone()), (want.clone(), json!(resolved)), "{}", a.1);
        let id = a.1["attempt"].as_str().expect("attempt id").to_string();
        let under = app.call("POST", "/v1/stores/s/check", Some(json!({"item": "shared", "attempt": id}))).await;
        assert_eq!(under.1["container"], want, "under attempt {c}: {}", under.1);
        let ctx = app
            .call(
                "POST",
                &format!("/v1/stores/s/attempts/{id}/context"),
                Some(json!({"query": "lunch", "owners": ["owner"]})),
            )
            .await;
        ok(&ctx, 200);
        assert_eq!(ctx.1["resolution"], want, "context {c}: {}", ctx.1);
        let got = app.call("GET", &format!("/v1/stores/s/attempts/{id}"), None).await;
        assert_eq!((got.1["resolution"].clone(), got.1["context"]["resolution"].clone()), (want.clone(), want.clone()));
    }
}

/// A grant replayed with the same members, reason and expiry as a live grant of the item
/// answers that grant and writes nothing; a different body, or a replay after revocation,
/// creates a new one.
#[tokio::test]
async fn a_replayed_grant_answers_the_live_one() {
    let app = TestApp::new();
    setup(&app, None).await;
    let body = json!({"members": ["bob", "carol"], "reason": "asked", "expires_at": "2030-01-01T00:00:00Z"});
    let first = app.call("POST", "/v1/stores/s/items/private/grants", Some(body.clone())).await;
    ok(&first, 201);
    assert_eq!(first.1["outcome"], "granted");
    let id = first.1["ids"][0].clone();
    let rev = app.revision("s");

    // Members in another order, duplicated: the same audience, so the same grant.
    let replay = json!({"members": ["carol", "bob", "bob"], "reason": "asked", "expires_at": "2030-01-01T00:00:00Z"});
    let again = app.call("POST", "/v1/stores/s/items/private/grants", Some(replay)).await;
    ok(&again, 200);
    assert_eq!((again.1["outcome"].clone(), again.1["ids"][0].clone()), (json!("exists"), id.clone()), "{}", again.1);
    assert_eq!((again.1["revision"].as_u64(), app.revision("s")), (Some(rev), rev));

    // A different reason, expiry or member set is a new grant.
    for other in [
        json!({"members": ["bob", "carol"], "reason": "other", "expires_at": "2030-01-01T00:00:00Z"}),
        json!({"members": ["bob", "carol"], "reason": "asked"}),
        json!({"members": ["bob"], "reason": "asked", "expires_at": "2030-01-01T00:00:00Z"}),
    ] {
        let r = app.call("POST", "/v1/stores/s/items/private/grants", Some(other.clone())).await;
        ok(&r, 201);
        assert_ne!(r.1["ids"][0], id, "{other}");
    }
    // The same body on another item is that item's own grant.
    ok(&app.call("POST", "/v1/stores/s/items/shared/grants", Some(body.clone())).await, 201);

    // Once revoked, the replay grants anew.
    let gid = id.as_str().expect("grant id");
    ok(&app.call("DELETE", &format!("/v1/stores/s/grants/{gid}"), None).await, 200);
    let after = app.call("POST", "/v1/stores/s/items/private/grants", Some(body)).await;
    ok(&after, 201);
    assert_ne!(after.1["ids"][0], id);
}

/// SPEC §6.2: the trust endpoints. A delegation is a revision; reading and listing show it; a
/// revocation is another revision; every refusal has its code and writes nothing.
#[tokio::test]
async fn trust_delegations_are_recorded_read_listed_and_revoked() {
    let app = TestApp::with_tokens(vec![
        token("admin", ADMIN, Scope::Admin, None),
        token("reader", READER, Scope::Reader, None),
    ]);
    let adm = Some(ADMIN);
    setup(&app, adm).await;
    let before = app.revision("s");
    let body = json!({"owner": "owner", "participant": "alice", "reason": "my assistant"});
    let created = app.call_with("POST", "/v1/stores/s/trust", Some(body.clone()), adm).await;
    ok(&created, 201);
    assert_eq!(created.1["outcome"], "created");
    assert_eq!(app.revision("s"), before + 1, "a delegation is one revision");
    let id = created.1["ids"][0].as_str().unwrap_or_default().to_string();
    let view = app.call_with("GET", &format!("/v1/stores/s/trust/{id}"), None, adm).await;
    ok(&view, 200);
    assert_eq!(
        (&view.1["owner"], &view.1["participant"], &view.1["issuer"], &view.1["reason"], &view.1["revoked"]),
        (&json!("owner"), &json!("alice"), &json!("admin"), &json!("my assistant"), &json!(false)),
        "{}",
        view.1
    );
    assert_eq!(view.1["created_revision"], json!(before + 1));
    // A retry answers the live delegation and writes nothing.
    let again = app.call_with("POST", "/v1/stores/s/trust", Some(body), adm).await;
    ok(&again, 200);
    assert_eq!((again.1["outcome"].as_str(), again.1["ids"][0].as_str()), (Some("exists"), Some(id.as_str())));
    assert_eq!(app.revision("s"), before + 1);
    let list = app.call_with("GET", "/v1/stores/s/trust?owner=owner&live=true", None, adm).await;
    ok(&list, 200);
    assert_eq!(list.1["results"].as_array().map(Vec::len), Some(1), "{}", list.1);
    let none = app.call_with("GET", "/v1/stores/s/trust?participant=bob", None, adm).await;
    assert_eq!(none.1["results"], json!([]), "{}", none.1);

    // Refusals, none of which writes.
    let rev = app.revision("s");
    let post = |b: Value| app.call_with("POST", "/v1/stores/s/trust", Some(b), adm);
    refused(&post(json!({"owner": "nobody", "participant": "alice"})).await, 404, "participant_not_found");
    refused(&post(json!({"owner": "owner", "participant": "nobody"})).await, 404, "participant_not_found");
    refused(&post(json!({"owner": "owner", "participant": "owner"})).await, 422, "trust_self_delegation");
    refused(&post(json!({"owner": "owner"})).await, 400, "invalid_request");
    refused(&post(json!({"owner": "owner", "participant": "alice", "bogus": 1})).await, 400, "invalid_request");
    refused(&post(json!({"owner": "Owner!", "participant": "alice"})).await, 400, "invalid_id");
    refused(
        &post(json!({"owner": "owner", "participant": "bob", "reason": "x".repeat(2000)})).await,
        400,
        "limit_exceeded",
    );
    let reader = app
        .call_with("POST", "/v1/stores/s/trust", Some(json!({"owner": "owner", "participant": "bob"})), Some(READER))
        .await;
    refused(&reader, 403, "forbidden");
    refused(&app.call_with("GET", "/v1/stores/s/trust", None, Some(READER)).await, 403, "forbidden");
    refused(&app.call_with("DELETE", &format!("/v1/stores/s/trust/{id}"), None, Some(READER)).await, 403, "forbidden");
    refused(&app.call_with("DELETE", "/v1/stores/s/trust/no-such", None, adm).await, 404, "trust_not_found");
    refused(&app.call_with("GET", "/v1/stores/s/trust/no-such", None, adm).await, 404, "trust_not_found");
    refused(&app.call_with("GET", "/v1/stores/s/trust?live=maybe", None, adm).await, 400, "invalid_request");
    let bad_author = json!({"id": "x", "owner": "owner", "origin": "owner_private", "author": "nobody"});
    refused(&app.call_with("POST", "/v1/stores/s/items", Some(bad_author), adm).await, 404, "author_not_found");
    assert_eq!(app.revision("s"), rev, "a refused request writes nothing");

    // An item by alice is data until the delegation counts, and again after its revocation.
    let by_alice = json!({"id": "a1", "owner": "owner", "origin": {"participants": ["alice"]}, "author": "alice"});
    ok(&app.call_with("POST", "/v1/stores/s/items", Some(by_alice), adm).await, 201);
    let check = || {
        app.call_with(
            "POST",
            "/v1/stores/s/check",
            Some(json!({"item": "a1", "container": container("owner", &[])})),
            Some(READER),
        )
    };
    assert_eq!(check().await.1["role"], "instruction");
    let revoked = app.call_with("DELETE", &format!("/v1/stores/s/trust/{id}"), None, adm).await;
    ok(&revoked, 200);
    assert_eq!(revoked.1["outcome"], "revoked");
    let d = check().await.1;
    assert_eq!(
        (&d["role"], &d["author"], &d["data_reason"]),
        (&json!("data"), &json!("alice"), &json!("untrusted_author")),
        "{d}"
    );
    refused(&app.call_with("DELETE", &format!("/v1/stores/s/trust/{id}"), None, adm).await, 409, "already_revoked");
    let view = app.call_with("GET", &format!("/v1/stores/s/trust/{id}"), None, adm).await;
    assert_eq!(view.1["revoked"], true, "{}", view.1);
    assert!(view.1["revoked_revision"].as_u64().is_some() && view.1["revoked_at"].is_string(), "{}", view.1);
    let item = app.call_with("GET", "/v1/stores/s/items/a1", None, adm).await;
    assert_eq!((&item.1["author"], &item.1["role"]), (&json!("alice"), &json!("data")), "{}", item.1);
    // Issue 36 (SPEC §1.8): the author may be removed; the item keeps her as a tombstone.
    let gone = app.call_with("DELETE", "/v1/stores/s/participants/alice", None, adm).await;
    assert_eq!((gone.0.as_u16(), &gone.1["outcome"]), (200, &json!("removed")), "{}", gone.1);
    let item = app.call_with("GET", "/v1/stores/s/items/a1", None, adm).await;
    assert_eq!(
        (&item.1["author"], &item.1["role"], &item.1["data_reason"]),
        (&json!("alice"), &json!("data"), &json!("author_removed")),
        "{}",
        item.1
    );
    let listed = app.call_with("GET", "/v1/stores/s/items?author=alice", None, adm).await;
    assert_eq!(listed.1["results"], json!([]), "a tombstone is nobody's now: {}", listed.1);
}

/// Issue 36, item 3: a grant (or a declassification, which is one) whose `expires_at` is at or
/// before the time of the write would never count, so it is refused with `422
/// window_in_the_past` and nothing is written; "now" is the writer's clock at the write, so
/// the same instant is refused once the clock has passed it. One millisecond later is fine.
#[tokio::test]
async fn a_grant_already_over_is_refused_and_writes_nothing() {
    let app = TestApp::new();
    setup(&app, None).await;
    let at = |ms: i64| earshot_store::model::format_time(earshot_tests::T0_MS + ms);
    let refused = |r: &(StatusCode, Value), field: &str| {
        assert_eq!(
            (r.0.as_u16(), r.1["error"]["code"].as_str(), r.1["error"]["details"]["field"].as_str()),
            (422, Some("window_in_the_past"), Some(field)),
            "{}",
            r.1
        );
    };
    let grant = |expires: String| json!({"members": ["carol"], "expires_at": expires});
    let declassify = |expires: String| {
        json!({"disposition": "declassification", "owner": "owner", "sources": ["private"], "members": ["carol"],
               "expires_at": expires})
    };
    // 1970, the very instant of the write, and that instant written with an offset.
    for expires in ["1970-01-01T00:00:00Z".to_string(), at(0), "2025-12-31T23:00:00-01:00".to_string()] {
        let before = app.revision("s");
        let r = app.call("POST", "/v1/stores/s/items/private/grants", Some(grant(expires.clone()))).await;
        refused(&r, "expires_at");
        let r = app.call("POST", "/v1/stores/s/derivations", Some(declassify(expires))).await;
        refused(&r, "expires_at");
        assert_eq!(app.revision("s"), before, "a refused grant wrote");
    }
    let r = app.call("POST", "/v1/stores/s/items/private/grants", Some(grant(at(1)))).await;
    ok(&r, 201);
    // Judged at the write's own time: the clock has moved past an instant that was ahead.
    app.clock.set(earshot_tests::T0_MS + 10_000);
    let before = app.revision("s");
    let r = app.call("POST", "/v1/stores/s/items/private/grants", Some(grant(at(5_000)))).await;
    refused(&r, "expires_at");
    assert_eq!(r.1["error"]["details"]["now"], at(10_000), "{}", r.1);
    let r = app.call("POST", "/v1/stores/s/derivations", Some(declassify(at(10_000)))).await;
    refused(&r, "expires_at");
    assert_eq!(app.revision("s"), before, "a refused grant wrote");
    ok(&app.call("POST", "/v1/stores/s/derivations", Some(declassify(at(10_001)))).await, 201);
}
