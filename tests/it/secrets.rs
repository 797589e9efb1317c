//! Secrets never reach a message (issue 36): the real binary, given a datastore password in
//! every form libpq reads (the URL's user information, `?password=` in any case, the key=value
//! form, the configuration file), refuses, fails or starts without ever printing it. The
//! redaction itself is unit-tested in `earshot-postgres` (`redact.rs`); the request log's token
//! name is guarded in `observability.rs`.

use std::process::{Command, Stdio};

use crate::e2e::{earshot_bin, Server};

/// What every secret of these tests starts with.
const SECRET: &str = "hunter2";

/// Runs `earshot <args>` with no datastore, configuration or client variables inherited; exit
/// code and everything it printed.
fn earshot(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = Command::new(earshot_bin())
        .args(args)
        .env_remove("EARSHOT_DATASTORE")
        .env_remove("EARSHOT_CONFIG")
        .env_remove("EARSHOT_SERVER")
        .env_remove("EARSHOT_TOKEN")
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("earshot runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

/// A datastore nobody listens on, refused at once.
const NOWHERE: &str = "127.0.0.1:1";

#[test]
fn a_datastore_password_is_never_printed_by_a_refusal_or_a_failed_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let data = data.to_str().expect("utf-8 path");
    let serve =
        |datastore: &str| earshot(&["serve", "--bind", "127.0.0.1:0", "--data", data, "--datastore", datastore], &[]);
    // (the datastore, what the one error line says instead)
    let cases = [
        // The key=value form is refused, quoted or not.
        (
            format!("host=db.internal password='{SECRET} with spaces' dbname=earshot"),
            "unsupported datastore `host=db.internal password=***",
        ),
        (format!("host=db.internal password={SECRET}-kv dbname=earshot"), "password=*** dbname=earshot"),
        // A URL that cannot be reached: the user information, the query string in any case.
        (
            format!("postgres://u:{SECRET}-userinfo@{NOWHERE}/test"),
            "connecting to the datastore postgres://u:***@127.0.0.1:1/test",
        ),
        (
            format!("postgres://u@{NOWHERE}/test?sslmode=disable&password={SECRET}-query"),
            "?sslmode=disable&password=***",
        ),
        (format!("postgresql://u@{NOWHERE}/test?Password={SECRET}-case"), "?Password=***"),
        (format!("postgres://u@{NOWHERE}/test?pass%77ord={SECRET}-encoded"), "?pass%77ord=***"),
    ];
    for (datastore, says) in &cases {
        let (code, text) = serve(datastore);
        assert_eq!(code, Some(1), "{datastore}: {text}");
        assert!(text.contains(says), "{datastore}: expected `{says}` in:\n{text}");
        assert!(!text.contains(SECRET), "{datastore}: the password was printed:\n{text}");
    }
    // The same through the environment, `verify` and an offline export.
    let url = format!("postgres://u:{SECRET}-env@{NOWHERE}/test?password={SECRET}-env");
    for args in [vec!["serve", "--bind", "127.0.0.1:0", "--data", data], vec!["verify"]] {
        let (code, text) = earshot(&args, &[("EARSHOT_DATASTORE", url.as_str())]);
        assert!(code == Some(1) && text.contains("u:***@"), "{args:?}: {text}");
        assert!(!text.contains(SECRET), "{args:?}: the password was printed:\n{text}");
    }
    let (code, text) = earshot(&["export", "--datastore", &url, "--store", "s"], &[]);
    assert!(code == Some(1) && text.contains("u:***@"), "{text}");
    assert!(!text.contains(SECRET), "export: the password was printed:\n{text}");

    // The configuration file: its datastore, and a line that does not parse.
    let config = dir.path().join("earshot.toml");
    std::fs::write(&config, format!("datastore = \"postgres://u:{SECRET}-file@{NOWHERE}/test\"\n")).expect("config");
    let config = config.to_str().expect("utf-8 path");
    let (code, text) = earshot(&["serve", "--bind", "127.0.0.1:0", "--data", data, "--config", config], &[]);
    assert!(code == Some(1) && text.contains("u:***@"), "{text}");
    assert!(!text.contains(SECRET), "the configuration's password was printed:\n{text}");
    std::fs::write(config, format!("datastore = postgres://u:{SECRET}-unquoted@{NOWHERE}/test\n")).expect("config");
    let (code, text) = earshot(&["serve", "--bind", "127.0.0.1:0", "--data", data, "--config", config], &[]);
    assert!(code == Some(1) && text.contains("parsing") && text.contains("(line 1, column"), "{text}");
    assert!(!text.contains(SECRET), "the configuration's line was quoted:\n{text}");
}

/// The start-up line names the datastore, its passwords masked: in the user information and
/// in the query string (PostgreSQL here trusts the test user, so the passwords are sent to no
/// one and the start succeeds).
#[test]
fn the_start_up_line_names_the_datastore_without_its_passwords() {
    let Some(db) = earshot_postgres::testing::isolated("secrets").expect("PostgreSQL") else { return };
    let base = earshot_postgres::testing::url();
    // A password in the user information too, when the test URL has none.
    let base = match base.split_once("://") {
        Some((scheme, rest)) if rest.split_once('@').is_some_and(|(user, _)| !user.contains(':')) => {
            format!("{scheme}://{}", rest.replacen('@', &format!(":{SECRET}-userinfo@"), 1))
        }
        _ => base,
    };
    let datastore = format!("{base}?password={SECRET}-query&earshot_prefix={}", db.options.table_prefix);
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_with_env(&dir.path().join("data"), None, &[("EARSHOT_DATASTORE", datastore.as_str())])
        .unwrap_or_else(|e| panic!("{e}"));
    let log = server.log();
    let line =
        log.lines().find(|l| l.contains("datastore: PostgreSQL")).unwrap_or_else(|| panic!("no start-up line:\n{log}"));
    assert!(line.contains("password=***"), "{line}");
    assert!(!log.contains(SECRET), "a password reached the log:\n{log}");
}
