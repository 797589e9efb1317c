//! Known faults of SPEC §2 and §6.4 for the fault table (issues 5 and 14): a delegation that
//! widens accepted, a revoked ancestor ignored, and an aggregation conflict ignored. Each is a deliberately broken evaluator behind the scenario
//! harness's JSON API: a real `TestApp` answers, and the answers the broken rule would change
//! are changed, exactly where it would change them. The property column comes from the
//! authorize harness of `devices_props.rs` with the same break in its reference (for the
//! aggregation fault, from the harness of `aggregation.rs` with its guard left out).

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
}

impl DeviceFault {
    /// The property column: the authorize harness with this break in its reference.
    pub(crate) fn property_verdict(self, cases: u32) -> Option<String> {
        match self {
            DeviceFault::WideningAccepted => variant_verdict(Variant::AcceptWidening, cases),
            DeviceFault::RevokedAncestorIgnored => variant_verdict(Variant::RevokedAncestorIgnored, cases),
            DeviceFault::AggregationIgnored => crate::aggregation::guard_off_verdict(cases),
        }
    }
}

/// The broken evaluator behind the scenario harness.
pub(crate) struct DeviceFaultTarget {
    app: TestApp,
    fault: DeviceFault,
}

impl DeviceFaultTarget {
    pub(crate) fn new(fault: DeviceFault) -> Self {
        DeviceFaultTarget { app: TestApp::new(), fault }
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
        let (status, mut resp) = self.app.call(method, path, body.clone()).await;
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
