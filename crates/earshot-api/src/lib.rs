//! HTTP API of Earshot: the axum router, JSON shapes, authentication and error mapping.
//!
//! This is the only crate that knows HTTP. Handlers decode a request, check the caller's
//! scope, hand the work to the store (on the blocking pool when it may wait) and encode the
//! answer; every error leaves through [`error::ApiError`].

pub mod auth;
mod devices;
pub mod error;
mod reads;
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

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The OpenAPI document, checked in at `api/openapi.json` and served at `/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("../../../api/openapi.json");

/// Shared state of every handler.
#[derive(Clone)]
pub struct AppState {
    pub earshot: Arc<Earshot>,
    pub auth: Arc<Auth>,
}

impl AppState {
    pub fn new(earshot: Arc<Earshot>, auth: Auth) -> Self {
        AppState { earshot, auth: Arc::new(auth) }
    }
}

/// One route: its path, the methods it answers and the handlers.
pub struct RouteSpec {
    pub path: &'static str,
    pub methods: &'static [&'static str],
    handler: MethodRouter<AppState>,
    pub authenticated: bool,
}

fn route(path: &'static str, methods: &'static [&'static str], handler: MethodRouter<AppState>) -> RouteSpec {
    RouteSpec { path, methods, handler, authenticated: true }
}

fn open_route(path: &'static str, methods: &'static [&'static str], handler: MethodRouter<AppState>) -> RouteSpec {
    RouteSpec { path, methods, handler, authenticated: false }
}

/// Every route the service answers. The router is built from exactly this table, and a test
/// keeps it equal to the paths and methods of the OpenAPI document.
pub fn routes() -> Vec<RouteSpec> {
    vec![
        route("/v1/stores", &["post"], post(writes::create_store)),
        route("/v1/stores/{store}", &["get"], get(reads::store_info)),
        route("/v1/stores/{store}/participants", &["post"], post(writes::create_participant)),
        route("/v1/stores/{store}/participants/{participant}", &["delete"], delete(writes::remove_participant)),
        route("/v1/stores/{store}/identities", &["post"], post(writes::bind_identity)),
        route("/v1/stores/{store}/items", &["post"], post(writes::create_item)),
        route("/v1/stores/{store}/items/{item}", &["get"], get(reads::item_view)),
        route("/v1/stores/{store}/items/{item}/lifecycle", &["post"], post(writes::lifecycle)),
        route("/v1/stores/{store}/items/{item}/grants", &["post"], post(writes::grant)),
        route("/v1/stores/{store}/items/{item}/audiences", &["get"], get(reads::expand)),
        route("/v1/stores/{store}/derivations", &["post"], post(writes::derive)),
        route("/v1/stores/{store}/grants/{grant}", &["delete"], delete(writes::revoke_grant)),
        route("/v1/stores/{store}/check", &["post"], post(reads::check)),
        route("/v1/stores/{store}/check/bulk", &["post"], post(reads::check_bulk)),
        route("/v1/stores/{store}/lookup", &["post"], post(reads::lookup)),
        route("/v1/stores/{store}/attempts", &["post"], post(reads::create_attempt)),
        route("/v1/stores/{store}/attempts/{attempt}", &["get"], get(reads::get_attempt)),
        route("/v1/stores/{store}/schema", &["get", "put"], get(devices::get_schema).put(devices::put_schema)),
        route("/v1/stores/{store}/devices", &["post"], post(devices::create_device)),
        route("/v1/stores/{store}/relations", &["post"], post(devices::create_relation)),
        route("/v1/stores/{store}/relations/{edge}", &["delete"], delete(devices::revoke_relation)),
        route("/v1/stores/{store}/capabilities", &["post"], post(devices::create_capability)),
        route("/v1/stores/{store}/capabilities/{capability}", &["delete"], delete(devices::revoke_capability)),
        route("/v1/stores/{store}/capabilities/{capability}/chain", &["get"], get(devices::capability_chain)),
        route("/v1/stores/{store}/capabilities/{capability}/dependents", &["get"], get(devices::capability_dependents)),
        route("/v1/stores/{store}/authorize", &["post"], post(devices::authorize)),
        route("/v1/stores/{store}/uses", &["post"], post(devices::consume_use)),
        route("/metrics", &["get"], get(reads::metrics)),
        open_route("/healthz", &["get"], get(healthz)),
        open_route("/readyz", &["get"], get(readyz)),
        open_route("/openapi.json", &["get"], get(openapi)),
        route("/v1/stores/{store}/attempts/{attempt}/context", &["post"], post(reads::attempt_context)),
    ]
}

/// The whole service as a router; tests drive it with `tower::ServiceExt::oneshot`.
pub fn router(state: AppState) -> Router {
    let mut authed = Router::new();
    let mut open = Router::new();
    for r in routes() {
        if r.authenticated {
            authed = authed.route(r.path, r.handler);
        } else {
            open = open.route(r.path, r.handler);
        }
    }
    let authed = authed.layer(axum::middleware::from_fn_with_state(state.auth.clone(), auth::authenticate));
    authed
        .merge(open)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        // Spans carry method and path only: headers (and so bearer tokens) are never recorded.
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "route_not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
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
    // The free-space probe is one statvfs per store, but it is a syscall: off the async threads.
    let earshot = state.earshot.clone();
    let degraded = tokio::task::spawn_blocking(move || earshot.degraded()).await.unwrap_or_default();
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
