//! The context-assembly faults of the fault table. `AfterRanking` (issue 5, SPEC §1.10):
//! authorization applied after ranking — the broken evaluator ranks every item of the snapshot by
//! BM25, keeps the fetch window, and only then drops what the container may not see, so forbidden
//! items take fetch slots. `GlobalStatistics` (issue 14, SPEC §6.1): the right candidates, ranked
//! with whole-index BM25 statistics, so inadmissible text shifts scores and order. Either answers
//! the scenario harness's JSON API like the real service (a `TestApp`), with the context's items
//! (in the response and in the attempt's readback) replaced by its own.

use std::collections::BTreeMap;
use std::sync::Mutex;

use axum::http::StatusCode;
use serde_json::{json, Value};

use earshot_store::Statistics;
use earshot_tests::TestApp;

use crate::scenarios::Target;

/// Which context-assembly rule is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RankingFault {
    /// Rank every item, keep the fetch window, then authorize.
    AfterRanking,
    /// Rank the admissible items with whole-index BM25 statistics.
    GlobalStatistics,
}

pub(crate) struct RankingFaultTarget {
    app: TestApp,
    fault: RankingFault,
    /// Attempt id → the items the broken evaluator sealed.
    sealed: Mutex<BTreeMap<String, Value>>,
}

impl RankingFaultTarget {
    pub(crate) fn new(fault: RankingFault) -> Self {
        RankingFaultTarget { app: TestApp::new(), fault, sealed: Mutex::new(BTreeMap::new()) }
    }

    fn broken_context(&self, store: &str, attempt: &str, body: &Value) -> Option<Value> {
        match self.fault {
            RankingFault::AfterRanking => self.rank_then_authorize(store, attempt, body),
            RankingFault::GlobalStatistics => self.rank_with_global_statistics(store, attempt, body),
        }
    }

    /// The admissible candidates, ranked with the statistics of the whole index.
    fn rank_with_global_statistics(&self, store: &str, attempt: &str, body: &Value) -> Option<Value> {
        let h = self.app.earshot.store(store).ok()?;
        let a = h.attempt(attempt).ok()?;
        let query = body.get("query")?.as_str()?;
        let size = |k: &str, default: usize| body.get(k).and_then(Value::as_u64).map_or(default, |n| n as usize);
        let (fetch, k) = (size("fetch", 20), size("k", 5));
        let owners = a.snapshot.owner_filter(&a.resolved, &[]).ok()?;
        let ranking = h
            .rank_admissible_with(&a.snapshot, &a.resolved, &owners, a.at_ms, query, fetch, Statistics::WholeIndex)
            .ok()?;
        let items: Vec<Value> = ranking
            .fetched
            .iter()
            .take(k)
            .enumerate()
            .map(|(n, r)| {
                with_role(&a, r.iid, json!({"rank": n + 1, "item": a.snapshot.item_name(r.iid), "score": r.score}))
            })
            .collect();
        Some(Value::Array(items))
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
            .map(|(n, (iid, score))| {
                with_role(&a, iid, json!({"rank": n + 1, "item": a.snapshot.item_name(iid), "score": score}))
            })
            .collect();
        Some(Value::Array(items))
    }
}

/// A context item with its role (SPEC §6.2) as the service gives it: the ranking faults break
/// the ranking only, so their items carry the real role and attribution.
fn with_role(a: &earshot_store::Attempt, iid: u32, mut item: Value) -> Value {
    let view = a.snapshot.item_name(iid).and_then(|name| a.snapshot.item_view(name, a.at_ms).ok());
    if let (Some(v), Some(m)) = (view, item.as_object_mut()) {
        m.insert("role".into(), json!(v.role));
        if v.role == earshot_core::Role::Data {
            m.insert("author".into(), json!(v.author));
            m.insert("data_reason".into(), json!(v.data_reason));
            if let Some(s) = v.untrusted_source {
                m.insert("untrusted_source".into(), json!(s));
            }
        }
    }
    item
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
            if let Some(items) = self.broken_context(store, attempt, body.as_ref().unwrap_or(&Value::Null)) {
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
