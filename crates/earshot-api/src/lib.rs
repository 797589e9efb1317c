//! HTTP API of Earshot: the axum router, JSON shapes, authentication and error mapping.
//!
//! This is the only crate that knows HTTP. Handlers decode a request, check the caller's
//! scope, hand the work to the store (on the blocking pool when it may wait) and encode the
//! answer; every error leaves through [`error::ApiError`].

mod answer;
pub mod auth;
pub mod console;
mod devices;
pub mod error;
mod gate;
mod inline_wake;
mod lists;
pub mod metrics;
mod reads;
pub mod requests;
pub mod server;
mod transfer;
mod trust;
mod watch;
mod writes;

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{delete, get, post, MethodRouter};
use axum::Router;
use earshot_store::Earshot;

pub use auth::{Auth, Principal, Scope, TokenConfig};
pub use error::{ApiError, ApiResult};
pub use gate::Access;
pub use server::ServerLimits;
pub use transfer::MAX_IMPORT_BYTES;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The OpenAPI document, checked in at `api/openapi.json` and served at `/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("../../../api/openapi.json");

/// Shared state of every handler: one pointer, so the clone that axum makes per request (for
/// the route's service and for each `State` extractor) touches one shared reference count, not
/// one per field. Under load on several cores each shared count a request increments is a cache
/// line the cores pass back and forth (BENCHMARKS.md, "Over HTTP: checks next to
/// `/healthz`, and writes").
#[derive(Clone)]
pub struct AppState(Arc<SharedState>);

/// What [`AppState`] points to.
pub struct SharedState {
    pub earshot: Arc<Earshot>,
    pub auth: Arc<Auth>,
    /// Set when the service is shutting down: `/readyz` answers 503 `draining` so that load
    /// balancers stop routing here while requests in flight finish, and watch streams end.
    pub draining: Arc<std::sync::atomic::AtomicBool>,
    /// Request and decision counters, served at `/metrics`.
    pub metrics: Arc<metrics::Metrics>,
    /// Who may call which route (the tokens and every route's access table).
    pub(crate) gate: gate::Gate,
    /// The stores' readiness as last evaluated, and when (`/readyz` answers from it for
    /// [`READINESS_FRESH`], so that probes under load never queue behind storage).
    readiness: std::sync::Mutex<Option<(std::time::Instant, Degraded)>>,
    /// The newest evaluation, healthy or not, and when it ended; held while one runs, so that
    /// probes arriving meanwhile wait for it and share its answer (one evaluation, one blocking
    /// thread, however many probes come at once).
    evaluation: tokio::sync::Mutex<Option<(std::time::Instant, Degraded)>>,
    /// How many evaluations ran (tests).
    evaluations: std::sync::atomic::AtomicU64,
}

/// Every store that makes this replica unready, with why.
type Degraded = Arc<std::collections::BTreeMap<String, String>>;

/// How long `/readyz` reuses its last evaluation of the stores.
const READINESS_FRESH: std::time::Duration = std::time::Duration::from_millis(100);

impl std::ops::Deref for AppState {
    type Target = SharedState;
    fn deref(&self) -> &SharedState {
        &self.0
    }
}

impl AppState {
    pub fn new(earshot: Arc<Earshot>, auth: Auth) -> Self {
        let auth = Arc::new(auth);
        AppState(Arc::new(SharedState {
            earshot,
            gate: gate::Gate::new(auth.clone(), &routes(), &console::PATHS),
            auth,
            draining: Arc::default(),
            metrics: Arc::new(metrics::Metrics::new()),
            readiness: std::sync::Mutex::new(None),
            evaluation: tokio::sync::Mutex::new(None),
            evaluations: std::sync::atomic::AtomicU64::new(0),
        }))
    }

    /// Every store that makes this replica unready, with why: the last evaluation when it is
    /// fresh, else a new one (off the async workers: it probes storage).
    async fn degraded(&self) -> Degraded {
        let last = self.readiness.lock().ok().and_then(|g| g.clone());
        if let Some((_, d)) = last.filter(|(at, _)| at.elapsed() < READINESS_FRESH) {
            return d;
        }
        let asked = std::time::Instant::now();
        let mut evaluation = self.evaluation.lock().await;
        // An evaluation that ended while this probe waited answers it too.
        if let Some((_, d)) = evaluation.as_ref().filter(|(ended, _)| *ended >= asked) {
            return d.clone();
        }
        let earshot = self.earshot.clone();
        self.evaluations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let degraded = Arc::new(tokio::task::spawn_blocking(move || earshot.degraded()).await.unwrap_or_default());
        let ended = std::time::Instant::now();
        *evaluation = Some((ended, degraded.clone()));
        // Only a healthy answer is reused by later probes: an unready replica is asked again at
        // every probe, so that it turns ready as soon as its condition clears.
        if let Ok(mut g) = self.readiness.lock() {
            *g = degraded.is_empty().then(|| (ended, degraded.clone()));
        }
        degraded
    }

    /// Turns `/readyz` unready and ends watch streams (the first step of a graceful stop).
    pub fn start_draining(&self) {
        self.draining.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// A store by id. One not running here yet (on a shared datastore: created by another
    /// replica, or not loaded) is started off the async workers, since that reads the datastore.
    pub(crate) async fn store(&self, id: &str) -> ApiResult<Arc<earshot_store::StoreHandle>> {
        if let Some(h) = self.earshot.running(id) {
            return Ok(h);
        }
        let (earshot, id) = (self.earshot.clone(), id.to_string());
        writes::blocking(move || earshot.store(&id)).await
    }
}

/// One route: its path, the methods it answers with the access each needs, and the handlers.
pub struct RouteSpec {
    pub path: &'static str,
    /// Lowercase method names, each with the access the gate checks before any handler runs.
    pub access: &'static [(&'static str, Access)],
    handler: MethodRouter<AppState>,
    pub authenticated: bool,
}

impl RouteSpec {
    /// The methods this route answers (lowercase).
    pub fn methods(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.access.iter().map(|(m, _)| *m)
    }
}

fn route(path: &'static str, access: &'static [(&'static str, Access)], handler: MethodRouter<AppState>) -> RouteSpec {
    RouteSpec { path, access, handler, authenticated: true }
}

fn open_route(
    path: &'static str,
    methods: &'static [(&'static str, Access)],
    handler: MethodRouter<AppState>,
) -> RouteSpec {
    RouteSpec { path, access: methods, handler, authenticated: false }
}

const READ: &[(&str, Access)] = &[("get", Access::Reader)];
const QUERY: &[(&str, Access)] = &[("post", Access::Reader)];
const WRITE: &[(&str, Access)] = &[("post", Access::Admin)];
const REMOVE: &[(&str, Access)] = &[("delete", Access::Admin)];
const ADMIN_READ: &[(&str, Access)] = &[("get", Access::Admin)];
const OPEN: &[(&str, Access)] = &[("get", Access::Open)];
/// Listed by admins (the records are admin views), written by admins.
const LIST_WRITE: &[(&str, Access)] = &[("get", Access::Admin), ("post", Access::Admin)];
/// Listed by readers (as the device reads are), written by admins.
const READ_WRITE: &[(&str, Access)] = &[("get", Access::Reader), ("post", Access::Admin)];

/// Every route the service answers. The router is built from exactly this table, and a test
/// keeps it equal to the paths and methods of the OpenAPI document.
pub fn routes() -> Vec<RouteSpec> {
    vec![
        route(
            "/v1/stores",
            &[("get", Access::Reader), ("post", Access::GlobalAdmin)],
            get(lists::stores).post(writes::create_store),
        ),
        route(
            "/v1/stores/{store}",
            &[("get", Access::Reader), ("delete", Access::GlobalAdmin)],
            get(reads::store_info).delete(lists::delete_store),
        ),
        route("/v1/stores/{store}/participants", LIST_WRITE, get(lists::participants).post(writes::create_participant)),
        route("/v1/stores/{store}/participants/{participant}", REMOVE, delete(writes::remove_participant)),
        route("/v1/stores/{store}/identities", LIST_WRITE, get(lists::identities).post(writes::bind_identity)),
        route("/v1/stores/{store}/items", LIST_WRITE, get(lists::items).post(writes::create_item)),
        route("/v1/stores/{store}/items/{item}", ADMIN_READ, get(reads::item_view)),
        route("/v1/stores/{store}/items/{item}/lifecycle", WRITE, post(writes::lifecycle)),
        route("/v1/stores/{store}/items/{item}/grants", WRITE, post(writes::grant)),
        route("/v1/stores/{store}/items/{item}/audiences", ADMIN_READ, get(reads::expand)),
        route(
            "/v1/stores/{store}/items/{item}/viewers",
            &[("get", Access::Admin), ("post", Access::Admin)],
            get(lists::viewer_sets).post(lists::viewer_subsets),
        ),
        route("/v1/stores/{store}/grants", ADMIN_READ, get(lists::grants)),
        route("/v1/stores/{store}/relationships", ADMIN_READ, get(lists::relationships)),
        route("/v1/stores/{store}/derivations", WRITE, post(writes::derive)),
        route("/v1/stores/{store}/grants/{grant}", REMOVE, delete(writes::revoke_grant)),
        route("/v1/stores/{store}/grants/{grant}/consents", WRITE, post(writes::consent)),
        route("/v1/stores/{store}/grants/{grant}/consents/{subject}", REMOVE, delete(writes::withdraw_consent)),
        route("/v1/stores/{store}/trust", LIST_WRITE, get(trust::list).post(trust::create)),
        route(
            "/v1/stores/{store}/trust/{trust}",
            &[("get", Access::Admin), ("delete", Access::Admin)],
            get(trust::read).delete(trust::revoke),
        ),
        route("/v1/stores/{store}/check", QUERY, post(reads::check)),
        route("/v1/stores/{store}/check/bulk", QUERY, post(reads::check_bulk)),
        route("/v1/stores/{store}/lookup", QUERY, post(reads::lookup)),
        route("/v1/stores/{store}/attempts", QUERY, post(reads::create_attempt)),
        route("/v1/stores/{store}/attempts/{attempt}", READ, get(reads::get_attempt)),
        route(
            "/v1/stores/{store}/schema",
            &[("get", Access::Reader), ("put", Access::Admin)],
            get(devices::get_schema).put(devices::put_schema),
        ),
        route("/v1/stores/{store}/devices", READ_WRITE, get(lists::devices).post(devices::create_device)),
        route("/v1/stores/{store}/relations", READ_WRITE, get(lists::relations).post(devices::create_relation)),
        route("/v1/stores/{store}/relations/{edge}", REMOVE, delete(devices::revoke_relation)),
        route("/v1/stores/{store}/capabilities", READ_WRITE, get(lists::capabilities).post(devices::create_capability)),
        route("/v1/stores/{store}/capabilities/{capability}", REMOVE, delete(devices::revoke_capability)),
        route("/v1/stores/{store}/capabilities/{capability}/chain", READ, get(devices::capability_chain)),
        route("/v1/stores/{store}/capabilities/{capability}/dependents", READ, get(devices::capability_dependents)),
        route("/v1/stores/{store}/authorize", QUERY, post(devices::authorize)),
        route("/v1/stores/{store}/authorize/principals", QUERY, post(lists::who_can_reach)),
        route("/v1/stores/{store}/authorize/reachable", QUERY, post(lists::what_can_reach)),
        // Reader scope: a use can only ever use up authority, never add any.
        route("/v1/stores/{store}/uses", QUERY, post(devices::consume_use)),
        route("/v1/stores/{store}/watch", READ, get(watch::watch)),
        route("/v1/stores/{store}/export", ADMIN_READ, get(transfer::export)),
        // The global admin scope: an import creates a store.
        route("/v1/stores/{store}/import", &[("post", Access::GlobalAdmin)], post(transfer::import)),
        route("/metrics", READ, get(reads::metrics)),
        open_route("/healthz", OPEN, get(healthz)),
        open_route("/readyz", OPEN, get(readyz)),
        open_route("/openapi.json", OPEN, get(openapi)),
        route("/v1/stores/{store}/attempts/{attempt}/context", QUERY, post(reads::attempt_context)),
    ]
}

/// The whole service as a router; tests drive it with `tower::ServiceExt::oneshot`.
pub fn router(state: AppState) -> Router {
    let mut api = Router::new();
    for r in routes() {
        // Every route, authenticated or open, is decided by the gate in the request layer
        // (`requests::observe`), after routing and before any extractor: a caller learns
        // nothing about the body of an endpoint it may not use (401/403 come first).
        api = api.route(r.path, r.handler);
    }
    api
        // Static, not API operations: outside `routes()` and the OpenAPI document (console.rs).
        .merge(console::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        // The gate, request id, span, metrics and one log line per request, by route template;
        // headers (and so bearer tokens), bodies and queries are never recorded.
        .layer(axum::middleware::from_fn_with_state(state.clone(), requests::observe))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "route_not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    method_not_allowed_error()
}

/// The 405 answer, from the router or from the gate (a method outside a route's access table).
pub(crate) fn method_not_allowed_error() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "method not allowed on this route")
}

async fn healthz() -> impl IntoResponse {
    axum::Json(serde_json::json!({"status": "ok"}))
}

/// Ready, or degraded (503) naming each store that cannot make writes durable now and why (a
/// full disk, a failed database). Reads are still served while degraded, so this is for load
/// balancers and operators, not a liveness signal (`/healthz` is). `stores` stays the count, as
/// before, and the reasons go in `degraded`.
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let stores = state.earshot.store_ids().len();
    if state.draining.load(std::sync::atomic::Ordering::SeqCst) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({"status": "draining", "stores": stores})),
        );
    }
    let degraded = state.degraded().await;
    if degraded.is_empty() {
        (StatusCode::OK, axum::Json(serde_json::json!({"status": "ready", "stores": stores})))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({"status": "degraded", "stores": stores, "degraded": degraded})),
        )
    }
}

async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI_JSON)
}

#[cfg(test)]
mod readiness_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    use earshot_store::kernel::backend::Record;
    use earshot_store::{Backend, MemoryBackend, Op};

    /// A datastore whose readiness probe takes a while (a loaded disk, a slow `statvfs`).
    struct SlowProbe(MemoryBackend);

    impl Backend for SlowProbe {
        fn stores(&self) -> earshot_store::kernel::Result<Vec<String>> {
            self.0.stores()
        }
        fn load(&self, store: &str) -> earshot_store::kernel::Result<Vec<Record>> {
            self.0.load(store)
        }
        fn commit(&self, store: &str, ops: Vec<Op>) -> earshot_store::kernel::Result<()> {
            self.0.commit(store, ops)
        }
        fn get(&self, store: &str, key: &[u8]) -> earshot_store::kernel::Result<Option<Vec<u8>>> {
            self.0.get(store, key)
        }
        fn scan(
            &self,
            store: &str,
            from: &[u8],
            to: &[u8],
            limit: usize,
        ) -> earshot_store::kernel::Result<Vec<Record>> {
            self.0.scan(store, from, to, limit)
        }
        fn condition(&self) -> Option<String> {
            std::thread::sleep(std::time::Duration::from_millis(20));
            None
        }
    }

    /// A burst of probes at once is one evaluation (one blocking thread), not one per probe.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn probes_arriving_together_share_one_evaluation() {
        let clock = Arc::new(earshot_store::ManualClock::new(1_700_000_000_000));
        let backend = Arc::new(SlowProbe(MemoryBackend::default()));
        let earshot =
            Arc::new(Earshot::open_with(backend, clock, earshot_store::Config::default()).expect("an instance"));
        let state = AppState::new(earshot, Auth::disabled());
        let start = Arc::new(tokio::sync::Barrier::new(200));
        let probes: Vec<_> = (0..200)
            .map(|_| {
                let (s, start) = (state.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    s.degraded().await
                })
            })
            .collect();
        for p in probes {
            assert!(p.await.unwrap().is_empty(), "an empty instance is ready");
        }
        let n = state.evaluations.load(std::sync::atomic::Ordering::Relaxed);
        assert!(n <= 2, "{n} evaluations for 200 probes arriving together");
    }
}
