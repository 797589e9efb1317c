//! Read handlers: check, bulk check, lookup, attempts, expand, the admin item view, metrics.
//!
//! Each read picks exactly one snapshot (latest, `at_least`, `at_exact`, or an attempt's pinned
//! one) and answers with the revision it read and that revision's token.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use earshot_store::model::{
    format_time, AudienceView, Consistency, ContainerInput, ContainerResolution, ContextRequest, DecisionView,
    ItemView, LookupPage, SealedContext,
};
use earshot_store::{ReadPoint, ResolvedContainer, Snapshot, StoreHandle};
use serde::{Deserialize, Serialize};

use crate::answer::{CheckAnswer, JsonAnswer};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::lists::{NoQuery, ReadQuery};
use crate::metrics::DecisionKind;
use crate::writes::blocking;
use crate::AppState;

type Body<T> = Result<JsonBody<T>, ApiError>;

/// A JSON request body, accepted and refused with the codes axum's [`Json`] gets (its
/// rejections map to [`ApiError`] in `error.rs`), but cheaper on the common path. A body sent
/// as `application/json` is read here ([`read_bounded`]), bounded by [`crate::MAX_BODY_BYTES`]
/// (the limit the router sets for every route but import, which does not use this), without
/// axum's limit wrapper and collector, and parsed with plain `serde_json`; only a body that
/// fails to parse is parsed again through [`Json::from_bytes`] (which names the failing field
/// in its message). Any other content type goes to [`Json`] itself, so those refusals are
/// axum's.
pub(crate) struct JsonBody<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let plain_json = req.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"application/json");
        if !plain_json {
            return Ok(JsonBody(Json::<T>::from_request(req, state).await?.0));
        }
        let bytes = read_bounded(req.into_body(), crate::MAX_BODY_BYTES).await?;
        match serde_json::from_slice(&bytes) {
            Ok(v) => Ok(JsonBody(v)),
            Err(_) => Ok(JsonBody(Json::<T>::from_bytes(&bytes)?.0)),
        }
    }
}

/// A request body, whole, refused with `413 body_too_large` as soon as it is known to pass
/// `limit` bytes (by its declared length, before anything is read, or as it arrives). A body
/// that arrives as one frame, as a small body usually does, is returned without a copy.
async fn read_bounded(mut body: axum::body::Body, limit: usize) -> Result<axum::body::Bytes, ApiError> {
    use axum::body::HttpBody as _;
    use http_body_util::BodyExt as _;
    let too_large = || ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "request body is too large");
    let failed =
        |e: axum::Error| ApiError::bad_request("invalid_request", format!("Failed to buffer the request body: {e}"));
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let mut whole: Option<axum::body::Bytes> = None;
    let mut more: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(failed)?.into_data() else {
            // Trailers end the body.
            break;
        };
        let so_far = whole.as_ref().map_or(0, |w| w.len()) + more.len();
        if so_far + data.len() > limit {
            return Err(too_large());
        }
        match whole.take() {
            None if more.is_empty() => whole = Some(data),
            None => more.extend_from_slice(&data),
            Some(first) => {
                more.reserve(first.len() + data.len());
                more.extend_from_slice(&first);
                more.extend_from_slice(&data);
            }
        }
        if body.is_end_stream() {
            break;
        }
    }
    Ok(whole.unwrap_or_else(|| more.into()))
}

/// The snapshot, container and time one read uses, and the newest revision when the snapshot
/// is older (the answer is then historical: SPEC §2.6).
struct ReadAt<'s> {
    snapshot: &'s Snapshot,
    container: ResolvedContainer,
    now_ms: i64,
    historical: Option<u64>,
}

impl ReadAt<'_> {
    /// A decision as this read answers it: historical ones never admit.
    fn answer(&self, d: DecisionView) -> DecisionView {
        if self.historical.is_some() {
            d.into_historical()
        } else {
            d
        }
    }

    fn at_revision<T>(&self, h: &StoreHandle, body: T) -> JsonAnswer<AtRevision<T>> {
        let Json(mut out) = at_revision(h, self.snapshot, body);
        out.latest_revision = self.historical;
        out.container = Some(self.container.resolution.clone());
        JsonAnswer(out)
    }
}

/// What one read asks for: the store, the item when it is a check of one item by name, and
/// the container, attempt and consistency of the request.
struct ReadOf<'r> {
    store: &'r str,
    item: Option<&'r str>,
    container: Option<ContainerInput>,
    attempt: Option<String>,
    consistency: Option<Consistency>,
}

/// Runs `decide` on the read `of` asks for: an attempt's pinned snapshot, or one per
/// `consistency`, with the container resolved in it.
///
/// The common read, the latest state of a store running here, borrows the store and its
/// snapshot ([`latest_running`]); the others hold them (they may wait, or start the store).
async fn read_with<R>(
    st: &AppState,
    p: &Principal,
    of: ReadOf<'_>,
    decide: impl FnOnce(&StoreHandle, &ReadAt<'_>) -> ApiResult<R>,
) -> ApiResult<R> {
    p.require(Scope::Reader, Some(of.store))?;
    let decide = match latest_running(st, &of, decide) {
        Ok(answer) => return answer,
        Err(decide) => decide,
    };
    let handle = st.store(of.store).await?;
    if let Some(a) = of.attempt {
        if of.container.is_some() || of.consistency.is_some() {
            return Err(ApiError::bad_request(
                "invalid_request",
                "a read under an attempt uses the attempt's container and snapshot; omit `container` and `consistency`",
            ));
        }
        // An attempt's pinned snapshot is its own newest state (SPEC §1.10): never historical.
        // One another replica created is read from the datastore (off the async workers).
        let a = match handle.attempt_here(&a) {
            Some(a) => a,
            None => {
                let h = handle.clone();
                blocking(move || h.attempt(&a)).await?
            }
        };
        return decide(
            &handle,
            &ReadAt { snapshot: &a.snapshot, container: a.resolved, now_ms: a.at_ms, historical: None },
        );
    }
    let container = required_container(of.container.as_ref())?;
    let point = read_point(&handle, of.consistency).await?;
    decide_at(&handle, &point.snapshot, point.at_ms, point.historical, of.item, container, decide)
}

/// The read of the latest state of a store running here, without waiting: the store and its
/// snapshot are borrowed ([`earshot_store::Earshot::running_now`], [`StoreHandle::latest_ref`]),
/// so two cores serving reads at once share no lock and no reference count. Gives `decide`
/// back for any other read (an attempt, another consistency, a store not running here, or no
/// container, which the caller refuses).
fn latest_running<R, F>(st: &AppState, of: &ReadOf<'_>, decide: F) -> Result<ApiResult<R>, F>
where
    F: FnOnce(&StoreHandle, &ReadAt<'_>) -> ApiResult<R>,
{
    let latest = matches!(of.consistency, None | Some(Consistency::Latest));
    let (Some(container), None, true) = (&of.container, &of.attempt, latest) else {
        return Err(decide);
    };
    let running = st.earshot.running_now();
    // A copy retired by another replica's delete or re-creation is replaced on the slow path.
    let Some(handle) = running.get(of.store).filter(|h| !h.retired()) else {
        return Err(decide);
    };
    handle.touch();
    // The instant first, then the snapshot, as `read_point` does for a latest read.
    let now_ms = handle.now_ms();
    let snapshot = handle.latest_ref();
    Ok(decide_at(handle, &snapshot, now_ms, None, of.item, container, decide))
}

/// Resolves `container` in `snapshot` and decides. `item`, when the read is a check of one
/// item by name, has its lines in the name table prefetched before the container is
/// resolved, so the two overlap ([`earshot_store::MemorySnapshot::touch_item`]).
fn decide_at<R>(
    handle: &StoreHandle,
    snapshot: &Snapshot,
    now_ms: i64,
    historical: Option<u64>,
    item: Option<&str>,
    container: &ContainerInput,
    decide: impl FnOnce(&StoreHandle, &ReadAt<'_>) -> ApiResult<R>,
) -> ApiResult<R> {
    if let Some(item) = item {
        snapshot.touch_item(item);
    }
    let container = snapshot.resolve_container(container)?;
    decide(handle, &ReadAt { snapshot, container, now_ms, historical })
}

fn required_container(c: Option<&ContainerInput>) -> ApiResult<&ContainerInput> {
    c.ok_or_else(|| ApiError::bad_request("invalid_request", "`container` (or `attempt`) is required"))
}

/// The snapshot and instant a decision reads, per `consistency` (waits, bounded, off the
/// async workers when it may wait).
pub(crate) async fn read_point(handle: &Arc<StoreHandle>, consistency: Option<Consistency>) -> ApiResult<ReadPoint> {
    let now_ms = handle.now_ms();
    match consistency.unwrap_or_default() {
        Consistency::Latest => Ok(ReadPoint { snapshot: handle.latest(), at_ms: now_ms, historical: None }),
        c => {
            let h = handle.clone();
            blocking(move || h.read_point(&c, now_ms)).await
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    pub item: String,
    #[serde(default)]
    pub container: Option<ContainerInput>,
    #[serde(default)]
    pub attempt: Option<String>,
    #[serde(default)]
    pub consistency: Option<Consistency>,
}

/// Any read's answer: its body, plus the revision it read and that revision's token.
#[derive(Debug, Serialize)]
pub struct AtRevision<T> {
    #[serde(flatten)]
    pub body: T,
    pub revision: u64,
    pub token: String,
    /// The newest revision, when `revision` is older: the answer is historical (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<u64>,
    /// Reads for a container: whether it resolved and, when not, why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<ContainerResolution>,
}

pub(crate) fn at_revision<T>(h: &StoreHandle, snapshot: &Snapshot, body: T) -> Json<AtRevision<T>> {
    Json(AtRevision {
        body,
        revision: snapshot.revision(),
        token: h.token(snapshot.revision()),
        latest_revision: None,
        container: None,
    })
}

/// A view read at `point`, with the revision and token it read: marked by `latest_revision`
/// when the revision's answers may not be used now (`at_exact` of an older revision, or of one
/// whose windows time has moved past: SPEC §2.6).
pub(crate) fn at_point<T>(h: &StoreHandle, point: &ReadPoint, view: T) -> Json<AtRevision<T>> {
    let Json(mut out) = at_revision(h, &point.snapshot, view);
    out.latest_revision = point.historical;
    Json(out)
}

pub async fn check(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<String>, PathRejection>,
    body: Body<CheckRequest>,
) -> ApiResult<CheckAnswer> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    let of = ReadOf {
        store: &store,
        item: Some(&req.item),
        container: req.container,
        attempt: req.attempt,
        consistency: req.consistency,
    };
    read_with(&st, &p, of, |h, at| {
        let decision = at.answer(at.snapshot.check(&req.item, &at.container, at.now_ms)?);
        st.metrics.record_decision(DecisionKind::Check, &decision.reason);
        Ok(CheckAnswer(at.at_revision(h, decision).0))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkRequest {
    pub items: Vec<String>,
    #[serde(default)]
    pub container: Option<ContainerInput>,
    #[serde(default)]
    pub attempt: Option<String>,
    #[serde(default)]
    pub consistency: Option<Consistency>,
}

#[derive(Debug, Serialize)]
pub struct BulkResults {
    pub results: Vec<DecisionView>,
}

pub async fn check_bulk(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<String>, PathRejection>,
    body: Body<BulkRequest>,
) -> ApiResult<JsonAnswer<AtRevision<BulkResults>>> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    let of = ReadOf {
        store: &store,
        item: None,
        container: req.container,
        attempt: req.attempt,
        consistency: req.consistency,
    };
    read_with(&st, &p, of, |h, at| {
        let results = at.snapshot.check_bulk(&req.items, &at.container, at.now_ms)?;
        let results: Vec<DecisionView> = results.into_iter().map(|d| at.answer(d)).collect();
        st.metrics.record_decisions(DecisionKind::CheckBulk, results.iter().map(|d| d.reason.as_ref()));
        Ok(at.at_revision(h, BulkResults { results }))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupRequest {
    #[serde(default)]
    pub container: Option<ContainerInput>,
    #[serde(default)]
    pub attempt: Option<String>,
    #[serde(default)]
    pub consistency: Option<Consistency>,
    /// Whose memories to search; defaults to the container's owner.
    #[serde(default)]
    pub owners: Vec<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub cursor: Option<String>,
}

pub async fn lookup(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<String>, PathRejection>,
    body: Body<LookupRequest>,
) -> ApiResult<JsonAnswer<AtRevision<LookupPage>>> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    let of = ReadOf {
        store: &store,
        item: None,
        container: req.container,
        attempt: req.attempt,
        consistency: req.consistency,
    };
    read_with(&st, &p, of, |h, at| {
        let mut page = at.snapshot.lookup(&at.container, &req.owners, req.cursor.as_deref(), req.limit, at.now_ms)?;
        page.items = std::mem::take(&mut page.items).into_iter().map(|d| at.answer(d)).collect();
        st.metrics.record_decisions(DecisionKind::Lookup, page.items.iter().map(|d| d.reason.as_ref()));
        Ok(at.at_revision(h, page))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptRequest {
    pub container: ContainerInput,
    #[serde(default)]
    pub consistency: Option<Consistency>,
}

#[derive(Debug, Serialize)]
pub struct AttemptResponse {
    pub attempt: String,
    pub revision: u64,
    pub token: String,
    pub at: String,
    pub container: ContainerInput,
    pub resolved: bool,
    /// Whether the container resolved and, when not, why (absent for contexts sealed before
    /// it was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ContainerResolution>,
    /// The sealed exact context, once one was assembled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<SealedContext>,
}

pub async fn create_attempt(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<String>, PathRejection>,
    body: Body<AttemptRequest>,
) -> ApiResult<(StatusCode, Json<AttemptResponse>)> {
    let Path(store) = path?;
    let JsonBody(req) = body?;
    p.require(Scope::Reader, Some(&store))?;
    let handle = st.store(&store).await?;
    let point = read_point(&handle, req.consistency).await?;
    if let Some(latest) = point.historical {
        // An attempt is where memory is used (its context enters a model): only the newest state.
        let requested = point.snapshot.revision();
        return Err(earshot_store::StoreError::RevisionNotLatest { requested, latest }.into());
    }
    let snapshot = point.snapshot;
    // Attempt ids are random and unguessable (UUID v7: 74 random bits), and recorded in the
    // datastore before the answer (off the async workers).
    let h = handle.clone();
    let container = req.container;
    let a = blocking(move || h.create_attempt(container, snapshot, earshot_store::new_attempt_id())).await?;
    Ok((StatusCode::CREATED, Json(attempt_response(&handle, &a))))
}

fn attempt_response(h: &StoreHandle, a: &earshot_store::Attempt) -> AttemptResponse {
    AttemptResponse {
        attempt: a.id.clone(),
        revision: a.snapshot.revision(),
        token: h.token(a.snapshot.revision()),
        at: format_time(a.at_ms),
        container: a.container.clone(),
        resolved: matches!(a.resolved.viewers, earshot_core::Viewers::Resolved(_)),
        resolution: Some(a.resolved.resolution.clone()),
        context: None,
    }
}

pub async fn get_attempt(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<(String, String)>, PathRejection>,
    _: NoQuery,
) -> ApiResult<Json<AttemptResponse>> {
    let Path((store, attempt)) = path?;
    p.require(Scope::Reader, Some(&store))?;
    let handle = st.store(&store).await?;
    let (h, id) = (handle.clone(), attempt.clone());
    let (live, sealed) = blocking(move || {
        let live = h.attempt(&id);
        h.sealed_context(&id).map(|sealed| (live, sealed))
    })
    .await?;
    match (live, sealed) {
        (Ok(a), context) => Ok(Json(AttemptResponse { context, ..attempt_response(&handle, &a) })),
        // Expired (or from before a restart), but its sealed context is on record.
        (Err(_), Some(c)) => Ok(Json(AttemptResponse {
            attempt: c.attempt.clone(),
            revision: c.revision,
            token: c.token.clone(),
            at: c.at.clone(),
            container: c.container.clone(),
            resolved: c.resolved,
            resolution: c.resolution.clone(),
            context: Some(c),
        })),
        (Err(e), None) => Err(e.into()),
    }
}

/// Assembles the attempt's one context: admissible candidates only, ranked (`bm25`, `dense` or `hybrid`), sealed.
pub async fn attempt_context(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Body<ContextRequest>,
) -> ApiResult<Json<SealedContext>> {
    let Path((store, attempt)) = path?;
    let JsonBody(req) = body?;
    p.require(Scope::Reader, Some(&store))?;
    let handle = st.store(&store).await?;
    let context = blocking(move || handle.assemble_context(&attempt, &req)).await?;
    st.metrics.record_decisions(DecisionKind::Context, context.items.iter().map(|i| i.reason.as_ref()));
    Ok(Json(context))
}

#[derive(Debug, Serialize)]
pub struct Expansion {
    pub item: String,
    pub audiences: Vec<AudienceView>,
    /// Read with `at_exact` at a revision whose answers may not be used now (SPEC §2.6): the
    /// audiences of then, for audit only; `audiences` is then empty (it authorizes nobody).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub historical: Option<Box<Expansion>>,
}

/// `GET /items/{id}/audiences`: every authorized audience of the item, separately, at the
/// snapshot the query string's consistency picks.
pub async fn expand(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<(String, String)>, PathRejection>,
    ReadQuery(consistency): ReadQuery,
) -> ApiResult<Json<AtRevision<Expansion>>> {
    let Path((store, item)) = path?;
    p.require(Scope::Admin, Some(&store))?;
    let h = st.store(&store).await?;
    let point = read_point(&h, consistency).await?;
    let audiences = point.snapshot.expand(&item, point.at_ms)?;
    let mut view = Expansion { item, audiences, historical: None };
    if point.historical.is_some() {
        view = Expansion { item: view.item.clone(), audiences: Vec::new(), historical: Some(Box::new(view)) };
    }
    Ok(at_point(&h, &point, view))
}

/// `GET /items/{id}`: the admin view of an item at the snapshot the query string's consistency
/// picks (at an older revision, the record as it was then, marked by `latest_revision`).
pub async fn item_view(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<(String, String)>, PathRejection>,
    ReadQuery(consistency): ReadQuery,
) -> ApiResult<Json<ItemView>> {
    let Path((store, item)) = path?;
    p.require(Scope::Admin, Some(&store))?;
    let h = st.store(&store).await?;
    let point = read_point(&h, consistency).await?;
    let mut view = point.snapshot.item_view(&item, point.at_ms)?;
    view.latest_revision = point.historical;
    let h2 = h.clone();
    let item2 = item.clone();
    if let Some(c) = blocking(move || h2.content(&item2)).await? {
        view.content = c.content;
        view.attributes = c.attributes;
    }
    Ok(Json(view))
}

#[derive(Debug, Serialize)]
pub struct StoreInfo {
    pub id: String,
    pub revision: u64,
    pub token: String,
    /// Read with `at_exact` at a revision whose answers may not be used now: the newest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<u64>,
    pub items: usize,
    pub audiences: usize,
    /// How this replica stands against the datastore's head (lag); on the embedded store it is
    /// always caught up.
    pub replication: earshot_store::Replication,
}

/// `GET /v1/stores/{store}`: the store's revision and size at the snapshot the query string's
/// consistency picks, and how this replica stands against the datastore.
pub async fn store_info(
    State(st): State<AppState>,
    p: Principal,
    path: Result<Path<String>, PathRejection>,
    ReadQuery(consistency): ReadQuery,
) -> ApiResult<Json<StoreInfo>> {
    let Path(store) = path?;
    p.require(Scope::Reader, Some(&store))?;
    let h = st.store(&store).await?;
    let point = read_point(&h, consistency).await?;
    let snap = &point.snapshot;
    Ok(Json(StoreInfo {
        id: store,
        revision: snap.revision(),
        token: h.token(snap.revision()),
        latest_revision: point.historical,
        items: snap.item_count(),
        audiences: snap.audience_count(),
        replication: h.replication(),
    }))
}

/// The Prometheus exposition: this instance's request and decision counters, and the figures
/// of each store the caller may read.
pub async fn metrics(State(st): State<AppState>, p: Principal, _: NoQuery) -> ApiResult<impl IntoResponse> {
    let whole = p.require(Scope::Reader, None).is_ok();
    let out = st.metrics.encode(&st.earshot, whole, |id| p.require(Scope::Reader, Some(id)).is_ok());
    Ok(([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], out))
}
