//! Owns the device actions of the scenario format (SPEC §2): schema, devices, relation grants,
//! capabilities, revocations, `authorize`, `use`, and the chain and dependents queries.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{from_yaml, subset, ErrorExpect, Runner, Step, StepResult, Target};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RevokeStep {
    #[serde(alias = "edge", alias = "capability")]
    id: String,
    by: String,
}

/// One device action, borrowed from its step.
pub(super) enum DeviceAction<'a> {
    Schema(&'a str),
    Device(&'a Value),
    Relation(&'a Value),
    Capability(&'a Value),
    RevokeRelation(&'a RevokeStep),
    RevokeCapability(&'a RevokeStep),
    Authorize(&'a Value),
    Use(&'a Value),
    Dependents(&'a str),
    Chain(&'a str),
}

impl<'a> DeviceAction<'a> {
    pub(super) fn of(step: &'a Step) -> Vec<DeviceAction<'a>> {
        let mut out = Vec::new();
        out.extend(step.schema.as_deref().map(DeviceAction::Schema));
        out.extend(step.device.as_ref().map(DeviceAction::Device));
        out.extend(step.relation.as_ref().map(DeviceAction::Relation));
        out.extend(step.capability.as_ref().map(DeviceAction::Capability));
        out.extend(step.revoke_relation.as_ref().map(DeviceAction::RevokeRelation));
        out.extend(step.revoke_capability.as_ref().map(DeviceAction::RevokeCapability));
        out.extend(step.authorize.as_ref().map(DeviceAction::Authorize));
        out.extend(step.use_.as_ref().map(DeviceAction::Use));
        out.extend(step.dependents.as_deref().map(DeviceAction::Dependents));
        out.extend(step.chain.as_deref().map(DeviceAction::Chain));
        out
    }

    pub(super) fn label(&self) -> String {
        let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
        match self {
            DeviceAction::Schema(_) => "schema".into(),
            DeviceAction::Device(v) => format!("device {}", field(v, "id")),
            DeviceAction::Relation(v) => {
                format!("relation {} --{}--> {}", field(v, "grantor"), field(v, "relation"), field(v, "grantee"))
            }
            DeviceAction::Capability(v) => format!("capability {} for {}", field(v, "id"), field(v, "holder")),
            DeviceAction::RevokeRelation(r) => format!("revoke_relation {} by {}", r.id, r.by),
            DeviceAction::RevokeCapability(r) => format!("revoke_capability {} by {}", r.id, r.by),
            DeviceAction::Authorize(v) | DeviceAction::Use(v) => format!(
                "{} {} {} {}:{}",
                if matches!(self, DeviceAction::Use(_)) { "use" } else { "authorize" },
                field(v, "principal"),
                field(v, "action"),
                field(v, "device"),
                field(v, "path")
            ),
            DeviceAction::Dependents(c) => format!("dependents of {c}"),
            DeviceAction::Chain(c) => format!("chain of {c}"),
        }
    }
}

/// An authorize expectation: a reason code alone, or a JSON subset of the decision where
/// `chain: [ids]` stands for the capability ids of the chain used, root first.
fn authorize_expectation(e: &serde_yaml::Value) -> Result<Value, String> {
    let v: Value = from_yaml(e, "decision")?;
    match v {
        Value::String(reason) => Ok(json!({"allowed": reason.starts_with("allowed_"), "reason": reason})),
        Value::Object(mut m) => {
            if let Some(chain) = m.remove("chain") {
                let links: Vec<Value> = chain
                    .as_array()
                    .ok_or("`chain` must be a list of capability ids")?
                    .iter()
                    .map(|id| json!({"capability": id}))
                    .collect();
                m.insert("authority".into(), json!({"kind": "capability", "chain": links}));
            }
            if let Some(Value::String(r)) = m.get("reason") {
                let allowed = r.starts_with("allowed_");
                m.entry("allowed").or_insert(Value::Bool(allowed));
            }
            Ok(Value::Object(m))
        }
        other => Err(format!("an authorize expectation is a reason or an object, not {other}")),
    }
}

fn ids_of(v: &Value, list: &str, field: &str) -> Vec<String> {
    v.get(list)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| if field.is_empty() { x.as_str() } else { x.get(field).and_then(Value::as_str) })
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl<T: Target> Runner<'_, T> {
    pub(super) async fn device_step(
        &mut self,
        action: &DeviceAction<'_>,
        expect: Option<&serde_yaml::Value>,
        err: Option<&ErrorExpect>,
    ) -> StepResult {
        let write = |what: &str| -> StepResult {
            if expect.is_some() {
                return Err(format!("`expect` is not supported on {what}; use `expect_error` for refusals"));
            }
            Ok(())
        };
        let path = Self::store_path;
        match action {
            DeviceAction::Schema(text) => {
                write("schema")?;
                self.send("PUT", &path("schema"), Some(json!({ "schema": text })), err).await.map(drop)
            }
            DeviceAction::Device(v) => {
                write("device")?;
                self.send("POST", &path("devices"), Some((*v).clone()), err).await.map(drop)
            }
            DeviceAction::Relation(v) => {
                write("relation")?;
                self.send("POST", &path("relations"), Some((*v).clone()), err).await.map(drop)
            }
            DeviceAction::Capability(v) => {
                write("capability")?;
                self.send("POST", &path("capabilities"), Some((*v).clone()), err).await.map(drop)
            }
            DeviceAction::RevokeRelation(r) => {
                write("revoke_relation")?;
                let p = path(&format!("relations/{}?by={}", r.id, r.by));
                self.send("DELETE", &p, None, err).await.map(drop)
            }
            DeviceAction::RevokeCapability(r) => {
                write("revoke_capability")?;
                let p = path(&format!("capabilities/{}?by={}", r.id, r.by));
                self.send("DELETE", &p, None, err).await.map(drop)
            }
            DeviceAction::Authorize(v) | DeviceAction::Use(v) => {
                let is_use = matches!(action, DeviceAction::Use(_));
                let route = if is_use { "uses" } else { "authorize" };
                let before = self.app.revision(super::STORE);
                let resp = self.send("POST", &path(route), Some((*v).clone()), err).await?;
                let after = self.app.revision(super::STORE);
                // A use's outcome says what it wrote: `consumed` and `recorded` one revision,
                // `allowed` and `denied` nothing; `authorize` never writes.
                let outcome = resp.as_ref().and_then(|r| r.get("outcome")).and_then(Value::as_str).unwrap_or("");
                let wrote = is_use && matches!(outcome, "consumed" | "recorded");
                if resp.is_some() && after != before + u64::from(wrote) {
                    let what = if is_use { format!("a use answering `{outcome}`") } else { "authorize".to_string() };
                    return Err(format!("{what} changed the revision from {before} to {after}"));
                }
                let (Some(e), Some(resp)) = (expect, resp) else { return Ok(()) };
                let want = if is_use { from_yaml::<Value>(e, "outcome")? } else { authorize_expectation(e)? };
                if subset(&want, &resp) {
                    Ok(())
                } else {
                    Err(format!("expected a decision containing {want}, got {resp}"))
                }
            }
            DeviceAction::Dependents(c) | DeviceAction::Chain(c) => {
                let (route, list, field) = match action {
                    DeviceAction::Chain(_) => ("chain", "chain", "id"),
                    _ => ("dependents", "invalidates", ""),
                };
                let resp = self.send("GET", &path(&format!("capabilities/{c}/{route}")), None, err).await?;
                let (Some(e), Some(resp)) = (expect, resp) else { return Ok(()) };
                let want: Vec<String> = from_yaml(e, "list of capability ids")?;
                let got = ids_of(&resp, list, field);
                if got == want {
                    Ok(())
                } else {
                    Err(format!("expected {want:?}, got {got:?} in {resp}"))
                }
            }
        }
    }
}
