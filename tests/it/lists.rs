//! Lists, relationship tuples and reverse questions over HTTP: pagination visits every element
//! once, filters select exactly what they name, cursors are refused across lists and stores,
//! scopes hold, tuples equal the durable records, store deletion needs its confirmation and
//! survives a restart, and the reverse device questions agree with `authorize`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use earshot_api::{AppState, Auth, Scope, TokenConfig};
use earshot_core::path::{Path, PathPattern};
use earshot_store::{Config, Earshot, ManualClock};
use earshot_tests::{Datastore, TestApp, T0_MS};
use serde_json::{json, Value};

#[track_caller]
fn ok(got: &(axum::http::StatusCode, Value), status: u16) {
    assert_eq!(got.0.as_u16(), status, "unexpected answer: {} {}", got.0, got.1);
}

#[track_caller]
fn refused(got: &(axum::http::StatusCode, Value), status: u16, code: &str) {
    let c = got.1["error"]["code"].as_str().unwrap_or("<none>");
    assert_eq!((got.0.as_u16(), c), (status, code), "unexpected answer: {} {}", got.0, got.1);
}

/// A write that answers 200 or 201 (an update, a revocation, or a creation).
#[track_caller]
fn done(got: &(axum::http::StatusCode, Value)) {
    assert!(got.0.is_success(), "unexpected answer: {} {}", got.0, got.1);
}

async fn post(app: &TestApp, path: &str, body: Value) {
    ok(&app.call("POST", path, Some(body)).await, 201);
}

const SCHEMA: &str = "relation family {\n  opens status/waking\n  opens medication/**\n}\n\
relation care {\n  opens vitals/** for read, subscribe\n}\nrelation guardian {\n  includes family\n  opens location/*\n}\n";

/// Store `id`: people, identities (one ambiguous), items of two owners with every kind of
/// origin, a derivation, a frozen item, grants (one revoked, one expiring), devices, a schema,
/// relation edges (one revoked) and a capability chain (its root revoked later by the caller).
async fn fixture(app: &TestApp, id: &str) {
    let e = format!("/v1/stores/{id}");
    post(app, "/v1/stores", json!({"id": id})).await;
    for p in ["owner", "alice", "bob", "carol", "dave"] {
        post(app, &format!("{e}/participants"), json!({"id": p, "kind": "person"})).await;
    }
    for n in 0..7 {
        post(app, &format!("{e}/participants"), json!({"id": format!("p{n}"), "kind": "agent", "name": "x"})).await;
    }
    post(app, &format!("{e}/identities"), json!({"transport": "email", "identifier": "b@x", "participant": "bob"}))
        .await;
    for p in ["alice", "bob"] {
        post(app, &format!("{e}/identities"), json!({"transport": "chat", "identifier": "shared", "participant": p}))
            .await;
    }
    let origins = [
        json!("public"),
        json!("owner_private"),
        json!({"participants": ["alice"]}),
        json!({"participants": ["alice", "bob"]}),
        json!({"participants": ["bob", "carol"]}),
    ];
    for n in 0..20 {
        let owner = if n % 3 == 0 { "alice" } else { "owner" };
        let origin = if owner == "alice" && n % 5 == 2 { json!("public") } else { origins[n % 5].clone() };
        post(app, &format!("{e}/items"), json!({"id": format!("i{n:02}"), "owner": owner, "origin": origin})).await;
    }
    // Bob's words, recorded in the owner's memory (SPEC §6.2).
    let quoted = json!({"id": "quoted", "owner": "owner", "author": "bob", "origin": {"participants": ["bob"]}});
    post(app, &format!("{e}/items"), quoted).await;
    let derive = json!({"disposition": "intersection", "owner": "owner", "sources": ["i02", "i08"], "id": "sum"});
    post(app, &format!("{e}/derivations"), derive).await;
    done(&app.call("POST", &format!("{e}/items/i04/lifecycle"), Some(json!({"action": "freeze"}))).await);
    post(app, &format!("{e}/items/i01/grants"), json!({"members": ["carol"]})).await;
    let expiring = json!({"members": ["dave"], "expires_at": "2026-01-01T01:00:00Z"});
    post(app, &format!("{e}/items/i02/grants"), expiring).await;
    let revoked = app.call("POST", &format!("{e}/items/i05/grants"), Some(json!({"members": ["bob"]}))).await;
    ok(&revoked, 201);
    let g = revoked.1["ids"][0].as_str().expect("grant id").to_string();
    ok(&app.call("DELETE", &format!("{e}/grants/{g}"), None).await, 200);
    done(&app.call("PUT", &format!("{e}/schema"), Some(json!({"schema": SCHEMA}))).await);
    for (d, o) in [("fridge", "alice"), ("clock", "owner"), ("glasses", "owner")] {
        post(app, &format!("{e}/devices"), json!({"id": d, "owner": o})).await;
    }
    for (id, g, r, t) in
        [("e1", "alice", "family", "owner"), ("e2", "alice", "care", "carol"), ("e3", "owner", "guardian", "bob")]
    {
        post(app, &format!("{e}/relations"), json!({"id": id, "grantor": g, "relation": r, "grantee": t})).await;
    }
    done(&app.call("DELETE", &format!("{e}/relations/e3?by=owner"), None).await);
    let caps = [
        json!({"id": "g", "issuer": "owner", "holder": "glasses", "device": "glasses", "paths": ["calendar/**"], "actions": ["read"]}),
        json!({"id": "c", "issuer": "glasses", "holder": "clock", "device": "glasses", "paths": ["calendar/next"], "actions": ["read"], "parent": "g"}),
        json!({"id": "k", "issuer": "owner", "holder": "bob", "device": "clock", "paths": ["alarm/*"], "actions": ["read", "write"]}),
    ];
    for c in caps {
        post(app, &format!("{e}/capabilities"), c).await;
    }
}

/// Every element of a list, page by page with `limit`, asserting each page's shape.
async fn all_pages(app: &TestApp, path: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    let sep = if path.contains('?') { '&' } else { '?' };
    for _ in 0..1000 {
        let url = match &cursor {
            Some(c) => format!("{path}{sep}limit={limit}&cursor={c}"),
            None => format!("{path}{sep}limit={limit}"),
        };
        let got = app.call("GET", &url, None).await;
        ok(&got, 200);
        let page = got.1["results"].as_array().expect("results").clone();
        assert!(page.len() <= limit, "{url}: {} elements", page.len());
        assert!(got.1["revision"].is_u64() || path == "/v1/stores", "{url}: no revision: {}", got.1);
        out.extend(page);
        match got.1["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
    }
    panic!("{path}: more than 1000 pages");
}

/// A tuple as one comparable line.
fn line(t: &Value) -> String {
    format!(
        "{}:{}#{}@{}:{}",
        t["resource"]["type"].as_str().unwrap_or("?"),
        t["resource"]["id"].as_str().unwrap_or("?"),
        t["relation"].as_str().unwrap_or("?"),
        t["subject"]["type"].as_str().unwrap_or("?"),
        t["subject"]["id"].as_str().unwrap_or("?"),
    )
}

const LISTS: [&str; 8] =
    ["participants", "identities", "items", "grants", "devices", "relations", "capabilities", "relationships"];

#[tokio::test]
async fn pages_visit_every_element_exactly_once() {
    let app = TestApp::new();
    fixture(&app, "s").await;
    let records = app.earshot.store("s").expect("store").durable_records().expect("records");
    let expected_len = BTreeMap::from([
        ("participants", records.participants.len()),
        ("identities", records.identities.len()),
        ("items", records.items.len()),
        ("grants", records.grants.len()),
        ("devices", records.devices.devices.len()),
        ("relations", records.devices.edges.len()),
        ("capabilities", records.devices.capabilities.len()),
    ]);
    for list in LISTS {
        let path = format!("/v1/stores/s/{list}");
        let whole = all_pages(&app, &path, 1000).await;
        if let Some(n) = expected_len.get(list) {
            assert_eq!(whole.len(), *n, "{list}: every record listed");
        }
        for limit in [1, 3, 7] {
            let paged = all_pages(&app, &path, limit).await;
            assert_eq!(paged, whole, "{list} with limit {limit}: the same elements in the same order");
        }
        let keys: Vec<String> = whole
            .iter()
            .map(|v| if list == "relationships" { format!("{}{}", line(v), v["grant"]) } else { v.to_string() })
            .collect();
        let unique: BTreeSet<&String> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len(), "{list}: no element twice");
    }
    // Sequence-ordered lists are in creation order, the others by id.
    let ids = |v: &[Value]| v.iter().map(|x| x["id"].as_str().unwrap_or("").to_string()).collect::<Vec<_>>();
    let items = ids(&all_pages(&app, "/v1/stores/s/items", 4).await);
    let mut created: Vec<(u32, String)> = records.items.iter().map(|i| (i.seq, i.id.clone())).collect();
    created.sort();
    assert_eq!(items, created.into_iter().map(|(_, i)| i).collect::<Vec<_>>());
    let parts = ids(&all_pages(&app, "/v1/stores/s/participants", 4).await);
    let mut sorted = parts.clone();
    sorted.sort();
    assert_eq!(parts, sorted);
    // A write between pages neither repeats nor skips what was there: the new item comes last.
    let first = app.call("GET", "/v1/stores/s/items?limit=5", None).await;
    post(&app, "/v1/stores/s/items", json!({"id": "late", "owner": "owner", "origin": "public"})).await;
    let cursor = first.1["next_cursor"].as_str().expect("cursor");
    let mut rest = all_pages(&app, &format!("/v1/stores/s/items?cursor={cursor}"), 1000).await;
    let mut seen = first.1["results"].as_array().expect("results").clone();
    seen.append(&mut rest);
    let mut want = items.clone();
    want.push("late".into());
    assert_eq!(ids(&seen), want);
}

#[tokio::test]
async fn filters_select_exactly_what_they_name() {
    let app = TestApp::new();
    fixture(&app, "s").await;
    let whole = |list: &str| {
        let app = &app;
        let path = format!("/v1/stores/s/{list}");
        async move { all_pages(app, &path, 1000).await }
    };
    let (items, grants, relations, caps, devices, parts, idents) = (
        whole("items").await,
        whole("grants").await,
        whole("relations").await,
        whole("capabilities").await,
        whole("devices").await,
        whole("participants").await,
        whole("identities").await,
    );
    let member = |v: &Value, p: &str| v["members"].as_array().is_some_and(|m| m.iter().any(|x| x == p));
    let digest =
        items.iter().find(|i| i["id"] == "i03").expect("i03")["audience"]["digest"].as_str().unwrap().to_string();
    let aud_filter = format!("audience={digest}");
    type Pred<'a> = Box<dyn Fn(&Value) -> bool + 'a>;
    let cases: Vec<(&str, &str, &Vec<Value>, Pred<'_>)> = vec![
        ("items", "owner=alice", &items, Box::new(|v| v["owner"] == "alice")),
        ("items", "state=frozen", &items, Box::new(|v| v["state"] == "frozen")),
        ("items", "member=bob", &items, Box::new(|v| member(&v["audience"], "bob"))),
        (
            "items",
            "member=bob&owner=owner",
            &items,
            Box::new(|v| member(&v["audience"], "bob") && v["owner"] == "owner"),
        ),
        ("items", &aud_filter, &items, Box::new(|v| v["audience"]["digest"] == digest.as_str())),
        ("items", "owner=nobody", &items, Box::new(|_| false)),
        ("items", "author=bob", &items, Box::new(|v| v["author"] == "bob")),
        // An unknown author (no `author`, heard by others) is nobody's, not the owner's.
        (
            "items",
            "author=owner",
            &items,
            Box::new(|v| v["owner"] == "owner" && v["author"].is_null() && v["author_unknown"].is_null()),
        ),
        ("items", "author=bob&member=alice", &items, Box::new(|_| false)),
        ("items", "author=nobody", &items, Box::new(|_| false)),
        ("grants", "item=i02", &grants, Box::new(|v| v["item"] == "i02")),
        ("grants", "status=revoked", &grants, Box::new(|v| v["revoked"] == true)),
        ("grants", "status=live", &grants, Box::new(|v| v["live"] == true)),
        ("grants", "member=carol", &grants, Box::new(|v| member(v, "carol"))),
        ("relations", "grantor=alice", &relations, Box::new(|v| v["grantor"] == "alice")),
        (
            "relations",
            "grantor=alice&grantee=carol",
            &relations,
            Box::new(|v| v["grantor"] == "alice" && v["grantee"] == "carol"),
        ),
        ("relations", "relation=family", &relations, Box::new(|v| v["relation"] == "family")),
        ("capabilities", "holder=clock", &caps, Box::new(|v| v["holder"] == "clock")),
        ("capabilities", "device=glasses", &caps, Box::new(|v| v["device"] == "glasses")),
        ("capabilities", "issuer=owner", &caps, Box::new(|v| v["issuer"] == "owner")),
        ("devices", "owner=owner", &devices, Box::new(|v| v["owner"] == "owner")),
        ("participants", "kind=device", &parts, Box::new(|v| v["kind"] == "device")),
        (
            "identities",
            "participant=bob",
            &idents,
            Box::new(|v| v["participants"].as_array().unwrap().iter().any(|p| p == "bob")),
        ),
        ("identities", "transport=chat", &idents, Box::new(|v| v["transport"] == "chat")),
    ];
    for (list, filter, all, pred) in cases {
        let want: Vec<Value> = all.iter().filter(|v| pred(v)).cloned().collect();
        for limit in [1, 2, 1000] {
            let got = all_pages(&app, &format!("/v1/stores/s/{list}?{filter}"), limit).await;
            assert_eq!(got, want, "{list}?{filter} with limit {limit}");
        }
    }
    // The fixture exercises every filter with something to find.
    assert!(items.iter().any(|v| v["state"] == "frozen") && grants.iter().any(|v| v["revoked"] == true));
    assert_eq!(items.iter().filter(|v| v["author"] == "bob").count(), 1, "one item has an author other than its owner");
    let ambiguous = idents.iter().find(|v| v["identifier"] == "shared").expect("shared identity");
    assert_eq!(ambiguous["resolves"], false);
}

#[tokio::test]
async fn cursors_limits_and_parameters_are_checked() {
    let app = TestApp::new();
    fixture(&app, "s").await;
    fixture(&app, "t").await;
    let first = app.call("GET", "/v1/stores/s/items?limit=2", None).await;
    let cursor = first.1["next_cursor"].as_str().expect("cursor").to_string();
    ok(&app.call("GET", &format!("/v1/stores/s/items?cursor={cursor}"), None).await, 200);
    for (path, code) in [
        (format!("/v1/stores/t/items?cursor={cursor}"), "invalid_cursor"),
        (format!("/v1/stores/s/grants?cursor={cursor}"), "invalid_cursor"),
        (format!("/v1/stores/s/relationships?cursor={cursor}"), "invalid_cursor"),
        ("/v1/stores/s/items?cursor=nonsense".into(), "invalid_cursor"),
        (format!("/v1/stores/s/items?cursor={}zz", &cursor[..cursor.len() - 2]), "invalid_cursor"),
        ("/v1/stores/s/items?limit=0".into(), "invalid_request"),
        ("/v1/stores/s/items?limit=1001".into(), "limit_exceeded"),
        ("/v1/stores/s/items?limit=-1".into(), "invalid_request"),
        ("/v1/stores/s/items?ownr=owner".into(), "invalid_request"),
        ("/v1/stores/s/items?owner=a&owner=b".into(), "invalid_request"),
        ("/v1/stores/s/items?owner=Bad!".into(), "invalid_id"),
        ("/v1/stores/s/items?author=Bad!".into(), "invalid_id"),
        ("/v1/stores/s/items?state=gone".into(), "invalid_request"),
        ("/v1/stores/s/items?audience=abc".into(), "invalid_request"),
        ("/v1/stores/s/relationships?resource_id=i01".into(), "invalid_request"),
        ("/v1/stores/s/relationships?resource_type=planet".into(), "invalid_request"),
        ("/v1/stores/s/relationships?relation=likes".into(), "invalid_request"),
        ("/v1/stores/s/relationships?subject_type=audience&subject_id=zz".into(), "invalid_request"),
        ("/v1/stores/s/items?at_least=1.0011223344556677".into(), "consistency_token_store_mismatch"),
        ("/v1/stores/s/items?at_least=x&at_exact=y".into(), "invalid_request"),
    ] {
        let got = app.call("GET", &path, None).await;
        refused(&got, 400, code);
    }
    // Consistency in the query: a token of this store, at least and exactly.
    let token = first.1["token"].as_str().expect("token").to_string();
    let rev = first.1["revision"].as_u64().expect("revision");
    let at_least = app.call("GET", &format!("/v1/stores/s/items?at_least={token}"), None).await;
    ok(&at_least, 200);
    post(&app, "/v1/stores/s/items", json!({"id": "newer", "owner": "owner", "origin": "public"})).await;
    let exact = app.call("GET", &format!("/v1/stores/s/items?at_exact={token}&limit=1000"), None).await;
    ok(&exact, 200);
    assert_eq!(exact.1["revision"], rev);
    assert_eq!(exact.1["latest_revision"], rev + 1, "read at an older revision names the newest");
    assert!(!exact.1["results"].as_array().unwrap().iter().any(|i| i["id"] == "newer"));
}

const ADMIN: &str = "admin-secret-0123456789";
const READER: &str = "reader-secret-0123456789";
const TENANT: &str = "tenant-secret-0123456789";

fn token(name: &str, secret: &str, scope: Scope, stores: Option<&[&str]>) -> TokenConfig {
    TokenConfig {
        name: name.into(),
        token: secret.into(),
        scope,
        stores: stores.map(|s| s.iter().map(|x| x.to_string()).collect()),
    }
}

#[tokio::test]
async fn scopes_hold_for_lists_and_deletion() {
    let app = TestApp::with_tokens(vec![
        token("root", ADMIN, Scope::Admin, None),
        token("viewer", READER, Scope::Reader, None),
        token("tenant", TENANT, Scope::Admin, Some(&["s"])),
    ]);
    for s in ["s", "t", "u"] {
        ok(&app.call_with("POST", "/v1/stores", Some(json!({"id": s})), Some(ADMIN)).await, 201);
    }
    let stores = |tok| {
        let app = &app;
        async move {
            let got = app.call_with("GET", "/v1/stores?limit=1000", None, Some(tok)).await;
            ok(&got, 200);
            got.1["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(stores(ADMIN).await, ["s", "t", "u"]);
    assert_eq!(stores(READER).await, ["s", "t", "u"]);
    assert_eq!(stores(TENANT).await, ["s"], "a token limited to one store lists only it");
    let paged = app.call_with("GET", "/v1/stores?limit=2", None, Some(READER)).await;
    let c = paged.1["next_cursor"].as_str().expect("cursor");
    let rest = app.call_with("GET", &format!("/v1/stores?cursor={c}"), None, Some(READER)).await;
    assert_eq!(rest.1["results"][0]["id"], "u");
    refused(&app.call("GET", "/v1/stores", None).await, 401, "unauthenticated");
    refused(&app.call_with("GET", "/v1/stores/t/items", None, Some(TENANT)).await, 403, "forbidden");
    refused(&app.call_with("GET", "/v1/stores/t/devices", None, Some(TENANT)).await, 403, "forbidden");
    ok(&app.call_with("GET", "/v1/stores/s/items", None, Some(TENANT)).await, 200);
    // Readers list what readers may read elsewhere (devices, edges, capabilities), not the
    // admin views (participants, identities, items, grants, tuples).
    for list in ["devices", "relations", "capabilities"] {
        ok(&app.call_with("GET", &format!("/v1/stores/s/{list}"), None, Some(READER)).await, 200);
    }
    for list in ["participants", "identities", "items", "grants", "relationships", "items/x/viewers"] {
        refused(&app.call_with("GET", &format!("/v1/stores/s/{list}"), None, Some(READER)).await, 403, "forbidden");
    }
    // Deleting needs admin on every store (as creating does).
    refused(&app.call_with("DELETE", "/v1/stores/s?confirm=s", None, Some(TENANT)).await, 403, "forbidden");
    refused(&app.call_with("DELETE", "/v1/stores/s?confirm=s", None, Some(READER)).await, 403, "forbidden");
    ok(&app.call_with("DELETE", "/v1/stores/s?confirm=s", None, Some(ADMIN)).await, 200);
    assert_eq!(stores(ADMIN).await, ["t", "u"]);
}

/// The tuples a store's durable records imply, built from the records alone.
fn tuples_of(r: &earshot_store::Records) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in &r.audiences {
        for m in &a.members {
            out.insert(format!("audience:{}#member@participant:{m}", a.digest));
        }
    }
    for i in &r.items {
        out.insert(format!("item:{}#origin@audience:{}", i.id, i.audience));
        for s in &i.sources {
            out.insert(format!("item:{}#derived_from@item:{s}", i.id));
        }
    }
    for g in &r.grants {
        out.insert(format!("item:{}#granted@audience:{}", g.item, g.audience));
    }
    for d in &r.devices.devices {
        out.insert(format!("device:{}#owner@participant:{}", d.id, d.owner));
    }
    for e in &r.devices.edges {
        out.insert(format!("participant:{}#relation:{}@participant:{}", e.grantor, e.relation, e.grantee));
    }
    for c in &r.devices.capabilities {
        out.insert(format!("capability:{}#held_by@participant:{}", c.id, c.holder));
        if let Some(p) = &c.parent {
            out.insert(format!("capability:{}#delegated_from@capability:{p}", c.id));
        }
    }
    out
}

#[tokio::test]
async fn tuples_equal_the_durable_records_under_every_filter() {
    let app = TestApp::new();
    fixture(&app, "s").await;
    let records = app.earshot.store("s").expect("store").durable_records().expect("records");
    let expected = tuples_of(&records);
    let all = all_pages(&app, "/v1/stores/s/relationships", 1000).await;
    let got: BTreeSet<String> = all.iter().map(line).collect();
    assert_eq!(got, expected, "the tuples are the records' relations, nothing more or less");
    // Every family is present in the fixture.
    for rel in [
        "#member@",
        "#origin@",
        "#granted@",
        "#derived_from@",
        "#owner@",
        "#relation:",
        "#delegated_from@",
        "#held_by@",
    ] {
        assert!(got.iter().any(|t| t.contains(rel)), "no {rel} tuple");
    }
    let grant = all.iter().find(|t| t["relation"] == "granted" && t["revoked"] == true).expect("revoked grant tuple");
    assert!(grant["grant"].is_string() && grant["live"] == false);
    // Each filter selects the matching subset, through the index or a scan, page by page.
    let digest = records.items.iter().find(|i| i.id == "i03").expect("i03").audience.clone();
    let shared_aud = records.audiences.iter().find(|a| a.members.len() > 1).expect("a shared audience").digest.clone();
    type Filter = (String, Box<dyn Fn(&str) -> bool>);
    let filters: Vec<Filter> = vec![
        ("resource_type=item&resource_id=sum".into(), Box::new(|t| t.starts_with("item:sum#"))),
        ("resource_type=item".into(), Box::new(|t| t.starts_with("item:"))),
        ("subject_type=participant&subject_id=bob".into(), Box::new(|t| t.ends_with("@participant:bob"))),
        ("relation=granted".into(), Box::new(|t| t.contains("#granted@"))),
        ("relation=relation:family".into(), Box::new(|t| t.contains("#relation:family@"))),
        ("resource_type=participant&resource_id=alice".into(), Box::new(|t| t.starts_with("participant:alice#"))),
        (
            "resource_type=participant&resource_id=alice&subject_type=participant&subject_id=carol".into(),
            Box::new(|t| t.starts_with("participant:alice#") && t.ends_with("@participant:carol")),
        ),
        ("subject_type=audience".into(), Box::new(|t| t.contains("@audience:"))),
        (
            format!("subject_type=audience&subject_id={digest}"),
            Box::new(move |t| t.ends_with(&format!("@audience:{digest}"))),
        ),
        (format!("resource_type=audience&resource_id={}", shared_aud), {
            let d = shared_aud.clone();
            Box::new(move |t| t.starts_with(&format!("audience:{d}#")))
        }),
        ("subject_type=item&subject_id=i08".into(), Box::new(|t| t.ends_with("@item:i08"))),
        ("resource_type=capability&resource_id=c".into(), Box::new(|t| t.starts_with("capability:c#"))),
        ("subject_type=capability&subject_id=g".into(), Box::new(|t| t.ends_with("@capability:g"))),
        (
            "resource_type=device&subject_id=owner&subject_type=participant".into(),
            Box::new(|t| t.starts_with("device:") && t.ends_with("@participant:owner")),
        ),
        (
            "subject_type=participant&subject_id=clock&relation=held_by".into(),
            Box::new(|t| t.contains("#held_by@participant:clock")),
        ),
    ];
    for (filter, pred) in filters {
        let want: BTreeSet<String> = expected.iter().filter(|t| pred(t)).cloned().collect();
        assert!(!want.is_empty(), "{filter}: the fixture has something to find");
        for limit in [1, 3, 1000] {
            let page = all_pages(&app, &format!("/v1/stores/s/relationships?{filter}"), limit).await;
            let got: Vec<String> = page.iter().map(line).collect();
            let set: BTreeSet<String> = got.iter().cloned().collect();
            assert_eq!(set.len(), got.len(), "{filter} limit {limit}: a tuple twice");
            assert_eq!(set, want, "{filter} with limit {limit}");
        }
    }
}

fn open_app(ds: &Datastore) -> TestApp {
    let clock = Arc::new(ManualClock::new(T0_MS));
    let earshot =
        Arc::new(Earshot::open_with(ds.open().expect("backend"), clock.clone(), Config::default()).expect("open"));
    let router = earshot_api::router(AppState::new(earshot.clone(), Auth::disabled()));
    TestApp { earshot, clock, router }
}

fn deletion_survives_a_restart(ds: &Datastore) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async {
        let app = open_app(ds);
        fixture(&app, "s").await;
        fixture(&app, "t").await;
        refused(&app.call("DELETE", "/v1/stores/s", None).await, 400, "confirmation_required");
        refused(&app.call("DELETE", "/v1/stores/s?confirm=t", None).await, 400, "confirmation_required");
        refused(&app.call("DELETE", "/v1/stores/s?confirm=s&x=1", None).await, 400, "invalid_request");
        ok(&app.call("GET", "/v1/stores/s", None).await, 200);
        let gone = app.call("DELETE", "/v1/stores/s?confirm=s", None).await;
        ok(&gone, 200);
        assert_eq!(gone.1["outcome"], "deleted");
        refused(&app.call("GET", "/v1/stores/s", None).await, 404, "store_not_found");
        refused(&app.call("GET", "/v1/stores/s/devices", None).await, 404, "store_not_found");
        refused(&app.call("DELETE", "/v1/stores/s?confirm=s", None).await, 404, "store_not_found");
        ok(&app.call("GET", "/v1/stores/t", None).await, 200);
    });
    rt.block_on(async {
        let app = open_app(ds);
        refused(&app.call("GET", "/v1/stores/s", None).await, 404, "store_not_found");
        let listed = app.call("GET", "/v1/stores", None).await;
        let token = listed.1["results"][0]["token"].clone();
        assert_eq!(listed.1["results"], json!([{"id": "t", "revision": app.revision("t"), "token": token}]));
        app.earshot.store("t").expect("t").verify().expect("the other store is whole");
        drop(app);
        let backend = ds.open().expect("backend");
        assert!(!backend.stores().expect("stores").contains(&"s".to_string()));
        assert_eq!(backend.scan("s", b"", b"\xff", 10).expect("scan"), Vec::new(), "no record of `s` is left");
        drop(backend);
        let app = open_app(ds);
        // The id is free again, and the new store starts empty.
        ok(&app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await, 201);
        assert_eq!(app.call("GET", "/v1/stores/s/items", None).await.1["results"], json!([]));
    });
}

#[test]
fn a_deleted_store_is_gone_after_a_restart_on_sled() {
    let dir = tempfile::tempdir().expect("tempdir");
    deletion_survives_a_restart(&Datastore::Dir(dir.path().to_path_buf()));
}

#[test]
fn a_deleted_store_is_gone_after_a_restart_on_postgres() {
    let Some(ds) = Datastore::postgres("lists_delete").expect("PostgreSQL") else { return };
    deletion_survives_a_restart(&ds);
}

/// A small generated device store: five people and devices, edges of every relation (one
/// revoked, one expired), and capability chains (one under a revoked root, one out of uses).
async fn device_store(app: &TestApp) {
    let e = "/v1/stores/d";
    post(app, "/v1/stores", json!({"id": "d"})).await;
    for n in 0..5 {
        post(app, &format!("{e}/participants"), json!({"id": format!("u{n}"), "kind": "person"})).await;
    }
    done(&app.call("PUT", &format!("{e}/schema"), Some(json!({"schema": SCHEMA}))).await);
    for n in 0..4 {
        post(app, &format!("{e}/devices"), json!({"id": format!("d{n}"), "owner": format!("u{}", n % 3)})).await;
    }
    let rels = ["family", "care", "guardian"];
    let mut k = 0;
    for g in 0..3 {
        for t in 0..5 {
            if g == t || (g * 7 + t * 3) % 4 == 0 {
                continue;
            }
            k += 1;
            let mut body = json!({"id": format!("e{k}"), "grantor": format!("u{g}"), "relation": rels[(g + t) % 3], "grantee": format!("u{t}")});
            if k == 3 {
                // Expired below: a window already over when written is refused.
                body["constraints"] = json!({"not_after": "2026-01-01T00:00:01Z"});
            }
            post(app, &format!("{e}/relations"), body).await;
        }
    }
    done(&app.call("DELETE", &format!("{e}/relations/e2?by=u0"), None).await);
    let caps = [
        json!({"id": "r1", "issuer": "u0", "holder": "u3", "device": "d0", "paths": ["calendar/**", "vitals/pulse"], "actions": ["read", "write"]}),
        json!({"id": "r1a", "issuer": "u3", "holder": "u4", "device": "d0", "paths": ["calendar/next"], "actions": ["read"], "parent": "r1"}),
        json!({"id": "r2", "issuer": "u1", "holder": "u4", "device": "d1", "paths": ["medication/*"], "actions": ["read"]}),
        json!({"id": "r2a", "issuer": "u4", "holder": "d2", "device": "d1", "paths": ["medication/pill"], "actions": ["read"], "parent": "r2"}),
        json!({"id": "r3", "issuer": "u2", "holder": "u0", "device": "d2", "paths": ["location/*"], "actions": ["read"], "constraints": {"uses": 1}}),
    ];
    for c in caps {
        post(app, &format!("{e}/capabilities"), c).await;
    }
    done(&app.call("DELETE", &format!("{e}/capabilities/r2?by=u1"), None).await);
    let use_it = json!({"principal": "u0", "device": "d2", "path": "location/home", "action": "read"});
    ok(&app.call("POST", &format!("{e}/uses"), Some(use_it)).await, 200);
    // Edge e3's window closes.
    app.clock.set(T0_MS + 2_000);
}

const PATHS: [&str; 9] = [
    "status/waking",
    "medication/pill",
    "medication/a/b",
    "vitals/pulse",
    "calendar/next",
    "calendar/x/y",
    "location/home",
    "location/a/b",
    "alarm/one",
];

fn covers(reach: &Value, path: &str, action: &str) -> bool {
    if reach["all"] == true {
        return true;
    }
    let p = Path::parse(path).expect("path");
    let acts = reach["actions"].as_array().expect("actions");
    acts.iter().any(|a| a == action)
        && reach["paths"]
            .as_array()
            .expect("paths")
            .iter()
            .any(|x| PathPattern::parse(x.as_str().unwrap()).expect("pattern").matches(&p))
}

#[tokio::test]
async fn reverse_device_questions_agree_with_authorize() {
    let app = TestApp::new();
    device_store(&app).await;
    let principals: Vec<String> = (0..5).map(|n| format!("u{n}")).chain((0..4).map(|n| format!("d{n}"))).collect();
    let mut reachable = BTreeMap::new();
    for p in &principals {
        let got = app.call("POST", "/v1/stores/d/authorize/reachable", Some(json!({"principal": p}))).await;
        ok(&got, 200);
        reachable.insert(p.clone(), got.1["reaches"].as_array().expect("reaches").clone());
    }
    let (mut allows, mut checks) = (0, 0);
    for d in 0..4 {
        let device = format!("d{d}");
        for path in PATHS {
            for action in ["read", "write", "subscribe"] {
                let q = json!({"device": device, "path": path, "action": action});
                let who = app.call("POST", "/v1/stores/d/authorize/principals", Some(q)).await;
                ok(&who, 200);
                let listed: BTreeMap<String, Value> = who.1["principals"]
                    .as_array()
                    .expect("principals")
                    .iter()
                    .map(|r| (r["principal"].as_str().unwrap().to_string(), r.clone()))
                    .collect();
                for p in &principals {
                    let q = json!({"principal": p, "device": device, "path": path, "action": action});
                    let a = app.call("POST", "/v1/stores/d/authorize", Some(q)).await;
                    ok(&a, 200);
                    let allowed = a.1["allowed"] == true;
                    checks += 1;
                    allows += usize::from(allowed);
                    assert_eq!(listed.contains_key(p), allowed, "who can reach {device} {path} {action}: {p}: {}", a.1);
                    if allowed {
                        assert_eq!(listed[p]["authority"], a.1["authority"], "the same authority");
                        assert_eq!(listed[p]["reason"], a.1["reason"]);
                    }
                    let covered =
                        reachable[p].iter().any(|r| r["device"] == device.as_str() && covers(r, path, action));
                    assert_eq!(covered, allowed, "what {p} can reach covers {device} {path} {action}: {}", a.1);
                }
            }
        }
    }
    assert!(allows > 20 && allows < checks / 2, "a store that exercises both answers: {allows} of {checks}");
    refused(
        &app.call(
            "POST",
            "/v1/stores/d/authorize/principals",
            Some(json!({"device": "nope", "path": "a", "action": "read"})),
        )
        .await,
        404,
        "device_not_found",
    );
    refused(
        &app.call(
            "POST",
            "/v1/stores/d/authorize/principals",
            Some(json!({"device": "d0", "path": "a//b", "action": "read"})),
        )
        .await,
        422,
        "invalid_slice_path",
    );
    refused(
        &app.call("POST", "/v1/stores/d/authorize/reachable", Some(json!({"principal": "nobody"}))).await,
        404,
        "participant_not_found",
    );
}

/// SPEC §2.6 (the "new enemy" rule), as `authorize` answers it: after a revocation, an older
/// token quoted to the reverse device questions lists no usable allow. Each entry read at the
/// older revision is historical (`allowed: false`, reason `denied_historical_revision`, no
/// authority, opening nothing) with the entry as it was then under `historical`.
#[tokio::test]
async fn an_old_token_lists_no_usable_allow_on_the_reverse_questions() {
    let app = TestApp::new();
    let e = "/v1/stores/h";
    post(&app, "/v1/stores", json!({"id": "h"})).await;
    for p in ["ann", "bob"] {
        post(&app, &format!("{e}/participants"), json!({"id": p, "kind": "person"})).await;
    }
    post(&app, &format!("{e}/devices"), json!({"id": "fridge", "owner": "ann"})).await;
    let k = json!({"id": "k", "issuer": "ann", "holder": "bob", "device": "fridge", "paths": ["x/**"],
                   "actions": ["read"]});
    post(&app, &format!("{e}/capabilities"), k).await;
    let slice = |c: Option<Value>| {
        let mut q = json!({"device": "fridge", "path": "x/a", "action": "read"});
        if let Some(c) = c {
            q["consistency"] = c;
        }
        q
    };
    let bob = |c: Option<Value>| {
        let mut q = json!({"principal": "bob"});
        if let Some(c) = c {
            q["consistency"] = c;
        }
        q
    };
    let before = app.call("POST", &format!("{e}/authorize/principals"), Some(slice(None))).await;
    ok(&before, 200);
    let listed: Vec<&Value> = before.1["principals"].as_array().expect("principals").iter().collect();
    assert_eq!(listed.len(), 2, "{}", before.1);
    assert!(listed.iter().all(|r| r["allowed"] == true && r["authority"].is_object()), "{}", before.1);
    let old = json!({"at_exact": before.1["token"]});
    done(&app.call("DELETE", &format!("{e}/capabilities/k?by=ann"), None).await);
    let latest = app.revision("h");

    // Who can reach the slice, quoting the old token: every entry is history, none an allow.
    let then = app.call("POST", &format!("{e}/authorize/principals"), Some(slice(Some(old.clone())))).await;
    ok(&then, 200);
    assert_eq!(then.1["revision"], before.1["revision"], "{}", then.1);
    assert_eq!(then.1["latest_revision"].as_u64(), Some(latest), "{}", then.1);
    let entries = then.1["principals"].as_array().expect("principals");
    assert_eq!(entries.len(), 2, "the principals of then, each as history: {}", then.1);
    for r in entries {
        assert_eq!(r["allowed"], false, "an old token listed a usable allow: {}", then.1);
        assert_eq!(r["reason"], "denied_historical_revision", "{r}");
        assert!(r.get("authority").is_none(), "a historical entry carries no usable authority: {r}");
        assert_eq!((&r["historical"]["principal"], &r["historical"]["allowed"]), (&r["principal"], &json!(true)));
        assert!(r["historical"]["authority"].is_object(), "{r}");
    }
    let bob_then = entries.iter().find(|r| r["principal"] == "bob").expect("bob, as history");
    assert_eq!(bob_then["historical"]["reason"], "allowed_capability", "{bob_then}");
    assert_eq!(bob_then["historical"]["authority"]["chain"][0]["capability"], "k", "{bob_then}");

    // What bob can reach, quoting the old token: the reaches of then, each opening nothing.
    let reach = app.call("POST", &format!("{e}/authorize/reachable"), Some(bob(Some(old.clone())))).await;
    ok(&reach, 200);
    assert_eq!(reach.1["latest_revision"].as_u64(), Some(latest), "{}", reach.1);
    let reaches = reach.1["reaches"].as_array().expect("reaches");
    assert_eq!(reaches.len(), 1, "{}", reach.1);
    let r = &reaches[0];
    assert_eq!((r["device"].as_str(), r["allowed"].as_bool()), (Some("fridge"), Some(false)), "{r}");
    assert_eq!(r["reason"], "denied_historical_revision", "{r}");
    assert!(r.get("authority").is_none(), "a historical reach carries no usable authority: {r}");
    assert!(!covers(r, "x/a", "read"), "a historical reach opens nothing: {r}");
    assert_eq!(r["historical"]["allowed"], true, "{r}");
    assert_eq!(r["historical"]["reason"], "allowed_capability", "{r}");
    assert_eq!(r["historical"]["paths"], json!(["x/**"]), "{r}");
    assert!(covers(&r["historical"], "x/a", "read"), "{r}");

    // The newest state, by default or `at_least` the old token: bob is gone, ann is no history.
    for c in [None, Some(json!({"at_least": before.1["token"]}))] {
        let now = app.call("POST", &format!("{e}/authorize/principals"), Some(slice(c.clone()))).await;
        ok(&now, 200);
        assert!(now.1.get("latest_revision").is_none(), "{}", now.1);
        let who: Vec<(&str, &str)> = now.1["principals"]
            .as_array()
            .expect("principals")
            .iter()
            .map(|r| (r["principal"].as_str().unwrap_or(""), r["reason"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(who, [("ann", "allowed_owner")], "{}", now.1);
        assert!(now.1["principals"][0].get("historical").is_none(), "{}", now.1);
        let reach = app.call("POST", &format!("{e}/authorize/reachable"), Some(bob(c))).await;
        ok(&reach, 200);
        assert_eq!(reach.1["reaches"], json!([]), "{}", reach.1);
    }
}

#[tokio::test]
async fn viewer_sets_are_the_audiences_and_never_their_union() {
    let app = TestApp::new();
    let e = "/v1/stores/v";
    post(&app, "/v1/stores", json!({"id": "v"})).await;
    for p in ["owner", "alice", "bob", "carol"] {
        post(&app, &format!("{e}/participants"), json!({"id": p, "kind": "person"})).await;
    }
    post(&app, &format!("{e}/items"), json!({"id": "f2", "owner": "owner", "origin": {"participants": ["alice"]}}))
        .await;
    post(&app, &format!("{e}/items/f2/grants"), json!({"members": ["bob"]})).await;
    post(&app, &format!("{e}/items/f2/grants"), json!({"members": ["carol", "alice"]})).await;
    let sets = app.call("GET", &format!("{e}/items/f2/viewers"), None).await;
    ok(&sets, 200);
    let members: Vec<Value> = sets.1["audiences"].as_array().unwrap().iter().map(|a| a["members"].clone()).collect();
    assert_eq!(members, [json!(["alice", "owner"]), json!(["bob", "owner"]), json!(["alice", "carol", "owner"])]);
    // Every viewer set over the four people: admitted together exactly when `check` admits
    // the container of exactly those viewers.
    let people = ["owner", "alice", "bob", "carol"];
    for mask in 0..16u32 {
        let mut set: Vec<&str> =
            people.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, p)| *p).collect();
        set.push("owner");
        set.sort();
        set.dedup();
        let got = app.call("POST", &format!("{e}/items/f2/viewers"), Some(json!({"participants": set}))).await;
        ok(&got, 200);
        let viewers: Vec<&&str> = set.iter().filter(|p| **p != "owner").collect();
        let c = json!({"item": "f2", "container": {"owner": "owner", "viewers": {"participants": viewers}}});
        let check = app.call("POST", &format!("{e}/check"), Some(c)).await;
        assert_eq!(got.1["admitted_together"], check.1["admitted"], "{set:?}: {} vs {}", got.1, check.1);
    }
    let split = app
        .call("POST", &format!("{e}/items/f2/viewers"), Some(json!({"participants": ["owner", "bob", "carol", "zed"]})))
        .await;
    assert_eq!(split.1["admitted_together"], false, "bob and carol are in two audiences, never unioned");
    assert_eq!(split.1["unknown"], json!(["zed"]));
    assert_eq!(split.1["audiences"][1]["admitted"], json!(["bob", "owner"]));
    // A non-current item admits nobody.
    done(&app.call("POST", &format!("{e}/items/f2/lifecycle"), Some(json!({"action": "freeze"}))).await);
    let frozen = app.call("GET", &format!("{e}/items/f2/viewers"), None).await;
    assert_eq!((frozen.1["current"].clone(), frozen.1["audiences"].clone()), (json!(false), json!([])));
    refused(&app.call("GET", &format!("{e}/items/nope/viewers"), None).await, 404, "item_not_found");
}

/// SPEC §2.6: the viewer sets of an item, read at a revision older than the newest, admit
/// nothing. After a grant is revoked, quoting the older token answers the whole view as history
/// (reason `denied_historical_revision`, no audience, nobody admitted together) with the view as
/// it was then under `historical`.
#[tokio::test]
async fn an_old_token_admits_no_viewer_set() {
    let app = TestApp::new();
    let e = "/v1/stores/w";
    post(&app, "/v1/stores", json!({"id": "w"})).await;
    for p in ["owner", "bob"] {
        post(&app, &format!("{e}/participants"), json!({"id": p, "kind": "person"})).await;
    }
    post(&app, &format!("{e}/items"), json!({"id": "f2", "owner": "owner", "origin": "owner_private"})).await;
    let g = app.call("POST", &format!("{e}/items/f2/grants"), Some(json!({"members": ["bob"]}))).await;
    ok(&g, 201);
    let grant = g.1["ids"][0].as_str().expect("grant id").to_string();
    let old = json!({"at_exact": g.1["token"]});
    let ask = json!({"participants": ["owner", "bob"], "consistency": old});
    let before = app.call("POST", &format!("{e}/items/f2/viewers"), Some(ask.clone())).await;
    ok(&before, 200);
    assert_eq!(before.1["admitted_together"], true, "{}", before.1);
    assert!(before.1.get("historical").is_none() && before.1.get("reason").is_none(), "{}", before.1);
    ok(&app.call("DELETE", &format!("{e}/grants/{grant}"), None).await, 200);
    let latest = app.revision("w");

    let then = app.call("POST", &format!("{e}/items/f2/viewers"), Some(ask)).await;
    ok(&then, 200);
    assert_eq!(then.1["admitted_together"], false, "an old token admitted a viewer set: {}", then.1);
    assert_eq!(then.1["reason"], "denied_historical_revision", "{}", then.1);
    assert_eq!(then.1["audiences"], json!([]), "{}", then.1);
    assert_eq!(then.1["latest_revision"].as_u64(), Some(latest), "{}", then.1);
    assert_eq!(then.1["historical"]["admitted_together"], true, "{}", then.1);
    assert_eq!(then.1["historical"]["audiences"][1]["admitted"], json!(["bob", "owner"]), "{}", then.1);

    let q = format!("{e}/items/f2/viewers?at_exact={}", g.1["token"].as_str().expect("token"));
    let sets = app.call("GET", &q, None).await;
    ok(&sets, 200);
    assert_eq!((&sets.1["reason"], &sets.1["audiences"]), (&json!("denied_historical_revision"), &json!([])));
    assert_eq!(sets.1["historical"]["audiences"][1]["members"], json!(["bob", "owner"]), "{}", sets.1);
    let now = app.call("GET", &format!("{e}/items/f2/viewers"), None).await;
    ok(&now, 200);
    assert_eq!(now.1["audiences"].as_array().map(Vec::len), Some(1), "only the origin now: {}", now.1);
    assert!(now.1.get("historical").is_none() && now.1.get("reason").is_none(), "{}", now.1);
}

/// A filter the list's order does not index looks at no more than `SCAN_BUDGET` records per
/// page: past it the page ends early (here: empty or short) with a cursor, and following the
/// cursors still visits every match once, in order. Lists and relationship tuples alike.
#[test]
fn a_page_looks_at_a_bounded_number_of_records() {
    use earshot_store::lists::limits::SCAN_BUDGET;
    use earshot_store::lists::{ItemFilter, Paging};
    use earshot_store::model::Command;
    use earshot_store::tuples::TupleFilter;

    let clock = Arc::new(ManualClock::new(T0_MS));
    let earshot = Earshot::temporary(clock.clone()).expect("earshot");
    earshot.create_store("s", None).expect("store");
    let s = earshot.store("s").expect("s");
    let owner = serde_json::from_value(json!({"id": "owner", "kind": "person"})).expect("participant");
    s.write(Command::CreateParticipant(owner)).expect("owner");
    let n = SCAN_BUDGET + 50;
    for i in 0..n {
        let item = json!({"id": format!("b{i:05}"), "owner": "owner", "origin": "owner_private"});
        s.write(Command::CreateItem(serde_json::from_value(item).expect("item"))).expect("item");
    }
    let frozen = [3, SCAN_BUDGET + 20];
    for i in frozen {
        let request = serde_json::from_value(json!({"action": "freeze"})).expect("lifecycle");
        s.write(Command::Lifecycle { item: format!("b{i:05}"), request }).expect("freeze");
    }
    let derive = json!({"disposition": "intersection", "owner": "owner", "sources": ["b00004"], "id": "sum"});
    let derived = s
        .write(Command::Derive { request: serde_json::from_value(derive).expect("derive"), issuer: "owner".into() })
        .expect("derive");
    assert_eq!(derived.ids, ["sum"], "{derived:?}");
    let snap = s.latest();

    let filter = ItemFilter { state: Some(earshot_core::State::Frozen), ..ItemFilter::default() };
    let first = snap.list_items(&filter, &Paging { limit: Some(100), cursor: None }).expect("page");
    assert_eq!(first.results.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["b00003"]);
    let cursor = first.next_cursor.clone().expect("a page cut short by the budget has a cursor");
    let second = snap.list_items(&filter, &Paging { limit: Some(100), cursor: Some(cursor) }).expect("page");
    assert_eq!(second.results.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), [format!("b{:05}", frozen[1])]);
    assert_eq!(second.next_cursor, None, "the last page");

    // Tuples: `derived_from` by subject walks every item; the match is the last one created.
    let f = TupleFilter {
        relation: Some("derived_from".into()),
        subject_type: Some("item".into()),
        subject_id: Some("b00004".into()),
        ..TupleFilter::default()
    };
    let mut pages = 0;
    let mut found = Vec::new();
    let mut cursor = None;
    loop {
        let page = snap.read_tuples(&f, &Paging { limit: Some(100), cursor }, T0_MS).expect("tuples");
        pages += 1;
        found.extend(page.results.into_iter().map(|t| t.resource.id));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages < 10, "the pages do not move on");
    }
    assert_eq!(found, ["sum"]);
    assert!(pages >= 2, "one page walked more than {SCAN_BUDGET} items");
    s.verify().expect("verify");
}
