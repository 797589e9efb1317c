//! Owns the tests of the command-line client: the real `earshot` binary against a real
//! `earshot serve` (check, lookup, grant, revoke, tuples, watch, export and import through the
//! service and offline, error answers and exit codes, tokens from the environment).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::e2e::{earshot_bin, expect_status, Server};

/// Runs `earshot <args>` with the environment given (and no inherited client variables);
/// exit code, stdout, stderr.
fn earshot(args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut cmd = Command::new(earshot_bin());
    cmd.args(args)
        .env_remove("EARSHOT_SERVER")
        .env_remove("EARSHOT_TOKEN")
        .env_remove("EARSHOT_DATASTORE")
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn earshot");
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input).expect("write stdin");
    }
    let out = child.wait_with_output().expect("earshot runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn ok_json((code, out, err): (i32, String, String)) -> Value {
    assert_eq!(code, 0, "exit {code}; stderr: {err}; stdout: {out}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {out}"))
}

fn figure1(server: &Server) {
    let c = server.client();
    expect_status(&c.call("POST", "/v1/stores", Some(json!({"id": "fig"}))), 201);
    for p in ["owner", "alice", "bob", "carol"] {
        expect_status(&c.call("POST", "/v1/stores/fig/participants", Some(json!({"id": p, "kind": "person"}))), 201);
    }
    let items = [
        json!({"id": "f1", "owner": "owner", "content": "offsite in Lisbon", "origin": {"participants": ["alice", "bob"]}}),
        json!({"id": "f2", "owner": "owner", "content": "alice is interviewing", "origin": {"participants": ["alice"]}}),
        json!({"id": "p1", "owner": "owner", "content": "closed on friday", "origin": "public"}),
    ];
    for i in items {
        expect_status(&c.call("POST", "/v1/stores/fig/items", Some(i)), 201);
    }
}

#[test]
fn the_client_talks_to_a_running_service() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), None).unwrap_or_else(|e| panic!("{e}"));
    figure1(&server);
    let url = format!("http://{}", server.addr);
    let env = [("EARSHOT_SERVER", url.as_str())];

    // check: a denial is an answer (exit 0), JSON on stdout.
    let carol = ["check", "--store", "fig", "--item", "f2", "--owner", "owner", "--viewer", "carol"];
    let v = ok_json(earshot(&carol, &env, None));
    assert_eq!((v["admitted"].as_bool(), v["reason"].as_str()), (Some(false), Some("denied_not_in_audience")));
    // --server on the command line instead of the environment.
    let v = ok_json(earshot(&[&carol[..], &["--server", &url]].concat(), &[], None));
    assert_eq!(v["admitted"], false);

    // grant, then the same check admits through the grant.
    let g = ok_json(earshot(
        &["grant", "--store", "fig", "--item", "f2", "--member", "alice", "--member", "carol", "--reason", "asked"],
        &env,
        None,
    ));
    assert_eq!(g["outcome"], "granted");
    let grant = g["ids"][0].as_str().expect("grant id").to_string();
    let token = g["token"].as_str().expect("token").to_string();
    let v = ok_json(earshot(&[&carol[..], &["--at-least", &token]].concat(), &env, None));
    assert_eq!((v["admitted"].as_bool(), v["reason"].as_str()), (Some(true), Some("admitted_grant")));

    let v = ok_json(earshot(&["lookup", "--store", "fig", "--owner", "owner", "--viewer", "bob"], &env, None));
    let mut seen: Vec<&str> = v["items"].as_array().expect("items").iter().filter_map(|i| i["item"].as_str()).collect();
    seen.sort_unstable();
    assert_eq!(seen, ["f1", "p1"]);

    // revoke; revoking again is an error answer: exit 1, one line on stderr, nothing on stdout.
    let v = ok_json(earshot(&["revoke", "--store", "fig", "--grant", &grant], &env, None));
    assert_eq!(v["outcome"], "revoked");
    let (code, out, err) = earshot(&["revoke", "--store", "fig", "--grant", &grant], &env, None);
    assert_eq!(code, 1, "{out} {err}");
    assert!(out.is_empty() && err.trim().lines().count() == 1, "{err}");
    assert!(err.starts_with("earshot: 409 grant_already_revoked: "), "{err}");
    let (code, _, err) = earshot(&["check", "--store", "fig", "--item", "nope", "--owner", "owner"], &env, None);
    assert_eq!(code, 1);
    assert!(err.contains("404 item_not_found"), "{err}");
    // A service that is not there: exit 1, and the error says where it tried.
    let (code, _, err) = earshot(&carol, &[("EARSHOT_SERVER", "http://127.0.0.1:9")], None);
    assert_eq!(code, 1);
    assert!(err.contains("cannot reach http://127.0.0.1:9"), "{err}");

    // tuples: the route is another helper's; skipped while it is not routed.
    let (code, out, err) =
        earshot(&["tuples", "--store", "fig", "--resource-type", "item", "--limit", "5"], &env, None);
    if !err.contains("route_not_found") {
        assert_eq!(code, 0, "{err}");
        assert!(serde_json::from_str::<Value>(out.trim()).is_ok(), "{out}");
    }

    // watch from the beginning of the log: the store's creation and every write, as NDJSON.
    let mut child = Command::new(earshot_bin())
        .args(["watch", "--store", "fig", "--after", &format!("0.{}", &token[token.find('.').expect(".") + 1..])])
        .env("EARSHOT_SERVER", &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("watch");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().expect("stdout")));
    let first: Value = serde_json::from_str(&lines.next().expect("an event").expect("line")).expect("json");
    assert_eq!(first["change"]["kind"], "store_created", "{first}");
    let _ = child.kill();
    let _ = child.wait();

    // export through the service, import through the service under another id.
    let file = dir.path().join("fig.ndjson");
    let (code, _, err) = earshot(&["export", "--store", "fig", "-o", file.to_str().expect("path")], &env, None);
    assert_eq!(code, 0, "{err}");
    let exported = std::fs::read(&file).expect("export file");
    assert!(exported.starts_with(b"{\"earshot_export\":1,\"store\":\"fig\""));
    let v = ok_json(earshot(&["import", "--store", "fig2", file.to_str().expect("path")], &env, None));
    assert_eq!((v["store"].as_str(), v["from"].as_str()), (Some("fig2"), Some("fig")));
    let carol2 = ["check", "--store", "fig2", "--item", "f2", "--owner", "owner", "--viewer", "carol"];
    let again = ok_json(earshot(&carol2, &env, None));
    assert_eq!(again["reason"], "denied_not_in_audience");
    // From stdin, into an existing store: refused.
    let (code, _, err) = earshot(&["import", "--store", "fig2", "-"], &env, Some(&exported));
    assert_eq!(code, 1);
    assert!(err.contains("409 store_exists"), "{err}");
    // A cut-off export: refused with the line.
    let (code, _, err) = earshot(&["import", "--store", "fig3", "-"], &env, Some(&exported[..exported.len() - 5]));
    assert_eq!(code, 1);
    assert!(err.contains("422 import_invalid"), "{err}");

    // Offline: the service stopped, export and import on the data directory itself.
    drop(server);
    let data = dir.path().to_str().expect("path");
    let (code, offline, err) = earshot(&["export", "--store", "fig", "--data", data], &[], None);
    assert_eq!(code, 0, "{err}");
    assert!(offline.as_bytes() == exported, "the offline export is the served one");
    let v = ok_json(earshot(&["import", "--store", "fig4", "--data", data, "-"], &[], Some(&exported)));
    assert_eq!(v["store"], "fig4");
    let (code, out, err) = earshot(&["verify", "--data", data], &[], None);
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("fig4: ok"), "{out}");
}

#[test]
fn the_client_sends_the_token_from_the_environment() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("earshot.toml");
    std::fs::write(
        &config,
        "[[tokens]]\nname = \"ops\"\ntoken = \"an-admin-secret-0123456789\"\nscope = \"admin\"\n\n\
         [[tokens]]\nname = \"app\"\ntoken = \"a-reader-secret-0123456789\"\nscope = \"reader\"\n",
    )
    .expect("config");
    let server = Server::start(&dir.path().join("data"), Some(Path::new(&config))).unwrap_or_else(|e| panic!("{e}"));
    let url = format!("http://{}", server.addr);
    let (code, _, err) = earshot(&["export", "--store", "x"], &[("EARSHOT_SERVER", &url)], None);
    assert_eq!(code, 1);
    assert!(err.contains("401 unauthenticated"), "{err}");
    let reader = [("EARSHOT_SERVER", url.as_str()), ("EARSHOT_TOKEN", "a-reader-secret-0123456789")];
    let (code, _, err) = earshot(&["export", "--store", "x"], &reader, None);
    assert_eq!(code, 1);
    assert!(err.contains("403 forbidden"), "{err}");
    let admin = [("EARSHOT_SERVER", url.as_str()), ("EARSHOT_TOKEN", "an-admin-secret-0123456789")];
    let (code, _, err) = earshot(&["export", "--store", "x"], &admin, None);
    assert_eq!(code, 1);
    assert!(err.contains("404 store_not_found"), "{err}");
}
