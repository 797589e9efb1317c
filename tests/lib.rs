//! Shared helpers for the workspace tests: an in-process app over a temporary store with a
//! manual clock, and a one-call JSON client for its router.

pub mod fuzzing;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use earshot_api::{AppState, Auth, TokenConfig};
use earshot_store::{Backend, Config, Earshot, ManualClock};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

/// Milliseconds since the epoch at which every test clock starts: 2026-01-01T00:00:00Z (the
/// scenario runner's start).
pub const T0_MS: i64 = earshot::validate::T0_MS;

/// An Earshot instance (on a temporary sled directory unless another backend is given), its
/// router, and its clock.
pub struct TestApp {
    pub earshot: Arc<Earshot>,
    pub clock: Arc<ManualClock>,
    pub router: axum::Router,
}

impl TestApp {
    /// Authentication off (every request is the local administrator).
    pub fn new() -> Self {
        Self::with_auth(Auth::disabled())
    }

    pub fn with_tokens(tokens: Vec<TokenConfig>) -> Self {
        Self::with_auth(Auth::new(tokens))
    }

    fn with_auth(auth: Auth) -> Self {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let earshot = Arc::new(Earshot::temporary(clock.clone()).expect("temporary store"));
        let router = earshot_api::router(AppState::new(earshot.clone(), auth));
        TestApp { earshot, clock, router }
    }

    /// Authentication off, over any backend (the same scenarios on every backend).
    pub fn with_backend(backend: Arc<dyn Backend>) -> Self {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let earshot =
            Arc::new(Earshot::open_with(backend, clock.clone(), Config::default()).expect("open over the backend"));
        let router = earshot_api::router(AppState::new(earshot.clone(), Auth::disabled()));
        TestApp { earshot, clock, router }
    }

    /// Authentication off, over an Earshot opened by the caller (its own configuration).
    pub fn with_earshot(earshot: Arc<Earshot>) -> Self {
        let router = earshot_api::router(AppState::new(earshot.clone(), Auth::disabled()));
        TestApp { earshot, clock: Arc::new(ManualClock::new(T0_MS)), router }
    }

    /// Sends one request through the router in-process; returns status and parsed JSON body
    /// (`Value::Null` for an empty or non-JSON body).
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        self.call_with(method, path, body, None).await
    }

    /// Like [`TestApp::call`], with an optional bearer token.
    pub async fn call_with(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        token: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder().method(Method::from_bytes(method.as_bytes()).expect("method")).uri(path);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = match body {
            Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        }
        .expect("request");
        self.send(req).await
    }

    /// Sends a raw request (for malformed bodies and odd headers).
    pub async fn send(&self, req: Request<Body>) -> (StatusCode, Value) {
        let resp = self.router.clone().oneshot(req).await.expect("infallible router");
        let status = resp.status();
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, json)
    }

    /// The latest revision of a store.
    pub fn revision(&self, store: &str) -> u64 {
        self.earshot.store(store).expect("store").latest().revision()
    }
}

/// The scenario runner (`earshot::validate`) plays fixtures against a `TestApp` too, over sled
/// or any backend.
impl earshot::validate::Target for TestApp {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        TestApp::call(self, method, path, body).await
    }

    fn revision(&self, store: &str) -> u64 {
        TestApp::revision(self, store)
    }

    fn set_clock(&self, ms: i64) {
        self.clock.set(ms);
    }
}

impl Default for TestApp {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a test's records live: one test body, run over each backend. `open` gives a backend
/// over the same records every time, so a restart is "drop the `Earshot`, `open` again".
pub enum Datastore {
    /// A temporary sled directory, gone with its instance (cannot be reopened).
    Temporary,
    /// A sled directory, reopenable.
    Dir(std::path::PathBuf),
    /// Fresh PostgreSQL tables of this test (`earshot_postgres::testing::isolated`), dropped
    /// with the last handle; every `open` is a new connection pool, as a restarted process has.
    Postgres(Arc<earshot_postgres::testing::Isolated>),
}

impl Datastore {
    /// Fresh PostgreSQL tables, or `None` (with a `SKIPPED:` message) when PostgreSQL is not
    /// reachable and `EARSHOT_REQUIRE_PG` is not set.
    pub fn postgres(tag: &str) -> Result<Option<Self>, String> {
        Ok(earshot_postgres::testing::isolated(tag)?.map(|db| Datastore::Postgres(Arc::new(db))))
    }

    /// Whether a second `open` finds the records of the first.
    pub fn reopenable(&self) -> bool {
        !matches!(self, Datastore::Temporary)
    }

    /// A backend over this datastore's records.
    pub fn open(&self) -> Result<Arc<dyn Backend>, String> {
        match self {
            Datastore::Temporary => {
                Ok(Arc::new(earshot_store::SledBackend::temporary().map_err(|e| format!("temporary sled: {e}"))?))
            }
            Datastore::Dir(p) => {
                // sled releases its file lock from a background thread shortly after the last
                // handle is dropped, so an in-process reopen may have to wait for it.
                let mut tries = 0;
                loop {
                    match earshot_store::SledBackend::open(p) {
                        Ok(b) => return Ok(Arc::new(b)),
                        Err(e) if tries < 250 && e.to_string().contains("could not acquire lock") => {
                            tries += 1;
                            std::thread::sleep(std::time::Duration::from_millis(20));
                        }
                        Err(e) => return Err(format!("open sled: {e}")),
                    }
                }
            }
            Datastore::Postgres(db) => Ok(Arc::new(db.another().map_err(|e| format!("open PostgreSQL: {e}"))?)),
        }
    }
}

/// Proptest cases for a test over PostgreSQL: `EARSHOT_PG_PROPTEST_CASES` when set, else
/// `default` (kept small: every write is a database round trip, and CI runs these).
pub fn pg_cases(default: u32) -> u32 {
    std::env::var("EARSHOT_PG_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
