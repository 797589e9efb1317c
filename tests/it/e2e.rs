//! End-to-end tests against the real `earshot` binary over loopback HTTP (the Figure 1
//! walkthrough, token configuration), and the process harness `crash.rs` shares: locate or
//! build the binary, start `earshot serve`, read its address, kill it on drop.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

/// How long a start-up may take before the test gives up on it.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The `earshot` binary of this build, built first if it is missing or older than the sources.
///
/// `CARGO_BIN_EXE_earshot` is not available to this package, so the binary is found next to
/// the test binary: `<target>/<profile>/deps/it-<hash>` → `<target>/<profile>/earshot`.
pub(crate) fn earshot_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("current test executable");
        let deps = exe.parent().expect("deps directory");
        let profile_dir =
            if deps.file_name().is_some_and(|n| n == "deps") { deps.parent().expect("profile dir") } else { deps };
        let bin = profile_dir.join(format!("earshot{}", std::env::consts::EXE_SUFFIX));
        if is_stale(&bin) {
            build(profile_dir);
        }
        assert!(bin.is_file(), "the earshot binary is still missing at {}", bin.display());
        bin
    })
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Newest modification time of the Rust sources and manifests the binary is built from.
fn newest_source() -> Option<SystemTime> {
    fn walk(dir: &Path, newest: &mut Option<SystemTime>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, newest);
            } else if p.extension().is_some_and(|x| x == "rs" || x == "toml" || x == "json") {
                if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                    *newest = Some(newest.map_or(t, |n| n.max(t)));
                }
            }
        }
    }
    let root = workspace_root();
    let mut newest = None;
    walk(&root.join("crates"), &mut newest);
    walk(&root.join("api"), &mut newest);
    newest
}

fn is_stale(bin: &Path) -> bool {
    let Ok(built) = std::fs::metadata(bin).and_then(|m| m.modified()) else { return true };
    newest_source().is_some_and(|src| src > built)
}

/// Builds the binary into the target directory this test binary came from.
fn build(profile_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build").arg("-p").arg("earshot").arg("--manifest-path").arg(workspace_root().join("Cargo.toml"));
    if let Some(target_dir) = profile_dir.parent() {
        // `<target>/<profile>`; a cross build (`<target>/<triple>/<profile>`) keeps CARGO_TARGET_DIR.
        if target_dir.join("CACHEDIR.TAG").exists() {
            cmd.arg("--target-dir").arg(target_dir);
        }
    }
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("running cargo build -p earshot");
    assert!(status.success(), "cargo build -p earshot failed: {status}");
}

/// Removes ANSI escape sequences (`ESC [ ... letter`).
pub(crate) fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The address in an `earshot listening addr=...` log line (or its `--log-format json` form).
fn listening_addr(line: &str) -> Option<SocketAddr> {
    let line = strip_ansi(line);
    if !line.contains("earshot listening") {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(&line) {
        return v["addr"].as_str()?.parse().ok();
    }
    let rest = &line[line.find("addr=")? + "addr=".len()..];
    rest.split_whitespace().next()?.parse().ok()
}

/// A running `earshot serve`; killed (SIGKILL) and reaped on drop, also when a test panics.
pub(crate) struct Server {
    child: Option<Child>,
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `earshot serve --data <data> --bind 127.0.0.1:0 [--config <config>]` and waits for
    /// its `earshot listening` line. On failure returns the process log.
    pub(crate) fn start(data: &Path, config: Option<&Path>) -> Result<Server, String> {
        Self::start_with_env(data, config, &[])
    }

    /// As [`Server::start`], with extra environment variables for the process.
    pub(crate) fn start_with_env(data: &Path, config: Option<&Path>, env: &[(&str, &str)]) -> Result<Server, String> {
        Self::start_on("127.0.0.1:0", data, config, env)
    }

    /// As [`Server::start_with_env`], listening on `bind` (a port known beforehand, as a load
    /// balancer's configuration needs).
    pub(crate) fn start_on(
        bind: &str,
        data: &Path,
        config: Option<&Path>,
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let mut cmd = Command::new(earshot_bin());
        // No trace export unless a test asks for it.
        cmd.env_remove("OTEL_EXPORTER_OTLP_ENDPOINT").env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        cmd.envs(env.iter().copied());
        cmd.arg("serve").arg("--data").arg(data).arg("--bind").arg(bind);
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        cmd.env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .env_remove("EARSHOT_CONFIG")
            .env_remove("EARSHOT_BIND")
            .env_remove("EARSHOT_DATA")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| format!("cannot spawn {}: {e}", earshot_bin().display()))?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        // Logs go to stderr; stdout is watched too, for whatever prints the address first.
        if let Some(out) = child.stdout.take() {
            drain(out, log.clone(), Some(tx.clone()));
        }
        if let Some(err) = child.stderr.take() {
            drain(err, log.clone(), Some(tx));
        }
        let mut server = Server { child: Some(child), addr: SocketAddr::from(([127, 0, 0, 1], 0)), log };
        match rx.recv_timeout(START_TIMEOUT) {
            Ok(addr) => {
                server.addr = addr;
                Ok(server)
            }
            Err(e) => {
                let status = server.kill();
                Err(format!("earshot serve did not report its address ({e}); exit: {status:?}; log:\n{}", server.log()))
            }
        }
    }

    pub(crate) fn client(&self) -> Client {
        Client::new(self.addr)
    }

    /// Everything the process printed so far.
    pub(crate) fn log(&self) -> String {
        self.log.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// The process id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Sends SIGTERM (what `docker stop` and Kubernetes send) without waiting.
    pub(crate) fn terminate(&self) {
        if let Some(child) = &self.child {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        }
    }

    /// Waits up to `limit` for the process to exit by itself; its status, if it did.
    pub(crate) fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let child = self.child.as_mut()?;
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return Some(status);
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (on Unix, `Child::kill`) and reap; returns the exit status.
    pub(crate) fn kill(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        let _ = child.kill();
        child.wait().ok()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Copies a child's output into the shared log; reports the listening address once.
fn drain(stream: impl Read + Send + 'static, log: Arc<Mutex<Vec<String>>>, tx: Option<mpsc::Sender<SocketAddr>>) {
    std::thread::spawn(move || {
        let mut tx = tx;
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            // Log the line before reporting the address, so a caller woken by the address
            // always finds the listening line in the log.
            let addr = listening_addr(&line);
            if let Ok(mut l) = log.lock() {
                l.push(strip_ansi(&line));
            }
            if let Some(addr) = addr {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(addr);
                }
            }
        }
    });
}

/// A small blocking JSON client over `ureq`, with bounded timeouts.
pub(crate) struct Client {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
}

impl Client {
    pub(crate) fn new(addr: SocketAddr) -> Self {
        let agent =
            ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(5)).timeout(Duration::from_secs(20)).build();
        Client { agent, base: format!("http://{addr}"), token: None }
    }

    pub(crate) fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.to_string());
        self
    }

    /// One request; `Err` only for transport failures (refused connection, reset, timeout).
    pub(crate) fn try_call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<(u16, Value), String> {
        let mut req = self.agent.request(method, &format!("{}{path}", self.base));
        if let Some(t) = &self.token {
            req = req.set("authorization", &format!("Bearer {t}"));
        }
        let res = match body {
            Some(b) => req.set("content-type", "application/json").send_string(&b.to_string()),
            None => req.call(),
        };
        let resp = match res {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(ureq::Error::Transport(t)) => return Err(t.to_string()),
        };
        let status = resp.status();
        let text = resp.into_string().map_err(|e| format!("reading the body: {e}"))?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// One request that must reach the server.
    #[track_caller]
    pub(crate) fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        match self.try_call(method, path, body.as_ref()) {
            Ok(r) => r,
            Err(e) => panic!("{method} {path}: transport error: {e}"),
        }
    }
}

/// Asserts a status, showing the body.
#[track_caller]
pub(crate) fn expect_status(got: &(u16, Value), status: u16) {
    assert_eq!(got.0, status, "unexpected answer {} {}", got.0, got.1);
}

fn ids(v: &Value) -> Vec<String> {
    v["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["item"].as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[test]
fn figure_1_walkthrough_over_real_http() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), None).unwrap_or_else(|e| panic!("{e}"));
    let c = server.client();

    let health = c.call("GET", "/healthz", None);
    expect_status(&health, 200);
    assert_eq!(health.1["status"], "ok");
    expect_status(&c.call("GET", "/openapi.json", None), 200);

    expect_status(&c.call("POST", "/v1/stores", Some(json!({"id": "fig1", "name": "Figure 1"}))), 201);
    for (id, kind) in [("owner", "agent"), ("alice", "person"), ("bob", "person")] {
        expect_status(&c.call("POST", "/v1/stores/fig1/participants", Some(json!({"id": id, "kind": kind}))), 201);
    }
    let bind = json!({"transport": "email", "identifier": "bob@example.com", "participant": "bob"});
    expect_status(&c.call("POST", "/v1/stores/fig1/identities", Some(bind)), 201);

    let items = [
        json!({"id": "f1", "owner": "owner", "content": "trip plans", "origin": {"participants": ["alice", "bob"]}}),
        json!({"id": "f2", "owner": "owner", "content": "alice's diagnosis", "origin": {"participants": ["alice"]}}),
        json!({"id": "p1", "owner": "owner", "content": "the office opens at 9", "origin": "public"}),
    ];
    let mut last_token = String::new();
    for item in items {
        let w = c.call("POST", "/v1/stores/fig1/items", Some(item));
        expect_status(&w, 201);
        last_token = w.1["token"].as_str().expect("write token").to_string();
    }

    // Bob's one-to-one conversation, identified by his email; read at least at the last write.
    let bob =
        json!({"owner": "owner", "viewers": {"identities": [{"transport": "email", "identifier": "bob@example.com"}]}});
    let look = c.call(
        "POST",
        "/v1/stores/fig1/lookup",
        Some(json!({"container": bob, "consistency": {"at_least": last_token}})),
    );
    expect_status(&look, 200);
    assert_eq!(ids(&look.1), ["f1", "p1"], "{}", look.1);
    let f2 = c.call("POST", "/v1/stores/fig1/check", Some(json!({"item": "f2", "container": bob})));
    expect_status(&f2, 200);
    assert_eq!(f2.1["admitted"], false, "{}", f2.1);
    assert_eq!(f2.1["reason"], "denied_not_in_audience");
    let f1 = c.call("POST", "/v1/stores/fig1/check", Some(json!({"item": "f1", "container": bob})));
    assert_eq!((f1.1["admitted"].clone(), f1.1["reason"].clone()), (json!(true), json!("admitted_origin")), "{}", f1.1);

    // An unresolved viewer (unknown identity) sees public items only.
    let stranger = json!({"owner": "owner", "viewers": {"identities": [{"transport": "email", "identifier": "stranger@example.com"}]}});
    let look = c.call("POST", "/v1/stores/fig1/lookup", Some(json!({"container": stranger})));
    expect_status(&look, 200);
    assert_eq!(ids(&look.1), ["p1"], "{}", look.1);
    let f1 = c.call("POST", "/v1/stores/fig1/check", Some(json!({"item": "f1", "container": stranger})));
    assert_eq!(f1.1["reason"], "denied_unresolved_viewers", "{}", f1.1);

    // The owner alone sees every current item of its own; alice and bob together see f1 and p1.
    let own = c.call("POST", "/v1/stores/fig1/lookup", Some(json!({"container": {"owner": "owner"}})));
    assert_eq!(ids(&own.1), ["f1", "f2", "p1"], "{}", own.1);
    let both = json!({"owner": "owner", "viewers": {"participants": ["alice", "bob"]}});
    let look = c.call("POST", "/v1/stores/fig1/lookup", Some(json!({"container": both})));
    assert_eq!(ids(&look.1), ["f1", "p1"], "{}", look.1);

    // Errors come back as JSON with stable codes over the wire too.
    let bad = c.call("POST", "/v1/stores/fig1/check", Some(json!({"item": "nope", "container": bob})));
    expect_status(&bad, 404);
    assert_eq!(bad.1["error"]["code"], "item_not_found");
    let metrics = c.try_call("GET", "/metrics", None).expect("metrics");
    assert_eq!(metrics.0, 200);
    assert!(server.log().contains("earshot listening"), "{}", server.log());
}

#[test]
fn tokens_from_the_config_file_guard_the_api() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("earshot.toml");
    std::fs::write(
        &config,
        r#"
consistency_wait_ms = 200

[[tokens]]
name = "ops"
token = "e2e-admin-token-0123456789"
scope = "admin"

[[tokens]]
name = "tenant"
token = "e2e-reader-token-0123456789"
scope = "reader"
stores = ["s"]
"#,
    )
    .expect("write config");
    let data = dir.path().join("data");
    let server = Server::start(&data, Some(&config)).unwrap_or_else(|e| panic!("{e}"));
    let anon = server.client();
    let admin = server.client().with_token("e2e-admin-token-0123456789");
    let reader = server.client().with_token("e2e-reader-token-0123456789");
    let wrong = server.client().with_token("e2e-admin-token-012345678");

    let r = anon.call("POST", "/v1/stores", Some(json!({"id": "s"})));
    expect_status(&r, 401);
    assert_eq!(r.1["error"]["code"], "unauthenticated");
    expect_status(&wrong.call("POST", "/v1/stores", Some(json!({"id": "s"}))), 401);
    // On the wire, a 401 names the scheme (RFC 6750 §3): `WWW-Authenticate: Bearer`, for a
    // missing token, a wrong one and another scheme alike; a 403 is not a challenge.
    let challenge = |method: &str, authorization: &str| {
        let req = ureq::request(method, &format!("http://{}/v1/stores", server.addr));
        let req = if authorization.is_empty() { req } else { req.set("authorization", authorization) };
        match req.call() {
            Ok(r) | Err(ureq::Error::Status(_, r)) => (r.status(), r.header("www-authenticate").map(str::to_string)),
            Err(e) => panic!("{method} /v1/stores: transport error: {e}"),
        }
    };
    let bearer = Some("Bearer".to_string());
    for authorization in ["", "Bearer e2e-admin-token-012345678", "Basic e2e-admin-token-0123456789"] {
        assert_eq!(challenge("GET", authorization), (401, bearer.clone()), "{authorization:?}");
        assert_eq!(challenge("POST", authorization), (401, bearer.clone()), "{authorization:?}");
    }
    assert_eq!(challenge("POST", "Bearer e2e-reader-token-0123456789"), (403, None));
    expect_status(&reader.call("POST", "/v1/stores", Some(json!({"id": "s"}))), 403);
    expect_status(&admin.call("POST", "/v1/stores", Some(json!({"id": "s"}))), 201);
    expect_status(&admin.call("POST", "/v1/stores", Some(json!({"id": "t"}))), 201);
    expect_status(&reader.call("GET", "/v1/stores/s", None), 200);
    expect_status(&reader.call("GET", "/v1/stores/t", None), 403);
    expect_status(&anon.call("GET", "/healthz", None), 200);
    let ready = anon.call("GET", "/readyz", None);
    expect_status(&ready, 200);
    assert_eq!(ready.1["stores"], 2);

    // The configured wait bounds an `at_least` read of a revision that never comes.
    let tok = reader.call("GET", "/v1/stores/s", None).1["token"].as_str().expect("token").to_string();
    let (_, tag) = tok.split_once('.').expect("token tag");
    let started = Instant::now();
    let r = reader.call(
        "POST",
        "/v1/stores/s/lookup",
        Some(json!({"container": {"owner": "nobody"}, "consistency": {"at_least": format!("999.{tag}")}})),
    );
    expect_status(&r, 503);
    assert_eq!(r.1["error"]["code"], "consistency_timeout");
    assert!(started.elapsed() < Duration::from_secs(2), "consistency_wait_ms = 200 was not applied");
    // The secret never reaches the log.
    assert!(!server.log().contains("e2e-admin-token"), "a token leaked into the log:\n{}", server.log());
}

#[test]
fn refuses_to_listen_on_a_public_address_without_tokens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(earshot_bin())
        .args(["serve", "--bind", "0.0.0.0:0", "--data"])
        .arg(dir.path().join("data"))
        .env("NO_COLOR", "1")
        .env_remove("EARSHOT_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run earshot");
    assert!(!out.status.success(), "earshot served on 0.0.0.0 without tokens");
    let text = strip_ansi(&format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    assert!(text.contains("non-loopback"), "{text}");
}

#[test]
fn ansi_codes_are_stripped_from_the_listening_line() {
    let line = "\u{1b}[2m2026-01-01T00:00:00Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m \u{1b}[2mearshot\u{1b}[0m\u{1b}[2m:\u{1b}[0m earshot listening \u{1b}[3maddr\u{1b}[0m\u{1b}[2m=\u{1b}[0m127.0.0.1:4242";
    assert_eq!(listening_addr(line), Some(SocketAddr::from(([127, 0, 0, 1], 4242))));
    assert_eq!(listening_addr("INFO earshot: rebuilt indexes stores=0"), None);
}

/// `earshot schema check` names line and column; `earshot schema apply` loads the checked-in
/// household schema into a running service; `earshot demo fridges` prints the two arms.
#[test]
fn schema_cli_and_the_fridges_demo_over_the_real_binary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = dir.path().join("bad.schema");
    std::fs::write(&bad, "relation family {\n  opens calendar/priv*\n}\n").expect("write");
    let out = Command::new(earshot_bin()).args(["schema", "check"]).arg(&bad).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad schema must fail the command");
    assert!(stderr.contains("bad.schema:2:9: bad_pattern"), "{stderr}");

    let household = workspace_root().join("schema/household.schema");
    let out = Command::new(earshot_bin()).args(["schema", "check"]).arg(&household).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let server = Server::start(&dir.path().join("data"), None).unwrap_or_else(|e| panic!("{e}"));
    let c = server.client();
    expect_status(&c.call("POST", "/v1/stores", Some(json!({"id": "home"}))), 201);
    let url = format!("http://{}", server.addr);
    let out = Command::new(earshot_bin())
        .args(["schema", "apply", "--store", "home", "--url", &url])
        .arg(&household)
        .env_remove("EARSHOT_TOKEN")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let schema = c.call("GET", "/v1/stores/home/schema", None);
    expect_status(&schema, 200);
    assert_eq!(schema.1["unexercised"], json!(["care_provider", "colleague", "family"]));
    let out = Command::new(earshot_bin())
        .args(["schema", "apply", "--store", "home", "--url", &url])
        .arg(&bad)
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("2:9: bad_pattern"));

    let out = Command::new(earshot_bin()).args(["demo", "fridges"]).output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("gated (Earshot)            forbidden facts returned   0 of 177"), "{stdout}");
    assert!(stdout.contains("ungated (host fully open)  forbidden facts returned 177 of 177"), "{stdout}");
}

/// Token entries that cannot be right stop the start-up with a message naming the entry by its
/// `name` and never showing the secret.
#[test]
fn token_entries_that_cannot_be_right_stop_the_start_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            "[[tokens]]\nname = \"tiny\"\ntoken = \"k\"\nscope = \"admin\"\n",
            "token `tiny` is shorter than 16 characters",
        ),
        (
            "[[tokens]]\nname = \"ops\"\ntoken = \"same-secret-0123456789\"\nscope = \"admin\"\n\
             [[tokens]]\nname = \"agent\"\ntoken = \"same-secret-0123456789\"\nscope = \"reader\"\n",
            "tokens `ops` and `agent` have the same secret",
        ),
        (
            "[[tokens]]\nname = \"agent\"\ntoken = \"agent-secret-0123456789\"\nscope = \"reader\"\nstores = []\n",
            "token `agent` lists no stores",
        ),
        ("max_connections = 0\n", "max_connections must be between 1"),
        ("consistency_wait_ms = 5000\nrequest_timeout_ms = 1000\n", "must be larger than consistency_wait_ms"),
    ];
    for (i, (toml, expected)) in cases.iter().enumerate() {
        let config = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&config, toml).expect("write config");
        let out = Command::new(earshot_bin())
            .args(["serve", "--bind", "127.0.0.1:0", "--data"])
            .arg(dir.path().join("data"))
            .arg("--config")
            .arg(&config)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .expect("run earshot");
        let text =
            strip_ansi(&format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
        assert!(!out.status.success(), "case {i} started:\n{text}");
        assert!(text.contains(expected), "case {i}: expected `{expected}` in:\n{text}");
        assert!(!text.contains("secret-0123456789"), "case {i} printed a secret:\n{text}");
    }
}

/// The checked-in example configuration passes the start-up checks (tokens, limits).
#[test]
fn the_example_configuration_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let example = workspace_root().join("earshot.example.toml");
    let server = Server::start(&dir.path().join("data"), Some(&example)).unwrap_or_else(|e| panic!("{e}"));
    let r = server.client().with_token("change-me-admin-token").call("GET", "/readyz", None);
    expect_status(&r, 200);
}

/// `earshot validate`: every fixture and the documented example (`docs/examples/policy.yaml`)
/// pass through the real binary, one ok line per file and nothing on stderr (no request lines
/// of its in-process service unless `RUST_LOG` asks for them; this is how CI runs the
/// repository's fixtures through the users' command); a wrong expectation exits 1 naming the
/// step and both values; a file that does not parse exits 2 with the YAML error's line and
/// column.
#[test]
fn validate_runs_the_fixtures_and_reports_failures() {
    let mut files = crate::scenarios::fixture_files();
    files.push(workspace_root().join("docs/examples/policy.yaml"));
    let out = Command::new(earshot_bin()).arg("validate").args(&files).env_remove("RUST_LOG").output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len(), "{stdout}");
    for (line, file) in lines.iter().zip(&files) {
        assert!(line.starts_with(&format!("{}: ok (", file.display())) && line.ends_with(" steps)"), "{line}");
    }
    assert!(stderr.is_empty(), "a passing run prints its summary only, yet stderr has:\n{stderr}");
    // Asked for, the request lines are there.
    let example = workspace_root().join("docs/examples/policy.yaml");
    let out = Command::new(earshot_bin()).arg("validate").arg(&example).env("RUST_LOG", "info").output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains("earshot::request"), "{stderr}");

    // docs/validate.md shows the example file whole (all but its two comment lines).
    let example = std::fs::read_to_string(workspace_root().join("docs/examples/policy.yaml")).expect("example");
    let doc = std::fs::read_to_string(workspace_root().join("docs/validate.md")).expect("docs/validate.md");
    let body = example.splitn(3, '\n').nth(2).unwrap_or_default();
    assert!(doc.contains(body), "docs/validate.md no longer shows docs/examples/policy.yaml as it is");

    let dir = tempfile::tempdir().expect("temp dir");
    let wrong = dir.path().join("wrong.yaml");
    std::fs::write(
        &wrong,
        "name: wrong\ndescription: one wrong expectation\nsetup:\n  - participants: [o, bob]\n  - item: {id: f1, owner: o, origin: [o]}\nsteps:\n  - check: {item: f1, container: {owner: o, viewers: [bob]}}\n    expect: denied_not_in_audience\n  - check: {item: f1, container: {owner: o, viewers: [bob]}}\n    expect: admitted_origin\n    note: bob should see it\n",
    )
    .expect("write");
    let out = Command::new(earshot_bin()).arg("validate").arg(&wrong).output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let line = format!("{}:step 2 (check f1 in {{owner: o, viewers: ", wrong.display());
    assert!(stdout.starts_with(&line), "{stdout}");
    assert!(
        stdout.contains("expected admitted_origin; got {") && stdout.contains("\"reason\":\"denied_not_in_audience\""),
        "{stdout}"
    );
    assert!(stdout.contains("[note: bob should see it]") && !stdout.contains("step 1"), "{stdout}");

    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "name: broken\ndescription: x\nsteps:\n  - check: {item: f1\n").expect("write");
    let out = Command::new(earshot_bin()).arg("validate").arg(&wrong).arg(&broken).output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains(&format!("{}:5:1: cannot parse: ", broken.display())), "{stdout}");
    assert!(stdout.contains(&format!("{}:step 2 (", wrong.display())), "the other file still runs: {stdout}");
}

/// SIGTERM drains: `/readyz` turns `503 draining` at once while requests are still served for
/// `drain_delay_ms` (so a load balancer stops routing here first), then the listener closes and
/// the process exits 0. A second signal ends the delay early; the test relies on it rather than on
/// timing, so a loaded machine that is slow to deliver the first signal cannot fail it.
#[test]
fn sigterm_turns_readiness_off_first_then_drains_and_exits_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let env = [("EARSHOT_DRAIN_DELAY_MS", "600000")];
    let mut server = Server::start_with_env(&dir.path().join("data"), None, &env).unwrap_or_else(|e| panic!("{e}"));
    let c = server.client();
    assert_eq!(c.call("GET", "/readyz", None).0, 200);
    server.terminate();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (status, body) = loop {
        let (status, body) = c.call("GET", "/readyz", None);
        if status != 200 || std::time::Instant::now() > deadline {
            break (status, body);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!((status, body["status"].as_str()), (503, Some("draining")), "{body}");
    // Still serving during the delay, and still draining after a request.
    assert_eq!(c.call("POST", "/v1/stores", Some(serde_json::json!({"id": "late"}))).0, 201);
    assert_eq!(c.call("GET", "/readyz", None).0, 503);
    // The delay is ten minutes: only the second signal can end it within the wait below.
    server.terminate();
    let exit = server.wait_exit(Duration::from_secs(60)).expect("a second signal ends the drain delay");
    assert!(exit.success(), "exit status {exit:?}\n{}", server.log());
    // What the service logged last, while it drained and closed, is in its log.
    let log = server.log();
    assert!(log.contains(r#"method="POST" route="/v1/stores" status=201"#), "{log}");
    assert!(log.contains("a second signal: closing now"), "{log}");
}

/// `serve` chooses the allocator's arena commit (`earshot::allocator`): by default it starts
/// itself again with `MIMALLOC_ARENA_EAGER_COMMIT=0` (no huge pages; an idle server is small),
/// `--huge-pages` keeps mimalloc's eager commit, and an operator's own setting is kept as given.
/// Where the kernel gives huge pages only on request (`madvise`, the usual default), the server
/// holds none by default and some with `--huge-pages`.
#[test]
fn serve_backs_its_memory_with_huge_pages_only_when_asked() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let probe = |extra: &[&str], env: &[(&str, &str)], name: &str| {
        let data = dir.path().join(name);
        let config = dir.path().join(format!("{name}.toml"));
        let flags: String = extra.iter().map(|f| format!("{f} = true\n")).collect();
        std::fs::write(&config, flags).unwrap_or_else(|e| panic!("{e}"));
        let server = Server::start_with_env(&data, Some(&config), env).unwrap_or_else(|e| panic!("{e}"));
        // Allocate a little through a few threads, as any served request does.
        for _ in 0..4 {
            let (status, _) = server.client().call("GET", "/readyz", None);
            assert_eq!(status, 200);
        }
        let pid = server.pid().unwrap_or_else(|| panic!("no pid"));
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let setting = environ
            .split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok())
            .find_map(|kv| kv.strip_prefix("MIMALLOC_ARENA_EAGER_COMMIT="))
            .map(str::to_string);
        let huge_kb: u64 = read(&format!("/proc/{pid}/smaps_rollup"))
            .lines()
            .find_map(|l| l.strip_prefix("AnonHugePages:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        (setting, huge_kb)
    };
    let madvise_only = read("/sys/kernel/mm/transparent_hugepage/enabled").contains("[madvise]");

    let (setting, huge_kb) = probe(&[], &[], "default");
    assert_eq!(setting.as_deref(), Some("0"), "by default the server starts again without eager commit");
    if madvise_only {
        assert_eq!(huge_kb, 0, "no huge pages by default");
    }
    let (setting, huge_kb) = probe(&["huge_pages"], &[], "huge");
    assert_eq!(setting, None, "--huge-pages keeps mimalloc's default");
    if madvise_only {
        assert!(huge_kb > 0, "--huge-pages: the arena is backed by huge pages");
    }
    let (setting, _) = probe(&[], &[("MIMALLOC_ARENA_EAGER_COMMIT", "1")], "operator");
    assert_eq!(setting.as_deref(), Some("1"), "the operator's setting is kept");
}
