//! Write handlers: stores, participants, identities, items, lifecycle, derivations, grants and
//! data-subject consent to grants (SPEC §6.3).
//!
//! Every write needs the admin scope, runs on the blocking pool (it waits for durability) and
//! answers with the committed revision and its consistency token. Every write to a store takes
//! an optional `Idempotency-Key` header ([`IdempotencyKey`]); creating a store is idempotent by
//! its id and body alone.

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use earshot_store::model::{
    Command, DeriveRequest, LifecycleRequest, NewConsent, NewGrant, NewIdentity, NewItem, NewParticipant, WriteOutcome,
};
use serde::Deserialize;

use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::reads::JsonBody;
use crate::AppState;

/// A write's JSON body: read and refused as reads' bodies are ([`JsonBody`]: the codes axum's
/// `Json` answers, without its limit wrapper and collector on the common path).
pub(crate) type Body<T> = Result<JsonBody<T>, ApiError>;
pub(crate) type Written = ApiResult<(StatusCode, Json<WriteOutcome>)>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewStore {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
}

pub async fn create_store(State(st): State<AppState>, p: Principal, body: Body<NewStore>) -> Written {
    p.require(Scope::Admin, None)?;
    let JsonBody(req) = body?;
    let e = st.earshot.clone();
    let out = blocking(move || e.create_store(&req.id, req.name)).await?;
    Ok((StatusCode::CREATED, Json(out)))
}

/// The optional `Idempotency-Key` header of a write: a retry under the same key with the same
/// request answers what the first did, without writing again (see `earshot_store::idempotency`).
/// A malformed key, or more than one, is refused before anything runs.
pub(crate) struct IdempotencyKey(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let malformed = || ApiError::from(earshot_store::StoreError::InvalidIdempotencyKey);
        let mut values = parts.headers.get_all("idempotency-key").iter();
        match (values.next(), values.next()) {
            (None, _) => Ok(IdempotencyKey(None)),
            (Some(value), None) => {
                let key = value.to_str().map_err(|_| malformed())?;
                earshot_store::idempotency::check_key(key)?;
                Ok(IdempotencyKey(Some(key.to_string())))
            }
            // Two keys for one request are ambiguous.
            (Some(_), Some(_)) => Err(malformed()),
        }
    }
}

/// Runs a write on the store's writer and waits for it to be durable; under a key, the command
/// carries the key and the fingerprint of (caller, command), which a retry must match.
pub(crate) async fn submit(
    st: &AppState,
    p: &Principal,
    store: &str,
    key: IdempotencyKey,
    cmd: Command,
) -> ApiResult<WriteOutcome> {
    p.require(Scope::Admin, Some(store))?;
    write(st, p, store, key, cmd).await
}

/// [`submit`] without the scope check (for writes that need less than admin).
pub(crate) async fn write(
    st: &AppState,
    p: &Principal,
    store: &str,
    key: IdempotencyKey,
    cmd: Command,
) -> ApiResult<WriteOutcome> {
    let handle = st.store(store).await?;
    let cmd = match key.0 {
        Some(k) => earshot_store::idempotency::keyed(k, &p.name, cmd)?,
        None => cmd,
    };
    let again = cmd.clone();
    let written = durable(&handle, cmd).await;
    // Only the refusal of a closed writer: a write that timed out (outcome unknown) may have
    // been applied, and is never sent again.
    let refused_unapplied = matches!(written, Err(earshot_store::StoreError::Unavailable));
    if refused_unapplied && handle.evicted() {
        // The store was evicted from memory between finding it and writing: the write was
        // refused before it was applied, so it goes to the store loaded again, once.
        let handle = st.store(store).await?;
        return durable(&handle, again).await.map_err(ApiError::from);
    }
    written.map_err(ApiError::from)
}

/// A write on the store's writer, awaited without a thread parked for it: the writer's answer
/// wakes this task (`StoreHandle::write_then`), where a blocking wait cost two more thread
/// switches per write (BENCHMARKS.md, "Acknowledged writes as a store grows"). Bounded as
/// `StoreHandle::write` is.
async fn durable(handle: &earshot_store::StoreHandle, cmd: Command) -> earshot_store::Result<WriteOutcome> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    handle.write_then(cmd, move |written| {
        // The waiter may have given up (its wait is bounded); its answer is then dropped.
        let _ = tx.send(written);
    })?;
    match tokio::time::timeout(handle.write_wait(), rx).await {
        Ok(Ok(written)) => written,
        // The writer shut down before answering.
        Ok(Err(_)) => Err(earshot_store::StoreError::Unavailable),
        Err(_) => Err(handle.not_durable_in_time()),
    }
}

pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> earshot_store::Result<T> + Send + 'static,
) -> ApiResult<T> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => {
            tracing::error!(error = %e, "blocking task failed");
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error"))
        }
    }
}

pub(crate) fn created(out: WriteOutcome) -> (StatusCode, Json<WriteOutcome>) {
    let status = if matches!(out.outcome.as_str(), "created" | "granted" | "quarantined") {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (status, Json(out))
}

pub async fn create_participant(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewParticipant>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::CreateParticipant(req)).await?))
}

pub async fn remove_participant(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Written {
    let Path((store, id)) = path?;
    Ok(created(submit(&st, &p, &store, key, Command::RemoveParticipant { id }).await?))
}

pub async fn bind_identity(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewIdentity>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::BindIdentity(req)).await?))
}

pub async fn create_item(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewItem>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::CreateItem(req)).await?))
}

pub async fn lifecycle(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Body<LifecycleRequest>,
) -> Written {
    let Path((store, item)) = path?;
    let JsonBody(request) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::Lifecycle { item, request }).await?))
}

pub async fn derive(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<String>, PathRejection>,
    body: Body<DeriveRequest>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(request) = body?;
    let issuer = p.name.clone();
    Ok(created(submit(&st, &p, &store, key, Command::Derive { request, issuer }).await?))
}

pub async fn grant(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Body<NewGrant>,
) -> Written {
    let Path((store, item)) = path?;
    let JsonBody(grant) = body?;
    let issuer = p.name.clone();
    Ok(created(submit(&st, &p, &store, key, Command::Grant { item, grant, issuer }).await?))
}

pub async fn revoke_grant(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Written {
    let Path((store, grant)) = path?;
    Ok(created(submit(&st, &p, &store, key, Command::RevokeGrant { grant }).await?))
}

/// `POST /grants/{grant}/consents`: a subject of the grant's item consents to it (SPEC §6.3).
pub async fn consent(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Body<NewConsent>,
) -> Written {
    let Path((store, grant)) = path?;
    let JsonBody(NewConsent { subject }) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::Consent { grant, subject }).await?))
}

/// `DELETE /grants/{grant}/consents/{subject}`: the subject withdraws its consent; the grant
/// stops admitting from the revision this write commits (SPEC §6.3).
pub async fn withdraw_consent(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Written {
    let Path((store, grant, subject)) = path?;
    Ok(created(submit(&st, &p, &store, key, Command::WithdrawConsent { grant, subject }).await?))
}
