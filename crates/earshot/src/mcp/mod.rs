//! `earshot mcp`: the Model Context Protocol server (official Rust SDK `rmcp`) over stdio or
//! streamable HTTP (`--listen`), against a running Earshot (`--url`, `--token`) or an embedded
//! store (`--data-dir`: the API's router in process over local sled). `tools` owns the tools,
//! their schemas and error mapping; `backend` the two ways of calling the API. Under stdio,
//! stdout is the protocol channel: every log line goes to stderr (`earshot::telemetry`).

pub mod backend;
pub mod tools;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

pub use backend::{ApiError, Backend, Embedded, Remote};
pub use tools::EarshotMcp;

/// The scope of the embedded mode's own token.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbeddedScope {
    /// Every tool (remember, grant and revoke write).
    Admin,
    /// Reads only: recall and explain; the writing tools are refused with `forbidden`.
    Reader,
}

#[derive(clap::Args, Debug, Clone)]
pub struct McpArgs {
    /// The store the tools work on.
    #[arg(long, env = "EARSHOT_STORE")]
    pub store: String,
    /// Base address of a running Earshot to call (or `--data-dir`). `--server` is an alias,
    /// as in the command-line client.
    #[arg(long, alias = "server", env = "EARSHOT_URL", required_unless_present = "data_dir")]
    pub url: Option<String>,
    /// Bearer token for `--url`: the tools can do exactly what it may, never more.
    #[arg(long, env = "EARSHOT_TOKEN", hide_env_values = true, conflicts_with = "data_dir")]
    pub token: Option<String>,
    /// Embedded mode: open this sled data directory (created if missing) and call the API's
    /// router in process; no service may be running on it.
    #[arg(long, conflicts_with = "url")]
    pub data_dir: Option<PathBuf>,
    /// Embedded mode: the scope of the tools' token (limited to `--store`).
    #[arg(long, value_enum, default_value = "admin", requires = "data_dir")]
    pub scope: EmbeddedScope,
    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio. Loopback addresses only:
    /// the endpoint has no authentication of its own and acts with the token's authority.
    #[arg(long)]
    pub listen: Option<SocketAddr>,
}

/// Runs the server until stdin closes (stdio) or a signal arrives (HTTP).
pub fn run(args: &McpArgs) -> anyhow::Result<()> {
    if let Some(addr) = args.listen {
        if !addr.ip().is_loopback() {
            bail!("--listen {addr}: the MCP endpoint has no authentication of its own; listen on loopback only");
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let backend = {
        let _runtime = runtime.enter();
        backend_of(args)?
    };
    let server = EarshotMcp::new(backend.clone(), &args.store);
    let result = runtime.block_on(async {
        match args.listen {
            Some(addr) => serve_http(server, addr, shutdown_signal()).await,
            None => serve_stdio(server).await,
        }
    });
    backend.shutdown();
    result
}

fn backend_of(args: &McpArgs) -> anyhow::Result<Backend> {
    match (&args.url, &args.data_dir) {
        (_, Some(dir)) => {
            let scope = match args.scope {
                EmbeddedScope::Admin => earshot_api::Scope::Admin,
                EmbeddedScope::Reader => earshot_api::Scope::Reader,
            };
            Ok(Backend::Embedded(Embedded::open(dir, &args.store, scope)?))
        }
        (Some(url), None) => Ok(Backend::Remote(Remote::new(url, args.token.clone()))),
        (None, None) => bail!("give --url (a running Earshot) or --data-dir (an embedded store)"),
    }
}

/// The protocol over this process's stdin and stdout, until the client closes stdin.
pub async fn serve_stdio(server: EarshotMcp) -> anyhow::Result<()> {
    let running = server.serve(rmcp::transport::stdio()).await.context("starting the MCP session on stdio")?;
    running.waiting().await.context("the MCP session on stdio")?;
    Ok(())
}

/// Streamable HTTP at `/mcp` on `addr` until `stop` completes; the bound address is printed
/// on stderr (`--listen 127.0.0.1:0` picks a free port).
pub async fn serve_http(
    server: EarshotMcp,
    addr: SocketAddr,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
    let bound = listener.local_addr()?;
    serve_http_on(server, listener, stop, move || eprintln!("earshot mcp: streamable HTTP at http://{bound}/mcp")).await
}

/// Streamable HTTP at `/mcp` on an open listener (the tests bind their own).
pub async fn serve_http_on(
    server: EarshotMcp,
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(),
) -> anyhow::Result<()> {
    let cancel = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(cancel.clone());
    let service: StreamableHttpService<EarshotMcp, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    ready();
    let closing = cancel.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stop.await;
            closing.cancel();
        })
        .await
        .context("serving streamable HTTP")?;
    Ok(())
}

/// Ctrl-c, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests;
