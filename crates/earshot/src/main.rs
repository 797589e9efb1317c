//! The `earshot` binary: `serve` runs the HTTP service on the embedded sled store or on
//! PostgreSQL (`--datastore`); `verify` rebuilds every store's indexes from its datastore and checks them against the durable records;
//! `schema check|apply` validates or loads a relation schema; `demo fridges` runs the
//! four-fridges demonstration; `eval` reproduces the paper's retrieval evaluation (logic in
//! `earshot-eval`); `validate` runs scenario files of expected decisions (logic in
//! `earshot::validate`); `check`, `lookup`, `authorize`, `grant`, `revoke`, `tuples`, `watch`,
//! `export` and `import` are the command-line client (`earshot::client`); `mcp` serves the Model
//! Context Protocol (`earshot::mcp`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use earshot::client;
use earshot::config::{ServeArgs, ServeConfig, DEFAULT_LOG_FILTER, QUIET_LOG_FILTER};
use earshot_api::{AppState, Auth, TokenConfig};
use earshot_store::Config;

/// mimalloc rather than glibc malloc: after bursts of connections glibc keeps freed memory in
/// per-thread arenas (RSS grew burst after burst with 16 worker threads), mimalloc returns it
/// (TESTING.md, "Hostile clients").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Most threads tokio keeps for blocking work (writes waiting for their commit, imports,
/// exports, the watch stream's reads): the server's threads stay bounded however many clients
/// write at once (BENCHMARKS.md, "Many tenants": at most 64 threads).
const BLOCKING_THREADS: usize = 32;

#[derive(Parser)]
#[command(name = "earshot", version, about = "Audience-bound authorization for agent memory")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Rebuild every store from disk and check that its indexes agree with its records.
    Verify {
        /// Data directory of the embedded store.
        #[arg(long, env = "EARSHOT_DATA", default_value = "earshot-data")]
        data: PathBuf,
        /// A `postgres://` URL to verify instead of the data directory.
        #[arg(long, env = "EARSHOT_DATASTORE")]
        datastore: Option<String>,
    },
    /// Print the OpenAPI document.
    Openapi,
    /// Validate a relation schema file, or load it into a store of a running service.
    #[command(subcommand)]
    Schema(SchemaCmd),
    /// Demonstrations that run in process on a temporary store.
    #[command(subcommand)]
    Demo(DemoCmd),
    /// Reproduce the paper's retrieval evaluation on generated histories: six arms, forbidden
    /// items per context, entitled Recall@k, Recall@5 by distractor dose (table, CSV, SVG plot).
    Eval(EvalArgs),
    /// Run scenario files (setup and expected decisions, docs/validate.md) against a throwaway
    /// in-memory store; exit 1 if an expectation fails, 2 if a file cannot be read or parsed.
    /// Prints its summary only: logs at `warn` unless `RUST_LOG` asks for more.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check one item against a container on a running service (`POST …/check`).
    Check(client::CheckArgs),
    /// The items a container may see, on a running service (`POST …/lookup`).
    Lookup(client::LookupArgs),
    /// Decide a device read on a running service (`POST …/authorize`).
    Authorize(client::AuthorizeArgs),
    /// Grant an item to an exact audience on a running service.
    Grant(client::GrantArgs),
    /// Revoke a grant, a relation edge or a capability on a running service.
    Revoke(client::RevokeArgs),
    /// Read relationship tuples by filter on a running service (`GET …/relationships`).
    Tuples(client::TuplesArgs),
    /// Stream a store's changes from a running service as NDJSON (`GET …/watch`).
    Watch(client::WatchArgs),
    /// Export a store as NDJSON, through the service or offline (`--data`, `--datastore`).
    Export(client::ExportArgs),
    /// Import an export as a new store, through the service or offline.
    Import(client::ImportArgs),
    /// Serve the Model Context Protocol (tools remember, recall, explain, grant, revoke) over
    /// stdio or streamable HTTP, against a running service or an embedded store (docs/mcp.md).
    Mcp(earshot::mcp::McpArgs),
}

#[derive(Subcommand)]
enum SchemaCmd {
    /// Parse a schema file and print every problem with its line and column.
    Check { file: PathBuf },
    /// Load a schema file with `PUT /v1/stores/{store}/schema` on a running service.
    Apply {
        file: PathBuf,
        #[arg(long)]
        store: String,
        /// Base address of the service.
        #[arg(long, env = "EARSHOT_URL", default_value = "http://127.0.0.1:7878")]
        url: String,
        /// Bearer token with the `admin` scope (omit when authentication is off).
        #[arg(long, env = "EARSHOT_TOKEN")]
        token: Option<String>,
    },
}

#[derive(Subcommand)]
enum DemoCmd {
    /// The SharedOS four-fridges run: a deterministic guest with and without Earshot's gate.
    Fridges {
        /// Seed of the synthetic facts.
        #[arg(long, default_value = "earshot")]
        seed: String,
    },
}

#[derive(clap::Args)]
struct EvalArgs {
    /// Seed of the generator: the same seed gives the same report, byte for byte.
    #[arg(long, default_value_t = 40)]
    seed: u64,
    /// Number of generated histories.
    #[arg(long, default_value_t = 10_000)]
    histories: usize,
    /// Directory for `report.txt`, `report.csv` and `recall_by_dose.svg` (created if missing).
    #[arg(long, default_value = "eval-out")]
    out: PathBuf,
    /// Worker threads answering questions.
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

/// Every error ends the process with one line on stderr and exit code 1: the error and its
/// causes on that line (`{:#}`), never a backtrace, so that an operator sees what failed (for
/// a damaged data directory: which one, and what to do) rather than a panic report.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("earshot: {e:#}");
            match e.downcast_ref::<earshot::validate::Summary>() {
                Some(summary) => std::process::ExitCode::from(summary.exit_code()),
                None => std::process::ExitCode::FAILURE,
            }
        }
    }
}

fn run() -> anyhow::Result<()> {
    // The matches tell a flag's default from a value that was given, so that the configuration
    // file of `serve` can override defaults but not flags or environment variables.
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let command = match cli.command {
        Cmd::Serve(args) => {
            let serve_matches = matches.subcommand_matches("serve").unwrap_or(&matches);
            let config = ServeConfig::resolve(args, serve_matches)?;
            let _telemetry = earshot::telemetry::init(config.log_format, &config.log_filter)?;
            return serve(config);
        }
        other => other,
    };
    // Other commands log as text on stderr, filtered by RUST_LOG. `validate` runs its requests
    // through an in-process service: their request lines are noise next to its summary, so it
    // logs warnings only unless RUST_LOG asks for more.
    let filter = std::env::var("RUST_LOG").ok().filter(|f| !f.trim().is_empty());
    let default = match command {
        // Under stdio, stdout is the protocol channel: logs go to stderr (always), warnings only.
        Cmd::Validate { .. } | Cmd::Mcp(_) => QUIET_LOG_FILTER,
        _ => DEFAULT_LOG_FILTER,
    };
    let _telemetry = earshot::telemetry::init(earshot::config::LogFormat::Text, filter.as_deref().unwrap_or(default))?;
    match command {
        // Served above.
        Cmd::Serve(_) => Ok(()),
        Cmd::Verify { data, datastore } => verify(&data, datastore.as_deref()),
        Cmd::Openapi => {
            println!("{}", earshot_api::OPENAPI_JSON);
            Ok(())
        }
        Cmd::Eval(args) => eval(&args),
        Cmd::Validate { files } => {
            let summary = earshot::validate::run_files(&files, &mut std::io::stdout().lock())?;
            if summary.exit_code() == 0 {
                Ok(())
            } else {
                Err(summary.into())
            }
        }
        Cmd::Check(a) => client::check(&a),
        Cmd::Lookup(a) => client::lookup(&a),
        Cmd::Authorize(a) => client::authorize(&a),
        Cmd::Grant(a) => client::grant(&a),
        Cmd::Revoke(a) => client::revoke(&a),
        Cmd::Tuples(a) => client::tuples(&a),
        Cmd::Watch(a) => client::watch(&a),
        Cmd::Export(a) => client::export(&a),
        Cmd::Import(a) => client::import(&a),
        Cmd::Mcp(a) => earshot::mcp::run(&a),
        Cmd::Schema(SchemaCmd::Check { file }) => schema_check(&file),
        Cmd::Schema(SchemaCmd::Apply { file, store, url, token }) => {
            schema_apply(&file, &store, &url, token.as_deref())
        }
        Cmd::Demo(DemoCmd::Fridges { seed }) => {
            let report = earshot::fridges::run(&seed)?;
            print!("{}", report.text);
            if report.gated.forbidden_returned != 0 || report.gated.permitted_returned != report.gated.permitted_total {
                bail!("the gated arm leaked a forbidden fact or denied a permitted one");
            }
            Ok(())
        }
    }
}

fn schema_check(file: &std::path::Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    match earshot_core::schema::parse(&text) {
        Ok(schema) => {
            for r in schema.relations.values() {
                let opens: Vec<String> =
                    r.opens.iter().map(|o| format!("{} [{}]", o.pattern, o.actions.join(", "))).collect();
                println!("relation {}: {}", r.name, opens.join("; "));
            }
            Ok(())
        }
        Err(problems) => {
            for p in &problems {
                eprintln!("{}:{p}", file.display());
            }
            bail!("{} problem(s) in {}", problems.len(), file.display())
        }
    }
}

fn schema_apply(file: &std::path::Path, store: &str, url: &str, token: Option<&str>) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let endpoint = format!("{}/v1/stores/{store}/schema", url.trim_end_matches('/'));
    let mut req = ureq::put(&endpoint);
    if let Some(t) = token {
        req = req.set("authorization", &format!("Bearer {t}"));
    }
    let parse = |resp: ureq::Response| -> serde_json::Value {
        resp.into_string().ok().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
    };
    let payload = serde_json::json!({ "schema": text }).to_string();
    match req.set("content-type", "application/json").send_string(&payload) {
        Ok(resp) => {
            let body = parse(resp);
            println!("schema loaded into `{store}` at revision {}", body["revision"]);
            Ok(())
        }
        Err(ureq::Error::Status(status, resp)) => {
            let body = parse(resp);
            if let Some(problems) = body.pointer("/error/details/problems").and_then(|p| p.as_array()) {
                for p in problems {
                    eprintln!(
                        "{}:{}:{}: {}: {}",
                        file.display(),
                        p["line"],
                        p["column"],
                        p["code"].as_str().unwrap_or(""),
                        p["message"].as_str().unwrap_or("")
                    );
                }
            }
            bail!(
                "the service refused the schema: {status} {}",
                body.pointer("/error/message").and_then(|m| m.as_str()).unwrap_or("")
            )
        }
        Err(e) => bail!("cannot reach {endpoint}: {e}"),
    }
}

fn eval(args: &EvalArgs) -> anyhow::Result<()> {
    if args.histories == 0 {
        bail!("--histories must be at least 1");
    }
    let cfg = earshot_eval::EvalConfig { seed: args.seed, histories: args.histories, threads: args.threads };
    let report = earshot_eval::run(&cfg).context("running the evaluation")?;
    earshot_eval::write_outputs(&report, &args.out)
        .with_context(|| format!("writing the report to {}", args.out.display()))?;
    print!("{}", report.table());
    if let Some((generated, indexed, total)) = report.timing {
        println!(
            "time: generated and imported {:.1} s, indexed {:.1} s, total {:.1} s",
            generated.as_secs_f64(),
            indexed.as_secs_f64(),
            total.as_secs_f64()
        );
    }
    println!("wrote {}/report.txt, report.csv, recall_by_dose.svg", args.out.display());
    Ok(())
}

/// The secrets of `earshot.example.toml` are published (`change-me-…`): a configuration still
/// carrying one (a copied example never edited) is as open as no tokens at all, so, like no
/// tokens, it may listen on loopback only (with a warning). Names the entry, never the secret.
fn refuse_published_tokens(tokens: &[TokenConfig], bind: SocketAddr) -> anyhow::Result<()> {
    if let Some(t) = tokens.iter().find(|t| t.token.starts_with("change-me")) {
        if !bind.ip().is_loopback() {
            bail!(
                "token `{}` still has the example's published secret (`change-me…`); refusing to listen on \
                 non-loopback {bind}: replace it with your own secret",
                t.name
            );
        }
        tracing::warn!(token = %t.name, "a token still has the example's published secret; listening on loopback only");
    }
    Ok(())
}

fn serve(cfg: ServeConfig) -> anyhow::Result<()> {
    let ServeConfig { bind, data, datastore, store: config, limits, drain_delay, tokens, .. } = cfg;
    let open_access = tokens.is_empty();
    if open_access && !bind.ip().is_loopback() {
        bail!("no tokens are configured, so authentication is off; refusing to listen on non-loopback {bind}");
    }
    refuse_published_tokens(&tokens, bind)?;
    let auth = Auth::from_config(tokens).context("checking the `[[tokens]]` of the configuration")?;
    if let Some(nofile) = earshot_api::server::nofile_limit() {
        if limits.max_connections as u64 + earshot_api::server::FD_RESERVE > nofile {
            tracing::warn!(
                max_connections = limits.max_connections,
                nofile,
                "max_connections leaves few descriptors for the process's own files"
            );
        }
    }
    let started = std::time::Instant::now();
    let earshot = Arc::new(earshot::datastore::open(datastore.as_deref(), &data, config)?);
    tracing::info!(stores = earshot.store_ids().len(), elapsed_ms = started.elapsed().as_millis() as u64, data = %data.display(), postgres = datastore.is_some(), "rebuilt indexes");
    // Warned once the stores are open, so that a start that fails prints only its one error line.
    if open_access {
        tracing::warn!("no tokens configured: authentication is OFF; listening on loopback only");
    }
    earshot.warm_search();
    // Many stores stay cheap: idle ones, and the least recently used above the cap, are evicted
    // from memory once a second (they load again on their next use).
    let housekeeper = Arc::downgrade(&earshot);
    std::thread::Builder::new().name("earshot-housekeeper".into()).spawn(move || {
        while let Some(earshot) = housekeeper.upgrade() {
            earshot.housekeep();
            drop(earshot);
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    })?;
    let state = AppState::new(earshot.clone(), auth);
    let drain = state.clone();
    // Writes, imports and exports wait for their store on tokio's blocking threads; by default
    // tokio grows that pool to 512 under concurrent writes (89 threads after 16 importers ran).
    // Past this cap a request waits its turn: the wait is for a commit, which the writer pool
    // (`--writer-threads`) bounds anyway, so more threads only held more stacks.
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().max_blocking_threads(BLOCKING_THREADS).build()?;
    // Registered before the listener opens: a signal that arrives while the server starts is a
    // shutdown, not the default kill.
    let mut signals = {
        let _runtime = runtime.enter();
        ShutdownSignals::register()?
    };
    let stop = async move {
        signals.next().await;
        tracing::info!("shutting down");
        // Unready first, so the load balancer stops routing here; then stop accepting.
        drain.start_draining();
        if !drain_delay.is_zero() {
            tracing::info!(drain_delay_ms = drain_delay.as_millis() as u64, "draining: /readyz answers 503");
            tokio::select! {
                () = tokio::time::sleep(drain_delay) => {}
                () = signals.next() => tracing::info!("a second signal: closing now"),
            }
        }
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(bind).await.with_context(|| format!("binding {bind}"))?;
        tracing::info!(
            addr = %listener.local_addr()?,
            max_connections = limits.max_connections,
            header_read_timeout_ms = limits.header_read_timeout.as_millis() as u64,
            request_timeout_ms = limits.request_timeout.as_millis() as u64,
            stream_idle_timeout_ms = limits.stream_idle_timeout.as_millis() as u64,
            "earshot listening"
        );
        earshot_api::server::serve(listener, earshot_api::router(state), limits, stop).await?;
        anyhow::Ok(())
    })?;
    earshot.shutdown();
    Ok(())
}

/// Ctrl-c and, on Unix, SIGTERM (what `docker stop` and systemd send), registered when made so
/// that none is missed between start-up and the first wait.
struct ShutdownSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    /// Installs the handlers; must run inside a tokio runtime.
    fn register() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let interrupt = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
            let terminate = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
            Ok(ShutdownSignals { interrupt, terminate })
        }
        #[cfg(not(unix))]
        Ok(ShutdownSignals {})
    }

    /// Completes on the next signal received after the previous call returned (or after
    /// `register`, for the first).
    async fn next(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn verify(data: &std::path::Path, datastore: Option<&str>) -> anyhow::Result<()> {
    if datastore.is_none() && !data.exists() {
        bail!("{} does not exist", data.display());
    }
    let earshot = earshot::datastore::open(datastore, data, Config::default())?;
    let mut failed = false;
    for id in earshot.store_ids() {
        let h = earshot.store(&id)?;
        // Build the search projection too, so that its agreement is checked as well.
        h.search_ready(&h.latest(), std::time::Duration::from_secs(3600))?;
        match h.verify() {
            Ok(report) => println!("{id}: ok ({report})"),
            Err(e) => {
                failed = true;
                println!("{id}: DISAGREES: {e}");
            }
        }
    }
    earshot.shutdown();
    if failed {
        bail!("some stores disagree with their records");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str, secret: &str) -> TokenConfig {
        TokenConfig { name: name.into(), token: secret.into(), scope: earshot_api::Scope::Admin, stores: None }
    }

    #[test]
    fn published_example_tokens_stay_on_loopback() {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 7878));
        let any = SocketAddr::from(([0, 0, 0, 0], 7878));
        let published = [token("ops", "change-me-admin-token")];
        assert!(refuse_published_tokens(&published, loopback).is_ok());
        let err = refuse_published_tokens(&published, any).unwrap_err().to_string();
        assert!(err.contains("`ops`") && !err.contains("change-me-admin-token"), "{err}");
        assert!(refuse_published_tokens(&[token("ops", "a-real-secret-0123456789")], any).is_ok());
    }
}
