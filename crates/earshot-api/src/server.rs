//! Serving the router on a TCP listener: the accept loop, the connection limit, the header-read
//! (also keep-alive idle) and whole-request timeouts, and graceful shutdown.
//!
//! `axum::serve` has none of these limits, so a client that connects and stays silent, or sends
//! its headers a byte at a time, holds a task and a file descriptor for ever, and enough of them
//! make `accept` fail with `EMFILE` for everyone. Here:
//!
//! - every connection holds a permit of a semaphore sized `max_connections`; with none left, the
//!   loop asks the oldest connection that has had no request in flight for at least a grace
//!   period (silent, slow-header and idle keep-alive connections alike) to close, and waits for
//!   its permit before serving the newcomer, so an honest client is served promptly while the
//!   limit holds. Connections younger than the grace are not shed, so an honest burst larger
//!   than the limit waits in the listen backlog instead of being cut off before it could speak;
//! - hyper's HTTP/1 `header_read_timeout` closes a connection whose request head is not complete in
//!   time. hyper starts that timer whenever the connection waits for a request head (on a new
//!   connection and again after each response on a keep-alive one), so the same setting is the
//!   keep-alive idle timeout;
//! - a middleware bounds each request's handling (body read included) and answers
//!   `503 request_timeout` in the service's error shape; the two streaming routes (export and
//!   import, [`STREAMING_ROUTES`]) are bounded by progress instead: each must move a chunk
//!   within `stream_idle_timeout` (the import answers `408 body_timeout` when its body stalls,
//!   the export ends when its client stops reading), however long the whole takes;
//! - `accept` errors other than a peer's reset back off briefly instead of spinning.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::error::ApiError;
use crate::inline_wake::InlineSelfWakes;

/// Descriptors kept for the process's own files (sled segments, logs, blocking threads' work)
/// when the connection limit is derived from `RLIMIT_NOFILE`.
pub const FD_RESERVE: u64 = 128;

/// Largest default connection limit: beyond it, per-connection buffers (tens of KiB each) would
/// dominate the process's memory; raise it explicitly if a deployment needs more.
pub const DEFAULT_MAX_CONNECTIONS_CAP: usize = 4096;

/// Largest accepted `max_connections` (the semaphore counts in `u32`).
pub const MAX_CONNECTIONS_LIMIT: usize = 1 << 20;

/// How long the accept loop pauses after an error that is not one connection's failure (for
/// example `EMFILE`): long enough not to spin, short enough to pick up as soon as a slot frees.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(250);

/// Longest a connection may wait for a client before it can be shed under the connection limit
/// (half the header timeout when that is shorter).
const SHED_GRACE: Duration = Duration::from_millis(500);

/// How often a full accept loop looks again for a connection to shed when none could be.
const SHED_POLL: Duration = Duration::from_millis(200);

/// The limits of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most time from the moment a connection waits for a request head (new connection, or after
    /// a response on a keep-alive one) until that head is complete.
    pub header_read_timeout: Duration,
    /// Most time one request may take, from its head until its response is ready (but for
    /// the [`STREAMING_ROUTES`]).
    pub request_timeout: Duration,
    /// Most time a streaming route waits for its next chunk: of the body (import) or for the
    /// client to take the response's (export).
    pub stream_idle_timeout: Duration,
}

/// Routes bounded by progress (`stream_idle_timeout`) rather than by `request_timeout`: a
/// store's export and import, whose size has no useful time bound.
pub const STREAMING_ROUTES: [&str; 2] = ["/v1/stores/{store}/export", "/v1/stores/{store}/import"];

/// The idle bound a streaming route's handler applies, put in its request's extensions by the
/// timeout layer (handlers called without that layer, as in tests, use the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamIdleTimeout(pub Duration);

impl Default for StreamIdleTimeout {
    fn default() -> Self {
        StreamIdleTimeout(ServerLimits::DEFAULT_STREAM_IDLE_TIMEOUT)
    }
}

impl Default for ServerLimits {
    /// Limits for this process: the connection limit derived from its descriptor limit.
    fn default() -> Self {
        ServerLimits {
            max_connections: default_max_connections(nofile_limit()),
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            stream_idle_timeout: Self::DEFAULT_STREAM_IDLE_TIMEOUT,
        }
    }
}

/// The soft `RLIMIT_NOFILE` of this process, if it has a finite one.
pub fn nofile_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// The connection limit that leaves [`FD_RESERVE`] descriptors (or half of a small limit) to the
/// process, capped at [`DEFAULT_MAX_CONNECTIONS_CAP`].
pub fn default_max_connections(nofile: Option<u64>) -> usize {
    let Some(n) = nofile else { return DEFAULT_MAX_CONNECTIONS_CAP };
    let reserve = FD_RESERVE.min(n / 2);
    usize::try_from(n.saturating_sub(reserve)).unwrap_or(usize::MAX).clamp(1, DEFAULT_MAX_CONNECTIONS_CAP)
}

impl ServerLimits {
    /// The default of `stream_idle_timeout`.
    pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

    /// Refuses limits that would make the server useless or unbounded.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_connections == 0 || self.max_connections > MAX_CONNECTIONS_LIMIT {
            return Err(format!("max_connections must be between 1 and {MAX_CONNECTIONS_LIMIT}"));
        }
        if self.header_read_timeout.is_zero() {
            return Err("header_read_timeout_ms must be at least 1".into());
        }
        if self.request_timeout.is_zero() {
            return Err("request_timeout_ms must be at least 1".into());
        }
        if self.stream_idle_timeout.is_zero() {
            return Err("stream_idle_timeout_ms must be at least 1".into());
        }
        Ok(())
    }
}

/// Wraps `router` so that each request is answered within `limits.request_timeout`, or with
/// `503 request_timeout`. The handler's future is dropped at the deadline; work it handed to the
/// blocking pool finishes there unobserved. The [`STREAMING_ROUTES`] are exempt: their
/// handlers bound each chunk by `limits.stream_idle_timeout` instead ([`StreamIdleTimeout`]).
pub fn with_request_timeout(router: Router, limits: ServerLimits) -> Router {
    router.layer(axum::middleware::from_fn_with_state(limits, request_timeout))
}

async fn request_timeout(State(limits): State<ServerLimits>, mut req: Request, next: Next) -> Response {
    let streaming =
        req.extensions().get::<axum::extract::MatchedPath>().is_some_and(|m| STREAMING_ROUTES.contains(&m.as_str()));
    if streaming {
        req.extensions_mut().insert(StreamIdleTimeout(limits.stream_idle_timeout));
        return next.run(req).await;
    }
    let limit = limits.request_timeout;
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "request_timeout",
            format!("the request did not complete within {} ms", limit.as_millis()),
        )
        .into_response(),
    }
}

/// One open connection as the accept loop sees it.
struct Conn {
    /// Requests whose response is not yet ready; 0 means the connection waits for a client.
    in_flight: AtomicUsize,
    /// Milliseconds after `epoch` when `in_flight` last became 0 (or the connection was accepted).
    idle_since_ms: AtomicU64,
    epoch: Instant,
    /// Told to close when the limit is reached and this is the oldest waiting connection.
    shed: Notify,
}

/// Open connections by acceptance order (the oldest first).
struct Registry {
    conns: Mutex<BTreeMap<u64, Arc<Conn>>>,
    epoch: Instant,
}

impl Default for Registry {
    fn default() -> Self {
        Registry { conns: Mutex::default(), epoch: Instant::now() }
    }
}

impl Conn {
    fn mark_idle(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.idle_since_ms.store(now, Ordering::Release);
    }

    /// Waiting for its client, and for at least `grace`.
    fn idle_for(&self, grace: Duration) -> bool {
        let since = Duration::from_millis(self.idle_since_ms.load(Ordering::Acquire));
        self.in_flight.load(Ordering::Acquire) == 0 && self.epoch.elapsed().saturating_sub(since) >= grace
    }
}

impl Registry {
    fn insert(&self, id: u64) -> Arc<Conn> {
        let c = Arc::new(Conn {
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            epoch: self.epoch,
            shed: Notify::new(),
        });
        c.mark_idle();
        self.conns.lock().unwrap_or_else(PoisonError::into_inner).insert(id, c.clone());
        c
    }

    fn remove(&self, id: u64) {
        self.conns.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }

    /// Asks the oldest connection that has waited for its client for at least `grace` to close;
    /// false if there is none. The shed one leaves the registry at once, so it is asked only once.
    fn shed_oldest_idle(&self, grace: Duration) -> bool {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        let found = conns.iter().find(|(_, c)| c.idle_for(grace)).map(|(id, c)| (*id, c.clone()));
        match found {
            Some((id, c)) => {
                conns.remove(&id);
                c.shed.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Counts one request in flight on a connection for as long as it lives.
struct InFlight(Arc<Conn>);

impl InFlight {
    fn enter(conn: Arc<Conn>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(conn)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Stamp first, so that a reader seeing 0 requests never sees an older idle time.
        self.0.mark_idle();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` completes, then stops
/// accepting, lets open connections finish their current request (at most the request timeout
/// plus the header timeout) and returns.
pub async fn serve<F>(listener: TcpListener, router: Router, limits: ServerLimits, shutdown: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    limits.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let router = with_request_timeout(router, limits);
    let permits = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let slots = Arc::new(Semaphore::new(permits as usize));
    let registry = Arc::new(Registry::default());
    // A watch channel rather than the future itself: every connection and both waits of the
    // accept loop observe it, and a completed `watch` can be asked again.
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let stopped = |mut rx: watch::Receiver<bool>| async move {
        // An error means the sender is gone, which only happens after it sent `true`.
        let _ = rx.wait_for(|s| *s).await;
    };

    let grace = SHED_GRACE.min(limits.header_read_timeout / 2);
    let mut next_id: u64 = 0;
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = stopped(stop_rx.clone()) => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    tracing::error!(error = %e, "accept error; backing off");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        // Nothing else is accepted until this connection has a slot: later ones wait in the
        // listen backlog.
        let mut warned = false;
        let permit = loop {
            if let Ok(p) = slots.clone().try_acquire_owned() {
                break Some(p);
            }
            // A shed connection returns its permit as soon as its task sees the request, so
            // wait for it; otherwise look again shortly, when a connection may have aged past
            // the grace, unless one finishes first.
            let shed = registry.shed_oldest_idle(grace);
            if !shed && !warned {
                warned = true;
                tracing::warn!(max = limits.max_connections, "connection limit reached; no connection can be shed yet");
            }
            tokio::select! {
                biased;
                () = stopped(stop_rx.clone()) => break None,
                p = slots.clone().acquire_owned() => break p.ok(),
                () = tokio::time::sleep(SHED_POLL), if !shed => {}
            }
        };
        let Some(permit) = permit else { break };
        next_id += 1;
        tracing::trace!(%peer, id = next_id, "connection accepted");
        // Registered here rather than in its task, so that the next accept can already shed it
        // (a `Notify` keeps the request until the task first looks).
        let conn = registry.insert(next_id);
        tokio::spawn(serve_connection(
            stream,
            router.clone(),
            limits,
            (registry.clone(), next_id, conn),
            permit,
            stop_rx.clone(),
        ));
    }

    drop(listener);
    let drain = limits.request_timeout + limits.header_read_timeout;
    if tokio::time::timeout(drain, slots.acquire_many(permits)).await.is_err() {
        tracing::warn!(after_ms = drain.as_millis() as u64, "connections still open at shutdown; closing them");
    }
    Ok(())
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    router: Router,
    limits: ServerLimits,
    (registry, id, conn): (Arc<Registry>, u64, Arc<Conn>),
    _permit: OwnedSemaphorePermit,
    mut stop: watch::Receiver<bool>,
) {
    let service = {
        let conn = conn.clone();
        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let busy = InFlight::enter(conn.clone());
            let call = router.clone().oneshot(req);
            async move {
                let resp = call.await;
                drop(busy);
                resp
            }
        })
    };
    let http = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .serve_connection(TokioIo::new(stream), service);
    // The connection wakes itself once per request with a body (hyper's body channel): the
    // wrapper polls it again at once rather than through the scheduler (`inline_wake`).
    let mut http = InlineSelfWakes::new(http);
    let mut shutting_down = false;
    loop {
        tokio::select! {
            result = &mut http => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, id, "connection ended with an error");
                }
                break;
            }
            () = conn.shed.notified(), if !shutting_down => {
                tracing::debug!(id, "connection shed to make room under the connection limit");
                if conn.in_flight.load(Ordering::Acquire) == 0 {
                    break;
                }
                // A request began after it was picked: answer it, then close.
                shutting_down = true;
                http.inner().graceful_shutdown();
            }
            changed = stop.wait_for(|s| *s), if !shutting_down => {
                shutting_down = true;
                // Finish the request in progress, then close; an idle connection closes now.
                if changed.is_ok() {
                    http.inner().graceful_shutdown();
                }
            }
        }
    }
    registry.remove(id);
}

/// Errors of one incoming connection (the peer gave up before we accepted), not of the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_connection_limit_leaves_descriptors_to_the_process() {
        assert_eq!(default_max_connections(Some(256)), 128);
        assert_eq!(default_max_connections(Some(1024)), 896);
        assert_eq!(default_max_connections(Some(100)), 50);
        assert_eq!(default_max_connections(Some(1)), 1);
        assert_eq!(default_max_connections(Some(1 << 20)), DEFAULT_MAX_CONNECTIONS_CAP);
        assert_eq!(default_max_connections(None), DEFAULT_MAX_CONNECTIONS_CAP);
    }

    #[test]
    fn limits_that_cannot_work_are_refused() {
        let ok = ServerLimits { max_connections: 8, ..ServerLimits::default() };
        assert!(ok.validate().is_ok());
        assert!(ServerLimits { max_connections: 0, ..ok }.validate().is_err());
        assert!(ServerLimits { header_read_timeout: Duration::ZERO, ..ok }.validate().is_err());
        assert!(ServerLimits { request_timeout: Duration::ZERO, ..ok }.validate().is_err());
        assert!(ServerLimits { stream_idle_timeout: Duration::ZERO, ..ok }.validate().is_err());
    }

    #[test]
    fn shedding_picks_the_oldest_connection_without_a_request_in_flight() {
        let r = Registry::default();
        let a = r.insert(1);
        let _b = r.insert(2);
        let _c = r.insert(3);
        let _busy = InFlight::enter(a);
        // Too young to shed: an honest client that has just connected keeps its connection.
        assert!(!r.shed_oldest_idle(Duration::from_secs(60)));
        assert!(r.shed_oldest_idle(Duration::ZERO));
        let left: Vec<u64> = r.conns.lock().unwrap_or_else(PoisonError::into_inner).keys().copied().collect();
        assert_eq!(left, [1, 3]);
    }
}
