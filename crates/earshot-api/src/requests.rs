//! The request layer around every route: the gate ([`crate::gate`]), a request id (the caller's
//! `x-request-id` when it is a plain token, else a fresh one, echoed in the response), a
//! `request` span for traces, the request metrics, and one log line at info per request.
//!
//! The line carries the method, the route template (never the raw path), the status, the
//! latency, the store named in the path, the request id and the `name` of the configured token
//! that made the request (`token`; absent when authentication is off or no known token was
//! presented); never a header, a body or a query, so bearer tokens and request contents never
//! reach the log. The span carries the same `token`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{MatchedPath, RawPathParams, Request, State};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

use crate::gate::Decision;
use crate::metrics::{Metrics, Status};
use crate::AppState;

/// The header a request id is read from and answered in.
pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest caller-supplied request id kept; a longer or odd one is replaced.
const MAX_REQUEST_ID: usize = 64;

/// The method as a `&'static` label (extension methods are `other`).
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}

/// The caller's request id when it is 1 to 64 characters of `[A-Za-z0-9._:-]`.
fn caller_request_id(req: &Request) -> Option<String> {
    let v = req.headers().get(&REQUEST_ID)?.to_str().ok()?;
    let plain = !v.is_empty()
        && v.len() <= MAX_REQUEST_ID
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    plain.then(|| v.to_owned())
}

/// A fresh request id: a per-process random prefix and a counter (no system call per request).
fn fresh_request_id() -> String {
    static PREFIX: OnceLock<u32> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let prefix = *PREFIX.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // `RandomState` is seeded from the OS once per process.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(u64::from(std::process::id()));
        (h.finish() >> 32) as u32
    });
    format!("{prefix:08x}-{:x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// One request in flight: recorded and logged once, when answered or, if its handler is
/// dropped first, as `cancelled`.
struct Observed<'a> {
    metrics: Arc<Metrics>,
    method: &'static str,
    route: &'static str,
    store: Option<String>,
    request_id: String,
    /// The name of the token that made the request, borrowed from the configuration.
    token: Option<&'a str>,
    started: Instant,
    done: bool,
}

impl Observed<'_> {
    fn finish(&mut self, status: Status) {
        self.done = true;
        let elapsed = self.started.elapsed();
        self.metrics.record_request(self.method, self.route, status, elapsed);
        // Whole microseconds, so the line reads `latency_ms=0.059` rather than the 17 digits of
        // `as_secs_f64() * 1000.0` (0.059534000000000004): n / 1000 prints as its 3 decimals.
        let latency_ms = elapsed.as_micros() as f64 / 1000.0;
        let store = self.store.as_deref();
        match status {
            Status::Code(status) => tracing::info!(
                target: "earshot::request",
                method = self.method,
                route = self.route,
                status,
                latency_ms,
                store,
                request_id = %self.request_id,
                token = self.token,
                "request"
            ),
            Status::Cancelled => tracing::info!(
                target: "earshot::request",
                method = self.method,
                route = self.route,
                status = "cancelled",
                latency_ms,
                store,
                request_id = %self.request_id,
                token = self.token,
                "request"
            ),
        }
    }
}

impl Drop for Observed<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(Status::Cancelled);
        }
    }
}

/// Middleware: the gate, request id, span, metrics and the request log line.
///
/// The gate decides here, once the router has matched the route and before any extractor or
/// handler runs ([`crate::gate::Gate::decide`]); a refusal is answered, counted and logged like
/// any other answer.
pub async fn observe(
    State(state): State<AppState>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    mut req: Request,
    next: Next,
) -> Response {
    let method = method_label(req.method());
    let matched = state.gate.lookup(req.extensions().get::<MatchedPath>().map(MatchedPath::as_str));
    let route = matched.label();
    // Only a well-formed store id is logged; anything else is the caller's noise.
    let store = params.as_ref().ok().and_then(|p| {
        p.iter()
            .find(|(k, _)| *k == "store")
            .map(|(_, v)| v)
            .filter(|v| earshot_core::validate_id(v).is_ok())
            .map(str::to_owned)
    });
    let request_id = caller_request_id(&req).unwrap_or_else(fresh_request_id);
    let span = tracing::info_span!(
        "request",
        otel.name = tracing::field::Empty,
        otel.kind = "server",
        http.request.method = method,
        http.route = route,
        http.response.status_code = tracing::field::Empty,
        request_id = %request_id,
        token = tracing::field::Empty,
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("{method} {route}"));
    }
    let header = HeaderValue::from_str(&request_id).ok();
    if let Some(h) = &header {
        req.headers_mut().insert(REQUEST_ID.clone(), h.clone());
    }
    let metrics = state.metrics.clone();
    let started = Instant::now();
    let mut observed = Observed { metrics, method, route, store, request_id, token: None, started, done: false };
    let decision = state.gate.decide(&matched, params.as_ref(), &req);
    // Who made the request, known before the handler runs, so that a cancelled request names
    // its token too.
    observed.token = match &decision {
        Decision::Admit(caller) | Decision::Refuse(_, Some(caller)) => state.gate.token_name(caller),
        Decision::Pass | Decision::Refuse(_, None) => None,
    };
    if let Some(token) = observed.token {
        span.record("token", token);
    }
    let mut resp = match decision {
        Decision::Refuse(answer, _) => answer,
        passed => {
            if let Decision::Admit(principal) = passed {
                req.extensions_mut().insert(principal);
            }
            next.run(req).instrument(span.clone()).await
        }
    };
    let status = resp.status().as_u16();
    span.record("http.response.status_code", status);
    observed.finish(Status::Code(status));
    if let Some(h) = header {
        resp.headers_mut().insert(REQUEST_ID.clone(), h);
    }
    resp
}
