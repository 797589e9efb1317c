//! Owns the HTTP tests of data-subject consent (SPEC §6.3): the consent and withdrawal routes,
//! their refusals (unknown grant, not a subject, malformed body, reader token), the answers and
//! views they change, and that consent survives export, import and a rebuild (`verify`).

use axum::http::StatusCode;
use earshot_api::{Scope, TokenConfig};
use earshot_tests::TestApp;
use serde_json::{json, Value};

const ADMIN: &str = "admin-secret-0123456789";
const READER: &str = "reader-secret-0123456789";

fn token(name: &str, secret: &str, scope: Scope) -> TokenConfig {
    TokenConfig { name: name.to_string(), token: secret.to_string(), scope, stores: None }
}

#[track_caller]
fn answer(got: &(StatusCode, Value), status: u16, code: Option<&str>) {
    let got_code = got.1["error"]["code"].as_str();
    assert_eq!((got.0.as_u16(), got_code), (status, code), "unexpected answer: {} {}", got.0, got.1);
}

fn check_body(item: &str, viewers: &[&str]) -> Value {
    json!({"item": item, "container": {"owner": "owner", "viewers": {"participants": viewers}}})
}

/// Store `s`: owner, bob, carol, dan; item `x` about bob and carol, owner-private; a grant of
/// `x` to dan (pending). Returns the grant id.
async fn setup(app: &TestApp, tok: Option<&str>) -> String {
    answer(&app.call_with("POST", "/v1/stores", Some(json!({"id": "s"})), tok).await, 201, None);
    for p in ["owner", "bob", "carol", "dan"] {
        let r = app.call_with("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"})), tok).await;
        answer(&r, 201, None);
    }
    let item = json!({"id": "x", "owner": "owner", "origin": "owner_private", "subjects": ["carol", "bob", "bob"]});
    answer(&app.call_with("POST", "/v1/stores/s/items", Some(item), tok).await, 201, None);
    let g = app.call_with("POST", "/v1/stores/s/items/x/grants", Some(json!({"members": ["dan"]})), tok).await;
    answer(&g, 201, None);
    assert_eq!(g.1["reason"], "consent_pending", "{}", g.1);
    g.1["ids"][0].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn consent_routes_decide_and_refuse_with_stable_codes() {
    let app = TestApp::with_tokens(vec![token("root", ADMIN, Scope::Admin), token("viewer", READER, Scope::Reader)]);
    let admin = Some(ADMIN);
    let g = setup(&app, admin).await;
    let consents = format!("/v1/stores/s/grants/{g}/consents");
    let view = app.call_with("GET", "/v1/stores/s/items/x", None, admin).await;
    assert_eq!(view.1["subjects"], json!(["bob", "carol"]), "{}", view.1);
    assert_eq!(view.1["grants"][0]["consent"]["effective"], false, "{}", view.1);
    let d = app.call_with("POST", "/v1/stores/s/check", Some(check_body("x", &["dan"])), Some(READER)).await;
    assert_eq!((d.1["admitted"].clone(), d.1["reason"].clone()), (json!(false), json!("denied_consent_pending")));

    // Refusals write nothing.
    let rev = app.revision("s");
    let bob = || Some(json!({"subject": "bob"}));
    answer(&app.call_with("POST", &consents, bob(), Some(READER)).await, 403, Some("forbidden"));
    answer(&app.call_with("DELETE", &format!("{consents}/bob"), None, Some(READER)).await, 403, Some("forbidden"));
    answer(
        &app.call_with("POST", "/v1/stores/s/grants/nope/consents", bob(), admin).await,
        404,
        Some("grant_not_found"),
    );
    answer(
        &app.call_with("DELETE", "/v1/stores/s/grants/nope/consents/bob", None, admin).await,
        404,
        Some("grant_not_found"),
    );
    answer(&app.call_with("POST", &consents, Some(json!({"subject": "dan"})), admin).await, 403, Some("not_a_subject"));
    answer(
        &app.call_with("POST", &consents, Some(json!({"subject": "owner"})), admin).await,
        403,
        Some("not_a_subject"),
    );
    answer(&app.call_with("POST", &consents, Some(json!({})), admin).await, 400, Some("invalid_request"));
    answer(&app.call_with("POST", &consents, Some(json!({"subject": 7})), admin).await, 400, Some("invalid_request"));
    answer(
        &app.call_with("POST", &consents, Some(json!({"subject": "bob", "also": 1})), admin).await,
        400,
        Some("invalid_request"),
    );
    answer(
        &app.call_with("POST", &consents, Some(json!({"subject": "Not An Id"})), admin).await,
        400,
        Some("invalid_id"),
    );
    let bad = app.send(
        axum::http::Request::builder()
            .method("POST")
            .uri(&consents)
            .header("authorization", format!("Bearer {ADMIN}"))
            .header("content-type", "application/json")
            .body(axum::body::Body::from("{nope"))
            .expect("request"),
    );
    answer(&bad.await, 400, Some("malformed_json"));
    answer(
        &app.call_with("DELETE", &format!("{consents}/Not%20An%20Id"), None, admin).await,
        400,
        Some("invalid_path"),
    );
    let item = json!({"id": "y", "owner": "owner", "origin": "owner_private", "subjects": ["ghost"]});
    answer(&app.call_with("POST", "/v1/stores/s/items", Some(item), admin).await, 404, Some("subject_not_found"));
    let many: Vec<String> = (0..33).map(|n| format!("p{n}")).collect();
    let item = json!({"id": "y", "owner": "owner", "origin": "owner_private", "subjects": many});
    answer(&app.call_with("POST", "/v1/stores/s/items", Some(item), admin).await, 400, Some("limit_exceeded"));
    assert_eq!(app.revision("s"), rev, "refused requests must not write");

    // Bob consents: still pending (carol missing); a repeat writes nothing.
    let r = app.call_with("POST", &consents, bob(), admin).await;
    answer(&r, 200, None);
    assert_eq!((r.1["outcome"].clone(), r.1["reason"].clone()), (json!("consented"), json!("consent_pending")));
    assert_eq!(app.revision("s"), rev + 1);
    answer(&app.call_with("POST", &consents, bob(), admin).await, 200, None);
    assert_eq!(app.revision("s"), rev + 1, "a repeated consent writes nothing");
    // Carol consents: effective.
    let r = app.call_with("POST", &consents, Some(json!({"subject": "carol"})), admin).await;
    answer(&r, 200, None);
    assert!(r.1.get("reason").is_none(), "{}", r.1);
    let d = app.call_with("POST", "/v1/stores/s/check", Some(check_body("x", &["dan"])), Some(READER)).await;
    assert_eq!((d.1["reason"].clone(), d.1["grant"].clone()), (json!("admitted_grant"), json!(g)), "{}", d.1);
    let exp = app.call_with("GET", "/v1/stores/s/items/x/audiences", None, admin).await;
    assert_eq!(exp.1["audiences"][1]["consent"]["effective"], true, "{}", exp.1);
    assert!(exp.1["audiences"][1]["consent"].get("history").is_none(), "{}", exp.1);

    // Carol withdraws: pending from this revision; the history keeps every decision.
    let r = app.call_with("DELETE", &format!("{consents}/carol"), None, admin).await;
    answer(&r, 200, None);
    assert_eq!(r.1["outcome"], "withdrawn");
    let d = app.call_with("POST", "/v1/stores/s/check", Some(check_body("x", &["dan"])), Some(READER)).await;
    assert_eq!(d.1["reason"], "denied_consent_pending", "{}", d.1);
    let lookup = json!({"container": {"owner": "owner", "viewers": {"participants": ["dan"]}}});
    let l = app.call_with("POST", "/v1/stores/s/lookup", Some(lookup), Some(READER)).await;
    assert_eq!(l.1["items"], json!([]), "{}", l.1);
    let view = app.call_with("GET", "/v1/stores/s/items/x", None, admin).await;
    let c = &view.1["grants"][0]["consent"];
    assert_eq!(c["missing"], json!(["carol"]), "{}", view.1);
    assert_eq!(c["withdrawn"], json!(["carol"]), "{}", view.1);
    let actions: Vec<&str> =
        c["history"].as_array().into_iter().flatten().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions, ["consented", "consented", "withdrawn"], "{}", view.1);
    let tuples = app.call_with("GET", "/v1/stores/s/relationships?relation=granted", None, admin).await;
    assert!(tuples.1.to_string().contains("\"consent_pending\":true"), "{}", tuples.1);
    let sets = app.call_with("GET", "/v1/stores/s/items/x/viewers", None, admin).await;
    assert_eq!(sets.1["audiences"].as_array().map(Vec::len), Some(1), "a pending grant is no viewer set: {}", sets.1);

    // Revoked grants take no decision.
    answer(&app.call_with("DELETE", &format!("/v1/stores/s/grants/{g}"), None, admin).await, 200, None);
    answer(
        &app.call_with("POST", &consents, Some(json!({"subject": "carol"})), admin).await,
        409,
        Some("grant_already_revoked"),
    );

    // Index agreement and a rebuild from the records.
    let store = app.earshot.store("s").unwrap_or_else(|e| panic!("{e}"));
    store.verify().unwrap_or_else(|e| panic!("verify: {e}"));
}

/// Consent records go through export and import: the imported store decides the same.
#[tokio::test]
async fn consent_survives_export_and_import() {
    let app = TestApp::new();
    let g = setup(&app, None).await;
    for s in ["bob", "carol"] {
        answer(
            &app.call("POST", &format!("/v1/stores/s/grants/{g}/consents"), Some(json!({"subject": s}))).await,
            200,
            None,
        );
    }
    answer(&app.call("DELETE", &format!("/v1/stores/s/grants/{g}/consents/bob"), None).await, 200, None);
    let mut bytes: Vec<u8> = Vec::new();
    app.earshot
        .export("s")
        .unwrap_or_else(|e| panic!("export: {e}"))
        .write_to(&mut bytes)
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8(bytes.clone()).unwrap_or_default();
    assert!(text.contains("\"consent\""), "the export carries the consent state: {text}");
    let other = TestApp::new();
    other.earshot.import_store("s", &mut &bytes[..]).unwrap_or_else(|e| panic!("import: {e}"));
    for (a, which) in [(&app, "original"), (&other, "imported")] {
        let d = a.call("POST", "/v1/stores/s/check", Some(check_body("x", &["dan"]))).await;
        assert_eq!(d.1["reason"], "denied_consent_pending", "{which}: {}", d.1);
        let v = a.call("GET", "/v1/stores/s/items/x", None).await;
        assert_eq!(v.1["grants"][0]["consent"]["withdrawn"], json!(["bob"]), "{which}: {}", v.1);
        assert_eq!(v.1["subjects"], json!(["bob", "carol"]), "{which}: {}", v.1);
    }
    other.earshot.store("s").unwrap_or_else(|e| panic!("{e}")).verify().unwrap_or_else(|e| panic!("verify: {e}"));
}

/// SPEC §6.2 and §6.3 on one item: bob's words about carol in the owner's memory, summarised.
/// The grant of the summary waits for carol (its subject by inheritance); once she consents the
/// summary is admitted as data (bob's words are untrusted), then as an instruction once the owner
/// trusts bob; withdrawing consent denies it again. Export, import and `verify` keep all of it.
#[tokio::test]
async fn consent_and_roles_compose_on_one_item() {
    let app = TestApp::new();
    answer(&app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await, 201, None);
    for p in ["owner", "bob", "carol", "dan"] {
        answer(
            &app.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await,
            201,
            None,
        );
    }
    let item = json!({"id": "b1", "owner": "owner", "origin": "owner_private", "author": "bob", "subjects": ["carol"]});
    answer(&app.call("POST", "/v1/stores/s/items", Some(item)).await, 201, None);
    let derive = json!({"disposition": "intersection", "owner": "owner", "sources": ["b1"], "id": "d1"});
    answer(&app.call("POST", "/v1/stores/s/derivations", Some(derive)).await, 201, None);
    let g = app.call("POST", "/v1/stores/s/items/d1/grants", Some(json!({"members": ["dan"]}))).await;
    answer(&g, 201, None);
    assert_eq!(g.1["reason"], "consent_pending", "the summary inherits carol as its subject: {}", g.1);
    let g = g.1["ids"][0].as_str().unwrap_or_default().to_string();
    let check =
        |viewers: &'static [&'static str]| app.call("POST", "/v1/stores/s/check", Some(check_body("d1", viewers)));

    let d = check(&["dan"]).await;
    assert_eq!((d.1["reason"].clone(), d.1.get("role")), (json!("denied_consent_pending"), None), "{}", d.1);
    answer(
        &app.call("POST", &format!("/v1/stores/s/grants/{g}/consents"), Some(json!({"subject": "carol"}))).await,
        200,
        None,
    );
    let d = check(&["dan"]).await;
    assert_eq!(d.1["reason"], "admitted_grant", "{}", d.1);
    assert_eq!((d.1["role"].clone(), d.1["author"].clone()), (json!("data"), json!("owner")), "{}", d.1);
    assert_eq!(d.1["untrusted_source"], json!({"item": "b1", "author": "bob"}), "{}", d.1);

    let t = app.call("POST", "/v1/stores/s/trust", Some(json!({"owner": "owner", "participant": "bob"}))).await;
    answer(&t, 201, None);
    let d = check(&["dan"]).await;
    assert_eq!(
        (d.1["reason"].clone(), d.1["role"].clone()),
        (json!("admitted_grant"), json!("instruction")),
        "{}",
        d.1
    );

    answer(&app.call("DELETE", &format!("/v1/stores/s/grants/{g}/consents/carol"), None).await, 200, None);
    let d = check(&["dan"]).await;
    assert_eq!(d.1["reason"], "denied_consent_pending", "{}", d.1);
    // The owner still hears it, through the origin audience, as an instruction.
    let d = check(&[]).await;
    assert_eq!(
        (d.1["reason"].clone(), d.1["role"].clone()),
        (json!("admitted_origin"), json!("instruction")),
        "{}",
        d.1
    );

    let mut bytes: Vec<u8> = Vec::new();
    app.earshot
        .export("s")
        .unwrap_or_else(|e| panic!("export: {e}"))
        .write_to(&mut bytes)
        .unwrap_or_else(|e| panic!("{e}"));
    let other = TestApp::new();
    other.earshot.import_store("s", &mut &bytes[..]).unwrap_or_else(|e| panic!("import: {e}"));
    for (a, which) in [(&app, "original"), (&other, "imported")] {
        a.earshot
            .store("s")
            .unwrap_or_else(|e| panic!("{e}"))
            .verify()
            .unwrap_or_else(|e| panic!("{which} verify: {e}"));
        let v = a.call("GET", "/v1/stores/s/items/b1", None).await;
        assert_eq!(
            (v.1["author"].clone(), v.1["subjects"].clone()),
            (json!("bob"), json!(["carol"])),
            "{which}: {}",
            v.1
        );
        let d = a.call("POST", "/v1/stores/s/check", Some(check_body("d1", &["dan"]))).await;
        assert_eq!(d.1["reason"], "denied_consent_pending", "{which}: {}", d.1);
    }
}
