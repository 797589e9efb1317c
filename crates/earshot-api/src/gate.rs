//! The gate in front of every authenticated route: who is calling, whether their scope and
//! stores allow this route and method, and whether the path's identifiers are well formed —
//! all decided before a handler or a body extractor runs.
//!
//! Deciding access before parsing means a caller learns nothing about an endpoint it may not
//! use: a reader posting an empty body to an admin route gets 403, not a list of missing fields.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::json;

use crate::auth::{Auth, Scope};
use crate::error::ApiError;

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

/// The gate of one route: the configured tokens and the route's access table. A route layer
/// ([`tower::Layer`]) whose service decides before calling the route's handler.
#[derive(Clone)]
pub struct Gate {
    pub auth: Arc<Auth>,
    pub access: &'static [(&'static str, Access)],
}

impl<S> tower::Layer<S> for Gate {
    type Service = Gated<S>;

    fn layer(&self, inner: S) -> Gated<S> {
        Gated { gate: self.clone(), inner }
    }
}

/// A route behind its [`Gate`].
///
/// A plain service rather than `axum::middleware::from_fn`: the decision needs no waiting, so
/// the handler's future is returned as it is, without the boxed future, the boxed clone of the
/// route and the `Next` that `from_fn` makes per request (measured in BENCHMARKS.md, "Over HTTP").
#[derive(Clone)]
pub struct Gated<S> {
    gate: Gate,
    inner: S,
}

impl<S> tower::Service<Request> for Gated<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    /// Authenticates, checks the route's access for this method, checks that every path
    /// identifier is well formed, then attaches the [`crate::Principal`] for the handler.
    fn call(&mut self, req: Request) -> Self::Future {
        let (mut parts, body) = req.into_parts();
        // The extractor only reads the request's extensions; it never waits. Were it ever to,
        // the request is refused rather than let through.
        let params = RawPathParams::from_request_parts(&mut parts, &()).now_or_never();
        let mut req = Request::from_parts(parts, body);
        let Some(params) = params else {
            let e = ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error");
            return Either::Left(ready(Ok(e.into_response())));
        };
        let admitted = admit(&self.gate, params.as_ref().ok(), &req).and_then(|principal| {
            let params = params.map_err(|r| ApiError::bad_request("invalid_path", r.body_text()))?;
            well_formed(&params)?;
            Ok(principal)
        });
        match admitted {
            Ok(principal) => {
                req.extensions_mut().insert(principal);
                Either::Right(self.inner.call(req))
            }
            Err(e) => Either::Left(ready(Ok(e.into_response()))),
        }
    }
}

fn admit(gate: &Gate, params: Option<&RawPathParams>, req: &Request) -> Result<crate::Principal, ApiError> {
    let header = req.headers().get(axum::http::header::AUTHORIZATION).and_then(|h| h.to_str().ok());
    let principal = gate.auth.authenticate(header)?;
    let method = req.method().as_str();
    // A method missing from the table never reaches here (the router answers 405), but if it
    // did the gate would refuse rather than guess.
    let access = gate
        .access
        .iter()
        .find(|(m, _)| m.eq_ignore_ascii_case(method))
        .map(|(_, a)| *a)
        .ok_or_else(|| ApiError::forbidden("no access is defined for this method"))?;
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
    Ok(principal)
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
