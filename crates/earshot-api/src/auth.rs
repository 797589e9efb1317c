//! Bearer-token authentication with scopes, optionally limited to stores, and the start-up check
//! of the configured tokens. Tokens are compared by SHA-256 digest in constant time and never
//! logged.

use std::sync::Arc;

use serde::Deserialize;
use sha2::{Digest, Sha256};

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
    /// Who every request is when authentication is off.
    local: Principal,
}

/// The authenticated caller, attached to each request. One record per configured token,
/// shared: attaching it to a request and extracting it in a handler copy no strings.
#[derive(Debug, Clone)]
pub struct Principal(Arc<Caller>);

/// What a [`Principal`] is: its name, scope and stores.
#[derive(Debug)]
pub struct Caller {
    pub name: String,
    pub scope: Scope,
    pub stores: Option<Vec<String>>,
    /// Which configured token this is, by its place in [`Auth`] (`None`: not a configured
    /// token, such as the local caller when authentication is off).
    token: Option<usize>,
}

impl std::ops::Deref for Principal {
    type Target = Caller;
    fn deref(&self) -> &Caller {
        &self.0
    }
}

/// A handler's caller, taken out of the request where the gate put it (`gate.rs`), not copied
/// as axum's `Extension` would: a copy writes the caller's reference count, which every core's
/// requests share. Only a request the gate admitted carries a caller; any other is refused.
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, ApiError> {
        parts.extensions.remove::<Principal>().ok_or_else(|| ApiError::unauthenticated("no authenticated caller"))
    }
}

impl Principal {
    pub fn new(name: String, scope: Scope, stores: Option<Vec<String>>) -> Self {
        Principal(Arc::new(Caller { name, scope, stores, token: None }))
    }

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

/// Fewest characters a configured token may have: a short secret can be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// A `[[tokens]]` configuration that cannot be right. Names the entry, never its secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("token entry #{index} has an empty `name`")]
    EmptyName { index: usize },
    #[error("token `{name}` is shorter than {min} characters")]
    TooShort { name: String, min: usize },
    #[error("token `{name}` has characters other than visible ASCII (0x21 to 0x7E; no spaces)")]
    Unsendable { name: String },
    #[error("tokens `{first}` and `{second}` have the same secret; each token must be different")]
    DuplicateToken { first: String, second: String },
    #[error("two token entries are named `{name}`; names must be unique")]
    DuplicateName { name: String },
    #[error("token `{name}` lists no stores: omit `stores` for every store, or name at least one")]
    EmptyStores { name: String },
}

impl Auth {
    /// The configured tokens, checked: each has a name and a secret of at least
    /// [`MIN_TOKEN_LEN`] visible ASCII characters (0x21 to 0x7E, so no space), names and
    /// secrets are unique, and a `stores` list, when present, is not empty. No tokens means
    /// authentication is off.
    pub fn from_config(tokens: Vec<TokenConfig>) -> Result<Auth, ConfigError> {
        for (i, t) in tokens.iter().enumerate() {
            if t.name.trim().is_empty() {
                return Err(ConfigError::EmptyName { index: i + 1 });
            }
            if t.token.chars().count() < MIN_TOKEN_LEN {
                return Err(ConfigError::TooShort { name: t.name.clone(), min: MIN_TOKEN_LEN });
            }
            // Visible ASCII only, no space anywhere: `authenticate` reads the header as visible
            // ASCII and trims the presented token, and a secret is one word a client can paste.
            if !t.token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ConfigError::Unsendable { name: t.name.clone() });
            }
            if t.stores.as_ref().is_some_and(Vec::is_empty) {
                return Err(ConfigError::EmptyStores { name: t.name.clone() });
            }
            if let Some(first) = tokens[..i].iter().find(|o| o.name == t.name) {
                return Err(ConfigError::DuplicateName { name: first.name.clone() });
            }
            if let Some(first) = tokens[..i].iter().find(|o| o.token == t.token) {
                return Err(ConfigError::DuplicateToken { first: first.name.clone(), second: t.name.clone() });
            }
        }
        Ok(if tokens.is_empty() { Auth::disabled() } else { Auth::new(tokens) })
    }

    /// The tokens as given, unchecked; [`Auth::from_config`] is the checked way in.
    pub fn new(tokens: Vec<TokenConfig>) -> Self {
        Auth {
            entries: tokens
                .into_iter()
                .enumerate()
                .map(|(i, t)| Entry {
                    digest: digest(&t.token),
                    principal: Principal(Arc::new(Caller {
                        name: t.name,
                        scope: t.scope,
                        stores: t.stores,
                        token: Some(i),
                    })),
                })
                .collect(),
            local: Self::local(),
        }
    }

    fn local() -> Principal {
        Principal::new("local".into(), Scope::Admin, None)
    }

    /// Authentication off: every request acts as a local administrator.
    pub fn disabled() -> Self {
        Auth { entries: Vec::new(), local: Self::local() }
    }

    pub fn enabled(&self) -> bool {
        !self.entries.is_empty()
    }

    /// The `name` of the configured token `caller` presented, for the request log (never its
    /// secret); `None` for a caller that is no configured token (authentication off). Borrowed
    /// from the configuration, so that a request's log line copies no string and shares no
    /// count with other requests.
    pub(crate) fn token_name(&self, caller: &Caller) -> Option<&str> {
        self.entries.get(caller.token?).map(|e| e.principal.name.as_str())
    }

    pub(crate) fn authenticate(&self, header: Option<&str>) -> Result<Principal, ApiError> {
        if !self.enabled() {
            return Ok(self.local.clone());
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    fn tok(name: &str, secret: &str, stores: Option<&[&str]>) -> TokenConfig {
        TokenConfig {
            name: name.into(),
            token: secret.into(),
            scope: Scope::Reader,
            stores: stores.map(|s| s.iter().map(|x| x.to_string()).collect()),
        }
    }

    fn refused(tokens: Vec<TokenConfig>) -> String {
        match Auth::from_config(tokens) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    }

    const A: &str = "aaaaaaaaaaaaaaaa-secret";
    const B: &str = "bbbbbbbbbbbbbbbb-secret";

    #[test]
    fn good_tokens_are_accepted_and_none_means_off() {
        let auth = Auth::from_config(vec![tok("ops", A, None), tok("agent", B, Some(&["demo"]))]).unwrap();
        assert!(auth.enabled());
        assert!(!Auth::from_config(Vec::new()).unwrap().enabled());
    }

    #[test]
    fn empty_and_short_tokens_are_refused_by_name_without_the_secret() {
        let e = refused(vec![tok("ops", "", None)]);
        assert_eq!(e, "token `ops` is shorter than 16 characters");
        let e = refused(vec![tok("ops", A, None), tok("short-one", "x", None)]);
        assert_eq!(e, "token `short-one` is shorter than 16 characters");
        assert!(refused(vec![tok("ops", &"y".repeat(MIN_TOKEN_LEN - 1), None)]).contains("shorter"));
        assert!(Auth::from_config(vec![tok("ops", &"y".repeat(MIN_TOKEN_LEN), None)]).is_ok());
    }

    #[test]
    fn the_same_secret_twice_is_refused_whatever_the_scopes() {
        let mut admin = tok("ops", A, None);
        admin.scope = Scope::Admin;
        let e = refused(vec![admin, tok("agent", A, Some(&["demo"]))]);
        assert_eq!(e, "tokens `ops` and `agent` have the same secret; each token must be different");
        assert!(!e.contains(A));
    }

    #[test]
    fn duplicate_and_empty_names_and_empty_store_lists_are_refused() {
        assert!(refused(vec![tok("ops", A, None), tok("ops", B, None)]).contains("two token entries are named `ops`"));
        assert_eq!(refused(vec![tok(" ", A, None)]), "token entry #1 has an empty `name`");
        assert!(refused(vec![tok("agent", A, Some(&[]))]).contains("token `agent` lists no stores"));
    }

    #[test]
    fn secrets_a_client_cannot_send_are_refused() {
        assert!(refused(vec![tok("ops", &format!(" {A}"), None)]).contains("`ops` has characters"));
        assert!(refused(vec![tok("ops", &format!("{A}\u{e9}"), None)]).contains("`ops` has characters"));
        assert!(refused(vec![tok("ops", &format!("{A}\t"), None)]).contains("`ops` has characters"));
    }

    /// The rule is the message's: visible ASCII only, so a space inside a secret is refused
    /// too, and the refusal names the entry, never the secret.
    #[test]
    fn a_secret_with_an_inner_space_is_refused_as_the_message_says() {
        let e = refused(vec![tok("ops", "aaaaaaaa bbbbbbbb-secret", None)]);
        assert_eq!(e, "token `ops` has characters other than visible ASCII (0x21 to 0x7E; no spaces)");
        assert!(!e.contains("bbbbbbbb"));
        assert!(Auth::from_config(vec![tok("ops", "!aaaaaaaaaaaaaaa~", None)]).is_ok(), "0x21 and 0x7E are visible");
    }

    #[test]
    fn an_unauthenticated_answer_names_the_bearer_scheme() {
        let auth = Auth::from_config(vec![tok("ops", A, None)]).unwrap();
        for header in [None, Some("Basic abc"), Some("Bearer wrong-token-0123456789")] {
            let resp = auth.authenticate(header).unwrap_err().into_response();
            assert_eq!(resp.status(), axum::http::StatusCode::UNAUTHORIZED);
            assert_eq!(resp.headers().get(axum::http::header::WWW_AUTHENTICATE).unwrap(), "Bearer");
        }
    }

    /// A handler's caller is taken out of the request, once; a request the gate did not admit
    /// has none and is refused, never served as someone.
    #[tokio::test]
    async fn a_handler_takes_the_caller_the_gate_attached_and_refuses_without_one() {
        use axum::extract::FromRequestParts;
        let (mut parts, ()) = axum::http::Request::new(()).into_parts();
        parts.extensions.insert(Principal::new("ann".into(), Scope::Reader, None));
        let p = Principal::from_request_parts(&mut parts, &()).await.expect("the attached caller");
        assert_eq!((p.name.as_str(), p.scope), ("ann", Scope::Reader));
        let refused = Principal::from_request_parts(&mut parts, &()).await.expect_err("taken once");
        assert_eq!(refused.into_response().status(), axum::http::StatusCode::UNAUTHORIZED);
    }
}
