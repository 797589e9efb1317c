//! Owns the tests of idempotent retries (issue 10) over HTTP: a create retried with the same id
//! and body answers as the first did and writes nothing (a different body is still `…_exists`);
//! writes under an `Idempotency-Key` answer a retry with the recorded outcome (same ids,
//! revision and token) without writing again, refuse the key with another request, forget it
//! after its window, and find it again after a restart, on sled and on PostgreSQL.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use earshot_api::{AppState, Auth, Scope, TokenConfig};
use earshot_store::idempotency::KEY_TTL_MS;
use earshot_store::{Config, Earshot, ManualClock};
use earshot_tests::{Datastore, TestApp, T0_MS};
use serde_json::{json, Value};

type Answer = (StatusCode, Value);

/// One request with an optional `Idempotency-Key` and bearer token.
async fn send(app: &TestApp, method: &str, path: &str, body: Option<Value>, key: Option<&str>) -> Answer {
    send_as(app, method, path, body, key, None).await
}

async fn send_as(
    app: &TestApp,
    method: &str,
    path: &str,
    body: Option<Value>,
    key: Option<&str>,
    token: Option<&str>,
) -> Answer {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let req = match body {
        Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_string())),
        None => req.body(Body::empty()),
    }
    .expect("request");
    app.send(req).await
}

#[track_caller]
fn status(got: &Answer, want: u16) {
    assert_eq!(got.0.as_u16(), want, "unexpected answer: {} {}", got.0, got.1);
}

#[track_caller]
fn refused(got: &Answer, want: u16, code: &str) {
    assert_eq!(
        (got.0.as_u16(), got.1["error"]["code"].as_str().unwrap_or_default()),
        (want, code),
        "unexpected answer: {} {}",
        got.0,
        got.1
    );
}

/// A store `s` with participants ann and bob, an item of ann's, a device of ann's and a
/// capability of bob's on it with two uses.
async fn setup(app: &TestApp) {
    status(&send(app, "POST", "/v1/stores", Some(json!({"id": "s"})), None).await, 201);
    for p in ["ann", "bob", "cat"] {
        status(
            &send(app, "POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"})), None).await,
            201,
        );
    }
    let item = json!({"id": "i1", "owner": "ann", "content": "hello", "origin": "owner_private"});
    status(&send(app, "POST", "/v1/stores/s/items", Some(item), None).await, 201);
    let device = json!({"id": "fridge", "owner": "ann"});
    status(&send(app, "POST", "/v1/stores/s/devices", Some(device), None).await, 201);
    let cap = json!({"id": "k", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["door/*"],
                     "actions": ["open"], "constraints": {"uses": 2}});
    status(&send(app, "POST", "/v1/stores/s/capabilities", Some(cap), None).await, 201);
}

fn grant_body() -> Value {
    json!({"members": ["bob"], "reason": "dinner"})
}

fn use_body() -> Value {
    json!({"principal": "bob", "device": "fridge", "path": "door/front", "action": "open"})
}

async fn uses_left(app: &TestApp) -> Value {
    let chain = send(app, "GET", "/v1/stores/s/capabilities/k/chain", None, None).await;
    status(&chain, 200);
    chain.1["chain"][0]["uses_left"].clone()
}

#[tokio::test]
async fn a_create_retried_with_the_same_body_answers_as_the_first_and_writes_nothing() {
    let app = TestApp::new();
    let store = json!({"id": "s", "name": "Home"});
    let first = send(&app, "POST", "/v1/stores", Some(store.clone()), None).await;
    status(&first, 201);
    let again = send(&app, "POST", "/v1/stores", Some(store), None).await;
    status(&again, 201);
    assert_eq!(again.1, first.1, "a store create retried answers as the first did");
    refused(&send(&app, "POST", "/v1/stores", Some(json!({"id": "s"})), None).await, 409, "store_exists");
    refused(
        &send(&app, "POST", "/v1/stores", Some(json!({"id": "s", "name": "Work"})), None).await,
        409,
        "store_exists",
    );

    let creates = [
        (
            "participants",
            json!({"id": "ann", "kind": "person", "name": "Ann"}),
            json!({"id": "ann", "kind": "agent", "name": "Ann"}),
            "participant_exists",
        ),
        (
            "items",
            json!({"id": "i1", "owner": "ann", "content": "hi", "attributes": {"n": 1}, "origin": "owner_private"}),
            json!({"id": "i1", "owner": "ann", "content": "hi", "attributes": {"n": 2}, "origin": "owner_private"}),
            "item_exists",
        ),
        (
            "devices",
            json!({"id": "fridge", "owner": "ann", "name": "Fridge"}),
            json!({"id": "fridge", "owner": "ann"}),
            "device_exists",
        ),
        (
            "capabilities",
            json!({"id": "k", "issuer": "ann", "holder": "ann", "device": "fridge", "paths": ["door/*"], "actions": ["open"]}),
            json!({"id": "k", "issuer": "ann", "holder": "ann", "device": "fridge", "paths": ["door/*"], "actions": ["close"]}),
            "capability_exists",
        ),
    ];
    for (route, body, other, exists) in creates {
        let path = format!("/v1/stores/s/{route}");
        let first = send(&app, "POST", &path, Some(body.clone()), None).await;
        status(&first, 201);
        let rev = app.revision("s");
        let again = send(&app, "POST", &path, Some(body), None).await;
        status(&again, 201);
        assert_eq!((&again.1["outcome"], &again.1["ids"]), (&first.1["outcome"], &first.1["ids"]), "{route}");
        assert_eq!(app.revision("s"), rev, "{route}: the retry wrote nothing");
        assert_eq!(again.1["revision"], json!(rev), "{route}: answered at the latest revision");
        refused(&send(&app, "POST", &path, Some(other), None).await, 409, exists);
        assert_eq!(app.revision("s"), rev, "{route}: the refusal wrote nothing");
    }

    // An item's digest is kept: after a restart a retry still answers, another body is refused.
    let h = app.earshot.store("s").expect("store");
    h.verify().expect("verify");
    assert_eq!(h.durable_records().expect("records").idempotency.items.len(), 1);
}

/// "Same body" treats sets as sets on every route (RULES §3.4): an item's viewers and subjects,
/// a capability's paths and actions, in any order and with repeats, are the same request; a
/// store create retried after later writes answers at the latest revision; a participant removed
/// and created again is created anew.
#[tokio::test]
async fn a_retry_compares_sets_as_sets_and_answers_at_the_latest_revision() {
    let app = TestApp::new();
    setup(&app).await;
    let item = |viewers: Value, subjects: Value| json!({"id": "i2", "owner": "ann", "content": "x", "origin": {"participants": viewers}, "subjects": subjects});
    let caps = |paths: Value, actions: Value| json!({"id": "k2", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": paths, "actions": actions});
    let cases = [
        (
            "items",
            item(json!(["ann", "bob", "cat"]), json!(["bob", "cat"])),
            vec![
                item(json!(["cat", "bob", "ann"]), json!(["cat", "bob"])),
                item(json!(["bob", "ann", "cat", "bob"]), json!(["cat", "bob", "bob"])),
            ],
            item(json!(["ann", "bob"]), json!(["bob", "cat"])),
            "item_exists",
        ),
        (
            "capabilities",
            caps(json!(["door/*", "light/*"]), json!(["open", "close"])),
            vec![
                caps(json!(["light/*", "door/*"]), json!(["close", "open"])),
                caps(json!(["light/*", "door/*", "light/*"]), json!(["open", "close", "open"])),
            ],
            caps(json!(["door/*"]), json!(["open", "close"])),
            "capability_exists",
        ),
    ];
    for (route, body, same, other, exists) in cases {
        let path = format!("/v1/stores/s/{route}");
        let first = send(&app, "POST", &path, Some(body), None).await;
        status(&first, 201);
        let rev = app.revision("s");
        for again in same {
            let again = send(&app, "POST", &path, Some(again.clone()), None).await;
            status(&again, 201);
            assert_eq!((&again.1["outcome"], &again.1["ids"]), (&first.1["outcome"], &first.1["ids"]), "{route}");
            assert_eq!(app.revision("s"), rev, "{route}: the same sets in another order wrote nothing");
        }
        refused(&send(&app, "POST", &path, Some(other), None).await, 409, exists);
    }

    // The store's create retried after all of that answers at the latest revision.
    let rev = app.revision("s");
    assert!(rev > 1);
    let again = send(&app, "POST", "/v1/stores", Some(json!({"id": "s"})), None).await;
    status(&again, 201);
    assert_eq!(again.1["revision"], json!(rev), "a store create retried answers at the latest revision");
    let token = again.1["token"].as_str().unwrap_or_default();
    assert!(token.starts_with(&format!("{rev}.")), "its token is the latest revision's: {token}");
    assert_eq!(app.revision("s"), rev);

    // A participant removed and created again is a new participant: the create writes.
    let dan = json!({"id": "dan", "kind": "person"});
    status(&send(&app, "POST", "/v1/stores/s/participants", Some(dan.clone()), None).await, 201);
    status(&send(&app, "DELETE", "/v1/stores/s/participants/dan", None, None).await, 200);
    let rev = app.revision("s");
    let again = send(&app, "POST", "/v1/stores/s/participants", Some(dan), None).await;
    status(&again, 201);
    assert_eq!(app.revision("s"), rev + 1, "a create after a removal creates the participant again");
}

#[tokio::test]
async fn a_keyed_grant_is_written_once_and_its_retry_answers_the_recorded_outcome() {
    let app = TestApp::new();
    setup(&app).await;
    let path = "/v1/stores/s/items/i1/grants";
    let first = send(&app, "POST", path, Some(grant_body()), Some("grant-1")).await;
    status(&first, 201);
    assert_eq!(first.1["outcome"], "granted");
    let rev = app.revision("s");
    assert_eq!(first.1["revision"], json!(rev));

    // The grant is revoked meanwhile: without the key, the same request would grant anew.
    let grant = first.1["ids"][0].as_str().expect("grant id").to_string();
    status(&send(&app, "DELETE", &format!("/v1/stores/s/grants/{grant}"), None, None).await, 200);
    let after_revoke = app.revision("s");
    let retry = send(&app, "POST", path, Some(grant_body()), Some("grant-1")).await;
    status(&retry, 201);
    assert_eq!(retry.1, first.1, "the retry answers the recorded outcome: ids, revision and token");
    assert_eq!(app.revision("s"), after_revoke, "the retry wrote nothing");

    // The same key with another body, or from another route, is refused and writes nothing.
    let other = json!({"members": ["cat"]});
    refused(&send(&app, "POST", path, Some(other), Some("grant-1")).await, 422, "idempotency_key_reused");
    let p = json!({"id": "dan", "kind": "person"});
    refused(
        &send(&app, "POST", "/v1/stores/s/participants", Some(p), Some("grant-1")).await,
        422,
        "idempotency_key_reused",
    );
    assert_eq!(app.revision("s"), after_revoke);

    // Without a key the same request is a new write (here: a new grant, the old one being revoked).
    let unkeyed = send(&app, "POST", path, Some(grant_body()), None).await;
    status(&unkeyed, 201);
    assert_ne!(unkeyed.1["ids"], first.1["ids"]);
    app.earshot.store("s").expect("store").verify().expect("verify");
}

#[tokio::test]
async fn a_keyed_use_consumes_once_however_often_it_is_retried() {
    let app = TestApp::new();
    setup(&app).await;
    let first = send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("use-1")).await;
    status(&first, 200);
    assert_eq!((first.1["outcome"].clone(), first.1["decision"]["allowed"].clone()), (json!("consumed"), json!(true)));
    let rev = app.revision("s");
    for _ in 0..3 {
        let retry = send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("use-1")).await;
        status(&retry, 200);
        assert_eq!(retry.1, first.1, "same decision, revision and token");
    }
    assert_eq!(app.revision("s"), rev, "the retries wrote nothing");
    assert_eq!(uses_left(&app).await, json!(1), "one use consumed");

    // A second, different use takes the last one; then a denial is not recorded (nothing was
    // written), so its retry runs again.
    status(&send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("use-2")).await, 200);
    assert_eq!(uses_left(&app).await, json!(0));
    let denied = send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("use-3")).await;
    assert_eq!(denied.1["outcome"], "denied", "{}", denied.1);
    let rev = app.revision("s");
    let again = send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("use-3")).await;
    assert_eq!(again.1["outcome"], "denied");
    assert_eq!(app.revision("s"), rev);
    let h = app.earshot.store("s").expect("store");
    h.verify().expect("verify");
    let keys: Vec<String> =
        h.durable_records().expect("records").idempotency.keys.iter().map(|k| k.key.clone()).collect();
    assert_eq!(keys.len(), 2, "use-1 and use-2 recorded, the denial not: {keys:?}");
}

#[tokio::test]
async fn a_refused_keyed_write_is_not_recorded_and_its_retry_runs_again() {
    let app = TestApp::new();
    setup(&app).await;
    let path = "/v1/stores/s/items/i2/grants";
    refused(&send(&app, "POST", path, Some(grant_body()), Some("k")).await, 404, "item_not_found");
    let item = json!({"id": "i2", "owner": "ann", "origin": "owner_private"});
    status(&send(&app, "POST", "/v1/stores/s/items", Some(item), None).await, 201);
    let retry = send(&app, "POST", path, Some(grant_body()), Some("k")).await;
    status(&retry, 201);
    assert_eq!(retry.1["outcome"], "granted");
}

#[tokio::test]
async fn malformed_keys_are_refused_before_anything_runs() {
    let app = TestApp::new();
    setup(&app).await;
    let rev = app.revision("s");
    let long = "k".repeat(256);
    for bad in ["", "two words", long.as_str()] {
        let got = send(&app, "POST", "/v1/stores/s/items/i1/grants", Some(grant_body()), Some(bad)).await;
        refused(&got, 400, "invalid_idempotency_key");
    }
    let mut req = Request::builder()
        .method("POST")
        .uri("/v1/stores/s/items/i1/grants")
        .header("content-type", "application/json")
        .header("idempotency-key", "a")
        .header("idempotency-key", "b");
    let got = app.send(req.body(Body::from(grant_body().to_string())).expect("request")).await;
    refused(&got, 400, "invalid_idempotency_key");
    req = Request::builder()
        .method("POST")
        .uri("/v1/stores/s/items/i1/grants")
        .header("content-type", "application/json")
        .header("idempotency-key", &b"caf\xc3\xa9"[..]);
    let got = app.send(req.body(Body::from(grant_body().to_string())).expect("request")).await;
    refused(&got, 400, "invalid_idempotency_key");
    assert_eq!(app.revision("s"), rev);
    status(&send(&app, "POST", "/v1/stores/s/items/i1/grants", Some(grant_body()), Some(&"k".repeat(255))).await, 201);
}

#[tokio::test]
async fn the_caller_is_part_of_the_request() {
    let tokens = ["one", "two"].map(|n| TokenConfig {
        name: n.into(),
        token: format!("{n}-secret-0123456789"),
        scope: Scope::Admin,
        stores: None,
    });
    let app = TestApp::with_tokens(tokens.to_vec());
    let one = Some("one-secret-0123456789");
    let two = Some("two-secret-0123456789");
    status(&send_as(&app, "POST", "/v1/stores", Some(json!({"id": "s"})), None, one).await, 201);
    let p = json!({"id": "ann", "kind": "person"});
    let first = send_as(&app, "POST", "/v1/stores/s/participants", Some(p.clone()), Some("k"), one).await;
    status(&first, 201);
    let replay = send_as(&app, "POST", "/v1/stores/s/participants", Some(p.clone()), Some("k"), one).await;
    assert_eq!(replay.1, first.1);
    let other = send_as(&app, "POST", "/v1/stores/s/participants", Some(p), Some("k"), two).await;
    refused(&other, 422, "idempotency_key_reused");
}

#[tokio::test]
async fn keys_expire_after_their_window_and_are_pruned_by_later_writes() {
    let app = TestApp::new();
    setup(&app).await;
    let path = "/v1/stores/s/items/i1/grants";
    let first = send(&app, "POST", path, Some(grant_body()), Some("g")).await;
    status(&first, 201);
    let grant = first.1["ids"][0].as_str().expect("grant").to_string();
    status(&send(&app, "DELETE", &format!("/v1/stores/s/grants/{grant}"), None, None).await, 200);

    app.clock.set(T0_MS + KEY_TTL_MS - 1);
    let within = send(&app, "POST", path, Some(grant_body()), Some("g")).await;
    assert_eq!(within.1, first.1, "still answered one millisecond before the window closes");

    app.clock.set(T0_MS + KEY_TTL_MS);
    let h = app.earshot.store("s").expect("store");
    let keys = || h.durable_records().expect("records").idempotency.keys.len();
    assert_eq!(keys(), 1, "expired but not yet pruned");
    // Past the window the key is free: the request runs again (a new grant), and the write
    // that records it anew replaces the expired record.
    let later = send(&app, "POST", path, Some(grant_body()), Some("g")).await;
    status(&later, 201);
    assert_ne!(later.1["ids"], first.1["ids"]);
    assert_eq!(keys(), 1);

    // Any write prunes keys expired at its time.
    app.clock.set(T0_MS + 3 * KEY_TTL_MS);
    status(
        &send(&app, "POST", "/v1/stores/s/participants", Some(json!({"id": "dan", "kind": "person"})), None).await,
        201,
    );
    assert_eq!(keys(), 0, "pruned by the write");
    h.verify().expect("verify");
}

/// Records a keyed grant and a keyed use, restarts over the same records, and checks that the
/// retries answer as before without writing; `verify` agrees before and after.
fn survives_a_restart(ds: &Datastore) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let open = || {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let earshot =
            Arc::new(Earshot::open_with(ds.open().expect("backend"), clock.clone(), Config::default()).expect("open"));
        let router = earshot_api::router(AppState::new(earshot.clone(), Auth::disabled()));
        TestApp { earshot, clock, router }
    };
    let (grant, used, item, rev) = rt.block_on(async {
        let app = open();
        setup(&app).await;
        let grant = send(&app, "POST", "/v1/stores/s/items/i1/grants", Some(grant_body()), Some("g")).await;
        status(&grant, 201);
        let used = send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("u")).await;
        status(&used, 200);
        let item = json!({"id": "i9", "owner": "ann", "content": "x", "origin": "public"});
        let created = send(&app, "POST", "/v1/stores/s/items", Some(item), None).await;
        status(&created, 201);
        app.earshot.store("s").expect("store").verify().expect("verify before the restart");
        (grant.1, used.1, created.1, app.revision("s"))
    });
    rt.block_on(async {
        let app = open();
        assert_eq!(app.revision("s"), rev);
        app.earshot.store("s").expect("store").verify().expect("verify after the restart");
        let g = send(&app, "POST", "/v1/stores/s/items/i1/grants", Some(grant_body()), Some("g")).await;
        assert_eq!(g.1, grant);
        let u = send(&app, "POST", "/v1/stores/s/uses", Some(use_body()), Some("u")).await;
        assert_eq!(u.1, used);
        let body = json!({"id": "i9", "owner": "ann", "content": "x", "origin": "public"});
        let i = send(&app, "POST", "/v1/stores/s/items", Some(body), None).await;
        assert_eq!((i.0.as_u16(), &i.1["ids"]), (201, &item["ids"]));
        refused(
            &send(&app, "POST", "/v1/stores/s/items/i1/grants", Some(json!({"members": ["cat"]})), Some("g")).await,
            422,
            "idempotency_key_reused",
        );
        assert_eq!(app.revision("s"), rev, "nothing written by the retries");
        assert_eq!(uses_left(&app).await, json!(1));
    });
}

#[test]
fn keys_survive_a_restart_on_sled() {
    let dir = tempfile::tempdir().expect("tempdir");
    survives_a_restart(&Datastore::Dir(dir.path().to_path_buf()));
}

#[test]
fn keys_survive_a_restart_on_postgres() {
    let Some(ds) = Datastore::postgres("idempotency").expect("PostgreSQL") else { return };
    survives_a_restart(&ds);
}
