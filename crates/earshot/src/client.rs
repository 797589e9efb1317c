//! The command-line client for scripts: `earshot check|lookup|authorize|grant|revoke|tuples|
//! watch` talk to a running service (`--server`, `EARSHOT_SERVER`; `--token`, `EARSHOT_TOKEN`),
//! and `earshot export|import` either do the same or work on the datastore directly, offline
//! (`--data` or `--datastore`).
//!
//! Answers are printed as JSON on stdout (indented when stdout is a terminal, one line
//! otherwise). An error answer prints one line on stderr, `earshot: <status> <code>: <message>`,
//! and exits 1; a service that cannot be reached exits 1 too. A denial is an answer (exit 0).

use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{json, Map, Value};

/// Where the service is, and the token to send.
#[derive(clap::Args, Debug, Clone)]
pub struct Conn {
    /// Base address of the service.
    #[arg(long, env = "EARSHOT_SERVER", default_value = "http://127.0.0.1:7878")]
    pub server: String,
    /// Bearer token (omit when authentication is off).
    #[arg(long, env = "EARSHOT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// The container of a check or lookup: an owner and viewers, or the whole JSON.
#[derive(clap::Args, Debug, Clone)]
pub struct ContainerArgs {
    /// The container's owner.
    #[arg(long, required_unless_present = "container")]
    pub owner: Option<String>,
    /// A viewer participant (repeat for several).
    #[arg(long = "viewer")]
    pub viewers: Vec<String>,
    /// A viewer identity, `transport:identifier` (repeat for several).
    #[arg(long = "identity")]
    pub identities: Vec<String>,
    /// The whole container as JSON (`{"owner", "viewers": {...}}`), instead of the flags above.
    #[arg(long, conflicts_with_all = ["owner", "viewers", "identities"])]
    pub container: Option<String>,
    /// Read at least at this consistency token (e.g. the token of your last write).
    #[arg(long)]
    pub at_least: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    /// The item to check.
    #[arg(long)]
    pub item: String,
    #[command(flatten)]
    pub container: ContainerArgs,
}

#[derive(clap::Args, Debug)]
pub struct LookupArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    #[command(flatten)]
    pub container: ContainerArgs,
    /// Most items per page.
    #[arg(long)]
    pub limit: Option<u64>,
    /// The cursor of the previous page.
    #[arg(long)]
    pub cursor: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct AuthorizeArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    #[arg(long)]
    pub principal: String,
    #[arg(long)]
    pub device: String,
    /// The slice path, e.g. `medication/blood-pressure`.
    #[arg(long)]
    pub path: String,
    #[arg(long, default_value = "read")]
    pub action: String,
    /// The request's context as a JSON object (for conditions).
    #[arg(long)]
    pub context: Option<String>,
    #[arg(long)]
    pub at_least: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct GrantArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    #[arg(long)]
    pub item: String,
    /// A member of the granted audience (repeat for several; the owner is always one).
    #[arg(long = "member", required = true)]
    pub members: Vec<String>,
    #[arg(long)]
    pub reason: Option<String>,
    /// RFC 3339 instant after which the grant no longer counts.
    #[arg(long)]
    pub expires_at: Option<String>,
    /// Sent as `Idempotency-Key`, so that a retried command grants once.
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["grant", "relation", "capability"])))]
pub struct RevokeArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    /// A grant of an item.
    #[arg(long)]
    pub grant: Option<String>,
    /// A relation edge (with `--by`, its grantor).
    #[arg(long, requires = "by")]
    pub relation: Option<String>,
    /// A capability (with `--by`: the device's owner or the holder of an ancestor).
    #[arg(long, requires = "by")]
    pub capability: Option<String>,
    /// Who revokes a relation or capability.
    #[arg(long)]
    pub by: Option<String>,
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct TuplesArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    #[arg(long)]
    pub resource_type: Option<String>,
    #[arg(long)]
    pub resource_id: Option<String>,
    #[arg(long)]
    pub relation: Option<String>,
    #[arg(long)]
    pub subject_type: Option<String>,
    #[arg(long)]
    pub subject_id: Option<String>,
    #[arg(long)]
    pub limit: Option<u64>,
    #[arg(long)]
    pub cursor: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub conn: Conn,
    #[arg(long)]
    pub store: String,
    /// Continue after this token (default: from the newest revision on).
    #[arg(long)]
    pub after: Option<String>,
}

/// Where an export or import works: the service, or the datastore directly.
#[derive(clap::Args, Debug)]
pub struct TransferPlace {
    #[command(flatten)]
    pub conn: Conn,
    /// Work offline on this sled data directory (the service must be stopped: sled is
    /// single-process) instead of through the service.
    #[arg(long, conflicts_with = "datastore")]
    pub data: Option<PathBuf>,
    /// Work offline on this `postgres://` datastore instead of through the service.
    #[arg(long)]
    pub datastore: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub place: TransferPlace,
    #[arg(long)]
    pub store: String,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    #[command(flatten)]
    pub place: TransferPlace,
    /// The new store's id (it must not exist).
    #[arg(long)]
    pub store: String,
    /// The export to import (`-` for stdin).
    pub file: PathBuf,
}

/// Per-request read timeout for ordinary calls; streams (watch, export, import) have none.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

fn agent(read_timeout: Option<Duration>) -> ureq::Agent {
    let mut b = ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(10));
    if let Some(t) = read_timeout {
        b = b.timeout_read(t).timeout_write(t);
    }
    b.build()
}

/// A path segment, percent-encoded (identifiers need none, but a typo should not change the route).
fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn url(conn: &Conn, path: &str) -> String {
    format!("{}{path}", conn.server.trim_end_matches('/'))
}

fn request(conn: &Conn, method: &str, path: &str, timeout: Option<Duration>) -> ureq::Request {
    let mut req = agent(timeout).request(method, &url(conn, path));
    if let Some(t) = &conn.token {
        req = req.set("authorization", &format!("Bearer {t}"));
    }
    req
}

/// The answer of a call: the body of a success, or an error naming status, code and message.
fn answer(url: &str, result: Result<ureq::Response, ureq::Error>) -> anyhow::Result<ureq::Response> {
    match result {
        Ok(r) => Ok(r),
        Err(ureq::Error::Status(status, resp)) => {
            let body: Value = resp.into_string().ok().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
            let code = body.pointer("/error/code").and_then(Value::as_str).unwrap_or("error");
            let message = body.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
            bail!("{status} {code}: {message}")
        }
        Err(e) => bail!("cannot reach {url}: {e}"),
    }
}

fn json_of(resp: ureq::Response) -> anyhow::Result<Value> {
    let text = resp.into_string().context("reading the answer")?;
    serde_json::from_str(&text).context("the answer is not JSON")
}

/// Prints a JSON answer: indented on a terminal, one line otherwise (for `jq` and pipes).
fn print(v: &Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let text = if std::io::stdout().is_terminal() { serde_json::to_string_pretty(v)? } else { v.to_string() };
    writeln!(out, "{text}")?;
    Ok(())
}

fn call(conn: &Conn, method: &str, path: &str, body: Option<&Value>, key: Option<&str>) -> anyhow::Result<Value> {
    let mut req = request(conn, method, path, Some(CALL_TIMEOUT));
    if let Some(k) = key {
        req = req.set("idempotency-key", k);
    }
    let u = url(conn, path);
    let resp = match body {
        Some(b) => answer(&u, req.set("content-type", "application/json").send_string(&b.to_string()))?,
        None => answer(&u, req.call())?,
    };
    json_of(resp)
}

fn parse_json(flag: &str, text: &str) -> anyhow::Result<Value> {
    serde_json::from_str(text).with_context(|| format!("--{flag} is not valid JSON"))
}

fn container(c: &ContainerArgs) -> anyhow::Result<Value> {
    if let Some(text) = &c.container {
        return parse_json("container", text);
    }
    let mut viewers = Map::new();
    if !c.viewers.is_empty() {
        viewers.insert("participants".into(), json!(c.viewers));
    }
    if !c.identities.is_empty() {
        let mut ids = Vec::new();
        for i in &c.identities {
            let Some((transport, identifier)) = i.split_once(':') else {
                bail!("--identity `{i}` is not `transport:identifier`");
            };
            ids.push(json!({"transport": transport, "identifier": identifier}));
        }
        viewers.insert("identities".into(), Value::Array(ids));
    }
    let mut m = Map::new();
    m.insert("owner".into(), json!(c.owner));
    if !viewers.is_empty() {
        m.insert("viewers".into(), Value::Object(viewers));
    }
    Ok(Value::Object(m))
}

fn consistency(body: &mut Value, at_least: Option<&String>) {
    if let (Some(t), Some(m)) = (at_least, body.as_object_mut()) {
        m.insert("consistency".into(), json!({"at_least": t}));
    }
}

pub fn check(a: &CheckArgs) -> anyhow::Result<()> {
    let mut body = json!({"item": a.item, "container": container(&a.container)?});
    consistency(&mut body, a.container.at_least.as_ref());
    print(&call(&a.conn, "POST", &format!("/v1/stores/{}/check", seg(&a.store)), Some(&body), None)?)
}

pub fn lookup(a: &LookupArgs) -> anyhow::Result<()> {
    let mut body = json!({"container": container(&a.container)?});
    if let Some(m) = body.as_object_mut() {
        if let Some(l) = a.limit {
            m.insert("limit".into(), json!(l));
        }
        if let Some(c) = &a.cursor {
            m.insert("cursor".into(), json!(c));
        }
    }
    consistency(&mut body, a.container.at_least.as_ref());
    print(&call(&a.conn, "POST", &format!("/v1/stores/{}/lookup", seg(&a.store)), Some(&body), None)?)
}

pub fn authorize(a: &AuthorizeArgs) -> anyhow::Result<()> {
    let mut body = json!({"principal": a.principal, "device": a.device, "path": a.path, "action": a.action});
    if let (Some(text), Some(m)) = (&a.context, body.as_object_mut()) {
        m.insert("context".into(), parse_json("context", text)?);
    }
    consistency(&mut body, a.at_least.as_ref());
    print(&call(&a.conn, "POST", &format!("/v1/stores/{}/authorize", seg(&a.store)), Some(&body), None)?)
}

pub fn grant(a: &GrantArgs) -> anyhow::Result<()> {
    let mut body = json!({"members": a.members});
    if let Some(m) = body.as_object_mut() {
        if let Some(r) = &a.reason {
            m.insert("reason".into(), json!(r));
        }
        if let Some(e) = &a.expires_at {
            m.insert("expires_at".into(), json!(e));
        }
    }
    let path = format!("/v1/stores/{}/items/{}/grants", seg(&a.store), seg(&a.item));
    print(&call(&a.conn, "POST", &path, Some(&body), a.idempotency_key.as_deref())?)
}

pub fn revoke(a: &RevokeArgs) -> anyhow::Result<()> {
    let store = seg(&a.store);
    let by = a.by.as_deref().map(|b| format!("?by={}", seg(b))).unwrap_or_default();
    let path = match (&a.grant, &a.relation, &a.capability) {
        (Some(g), None, None) => format!("/v1/stores/{store}/grants/{}", seg(g)),
        (None, Some(r), None) => format!("/v1/stores/{store}/relations/{}{by}", seg(r)),
        (None, None, Some(c)) => format!("/v1/stores/{store}/capabilities/{}{by}", seg(c)),
        _ => bail!("name exactly one of --grant, --relation, --capability"),
    };
    print(&call(&a.conn, "DELETE", &path, None, a.idempotency_key.as_deref())?)
}

pub fn tuples(a: &TuplesArgs) -> anyhow::Result<()> {
    let path = format!("/v1/stores/{}/relationships", seg(&a.store));
    let mut req = request(&a.conn, "GET", &path, Some(CALL_TIMEOUT));
    let limit = a.limit.map(|l| l.to_string());
    let params = [
        ("resource_type", a.resource_type.as_deref()),
        ("resource_id", a.resource_id.as_deref()),
        ("relation", a.relation.as_deref()),
        ("subject_type", a.subject_type.as_deref()),
        ("subject_id", a.subject_id.as_deref()),
        ("limit", limit.as_deref()),
        ("cursor", a.cursor.as_deref()),
    ];
    for (k, v) in params {
        if let Some(v) = v {
            req = req.query(k, v);
        }
    }
    print(&json_of(answer(&url(&a.conn, &path), req.call())?)?)
}

/// Copies a streamed answer to stdout line by line, flushing each (so a pipe sees each event
/// as it comes). A line that is an error (`{"error": …}`) ends the command with that error.
fn stream_lines(resp: ureq::Response, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut reader = BufReader::new(resp.into_reader());
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).context("reading the stream")? == 0 {
            return Ok(());
        }
        if line.starts_with("{\"error\"") {
            let v: Value = serde_json::from_str(&line).unwrap_or_default();
            let code = v.pointer("/error/code").and_then(Value::as_str).unwrap_or("error");
            let message = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
            bail!("the stream failed: {code}: {message}");
        }
        out.write_all(line.as_bytes())?;
        out.flush()?;
    }
}

pub fn watch(a: &WatchArgs) -> anyhow::Result<()> {
    let path = format!("/v1/stores/{}/watch", seg(&a.store));
    let mut req = request(&a.conn, "GET", &path, None);
    if let Some(t) = &a.after {
        req = req.query("after", t);
    }
    let resp = answer(&url(&a.conn, &path), req.call())?;
    stream_lines(resp, &mut std::io::stdout().lock())
}

/// The datastore of an offline export or import.
fn offline(place: &TransferPlace, create: bool) -> anyhow::Result<Option<Arc<dyn earshot_store::Backend>>> {
    if let Some(url) = &place.datastore {
        let options = crate::datastore::pg_options(url)?;
        let backend = earshot_postgres::PgBackend::open(options)
            .with_context(|| format!("connecting to the datastore {}", earshot_postgres::redacted(url)))?;
        return Ok(Some(Arc::new(backend)));
    }
    let Some(dir) = &place.data else { return Ok(None) };
    if !create && !dir.exists() {
        bail!("{} does not exist", dir.display());
    }
    let backend = earshot_store::SledBackend::open(dir).with_context(|| {
        format!("opening {} (is the service running on it? stop it, or export through --server)", dir.display())
    })?;
    Ok(Some(Arc::new(backend)))
}

fn output(out: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    Ok(match out {
        Some(p) => {
            Box::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?) as Box<dyn Write>
        }
        None => Box::new(std::io::stdout().lock()),
    })
}

pub fn export(a: &ExportArgs) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, output(a.out.as_deref())?);
    if let Some(backend) = offline(&a.place, false)? {
        let n = earshot_store::export::Export::open(backend, &a.store)?.write_to(&mut out)?;
        tracing::info!(store = %a.store, records = n, "exported");
        return Ok(());
    }
    let path = format!("/v1/stores/{}/export", seg(&a.store));
    let resp = answer(&url(&a.place.conn, &path), request(&a.place.conn, "GET", &path, None).call())?;
    stream_lines(resp, &mut out)?;
    out.flush()?;
    Ok(())
}

pub fn import(a: &ImportArgs) -> anyhow::Result<()> {
    let input: Box<dyn Read + Send> = if a.file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(&a.file).with_context(|| format!("opening {}", a.file.display()))?)
    };
    if let Some(backend) = offline(&a.place, true)? {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default();
        let mut reader = BufReader::with_capacity(1 << 20, input);
        let (imported, _) = earshot_store::export::import(&*backend, &a.store, &mut reader, now)?;
        return print(&serde_json::to_value(imported)?);
    }
    let path = format!("/v1/stores/{}/import", seg(&a.store));
    let req = request(&a.place.conn, "POST", &path, None).set("content-type", "application/x-ndjson");
    // Streamed (chunked), never read whole into memory.
    print(&json_of(answer(&url(&a.place.conn, &path), req.send(input))?)?)
}
