//! Export and import routes (`GET /v1/stores/{store}/export`, `POST /v1/stores/{store}/import`):
//! a store's records as NDJSON (format in `earshot_store::export`), streamed both ways between
//! the client and the store's blocking reads and commits.

use std::convert::Infallible;
use std::io::Read;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::server::StreamIdleTimeout;
use crate::writes::blocking;
use crate::AppState;

/// Largest import body, in bytes: the one route allowed past [`crate::MAX_BODY_BYTES`]. An
/// export of a million items is about 0.5 GiB; a larger store is imported offline
/// (`earshot import --data …`), which has no such bound.
pub const MAX_IMPORT_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// Chunks in flight between the reading side and the writing side of either stream.
const CHANNEL: usize = 8;

/// Streams the store's export, at the revision it had when the export opened (the header
/// names it; writes go on meanwhile). The response starts once the export is open (an unknown
/// store is a plain `404`); a failure after that (the datastore failed, another replica wrote
/// to the store) ends the stream with an `{"error": …}` line in place of the end line, which an
/// import refuses. Not bounded by the request timeout: the export ends, without its end line,
/// when the client takes no chunk for `stream_idle_timeout`.
pub(crate) async fn export(
    State(st): State<AppState>,
    p: Principal,
    idle: Option<Extension<StreamIdleTimeout>>,
    path: Result<Path<String>, PathRejection>,
    _: crate::lists::NoQuery,
) -> ApiResult<Response> {
    let Path(store) = path?;
    p.require(Scope::Admin, Some(&store))?;
    let idle = idle.map(|Extension(i)| i).unwrap_or_default().0;
    let earshot = st.earshot.clone();
    let mut export = blocking(move || earshot.export(&store)).await?;
    let (tx, rx) = mpsc::channel::<Bytes>(CHANNEL);
    let runtime = tokio::runtime::Handle::current();
    // Bounded by the client's progress: a chunk it does not take in time ends the export (and
    // releases what the export holds).
    let send = move |chunk: Bytes| runtime.block_on(tx.send_timeout(chunk, idle)).is_ok();
    tokio::task::spawn_blocking(move || {
        let mut buf = Vec::with_capacity(256 * 1024);
        loop {
            buf.clear();
            match export.next_chunk(&mut buf) {
                Ok(true) => {
                    // A client that went away, or stopped reading, ends the export.
                    if !send(Bytes::copy_from_slice(&buf)) {
                        return;
                    }
                }
                Ok(false) => return,
                Err(e) => {
                    let err = ApiError::from(e);
                    let mut line = err.body().to_string();
                    line.push('\n');
                    let _ = send(Bytes::from(line));
                    return;
                }
            }
        }
    });
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (Ok::<_, Infallible>(chunk), rx))
    }));
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, "application/x-ndjson"), (header::CACHE_CONTROL, "no-store")], body)
        .into_response())
}

/// The request body as a blocking reader for the import, fed chunk by chunk from the handler.
struct ChannelReader {
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
    current: Bytes,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                Some(Ok(b)) => self.current = b,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current[..n]);
        self.current = self.current.slice(n..);
        Ok(n)
    }
}

/// Reads a request body to its end and drops it, at most [`MAX_IMPORT_BYTES`] and while it keeps
/// arriving within `idle`.
async fn drain(body: Body, idle: std::time::Duration) {
    let mut frames = body.into_data_stream();
    let mut total: u64 = 0;
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout(idle, frames.next()).await {
        total = total.saturating_add(chunk.len() as u64);
        if total > MAX_IMPORT_BYTES {
            break;
        }
    }
}

/// Creates the store `{store}` from an export in the body (any content type: NDJSON is not
/// JSON). The global admin scope, as for creating a store. `201` with what was imported;
/// `409 store_exists`; `422 import_invalid` naming the line; `413 body_too_large` past
/// [`MAX_IMPORT_BYTES`]; `408 body_timeout` when the body stops arriving for
/// `stream_idle_timeout`. Nothing of a refused import remains. Not bounded by the request
/// timeout: an import may take as long as its body keeps coming.
pub(crate) async fn import(
    State(st): State<AppState>,
    p: Principal,
    idle: Option<Extension<StreamIdleTimeout>>,
    path: Result<Path<String>, PathRejection>,
    body: Body,
) -> ApiResult<Response> {
    let Path(store) = path?;
    p.require(Scope::Admin, None)?;
    let idle = idle.map(|Extension(i)| i).unwrap_or_default().0;
    // Refused without importing when it is plain that the store exists here; the body is still
    // read and dropped (bounded), so that a client sending it whole gets the answer rather than
    // a broken connection.
    if st.earshot.loaded(&store).is_some() {
        drain(body, idle).await;
        return Err(earshot_store::StoreError::StoreExists(store).into());
    }
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(CHANNEL);
    let earshot = st.earshot.clone();
    let task = tokio::task::spawn_blocking(move || {
        let mut input = std::io::BufReader::with_capacity(256 * 1024, ChannelReader { rx, current: Bytes::new() });
        earshot.import_store(&store, &mut input)
    });
    let mut frames = body.into_data_stream();
    let mut total: u64 = 0;
    let mut too_large = false;
    let mut stalled = false;
    // Once the importer has stopped (it refused the input, and says why below), the rest of the
    // body is read and dropped, still bounded, so that a client sending it whole gets the answer
    // rather than a broken connection.
    let mut tx = Some(tx);
    loop {
        let frame = match tokio::time::timeout(idle, frames.next()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(_) => {
                stalled = true;
                if let Some(tx) = tx.take() {
                    let _ = tx.send(Err(std::io::Error::other("the request body stopped arriving"))).await;
                }
                break;
            }
        };
        let chunk = match frame {
            Ok(c) => c,
            Err(e) => {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(Err(std::io::Error::other(format!("the request body failed: {e}")))).await;
                }
                break;
            }
        };
        total = total.saturating_add(chunk.len() as u64);
        if total > MAX_IMPORT_BYTES {
            too_large = true;
            if let Some(tx) = tx.take() {
                let _ = tx.send(Err(std::io::Error::other("the request body is too large"))).await;
            }
            break;
        }
        if let Some(sender) = &tx {
            if sender.send(Ok(chunk)).await.is_err() {
                tx = None;
            }
        }
    }
    drop(tx);
    let result = task.await.map_err(|e| {
        tracing::error!(error = %e, "import task failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error")
    })?;
    if stalled {
        return Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!("the import body stopped arriving for {} ms; nothing was imported", idle.as_millis()),
        ));
    }
    if too_large {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("an import body is at most {MAX_IMPORT_BYTES} bytes; import larger stores offline"),
        ));
    }
    let imported = result?;
    let token = earshot_store::token::encode(&imported.store, Some(&imported.incarnation), imported.revision);
    let answer = serde_json::json!({
        "outcome": "created",
        "ids": [imported.store],
        "store": imported.store,
        "from": imported.from,
        "records": imported.records,
        "revision": imported.revision,
        "token": token,
    });
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}
