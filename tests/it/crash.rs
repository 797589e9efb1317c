//! Crash durability against the real binary: SIGKILL `earshot serve` while writes are in
//! flight, restart on the same data directory, and require every acknowledged write to be
//! there and `earshot verify` to agree; three kill/restart cycles in CI, as many as
//! `EARSHOT_SOAK_CYCLES` says for a soak (figures in TESTING.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::e2e::{earshot_bin, expect_status, strip_ansi, Client, Server};

/// Kill/restart cycles in CI; `EARSHOT_SOAK_CYCLES=300` makes a soak of the same test.
const CYCLES: usize = 3;

fn cycles() -> usize {
    std::env::var("EARSHOT_SOAK_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(CYCLES)
}

/// Above this many acknowledged writes a cycle checks the new ones and a sample of the older
/// ones (a soak's later cycles would otherwise spend minutes reading everything back); a soak
/// then checks all of them after one more restart at the end.
const CHECK_ALL_UP_TO: usize = 3000;

/// Size of the data directory's files, in bytes.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| if e.path().is_dir() { dir_bytes(&e.path()) } else { e.metadata().map_or(0, |m| m.len()) })
                .sum()
        })
        .unwrap_or(0)
}
const WRITERS: usize = 3;
/// Writers stop by themselves after this long even if the server were never killed.
const WRITE_WINDOW: Duration = Duration::from_secs(5);

/// What an acknowledged write promised: its audience and content.
#[derive(Debug, Clone)]
struct Acked {
    kind: &'static str,
    members: Vec<&'static str>,
    content: String,
    revision: u64,
}

fn origin(n: usize) -> (Value, &'static str, Vec<&'static str>) {
    match n % 3 {
        0 => (json!("public"), "public", vec![]),
        1 => (json!("owner_private"), "owner_private", vec!["owner"]),
        _ => (json!({"participants": ["alice"]}), "shared", vec!["alice", "owner"]),
    }
}

/// One client thread: writes items until the server dies, the stop flag is set, or the window
/// closes. Records each write acknowledged with 201; any other answer is a failure.
fn writer(
    client: Client,
    cycle: usize,
    w: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<BTreeMap<String, Acked>>>,
    problems: Arc<Mutex<Vec<String>>>,
) {
    let deadline = Instant::now() + WRITE_WINDOW;
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        let id = format!("c{cycle}-w{w}-{n}");
        let content = format!("cycle {cycle} writer {w} item {n}");
        let (origin, kind, members) = origin(n + w);
        let body = json!({"id": id, "owner": "owner", "content": content, "origin": origin});
        match client.try_call("POST", "/v1/stores/s/items", Some(&body)) {
            Ok((201, v)) => {
                let revision = v["revision"].as_u64().unwrap_or(0);
                if let Ok(mut a) = acked.lock() {
                    a.insert(id, Acked { kind, members, content, revision });
                }
            }
            Ok((status, v)) => {
                if let Ok(mut p) = problems.lock() {
                    p.push(format!("write {id} answered {status} {v}"));
                }
                return;
            }
            // The server was killed: this write may or may not have landed; it was not acked.
            Err(_) => return,
        }
        n += 1;
    }
}

/// Runs `earshot verify --data <dir>`; returns its exit status success and its output.
fn verify(data: &Path) -> (bool, String) {
    let out = Command::new(earshot_bin())
        .arg("verify")
        .arg("--data")
        .arg(data)
        .env("NO_COLOR", "1")
        .env_remove("EARSHOT_DATA")
        .output()
        .expect("run earshot verify");
    let text = strip_ansi(&format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), text)
}

/// Checks every acknowledged item over HTTP; returns the failures.
fn check_acked(c: &Client, acked: &BTreeMap<String, Acked>) -> Vec<String> {
    let mut lost = Vec::new();
    for (id, a) in acked {
        let (status, v) = c.call("GET", &format!("/v1/stores/s/items/{id}"), None);
        if status != 200 {
            lost.push(format!("{id} (acknowledged at revision {}): GET answered {status} {v}", a.revision));
            continue;
        }
        let got =
            (v["owner"].as_str(), v["audience"]["kind"].as_str(), &v["audience"]["members"], v["content"].as_str());
        let want = (Some("owner"), Some(a.kind), &json!(a.members), Some(a.content.as_str()));
        if got != want {
            lost.push(format!("{id}: expected {want:?}, found {got:?}"));
        }
    }
    lost
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let acked: Arc<Mutex<BTreeMap<String, Acked>>> = Arc::new(Mutex::new(BTreeMap::new()));
    let problems: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));

    let cycles = cycles();
    let mut restarts: Vec<(usize, u64, Duration)> = Vec::new();
    for cycle in 0..cycles {
        let mut server = Server::start(&data, None)
            .unwrap_or_else(|e| panic!("cycle {cycle}: earshot failed to start on {}: {e}", data.display()));
        if cycle == 0 {
            let c = server.client();
            expect_status(&c.call("POST", "/v1/stores", Some(json!({"id": "s"}))), 201);
            for p in ["owner", "alice"] {
                expect_status(
                    &c.call("POST", "/v1/stores/s/participants", Some(json!({"id": p, "kind": "person"}))),
                    201,
                );
            }
        }
        let before = acked.lock().map(|a| a.len()).unwrap_or(0);

        // Writers hammer the server; it is killed under them.
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (client, stop, acked, problems) = (server.client(), stop.clone(), acked.clone(), problems.clone());
                std::thread::spawn(move || writer(client, cycle, w, stop, acked, problems))
            })
            .collect();
        // Kill only once some writes have been acknowledged, at a different moment each cycle.
        let kill_after = Duration::from_millis(700 + 300 * (cycle % 5) as u64);
        let started = Instant::now();
        while started.elapsed() < kill_after || acked.lock().map(|a| a.len()).unwrap_or(0) == before {
            if started.elapsed() > WRITE_WINDOW {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = server.kill();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().expect("writer thread");
        }
        let problems_now = problems.lock().map(|p| p.clone()).unwrap_or_default();
        assert!(problems_now.is_empty(), "cycle {cycle}: writes refused before the kill: {problems_now:#?}");
        let acked_now = acked.lock().map(|a| a.clone()).unwrap_or_default();
        assert!(
            acked_now.len() > before,
            "cycle {cycle}: no write was acknowledged before the kill; log:\n{}",
            server.log()
        );
        eprintln!("crash cycle {cycle}: killed ({status:?}) after {} acknowledged writes in total", acked_now.len());

        // Restart on the same directory: every acknowledged write is there, and intact.
        let restart = Instant::now();
        let restarted = Server::start(&data, None)
            .unwrap_or_else(|e| panic!("cycle {cycle}: earshot did not reopen {} after SIGKILL: {e}", data.display()));
        restarts.push((acked_now.len(), dir_bytes(&data), restart.elapsed()));
        let c = restarted.client();
        let to_check: BTreeMap<String, Acked> = if acked_now.len() <= CHECK_ALL_UP_TO {
            acked_now.clone()
        } else {
            let stride = acked_now.len() / 500;
            acked_now
                .iter()
                .enumerate()
                .filter(|(n, (id, _))| n % stride == cycle % stride || id.starts_with(&format!("c{cycle}-")))
                .map(|(_, (id, a))| (id.clone(), a.clone()))
                .collect()
        };
        let lost = check_acked(&c, &to_check);
        assert!(
            lost.is_empty(),
            "cycle {cycle}: {} of {} acknowledged writes are missing or wrong after SIGKILL and restart:\n{}",
            lost.len(),
            acked_now.len(),
            lost.join("\n")
        );
        let info = c.call("GET", "/v1/stores/s", None);
        expect_status(&info, 200);
        let max_acked = acked_now.values().map(|a| a.revision).max().unwrap_or(0);
        let revision = info.1["revision"].as_u64().unwrap_or(0);
        assert!(
            revision >= max_acked,
            "cycle {cycle}: revision went back from {max_acked} to {revision} after restart"
        );
        // The restarted server still takes writes.
        let id = format!("after-{cycle}");
        let w = c.call(
            "POST",
            "/v1/stores/s/items",
            Some(json!({"id": id, "owner": "owner", "content": "x", "origin": "public"})),
        );
        expect_status(&w, 201);
        let revision = w.1["revision"].as_u64().unwrap_or(0);
        if let Ok(mut a) = acked.lock() {
            a.insert(id, Acked { kind: "public", members: vec![], content: "x".into(), revision });
        }
        drop(c);
        drop(restarted); // SIGKILL again: sled holds a lock on the directory.

        let (ok, out) = verify(&data);
        assert!(ok, "cycle {cycle}: `earshot verify` failed after SIGKILL and restart:\n{out}");
        assert!(out.contains("s: ok"), "cycle {cycle}: verify did not check store s:\n{out}");
    }
    let acked_all = acked.lock().map(|a| a.clone()).unwrap_or_default();
    if acked_all.len() > CHECK_ALL_UP_TO {
        let server = Server::start(&data, None).unwrap_or_else(|e| panic!("final restart: {e}"));
        let lost = check_acked(&server.client(), &acked_all);
        assert!(
            lost.is_empty(),
            "{} of {} acknowledged writes lost in the soak:\n{}",
            lost.len(),
            acked_all.len(),
            lost.join("\n")
        );
    }
    // The soak's figures (TESTING.md): restart time as the store grows.
    eprintln!("crash soak: {cycles} cycles, {} acknowledged writes, 0 lost", acked_all.len());
    for (n, (acked, bytes, took)) in restarts.iter().enumerate() {
        if n % 10 == 0 || n + 1 == restarts.len() {
            eprintln!(
                "crash soak: cycle {n}: {acked} acknowledged, data {} KiB, restart {} ms",
                bytes / 1024,
                took.as_millis()
            );
        }
    }
}
