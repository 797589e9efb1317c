//! The console at `/console` (issue 13): the static single-page app built from `console/` and
//! checked in at `console/dist`, embedded here, the only place that knows its assets.
//!
//! The assets carry no data and no secret, so they are served without a token; the page reads
//! only through the public `/v1` API with the token the user types, so it can show nothing that
//! token could not read. These routes are not API operations: they are kept out of
//! [`crate::routes`] (and so out of `api/openapi.json` and the typed clients) and merged into the
//! router beside them. Every answer carries a strict Content-Security-Policy (scripts, styles and
//! connections from this origin only; no inline script or style, no framing).

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use sha2::{Digest, Sha256};

use crate::{ApiError, AppState};

/// The route templates of the console, for the router and the request metrics' labels.
pub const PATHS: [&str; 3] = ["/console", "/console/", "/console/assets/{file}"];

/// The Content-Security-Policy of every console answer.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One embedded file: its name under `assets/` (empty for the page), type and bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: [Asset; 3] = [
    Asset {
        name: "",
        content_type: "text/html; charset=utf-8",
        body: include_str!("../../../console/dist/index.html"),
    },
    Asset {
        name: "console.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../../../console/dist/assets/console.js"),
    },
    Asset {
        name: "console.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../../../console/dist/assets/console.css"),
    },
];

/// Strong validators of the assets (SHA-256 of each body, computed once), in `ASSETS` order.
fn etags() -> &'static [String; 3] {
    static TAGS: OnceLock<[String; 3]> = OnceLock::new();
    TAGS.get_or_init(|| {
        ASSETS.map(|a| {
            let d = Sha256::digest(a.body.as_bytes());
            let hex: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
            format!("\"{hex}\"")
        })
    })
}

/// The console's routes (GET, and HEAD by axum), merged into the service's router.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(PATHS[0], get(page))
        .route(PATHS[1], get(page))
        .route(PATHS[2], get(|Path(file): Path<String>, headers: HeaderMap| async move { asset(&file, &headers) }))
}

async fn page(headers: HeaderMap) -> Response {
    asset("", &headers)
}

/// An embedded file with its type, validator and security headers; 304 when the client's copy is
/// current; `route_not_found` for a name the console does not have.
fn asset(name: &str, headers: &HeaderMap) -> Response {
    let Some((asset, etag)) = ASSETS.iter().zip(etags()).find(|(a, _)| a.name == name) else {
        return ApiError::new(StatusCode::NOT_FOUND, "route_not_found", "no such console asset").into_response();
    };
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut resp = if fresh { StatusCode::NOT_MODIFIED.into_response() } else { asset.body.into_response() };
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    // Fixed asset names: the browser keeps a copy but asks (If-None-Match) before using it, so a
    // new binary's console is picked up at once.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}
