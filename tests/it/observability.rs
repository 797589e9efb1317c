//! Observability: `/metrics` is a valid Prometheus exposition (read by a grammar-based parser;
//! every family has `# HELP` and `# TYPE`), requests are labelled by route template, decisions
//! by reason code, stores only for tokens that may read them; each request gets a request id;
//! `--log-format json` writes one JSON object per line on stderr, with one request line per
//! request carrying no token; and `docs/configuration.md` agrees with `earshot serve --help`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

use axum::body::Body;
use axum::http::Request;
use earshot_api::{Scope, TokenConfig};
use earshot_tests::TestApp;
use http_body_util::BodyExt;
use openmetrics_parser::{PrometheusType, PrometheusValue};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::e2e::{earshot_bin, Server};

type Exposition = openmetrics_parser::MetricsExposition<PrometheusType, PrometheusValue>;

/// `GET /metrics` (with a token, if given): status, content type and text.
async fn scrape(app: &TestApp, token: Option<&str>) -> (u16, String, String) {
    let mut req = Request::builder().method("GET").uri("/metrics");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = app.router.clone().oneshot(req.body(Body::empty()).expect("request")).await.expect("router");
    let status = resp.status().as_u16();
    let ctype = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, ctype, String::from_utf8(bytes.to_vec()).expect("utf-8 exposition"))
}

/// Parses the whole exposition and checks that every family has HELP and TYPE, both by the
/// parser's reading and line by line (every sample belongs to a family declared before it).
fn parse_checked(text: &str) -> Exposition {
    let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
        .unwrap_or_else(|e| panic!("the exposition does not parse: {e:?}\n{text}"));
    assert!(!exposition.families.is_empty(), "no families:\n{text}");
    for (name, f) in &exposition.families {
        assert!(!f.help.trim().is_empty(), "family {name} has no HELP:\n{text}");
        assert_ne!(f.family_type, PrometheusType::Unknown, "family {name} has no TYPE:\n{text}");
    }
    let (mut helped, mut typed) = (BTreeSet::new(), BTreeMap::new());
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["#", "HELP", name, ..] => {
                assert!(helped.insert(name.to_string()), "HELP of {name} twice");
            }
            ["#", "TYPE", name, kind] => {
                assert!(typed.insert(name.to_string(), kind.to_string()).is_none(), "TYPE of {name} twice");
            }
            [first, ..] if !first.starts_with('#') => {
                let metric = first.split('{').next().unwrap_or(first);
                let family = typed.iter().find(|(f, kind)| {
                    metric == f.as_str()
                        || (kind.as_str() == "histogram"
                            && ["_bucket", "_sum", "_count"].iter().any(|s| metric == format!("{f}{s}")))
                });
                let (family, _) = family.unwrap_or_else(|| panic!("sample {metric} has no TYPE before it:\n{text}"));
                assert!(helped.contains(family), "sample {metric} has no HELP:\n{text}");
            }
            _ => {}
        }
    }
    assert_eq!(helped, typed.keys().cloned().collect::<BTreeSet<_>>(), "HELP and TYPE name different families");
    exposition
}

/// The samples of a family as (labels, value); histograms give their count.
fn samples(e: &Exposition, family: &str) -> Vec<(HashMap<String, String>, f64)> {
    let f = e.families.get(family).unwrap_or_else(|| panic!("no family {family}: {:?}", e.families.keys()));
    f.iter_samples()
        .map(|s| {
            let labels =
                s.get_labelset().map(|l| l.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default();
            let value = match &s.value {
                PrometheusValue::Counter(c) => c.value.as_f64(),
                PrometheusValue::Gauge(n) | PrometheusValue::Unknown(n) => n.as_f64(),
                PrometheusValue::Histogram(h) => h.count.unwrap_or(0) as f64,
                PrometheusValue::Summary(_) => f64::NAN,
            };
            (labels, value)
        })
        .collect()
}

/// The value of the sample whose labels include all of `want`, or 0 when there is none.
fn value(e: &Exposition, family: &str, want: &[(&str, &str)]) -> f64 {
    samples(e, family)
        .into_iter()
        .filter(|(l, _)| want.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v)))
        .map(|(_, v)| v)
        .sum()
}

async fn post(app: &TestApp, path: &str, body: Value) -> Value {
    let (status, body) = app.call("POST", path, Some(body)).await;
    assert!(status.is_success(), "{path}: {status} {body}");
    body
}

/// A store `obs` with owner, alice and bob; `f1` said to alice; a device of alice's.
async fn setup(app: &TestApp) {
    post(app, "/v1/stores", json!({"id": "obs"})).await;
    for p in ["owner", "alice", "bob"] {
        post(app, "/v1/stores/obs/participants", json!({"id": p, "kind": "person"})).await;
    }
    let item = json!({"id": "f1", "owner": "owner", "content": "x", "origin": {"participants": ["alice"]}});
    post(app, "/v1/stores/obs/items", item).await;
    post(app, "/v1/stores/obs/devices", json!({"id": "fridge", "owner": "alice"})).await;
}

fn container(viewers: &[&str]) -> Value {
    json!({"owner": "owner", "viewers": {"participants": viewers}})
}

#[tokio::test]
async fn metrics_are_a_valid_exposition_with_decisions_by_reason_and_routes_by_template() {
    let app = TestApp::new();
    setup(&app).await;
    let admitted = post(&app, "/v1/stores/obs/check", json!({"item": "f1", "container": container(&["alice"])})).await;
    assert_eq!(admitted["reason"], "admitted_origin", "{admitted}");
    let denied = post(&app, "/v1/stores/obs/check", json!({"item": "f1", "container": container(&["bob"])})).await;
    assert_eq!(denied["reason"], "denied_not_in_audience", "{denied}");
    post(&app, "/v1/stores/obs/check/bulk", json!({"items": ["f1", "nope"], "container": container(&["bob"])})).await;
    let look = post(&app, "/v1/stores/obs/lookup", json!({"container": container(&["alice"])})).await;
    assert_eq!(look["items"][0]["reason"], "admitted_origin", "{look}");
    let auth = json!({"principal": "alice", "device": "fridge", "path": "status/door", "action": "read"});
    assert_eq!(post(&app, "/v1/stores/obs/authorize", auth).await["reason"], "allowed_owner");
    let auth = json!({"principal": "bob", "device": "fridge", "path": "status/door", "action": "read"});
    assert_eq!(post(&app, "/v1/stores/obs/authorize", auth).await["reason"], "denied_no_authority");
    // `POST /uses` decides too (at the writer), allowed or denied.
    let ask = json!({"principal": "alice", "device": "fridge", "path": "status/door", "action": "read"});
    assert_eq!(post(&app, "/v1/stores/obs/uses", ask).await["decision"]["reason"], "allowed_owner");
    let ask = json!({"principal": "bob", "device": "fridge", "path": "status/door", "action": "read"});
    assert_eq!(post(&app, "/v1/stores/obs/uses", ask).await["decision"]["reason"], "denied_no_authority");
    // So does an attempt's context: each item admitted into it.
    let attempt = post(&app, "/v1/stores/obs/attempts", json!({"container": container(&["alice"])})).await;
    let path = format!("/v1/stores/obs/attempts/{}/context", attempt["attempt"].as_str().unwrap_or_default());
    let context = post(&app, &path, json!({"query": "x"})).await;
    assert_eq!(context["items"][0]["reason"], "admitted_origin", "{context}");
    assert_eq!(app.call("GET", "/no/such/route", None).await.0.as_u16(), 404);
    assert_eq!(app.call("DELETE", "/v1/stores/obs/check", None).await.0.as_u16(), 405);

    let (status, ctype, text) = scrape(&app, None).await;
    assert_eq!(status, 200, "{text}");
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    let e = parse_checked(&text);

    // Each decision counted under its endpoint and reason code.
    let decisions = "earshot_decisions_total";
    assert_eq!(value(&e, decisions, &[("kind", "check"), ("reason", "admitted_origin")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "check"), ("reason", "denied_not_in_audience")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "check_bulk"), ("reason", "denied_not_in_audience")]), 1.0);
    assert_eq!(value(&e, decisions, &[("kind", "check_bulk"), ("reason", "denied_unknown_item")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "lookup"), ("reason", "admitted_origin")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "authorize"), ("reason", "allowed_owner")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "authorize"), ("reason", "denied_no_authority")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "use"), ("reason", "allowed_owner")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "use"), ("reason", "denied_no_authority")]), 1.0, "{text}");
    assert_eq!(value(&e, decisions, &[("kind", "context"), ("reason", "admitted_origin")]), 1.0, "{text}");
    // The kinds are a closed set, the reasons the store's reason codes.
    let kinds: BTreeSet<String> =
        samples(&e, decisions).into_iter().filter_map(|(l, _)| l.get("kind").cloned()).collect();
    let known = ["check", "check_bulk", "lookup", "authorize", "use", "context"];
    assert!(kinds.iter().all(|k| known.contains(&k.as_str())), "{kinds:?}");

    // Requests by route template and status, never by raw path; latency per route.
    let requests = "earshot_http_requests_total";
    let check = [("method", "POST"), ("route", "/v1/stores/{store}/check"), ("status", "200")];
    assert_eq!(value(&e, requests, &check), 2.0, "{text}");
    assert_eq!(value(&e, requests, &[("route", "/v1/stores/{store}/participants"), ("status", "201")]), 3.0);
    assert_eq!(value(&e, requests, &[("route", "unmatched"), ("status", "404")]), 1.0, "{text}");
    assert_eq!(value(&e, requests, &[("route", "/v1/stores/{store}/check"), ("status", "405")]), 1.0, "{text}");
    for (labels, _) in samples(&e, requests) {
        let route = labels.get("route").map(String::as_str).unwrap_or("");
        assert!(route == "unmatched" || earshot_api::routes().iter().any(|r| r.path == route), "raw route {route}");
    }
    let latency = "earshot_http_request_duration_seconds";
    assert_eq!(value(&e, latency, &[("method", "POST"), ("route", "/v1/stores/{store}/check")]), 2.0, "{text}");

    // Per store: revision, items, writer queue depth; the batch-size and lag families exist.
    assert_eq!(value(&e, "earshot_store_revision", &[("store", "obs")]), app.revision("obs") as f64);
    assert_eq!(value(&e, "earshot_store_items", &[("store", "obs")]), 1.0);
    assert_eq!(value(&e, "earshot_writer_queue_depth", &[("store", "obs")]), 0.0);
    for family in ["earshot_writer_batch_size", "earshot_store_lag_revisions", "earshot_store_lag_seconds"] {
        assert!(e.families.contains_key(family), "{family} missing:\n{text}");
    }
}

#[tokio::test]
async fn a_store_limited_token_sees_only_its_stores() {
    let tokens = vec![
        TokenConfig { name: "root".into(), token: "admin-secret-0123456789".into(), scope: Scope::Admin, stores: None },
        TokenConfig {
            name: "lim".into(),
            token: "limited-secret-0123456789".into(),
            scope: Scope::Reader,
            stores: Some(vec!["a".into()]),
        },
    ];
    let app = TestApp::with_tokens(tokens);
    for id in ["a", "b"] {
        let r = app.call_with("POST", "/v1/stores", Some(json!({"id": id})), Some("admin-secret-0123456789")).await;
        assert_eq!(r.0.as_u16(), 201, "{}", r.1);
    }
    let (status, _, text) = scrape(&app, None).await;
    assert_eq!(status, 401, "{text}");
    let (_, _, text) = scrape(&app, Some("limited-secret-0123456789")).await;
    let e = parse_checked(&text);
    let stores: BTreeSet<String> =
        samples(&e, "earshot_store_revision").into_iter().filter_map(|(l, _)| l.get("store").cloned()).collect();
    assert_eq!(stores, BTreeSet::from(["a".to_string()]), "{text}");
    assert!(!text.contains("store=\"b\""), "{text}");
    // The instance's own counters count every store together (a decision made in `b` is in
    // them), so a token limited to some stores gets none of them.
    let instance_wide = [
        "earshot_http_requests_total",
        "earshot_http_request_duration_seconds",
        "earshot_decisions_total",
        "earshot_stores_loaded",
        "earshot_stores_unloaded",
        "earshot_store_evictions_total",
        "earshot_writer_threads",
    ];
    for family in instance_wide {
        assert!(!e.families.contains_key(family), "{family} shown to a token limited to store a:\n{text}");
    }
    let (_, _, text) = scrape(&app, Some("admin-secret-0123456789")).await;
    assert!(text.contains("earshot_store_revision{store=\"b\"}"), "{text}");
    let e = parse_checked(&text);
    for family in instance_wide {
        assert!(e.families.contains_key(family), "{family} missing for a token that reads every store:\n{text}");
    }
}

#[tokio::test]
async fn every_answer_carries_a_request_id_and_a_plain_caller_id_is_kept() {
    let app = TestApp::new();
    let send = |id: Option<&str>| {
        let mut req = Request::builder().method("GET").uri("/healthz");
        if let Some(id) = id {
            req = req.header("x-request-id", id);
        }
        let router = app.router.clone();
        let req = req.body(Body::empty()).expect("request");
        async move {
            let resp = router.oneshot(req).await.expect("router");
            resp.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_owned)
        }
    };
    assert_eq!(send(Some("trace-42.a")).await.as_deref(), Some("trace-42.a"));
    let fresh = send(None).await.expect("a fresh request id");
    assert!(!fresh.is_empty() && fresh.len() <= 64, "{fresh}");
    let odd = send(Some("has space")).await.expect("a replaced request id");
    assert_ne!(odd, "has space");
    assert_ne!(send(None).await.expect("id"), fresh, "request ids repeat");
}

/// JSON log lines: one object per line; one request line per request, naming the token that
/// made it by its `name` (on a refusal too, once the token is known), never by its secret.
#[test]
fn json_logs_are_one_object_per_line_with_a_request_line_and_no_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("earshot.toml");
    let secret = "json-log-secret-0123456789";
    let reader_secret = "json-log-reader-0123456789";
    std::fs::write(
        &config,
        format!(
            "[[tokens]]\nname = \"ops\"\ntoken = \"{secret}\"\nscope = \"admin\"\n\n\
             [[tokens]]\nname = \"reader-bot\"\ntoken = \"{reader_secret}\"\nscope = \"reader\"\n"
        ),
    )
    .expect("config");
    let server = Server::start_with_env(&dir.path().join("data"), Some(&config), &[("EARSHOT_LOG_FORMAT", "json")])
        .expect("server starts");
    let c = server.client().with_token(secret);
    let r = c.try_call("POST", "/v1/stores", Some(&json!({"id": "logs"}))).expect("create store");
    assert_eq!(r.0, 201, "{}", r.1);
    let r = c.try_call("GET", "/v1/stores/logs", None).expect("store info");
    assert_eq!(r.0, 200, "{}", r.1);
    let reader = server.client().with_token(reader_secret);
    let r = reader.try_call("DELETE", "/v1/stores/logs?confirm=logs", None).expect("delete as a reader");
    assert_eq!(r.0, 403, "{}", r.1);
    let stranger = server.client().with_token("json-log-unknown-0123456789");
    let r = stranger.try_call("GET", "/v1/stores/logs/participants", None).expect("an unknown token");
    assert_eq!(r.0, 401, "{}", r.1);
    // The request lines are written after the responses: wait for the last, bounded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server.log().contains("/v1/stores/{store}/participants") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let log = server.log();
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}\n{log}")))
        .collect();
    assert!(lines.iter().any(|l| l["message"] == "earshot listening"), "{log}");
    let line = lines
        .iter()
        .find(|l| l["message"] == "request" && l["route"] == "/v1/stores/{store}" && l["method"] == "GET")
        .unwrap_or_else(|| panic!("no request line for GET /v1/stores/{{store}}:\n{log}"));
    assert_eq!((line["level"].as_str(), line["method"].as_str()), (Some("INFO"), Some("GET")), "{line}");
    assert_eq!((line["status"].as_u64(), line["store"].as_str()), (Some(200), Some("logs")), "{line}");
    assert!(line["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{line}");
    // Every request line's latency is in whole microseconds: at most 3 decimals as written.
    for raw in log.lines().filter(|l| l.contains(r#""message":"request""#)) {
        let (_, rest) = raw.split_once(r#""latency_ms":"#).unwrap_or_else(|| panic!("no latency_ms: {raw}"));
        let number = rest.split([',', '}']).next().unwrap_or_default();
        let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(number.parse::<f64>().is_ok() && decimals <= 3, "latency_ms {number:?} in {raw}");
    }
    assert!(line["request_id"].as_str().is_some_and(|id| !id.is_empty()), "{line}");
    assert_eq!(line["token"].as_str(), Some("ops"), "the request line names its token: {line}");
    let refused = lines
        .iter()
        .find(|l| l["message"] == "request" && l["method"] == "DELETE")
        .unwrap_or_else(|| panic!("no request line for the reader's DELETE:\n{log}"));
    assert_eq!((refused["status"].as_u64(), refused["token"].as_str()), (Some(403), Some("reader-bot")), "{refused}");
    let unknown = lines
        .iter()
        .find(|l| l["message"] == "request" && l["route"] == "/v1/stores/{store}/participants")
        .unwrap_or_else(|| panic!("no request line for the unknown token:\n{log}"));
    assert_eq!((unknown["status"].as_u64(), unknown.get("token")), (Some(401), None), "{unknown}");
    for s in [secret, reader_secret, "json-log-unknown"] {
        assert!(!log.contains(s), "a token's secret reached the log:\n{log}");
    }
}

/// The options of `earshot serve --help`: flag → (environment variable, default).
fn help_options() -> BTreeMap<String, (Option<String>, Option<String>)> {
    let out = Command::new(earshot_bin()).args(["serve", "--help"]).output().expect("earshot serve --help");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let help = String::from_utf8(out.stdout).expect("utf-8 help");
    let mut options = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in help.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("--") {
            let flag = rest.split_whitespace().next().unwrap_or("").to_string();
            if flag != "help" {
                options.insert(flag.clone(), (None, None));
                current = Some(flag);
            } else {
                current = None;
            }
        } else if let (Some(flag), Some(env)) = (&current, t.strip_prefix("[env: ")) {
            let name = env.split('=').next().unwrap_or("").to_string();
            if let Some(o) = options.get_mut(flag) {
                o.0 = Some(name);
            }
        } else if let (Some(flag), Some(d)) = (&current, t.strip_prefix("[default: ")) {
            if let Some(o) = options.get_mut(flag) {
                o.1 = Some(d.trim_end_matches(']').to_string());
            }
        }
    }
    options
}

/// The rows of the settings table of `docs/configuration.md`: flag → (env, key, default cell).
fn documented_options() -> BTreeMap<String, (String, String, String)> {
    let page =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md"))
            .expect("docs/configuration.md");
    let mut rows = BTreeMap::new();
    for line in page.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        let [flag, env, key, default, ..] = cells.as_slice() else { continue };
        let Some(flag) = flag.strip_prefix("`--").and_then(|f| f.split([' ', '`']).next()) else { continue };
        let code = |c: &str| c.trim_matches('`').to_string();
        rows.insert(flag.to_string(), (code(env), code(key), default.to_string()));
    }
    rows
}

#[test]
fn the_configuration_page_and_serve_help_agree() {
    let help = help_options();
    let page = documented_options();
    assert!(help.len() >= 10, "too few options read from the help: {help:?}");
    assert_eq!(
        help.keys().collect::<Vec<_>>(),
        page.keys().collect::<Vec<_>>(),
        "flags of `earshot serve --help` vs docs/configuration.md"
    );
    for (flag, (env, default)) in &help {
        let (doc_env, doc_key, doc_default) = &page[flag];
        assert_eq!(Some(doc_env), env.as_ref(), "--{flag}: environment variable");
        if flag != "config" {
            assert_eq!(doc_key, &flag.replace('-', "_"), "--{flag}: config key");
        }
        match default {
            Some(d) => assert_eq!(doc_default, &format!("`{d}`"), "--{flag}: default"),
            None => {
                assert!(!doc_default.starts_with('`'), "--{flag} has no fixed default, the page says {doc_default}")
            }
        }
        // The key is one the configuration file knows (a wrong type is fine here, an unknown
        // key is not).
        if flag != "config" {
            let parsed = toml::from_str::<earshot::config::FileConfig>(&format!("{doc_key} = 0"));
            let err = parsed.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(!err.contains("unknown field"), "--{flag}: `{doc_key}` is not a configuration key: {err}");
        }
    }
}

/// A stand-in OTLP collector on loopback: answers every request `200` and reports each
/// request line (`POST /v1/traces HTTP/1.1`).
fn fake_collector() -> (std::net::SocketAddr, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fake collector");
    let addr = listener.local_addr().expect("collector address");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n");
            if tx.send(first.trim().to_string()).is_err() {
                break;
            }
        }
    });
    (addr, rx)
}

#[test]
fn spans_are_exported_over_otlp_when_the_standard_variable_names_an_endpoint() {
    let (collector, requests) = fake_collector();
    let dir = tempfile::tempdir().expect("temp dir");
    let endpoint = format!("http://{collector}");
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "100")];
    let server = Server::start_with_env(&dir.path().join("data"), None, &env).expect("server starts");
    assert!(server.log().contains("exporting traces over OTLP"), "{}", server.log());
    let r = server.client().try_call("GET", "/healthz", None).expect("healthz");
    assert_eq!(r.0, 200);
    let got = requests.recv_timeout(std::time::Duration::from_secs(30)).expect("an OTLP export within 30 s");
    assert_eq!(got, "POST /v1/traces HTTP/1.1", "{got}");
}

#[test]
fn every_key_of_the_configuration_file_is_also_a_flag() {
    // `deny_unknown_fields` lists every key the file knows in its refusal of an unknown one.
    let err = toml::from_str::<earshot::config::FileConfig>("no_such_key = 0").expect_err("refused").to_string();
    let keys: BTreeSet<&str> = err.split('`').skip(1).step_by(2).filter(|k| *k != "no_such_key").collect();
    assert!(keys.contains("bind") && keys.contains("tokens"), "cannot read the keys from: {err}");
    let flags: BTreeSet<String> = help_options().keys().map(|f| f.replace('-', "_")).collect();
    for key in keys {
        // Secrets stay in the file (docs/configuration.md, "Tokens").
        if key != "tokens" {
            assert!(flags.contains(key), "configuration key `{key}` has no `--{}` flag", key.replace('_', "-"));
        }
    }
}
