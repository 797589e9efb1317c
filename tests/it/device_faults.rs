//! Known faults of SPEC §2 and §6.4 for the fault table (issues 5 and 14): a delegation that
//! widens accepted, a revoked ancestor ignored, an aggregation conflict ignored, and its window
//! ignored. Each is a deliberately broken evaluator behind the scenario
//! harness's JSON API: a real `TestApp` answers, and the answers the broken rule would change
//! are changed, exactly where it would change them. The property column comes from the
//! authorize harness of `devices_props.rs` with the same break in its reference (for the
//! aggregation faults, from the harness of `aggregation.rs` with its guard or its window left out).

use std::collections::BTreeMap;
use std::sync::Mutex;

use axum::http::StatusCode;
use serde_json::{json, Value};

use earshot_tests::TestApp;

use crate::devices_props::{variant_verdict, Variant};
use crate::scenarios::Target;

/// The faults of SPEC §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceFault {
    /// A child capability wider than its parent is accepted.
    WideningAccepted,
    /// A capability whose ancestor is revoked still authorizes.
    RevokedAncestorIgnored,
    /// A use that completes an aggregation conflict is allowed (SPEC §6.4).
    AggregationIgnored,
    /// A conflict's window is ignored: an earlier use of another member blocks for ever.
    AggregationWindowIgnored,
}

impl DeviceFault {
    /// The property column: the authorize harness with this break in its reference.
    pub(crate) fn property_verdict(self, cases: u32) -> Option<String> {
        match self {
            DeviceFault::WideningAccepted => variant_verdict(Variant::AcceptWidening, cases),
            DeviceFault::RevokedAncestorIgnored => variant_verdict(Variant::RevokedAncestorIgnored, cases),
            DeviceFault::AggregationIgnored => crate::aggregation::guard_off_verdict(cases),
            DeviceFault::AggregationWindowIgnored => crate::aggregation::window_ignored_verdict(cases),
        }
    }
}

/// The broken evaluator behind the scenario harness.
pub(crate) struct DeviceFaultTarget {
    app: TestApp,
    fault: DeviceFault,
    /// For the window fault: each conflict's window as written (`window`, `window_ms`), by name.
    windows: Mutex<BTreeMap<String, (Value, Value)>>,
}

/// What the window fault writes for every conflict's window: longer than any test's clock
/// moves, so an earlier use of another member blocks for the rest of the run.
const FOREVER: &str = "366d";

impl DeviceFaultTarget {
    pub(crate) fn new(fault: DeviceFault) -> Self {
        DeviceFaultTarget { app: TestApp::new(), fault, windows: Mutex::new(BTreeMap::new()) }
    }

    /// The window fault's schema: every `within <window>` of a conflict made [`FOREVER`], and
    /// the windows as written remembered, so that reading the schema back shows them (the broken
    /// evaluator ignores the window when it decides, not when it lists the schema).
    fn without_windows(&self, body: Option<Value>) -> Option<Value> {
        let text = body.as_ref()?.get("schema")?.as_str()?.to_string();
        let parsed = earshot_core::schema::parse(&text).ok()?;
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        for c in &parsed.conflicts {
            windows.insert(c.name.clone(), (json!(c.window), json!(c.window_ms)));
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(" within ") {
            let (head, tail) = rest.split_at(at + " within ".len());
            out.push_str(head);
            out.push_str(FOREVER);
            let end = tail.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(tail.len());
            rest = &tail[end..];
        }
        out.push_str(rest);
        Some(json!({ "schema": out }))
    }

    /// Puts the remembered windows back into a schema read.
    fn restore_windows(&self, resp: &mut Value) {
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        for c in resp.get_mut("conflicts").and_then(Value::as_array_mut).into_iter().flatten() {
            let Some((window, ms)) = c.get("name").and_then(Value::as_str).and_then(|n| windows.get(n)).cloned() else {
                continue;
            };
            if let Some(obj) = c.as_object_mut() {
                obj.insert("window".into(), window);
                obj.insert("window_ms".into(), ms);
            }
        }
    }

    /// Accepts a refused widening as the broken rule would: the child gets the authority it
    /// asked for (filed as a root of the device's owner, found at the root of the parent chain).
    async fn accept_widening(&self, path: &str, body: &Value) -> Option<(StatusCode, Value)> {
        let parent = body.get("parent")?.as_str()?;
        let base = path.strip_suffix("/capabilities")?;
        let (_, chain) = self.app.call("GET", &format!("{base}/capabilities/{parent}/chain"), None).await;
        let owner = chain.pointer("/chain/0/issuer")?.as_str()?.to_string();
        let mut widened = body.clone();
        let obj = widened.as_object_mut()?;
        obj.remove("parent");
        obj.insert("issuer".into(), json!(owner));
        let (status, resp) = self.app.call("POST", path, Some(widened)).await;
        status.is_success().then_some((status, resp))
    }
}

/// Whether a denial is by a revoked link other than the principal's own capability.
fn revoked_ancestor(decision: &Value) -> bool {
    let leaf = decision.pointer("/authority/chain").and_then(Value::as_array).and_then(|c| c.last());
    let leaf = leaf.and_then(|l| l.get("capability")).and_then(Value::as_str);
    let link = decision.pointer("/failure/link").and_then(Value::as_str);
    decision.get("reason").and_then(Value::as_str) == Some("denied_revoked") && leaf.is_some() && link != leaf
}

/// Allows a decision the aggregation guard denied, as an evaluator without the guard would: the
/// authority it kept decides.
fn ignore_aggregation(decision: &mut Value) -> bool {
    if decision.get("reason").and_then(Value::as_str) != Some("denied_aggregation") {
        return false;
    }
    let reason = match decision.pointer("/authority/kind").and_then(Value::as_str) {
        Some("relation") => "allowed_relation",
        _ => "allowed_capability",
    };
    if let Some(obj) = decision.as_object_mut() {
        obj.insert("allowed".into(), json!(true));
        obj.insert("reason".into(), json!(reason));
        obj.remove("aggregation");
    }
    true
}

fn allow(decision: &mut Value) {
    if let Some(obj) = decision.as_object_mut() {
        obj.insert("allowed".into(), json!(true));
        obj.insert("reason".into(), json!("allowed_capability"));
        obj.remove("failure");
    }
}

impl Target for DeviceFaultTarget {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let window_fault = self.fault == DeviceFault::AggregationWindowIgnored && path.ends_with("/schema");
        let body = match body {
            Some(b) if window_fault && method == "PUT" => self.without_windows(Some(b.clone())).or(Some(b)),
            other => other,
        };
        let (status, mut resp) = self.app.call(method, path, body.clone()).await;
        if window_fault && method == "GET" {
            self.restore_windows(&mut resp);
        }
        match self.fault {
            DeviceFault::WideningAccepted
                if method == "POST"
                    && path.ends_with("/capabilities")
                    && resp.pointer("/error/code").and_then(Value::as_str) == Some("capability_not_within_parent") =>
            {
                if let Some(accepted) = self.accept_widening(path, body.as_ref().unwrap_or(&Value::Null)).await {
                    return accepted;
                }
            }
            DeviceFault::RevokedAncestorIgnored
                if method == "POST" && path.ends_with("/authorize") && revoked_ancestor(&resp) =>
            {
                allow(&mut resp);
            }
            DeviceFault::RevokedAncestorIgnored if method == "POST" && path.ends_with("/uses") => {
                if let Some(d) = resp.get_mut("decision") {
                    if revoked_ancestor(d) {
                        allow(d);
                        if let Some(obj) = resp.as_object_mut() {
                            obj.insert("outcome".into(), json!("allowed"));
                        }
                    }
                }
            }
            DeviceFault::AggregationIgnored if method == "POST" && path.ends_with("/authorize") => {
                ignore_aggregation(&mut resp);
            }
            DeviceFault::AggregationIgnored if method == "POST" && path.ends_with("/uses") => {
                let flipped = resp.get_mut("decision").is_some_and(ignore_aggregation);
                if flipped {
                    if let Some(obj) = resp.as_object_mut() {
                        obj.insert("outcome".into(), json!("allowed"));
                    }
                }
            }
            _ => {}
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
