//! Write handlers: stores, participants, identities, items, lifecycle, derivations, grants.
//!
//! Every write needs the admin scope, runs on the blocking pool (it waits for durability) and
//! answers with the committed revision and its consistency token.

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use earshot_store::model::{
    Command, DeriveRequest, LifecycleRequest, NewGrant, NewIdentity, NewItem, NewParticipant, WriteOutcome,
};
use serde::Deserialize;

use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::AppState;

pub(crate) type Body<T> = Result<Json<T>, JsonRejection>;
pub(crate) type Written = ApiResult<(StatusCode, Json<WriteOutcome>)>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewStore {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
}

pub async fn create_store(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    body: Body<NewStore>,
) -> Written {
    p.require(Scope::Admin, None)?;
    let Json(req) = body?;
    let e = st.earshot.clone();
    let out = blocking(move || e.create_store(&req.id, req.name)).await?;
    Ok((StatusCode::CREATED, Json(out)))
}

/// Runs a write on the store's writer and waits for it to be durable.
pub(crate) async fn submit(st: &AppState, p: &Principal, store: &str, cmd: Command) -> ApiResult<WriteOutcome> {
    p.require(Scope::Admin, Some(store))?;
    let handle = st.store(store).await?;
    blocking(move || handle.write(cmd)).await
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
    Extension(p): Extension<Principal>,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewParticipant>,
) -> Written {
    let Path(store) = path?;
    let Json(req) = body?;
    Ok(created(submit(&st, &p, &store, Command::CreateParticipant(req)).await?))
}

pub async fn remove_participant(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Written {
    let Path((store, id)) = path?;
    Ok(created(submit(&st, &p, &store, Command::RemoveParticipant { id }).await?))
}

pub async fn bind_identity(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewIdentity>,
) -> Written {
    let Path(store) = path?;
    let Json(req) = body?;
    Ok(created(submit(&st, &p, &store, Command::BindIdentity(req)).await?))
}

pub async fn create_item(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewItem>,
) -> Written {
    let Path(store) = path?;
    let Json(req) = body?;
    Ok(created(submit(&st, &p, &store, Command::CreateItem(req)).await?))
}

pub async fn lifecycle(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Body<LifecycleRequest>,
) -> Written {
    let Path((store, item)) = path?;
    let Json(request) = body?;
    Ok(created(submit(&st, &p, &store, Command::Lifecycle { item, request }).await?))
}

pub async fn derive(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<String>, PathRejection>,
    body: Body<DeriveRequest>,
) -> Written {
    let Path(store) = path?;
    let Json(request) = body?;
    let issuer = p.name.clone();
    Ok(created(submit(&st, &p, &store, Command::Derive { request, issuer }).await?))
}

pub async fn grant(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Body<NewGrant>,
) -> Written {
    let Path((store, item)) = path?;
    let Json(grant) = body?;
    let issuer = p.name.clone();
    Ok(created(submit(&st, &p, &store, Command::Grant { item, grant, issuer }).await?))
}

pub async fn revoke_grant(
    State(st): State<AppState>,
    Extension(p): Extension<Principal>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Written {
    let Path((store, grant)) = path?;
    Ok(created(submit(&st, &p, &store, Command::RevokeGrant { grant }).await?))
}
