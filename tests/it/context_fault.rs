//! The context-assembly fault of the fault table (issue 5): authorization applied after ranking.
//! The broken evaluator ranks every item of the snapshot by BM25, keeps the fetch window, and only
//! then drops what the container may not see, so forbidden items take fetch slots. It answers the
//! scenario harness's JSON API like the real service (a `TestApp`), with the context's items (in
//! the response and in the attempt's readback) replaced by its own.

use std::collections::BTreeMap;
use std::sync::Mutex;

use axum::http::StatusCode;
use serde_json::{json, Value};

use earshot_tests::TestApp;

use crate::scenarios::Target;

pub(crate) struct RankingFaultTarget {
    app: TestApp,
    /// Attempt id → the items the broken evaluator sealed.
    sealed: Mutex<BTreeMap<String, Value>>,
}

impl RankingFaultTarget {
    pub(crate) fn new() -> Self {
        RankingFaultTarget { app: TestApp::new(), sealed: Mutex::new(BTreeMap::new()) }
    }

    /// Rank first, authorize after: BM25 over every item, the first `fetch`, then the admitted.
    fn rank_then_authorize(&self, store: &str, attempt: &str, body: &Value) -> Option<Value> {
        let h = self.app.earshot.store(store).ok()?;
        let a = h.attempt(attempt).ok()?;
        let query = body.get("query")?.as_str()?;
        let size = |k: &str, default: usize| body.get(k).and_then(Value::as_u64).map_or(default, |n| n as usize);
        let (fetch, k) = (size("fetch", 20), size("k", 5));
        let every: Vec<u32> = (0..a.snapshot.item_count() as u32).collect();
        let ranked = h.rank_candidates(&a.snapshot, &every, query, fetch).ok()?;
        let items: Vec<Value> = ranked
            .into_iter()
            .filter(|(iid, _)| a.snapshot.check_iid(*iid, &a.resolved.viewers, a.at_ms).admitted)
            .take(k)
            .enumerate()
            .map(|(n, (iid, score))| json!({"rank": n + 1, "item": a.snapshot.item_name(iid), "score": score}))
            .collect();
        Some(Value::Array(items))
    }
}

/// `/v1/stores/{store}/attempts/{attempt}[/context]` → (store, attempt).
fn attempt_of(path: &str) -> Option<(&str, &str)> {
    let mut parts = path.trim_start_matches('/').split('/');
    let (v1, stores, store, attempts, attempt) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    (v1 == "v1" && stores == "stores" && attempts == "attempts").then_some((store, attempt))
}

impl Target for RankingFaultTarget {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let (status, mut resp) = self.app.call(method, path, body.clone()).await;
        let Some((store, attempt)) = attempt_of(path) else { return (status, resp) };
        let mut sealed = self.sealed.lock().unwrap_or_else(|p| p.into_inner());
        if method == "POST" && path.ends_with("/context") && status.is_success() {
            if let Some(items) = self.rank_then_authorize(store, attempt, body.as_ref().unwrap_or(&Value::Null)) {
                sealed.insert(attempt.to_string(), items.clone());
                resp["items"] = items;
            }
        } else if method == "GET" && status.is_success() {
            if let (Some(items), Some(ctx)) = (sealed.get(attempt), resp.get_mut("context")) {
                ctx["items"] = items.clone();
            }
        }
        (status, resp)
    }

    fn revision(&self, store: &str) -> u64 {
        self.app.revision(store)
    }

    fn set_clock(&self, ms: i64) {
        self.app.clock.set(ms);
    }
}
