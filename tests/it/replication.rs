//! Replication over a shared datastore (PostgreSQL): a replica follows another's writes by
//! replaying the revision log, and ends in exactly the state the writer has (every fixture
//! scenario, no rebuild); a replay that disagrees with the log, or a log that no longer reaches
//! back, falls back to a rebuild; `fully_consistent` reads the datastore's head; the watch
//! stream is the same on every replica, in order, resumable, and refuses a pruned start; one
//! `Idempotency-Key` sent to two replicas at once writes once; an export on one replica is of
//! one revision while another writes.
//! Skips with a message when PostgreSQL is not reachable (CI requires it).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use earshot_postgres::testing::{isolated, Isolated};
use earshot_store::kernel::log::{log_key, LogEntry};
use earshot_store::model::Consistency;
use earshot_store::{Backend, Config, Earshot, ManualClock, Op, StoreHandle};
use earshot_tests::{TestApp, T0_MS};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::scenarios::{fixture_files, parse, run_scenario_on};

/// A second replica over the same tables, following every `follow_ms` (0: only when nudged by
/// a `fully_consistent` read).
fn replica(db: &Isolated, follow_ms: u64, log_retention: u64) -> Arc<Earshot> {
    let config = Config {
        follow_interval: if follow_ms == 0 { Duration::from_secs(3600) } else { Duration::from_millis(follow_ms) },
        // A replica that follows only when asked hears no notification either.
        follow_notifications: follow_ms != 0,
        log_retention,
        ..Config::default()
    };
    let backend: Arc<dyn Backend> = Arc::new(db.another().expect("second replica"));
    Arc::new(Earshot::open_with(backend, Arc::new(ManualClock::new(T0_MS)), config).expect("open the replica"))
}

/// Waits until `h`'s writer has made its first poll of the head, which it makes as it starts.
/// A replica that follows only when asked (`follow_ms` 0) sees nothing more after it, so a
/// test's writes made from here on stay unseen until the test asks.
fn polled_once(h: &StoreHandle) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.replication().last_poll_ms.is_none() {
        if Instant::now() > deadline {
            return Err(format!("no poll of the head yet: {:?}", h.replication()));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Waits until `h` has applied `revision`.
fn caught_up(h: &StoreHandle, revision: u64) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.latest().revision() < revision {
        if Instant::now() > deadline {
            return Err(format!("stuck at revision {} of {revision}: {:?}", h.latest().revision(), h.replication()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_replays_every_scenario_written_on_another_into_the_same_state() {
    let mut report = Vec::new();
    let mut replayed_total = 0;
    for f in fixture_files() {
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let sc = parse(&std::fs::read_to_string(&f).expect("fixture")).expect("fixture parses");
        let Some(db) = isolated("replay").expect("PostgreSQL") else { return };
        let writer = TestApp::with_backend(db.backend.clone());
        let follower = replica(&db, 5, 100_000);
        // The follower starts the store as soon as it exists (on first use), so nearly every
        // revision reaches it through the log.
        let watcher = {
            let follower = follower.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    if let Ok(h) = follower.store("s") {
                        return Some(h.latest().revision());
                    }
                    if Instant::now() > deadline {
                        return None;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        };
        let failures = run_scenario_on(&writer, &sc).await;
        assert!(failures.is_empty(), "{file}: {failures:?}");
        let Some(started_at) = watcher.join().expect("watcher") else {
            report.push(format!("{file}: the follower never saw the store"));
            continue;
        };
        let want = writer.earshot.store("s").expect("store").latest();
        let h = follower.store("s").expect("store on the follower");
        if let Err(e) = tokio::task::block_in_place(|| caught_up(&h, want.revision())) {
            report.push(format!("{file}: {e}"));
            continue;
        }
        let r = h.replication();
        if r.rebuilds != 0 {
            report.push(format!("{file}: the follower rebuilt {} times instead of replaying: {r:?}", r.rebuilds));
        }
        // The store opened at some revision and replayed every one after it. The watcher reads
        // `latest` just after the open, so a replay may already have landed in between: the
        // revision it saw is at or after the one the store opened at, never before.
        let opened_at = want.revision().saturating_sub(r.replayed);
        if r.replayed > want.revision() || opened_at > started_at {
            report.push(format!(
                "{file}: replayed {} revisions up to {}, but the store was seen at {started_at} first",
                r.replayed,
                want.revision()
            ));
        }
        replayed_total += r.replayed;
        if earshot_store::verify::facts(&h.latest()) != earshot_store::verify::facts(&want) {
            report.push(format!("{file}: the follower's state differs from the writer's"));
        }
        if let Err(e) = h.verify() {
            report.push(format!("{file}: verify on the follower: {e}"));
        }
        // Every revision the follower passed through is its own snapshot (`at_exact` works).
        for rev in opened_at..=want.revision() {
            let t = h.token(rev);
            if let Err(e) = h.read_point(&Consistency::AtExact(t), 0) {
                report.push(format!("{file}: revision {rev} is not readable at_exact on the follower: {e}"));
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
    assert!(replayed_total > 100, "too few revisions replayed to mean anything: {replayed_total}");
}

/// Writes `n` public items to store `s` through `app`; answers the last write's body.
async fn write_items(app: &TestApp, from: usize, n: usize) -> Value {
    let mut last = Value::Null;
    for i in from..from + n {
        let body = json!({"id": format!("i{i}"), "owner": "o", "content": format!("item {i}"), "origin": "public"});
        let (status, v) = app.call("POST", "/v1/stores/s/items", Some(body)).await;
        assert_eq!(status, 201, "{v}");
        last = v;
    }
    last
}

async fn store_with_owner(app: &TestApp) {
    assert_eq!(app.call("POST", "/v1/stores", Some(json!({"id": "s"}))).await.0, 201);
    assert_eq!(app.call("POST", "/v1/stores/s/participants", Some(json!({"id": "o", "kind": "person"}))).await.0, 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fully_consistent_reads_the_head_and_a_disagreeing_log_falls_back_to_a_rebuild() {
    let Some(db) = isolated("fullycons").expect("PostgreSQL") else { return };
    let writer = TestApp::with_backend(db.backend.clone());
    store_with_owner(&writer).await;
    // This replica polls only when asked, so what it sees is what each step made it see.
    let follower = replica(&db, 0, 100_000);
    let h = follower.store("s").expect("store");
    polled_once(&h).expect("the first poll");
    assert_eq!(h.latest().revision(), 2);

    let last = write_items(&writer, 0, 3).await;
    let head = last["revision"].as_u64().expect("revision");
    assert_eq!(h.latest().revision(), 2, "latest is what this replica has applied");
    let point = tokio::task::block_in_place(|| h.read_point(&Consistency::FullyConsistent, 0)).expect("read");
    assert_eq!(point.snapshot.revision(), head, "fully_consistent reads the datastore's head");
    assert_eq!(h.replication().replayed, 3);
    assert_eq!(h.replication().rebuilds, 0);

    // A log record that disagrees with the records it describes: the replay is refused and
    // the replica rebuilds from the records, ending right all the same.
    let last = write_items(&writer, 3, 1).await;
    let rev = last["revision"].as_u64().expect("revision");
    let key = log_key(rev);
    let raw = db.backend.get("s", &key).expect("get").expect("the log record");
    let mut entry: LogEntry = serde_json::from_slice(&raw).expect("log record");
    entry.digest = "0".repeat(32);
    db.backend.commit("s", vec![Op::Put(key, serde_json::to_vec(&entry).expect("encode"))]).expect("tamper");
    let point = tokio::task::block_in_place(|| h.read_point(&Consistency::FullyConsistent, 0)).expect("read");
    assert_eq!(point.snapshot.revision(), rev);
    let r = h.replication();
    assert_eq!((r.replayed, r.rebuilds), (3, 1), "{r:?}");
    assert!(point.snapshot.item_names().contains(&"i3".to_string()));
    tokio::task::block_in_place(|| h.verify()).expect("verify after the rebuild");
}

/// A token newer than what a replica has applied was written by another replica: an
/// `at_least` or `at_exact` read of it catches the replica up at once, without waiting for the
/// follower to hear of the change (here a replica that follows only when asked: the feed never
/// tells it; before, the read waited out its `consistency_wait` and was refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_from_another_replica_catches_this_one_up_without_the_feed() {
    let Some(db) = isolated("tokenlag").expect("PostgreSQL") else { return };
    let writer = TestApp::with_backend(db.backend.clone());
    store_with_owner(&writer).await;
    let follower = replica(&db, 0, 100_000);
    let h = follower.store("s").expect("store");
    polled_once(&h).expect("the first poll");
    assert_eq!(h.latest().revision(), 2);

    let last = write_items(&writer, 0, 2).await;
    let (token, head) = (last["token"].as_str().expect("token").to_string(), last["revision"].as_u64().expect("rev"));
    assert_eq!(h.latest().revision(), 2, "nothing told this replica");
    let started = Instant::now();
    let point =
        tokio::task::block_in_place(|| h.read_point(&Consistency::AtLeast(token.clone()), 0)).expect("at_least");
    assert!(point.snapshot.revision() >= head, "at_least reads at or past the token");
    assert!(started.elapsed() < Duration::from_secs(1), "caught up at once, not at a timeout: {:?}", started.elapsed());

    let last = write_items(&writer, 2, 1).await;
    let (token, head) = (last["token"].as_str().expect("token").to_string(), last["revision"].as_u64().expect("rev"));
    let point = tokio::task::block_in_place(|| h.read_point(&Consistency::AtExact(token), 0)).expect("at_exact");
    assert_eq!(point.snapshot.revision(), head, "at_exact reads exactly the token's revision");
}

/// SPEC §2.6 on several replicas: "newest" is the datastore's head, not a replica's. A replica
/// that has not seen another's revoke still holds the token of the grant's revision as its own
/// newest; `at_exact` of it there answers historical (never admits), with the head as the
/// newest revision. Once the replica has caught up, `at_exact` of the head is usable there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_replica_never_takes_an_older_token_for_the_newest() {
    let Some(db) = isolated("exactlag").expect("PostgreSQL") else { return };
    let writer = TestApp::with_backend(db.backend.clone());
    store_with_owner(&writer).await;
    let (status, v) =
        writer.call("POST", "/v1/stores/s/participants", Some(json!({"id": "b", "kind": "person"}))).await;
    assert_eq!(status, 201, "{v}");
    let item = json!({"id": "x", "owner": "o", "origin": "owner_private"});
    assert_eq!(writer.call("POST", "/v1/stores/s/items", Some(item)).await.0, 201);
    let (status, g) = writer.call("POST", "/v1/stores/s/items/x/grants", Some(json!({"members": ["b"]}))).await;
    assert_eq!(status, 201, "{g}");
    let granted = g["revision"].as_u64().expect("revision");
    let token = g["token"].as_str().expect("token").to_string();
    let grant = g["ids"][0].as_str().expect("grant id").to_string();

    // This replica follows only when asked: it has the grant's revision as its newest.
    let follower = replica(&db, 0, 100_000);
    let h = follower.store("s").expect("store");
    polled_once(&h).expect("the first poll");
    assert_eq!(h.latest().revision(), granted);
    let (status, r) = writer.call("DELETE", &format!("/v1/stores/s/grants/{grant}"), None).await;
    assert_eq!(status, 200, "{r}");
    let head = r["revision"].as_u64().expect("revision");

    let container = earshot_store::model::ContainerInput {
        owner: "o".into(),
        viewers: serde_json::from_value(json!({"participants": ["b"]})).expect("viewers"),
    };
    let exact = Consistency::AtExact(token.clone());
    let point = tokio::task::block_in_place(|| h.read_point(&exact, T0_MS)).expect("read");
    assert_eq!(point.snapshot.revision(), granted, "the replica has not seen the revoke");
    assert_eq!(point.historical, Some(head), "the datastore's head is the newest revision");
    let resolved = point.snapshot.resolve_container(&container).expect("container");
    let then = point.snapshot.check("x", &resolved, point.at_ms).expect("check");
    assert!(then.admitted, "judged then, the grant admitted: {then:?}");

    // Caught up: the head's own token is usable here, and denies.
    let point = tokio::task::block_in_place(|| h.read_point(&Consistency::FullyConsistent, T0_MS)).expect("read");
    assert_eq!(point.snapshot.revision(), head);
    let newest = Consistency::AtExact(h.token(head));
    let point = tokio::task::block_in_place(|| h.read_point(&newest, T0_MS)).expect("read");
    assert_eq!((point.snapshot.revision(), point.historical), (head, None));
}

/// Issue 32: a replica never serves, nor writes into, another incarnation of a store. Replica B
/// runs store `s`; replica A deletes it and creates it again. B's copy, which has not noticed,
/// cannot commit into the new store (the head's compare-and-set names the incarnation): its
/// write is refused with `store_replaced`, the copy retires, and the next use of `s` on B
/// starts the new store, where the same write succeeds. A token of the new store given to a
/// copy of the old one retires it the same way rather than being read against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_never_writes_into_another_incarnation_of_a_store() {
    let Some(db) = isolated("incarnation").expect("PostgreSQL") else { return };
    let a = TestApp::with_backend(db.backend.clone());
    store_with_owner(&a).await;
    write_items(&a, 0, 2).await;
    let b = replica(&db, 0, 100_000);
    let old = b.store("s").expect("store");
    polled_once(&old).expect("the first poll");
    assert_eq!(old.latest().item_count(), 2);

    assert_eq!(a.call("DELETE", "/v1/stores/s?confirm=s", None).await.0, 200);
    store_with_owner(&a).await;
    // The new store reaches the revision the old copy is at: only the incarnation tells them apart.
    let fresh = write_items(&a, 10, 2).await;
    assert_eq!(fresh["revision"].as_u64(), Some(old.latest().revision()));
    assert_ne!(old.incarnation(), None);

    // B's old copy writes on the state it has: refused, nothing of it lands in the new store.
    let cmd = |id: &str| {
        earshot_store::model::Command::CreateItem(
            serde_json::from_value(json!({"id": id, "owner": "o", "origin": "public"})).expect("item"),
        )
    };
    let refused = tokio::task::block_in_place(|| old.write(cmd("from-b")));
    assert_eq!(refused.as_ref().map_err(|e| e.code()).err(), Some("store_replaced"), "{refused:?}");
    assert!(old.retired());
    let (status, v) = a.call("GET", "/v1/stores/s/items/from-b", None).await;
    assert_eq!(status, 404, "the old copy's write reached the new store: {v}");

    // The next use of `s` on B is the new store.
    let new = tokio::task::block_in_place(|| b.store("s")).expect("store");
    assert_ne!(new.incarnation(), old.incarnation());
    let token = fresh["token"].as_str().expect("token").to_string();
    let point =
        tokio::task::block_in_place(|| new.read_point(&Consistency::AtLeast(token.clone()), T0_MS)).expect("read");
    assert_eq!(point.snapshot.item_names(), ["i10", "i11"], "B serves the new store");
    let out = tokio::task::block_in_place(|| new.write(cmd("from-b"))).expect("the write on the new store");
    assert_eq!(out.outcome, "created");

    // A copy of the old store given the new store's token: retired, not read.
    let c = replica(&db, 0, 100_000);
    let stale = c.store("s").expect("store");
    assert_eq!(a.call("DELETE", "/v1/stores/s?confirm=s", None).await.0, 200);
    store_with_owner(&a).await;
    let newest = write_items(&a, 20, 1).await["token"].as_str().expect("token").to_string();
    let r = tokio::task::block_in_place(|| stale.read_point(&Consistency::AtLeast(newest), T0_MS));
    assert_eq!(r.err().map(|e| e.code()), Some("store_replaced"));
    assert!(stale.retired() && c.running("s").is_none());
}

/// Issue 32, readiness without flapping: a replica following a steady stream of another
/// replica's writes keeps up within a poll or two, so it stays ready the whole time (its lag is
/// the age of the oldest head it saw and has not applied, not the time since it last found
/// itself exactly at the head, which such a stream never allows). A replica that stops polling
/// turns unready once the limit has passed, and ready again only after a poll that catches it
/// up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_does_not_flap_under_a_steady_stream_of_writes() {
    let Some(db) = isolated("readyflap").expect("PostgreSQL") else { return };
    let writer = TestApp::with_backend(db.backend.clone());
    store_with_owner(&writer).await;
    let config = Config {
        follow_interval: Duration::from_millis(20),
        ready_max_lag: Duration::from_millis(500),
        ..Config::default()
    };
    let backend: Arc<dyn Backend> = Arc::new(db.another().expect("second replica"));
    let follower = Earshot::open_with(backend, Arc::new(ManualClock::new(T0_MS)), config).expect("open");
    let h = follower.store("s").expect("store");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (h, stop) = (h.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut unready = Vec::new();
            let mut samples = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(why) = h.condition() {
                    unready.push(why);
                }
                samples += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            (samples, unready, h.replication())
        })
    };
    // Writes for two seconds, four times the readiness limit, as fast as they commit.
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < Duration::from_secs(2) {
        write_items(&writer, n, 1).await;
        n += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (samples, unready, r) = watcher.join().expect("watcher");
    assert!(samples > 50 && n > 50, "{samples} samples over {n} writes");
    assert!(
        unready.is_empty(),
        "the follower turned unready {} times of {samples}: {:?}",
        unready.len(),
        unready.first()
    );
    assert!(r.replayed > 0, "{r:?}");

    // A replica that follows only when asked: unready once it has gone the limit without a
    // poll, ready again after a poll that catches it up (not merely with time).
    let quiet = replica(&db, 0, 100_000);
    let q = quiet.store("s").expect("store");
    polled_once(&q).expect("the first poll");
    assert_eq!(q.condition(), None);
    std::thread::sleep(Duration::from_millis(2_100));
    let why = q.condition().expect("unready after the limit without a poll");
    assert!(why.contains("not polled"), "{why}");
    write_items(&writer, n, 1).await;
    tokio::task::block_in_place(|| q.read_point(&Consistency::FullyConsistent, T0_MS)).expect("a poll that catches up");
    assert_eq!(q.condition(), None, "{:?}", q.replication());
}

/// Issue 32: any replica answers every retained revision and every live attempt as the replica
/// that wrote it. Replica A writes a history (items, a grant, its revocation, a lifecycle
/// change) and opens an attempt; replica B starts afterwards, so it holds only the newest
/// revision. B builds any older one from the datastore's history: `at_exact` of every
/// revision answers the same on both (checks, lookups, historical markers), and the attempt's
/// reads answer the same on B; B seals the attempt's context, after which A cannot seal
/// another and shows B's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_replica_answers_every_retained_revision_and_every_live_attempt() {
    let Some(db) = isolated("anyreplica").expect("PostgreSQL") else { return };
    let a = TestApp::with_backend(db.backend.clone());
    store_with_owner(&a).await;
    let mut tokens = vec![a.call("GET", "/v1/stores/s", None).await.1["token"].as_str().expect("token").to_string()];
    let mut step = |v: Value| tokens.push(v["token"].as_str().expect("token").to_string());
    for p in ["b", "c"] {
        let (s, v) = a.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))).await;
        assert_eq!(s, 201, "{v}");
        step(v);
    }
    for (id, origin) in [("x", json!({"participants": ["b"]})), ("y", json!("owner_private")), ("z", json!("public"))] {
        let body = json!({"id": id, "owner": "o", "content": format!("{id} is about lunch"), "origin": origin});
        let (s, v) = a.call("POST", "/v1/stores/s/items", Some(body)).await;
        assert_eq!(s, 201, "{v}");
        step(v);
    }
    let (s, g) = a.call("POST", "/v1/stores/s/items/y/grants", Some(json!({"members": ["c"]}))).await;
    assert_eq!(s, 201, "{g}");
    let grant = g["ids"][0].as_str().expect("grant").to_string();
    step(g);
    // An attempt pinned here, for c: y is admitted through the grant.
    let c_container = json!({"owner": "o", "viewers": {"participants": ["c"]}});
    let (s, attempt) = a.call("POST", "/v1/stores/s/attempts", Some(json!({"container": c_container}))).await;
    assert_eq!(s, 201, "{attempt}");
    let attempt = attempt["attempt"].as_str().expect("attempt id").to_string();
    let (s, v) = a.call("DELETE", &format!("/v1/stores/s/grants/{grant}"), None).await;
    assert_eq!(s, 200, "{v}");
    step(v);
    let (s, v) = a.call("POST", "/v1/stores/s/items/x/lifecycle", Some(json!({"action": "freeze"}))).await;
    assert_eq!(s, 200, "{v}");
    step(v);

    // B starts now: it holds the newest revision only.
    let b = TestApp::with_backend(Arc::new(db.another().expect("second replica")));
    let containers =
        [json!({"owner": "o", "viewers": {"participants": ["b"]}}), c_container.clone(), json!({"owner": "o"})];
    let strip = |mut v: Value| {
        // What may differ between replicas: where the replica stands (not part of an answer).
        if let Some(m) = v.as_object_mut() {
            m.remove("replication");
        }
        v
    };
    for token in &tokens {
        for c in &containers {
            for (path, body) in [
                ("check/bulk", json!({"items": ["x", "y", "z"], "container": c, "consistency": {"at_exact": token}})),
                ("lookup", json!({"container": c, "consistency": {"at_exact": token}})),
            ] {
                let on_a = a.call("POST", &format!("/v1/stores/s/{path}"), Some(body.clone())).await;
                let on_b = b.call("POST", &format!("/v1/stores/s/{path}"), Some(body)).await;
                assert_eq!(on_a.0, 200, "{path} at {token} on A: {}", on_a.1);
                assert_eq!(
                    (on_b.0, strip(on_b.1.clone())),
                    (on_a.0, strip(on_a.1.clone())),
                    "{path} at {token}: B differs from A"
                );
            }
        }
        let view_a = a.call("GET", &format!("/v1/stores/s/items/y?at_exact={token}"), None).await;
        let view_b = b.call("GET", &format!("/v1/stores/s/items/y?at_exact={token}"), None).await;
        assert_eq!(view_a, view_b, "item view at {token}");
    }

    // The attempt, read on B: the same snapshot, container and instant as on A.
    for body in [json!({"item": "y", "attempt": attempt}), json!({"item": "x", "attempt": attempt})] {
        let on_a = a.call("POST", "/v1/stores/s/check", Some(body.clone())).await;
        let on_b = b.call("POST", "/v1/stores/s/check", Some(body)).await;
        assert_eq!(on_a, on_b, "a check under the attempt");
    }
    let on_b = b.call("POST", "/v1/stores/s/check", Some(json!({"item": "y", "attempt": attempt}))).await;
    assert_eq!(on_b.1["reason"], "admitted_grant", "the attempt's snapshot had the grant: {}", on_b.1);
    let lookup_a = a.call("POST", "/v1/stores/s/lookup", Some(json!({"attempt": attempt}))).await;
    let lookup_b = b.call("POST", "/v1/stores/s/lookup", Some(json!({"attempt": attempt}))).await;
    assert_eq!(lookup_a, lookup_b);
    assert_eq!(
        a.call("GET", &format!("/v1/stores/s/attempts/{attempt}"), None).await,
        b.call("GET", &format!("/v1/stores/s/attempts/{attempt}"), None).await
    );
    // B seals the one context; A cannot seal another, and shows B's.
    let (s, sealed) =
        b.call("POST", &format!("/v1/stores/s/attempts/{attempt}/context"), Some(json!({"query": "lunch"}))).await;
    assert_eq!(s, 200, "{sealed}");
    let items: Vec<&str> =
        sealed["items"].as_array().expect("items").iter().filter_map(|i| i["item"].as_str()).collect();
    assert_eq!(items, ["y", "z"], "{sealed}");
    let (s, v) =
        a.call("POST", &format!("/v1/stores/s/attempts/{attempt}/context"), Some(json!({"query": "lunch"}))).await;
    assert_eq!((s.as_u16(), v["error"]["code"].as_str()), (409, Some("attempt_sealed")), "{v}");
    let shown = a.call("GET", &format!("/v1/stores/s/attempts/{attempt}"), None).await;
    assert_eq!(
        shown.1["context"]["items"],
        sealed["items"]
            .as_array()
            .map(|i| i
                .iter()
                .map(|x| {
                    let mut x = x.clone();
                    if let Some(m) = x.as_object_mut() {
                        m.remove("content");
                    }
                    x
                })
                .collect::<Vec<_>>())
            .map(Value::from)
            .unwrap_or_default(),
        "{}",
        shown.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_that_no_longer_reaches_back_means_a_rebuild_and_a_refused_watch() {
    let Some(db) = isolated("pruned").expect("PostgreSQL") else { return };
    // The writer keeps 4 revisions of log.
    let backend: Arc<dyn Backend> = db.backend.clone();
    let config = Config { log_retention: 4, ..Config::default() };
    let earshot = Arc::new(Earshot::open_with(backend, Arc::new(ManualClock::new(T0_MS)), config).expect("open"));
    let writer = TestApp::with_earshot(earshot);
    store_with_owner(&writer).await;
    let follower = replica(&db, 0, 4);
    let h = follower.store("s").expect("store");
    polled_once(&h).expect("the first poll");
    write_items(&writer, 0, 10).await;
    let point = tokio::task::block_in_place(|| h.read_point(&Consistency::FullyConsistent, 0)).expect("read");
    assert_eq!(point.snapshot.revision(), 12);
    assert_eq!(h.replication().rebuilds, 1, "{:?}", h.replication());
    // The lag as clients see it.
    let (status, info) = TestApp::with_earshot(follower.clone()).call("GET", "/v1/stores/s", None).await;
    assert_eq!(status, 200, "{info}");
    let r = &info["replication"];
    assert_eq!(
        (r["applied"].as_u64(), r["head"].as_u64(), r["behind_revisions"].as_u64()),
        (Some(12), Some(12), Some(0)),
        "{info}"
    );
    assert_eq!(r["rebuilds"], 1, "{info}");
    // Only revisions 9..=12 are in the log: a watch after revision 2 cannot be served.
    let token = h.token(2);
    let (status, body) = writer.call("GET", &format!("/v1/stores/s/watch?after={token}"), None).await;
    assert_eq!((status.as_u16(), body["error"]["code"].as_str()), (410, Some("revision_expired")), "{body}");
    let log = db.backend.scan("s", &log_key(0), &log_key(u64::MAX), 100).expect("scan");
    assert_eq!(log.len(), 4, "the log keeps the last 4 revisions");
}

/// Reads `n` lines of a watch stream opened on `app` after `after` (a token, or none).
async fn watch_lines(app: &TestApp, after: Option<&str>, n: usize, accept: Option<&str>) -> Vec<String> {
    let uri = match after {
        Some(t) => format!("/v1/stores/s/watch?after={t}"),
        None => "/v1/stores/s/watch".to_string(),
    };
    let mut req = Request::builder().method("GET").uri(uri);
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    let resp = app.router.clone().oneshot(req.body(Body::empty()).expect("request")).await.expect("router");
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let sep = if accept.is_some() { "\n\n" } else { "\n" };
    while text.matches(sep).count() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame =
            tokio::time::timeout(left, body.frame()).await.expect("the stream stalled").expect("more").expect("frame");
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
    }
    text.split(sep).filter(|l| !l.is_empty()).take(n).map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_stream_is_ordered_resumable_and_the_same_on_every_replica() {
    let Some(db) = isolated("watch").expect("PostgreSQL") else { return };
    let a = TestApp::with_backend(db.backend.clone());
    store_with_owner(&a).await;
    let b = TestApp::with_backend(Arc::new(db.another().expect("replica b")));
    write_items(&a, 0, 5).await;
    let grant = json!({"members": ["o"], "reason": "test"});
    let (status, g) = a.call("POST", "/v1/stores/s/items/i1/grants", Some(grant)).await;
    assert_eq!(status, 201, "{g}");

    // From the beginning, on both replicas: the same events, in revision order.
    let zero = a.earshot.store("s").expect("store").token(0);
    let on_a = watch_lines(&a, Some(&zero), 8, None).await;
    let on_b = watch_lines(&b, Some(&zero), 8, None).await;
    assert_eq!(on_a, on_b, "the same events on every replica");
    let events: Vec<Value> = on_a.iter().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let revisions: Vec<u64> = events.iter().map(|e| e["revision"].as_u64().expect("revision")).collect();
    assert_eq!(revisions, (1..=8).collect::<Vec<_>>());
    let kinds: Vec<&str> = events.iter().map(|e| e["change"]["kind"].as_str().unwrap_or("")).collect();
    assert_eq!(kinds[..3], ["store_created", "participant_created", "item_created"]);
    assert_eq!(kinds[7], "grant_created");
    assert_eq!(events[2]["change"]["ids"], json!(["i0"]));
    assert_eq!(events[7]["change"]["item"], "i1");
    assert!(!on_a.join("").contains("item 0"), "content never appears in the stream");

    // Resumed from a token: exactly what follows it, including writes made after it opened.
    let resume = events[5]["token"].as_str().expect("token").to_string();
    let a_router = a.router.clone();
    let writer = tokio::spawn(async move {
        // After the watch below has caught up and is waiting for more.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let body = json!({"id": "late", "owner": "o", "content": "late", "origin": "public"});
        let req = Request::builder()
            .method("POST")
            .uri("/v1/stores/s/items")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .expect("request");
        a_router.oneshot(req).await.expect("router").status()
    });
    let tail = watch_lines(&b, Some(&resume), 3, None).await;
    assert_eq!(writer.await.expect("writer").as_u16(), 201);
    let tail: Vec<Value> = tail.iter().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(tail.iter().map(|e| e["revision"].as_u64().unwrap_or(0)).collect::<Vec<_>>(), vec![7, 8, 9]);
    assert_eq!(tail[2]["change"]["ids"], json!(["late"]));

    // Server-sent events carry the token as the event id.
    let sse = watch_lines(&a, Some(&zero), 2, Some("text/event-stream")).await;
    assert!(
        sse[0].starts_with(&format!("id: {}\nevent: change\ndata: {{", a.earshot.store("s").expect("s").token(1))),
        "{sse:?}"
    );

    // Refusals: another store's token, a malformed one.
    let (status, body) = a.call("GET", "/v1/stores/s/watch?after=nonsense", None).await;
    assert_eq!((status.as_u16(), body["error"]["code"].as_str()), (400, Some("invalid_consistency_token")), "{body}");
}

/// A keyed use sent to both replicas at once (a client retrying through the load balancer while
/// the first attempt is still in flight elsewhere) consumes one use, not two: the loser of the
/// race for the head rebuilds, applies the keyed command again, finds the winner's key and
/// answers its recorded outcome (or answers `409 write_conflict`, nothing applied).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_same_idempotency_key_on_two_replicas_at_once_consumes_one_use() {
    let Some(db) = isolated("idemrace").expect("PostgreSQL") else { return };
    let a = Arc::new(TestApp::with_backend(db.backend.clone()));
    store_with_owner(&a).await;
    let (status, v) = a.call("POST", "/v1/stores/s/participants", Some(json!({"id": "bob", "kind": "person"}))).await;
    assert_eq!(status, 201, "{v}");
    let (status, v) = a.call("POST", "/v1/stores/s/devices", Some(json!({"id": "fridge", "owner": "o"}))).await;
    assert_eq!(status, 201, "{v}");
    const ROUNDS: u64 = 10;
    let cap = json!({"id": "k", "issuer": "o", "holder": "bob", "device": "fridge", "paths": ["door/*"],
                     "actions": ["open"], "constraints": {"uses": 100}});
    let (status, v) = a.call("POST", "/v1/stores/s/capabilities", Some(cap)).await;
    assert_eq!(status, 201, "{v}");
    let b = Arc::new(TestApp::with_backend(Arc::new(db.another().expect("replica b"))));
    let mut consumed = 0;
    for round in 0..ROUNDS {
        let send = |app: Arc<TestApp>, key: String| async move {
            let body = json!({"principal": "bob", "device": "fridge", "path": "door/front", "action": "open"});
            let req = Request::builder()
                .method("POST")
                .uri("/v1/stores/s/uses")
                .header("content-type", "application/json")
                .header("idempotency-key", key)
                .body(Body::from(body.to_string()))
                .expect("request");
            app.send(req).await
        };
        let key = format!("use-{round}");
        let (ra, rb) = tokio::join!(send(a.clone(), key.clone()), send(b.clone(), key));
        let answers: Vec<&Value> = [&ra, &rb].into_iter().filter(|r| r.0.is_success()).map(|r| &r.1).collect();
        assert!(!answers.is_empty(), "round {round}: neither replica answered: {ra:?} {rb:?}");
        for (status, v) in [&ra, &rb] {
            assert!(
                status.is_success() || v["error"]["code"] == "write_conflict",
                "round {round}: unexpected answer {status} {v}"
            );
        }
        if answers.len() == 2 {
            assert_eq!(answers[0]["revision"], answers[1]["revision"], "round {round}: two writes for one key");
        }
        consumed += 1;
    }
    // One use per key, wherever it was consumed.
    let h = a.earshot.store("s").expect("store");
    let head = db.backend.head("s").expect("head").expect("a head").revision;
    tokio::task::block_in_place(|| caught_up(&h, head)).expect("a catches up");
    let (_, chain_now) = a.call("GET", "/v1/stores/s/capabilities/k/chain", None).await;
    assert_eq!(chain_now["chain"][0]["uses_left"], json!(100 - consumed), "{chain_now}");
}

/// An export on one replica reads one revision of the shared datastore while another replica
/// writes the same store: it completes (no `write_conflict`), its header names the revision it
/// read, and importing it gives exactly the exporting replica's state at that revision, with
/// the records the other replica changed or deleted meanwhile as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_is_not_broken_by_another_replicas_writes() {
    use earshot_store::memory::model::{LifecycleRequest, NewItem};
    use earshot_store::model::{Command, NewParticipant, ParticipantKind};
    use earshot_store::MemoryBackend;

    let Some(db) = isolated("exportrace").expect("PostgreSQL") else { return };
    let clock = Arc::new(ManualClock::new(T0_MS));
    // Replica A never follows on its own: its state stays the exported revision's.
    let config =
        Config { follow_interval: Duration::from_secs(3600), follow_notifications: false, ..Config::default() };
    let a = Earshot::open_with(db.backend.clone(), clock.clone(), config).expect("replica a");
    a.create_store("s", None).expect("store");
    let sa = a.store("s").expect("s on a");
    sa.write(Command::CreateParticipant(NewParticipant {
        id: "owner".into(),
        kind: ParticipantKind::Person,
        name: None,
    }))
    .expect("owner");
    let item = |id: String, content: String| -> Command {
        let v = json!({"id": id, "owner": "owner", "content": content, "origin": "public"});
        Command::CreateItem(serde_json::from_value::<NewItem>(v).expect("item"))
    };
    // Several chunks of records, so that the other replica's writes land between them.
    for n in 0..1200 {
        sa.write(item(format!("b{n}"), format!("bulk {n}"))).expect("bulk");
    }
    let revision = sa.latest().revision();
    let facts_at_export = sa.latest().facts();

    let b = replica(&db, 0, 1000);
    let sb = b.store("s").expect("s on b");
    caught_up(&sb, revision).expect("b loads the store");
    let mut export = a.export("s").expect("export opens");
    assert_eq!(export.header().revision, revision);
    let (mut exported, mut chunks, mut n) = (Vec::new(), 0, 0u64);
    loop {
        let mut buf = Vec::new();
        match export.next_chunk(&mut buf) {
            Ok(true) => exported.extend_from_slice(&buf),
            Ok(false) => break,
            Err(e) => panic!("the export failed while another replica wrote: {e}"),
        }
        chunks += 1;
        // Replica B, between every two chunks: a new item, and a bulk item deleted (its
        // content record goes) or frozen.
        let (ra, rb) = (item(format!("w{n}"), format!("during {n}")), {
            let action = if n.is_multiple_of(2) { "delete" } else { "freeze" };
            let request: LifecycleRequest = serde_json::from_value(json!({"action": action})).expect("lc");
            Command::Lifecycle { item: format!("b{n}"), request }
        });
        sb.write(ra).expect("a write on b during the export");
        sb.write(rb).expect("a change on b during the export");
        n += 1;
    }
    assert!(chunks >= 4, "only {chunks} chunks");
    assert!(sb.latest().revision() >= revision + 8, "b wrote during the export");

    let elsewhere = Earshot::open_with(Arc::new(MemoryBackend::default()), clock, Config::default()).expect("open");
    let imported = elsewhere.import_store("t", &mut &exported[..]).expect("the export imports");
    assert_eq!(imported.revision, revision);
    let t = elsewhere.store("t").expect("t");
    t.verify().expect("verify after import");
    let no_keys = |v: Vec<String>| v.into_iter().filter(|f| !f.starts_with("idempotency-key")).collect::<Vec<_>>();
    assert_eq!(no_keys(facts_at_export), no_keys(t.latest().facts()), "facts differ from a's at {revision}");
    for k in (0..n).filter(|k| k.is_multiple_of(2)) {
        let c = t.content(&format!("b{k}")).expect("content").and_then(|c| c.content);
        assert_eq!(c.as_deref(), Some(format!("bulk {k}").as_str()), "b{k}, deleted on b after the export opened");
    }
    drop(export);
}
