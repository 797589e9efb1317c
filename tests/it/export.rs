//! Owns the export/import tests: the exact round trip of a store built from every fixture
//! scenario (verify, facts, every read of the scenario answered the same, the export of the
//! import byte for byte the export), the refusals of a damaged or partial export (nothing is
//! left behind), and both routes over HTTP in process.

use std::cell::RefCell;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use earshot::validate::{Target, STORE};
use earshot_store::{Backend, Clock, SledBackend, StoreError};
use earshot_tests::TestApp;
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

use crate::scenarios::{fixture_files, parse};

/// A target that passes every call to a `TestApp` and keeps the reads, to ask them again later.
struct Recorder<'a> {
    app: &'a TestApp,
    reads: RefCell<Vec<(String, String, Option<Value>)>>,
}

/// The reads that decide or show state (not attempts: they pin a snapshot of their own store).
fn is_replayable_read(method: &str, path: &str) -> bool {
    if path.contains("/attempts") || path.contains("/watch") {
        return false;
    }
    let decides = ["/check", "/check/bulk", "/lookup", "/authorize"].iter().any(|s| path.ends_with(s));
    (method == "POST" && decides) || method == "GET"
}

impl Target for Recorder<'_> {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        // A read at an attempt reads that attempt's pinned snapshot, of this store only.
        let pinned = body.as_ref().is_some_and(|b| b.get("attempt").is_some());
        if is_replayable_read(method, path) && !pinned {
            self.reads.borrow_mut().push((method.to_string(), path.to_string(), body.clone()));
        }
        self.app.call(method, path, body).await
    }
    fn revision(&self, store: &str) -> u64 {
        self.app.revision(store)
    }
    fn set_clock(&self, ms: i64) {
        self.app.clock.set(ms);
    }
}

/// An answer without what names its store: tokens (and the `consistency` a request carried,
/// which is removed from requests before they are asked again).
fn without_tokens(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("token");
            m.remove("consistency");
            for x in m.values_mut() {
                without_tokens(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(without_tokens),
        _ => {}
    }
}

fn export_of(app: &TestApp, store: &str) -> Vec<u8> {
    let mut out = Vec::new();
    app.earshot.export(store).expect("export opens").write_to(&mut out).expect("export runs");
    out
}

/// The export without its header (the one line that names the store).
fn body_lines(export: &[u8]) -> Vec<&[u8]> {
    export.split(|b| *b == b'\n').skip(1).collect()
}

#[tokio::test]
async fn every_fixture_round_trips_exactly() {
    let mut checked = 0;
    let mut replayed = 0;
    for f in fixture_files() {
        let text = std::fs::read_to_string(&f).expect("fixture");
        let sc = parse(&text).expect("fixture parses");
        let app = TestApp::new();
        let rec = Recorder { app: &app, reads: RefCell::default() };
        let report = earshot::validate::run(&rec, &sc).await;
        assert!(report.failures.is_empty(), "{}: the scenario itself fails: {:?}", sc.name, report.failures.len());
        let exported = export_of(&app, STORE);

        // Into the same service under another id.
        let imported = app.earshot.import_store("t", &mut &exported[..]).expect("import");
        let s = app.earshot.store(STORE).expect("s");
        let t = app.earshot.store("t").expect("t");
        assert_eq!(imported.revision, s.latest().revision(), "{}", sc.name);
        t.verify().unwrap_or_else(|e| panic!("{}: verify after import: {e}", sc.name));
        // Idempotency records carry tokens, which name the store: compared below, same id.
        let no_keys = |v: Vec<String>| v.into_iter().filter(|f| !f.starts_with("idempotency-key")).collect::<Vec<_>>();
        assert_eq!(no_keys(s.latest().facts()), no_keys(t.latest().facts()), "{}: facts differ", sc.name);

        // Every read the scenario made, asked again of both stores now, answers the same.
        let reads = rec.reads.borrow().clone();
        for (method, path, body) in &reads {
            let mut body = body.clone();
            if let Some(b) = body.as_mut() {
                without_tokens(b);
            }
            let there = path.replacen(&format!("/v1/stores/{STORE}/"), "/v1/stores/t/", 1);
            let (sa, mut a) = app.call(method, path, body.clone()).await;
            let (sb, mut b) = app.call(method, &there, body).await;
            without_tokens(&mut a);
            without_tokens(&mut b);
            assert_eq!((sa, &a), (sb, &b), "{}: {method} {path} differs after import", sc.name);
        }
        replayed += reads.len();

        // The export of the import is the export, but for the header; records with tokens
        // (idempotency keys) name the new store.
        let again = export_of(&app, "t");
        let strip = |v: Vec<&'_ [u8]>| -> Vec<Vec<u8>> {
            v.into_iter().filter(|l| !l.starts_with(b"{\"kind\":\"idempotency_key\"")).map(<[u8]>::to_vec).collect()
        };
        assert_eq!(strip(body_lines(&exported)), strip(body_lines(&again)), "{}: re-export differs", sc.name);

        // Under the same id in another service: byte for byte the same file, every fact equal.
        let other = TestApp::new();
        other.clock.set(app.clock.now_ms());
        other.earshot.import_store(STORE, &mut &exported[..]).expect("import under the same id");
        let same = export_of(&other, STORE);
        assert!(same == exported, "{}: export(import(export)) is not byte for byte the export", sc.name);
        assert_eq!(s.latest().facts(), other.earshot.store(STORE).expect("s").latest().facts(), "{}", sc.name);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} fixtures");
    assert!(replayed >= 100, "only {replayed} reads asked again");
}

/// A store from the first fixture (Figure 1) over a backend the test can look into.
async fn figure1() -> (TestApp, Arc<SledBackend>, Vec<u8>) {
    let backend = Arc::new(SledBackend::temporary().expect("sled"));
    let app = TestApp::with_backend(backend.clone());
    let f = fixture_files().into_iter().next().expect("a fixture");
    let sc = parse(&std::fs::read_to_string(f).expect("fixture")).expect("parses");
    assert!(earshot::validate::run(&app, &sc).await.failures.is_empty());
    let exported = export_of(&app, STORE);
    (app, backend, exported)
}

/// Replaces the first line containing `needle` by what `f` makes of it.
fn edit(export: &[u8], needle: &str, f: impl Fn(&str) -> String) -> Vec<u8> {
    let text = String::from_utf8(export.to_vec()).expect("utf-8");
    let mut done = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if !done && l.contains(needle) {
                done = true;
                f(l)
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(done, "no line with {needle}");
    (lines.join("\n") + "\n").into_bytes()
}

#[tokio::test]
async fn a_damaged_or_partial_export_is_refused_and_leaves_nothing() {
    let (app, backend, exported) = figure1().await;
    let text = String::from_utf8(exported.clone()).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    let join = |v: Vec<&str>| (v.join("\n") + "\n").into_bytes();
    let audience = lines.iter().position(|l| l.contains("\"kind\":\"audience\"")).expect("an audience");
    let item = lines.iter().position(|l| l.contains("\"kind\":\"item\"")).expect("an item");
    let last_item = lines.iter().rposition(|l| l.contains("\"kind\":\"item\"")).expect("an item");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("cut off", join(lines[..n - 1].to_vec()), "end line"),
        ("cut mid-record", exported[..exported.len() / 2].to_vec(), ""),
        ("empty", Vec::new(), "empty"),
        (
            "failed where taken",
            join([&lines[..n - 1], &["{\"error\":{\"code\":\"write_conflict\"}}"]].concat()),
            "failed",
        ),
        ("count", edit(&exported, "earshot_export_end", |l| l.replace("\"records\":", "\"records\":1")), "end line"),
        (
            "format",
            edit(&exported, "earshot_export\"", |l| l.replace("\"earshot_export\":1", "\"earshot_export\":2")),
            "format",
        ),
        (
            "order",
            {
                let mut v = lines.clone();
                v.swap(audience, item);
                join(v)
            },
            "order",
        ),
        (
            "repeated",
            {
                let mut v = lines.clone();
                v.insert(item, lines[item]);
                join(v)
            },
            "order",
        ),
        (
            "tampered audience",
            edit(&exported, "\"kind\":\"audience\"", |l| l.replacen("\"members\":[\"", "\"members\":[\"zed\",\"", 1)),
            "audience",
        ),
        (
            "key not the record's",
            edit(&exported, "\"kind\":\"item\"", |l| l.replacen("\"key\":\"", "\"key\":\"zz", 1)),
            "key",
        ),
        (
            // Still in key order, so found by the checks of the whole set, after the end line.
            "the last item's key not the record's",
            {
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                v[last_item] = v[last_item].replacen("\"key\":\"", "\"key\":\"zz", 1);
                (v.join("\n") + "\n").into_bytes()
            },
            "is not the key its record names",
        ),
        (
            "unknown kind",
            edit(&exported, "\"kind\":\"item\"", |l| l.replacen("\"kind\":\"item\"", "\"kind\":\"log\"", 1)),
            "kind",
        ),
        ("not a record", edit(&exported, "\"kind\":\"item\"", |l| l.replacen("\"value\":{", "\"value\":[{", 1)), ""),
        (
            "content of no item",
            {
                // At its place in key order: after every `c/` key, before the next kind.
                let at = lines
                    .iter()
                    .position(|l| {
                        ["device", "grant", "item_digest", "item"]
                            .iter()
                            .any(|k| l.contains(&format!("\"kind\":\"{k}\"")))
                    })
                    .expect("a record after content");
                let mut v = lines.clone();
                v.insert(at, "{\"kind\":\"content\",\"key\":\"zzz\",\"value\":{\"content\":\"x\"}}");
                // And the end line counts it, so that only the content itself is wrong.
                let count = n as u64 - 2;
                let end = lines[n - 1].replace(&format!("\"records\":{count}"), &format!("\"records\":{}", count + 1));
                let last = v.len() - 1;
                v[last] = &end;
                join(v)
            },
            "names no item",
        ),
        (
            "created after the export",
            edit(&exported, "\"kind\":\"item\"", |l| {
                let at = l.find("\"created_rev\":").expect("an item's created_rev") + "\"created_rev\":".len();
                let end = at + l[at..].find(|c: char| !c.is_ascii_digit()).expect("a number");
                format!("{}999999{}", &l[..at], &l[end..])
            }),
            "after the export's revision",
        ),
    ];
    // The line each refusal names, where one line is at fault: also a record the checks of the
    // whole set find wrong after the end line was read (lines count from 1, the header).
    let at = |name: &str| match name {
        "tampered audience" => Some(audience as u64 + 1),
        "created after the export" => Some(item as u64 + 1),
        "the last item's key not the record's" => Some(last_item as u64 + 1),
        "cut off" => Some(n as u64),
        _ => None,
    };
    for (name, input, says) in cases {
        let err = app.earshot.import_store("t", &mut &input[..]).expect_err(name);
        match &err {
            StoreError::ImportInvalid { message, line } => {
                assert!(message.contains(says), "{name}: {message}");
                if let Some(want) = at(name) {
                    assert_eq!(*line, want, "{name}: {message}");
                }
            }
            other => panic!("{name}: expected import_invalid, got {other:?}"),
        }
        assert!(app.earshot.store("t").is_err(), "{name}: the store exists");
        let left = backend.scan("t", &[], &[0xff], 10).expect("scan");
        assert!(left.is_empty(), "{name}: records left behind: {}", left.len());
    }
    // The same export into an existing store is refused; as itself it is accepted.
    assert!(matches!(app.earshot.import_store(STORE, &mut &exported[..]), Err(StoreError::StoreExists(_))));
    app.earshot.import_store("t", &mut &exported[..]).expect("the untouched export imports");
    app.earshot.store("t").expect("t").verify().expect("verify");
}

async fn send(app: &TestApp, method: &str, path: &str, body: Vec<u8>) -> (StatusCode, Vec<u8>) {
    let req = Request::builder().method(method).uri(path).body(Body::from(body)).expect("request");
    let resp = app.router.clone().oneshot(req).await.expect("router");
    let status = resp.status();
    (status, resp.into_body().collect().await.expect("body").to_bytes().to_vec())
}

#[tokio::test]
async fn export_and_import_over_http() {
    let (app, _backend, _) = figure1().await;
    // Over the ordinary 1 MiB body limit, which this route does not have.
    let big = "x".repeat(60_000);
    for n in 0..24 {
        let item = serde_json::json!({"id": format!("big{n}"), "owner": "owner", "content": big, "origin": "public"});
        assert_eq!(app.call("POST", "/v1/stores/s/items", Some(item)).await.0, StatusCode::CREATED);
    }
    let exported = export_of(&app, STORE);
    assert!(exported.len() > 1024 * 1024);
    let (status, body) = send(&app, "GET", "/v1/stores/s/export", Vec::new()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body == exported, "the route streams the same export");
    let (status, answer) = send(&app, "POST", "/v1/stores/u/import", body.clone()).await;
    let answer: Value = serde_json::from_slice(&answer).expect("json");
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["store"], "u");
    assert_eq!(answer["from"], "s");
    assert_eq!(answer["revision"].as_u64(), Some(app.revision(STORE)));
    let (_, again) = send(&app, "GET", "/v1/stores/u/export", Vec::new()).await;
    assert_eq!(body_lines(&again), body_lines(&exported));
    let (status, answer) = send(&app, "POST", "/v1/stores/u/import", body.clone()).await;
    assert_eq!(status, StatusCode::CONFLICT, "{}", String::from_utf8_lossy(&answer));
    let cut = body[..body.len() - 10].to_vec();
    let (status, answer) = send(&app, "POST", "/v1/stores/w/import", cut).await;
    let answer: Value = serde_json::from_slice(&answer).expect("json");
    assert_eq!((status, answer["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("import_invalid")));
    assert!(answer["error"]["details"]["line"].as_u64().is_some(), "{answer}");
    let (status, _) = send(&app, "GET", "/v1/stores/w/export", Vec::new()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// An export of a store that is written to all the while reads one revision: the writes go on
/// (every one acknowledged, none refused), the export completes, and its import verifies and
/// holds exactly the facts of the source at the revision the header names.
#[tokio::test]
async fn an_export_under_steady_writes_reads_the_revision_it_started_at() {
    use earshot_store::memory::model::{LifecycleRequest, NewItem};
    use earshot_store::model::Command;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let (app, _backend, _) = figure1().await;
    let s = app.earshot.store(STORE).expect("s");
    let item = |id: String, content: String| -> Command {
        let v = serde_json::json!({"id": id, "owner": "owner", "content": content, "origin": "public"});
        Command::CreateItem(serde_json::from_value::<NewItem>(v).expect("item"))
    };
    // Several chunks of records (items, their content, digests), so the export takes a while.
    for n in 0..1500 {
        s.write(item(format!("b{n}"), format!("bulk {n}"))).expect("bulk");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (s, stop, written) = (s.clone(), stop.clone(), written.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // New records, and records of the exported revision changed and deleted
                // (an item deleted loses its content record).
                s.write(item(format!("w{n}"), format!("during {n}"))).expect("a write during the export");
                let action = if n.is_multiple_of(2) { "delete" } else { "freeze" };
                let request: LifecycleRequest =
                    serde_json::from_value(serde_json::json!({"action": action})).expect("lc");
                s.write(Command::Lifecycle { item: format!("b{n}"), request }).expect("a change during the export");
                n += 1;
                written.store(n, Ordering::Relaxed);
            }
        })
    };
    let wait_for_writes = |after: u64| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while written.load(Ordering::Relaxed) <= after && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
    };
    wait_for_writes(3);
    let mut export = app.earshot.export(STORE).expect("export opens");
    let revision = export.header().revision;
    // Bulk items from here on are deleted (even) or frozen (odd) after the exported revision.
    let later = written.load(Ordering::Relaxed) + 1;
    let at = s.read_point(&earshot_store::memory::model::Consistency::AtExact(s.token(revision)), app.clock.now_ms());
    let source_facts = at.expect("the exported revision is retained").snapshot.facts();
    let mut exported = Vec::new();
    let mut chunks = 0;
    loop {
        // Writes land between every two chunks.
        wait_for_writes(written.load(Ordering::Relaxed));
        let mut buf = Vec::new();
        match export.next_chunk(&mut buf) {
            Ok(true) => exported.extend_from_slice(&buf),
            Ok(false) => break,
            Err(e) => panic!("the export failed under writes: {e}"),
        }
        chunks += 1;
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");
    assert!(chunks >= 4, "only {chunks} chunks");
    assert!(s.latest().revision() > revision + 10, "the writes went on during the export");
    let header: Value = serde_json::from_slice(exported.split(|b| *b == b'\n').next().expect("header")).expect("json");
    assert_eq!(header["revision"].as_u64(), Some(revision), "the header states the exported revision");

    let imported = app.earshot.import_store("t", &mut &exported[..]).expect("import");
    assert_eq!(imported.revision, revision);
    let t = app.earshot.store("t").expect("t");
    t.verify().expect("verify after import");
    let no_keys = |v: Vec<String>| v.into_iter().filter(|f| !f.starts_with("idempotency-key")).collect::<Vec<_>>();
    assert_eq!(no_keys(source_facts), no_keys(t.latest().facts()), "facts differ from the source at {revision}");
    // Content deleted from the source after the exported revision is in the export.
    let last = written.load(Ordering::Relaxed).min(1500);
    assert!(last > later + 4, "too few deletions during the export");
    for n in (later..last).filter(|n| n.is_multiple_of(2)) {
        let c = t.content(&format!("b{n}")).expect("content").and_then(|c| c.content);
        assert_eq!(c.as_deref(), Some(format!("bulk {n}").as_str()), "b{n}");
        assert!(s.content(&format!("b{n}")).expect("content").is_none(), "b{n} deleted in the source");
    }
}

/// A body sent in `chunks`, `pause` apart, stalling for good before chunk `stall_at`.
fn paced_body(chunks: Vec<Vec<u8>>, pause: std::time::Duration, stall_at: Option<usize>) -> Body {
    let stream = futures_util::stream::unfold((chunks.into_iter(), 0usize), move |(mut rest, n)| async move {
        if n > 0 {
            tokio::time::sleep(pause).await;
        }
        if stall_at == Some(n) {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
        rest.next().map(|c| (Ok::<_, std::io::Error>(axum::body::Bytes::from(c)), (rest, n + 1)))
    });
    Body::from_stream(stream)
}

/// An import through the server's timeout layer is bounded by its progress, not by
/// `request_timeout_ms`: one that takes several request timeouts while its body keeps coming
/// succeeds; one whose body stops arriving answers `408 body_timeout` and leaves nothing.
#[tokio::test]
async fn an_import_is_bounded_by_progress_not_by_the_request_timeout() {
    use std::time::{Duration, Instant};
    let (app, backend, exported) = figure1().await;
    let limits = earshot_api::ServerLimits {
        request_timeout: Duration::from_millis(150),
        stream_idle_timeout: Duration::from_millis(400),
        ..earshot_api::ServerLimits::default()
    };
    let router = earshot_api::server::with_request_timeout(app.router.clone(), limits);
    let pieces: Vec<Vec<u8>> = exported.chunks(exported.len().div_ceil(12)).map(<[u8]>::to_vec).collect();
    assert!(pieces.len() >= 10);
    let send = |path: &str, body: Body| {
        let req = Request::builder().method("POST").uri(path).body(body).expect("request");
        router.clone().oneshot(req)
    };

    // Other routes still have the request timeout: a body that trickles is cut off.
    let slow_create = paced_body(vec![b"{\"id\":".to_vec(), b"\"x\"}".to_vec()], Duration::from_millis(400), None);
    let req = Request::builder()
        .method("POST")
        .uri("/v1/stores")
        .header("content-type", "application/json")
        .body(slow_create)
        .expect("request");
    let resp = router.clone().oneshot(req).await.expect("router");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE, "request_timeout applies to other routes");

    let started = Instant::now();
    let resp =
        send("/v1/stores/t/import", paced_body(pieces.clone(), Duration::from_millis(40), None)).await.expect("router");
    let took = started.elapsed();
    let status = resp.status();
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&body));
    assert!(took > limits.request_timeout * 2, "the import took {took:?}, not longer than the request timeout");
    app.earshot.store("t").expect("t").verify().expect("verify");

    let resp =
        send("/v1/stores/u/import", paced_body(pieces, Duration::from_millis(10), Some(5))).await.expect("router");
    let status = resp.status();
    let body: Value =
        serde_json::from_slice(&resp.into_body().collect().await.expect("body").to_bytes()).expect("json");
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::REQUEST_TIMEOUT, Some("body_timeout")), "{body}");
    assert!(app.earshot.store("u").is_err(), "a stalled import created its store");
    // Its records are removed by the importer, which the stall stopped.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !backend.scan("u", &[], &[0xff], 10).expect("scan").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(backend.scan("u", &[], &[0xff], 10).expect("scan").is_empty(), "records left behind");
}
