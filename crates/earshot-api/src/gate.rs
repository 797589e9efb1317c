//! The gate in front of every authenticated route: who is calling, whether their scope and
//! stores allow this route and method, and whether the path's identifiers are well formed —
//! all decided before a handler or a body extractor runs.
//!
//! Deciding access before parsing means a caller learns nothing about an endpoint it may not
//! use: a reader posting an empty body to an admin route gets 403, not a list of missing fields.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{RawPathParams, Request};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

use crate::auth::{Auth, Scope};
use crate::error::ApiError;
use crate::metrics::UNMATCHED_ROUTE;

/// What a route needs of its caller, per method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// No authentication (health, readiness, the API document).
    Open,
    /// The reader scope on the store named in the path (or, for routes naming no store, any
    /// token: the handler shows only the stores the token may see).
    Reader,
    /// The admin scope on the store named in the path.
    Admin,
    /// The admin scope on every store (creating a store).
    GlobalAdmin,
}

/// What the gate knows of one route: its template and the access each of its methods needs.
pub(crate) struct RouteGate {
    pub(crate) path: &'static str,
    access: &'static [(&'static str, Access)],
    authenticated: bool,
    /// The route's methods, for the `allow` header of a 405. HEAD is not among them: on an
    /// authenticated route it is refused too, though axum would serve it with the GET handler.
    allow: HeaderValue,
}

/// The gate of the whole service: the configured tokens and every route's access table, by
/// route template. It runs in the request layer ([`crate::requests::observe`]), after routing
/// (the matched template names the route) and before any extractor or handler.
///
/// One table, decided in the layer every request already passes, rather than a layer of its
/// own on each route: a route layer is one more boxed service that axum clones, calls and drops
/// per request (measured in BENCHMARKS.md, "Over HTTP: checks next to `/healthz`, and writes").
pub(crate) struct Gate {
    auth: Arc<Auth>,
    routes: HashMap<&'static str, RouteGate>,
}

/// The gate's answer for one request.
pub(crate) enum Decision {
    /// An open route, or no route at all (the router answers `404 route_not_found`).
    Pass,
    /// The caller of an authenticated route, admitted: attached to the request for the handler.
    Admit(crate::Principal),
    /// Refused: this is the answer (401, 403, 405 or 400), and the caller when it was
    /// authenticated before the refusal (a 403, or a malformed path), for the request log.
    Refuse(Response, Option<crate::Principal>),
}

/// The route a request matched, as the gate sees it.
pub(crate) enum Matched<'a> {
    /// No route (the router answers `404 route_not_found`).
    None,
    /// A route in the table.
    Route(&'a RouteGate),
    /// A template the table does not list: refused, never guessed.
    Unlisted,
}

impl Matched<'_> {
    /// The route's `&'static` template, the label of its metrics and log lines.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Matched::Route(r) => r.path,
            Matched::None | Matched::Unlisted => UNMATCHED_ROUTE,
        }
    }
}

impl Gate {
    /// The gate for `routes` (the API's table) and `open_paths` (routes outside the API, such
    /// as the console's pages, that answer GET to anyone).
    pub(crate) fn new(auth: Arc<Auth>, routes: &[crate::RouteSpec], open_paths: &[&'static str]) -> Self {
        const OPEN_GET: &[(&str, Access)] = &[("get", Access::Open)];
        let api = routes.iter().map(|r| (r.path, r.access, r.authenticated));
        let open = open_paths.iter().map(|p| (*p, OPEN_GET, false));
        let routes = api
            .chain(open)
            .map(|(path, access, authenticated)| {
                let allow = access.iter().map(|(m, _)| m.to_ascii_uppercase()).collect::<Vec<_>>().join(",");
                let allow = HeaderValue::from_str(&allow).unwrap_or(HeaderValue::from_static(""));
                (path, RouteGate { path, access, authenticated, allow })
            })
            .collect();
        Gate { auth, routes }
    }

    /// The route of a request, by the template the router matched.
    pub(crate) fn lookup(&self, matched: Option<&str>) -> Matched<'_> {
        match matched {
            None => Matched::None,
            Some(m) => self.routes.get(m).map_or(Matched::Unlisted, Matched::Route),
        }
    }

    /// Decides one request ([`Decision`]). On an authenticated route, a method outside the
    /// route's table is answered 405 here, so no method reaches a handler without its access
    /// having been checked; then the caller is authenticated, its scope and stores are checked
    /// for this method, and every path identifier is checked to be well formed.
    pub(crate) fn decide(
        &self,
        matched: &Matched<'_>,
        params: Result<&RawPathParams, &RawPathParamsRejection>,
        req: &Request,
    ) -> Decision {
        let route = match matched {
            Matched::None => return Decision::Pass,
            Matched::Unlisted => {
                let answer = ApiError::forbidden("no access is defined for this route").into_response();
                return Decision::Refuse(answer, None);
            }
            Matched::Route(r) => r,
        };
        if !route.authenticated {
            return Decision::Pass;
        }
        let method = req.method().as_str();
        let Some(access) = route.access.iter().find(|(m, _)| m.eq_ignore_ascii_case(method)).map(|(_, a)| *a) else {
            let mut resp = crate::method_not_allowed_error().into_response();
            resp.headers_mut().insert(header::ALLOW, route.allow.clone());
            return Decision::Refuse(resp, None);
        };
        let header = req.headers().get(header::AUTHORIZATION).and_then(|h| h.to_str().ok());
        let principal = match self.auth.authenticate(header) {
            Ok(p) => p,
            Err(e) => return Decision::Refuse(e.into_response(), None),
        };
        let admitted = admit(&principal, access, params.ok()).and_then(|()| {
            let params = params.map_err(|r| ApiError::bad_request("invalid_path", r.body_text()))?;
            well_formed(params)?;
            no_stray_query(route.path, method, req.uri())
        });
        match admitted {
            Ok(()) => Decision::Admit(principal),
            Err(e) => Decision::Refuse(e.into_response(), Some(principal)),
        }
    }

    /// The `name` of the configured token a caller presented (never its secret), borrowed from
    /// the configuration: `None` when authentication is off.
    pub(crate) fn token_name(&self, caller: &crate::auth::Caller) -> Option<&str> {
        self.auth.token_name(caller)
    }
}

/// Whether the authenticated `principal` may use a route of `access` on the store the path
/// names.
fn admit(principal: &crate::Principal, access: Access, params: Option<&RawPathParams>) -> Result<(), ApiError> {
    let store = params.and_then(|p| p.iter().find(|(k, _)| *k == "store").map(|(_, v)| v));
    match access {
        Access::Open => {}
        // Routes naming no store (metrics) show only what the token may see.
        Access::Reader => {
            if let Some(s) = store {
                principal.require(Scope::Reader, Some(s))?;
            }
        }
        Access::Admin => principal.require(Scope::Admin, store)?,
        Access::GlobalAdmin => principal.require(Scope::Admin, None)?,
    }
    Ok(())
}

/// The routes and methods besides `GET` whose handler reads a query string: a revocation names
/// its revoker (`?by=`), deleting a store repeats its id (`?confirm=`).
const QUERY_TAKERS: [(&str, &str); 3] = [
    ("DELETE", "/v1/stores/{store}"),
    ("DELETE", "/v1/stores/{store}/relations/{edge}"),
    ("DELETE", "/v1/stores/{store}/capabilities/{capability}"),
];

/// A query string where the route takes none is refused, naming its first parameter: a
/// parameter that means nothing (a consistency token on a write, a mistyped name) must not be
/// silently ignored. `GET` handlers (and the [`QUERY_TAKERS`]) read their own query strings and
/// refuse what they do not know.
fn no_stray_query(path: &str, method: &str, uri: &axum::http::Uri) -> Result<(), ApiError> {
    if method.eq_ignore_ascii_case("GET")
        || QUERY_TAKERS.iter().any(|(m, p)| m.eq_ignore_ascii_case(method) && *p == path)
    {
        return Ok(());
    }
    match crate::lists::first_parameter(uri) {
        None => Ok(()),
        Some(name) => Err(ApiError::bad_request(
            "invalid_request",
            format!("unknown query parameter `{name}`: {method} {path} takes its input in the body"),
        )
        .with_details(json!({"parameter": name}))),
    }
}

/// Every path parameter is an identifier (SPEC §1.1): a malformed one is a path error, never a
/// lookup that answers "not found".
fn well_formed(params: &RawPathParams) -> Result<(), ApiError> {
    for (name, value) in params {
        if let Err(e) = earshot_core::validate_id(value) {
            return Err(ApiError::bad_request(
                "invalid_path",
                format!("path parameter `{name}` is not a valid identifier: {e}"),
            )
            .with_details(json!({"parameter": name})));
        }
    }
    Ok(())
}
