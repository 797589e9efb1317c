//! Where `earshot mcp`'s tools send their API calls: a running service over HTTP (`Remote`,
//! the CLI's blocking `ureq` client on tokio's blocking threads) or the same axum router in
//! process over a local sled data directory (`Embedded`), so that the API's rules, scopes,
//! limits and error codes apply identically in both modes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::body::Body;
use axum::http::{Method, Request};
use earshot_api::{AppState, Auth, Scope, TokenConfig};
use earshot_store::Earshot;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// Per-call timeout towards a remote service.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// An API refusal (or a failure to get an answer at all), as the tools report it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status of the refusal; `None` when no answer came (unreachable, or refused
    /// by the tool layer itself before any call).
    pub status: Option<u16>,
    /// The API's stable error code (`forbidden`, `item_not_found`, …).
    pub code: String,
    pub message: String,
    /// The API's `details` object (`{}` when it gave none).
    pub details: Value,
}

impl ApiError {
    /// A refusal of the tool layer itself, with one of the API's codes.
    pub fn local(code: &str, message: impl Into<String>) -> Self {
        ApiError { status: None, code: code.into(), message: message.into(), details: json!({}) }
    }

    /// The error of an answer with this status and body (the API's `{"error": {…}}`).
    pub fn from_answer(status: u16, body: &Value) -> Self {
        let code = body.pointer("/error/code").and_then(Value::as_str).unwrap_or("internal_error");
        let message = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("the service answered {status} without an error body"));
        let details = body.pointer("/error/details").cloned().unwrap_or_else(|| json!({}));
        ApiError { status: Some(status), code: code.into(), message, details }
    }
}

/// The service the tools call.
#[derive(Clone)]
pub enum Backend {
    Remote(Remote),
    Embedded(Embedded),
}

impl Backend {
    /// One API call: the JSON answer of a 2xx, else the API's error.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, ApiError> {
        match self {
            Backend::Remote(r) => r.call(method, path, body).await,
            Backend::Embedded(e) => e.call(method, path, body).await,
        }
    }

    /// Stops the embedded store's writers (nothing to do for a remote service).
    pub fn shutdown(&self) {
        if let Backend::Embedded(e) = self {
            e.earshot.shutdown();
        }
    }
}

/// A running Earshot reached over HTTP.
#[derive(Clone)]
pub struct Remote {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Remote {
    pub fn new(base: &str, token: Option<String>) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout_read(CALL_TIMEOUT)
            .timeout_write(CALL_TIMEOUT)
            .build();
        Remote { base: base.trim_end_matches('/').to_owned(), token, agent }
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, ApiError> {
        let this = self.clone();
        let (method, path) = (method.to_owned(), path.to_owned());
        match tokio::task::spawn_blocking(move || this.call_blocking(&method, &path, body.as_ref())).await {
            Ok(answer) => answer,
            Err(e) => Err(ApiError::local("internal_error", format!("the call did not complete: {e}"))),
        }
    }

    fn call_blocking(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, ApiError> {
        let url = format!("{}{path}", self.base);
        let mut req = self.agent.request(method, &url);
        if let Some(t) = &self.token {
            req = req.set("authorization", &format!("Bearer {t}"));
        }
        let result = match body {
            Some(b) => req.set("content-type", "application/json").send_string(&b.to_string()),
            None => req.call(),
        };
        match result {
            Ok(resp) => {
                let status = resp.status();
                let text = resp
                    .into_string()
                    .map_err(|e| ApiError::local("unavailable", format!("reading the answer of {url}: {e}")))?;
                serde_json::from_str(&text).map_err(|_| ApiError {
                    status: Some(status),
                    ..ApiError::local("internal_error", "the answer is not JSON")
                })
            }
            Err(ureq::Error::Status(status, resp)) => {
                let body: Value =
                    resp.into_string().ok().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
                Err(ApiError::from_answer(status, &body))
            }
            Err(e) => Err(ApiError::local("unavailable", format!("cannot reach {}: {e}", self.base))),
        }
    }
}

/// The API's router in process over a local data directory, behind one token of its own:
/// the scope `--scope` says, limited to the one store served.
#[derive(Clone)]
pub struct Embedded {
    earshot: Arc<Earshot>,
    router: axum::Router,
    bearer: String,
}

impl Embedded {
    /// Opens (or creates) the sled data directory `dir`; sled is single-process, so a service
    /// running on it must be stopped first.
    pub fn open(dir: &Path, store: &str, scope: Scope) -> anyhow::Result<Self> {
        let earshot = crate::datastore::open(None, dir, earshot_store::Config::default()).with_context(|| {
            format!("opening {} (is `earshot serve` running on it? stop it, or use --url)", dir.display())
        })?;
        earshot.warm_search();
        Self::over(Arc::new(earshot), store, scope)
    }

    /// The router over an open `Earshot` (tests run it on an in-memory one).
    pub fn over(earshot: Arc<Earshot>, store: &str, scope: Scope) -> anyhow::Result<Self> {
        Self::over_stores(earshot, Some(vec![store.to_owned()]), scope)
    }

    /// The router behind a token for `stores` (`None`: every store, and creating stores).
    pub fn over_stores(earshot: Arc<Earshot>, stores: Option<Vec<String>>, scope: Scope) -> anyhow::Result<Self> {
        // A secret nobody else knows, minted per process: the router's own authentication
        // then decides scope and store exactly as it does for a remote caller.
        let mut digest = sha2::Sha256::default();
        sha2::Digest::update(&mut digest, format!("{:?}{:?}", std::time::SystemTime::now(), std::process::id()));
        sha2::Digest::update(&mut digest, format!("{:p}", Arc::as_ptr(&earshot)));
        let bearer = format!("mcp-{}", hex::encode(sha2::Digest::finalize(digest)));
        let token = TokenConfig { name: "mcp".into(), token: bearer.clone(), scope, stores };
        let auth = Auth::from_config(vec![token]).context("the embedded token")?;
        let router = earshot_api::router(AppState::new(earshot.clone(), auth));
        Ok(Embedded { earshot, router, bearer })
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, ApiError> {
        let Ok(method) = Method::from_bytes(method.as_bytes()) else {
            return Err(ApiError::local("internal_error", format!("`{method}` is not an HTTP method")));
        };
        let req =
            Request::builder().method(method).uri(path).header("authorization", format!("Bearer {}", self.bearer));
        let req = match body {
            Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        };
        let req = req.map_err(|e| ApiError::local("invalid_path", format!("`{path}` is not a request path: {e}")))?;
        let resp = match self.router.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| ApiError::local("internal_error", format!("reading the answer: {e}")))?
            .to_bytes();
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            if value.is_null() {
                return Err(ApiError {
                    status: Some(status),
                    ..ApiError::local("internal_error", "the answer is not JSON")
                });
            }
            Ok(value)
        } else {
            Err(ApiError::from_answer(status, &value))
        }
    }
}
