//! The watch stream (`GET /v1/stores/{store}/watch`): every change of a store after a
//! revision, in order, as newline-delimited JSON or server-sent events, resumable from the
//! last token a client saw. Events come from the store's revision log in the datastore, so
//! every replica streams the same events for the same revisions.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use earshot_store::model::format_time;
use earshot_store::{LogEntry, StoreHandle};
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::writes::blocking;
use crate::AppState;

/// Revisions read from the log per round trip.
const BATCH: usize = 256;
/// How often an idle stream looks for a newer revision (the published revision is an atomic
/// read, so this costs nothing; it bounds the added latency).
const POLL: Duration = Duration::from_millis(25);
/// An idle stream sends a heartbeat this often, carrying the token to resume from, so that
/// clients and proxies see the connection alive.
const HEARTBEAT: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchQuery {
    /// Token of the last revision the client has seen; absent: from the newest revision on.
    #[serde(default)]
    after: Option<String>,
}

/// Opens a watch. `after` (or, for server-sent events, a `Last-Event-ID` header) names the
/// revision to continue after; a revision older than the log reaches back is refused with
/// `410 revision_expired` before the stream starts (read the current state, then watch from
/// its token). The stream ends when the client goes away or the server drains.
pub(crate) async fn watch(
    State(st): State<AppState>,
    p: Principal,
    Path(store): Path<String>,
    query: Result<Query<WatchQuery>, QueryRejection>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    p.require(Scope::Reader, Some(&store))?;
    let Query(q) = query?;
    let h = st.store(&store).await?;
    let sse =
        headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/event-stream"));
    let resume = q.after.or_else(|| {
        sse.then(|| headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::to_string)).flatten()
    });
    let after = match resume {
        Some(t) => h.decode_token(&t)?,
        None => h.latest().revision(),
    };
    if after > h.latest().revision() {
        // A token from the future (or from another replica that is ahead): wait for it as an
        // `at_least` read would, bounded.
        let (h2, t) = (h.clone(), h.token(after));
        blocking(move || h2.read_point(&earshot_store::model::Consistency::AtLeast(t), 0).map(|_| ())).await?;
    }
    let first = {
        let h = h.clone();
        blocking(move || h.changes_after(after, BATCH)).await?
    };
    let (tx, rx) = mpsc::channel::<String>(16);
    tokio::spawn(pump(h, after, first, sse, tx, st.draining.clone()));
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (Ok::<_, Infallible>(chunk), rx))
    }));
    let content_type = if sse { "text/event-stream" } else { "application/x-ndjson" };
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-store")], body)
        .into_response())
}

/// One event as the stream shows it.
fn event(h: &StoreHandle, e: &LogEntry) -> serde_json::Value {
    serde_json::json!({
        "revision": e.revision,
        "token": h.token(e.revision),
        "committed_at": format_time(e.committed_at_ms),
        "change": e.change,
    })
}

fn frame(sse: bool, kind: &str, id: Option<&str>, data: &serde_json::Value) -> String {
    if !sse {
        return format!("{data}\n");
    }
    match id {
        Some(id) => format!("id: {id}\nevent: {kind}\ndata: {data}\n\n"),
        None => format!("event: {kind}\ndata: {data}\n\n"),
    }
}

/// Feeds the stream: the batch already read, then whatever the store publishes after it.
async fn pump(
    h: Arc<StoreHandle>,
    mut cursor: u64,
    mut batch: Vec<LogEntry>,
    sse: bool,
    tx: mpsc::Sender<String>,
    draining: Arc<std::sync::atomic::AtomicBool>,
) {
    let mut last_sent = Instant::now();
    loop {
        for e in batch.drain(..) {
            let data = event(&h, &e);
            let token = h.token(e.revision);
            cursor = e.revision;
            if tx.send(frame(sse, "change", Some(&token), &data)).await.is_err() {
                return;
            }
            last_sent = Instant::now();
        }
        // Idle until a newer revision is published here, the client leaves, or a heartbeat.
        loop {
            if draining.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            if h.latest().revision() > cursor {
                break;
            }
            if last_sent.elapsed() >= HEARTBEAT {
                let token = h.token(cursor);
                let beat = serde_json::json!({"heartbeat": {"revision": cursor, "token": token}});
                if tx.send(frame(sse, "heartbeat", Some(&token), &beat)).await.is_err() {
                    return;
                }
                last_sent = Instant::now();
            }
            tokio::select! {
                () = tx.closed() => return,
                () = tokio::time::sleep(POLL) => {}
            }
        }
        let read = {
            let h = h.clone();
            tokio::task::spawn_blocking(move || h.changes_after(cursor, BATCH)).await
        };
        batch = match read {
            Ok(Ok(b)) => b,
            Ok(Err(e)) => {
                // The log moved past this stream (pruned) or the datastore failed: say so in
                // the stream, in the service's error shape, and end it; the client resumes
                // from its last token (or starts again on `revision_expired`).
                let err = ApiError::from(e);
                let _ = tx.send(frame(sse, "error", None, &err.body())).await;
                return;
            }
            Err(_) => return,
        };
    }
}
