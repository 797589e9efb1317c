//! Device handlers (SPEC §2): schema, devices, relation grants, capabilities, `authorize` and the
//! explicit consumption of a use.
//!
//! `authorize` is a read (reader scope, any consistency) and never writes; `POST /uses` is the
//! one decision that writes, and it is explicit. Revocations name who revokes with `?by=`.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use earshot_store::devices::model::{
    AuthorizeRequest, AuthorizeView, ChainView, DependentsView, NewCapability, NewDevice, NewRelation, SchemaInput,
    SchemaView,
};
use earshot_store::model::Command;
use serde::Deserialize;

use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::lists::ReadQuery;
use crate::reads::{at_point, read_point, AtRevision, JsonBody};
use crate::writes::{created, submit, Body, IdempotencyKey, Written};
use crate::AppState;

type StorePath = Result<Path<String>, PathRejection>;
type StoreAndId = Result<Path<(String, String)>, PathRejection>;

/// `?by=<participant>`: who revokes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct By {
    pub by: String,
}

pub async fn put_schema(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StorePath,
    body: Body<SchemaInput>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::PutSchema(req)).await?))
}

pub async fn get_schema(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    ReadQuery(consistency): ReadQuery,
) -> ApiResult<Json<AtRevision<SchemaView>>> {
    let Path(store) = path?;
    p.require(Scope::Reader, Some(&store))?;
    let h = st.store(&store).await?;
    let point = read_point(&h, consistency).await?;
    let view = point.snapshot.schema_view()?;
    Ok(at_point(&h, &point, view))
}

pub async fn create_device(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StorePath,
    body: Body<NewDevice>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::CreateDevice(req)).await?))
}

pub async fn create_relation(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StorePath,
    body: Body<NewRelation>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::CreateRelation(req)).await?))
}

pub async fn revoke_relation(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StoreAndId,
    by: Result<Query<By>, QueryRejection>,
) -> Written {
    let Path((store, edge)) = path?;
    let Query(By { by }) = by?;
    Ok(created(submit(&st, &p, &store, key, Command::RevokeRelation { edge, by }).await?))
}

pub async fn create_capability(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StorePath,
    body: Body<NewCapability>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    Ok(created(submit(&st, &p, &store, key, Command::CreateCapability(req)).await?))
}

pub async fn revoke_capability(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StoreAndId,
    by: Result<Query<By>, QueryRejection>,
) -> Written {
    let Path((store, capability)) = path?;
    let Query(By { by }) = by?;
    Ok(created(submit(&st, &p, &store, key, Command::RevokeCapability { capability, by }).await?))
}

pub async fn capability_chain(
    State(st): State<AppState>,
    p: Principal,
    path: StoreAndId,
    ReadQuery(consistency): ReadQuery,
) -> ApiResult<Json<AtRevision<ChainView>>> {
    let Path((store, c)) = path?;
    p.require(Scope::Reader, Some(&store))?;
    let h = st.store(&store).await?;
    let point = read_point(&h, consistency).await?;
    let view = point.snapshot.capability_chain(&c)?;
    Ok(at_point(&h, &point, view))
}

pub async fn capability_dependents(
    State(st): State<AppState>,
    p: Principal,
    path: StoreAndId,
    ReadQuery(consistency): ReadQuery,
) -> ApiResult<Json<AtRevision<DependentsView>>> {
    let Path((store, c)) = path?;
    p.require(Scope::Reader, Some(&store))?;
    let h = st.store(&store).await?;
    let point = read_point(&h, consistency).await?;
    let view = point.snapshot.capability_dependents(&c)?;
    Ok(at_point(&h, &point, view))
}

/// `POST /authorize`: pure, over the snapshot `consistency` picks, at the current time.
pub async fn authorize(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    body: Body<AuthorizeRequest>,
) -> ApiResult<Json<AtRevision<AuthorizeView>>> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    p.require(Scope::Reader, Some(&store))?;
    earshot_store::devices::check_context(&req.context)?;
    let h = st.store(&store).await?;
    let point = read_point(&h, req.consistency.clone()).await?;
    let view =
        point.snapshot.authorize(&req.principal, &req.device, &req.path, &req.action, point.at_ms, &req.context)?;
    // SPEC §2.6: a decision at an older revision explains what was decided then; it is never a
    // usable allow, so a revocation cannot be undone by quoting an older token.
    let view = if point.historical.is_some() { view.into_historical() } else { view };
    st.metrics.record_decision(crate::metrics::DecisionKind::Authorize, &view.reason);
    Ok(at_point(&h, &point, view))
}

/// `POST /uses`: decides at the writer and, on an allow, consumes one use (reader scope: it can
/// only ever use up authority, never add any).
pub async fn consume_use(
    State(st): State<AppState>,
    p: Principal,
    key: IdempotencyKey,
    path: StorePath,
    body: Body<AuthorizeRequest>,
) -> Written {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    p.require(Scope::Reader, Some(&store))?;
    earshot_store::devices::check_context(&req.context)?;
    if req.consistency.is_some() {
        return Err(crate::error::ApiError::bad_request(
            "invalid_request",
            "`POST /uses` always decides at the latest revision; omit `consistency`",
        ));
    }
    let out = crate::writes::write(&st, &p, &store, key, Command::ConsumeUse(req)).await?;
    if let Some(decision) = &out.decision {
        st.metrics.record_decision(crate::metrics::DecisionKind::Use, &decision.reason);
    }
    Ok((StatusCode::OK, Json(out)))
}
