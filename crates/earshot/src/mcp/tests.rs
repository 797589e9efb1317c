//! Tests of the MCP tool layer: input validation and bounds, the mapping of refusals to tool
//! errors, the tools' schemas, the tools over the API's router in process (scope and store
//! limits included), and a streamable-HTTP smoke test on loopback.

use std::sync::Arc;

use earshot_api::Scope;
use earshot_store::{Config, Earshot, ManualClock, MemoryBackend};
use rmcp::model::JsonObject;
use serde_json::{json, Value};

use super::backend::{ApiError, Backend, Embedded};
use super::tools::*;

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn code<T: std::fmt::Debug>(r: Result<T, ApiError>) -> String {
    r.unwrap_err().code
}

fn remember(v: Value) -> Result<Value, ApiError> {
    new_item(&decode::<RememberInput>(obj(v))?)
}

#[test]
fn arguments_outside_the_schema_are_refused_as_invalid_request() {
    // Unknown fields (a typo must not silently drop viewers), wrong types, missing fields.
    assert_eq!(
        code(decode::<RecallInput>(obj(json!({"owner": "o", "query": "q", "viewers": ["bob"]})))),
        "invalid_request"
    );
    assert_eq!(code(decode::<RecallInput>(obj(json!({"owner": "o", "query": 3})))), "invalid_request");
    assert_eq!(code(decode::<ExplainInput>(obj(json!({"owner": "o"})))), "invalid_request");
    assert_eq!(
        code(decode::<RecallInput>(obj(json!({"owner": "o", "query": "q", "quality": "great"})))),
        "invalid_request"
    );
    assert_eq!(code(decode::<RevokeInput>(JsonObject::new())), "invalid_request");
}

#[test]
fn remember_never_guesses_an_origin() {
    assert_eq!(code(remember(json!({"owner": "o", "content": "c"}))), "invalid_request");
    let both = json!({"owner": "o", "content": "c", "visibility": "public", "participants": ["bob"]});
    assert_eq!(code(remember(both)), "invalid_request");
    assert_eq!(remember(json!({"owner": "o", "content": "c", "visibility": "public"})).unwrap()["origin"], "public");
    assert_eq!(
        remember(json!({"owner": "o", "content": "c", "visibility": "owner_private"})).unwrap()["origin"],
        "owner_private"
    );
    let body = remember(json!({
        "owner": "o", "content": "c", "id": "f1", "author": "bob", "subjects": ["alice"],
        "participants": ["bob"], "identities": [{"transport": "email", "identifier": "a@x"}]
    }))
    .unwrap();
    assert_eq!(
        body,
        json!({"owner": "o", "content": "c", "id": "f1", "author": "bob", "subjects": ["alice"],
               "origin": {"participants": ["bob"], "identities": [{"transport": "email", "identifier": "a@x"}]}})
    );
}

#[test]
fn every_input_is_bounded_as_the_api_bounds_it() {
    let big = "x".repeat(65_537);
    assert_eq!(code(remember(json!({"owner": "o", "content": big, "visibility": "public"}))), "limit_exceeded");
    let fits = "x".repeat(65_536);
    assert!(remember(json!({"owner": "o", "content": fits, "visibility": "public"})).is_ok());
    let many: Vec<String> = (0..257).map(|i| format!("p{i}")).collect();
    assert_eq!(code(remember(json!({"owner": "o", "content": "c", "participants": many}))), "limit_exceeded");
    let subjects: Vec<String> = (0..33).map(|i| format!("s{i}")).collect();
    let r = json!({"owner": "o", "content": "c", "visibility": "public", "subjects": subjects});
    assert_eq!(code(remember(r)), "limit_exceeded");
    assert_eq!(code(remember(json!({"owner": "x".repeat(129), "content": "c", "visibility": "public"}))), "invalid_id");
    let long_identity = json!({"transport": "email", "identifier": "i".repeat(257)});
    let r = json!({"owner": "o", "content": "c", "identities": [long_identity]});
    assert_eq!(code(remember(r)), "limit_exceeded");

    let recall = |v: Value| context_request(&decode::<RecallInput>(obj(v))?);
    assert_eq!(code(recall(json!({"owner": "o", "query": " \n"}))), "invalid_request");
    assert_eq!(code(recall(json!({"owner": "o", "query": "q".repeat(1025)}))), "limit_exceeded");
    assert_eq!(code(recall(json!({"owner": "o", "query": "q", "k": 0}))), "limit_exceeded");
    assert_eq!(code(recall(json!({"owner": "o", "query": "q", "k": 51}))), "limit_exceeded");
    assert_eq!(
        recall(json!({"owner": "o", "query": "q"})).unwrap(),
        json!({"query": "q", "k": 5, "fetch": 20, "ranking": "bm25"})
    );
    // The ranking follows the inputs given, unless named.
    assert_eq!(recall(json!({"owner": "o", "query_embedding": [1.0, 0.0]})).unwrap()["ranking"], "dense");
    assert_eq!(recall(json!({"owner": "o", "query": "q", "query_embedding": [1.0]})).unwrap()["ranking"], "hybrid");
    assert_eq!(
        recall(json!({"owner": "o", "query": "q", "query_embedding": [1.0], "ranking": "bm25"})).unwrap()["ranking"],
        "bm25"
    );
    assert_eq!(code(recall(json!({"owner": "o"}))), "invalid_request");
    assert_eq!(code(recall(json!({"owner": "o", "query_embedding": vec![0.5; 4097]}))), "limit_exceeded");
    assert_eq!(recall(json!({"owner": "o", "query": "q", "k": 50})).unwrap()["fetch"], 50);

    let grant = |v: Value| new_grant(&decode::<GrantInput>(obj(v))?);
    assert_eq!(code(grant(json!({"item": "f", "members": []}))), "invalid_request");
    let members: Vec<String> = (0..1025).map(|i| format!("m{i}")).collect();
    assert_eq!(code(grant(json!({"item": "f", "members": members}))), "limit_exceeded");
    assert_eq!(code(grant(json!({"item": "f", "members": ["a"], "reason": "r".repeat(1025)}))), "limit_exceeded");
    assert_eq!(grant(json!({"item": "f", "members": ["a"]})).unwrap(), json!({"members": ["a"]}));
}

#[test]
fn a_refusal_is_a_tool_error_with_the_apis_code() {
    let body = json!({"error": {"code": "forbidden", "message": "needs admin", "details": {}}});
    let e = ApiError::from_answer(403, &body);
    assert_eq!((e.status, e.code.as_str(), e.message.as_str()), (Some(403), "forbidden", "needs admin"));
    let r = error_result(&e);
    assert_eq!(r.is_error, Some(true));
    let s = r.structured_content.clone().unwrap_or_default();
    assert_eq!(s, json!({"status": 403, "error": {"code": "forbidden", "message": "needs admin", "details": {}}}));
    let text = serde_json::to_value(&r.content).unwrap_or_default();
    assert!(text[0]["text"].as_str().unwrap_or("").starts_with("forbidden: needs admin"), "{text}");
    // A body that is not the API's error still maps to a code, never a crash.
    let e = ApiError::from_answer(502, &Value::Null);
    assert_eq!((e.status, e.code.as_str()), (Some(502), "internal_error"));
    // Refusals of the tool layer carry no status.
    assert_eq!(
        error_result(&ApiError::local("invalid_request", "x")).structured_content.unwrap_or_default()["status"],
        Value::Null
    );
}

#[test]
fn every_tool_has_a_closed_documented_schema() {
    let server = EarshotMcp::new(backend(Scope::Admin, "demo"), "demo");
    let tools = rmcp::handler::server::ServerHandler::get_info(&server);
    assert_eq!(tools.server_info.name, "earshot");
    let listed = tool_list(&server);
    let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["explain", "grant", "recall", "remember", "revoke"]);
    for (name, schema) in &listed {
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let props = schema["properties"].as_object().cloned().unwrap_or_default();
        assert!(!props.is_empty(), "{name}");
        for (p, v) in &props {
            // Every field says what it is (a `$ref` to a described definition counts).
            assert!(v.get("description").is_some() || v.get("$ref").is_some(), "{name}.{p}: {v}");
        }
    }
    let recall = &listed.iter().find(|(n, _)| n == "recall").map(|(_, s)| s.clone()).unwrap_or_default();
    assert_eq!(recall["required"], json!(["owner"]));
    for p in ["query", "query_embedding", "ranking"] {
        assert!(recall["properties"].get(p).is_some(), "recall.{p}");
    }
}

fn tool_list(server: &EarshotMcp) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = server
        .tools()
        .into_iter()
        .map(|t| (t.name.to_string(), Value::Object(t.input_schema.as_ref().clone())))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn memory() -> Arc<Earshot> {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    Arc::new(Earshot::open_with(Arc::new(MemoryBackend::default()), clock, Config::default()).unwrap())
}

/// The API's router over a fresh in-memory instance, behind a token of `scope` limited to `store`.
fn backend(scope: Scope, store: &str) -> Backend {
    Backend::Embedded(Embedded::over(memory(), store, scope).unwrap())
}

/// The router over `earshot` behind a token of `scope` limited to `store`, once an unlimited
/// admin has created the store `demo` and Figure 1's people in it.
async fn figure1(earshot: &Arc<Earshot>, scope: Scope, store: &str) -> Backend {
    let setup = Backend::Embedded(Embedded::over_stores(earshot.clone(), None, Scope::Admin).unwrap());
    figure1_people(&setup).await;
    Backend::Embedded(Embedded::over(earshot.clone(), store, scope).unwrap())
}

async fn figure1_people(b: &Backend) {
    b.call("POST", "/v1/stores", Some(json!({"id": "demo"}))).await.unwrap();
    for p in ["owner", "alice", "bob", "carol"] {
        b.call("POST", "/v1/stores/demo/participants", Some(json!({"id": p, "kind": "person"}))).await.unwrap();
    }
}

#[tokio::test]
async fn the_tools_play_figure1_through_the_router() {
    let b = figure1(&memory(), Scope::Admin, "demo").await;
    let mcp = EarshotMcp::new(b, "demo");
    let group = json!({"owner": "owner", "participants": ["alice", "bob"]});
    let f1 = json!({"id": "f1", "owner": "owner", "participants": ["alice", "bob"], "content": "offsite in Lisbon"});
    assert_eq!(mcp.do_remember(obj(f1)).await.unwrap()["item"], "f1");
    let f2 = json!({"id": "f2", "owner": "owner", "participants": ["alice"], "content": "alice skips the offsite"});
    mcp.do_remember(obj(f2)).await.unwrap();
    let p1 = json!({"id": "p1", "owner": "owner", "visibility": "public", "content": "offsite agenda"});
    mcp.do_remember(obj(p1)).await.unwrap();

    let mut q = group.clone();
    q["query"] = json!("offsite");
    let got = mcp.do_recall(obj(q)).await.unwrap();
    let mut items: Vec<&str> = got["items"].as_array().unwrap().iter().filter_map(|i| i["item"].as_str()).collect();
    items.sort_unstable();
    assert_eq!(items, ["f1", "p1"]);
    assert_eq!(got["resolved"], true);

    let unresolved = json!({"owner": "owner", "participants": ["bob", "ghost"], "query": "offsite"});
    let got = mcp.do_recall(obj(unresolved)).await.unwrap();
    assert_eq!((got["resolved"].clone(), got["items"].as_array().map(Vec::len)), (json!(false), Some(1)));
    assert!(got["note"].as_str().unwrap_or("").contains("UNRESOLVED"), "{got}");

    let mut e = group.clone();
    e["item"] = json!("f2");
    let why = mcp.do_explain(obj(e)).await.unwrap();
    assert_eq!((why["admitted"].clone(), why["reason"].clone()), (json!(false), json!("denied_not_in_audience")));

    let g = mcp.do_grant(obj(json!({"item": "f2", "members": ["ghost"]}))).await;
    assert_eq!(g.unwrap_err().code, "participant_not_found");
    let g = mcp.do_grant(obj(json!({"item": "f2", "members": ["carol"]}))).await.unwrap();
    let carol = json!({"owner": "owner", "participants": ["carol"], "item": "f2"});
    let why = mcp.do_explain(obj(carol.clone())).await.unwrap();
    assert_eq!((why["reason"].clone(), why["grant"].clone()), (json!("admitted_grant"), g["grant"].clone()));
    mcp.do_revoke(obj(json!({"grant": g["grant"]}))).await.unwrap();
    assert_eq!(mcp.do_explain(obj(carol)).await.unwrap()["admitted"], false);
}

#[tokio::test]
async fn a_tool_never_widens_the_token() {
    // The embedded token is limited to its store: another store is forbidden even to an admin.
    let earshot = memory();
    let limited = figure1(&earshot, Scope::Admin, "other").await;
    let other = EarshotMcp::new(limited.clone(), "demo");
    let r = other.do_explain(obj(json!({"owner": "owner", "item": "f1"}))).await;
    assert_eq!(r.unwrap_err().code, "forbidden");
    let r = other.do_remember(obj(json!({"owner": "owner", "visibility": "public", "content": "x"}))).await;
    assert_eq!(r.unwrap_err().code, "forbidden");

    // A reader's writes are refused by the API with 403 `forbidden`; its reads answer.
    let reader = EarshotMcp::new(Backend::Embedded(Embedded::over(earshot, "demo", Scope::Reader).unwrap()), "demo");
    let r = reader.do_remember(obj(json!({"owner": "owner", "visibility": "public", "content": "x"}))).await;
    let e = r.unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (Some(403), "forbidden"));
    assert_eq!(reader.do_grant(obj(json!({"item": "f1", "members": ["bob"]}))).await.unwrap_err().code, "forbidden");
    let r = reader.do_recall(obj(json!({"owner": "owner", "query": "anything"}))).await.unwrap();
    assert_eq!(r["items"], json!([]));
}

#[tokio::test]
async fn streamable_http_answers_initialize_and_lists_the_tools() {
    let server = EarshotMcp::new(backend(Scope::Admin, "demo"), "demo");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(super::serve_http_on(server, listener, async move { drop(stop_rx.await) }, || ()));
    let answers = tokio::task::spawn_blocking(move || {
        let post = |session: Option<&str>, body: Value| {
            let mut req = ureq::post(&url)
                .set("content-type", "application/json")
                .set("accept", "application/json, text/event-stream");
            if let Some(s) = session {
                req = req.set("mcp-session-id", s).set("mcp-protocol-version", "2025-06-18");
            }
            req.send_string(&body.to_string()).map_err(Box::new)
        };
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let resp = post(None, init).unwrap();
        let session = resp.header("mcp-session-id").map(str::to_owned);
        let first = resp.into_string().unwrap();
        let session = session.as_deref();
        post(session, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        let list = post(session, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
        (first, list.into_string().unwrap())
    })
    .await
    .unwrap();
    assert!(answers.0.contains("\"earshot\""), "{}", answers.0);
    for tool in ["remember", "recall", "explain", "grant", "revoke"] {
        assert!(answers.1.contains(&format!("\"{tool}\"")), "{}", answers.1);
    }
    let _ = stop_tx.send(());
    serving.await.unwrap().unwrap();
}
