//! Damaged data against the real binary: with sled's `db` file truncated, `serve` and `verify`
//! refuse to start with one clear line naming the data directory, a non-zero exit that is not a
//! panic's (101), and no panic report or backtrace.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::e2e::{earshot_bin, expect_status, Server};

/// Runs `earshot <args>` to completion (bounded: a refusal must not hang), returning the exit
/// code and stderr.
fn run(args: &[&str], data: &std::path::Path) -> (Option<i32>, String) {
    let mut child = Command::new(earshot_bin())
        .args(args)
        .arg("--data")
        .arg(data)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "1")
        .env_remove("EARSHOT_CONFIG")
        .env_remove("EARSHOT_DATA")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn earshot");
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return (status.code(), err);
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("earshot {args:?} did not exit within 30 s on a damaged data directory");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_truncated_database_is_refused_with_one_clear_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("earshot-data");
    {
        let server = Server::start(&data, None).unwrap_or_else(|e| panic!("{e}"));
        let c = server.client();
        expect_status(&c.call("POST", "/v1/stores", Some(json!({"id": "s"}))), 201);
        expect_status(&c.call("POST", "/v1/stores/s/participants", Some(json!({"id": "o", "kind": "person"}))), 201);
        // Enough data that sled's log spans several segments (a few MiB).
        let pad = "x".repeat(3000);
        for i in 0..800 {
            let body =
                json!({"id": format!("i{i}"), "owner": "o", "content": format!("{pad} {i}"), "origin": "public"});
            expect_status(&c.call("POST", "/v1/stores/s/items", Some(body)), 201);
        }
    } // SIGKILL: sled holds a lock on the directory.
    let pristine = dir.path().join("pristine");
    copy_dir(&data, &pristine);
    let len = std::fs::metadata(data.join("db")).expect("sled's db file").len();
    assert!(len > 1_000_000, "the db file is only {len} bytes");

    // 100 bytes: sled alone would open an empty database; 600 000: sled alone may panic, or
    // open a prefix. Each must be refused.
    for size in [100, 600_000] {
        let _ = std::fs::remove_dir_all(&data);
        copy_dir(&pristine, &data);
        let db = data.join("db");
        std::fs::OpenOptions::new().write(true).open(&db).and_then(|f| f.set_len(size)).expect("truncate db");
        refused(&data, size);
    }
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy file");
        }
    }
}

/// `serve` and `verify` both refuse the directory with one clear line.
fn refused(data: &std::path::Path, size: u64) {
    for args in [&["serve", "--bind", "127.0.0.1:0"][..], &["verify"][..]] {
        let (code, err) = run(args, data);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(
            code.is_some_and(|c| c != 0 && c != 101),
            "db cut to {size}: earshot {args:?} exited with {code:?}:\n{err}"
        );
        assert_eq!(lines.len(), 1, "earshot {args:?} printed more than one line on stderr:\n{err}");
        assert!(lines[0].contains(&data.display().to_string()), "the line does not name the data directory: {err}");
        assert!(lines[0].contains("restore"), "the line does not say what to do: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "a panic report leaked: {err}");
    }
}
