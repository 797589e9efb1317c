//! List, relationship-tuple and reverse-question handlers: decode the query string or body,
//! pick one snapshot per `consistency`, and hand the work to the store's read side
//! (`earshot_store::{lists, tuples, reverse}`); also the store list and store deletion.
//!
//! A list's query string carries its filters, `limit`, `cursor`, and the consistency in a
//! query form: `at_least=<token>`, `at_exact=<token>` or `consistency=latest|fully_consistent`.
//! An unknown or repeated parameter is refused (`invalid_request`): a mistyped filter must not
//! silently widen the answer.

use std::sync::Arc;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::Json;
use earshot_store::lists::{
    CapabilityFilter, DeviceFilter, EdgeFilter, GrantFilter, IdentityFilter, ItemFilter, Page, Paging,
    ParticipantFilter, StoreSummary,
};
use earshot_store::model::{Consistency, WriteOutcome};
use earshot_store::reverse::{
    ReachableRequest, ReachableView, ReachersRequest, ReachersView, ViewerSetsView, ViewerSubsetsView, ViewersRequest,
};
use earshot_store::tuples::TupleFilter;
use earshot_store::{Snapshot, StoreHandle};
use serde::de::DeserializeOwned;

use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::reads::{at_point, at_revision, read_point, AtRevision, JsonBody};
use crate::writes::{blocking, Body};
use crate::AppState;

type StorePath = Result<Path<String>, PathRejection>;
type StoreAndId = Result<Path<(String, String)>, PathRejection>;
type RawQuery = Result<Query<Vec<(String, String)>>, QueryRejection>;
pub(crate) type Listed<T> = ApiResult<Json<AtRevision<Page<T>>>>;

/// Most query parameters a list request may carry (filters, paging, consistency).
const MAX_QUERY_PARAMS: usize = 16;

/// A list request's query string, split into its parts.
struct ListQuery<F> {
    consistency: Option<Consistency>,
    paging: Paging,
    filter: F,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_request", message)
}

fn parse_query<F: DeserializeOwned>(q: RawQuery) -> ApiResult<ListQuery<F>> {
    let Query(pairs) = q?;
    if pairs.len() > MAX_QUERY_PARAMS {
        return Err(bad(format!("at most {MAX_QUERY_PARAMS} query parameters")));
    }
    let mut rest = serde_json::Map::new();
    let (mut paging, mut at_least, mut at_exact, mut named) = (Paging::default(), None, None, None);
    for (k, v) in pairs {
        let seen = match k.as_str() {
            "limit" => {
                let n = v.parse::<usize>().map_err(|_| bad("`limit` must be a whole number"))?;
                paging.limit.replace(n).is_some()
            }
            "cursor" => paging.cursor.replace(v).is_some(),
            "at_least" => at_least.replace(v).is_some(),
            "at_exact" => at_exact.replace(v).is_some(),
            "consistency" => named.replace(v).is_some(),
            _ => rest.insert(k.clone(), serde_json::Value::String(v)).is_some(),
        };
        if seen {
            return Err(bad(format!("query parameter `{k}` is given twice")));
        }
    }
    let consistency = match (at_least, at_exact, named.as_deref()) {
        (None, None, None) => None,
        (Some(t), None, None) => Some(Consistency::AtLeast(t)),
        (None, Some(t), None) => Some(Consistency::AtExact(t)),
        (None, None, Some("latest")) => Some(Consistency::Latest),
        (None, None, Some("fully_consistent")) => Some(Consistency::FullyConsistent),
        (None, None, Some(_)) => return Err(bad("`consistency` is `latest` or `fully_consistent`")),
        _ => return Err(bad("name one of `at_least`, `at_exact` and `consistency`")),
    };
    let filter = serde_json::from_value(serde_json::Value::Object(rest)).map_err(|e| bad(e.to_string()))?;
    Ok(ListQuery { consistency, paging, filter })
}

/// The query string of a read of one record, view or decision of a store (not a list): the
/// consistency parameters alone (`at_least=<token>`, `at_exact=<token>` or
/// `consistency=latest|fully_consistent`). Any other parameter, or one given twice, is refused
/// with `invalid_request` naming it.
pub(crate) struct ReadQuery(pub(crate) Option<Consistency>);

impl<S: Send + Sync> FromRequestParts<S> for ReadQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let q: ListQuery<NoFilter> = parse_query(Query::try_from_uri(&parts.uri))?;
        if let Some(p) = [("limit", q.paging.limit.is_some()), ("cursor", q.paging.cursor.is_some())]
            .into_iter()
            .find_map(|(name, given)| given.then_some(name))
        {
            return Err(bad(format!("unknown query parameter `{p}`: this read is not a list")));
        }
        Ok(ReadQuery(q.consistency))
    }
}

/// The query string of a read that takes no parameter at all (an attempt's pinned snapshot,
/// an export, the metrics): any parameter is refused with `invalid_request` naming it.
pub(crate) struct NoQuery;

impl<S: Send + Sync> FromRequestParts<S> for NoQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        match first_parameter(&parts.uri) {
            Some(name) => Err(bad(format!("unknown query parameter `{name}`: this route takes none"))),
            None => Ok(NoQuery),
        }
    }
}

/// The name of the first parameter of a request's query string, if it has any (decoded; a
/// query string that does not decode is named as it is, shortened).
pub(crate) fn first_parameter(uri: &axum::http::Uri) -> Option<String> {
    let raw = uri.query().filter(|q| !q.is_empty())?;
    let decoded: Option<Query<Vec<(String, String)>>> = Query::try_from_uri(uri).ok();
    Some(match decoded.and_then(|Query(pairs)| pairs.into_iter().next()) {
        Some((name, _)) => name.chars().take(64).collect(),
        None => raw.chars().take(64).collect(),
    })
}

/// One list read: the scope on the store, the snapshot per `consistency`, and the page with
/// the revision it read (and, read at an older revision, the newest one).
async fn list<F, T>(
    st: &AppState,
    p: &Principal,
    path: StorePath,
    scope: Scope,
    q: RawQuery,
    read: impl FnOnce(&Snapshot, &F, &Paging, i64) -> earshot_store::Result<Page<T>>,
) -> Listed<T>
where
    F: DeserializeOwned,
{
    let Path(store) = path?;
    p.require(scope, Some(&store))?;
    let q: ListQuery<F> = parse_query(q)?;
    let h = st.store(&store).await?;
    let point = read_point(&h, q.consistency).await?;
    let page = read(&point.snapshot, &q.filter, &q.paging, point.at_ms)?;
    Ok(at_point(&h, &point, page))
}

pub async fn participants(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::lists::ParticipantView> {
    list(&st, &p, path, Scope::Admin, q, |s, f: &ParticipantFilter, pg, _| s.list_participants(f, pg)).await
}

pub async fn identities(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::lists::IdentityView> {
    list(&st, &p, path, Scope::Admin, q, |s, f: &IdentityFilter, pg, _| s.list_identities(f, pg)).await
}

pub async fn items(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::lists::ItemSummary> {
    list(&st, &p, path, Scope::Admin, q, |s, f: &ItemFilter, pg, _| s.list_items(f, pg)).await
}

pub async fn grants(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::model::GrantView> {
    list(&st, &p, path, Scope::Admin, q, |s, f: &GrantFilter, pg, now| s.list_grants(f, pg, now)).await
}

/// `GET /trust` (see `crate::trust`).
pub(crate) async fn trust(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::model::TrustView> {
    let read = |s: &Snapshot, f: &earshot_store::model::TrustFilter, pg: &Paging, _| s.list_trust(f, pg);
    list(&st, &p, path, Scope::Admin, q, read).await
}

pub async fn devices(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::lists::DeviceView> {
    list(&st, &p, path, Scope::Reader, q, |s, f: &DeviceFilter, pg, _| s.list_devices(f, pg)).await
}

pub async fn relations(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::lists::EdgeView> {
    list(&st, &p, path, Scope::Reader, q, |s, f: &EdgeFilter, pg, _| s.list_relations(f, pg)).await
}

pub async fn capabilities(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::devices::model::CapabilityView> {
    list(&st, &p, path, Scope::Reader, q, |s, f: &CapabilityFilter, pg, _| s.list_capabilities(f, pg)).await
}

/// `GET /relationships`: admin, since member tuples show who is in which audience (as the
/// admin item view and expand do).
pub async fn relationships(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: RawQuery,
) -> Listed<earshot_store::tuples::Tuple> {
    list(&st, &p, path, Scope::Admin, q, |s, f: &TupleFilter, pg, now| s.read_tuples(f, pg, now)).await
}

/// `GET /v1/stores`: the stores this token may read (any token; a token limited to some
/// stores sees only those), by id.
pub async fn stores(State(st): State<AppState>, p: Principal, q: RawQuery) -> ApiResult<Json<Page<StoreSummary>>> {
    let q: ListQuery<NoFilter> = parse_query(q)?;
    if q.consistency.is_some() {
        return Err(bad(
            "the store list reads no store's snapshot: `at_least`, `at_exact` and `consistency` do not apply to it",
        ));
    }
    let e = st.earshot.clone();
    let page = blocking(move || e.list_stores(&q.paging, |id| p.require(Scope::Reader, Some(id)).is_ok())).await?;
    Ok(Json(page))
}

/// A list with no filters of its own.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFilter {}

/// `?confirm=<store id>`: deleting a store names it twice.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    #[serde(default)]
    confirm: Option<String>,
}

/// `DELETE /v1/stores/{store}?confirm=<store id>`: removes the store and every record of it
/// (admin on every store, as creating one is).
pub async fn delete_store(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    q: Result<Query<Confirm>, QueryRejection>,
) -> ApiResult<Json<WriteOutcome>> {
    let Path(store) = path?;
    p.require(Scope::Admin, None)?;
    let Query(Confirm { confirm }) = q?;
    if confirm.as_deref() != Some(store.as_str()) {
        return Err(ApiError::bad_request(
            "confirmation_required",
            "deleting a store removes every record of it: repeat its id as `?confirm=<store id>`",
        ));
    }
    let e = st.earshot.clone();
    let id = store.clone();
    blocking(move || e.delete_store(&id)).await?;
    Ok(Json(WriteOutcome { outcome: "deleted".into(), ids: vec![store], ..WriteOutcome::default() }))
}

/// Reads a reverse question's snapshot per `consistency`: the handle, the snapshot, when to
/// judge constraints, and the newest revision when the snapshot is older (the answer is then
/// historical: see [`reverse_answer`]).
async fn point(
    st: &AppState,
    p: &Principal,
    store: &str,
    scope: Scope,
    c: Option<Consistency>,
) -> ApiResult<(Arc<StoreHandle>, earshot_store::ReadPoint)> {
    p.require(scope, Some(store))?;
    let h = st.store(store).await?;
    let point = read_point(&h, c).await?;
    Ok((h, point))
}

/// A reverse answer as read at `at`. At a revision older than the newest it is history, as a
/// historical `authorize` or `check` is (SPEC §2.6, the "new enemy" rule): `historical` turns it
/// into the form that allows and admits nothing and keeps what was so then under `historical`,
/// and `latest_revision` names the newest revision. A revocation is never undone by quoting an
/// older token, not even through a list of who may reach what.
fn reverse_answer<T>(
    h: &StoreHandle,
    at: &earshot_store::ReadPoint,
    view: T,
    historical: impl FnOnce(T) -> T,
) -> Json<AtRevision<T>> {
    let view = if at.historical.is_some() { historical(view) } else { view };
    let mut out = at_revision(h, &at.snapshot, view);
    out.latest_revision = at.historical;
    out
}

/// `POST /authorize/principals`: who can reach (device, path, action) now, each decided as
/// `authorize` decides it. Read at an older revision (`at_exact`) every entry is history
/// (`allowed: false`, `denied_historical_revision`, the entry of then under `historical`).
pub async fn who_can_reach(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    body: Body<ReachersRequest>,
) -> ApiResult<Json<AtRevision<ReachersView>>> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    earshot_store::devices::check_context(&req.context)?;
    let (h, at) = point(&st, &p, &store, Scope::Reader, req.consistency.clone()).await?;
    let view = at.snapshot.who_can_reach(&req.device, &req.path, &req.action, at.at_ms, &req.context)?;
    Ok(reverse_answer(&h, &at, view, ReachersView::into_historical))
}

/// `POST /authorize/reachable`: what a principal can reach now, with each authority. Read at
/// an older revision every entry is history and opens nothing, as for `/authorize/principals`.
pub async fn what_can_reach(
    State(st): State<AppState>,
    p: Principal,
    path: StorePath,
    body: Body<ReachableRequest>,
) -> ApiResult<Json<AtRevision<ReachableView>>> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    earshot_store::devices::check_context(&req.context)?;
    let (h, at) = point(&st, &p, &store, Scope::Reader, req.consistency.clone()).await?;
    let view = at.snapshot.what_can_reach(&req.principal, at.at_ms, &req.context)?;
    Ok(reverse_answer(&h, &at, view, ReachableView::into_historical))
}

/// `GET /items/{item}/viewers`: each authorized audience as the largest viewer set it admits
/// (admin, like expand). Read at an older revision the answer is history and admits nothing.
pub async fn viewer_sets(
    State(st): State<AppState>,
    p: Principal,
    path: StoreAndId,
    q: RawQuery,
) -> ApiResult<Json<AtRevision<ViewerSetsView>>> {
    let Path((store, item)) = path?;
    let q: ListQuery<NoFilter> = parse_query(q)?;
    if q.paging != Paging::default() {
        return Err(bad("the viewer sets of an item are one answer; omit `limit` and `cursor`"));
    }
    let (h, at) = point(&st, &p, &store, Scope::Admin, q.consistency).await?;
    let view = at.snapshot.viewer_sets(&item, at.at_ms)?;
    Ok(reverse_answer(&h, &at, view, ViewerSetsView::into_historical))
}

/// `POST /items/{item}/viewers`: which of the given participants each audience admits, and
/// whether one audience admits them all together. Read at an older revision the answer is
/// history and admits nobody.
pub async fn viewer_subsets(
    State(st): State<AppState>,
    p: Principal,
    path: StoreAndId,
    body: Body<ViewersRequest>,
) -> ApiResult<Json<AtRevision<ViewerSubsetsView>>> {
    let Path((store, item)) = path?;
    let JsonBody(req) = body?;
    let (h, at) = point(&st, &p, &store, Scope::Admin, req.consistency.clone()).await?;
    let view = at.snapshot.viewer_subsets(&item, &req.participants, at.at_ms)?;
    Ok(reverse_answer(&h, &at, view, ViewerSubsetsView::into_historical))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> RawQuery {
        Ok(Query(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()))
    }

    #[test]
    fn query_strings_split_into_paging_consistency_and_filters() {
        let got: ListQuery<ItemFilter> =
            parse_query(q(&[("owner", "o"), ("limit", "5"), ("cursor", "c"), ("at_least", "1.ab")])).unwrap();
        assert_eq!(got.filter.owner.as_deref(), Some("o"));
        assert_eq!(got.paging, Paging { limit: Some(5), cursor: Some("c".into()) });
        assert_eq!(got.consistency, Some(Consistency::AtLeast("1.ab".into())));
        for bad in [
            q(&[("ownr", "o")]),
            q(&[("owner", "o"), ("owner", "p")]),
            q(&[("limit", "x")]),
            q(&[("at_least", "1.ab"), ("at_exact", "1.ab")]),
            q(&[("consistency", "soon")]),
        ] {
            let e = parse_query::<ItemFilter>(bad).err().unwrap();
            assert_eq!(e.code, "invalid_request");
        }
    }
}
