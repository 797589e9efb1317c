//! Trust delegation handlers (SPEC §6.2): an owner delegates authority to a participant, whose
//! items then count as instructions in the owner's contexts, until the delegation is revoked.
//! Recording and revoking are writes like any other (a revision each, admin scope); reading
//! one or listing them needs the admin scope too (they are admin records, as grants are).

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use earshot_store::model::{Command, NewTrust, TrustView, WriteOutcome};

use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::reads::JsonBody;
use crate::writes::{created, submit, Body, IdempotencyKey, Written};
use crate::AppState;

/// `POST /v1/stores/{store}/trust`.
pub async fn create(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<String>, PathRejection>,
    body: Body<NewTrust>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(trust) = body?;
    let issuer = p.name.clone();
    Ok(created(submit(&st, &p, &store, key, Command::CreateTrust { trust, issuer }).await?))
}

/// `DELETE /v1/stores/{store}/trust/{trust}`: revokes the delegation from the next revision.
pub async fn revoke(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: Result<Path<(String, String)>, PathRejection>,
) -> ApiResult<(StatusCode, Json<WriteOutcome>)> {
    let Path((store, trust)) = path?;
    Ok(created(submit(&st, &p, &store, key, Command::RevokeTrust { trust }).await?))
}

/// `GET /v1/stores/{store}/trust/{trust}`, at the latest revision.
pub async fn read(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<(String, String)>, PathRejection>,
    crate::lists::ReadQuery(consistency): crate::lists::ReadQuery,
) -> ApiResult<Json<crate::reads::AtRevision<TrustView>>> {
    let Path((store, trust)) = path?;
    p.require(Scope::Admin, Some(&store))?;
    let h = st.store(&store).await?;
    let point = crate::reads::read_point(&h, consistency).await?;
    let view = point.snapshot.trust_view(&trust)?;
    Ok(crate::reads::at_point(&h, &point, view))
}

/// `GET /v1/stores/{store}/trust`: the delegations, filtered by `owner`, `participant`, `live`.
pub async fn list(
    st: State<AppState>,
    p: Principal,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> crate::lists::Listed<TrustView> {
    crate::lists::trust(st, p, path, q).await
}
