//! Bearer-token authentication with scopes, optionally limited to stores. Tokens are compared
//! by SHA-256 digest in constant time and never logged.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::sync::Arc;

use crate::error::ApiError;

/// What a token may do. `admin` implies `reader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Reader,
    Admin,
}

/// One configured token.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// Who the token belongs to; recorded as the issuer of grants.
    pub name: String,
    /// The secret itself.
    pub token: String,
    pub scope: Scope,
    /// Stores the token may touch; absent means every store.
    #[serde(default)]
    pub stores: Option<Vec<String>>,
}

impl std::fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenConfig")
            .field("name", &self.name)
            .field("token", &"<redacted>")
            .field("scope", &self.scope)
            .field("stores", &self.stores)
            .finish()
    }
}

struct Entry {
    digest: [u8; 32],
    principal: Principal,
}

/// The configured tokens; empty means authentication is off.
pub struct Auth {
    entries: Vec<Entry>,
}

/// The authenticated caller, attached to each request.
#[derive(Debug, Clone)]
pub struct Principal {
    pub name: String,
    pub scope: Scope,
    pub stores: Option<Vec<String>>,
}

impl Principal {
    /// Refuses unless this principal holds `scope` on `store` (or globally, for `None`).
    pub fn require(&self, scope: Scope, store: Option<&str>) -> Result<(), ApiError> {
        if scope == Scope::Admin && self.scope != Scope::Admin {
            return Err(ApiError::forbidden("this operation needs the admin scope"));
        }
        match (&self.stores, store) {
            (None, _) => Ok(()),
            (Some(allowed), Some(s)) if allowed.iter().any(|a| a == s) => Ok(()),
            (Some(_), _) => Err(ApiError::forbidden("this token is not valid for this store")),
        }
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Auth {
    pub fn new(tokens: Vec<TokenConfig>) -> Self {
        Auth {
            entries: tokens
                .into_iter()
                .map(|t| Entry {
                    digest: digest(&t.token),
                    principal: Principal { name: t.name, scope: t.scope, stores: t.stores },
                })
                .collect(),
        }
    }

    /// Authentication off: every request acts as a local administrator.
    pub fn disabled() -> Self {
        Auth { entries: Vec::new() }
    }

    pub fn enabled(&self) -> bool {
        !self.entries.is_empty()
    }

    pub(crate) fn authenticate(&self, header: Option<&str>) -> Result<Principal, ApiError> {
        if !self.enabled() {
            return Ok(Principal { name: "local".into(), scope: Scope::Admin, stores: None });
        }
        let header = header.ok_or_else(|| ApiError::unauthenticated("missing bearer token"))?;
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        let presented = header
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token)
            .ok_or_else(|| ApiError::unauthenticated("expected `Authorization: Bearer <token>`"))?;
        let d = digest(presented.trim());
        let mut found = None;
        for e in &self.entries {
            if ct_eq(&e.digest, &d) && found.is_none() {
                found = Some(e.principal.clone());
            }
        }
        found.ok_or_else(|| ApiError::unauthenticated("unknown bearer token"))
    }
}

/// Middleware: authenticates and attaches the [`Principal`] to the request.
pub async fn authenticate(State(auth): State<Arc<Auth>>, mut req: Request, next: Next) -> Response {
    let header = req.headers().get(AUTHORIZATION).and_then(|h| h.to_str().ok());
    match auth.authenticate(header) {
        Ok(p) => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        Err(e) => e.into_response(),
    }
}
