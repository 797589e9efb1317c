//! Owns the tests of context assembly (SPEC §1.10): slot noninterference, the sealed exact
//! context and its readback (also after a restart), determinism, one slot per item, the pinned
//! revision, input bounds, and a property test that no assembled context ever holds an item the
//! reference oracle would not admit (and that none it admits is missing while the window has room).

use std::collections::BTreeSet;
use std::sync::Arc;

use earshot_store::model::{ContainerInput, ContextRequest};
use earshot_store::{Earshot, ManualClock};
use earshot_tests::{TestApp, T0_MS};
use proptest::prelude::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::properties::{config, fail, standard_containers, universe, Backing, Harness};

const S: &str = "/v1/stores/s";

async fn setup(app: &TestApp, people: &[&str]) {
    let (st, body) = app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await;
    assert!(st.is_success(), "{body}");
    for p in people {
        let (st, body) = app.call("POST", &format!("{S}/participants"), Some(json!({"id": p, "kind": "person"}))).await;
        assert!(st.is_success(), "{body}");
    }
}

async fn item(app: &TestApp, id: &str, content: &str, origin: Value) {
    let body = json!({"id": id, "owner": "o", "content": content, "origin": origin});
    let (st, resp) = app.call("POST", &format!("{S}/items"), Some(body)).await;
    assert!(st.is_success(), "{resp}");
}

async fn attempt(app: &TestApp, viewers: &[&str]) -> String {
    let body = json!({"container": {"owner": "o", "viewers": {"participants": viewers}}});
    let (st, resp) = app.call("POST", &format!("{S}/attempts"), Some(body)).await;
    assert!(st.is_success(), "{resp}");
    resp["attempt"].as_str().unwrap_or_default().to_string()
}

async fn context(app: &TestApp, attempt: &str, body: Value) -> (u16, Value) {
    let (st, resp) = app.call("POST", &format!("{S}/attempts/{attempt}/context"), Some(body)).await;
    (st.as_u16(), resp)
}

fn ids(v: &Value, key: &str) -> Vec<String> {
    v[key].as_array().into_iter().flatten().filter_map(|x| x["item"].as_str()).map(str::to_string).collect()
}

/// Over HTTP: a forbidden item that is the best dense match of the store never appears in Bob's
/// `dense` or `hybrid` context; deleting it leaves his order as it was; embeddings are validated
/// (`422 embedding_dimension_mismatch`, `422 invalid_embedding`) and never read back.
#[tokio::test]
async fn dense_recall_over_http_is_authorized_before_ranking() {
    let app = TestApp::new();
    setup(&app, &["o", "alice", "bob"]).await;
    let post_item = |id: &'static str, embedding: Value, origin: Value| {
        let body = json!({"id": id, "owner": "o", "content": id, "origin": origin, "embedding": embedding});
        let app = &app;
        async move { app.call("POST", &format!("{S}/items"), Some(body)).await }
    };
    let shared = json!({"participants": ["alice", "bob"]});
    for (id, e) in [("a1", json!([1.0, 0.2, 0.0])), ("a2", json!([0.5, 1.0, 0.0])), ("a3", json!([0.0, 0.3, 1.0]))] {
        let (st, resp) = post_item(id, e, shared.clone()).await;
        assert!(st.is_success(), "{resp}");
    }
    // Alice's private note points exactly where the query does.
    let (st, resp) = post_item("secret", json!([1.0, 0.0, 0.0]), json!({"participants": ["alice"]})).await;
    assert!(st.is_success(), "{resp}");
    let (st, resp) = post_item("bad", json!([1.0, 0.0]), shared.clone()).await;
    assert_eq!((st.as_u16(), resp["error"]["code"].as_str()), (422, Some("embedding_dimension_mismatch")), "{resp}");
    assert_eq!(resp["error"]["details"]["expected"], 3, "{resp}");
    let (st, resp) = post_item("bad", json!([0.0, 0.0, 0.0]), shared.clone()).await;
    assert_eq!((st.as_u16(), resp["error"]["code"].as_str()), (422, Some("invalid_embedding")), "{resp}");
    let (st, resp) = post_item("bad", json!([1e300, 0.0, 0.0]), shared.clone()).await;
    assert_eq!((st.as_u16(), resp["error"]["code"].as_str()), (422, Some("invalid_embedding")), "{resp}");
    let (_, view) = app.call("GET", &format!("{S}/items/a1"), None).await;
    assert!(view.get("embedding").is_none(), "an item's view never carries its embedding: {view}");

    let dense = json!({"ranking": "dense", "query_embedding": [1.0, 0.0, 0.0], "k": 3});
    let hybrid = json!({"ranking": "hybrid", "query": "a1 a2 a3 secret", "query_embedding": [1.0, 0.0, 0.0], "k": 3});
    let mut before = Vec::new();
    for body in [&dense, &hybrid] {
        let bob = attempt(&app, &["bob"]).await;
        let (st, resp) = context(&app, &bob, body.clone()).await;
        assert_eq!(st, 200, "{resp}");
        assert!(!ids(&resp, "fetched").contains(&"secret".to_string()), "{resp}");
        assert_eq!(resp["candidates"], 3, "{resp}");
        assert_eq!(resp["ranking"], body["ranking"], "{resp}");
        assert!(resp["query_embedding_digest"].is_string(), "{resp}");
        before.push(ids(&resp, "fetched"));
    }
    assert_eq!(before[0], ["a1", "a2", "a3"], "dense order by cosine");
    // The owner alone sees the secret: it is the best dense match of the store.
    let owner = attempt(&app, &[]).await;
    let (_, resp) =
        context(&app, &owner, json!({"ranking": "dense", "query_embedding": [1.0, 0.0, 0.0], "k": 1, "owners": []}))
            .await;
    assert_eq!(ids(&resp, "items"), ["secret"], "{resp}");
    let (st, resp) = app.call("POST", &format!("{S}/items/secret/lifecycle"), Some(json!({"action": "delete"}))).await;
    assert!(st.is_success(), "{resp}");
    for (body, was) in [&dense, &hybrid].into_iter().zip(&before) {
        let bob = attempt(&app, &["bob"]).await;
        let (_, resp) = context(&app, &bob, body.clone()).await;
        assert_eq!(&ids(&resp, "fetched"), was, "deleting a forbidden item changed Bob's order: {resp}");
    }
    // Request validation at the edge.
    let bob = attempt(&app, &["bob"]).await;
    let (st, resp) = context(&app, &bob, json!({"ranking": "dense", "query_embedding": [1.0, 0.0]})).await;
    assert_eq!((st, resp["error"]["code"].as_str()), (422, Some("embedding_dimension_mismatch")), "{resp}");
    let (st, resp) = context(&app, &bob, json!({"ranking": "hybrid", "query": "a1"})).await;
    assert_eq!((st, resp["error"]["code"].as_str()), (400, Some("invalid_request")), "{resp}");
    let (st, resp) = context(&app, &bob, json!({"ranking": "sparse", "query": "a1"})).await;
    assert_eq!(st, 400, "{resp}");
    // `verify` holds the dense projection to the records: the three embeddings left (the deleted
    // secret's record holds none; its row is never a candidate again).
    let report = app.earshot.store("s").expect("s").verify().expect("verify");
    assert!(report.contains("dense projection: 3 embeddings"), "{report}");
}

/// Thirty forbidden items, each far more relevant to the query than the one entitled item,
/// compete with it. The entitled item is the whole context of Bob's attempt, at rank 1.
/// The control shows what authorization after ranking would do: in the unscoped ranking (the
/// owner-only container admits everything) the entitled item is below rank 20, so a post-filter
/// over a fetch window of 20 would lose it.
#[tokio::test]
async fn forbidden_items_never_displace_an_entitled_one() {
    let app = TestApp::new();
    setup(&app, &["o", "alice", "bob"]).await;
    for n in 0..30 {
        let text = format!("dentist appointment moved dentist appointment alice private note {n}");
        item(&app, &format!("f{n:02}"), &text, json!({"participants": ["alice"]})).await;
    }
    item(
        &app,
        "g1",
        "the team lunch is friday and bob has a dentist appointment too",
        json!({"participants": ["alice", "bob"]}),
    )
    .await;
    let query = json!({"query": "dentist appointment moved"});
    let bob = attempt(&app, &["bob"]).await;
    let (st, resp) = context(&app, &bob, query.clone()).await;
    assert_eq!(st, 200, "{resp}");
    assert_eq!(ids(&resp, "items"), ["g1"], "{resp}");
    assert_eq!(ids(&resp, "fetched"), ["g1"], "{resp}");
    assert_eq!(resp["candidates"], 1);
    assert_eq!(resp["items"][0]["basis"], "origin");
    assert_eq!(resp["items"][0]["reason"], "admitted_origin");
    // Control: unscoped, g1 falls out of the first 20.
    let owner = attempt(&app, &[]).await;
    let (st, all) = context(&app, &owner, json!({"query": "dentist appointment moved", "fetch": 40, "k": 40})).await;
    assert_eq!(st, 200, "{all}");
    let ranked = ids(&all, "items");
    let at = ranked.iter().position(|i| i == "g1").expect("g1 is admissible to the owner");
    assert!(at >= 20, "the control needs g1 below rank 20 of the unscoped ranking, got {at}: {ranked:?}");
    assert!(ranked[..20].iter().all(|i| i.starts_with('f')));
}

#[tokio::test]
async fn the_exact_context_is_sealed_and_read_back() {
    let app = TestApp::new();
    setup(&app, &["o", "bob", "carol"]).await;
    item(&app, "a1", "lisbon offsite moved to june", json!({"participants": ["bob"]})).await;
    item(&app, "a2", "offsite budget approved", json!("public")).await;
    item(&app, "a3", "carol thinks the offsite is a waste", json!({"participants": ["carol"]})).await;
    let a = attempt(&app, &["bob"]).await;
    let (st, resp) = context(&app, &a, json!({"query": "offsite", "fetch": 10, "k": 2})).await;
    assert_eq!(st, 200, "{resp}");
    let got = ids(&resp, "items");
    assert_eq!(got.iter().collect::<BTreeSet<_>>(), BTreeSet::from([&"a1".to_string(), &"a2".to_string()]));
    assert_eq!(resp["fetch"], 10);
    assert_eq!(resp["k"], 2);
    assert_eq!(resp["query"], "offsite");
    assert_eq!(resp["owners"], json!(["o"]));
    for it in resp["items"].as_array().into_iter().flatten() {
        let content = it["content"].as_str().expect("the response carries content");
        assert_eq!(it["digest"].as_str(), Some(hex(content).as_str()), "{it}");
    }
    let reasons: BTreeSet<&str> =
        resp["items"].as_array().into_iter().flatten().filter_map(|i| i["reason"].as_str()).collect();
    assert_eq!(reasons, BTreeSet::from(["admitted_origin", "admitted_public"]));
    // Readback: the same context, without content.
    let (st, back) = app.call("GET", &format!("{S}/attempts/{a}"), None).await;
    assert!(st.is_success(), "{back}");
    let mut sealed = resp.clone();
    for it in sealed["items"].as_array_mut().into_iter().flatten() {
        it.as_object_mut().map(|o| o.remove("content"));
    }
    assert_eq!(back["context"], sealed);
    assert_eq!(back["revision"], resp["revision"]);
    // One context per attempt: a retry is a new attempt.
    let (st, again) = context(&app, &a, json!({"query": "offsite"})).await;
    assert_eq!((st, again["error"]["code"].as_str()), (409, Some("attempt_sealed")), "{again}");
    // An attempt without a context reads back without one.
    let b = attempt(&app, &["bob"]).await;
    let (_, fresh) = app.call("GET", &format!("{S}/attempts/{b}"), None).await;
    assert!(fresh.get("context").is_none(), "{fresh}");
}

fn hex(content: &str) -> String {
    Sha256::digest(content.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The sealed record is durable: after the process restarts (attempts are in memory only),
/// the attempt's context still reads back; the search index is rebuilt from the records.
#[test]
fn sealed_contexts_survive_a_restart_and_the_index_is_rebuilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::new(T0_MS));
    let open = || {
        let mut tries = 0;
        loop {
            match earshot_store::SledBackend::open(dir.path()) {
                Ok(b) => {
                    break Earshot::open_with(Arc::new(b), clock.clone(), earshot_store::Config::default())
                        .expect("open")
                }
                Err(e) if tries < 250 && e.to_string().contains("lock") => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => panic!("open sled: {e}"),
            }
        }
    };
    let c = ContainerInput {
        owner: "o".into(),
        viewers: earshot_store::model::ViewersInput { participants: vec!["bob".into()], ..Default::default() },
    };
    let req =
        ContextRequest { query: "lisbon".into(), fetch: None, k: None, owners: vec![], ..ContextRequest::default() };
    let sealed = {
        let e = open();
        e.create_store("s", None).expect("store");
        let h = e.store("s").expect("store");
        for p in ["o", "bob"] {
            h.write(earshot_store::model::Command::CreateParticipant(earshot_store::model::NewParticipant {
                id: p.into(),
                kind: earshot_store::model::ParticipantKind::Person,
                name: None,
            }))
            .expect("participant");
        }
        for (id, text) in [("x1", "lisbon in june"), ("x2", "porto in may")] {
            h.write(earshot_store::model::Command::CreateItem(earshot_store::model::NewItem {
                subjects: Vec::new(),
                id: Some(id.into()),
                owner: "o".into(),
                content: Some(text.into()),
                attributes: None,
                origin: earshot_store::model::OriginInput::Viewers(c.viewers.clone()),
                author: None,
                embedding: None,
                embedding_metric: None,
            }))
            .expect("item");
        }
        h.create_attempt(c.clone(), h.latest(), "att-1".into()).expect("attempt");
        let sealed = h.assemble_context("att-1", &req).expect("context");
        assert_eq!(sealed.items.iter().map(|i| i.item.as_str()).collect::<Vec<_>>(), ["x1"]);
        e.shutdown();
        sealed
    };
    let e = open();
    let h = e.store("s").expect("store");
    // An attempt is recorded in the datastore: after a restart it is the same attempt (its
    // revision is still the newest, so the records rebuild its snapshot), and its one context
    // stays sealed.
    let again = h.attempt("att-1").expect("the attempt survives a restart");
    assert_eq!(again.snapshot.revision(), sealed.revision);
    assert!(matches!(h.assemble_context("att-1", &req), Err(earshot_store::StoreError::AttemptSealed(_))));
    let back = h.sealed_context("att-1").expect("read").expect("sealed context on record");
    let mut want = sealed.clone();
    for i in &mut want.items {
        i.content = None;
    }
    assert_eq!(back, want);
    assert!(h.sealed_context("att-2").expect("read").is_none());
    // The rebuilt index answers a new attempt the same way, and agrees with the records.
    h.create_attempt(c, h.latest(), "att-2".into()).expect("attempt");
    let again = h.assemble_context("att-2", &req).expect("context");
    assert_eq!(
        again.items.iter().map(|i| (&i.item, i.score, &i.digest)).collect::<Vec<_>>(),
        want.items.iter().map(|i| (&i.item, i.score, &i.digest)).collect::<Vec<_>>()
    );
    let report = h.verify().expect("verify");
    assert!(report.contains("search index: 2 documents"), "{report}");
}

/// Equal scores are ordered by item id, and two fresh stores built the same way answer the
/// same context byte for byte.
#[tokio::test]
async fn ties_are_broken_by_item_id_and_contexts_are_deterministic() {
    let mut answers = Vec::new();
    for _ in 0..2 {
        let app = TestApp::new();
        setup(&app, &["o", "bob"]).await;
        for id in ["m3", "m1", "m2", "m0"] {
            item(&app, id, "harbour ferry timetable", json!({"participants": ["bob"]})).await;
        }
        let a = attempt(&app, &["bob"]).await;
        let (st, resp) = context(&app, &a, json!({"query": "ferry", "k": 3})).await;
        assert_eq!(st, 200, "{resp}");
        assert_eq!(ids(&resp, "items"), ["m0", "m1", "m2"]);
        assert_eq!(ids(&resp, "fetched"), ["m0", "m1", "m2", "m3"]);
        let mut v = resp["items"].clone();
        for it in v.as_array_mut().into_iter().flatten() {
            it.as_object_mut().map(|o| o.remove("content"));
        }
        answers.push(v.to_string());
    }
    assert_eq!(answers[0], answers[1]);
}

/// An item admitted both by its origin and by a grant is one candidate and takes one slot.
#[tokio::test]
async fn origin_and_grant_projections_take_one_slot() {
    let app = TestApp::new();
    setup(&app, &["o", "bob", "carol"]).await;
    item(&app, "p1", "sailing trip plan", json!({"participants": ["bob"]})).await;
    item(&app, "p2", "sailing club fees", json!({"participants": ["carol"]})).await;
    for members in [json!(["bob"]), json!(["bob", "carol"])] {
        let (st, r) = app.call("POST", &format!("{S}/items/p1/grants"), Some(json!({"members": members}))).await;
        assert!(st.is_success(), "{r}");
    }
    let (st, r) = app.call("POST", &format!("{S}/items/p2/grants"), Some(json!({"members": ["bob"]}))).await;
    assert!(st.is_success(), "{r}");
    let a = attempt(&app, &["bob"]).await;
    let (st, resp) = context(&app, &a, json!({"query": "sailing", "k": 5})).await;
    assert_eq!(st, 200, "{resp}");
    let got = ids(&resp, "items");
    assert_eq!(got.len(), 2, "{resp}");
    assert_eq!(got.iter().collect::<BTreeSet<_>>().len(), 2, "an item took two slots: {resp}");
    assert_eq!(resp["candidates"], 2);
    let basis: Vec<(&str, &str)> = resp["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["item"].as_str().unwrap_or(""), i["basis"].as_str().unwrap_or("")))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(basis, [("p1", "origin"), ("p2", "grant")]);
    let g = resp["items"].as_array().into_iter().flatten().find(|i| i["item"] == "p2").cloned().unwrap_or_default();
    assert!(g["grant"].is_string(), "{g}");
}

/// An attempt sees its pinned revision: an item written later is not a candidate, an item
/// revoked later still is (it was current at the pin); the next attempt sees both changes.
#[tokio::test]
async fn contexts_read_the_attempts_pinned_revision() {
    let app = TestApp::new();
    setup(&app, &["o", "bob"]).await;
    item(&app, "old", "garden party saturday", json!({"participants": ["bob"]})).await;
    let pinned = attempt(&app, &["bob"]).await;
    item(&app, "new", "garden party moved to sunday", json!({"participants": ["bob"]})).await;
    let (st, r) = app.call("POST", &format!("{S}/items/old/lifecycle"), Some(json!({"action": "revoke"}))).await;
    assert!(st.is_success(), "{r}");
    let (_, before) = context(&app, &pinned, json!({"query": "garden party"})).await;
    assert_eq!(ids(&before, "items"), ["old"], "{before}");
    let later = attempt(&app, &["bob"]).await;
    let (_, after) = context(&app, &later, json!({"query": "garden party"})).await;
    assert_eq!(ids(&after, "items"), ["new"], "{after}");
    assert!(after["revision"].as_u64() > before["revision"].as_u64());
}

/// Fail closed: unresolved viewers see public items only.
#[tokio::test]
async fn unresolved_viewers_get_public_items_only() {
    let app = TestApp::new();
    setup(&app, &["o", "bob"]).await;
    item(&app, "pub", "weather report rain", json!("public")).await;
    item(&app, "priv", "weather report rain rain rain", json!("owner_private")).await;
    let body = json!({"container": {"owner": "o", "viewers": {"participants": ["stranger"]}}});
    let (_, a) = app.call("POST", &format!("{S}/attempts"), Some(body)).await;
    let a = a["attempt"].as_str().unwrap_or_default().to_string();
    let (st, resp) = context(&app, &a, json!({"query": "rain"})).await;
    assert_eq!(st, 200, "{resp}");
    assert_eq!(ids(&resp, "items"), ["pub"]);
    assert_eq!(resp["resolved"], false);
}

#[tokio::test]
async fn context_inputs_are_bounded_and_client_mistakes_are_not_500s() {
    let app = TestApp::new();
    setup(&app, &["o"]).await;
    let a = attempt(&app, &[]).await;
    let long = "x".repeat(1025);
    let cases = [
        (json!({"query": "  "}), 400, "invalid_request"),
        (json!({"query": long}), 400, "limit_exceeded"),
        (json!({"query": "a", "fetch": 0}), 400, "limit_exceeded"),
        (json!({"query": "a", "fetch": 201}), 400, "limit_exceeded"),
        (json!({"query": "a", "fetch": 3, "k": 4}), 400, "invalid_request"),
        (json!({"query": "a", "k": 0}), 400, "invalid_request"),
        (json!({"query": "a", "colour": "red"}), 400, "invalid_request"),
        (json!({"query": "a", "owners": ["bad id!"]}), 400, "invalid_id"),
        (json!({}), 400, "invalid_request"),
    ];
    for (body, status, code) in cases {
        // Every case but the last accepted one runs on a fresh attempt.
        let a = if status == 200 { a.clone() } else { attempt(&app, &[]).await };
        let (st, resp) = context(&app, &a, body.clone()).await;
        assert_eq!(st, status, "{body} -> {resp}");
        if status != 200 {
            assert_eq!(resp["error"]["code"], code, "{body} -> {resp}");
        }
    }
    let (st, resp) = context(&app, "no-such-attempt", json!({"query": "a"})).await;
    assert_eq!((st, resp["error"]["code"].as_str()), (404, Some("attempt_not_found")));
    let (st, resp) = app.call("GET", &format!("{S}/attempts/no-such-attempt"), None).await;
    assert_eq!((st.as_u16(), resp["error"]["code"].as_str()), (404, Some("attempt_not_found")));
}

// ---- the property ---------------------------------------------------------------------------

/// Items of a universe all carry the word `content` (recorded items) or `summary`
/// (intersections), so this query matches every item that has content.
const EVERYTHING: &str = "content summary";

/// After a random history (the oracle harness's universes), every standard container's
/// context holds only items the oracle admits at the attempt's time, each once; and with a
/// window larger than the memory, it holds every admitted item that has content.
fn contexts_agree_with_the_oracle(h: &Harness) -> Result<(), String> {
    for (n, c) in standard_containers().into_iter().enumerate() {
        // A fresh id per attempt: attempts are recorded in the datastore, and an id is never reused.
        let id = format!("p{n}-{}", earshot_store::new_attempt_id());
        h.store.create_attempt(c.clone(), h.store.latest(), id.clone()).map_err(|e| e.to_string())?;
        let req = ContextRequest {
            query: EVERYTHING.into(),
            fetch: Some(200),
            k: Some(200),
            owners: vec![],
            ..ContextRequest::default()
        };
        let ctx = h.store.assemble_context(&id, &req).map_err(|e| format!("context for {c:?}: {e}"))?;
        let got: Vec<&str> = ctx.items.iter().map(|i| i.item.as_str()).collect();
        let unique: BTreeSet<&str> = got.iter().copied().collect();
        if unique.len() != got.len() {
            return Err(format!("an item took two slots for {c:?}: {got:?}"));
        }
        let admitted: BTreeSet<String> = h.oracle.lookup(&c, &[], h.now).into_iter().collect();
        for i in &got {
            if !admitted.contains(*i) {
                return Err(format!("context for {c:?} holds {i}, which the oracle does not admit ({admitted:?})"));
            }
        }
        let mut with_content = BTreeSet::new();
        for i in &admitted {
            if h.store.content(i).map_err(|e| e.to_string())?.and_then(|c| c.content).is_some() {
                with_content.insert(i.as_str());
            }
        }
        if unique != with_content {
            return Err(format!("context for {c:?} is {unique:?}; the oracle admits, with content, {with_content:?}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(24))]

    /// No assembled context ever contains an item the reference oracle would not admit.
    #[test]
    fn no_context_holds_an_item_the_oracle_would_not_admit(u in universe(30)) {
        let mut h = Harness::new(Backing::Temporary).map_err(fail)?;
        h.compare_each_step = false;
        h.run_universe(&u).map_err(fail)?;
        contexts_agree_with_the_oracle(&h).map_err(|e| fail(h.explain(e)))?;
    }
}

/// The property can fail: with one item's audience widened in the oracle's copy, the check
/// reports the context that (correctly) leaves it out.
#[test]
fn the_property_check_catches_a_disagreeing_oracle() {
    let mut h = Harness::new(Backing::Temporary).expect("harness");
    let u = crate::properties::Universe { initial: 3, binds: vec![], steps: vec![] };
    h.setup(&u).expect("setup");
    let cmd = earshot_store::model::Command::CreateItem(earshot_store::model::NewItem {
        subjects: Vec::new(),
        id: Some("i-secret".into()),
        owner: "ann".into(),
        content: Some("content secret".into()),
        attributes: None,
        origin: earshot_store::model::OriginInput::Keyword(earshot_store::model::OriginKeyword::OwnerPrivate),
        author: None,
        embedding: None,
        embedding_metric: None,
    });
    h.write(&cmd).expect("write");
    contexts_agree_with_the_oracle(&h).expect("agrees before tampering");
    if let Some(i) = h.oracle.items.iter_mut().find(|i| i.id == "i-secret") {
        i.audience = None;
    }
    let err = contexts_agree_with_the_oracle(&h).expect_err("a tampered oracle must disagree");
    assert!(err.contains("i-secret"), "{err}");
}
