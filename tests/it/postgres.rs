//! One conformance suite, every backend: every fixture scenario run through a whole Earshot
//! (API, store, writer) over PostgreSQL, then a restart on the same tables that must rebuild
//! the same snapshot and pass `verify`; and the same scenario over `MemoryBackend` must reach
//! the same revision. Two instances ("replicas") writing to one store at once over the same
//! tables, and the real binary served from PostgreSQL across a restart, then `earshot verify`.
//! Skips with a message when PostgreSQL is not reachable.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::sync::Arc;

use earshot_postgres::testing::{isolated, url};
use earshot_store::kernel::log::{log_key, revision_of};
use earshot_store::{Backend, Config, Earshot, ManualClock, MemoryBackend};
use earshot_tests::{TestApp, T0_MS};
use serde_json::json;

use crate::scenarios::{fixture_files, parse, run_scenario_on};

/// The store every scenario writes.
const STORE: &str = "s";

#[tokio::test]
async fn every_fixture_scenario_holds_on_postgres_and_survives_a_restart() {
    let mut report = String::new();
    let files = fixture_files();
    for f in &files {
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
        let sc = parse(&text).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
        let Some(db) = isolated("scenario").expect("PostgreSQL") else { return };

        let app = TestApp::with_backend(db.backend.clone());
        let failures = run_scenario_on(&app, &sc).await;
        if !failures.is_empty() {
            let _ = writeln!(report, "{file} on PostgreSQL:\n  {}", failures.join("\n  "));
            continue;
        }
        let h = app.earshot.store(STORE).expect("store");
        let before = earshot_store::verify::facts(&h.latest());
        let revision = h.latest().revision();
        if let Err(e) = h.verify() {
            let _ = writeln!(report, "{file}: verify before the restart: {e}");
        }
        drop(h);
        drop(app);
        assert_eq!(
            db.backend.head(STORE).expect("head").map(|h| h.revision),
            Some(revision),
            "{file}: the head is the store's revision"
        );

        // A restart: a new Earshot over the same tables rebuilds the same snapshot.
        let clock = Arc::new(ManualClock::new(T0_MS));
        let backend: Arc<dyn Backend> = db.backend.clone();
        let earshot = Earshot::open_with(backend, clock, Config::default()).expect("reopen over PostgreSQL");
        let h = earshot.store(STORE).expect("store after the restart");
        if earshot_store::verify::facts(&h.latest()) != before {
            let _ = writeln!(report, "{file}: the snapshot after the restart differs from the one before");
        }
        if let Err(e) = h.verify() {
            let _ = writeln!(report, "{file}: verify after the restart: {e}");
        }
        drop(h);
        drop(earshot);

        // The same scenario over memory reaches the same revision (the same commits).
        let memory = TestApp::with_backend(Arc::new(MemoryBackend::default()));
        let failures = run_scenario_on(&memory, &sc).await;
        let mem_revision = memory.revision(STORE);
        if !failures.is_empty() || mem_revision != revision {
            let _ = writeln!(
                report,
                "{file}: over memory, revision {mem_revision} vs {revision} over PostgreSQL; {failures:?}"
            );
        }
    }
    assert!(report.is_empty(), "{report}");
    assert!(files.len() >= 10, "expected the fixture scenarios, found {}", files.len());
}

/// Two Earshot instances over the same tables (two replicas, one writer each) write to one store
/// at once: every acknowledged write is there exactly once after a fresh open, revisions are
/// gapless, and no write is applied on stale state (the same item id created on both: one 201,
/// the other `item_exists` or `write_conflict`, never both).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_writing_one_store_never_apply_a_write_on_stale_state() {
    let Some(db) = isolated("replicas").expect("PostgreSQL") else { return };
    let a = Arc::new(TestApp::with_backend(db.backend.clone()));
    assert_eq!(a.call("POST", "/v1/stores", Some(json!({"id": "r"}))).await.0, 201);
    assert_eq!(a.call("POST", "/v1/stores/r/participants", Some(json!({"id": "own", "kind": "agent"}))).await.0, 201);
    let b = Arc::new(TestApp::with_backend(Arc::new(db.another().expect("second replica"))));

    // Per replica, three concurrent clients; each writes its own items and races the other
    // replica for a shared id.
    const ROUNDS: usize = 12;
    let mut tasks = Vec::new();
    for (name, app) in [("a", a.clone()), ("b", b.clone())] {
        for client in 0..3 {
            let app = app.clone();
            tasks.push(tokio::spawn(async move {
                let mut out = Vec::new();
                for round in 0..ROUNDS {
                    for id in [format!("{name}{client}x{round}"), format!("dup{client}x{round}")] {
                        let body =
                            json!({"id": id, "owner": "own", "content": format!("{id} by {name}"), "origin": "public"});
                        let (status, v) = app.call("POST", "/v1/stores/r/items", Some(body)).await;
                        out.push((name, id, status.as_u16(), v));
                    }
                }
                out
            }));
        }
    }
    let mut answers = Vec::new();
    for t in tasks {
        answers.extend(t.await.expect("client task"));
    }

    let mut acked: BTreeMap<String, u64> = BTreeMap::new();
    let mut revisions = BTreeSet::new();
    let mut not_applied = BTreeSet::new();
    let mut conflicts = 0;
    let mut problems = Vec::new();
    for (name, id, status, v) in &answers {
        match (status, v["error"]["code"].as_str()) {
            (201, _) => {
                let rev = v["revision"].as_u64().expect("revision");
                if acked.insert(id.clone(), rev).is_some() {
                    problems.push(format!("`{id}` created twice (second by {name})"));
                }
                if !revisions.insert(rev) {
                    problems.push(format!("revision {rev} acknowledged twice"));
                }
            }
            (409, Some("write_conflict")) => {
                conflicts += 1;
                not_applied.insert(id.clone());
            }
            (409, Some("item_exists")) if id.starts_with("dup") => {}
            _ => problems.push(format!("`{id}` on {name}: {status} {v}")),
        }
    }
    for client in 0..3 {
        for round in 0..ROUNDS {
            let id = format!("dup{client}x{round}");
            let created = answers.iter().filter(|(_, i, s, _)| *i == id && *s == 201).count();
            if created > 1 {
                problems.push(format!("`{id}` was created by both replicas"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(acked.len() >= 2 * 3 * ROUNDS, "too few writes acknowledged: {} ({conflicts} conflicts)", acked.len());
    drop(a);
    drop(b);

    // A fresh open finds exactly the acknowledged items, at gapless revisions.
    let head = db.backend.head("r").expect("head").expect("a head").revision;
    let log: Vec<u64> = db
        .backend
        .scan("r", &log_key(0), &log_key(u64::MAX), 100_000)
        .expect("log")
        .into_iter()
        .filter_map(|(k, _)| revision_of(&k))
        .collect();
    assert_eq!(log, (1..=head).collect::<Vec<_>>(), "revisions are gapless");
    assert_eq!(head, 2 + acked.len() as u64, "one revision per acknowledged write (after store and participant)");
    let clock = Arc::new(ManualClock::new(T0_MS));
    let fresh = Earshot::open_with(Arc::new(db.another().expect("fresh")), clock, Config::default()).expect("open");
    let h = fresh.store("r").expect("store");
    let items: BTreeSet<String> = h.latest().item_names().into_iter().collect();
    let want: BTreeSet<String> = acked.keys().cloned().collect();
    assert_eq!(items, want, "exactly the acknowledged writes");
    assert!(not_applied.iter().all(|id| !items.contains(id) || id.starts_with("dup")), "a write_conflict was applied");
    h.verify().expect("verify");
    eprintln!("two replicas: {} writes acknowledged, {conflicts} write_conflict, head {head}", acked.len());
}

/// `earshot serve --datastore postgres://…` (here through `EARSHOT_DATASTORE`): writes survive
/// a restart of the binary, nothing is written to the data directory, and `earshot verify
/// --datastore …` agrees. An unreachable database stops the start with a clear error.
#[test]
fn the_binary_serves_from_postgres_across_a_restart() {
    use crate::e2e::{earshot_bin, expect_status, Server};
    let Some(db) = isolated("e2e").expect("PostgreSQL") else { return };
    let datastore = format!("{}?earshot_prefix={}", url(), db.options.table_prefix);
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("unused");
    let env = [("EARSHOT_DATASTORE", datastore.as_str())];

    let mut server = Server::start_with_env(&data, None, &env).unwrap_or_else(|e| panic!("{e}"));
    let c = server.client();
    expect_status(&c.call("POST", "/v1/stores", Some(json!({"id": "pg"}))), 201);
    expect_status(&c.call("POST", "/v1/stores/pg/participants", Some(json!({"id": "own", "kind": "agent"}))), 201);
    expect_status(&c.call("POST", "/v1/stores/pg/participants", Some(json!({"id": "bob", "kind": "person"}))), 201);
    let items = [
        json!({"id": "i1", "owner": "own", "content": "for bob", "origin": {"participants": ["bob"]}}),
        json!({"id": "i2", "owner": "own", "content": "for everyone", "origin": "public"}),
    ];
    for item in items {
        expect_status(&c.call("POST", "/v1/stores/pg/items", Some(item)), 201);
    }
    let ready = c.call("GET", "/readyz", None);
    expect_status(&ready, 200);
    let revision = c.call("GET", "/v1/stores/pg", None).1["revision"].clone();
    assert_eq!(revision, json!(5), "{revision}");
    server.kill();
    assert_eq!(db.backend.head("pg").expect("head").map(|h| h.revision), Some(5));

    let server = Server::start_with_env(&data, None, &env).unwrap_or_else(|e| panic!("{e}"));
    let c = server.client();
    assert_eq!(c.call("GET", "/v1/stores/pg", None).1["revision"], revision);
    let look = c.call(
        "POST",
        "/v1/stores/pg/lookup",
        Some(json!({"container": {"owner": "own", "viewers": {"participants": ["bob"]}}})),
    );
    expect_status(&look, 200);
    let ids: Vec<&str> = look.1["items"].as_array().expect("items").iter().filter_map(|i| i["item"].as_str()).collect();
    assert_eq!(ids, ["i1", "i2"], "{}", look.1);
    expect_status(
        &c.call(
            "POST",
            "/v1/stores/pg/items",
            Some(json!({"id": "i3", "owner": "own", "content": "after", "origin": "public"})),
        ),
        201,
    );
    drop(server);
    assert!(!data.exists(), "the data directory was created although the records live in PostgreSQL");

    let out = Command::new(earshot_bin())
        .args(["verify", "--datastore", &datastore])
        .env("NO_COLOR", "1")
        .env_remove("EARSHOT_DATASTORE")
        .stdin(Stdio::null())
        .output()
        .expect("run earshot verify");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("pg: ok"), "{text}");

    let out = Command::new(earshot_bin())
        .args(["serve", "--bind", "127.0.0.1:0", "--datastore", "postgres://root@127.0.0.1:1/test"])
        .env("NO_COLOR", "1")
        .env_remove("EARSHOT_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run earshot");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success() && text.contains("connecting to the datastore"), "{text}");
}

/// Replicas follow each other: replica B, which never writes, sees replica A's writes. An
/// `at_least` read on B of A's token waits until B has followed to it; B's `latest` catches up
/// within a second; revisions on B only move forward and end at the head; both replicas agree
/// with a rebuild from PostgreSQL. Prints the lag from A's acknowledgement to B's `latest`
/// showing the write (p50, p99) and the cost of a full rebuild of the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_follows_another_replicas_writes() {
    use std::time::{Duration, Instant};
    let Some(db) = isolated("follow").expect("PostgreSQL") else { return };
    let a = TestApp::with_backend(db.backend.clone());
    assert_eq!(a.call("POST", "/v1/stores", Some(json!({"id": "f"}))).await.0, 201);
    assert_eq!(a.call("POST", "/v1/stores/f/participants", Some(json!({"id": "own", "kind": "agent"}))).await.0, 201);
    let b = TestApp::with_backend(Arc::new(db.another().expect("second replica")));
    let hb = b.earshot.store("f").expect("store on b");
    let write = |id: String| {
        let a = &a;
        async move {
            let body = json!({"id": id, "owner": "own", "content": format!("{id} by a"), "origin": "public"});
            let (status, v) = a.call("POST", "/v1/stores/f/items", Some(body)).await;
            assert_eq!(status, 201, "{v}");
            (v["token"].as_str().expect("token").to_string(), v["revision"].as_u64().expect("revision"))
        }
    };

    // `at_least` A's token, on B, right after A's acknowledgement: B waits until it followed.
    let (token, rev) = write("first".into()).await;
    let started = Instant::now();
    let check = json!({"item": "first", "container": {"owner": "own"}, "consistency": {"at_least": token}});
    let (status, v) = b.call("POST", "/v1/stores/f/check", Some(check)).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["admitted"], true, "{v}");
    assert!(v["revision"].as_u64().expect("revision") >= rev, "{v}");
    eprintln!("follow: B answered at_least A's token in {:?}", started.elapsed());

    // B's `latest` catches up without any write of its own.
    let (_, rev) = write("second".into()).await;
    let started = Instant::now();
    while hb.latest().revision() < rev {
        assert!(started.elapsed() < Duration::from_secs(5), "B did not follow to {rev} within 5 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(hb.latest().item_names().contains(&"second".to_string()));

    // The lag from A's acknowledgement to B's `latest` showing the write; B never goes back.
    const WRITES: usize = 100;
    let mut lags = Vec::with_capacity(WRITES);
    let mut seen = hb.latest().revision();
    for i in 0..WRITES {
        let (_, rev) = write(format!("lag{i}")).await;
        let acked = Instant::now();
        loop {
            let now = hb.latest().revision();
            assert!(now >= seen, "B went back from {seen} to {now}");
            seen = now;
            if now >= rev {
                break;
            }
            assert!(acked.elapsed() < Duration::from_secs(5), "B did not follow to {rev} within 5 s");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        lags.push(acked.elapsed());
    }
    lags.sort();
    let (p50, p99) = (lags[WRITES / 2], lags[WRITES * 99 / 100 - 1]);
    eprintln!(
        "follow: lag from A's acknowledgement to B's latest over {WRITES} writes: p50 {p50:?}, p99 {p99:?}, max {:?}",
        lags[WRITES - 1]
    );
    assert!(p99 < Duration::from_secs(2), "p99 lag {p99:?}");

    // The end: B at the head, both agree with the records, and with a fresh rebuild.
    let head = db.backend.head("f").expect("head").expect("a head").revision;
    let ha = a.earshot.store("f").expect("store on a");
    assert_eq!(ha.latest().revision(), head);
    let started = Instant::now();
    while hb.latest().revision() < head {
        assert!(started.elapsed() < Duration::from_secs(5), "B did not reach the head {head} within 5 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(hb.latest().revision(), head);
    ha.verify().expect("verify on a");
    hb.verify().expect("verify on b");
    let started = Instant::now();
    let records = hb.durable_records().expect("records");
    let load = started.elapsed();
    let started = Instant::now();
    let clock = Arc::new(ManualClock::new(T0_MS));
    let fresh = Earshot::open_with(Arc::new(db.another().expect("fresh")), clock, Config::default()).expect("open");
    let hf = fresh.store("f").expect("store");
    let rebuild = started.elapsed();
    assert_eq!(earshot_store::verify::facts(&hf.latest()), earshot_store::verify::facts(&hb.latest()));
    assert_eq!(earshot_store::verify::facts(&ha.latest()), earshot_store::verify::facts(&hb.latest()));
    eprintln!(
        "follow: a full rebuild of the store ({} items, head {head}): loading its records {load:?}; opening a fresh replica {rebuild:?}",
        hb.latest().item_names().len()
    );
    assert!(records.meta.is_some());
}
