//! Owns `earshot validate`: the scenario format users write their policy tests in (documented
//! in `docs/validate.md`; the repository's `fixtures/*.yaml` use it too), its parser, the one
//! runner that plays a scenario against any [`Target`] and reports every failed expectation,
//! the in-process [`Sandbox`] target (the real router over a throwaway in-memory store with a
//! manual clock), and the per-file report of the command.

mod devices;

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use earshot_api::{AppState, Auth};
use earshot_store::model::{OriginInput, ViewersInput};
use earshot_store::{Config, Earshot, ManualClock, MemoryBackend};
use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tower::ServiceExt;

/// Milliseconds since the epoch at which every scenario clock starts: 2026-01-01T00:00:00Z.
pub const T0_MS: i64 = 1_767_225_600_000;
/// The store every scenario runs in.
pub const STORE: &str = "s";
/// Page size of lookups, small so that pagination is exercised.
const PAGE_LIMIT: usize = 2;
/// Pages a lookup may take before the runner calls it a cursor loop.
const MAX_PAGES: usize = 500;

// ---------------------------------------------------------------------------------------------
// The format.

/// One scenario file: named containers, setup steps that must all succeed, and steps with
/// expectations. Build one with [`parse`], which also checks the shape of every step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short name, for reports.
    pub name: String,
    /// What the scenario shows.
    pub description: String,
    #[serde(default)]
    containers: BTreeMap<String, ContainerSpec>,
    #[serde(default)]
    setup: Vec<Step>,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainerSpec {
    owner: String,
    #[serde(default)]
    viewers: Option<ViewersSpec>,
}

/// Viewer evidence: a list of participant ids, or the full `Viewers` object.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ViewersSpec {
    List(Vec<String>),
    Full(ViewersInput),
}

/// A container by name (from `containers`) or inline.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ContainerRef {
    Named(String),
    Inline(ContainerSpec),
}

/// An item's origin: a list of participant ids, a keyword, or the full `Viewers` object.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OriginSpec {
    List(Vec<String>),
    Other(OriginInput),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    // Actions: exactly one per step.
    participants: Option<Vec<String>>,
    identity: Option<IdentityStep>,
    item: Option<ItemStep>,
    derive: Option<DeriveStep>,
    grant: Option<GrantStep>,
    revoke_grant: Option<String>,
    /// SPEC §6.3: a subject consents to a grant (`{grant: <alias or id>, subject}`).
    consent: Option<ConsentStep>,
    /// SPEC §6.3: a subject withdraws its consent to a grant.
    withdraw_consent: Option<ConsentStep>,
    lifecycle: Option<LifecycleStep>,
    remove_participant: Option<String>,
    advance_clock_ms: Option<i64>,
    check: Option<CheckStep>,
    lookup: Option<LookupStep>,
    expand: Option<String>,
    view: Option<String>,
    request: Option<RequestStep>,
    // Device actions (SPEC §2).
    schema: Option<String>,
    device: Option<Value>,
    relation: Option<Value>,
    capability: Option<Value>,
    revoke_relation: Option<devices::RevokeStep>,
    revoke_capability: Option<devices::RevokeStep>,
    authorize: Option<Value>,
    #[serde(rename = "use")]
    use_: Option<Value>,
    dependents: Option<String>,
    chain: Option<String>,
    context: Option<ContextStep>,
    // Origin-bound integrity (SPEC §6.2).
    trust: Option<TrustStep>,
    revoke_trust: Option<String>,
    // Expectations.
    expect: Option<serde_yaml::Value>,
    expect_error: Option<ErrorExpect>,
    /// Free text for the reader, repeated in the report when the step fails.
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IdentityStep {
    transport: String,
    identifier: String,
    participant: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemStep {
    id: Option<String>,
    owner: String,
    origin: OriginSpec,
    content: Option<String>,
    attributes: Option<Value>,
    /// The participants the item is about (SPEC §6.3).
    subjects: Option<Vec<String>>,
    /// Whose words the item carries (SPEC §6.2); the owner when absent.
    author: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsentStep {
    /// A grant alias (from an earlier `as`) or a grant id.
    grant: String,
    subject: String,
}

/// `trust`: the owner delegates authority to a participant (SPEC §6.2); `as` names the
/// delegation for a later `revoke_trust` (the same alias space as grants).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustStep {
    owner: String,
    participant: String,
    reason: Option<String>,
    #[serde(rename = "as")]
    alias: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeriveStep {
    disposition: String,
    owner: String,
    sources: Vec<String>,
    id: Option<String>,
    content: Option<String>,
    container: Option<ViewersSpec>,
    outputs: Option<Vec<OutputStep>>,
    members: Option<Vec<String>>,
    reason: Option<String>,
    expires_at: Option<String>,
    /// Intersection or quarantine: subjects beyond those inherited from the sources.
    subjects: Option<Vec<String>>,
    #[serde(rename = "as")]
    alias: Option<String>,
}

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct OutputStep {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    sources: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subjects: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrantStep {
    item: String,
    members: Vec<String>,
    reason: Option<String>,
    expires_at: Option<String>,
    #[serde(rename = "as")]
    alias: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LifecycleStep {
    item: String,
    action: String,
    by: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckStep {
    /// One item (`expect` is one decision); absent: `expect` maps item ids to decisions.
    item: Option<String>,
    container: ContainerRef,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LookupStep {
    container: ContainerRef,
    #[serde(default)]
    owners: Vec<String>,
    limit: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextStep {
    container: ContainerRef,
    query: String,
    fetch: Option<usize>,
    k: Option<usize>,
    #[serde(default)]
    owners: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestStep {
    method: String,
    path: String,
    body: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorExpect {
    status: u16,
    code: String,
    /// A JSON subset of the error's `details`.
    details: Option<Value>,
}

/// A decision: a reason code alone (admitted follows from it), or the full form.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum CheckExpect {
    Reason(String),
    Full(CheckFull),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckFull {
    admitted: Option<bool>,
    reason: String,
    basis: Option<String>,
    grant: Option<String>,
    blocked_by: Option<BlockedSpec>,
    /// SPEC §6.2: `instruction` or `data`.
    role: Option<String>,
    /// For data: the item's author.
    author: Option<String>,
    /// For data made so by a source: that source and its author.
    untrusted_source: Option<UntrustedSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UntrustedSpec {
    item: String,
    /// Absent when the source's author is unknown.
    author: Option<String>,
}

/// A context's expectation: the item ids in order, or each with its role (SPEC §6.2).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ContextExpect {
    Ids(Vec<String>),
    Full(Vec<ContextItemExpect>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextItemExpect {
    item: String,
    role: Option<String>,
    author: Option<String>,
    untrusted_source: Option<UntrustedSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockedSpec {
    state: String,
    item: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeriveExpect {
    outcome: String,
    reason: Option<String>,
    source: Option<String>,
    ids: Option<Vec<String>>,
}

/// One authorized audience: `public`, a member list, or members plus the grant alias.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AudSpec {
    Keyword(String),
    Members(Vec<String>),
    Full(AudFull),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AudFull {
    members: Vec<String>,
    grant: Option<String>,
    /// A JSON subset of the grant's consent state (SPEC §6.3), e.g. `{effective: false,
    /// missing: [bob]}`.
    consent: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ViewExpect {
    state: Option<String>,
    current: Option<bool>,
    blocked_by: Option<BlockedSpec>,
    audience: Option<AudSpec>,
    sources: Option<Vec<String>>,
    superseded_by: Option<String>,
    /// Another item whose origin audience must be the very same record (same digest).
    same_audience_as: Option<String>,
    /// Other items whose origin audience must be a different record.
    #[serde(default)]
    other_audience_than: Vec<String>,
    /// The item's subjects (SPEC §6.3), sorted.
    subjects: Option<Vec<String>>,
}

// ---------------------------------------------------------------------------------------------
// The runner.

/// One action of a step, borrowed from it.
enum Action<'a> {
    Participants(&'a [String]),
    Identity(&'a IdentityStep),
    Item(&'a ItemStep),
    Derive(&'a DeriveStep),
    Grant(&'a GrantStep),
    RevokeGrant(&'a str),
    Consent(&'a ConsentStep, bool),
    Lifecycle(&'a LifecycleStep),
    RemoveParticipant(&'a str),
    AdvanceClock(i64),
    Check(&'a CheckStep),
    Lookup(&'a LookupStep),
    Expand(&'a str),
    View(&'a str),
    Request(&'a RequestStep),
    Device(devices::DeviceAction<'a>),
    Context(&'a ContextStep),
    Trust(&'a TrustStep),
    RevokeTrust(&'a str),
}

impl Step {
    fn action(&self) -> Result<Action<'_>, String> {
        let mut found: Vec<Action<'_>> = Vec::new();
        if let Some(v) = &self.participants {
            found.push(Action::Participants(v));
        }
        if let Some(v) = &self.identity {
            found.push(Action::Identity(v));
        }
        if let Some(v) = &self.item {
            found.push(Action::Item(v));
        }
        if let Some(v) = &self.derive {
            found.push(Action::Derive(v));
        }
        if let Some(v) = &self.grant {
            found.push(Action::Grant(v));
        }
        if let Some(v) = &self.revoke_grant {
            found.push(Action::RevokeGrant(v));
        }
        if let Some(v) = &self.consent {
            found.push(Action::Consent(v, true));
        }
        if let Some(v) = &self.withdraw_consent {
            found.push(Action::Consent(v, false));
        }
        if let Some(v) = &self.lifecycle {
            found.push(Action::Lifecycle(v));
        }
        if let Some(v) = &self.remove_participant {
            found.push(Action::RemoveParticipant(v));
        }
        if let Some(v) = self.advance_clock_ms {
            found.push(Action::AdvanceClock(v));
        }
        if let Some(v) = &self.check {
            found.push(Action::Check(v));
        }
        if let Some(v) = &self.lookup {
            found.push(Action::Lookup(v));
        }
        if let Some(v) = &self.expand {
            found.push(Action::Expand(v));
        }
        if let Some(v) = &self.view {
            found.push(Action::View(v));
        }
        if let Some(v) = &self.request {
            found.push(Action::Request(v));
        }
        found.extend(devices::DeviceAction::of(self).into_iter().map(Action::Device));
        if let Some(v) = &self.context {
            found.push(Action::Context(v));
        }
        if let Some(v) = &self.trust {
            found.push(Action::Trust(v));
        }
        if let Some(v) = &self.revoke_trust {
            found.push(Action::RevokeTrust(v));
        }
        if found.len() != 1 {
            return Err(format!("a step needs exactly one action, found {}", found.len()));
        }
        Ok(found.remove(0))
    }

    /// The step's one action, after checking that its expectations fit where it stands; a
    /// misshapen step gives its action's label (when it has one action) and the problem.
    fn check_shape(&self, phase: Phase) -> Result<Action<'_>, (String, String)> {
        let action = self.action().map_err(|e| (String::from("?"), e))?;
        if self.expect.is_some() && self.expect_error.is_some() {
            return Err((action.label(), "a step carries `expect` or `expect_error`, not both".into()));
        }
        if phase == Phase::Setup && (self.expect.is_some() || self.expect_error.is_some()) {
            return Err((action.label(), "setup steps carry no expectations".into()));
        }
        Ok(action)
    }
}

impl Action<'_> {
    fn label(&self) -> String {
        match self {
            Action::Participants(v) => format!("participants {v:?}"),
            Action::Identity(i) => format!("identity {}:{} -> {}", i.transport, i.identifier, i.participant),
            Action::Item(i) => format!("item {}", i.id.as_deref().unwrap_or("<generated>")),
            Action::Derive(d) => format!("derive {} from {:?}", d.disposition, d.sources),
            Action::Grant(g) => format!("grant on {} to {:?}", g.item, g.members),
            Action::RevokeGrant(g) => format!("revoke_grant {g}"),
            Action::Consent(c, true) => format!("consent of {} to {}", c.subject, c.grant),
            Action::Consent(c, false) => format!("withdraw_consent of {} from {}", c.subject, c.grant),
            Action::Lifecycle(l) => format!("lifecycle {} {}", l.action, l.item),
            Action::RemoveParticipant(p) => format!("remove_participant {p}"),
            Action::AdvanceClock(ms) => format!("advance_clock_ms {ms}"),
            Action::Check(c) => {
                format!("check {} in {}", c.item.as_deref().unwrap_or("<several>"), container_label(&c.container))
            }
            Action::Lookup(l) => format!("lookup in {} (owners {:?})", container_label(&l.container), l.owners),
            Action::Expand(i) => format!("expand {i}"),
            Action::View(i) => format!("view {i}"),
            Action::Request(r) => format!("request {} {}", r.method, r.path),
            Action::Device(d) => d.label(),
            Action::Context(c) => format!("context `{}` in {}", c.query, container_label(&c.container)),
            Action::Trust(t) => format!("trust {} -> {}", t.owner, t.participant),
            Action::RevokeTrust(t) => format!("revoke_trust {t}"),
        }
    }
}

/// Compares the role of a decision or context item with what a step expects (SPEC §6.2).
fn compare_role(
    role: Option<&str>,
    author: Option<&str>,
    source: Option<&UntrustedSpec>,
    got: &Value,
) -> Result<(), String> {
    let field = |k: &str| got.get(k).and_then(Value::as_str);
    if let Some(r) = role {
        if field("role") != Some(r) {
            return Err(format!("expected role {r}"));
        }
    }
    if let Some(a) = author {
        if field("author") != Some(a) {
            return Err(format!("expected author {a}"));
        }
    }
    if let Some(s) = source {
        let mut want = json!({ "item": s.item });
        if let (Some(a), Some(m)) = (&s.author, want.as_object_mut()) {
            m.insert("author".into(), json!(a));
        }
        if got.get("untrusted_source") != Some(&want) {
            return Err(format!("expected untrusted_source {want}"));
        }
    }
    Ok(())
}

fn container_label(c: &ContainerRef) -> String {
    match c {
        ContainerRef::Named(n) => n.clone(),
        ContainerRef::Inline(c) => format!("{{owner: {}, viewers: {:?}}}", c.owner, c.viewers),
    }
}

fn viewers_json(v: &ViewersSpec) -> Value {
    match v {
        ViewersSpec::List(ps) => json!({ "participants": ps }),
        ViewersSpec::Full(v) => serde_json::to_value(v).unwrap_or(Value::Null),
    }
}

fn insert_some<T: serde::Serialize>(m: &mut Map<String, Value>, key: &str, v: &Option<T>) {
    if let Some(v) = v {
        m.insert(key.to_string(), serde_json::to_value(v).unwrap_or(Value::Null));
    }
}

fn from_yaml<T: serde::de::DeserializeOwned>(v: &serde_yaml::Value, what: &str) -> Result<T, String> {
    serde_yaml::from_value(v.clone()).map_err(|e| format!("`expect` is not a valid {what}: {e}"))
}

/// `expected` is contained in `actual`: every key of an expected object matches, arrays match
/// element by element, scalars are equal.
fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av))),
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(x, y)| subset(x, y)),
        _ => expected == actual,
    }
}

/// The result of one step: `Err` carries the failure message (with the actual response).
type StepResult = Result<(), String>;

/// What a scenario runs against: the real service in process ([`Sandbox`]; the test suite's
/// `TestApp` over sled or PostgreSQL), or a deliberately broken evaluator behind the same JSON
/// API (the test suite's fault targets), which the fixtures must reject.
#[allow(async_fn_in_trait, reason = "the runner awaits its target on the caller's task; no Send bound is needed")]
pub trait Target {
    /// One request through the JSON API: status and parsed body (`Value::Null` for an empty or
    /// non-JSON body). A path is absolute (`/v1/stores/s/check`).
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value);
    /// The latest revision of a store (0 when it does not exist).
    fn revision(&self, store: &str) -> u64;
    /// Moves the clock every read and write sees, in milliseconds since the epoch.
    fn set_clock(&self, ms: i64);
}

struct Runner<'a, T> {
    app: &'a T,
    scenario: &'a Scenario,
    aliases: BTreeMap<String, String>,
    now_ms: i64,
}

impl<'a, T: Target> Runner<'a, T> {
    fn new(app: &'a T, scenario: &'a Scenario) -> Self {
        Runner { app, scenario, aliases: BTreeMap::new(), now_ms: T0_MS }
    }

    fn store_path(rest: &str) -> String {
        format!("/v1/stores/{STORE}/{rest}")
    }

    fn container(&self, c: &ContainerRef) -> Result<Value, String> {
        let spec = match c {
            ContainerRef::Named(n) => {
                self.scenario.containers.get(n).ok_or_else(|| format!("unknown container `{n}`"))?
            }
            ContainerRef::Inline(c) => c,
        };
        let mut m = Map::new();
        m.insert("owner".into(), json!(spec.owner));
        if let Some(v) = &spec.viewers {
            m.insert("viewers".into(), viewers_json(v));
        }
        Ok(Value::Object(m))
    }

    /// A grant alias must have been defined by an earlier `as`.
    fn grant_id(&self, alias: &str) -> Result<String, String> {
        self.aliases.get(alias).cloned().ok_or_else(|| format!("unknown grant alias `{alias}`"))
    }

    /// Replaces every string `{alias}` in a JSON value by the grant id the alias names.
    fn substitute(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                let alias = s.strip_prefix('{').and_then(|s| s.strip_suffix('}'));
                match alias.and_then(|a| self.aliases.get(a)) {
                    Some(id) => Value::String(id.clone()),
                    None => v.clone(),
                }
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.substitute(x)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), self.substitute(x))).collect()),
            other => other.clone(),
        }
    }

    fn alias_name(&self, id: &str) -> String {
        self.aliases.iter().find(|(_, v)| v.as_str() == id).map_or_else(|| id.to_string(), |(k, _)| k.clone())
    }

    /// Sends a request. With `expect_error`, the response must be that error and the revision
    /// unchanged; without, it must succeed (2xx). Returns the body of a success.
    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        expect_error: Option<&ErrorExpect>,
    ) -> Result<Option<Value>, String> {
        let before = self.app.revision(STORE);
        let (status, resp) = self.app.call(method, path, body).await;
        let after = self.app.revision(STORE);
        match expect_error {
            Some(e) => {
                let code = resp.pointer("/error/code").and_then(Value::as_str).unwrap_or("");
                if status.as_u16() != e.status || code != e.code {
                    return Err(format!("expected error {} `{}`, got {status} {resp}", e.status, e.code));
                }
                if before != after {
                    return Err(format!("refused write changed the revision from {before} to {after}: {resp}"));
                }
                if let Some(d) = &e.details {
                    let got = resp.pointer("/error/details").cloned().unwrap_or(Value::Null);
                    if !subset(d, &got) {
                        return Err(format!("expected error details containing {d}, got {got}"));
                    }
                }
                Ok(None)
            }
            None if status.is_success() => Ok(Some(resp)),
            None => Err(format!("expected success, got {status} {resp}")),
        }
    }

    /// Plays the scenario: every failed expectation is recorded and the run goes on, except
    /// that a failed setup step (or a store that cannot be created) ends it.
    async fn run(&mut self) -> Report {
        let sc = self.scenario;
        let mut report = Report { steps: sc.setup.len() + sc.steps.len(), failures: Vec::new(), setup_failed: false };
        let create = self.app.call("POST", "/v1/stores", Some(json!({ "id": STORE }))).await;
        if !create.0.is_success() {
            report.failures.push(Failure {
                phase: Phase::Setup,
                number: 0,
                action: format!("create store `{STORE}`"),
                note: None,
                message: format!("expected success, got {} {}", create.0, create.1),
            });
            report.setup_failed = true;
            return report;
        }
        let phases: [(Phase, &[Step]); 2] = [(Phase::Setup, &sc.setup), (Phase::Steps, &sc.steps)];
        for (phase, steps) in phases {
            for (i, step) in steps.iter().enumerate() {
                let failure = |action: String, message: String| Failure {
                    phase,
                    number: i + 1,
                    action,
                    note: step.note.clone(),
                    message,
                };
                // `parse` has checked the shape of every step; a scenario built otherwise is
                // still refused here rather than run half-way.
                let action = match step.check_shape(phase) {
                    Ok(a) => a,
                    Err((label, e)) => {
                        report.failures.push(failure(label, e));
                        report.setup_failed |= phase == Phase::Setup;
                        return report;
                    }
                };
                if let Err(e) = self.step(&action, step).await {
                    report.failures.push(failure(action.label(), e));
                    if phase == Phase::Setup {
                        report.setup_failed = true;
                        return report;
                    }
                }
            }
        }
        report
    }

    async fn step(&mut self, action: &Action<'_>, step: &Step) -> StepResult {
        let err = step.expect_error.as_ref();
        let expect = step.expect.as_ref();
        let writes_only = |what: &str| -> StepResult {
            if expect.is_some() {
                return Err(format!("`expect` is not supported on {what}; use `expect_error` for refusals"));
            }
            Ok(())
        };
        match action {
            Action::Participants(ps) => {
                writes_only("participants")?;
                for p in ps.iter() {
                    let body = json!({ "id": p, "kind": "person" });
                    self.send("POST", &Self::store_path("participants"), Some(body), err).await?;
                }
                Ok(())
            }
            Action::Identity(i) => {
                writes_only("identity")?;
                let body =
                    json!({ "transport": i.transport, "identifier": i.identifier, "participant": i.participant });
                self.send("POST", &Self::store_path("identities"), Some(body), err).await.map(drop)
            }
            Action::Item(i) => {
                writes_only("item")?;
                let mut m = Map::new();
                insert_some(&mut m, "id", &i.id);
                m.insert("owner".into(), json!(i.owner));
                insert_some(&mut m, "content", &i.content);
                insert_some(&mut m, "attributes", &i.attributes);
                insert_some(&mut m, "subjects", &i.subjects);
                insert_some(&mut m, "author", &i.author);
                let origin = match &i.origin {
                    OriginSpec::List(ps) => json!({ "participants": ps }),
                    OriginSpec::Other(o) => serde_json::to_value(o).unwrap_or(Value::Null),
                };
                m.insert("origin".into(), origin);
                self.send("POST", &Self::store_path("items"), Some(Value::Object(m)), err).await.map(drop)
            }
            Action::Derive(d) => self.derive(d, expect, err).await,
            Action::Grant(g) => {
                writes_only("grant")?;
                let mut m = Map::new();
                m.insert("members".into(), json!(g.members));
                insert_some(&mut m, "reason", &g.reason);
                insert_some(&mut m, "expires_at", &g.expires_at);
                let path = Self::store_path(&format!("items/{}/grants", g.item));
                let resp = self.send("POST", &path, Some(Value::Object(m)), err).await?;
                self.remember_grant(g.alias.as_deref(), resp.as_ref())
            }
            Action::RevokeGrant(alias) => {
                writes_only("revoke_grant")?;
                let id = self.aliases.get(*alias).cloned().unwrap_or_else(|| alias.to_string());
                self.send("DELETE", &Self::store_path(&format!("grants/{id}")), None, err).await.map(drop)
            }
            Action::Consent(c, given) => {
                writes_only(if *given { "consent" } else { "withdraw_consent" })?;
                let id = self.aliases.get(&c.grant).cloned().unwrap_or_else(|| c.grant.clone());
                if *given {
                    let body = json!({ "subject": c.subject });
                    self.send("POST", &Self::store_path(&format!("grants/{id}/consents")), Some(body), err)
                        .await
                        .map(drop)
                } else {
                    let path = Self::store_path(&format!("grants/{id}/consents/{}", c.subject));
                    self.send("DELETE", &path, None, err).await.map(drop)
                }
            }
            Action::Trust(t) => {
                writes_only("trust")?;
                let mut m = Map::new();
                m.insert("owner".into(), json!(t.owner));
                m.insert("participant".into(), json!(t.participant));
                insert_some(&mut m, "reason", &t.reason);
                let resp = self.send("POST", &Self::store_path("trust"), Some(Value::Object(m)), err).await?;
                self.remember_grant(t.alias.as_deref(), resp.as_ref())
            }
            Action::RevokeTrust(alias) => {
                writes_only("revoke_trust")?;
                let id = self.aliases.get(*alias).cloned().unwrap_or_else(|| alias.to_string());
                self.send("DELETE", &Self::store_path(&format!("trust/{id}")), None, err).await.map(drop)
            }
            Action::Lifecycle(l) => {
                writes_only("lifecycle")?;
                let mut m = Map::new();
                m.insert("action".into(), json!(l.action));
                insert_some(&mut m, "by", &l.by);
                let path = Self::store_path(&format!("items/{}/lifecycle", l.item));
                self.send("POST", &path, Some(Value::Object(m)), err).await.map(drop)
            }
            Action::RemoveParticipant(p) => {
                writes_only("remove_participant")?;
                self.send("DELETE", &Self::store_path(&format!("participants/{p}")), None, err).await.map(drop)
            }
            Action::AdvanceClock(ms) => {
                writes_only("advance_clock_ms")?;
                if err.is_some() {
                    return Err("`expect_error` is meaningless on advance_clock_ms".into());
                }
                self.now_ms += ms;
                self.app.set_clock(self.now_ms);
                Ok(())
            }
            Action::Check(c) => self.check(c, expect, err).await,
            Action::Lookup(l) => self.lookup(l, expect, err).await,
            Action::Context(c) => self.context(c, expect, err).await,
            Action::Expand(item) => self.expand(item, expect, err).await,
            Action::View(item) => self.view(item, expect, err).await,
            Action::Device(d) => self.device_step(d, expect, err).await,
            Action::Request(r) => {
                let mut path = r.path.clone();
                for (alias, id) in &self.aliases {
                    path = path.replace(&format!("{{{alias}}}"), id);
                }
                if !path.starts_with('/') {
                    path = Self::store_path(&path);
                }
                let body = r.body.as_ref().map(|b| self.substitute(b));
                let resp = self.send(&r.method, &path, body, err).await?;
                match (expect, resp) {
                    (Some(e), Some(resp)) => {
                        let e: Value = from_yaml(e, "JSON subset")?;
                        let e = self.substitute(&e);
                        if subset(&e, &resp) {
                            Ok(())
                        } else {
                            Err(format!("expected a response containing {e}, got {resp}"))
                        }
                    }
                    _ => Ok(()),
                }
            }
        }
    }

    fn remember_grant(&mut self, alias: Option<&str>, resp: Option<&Value>) -> StepResult {
        let (Some(alias), Some(resp)) = (alias, resp) else { return Ok(()) };
        let id = resp.pointer("/ids/0").and_then(Value::as_str).ok_or_else(|| format!("no grant id in {resp}"))?;
        if self.aliases.insert(alias.to_string(), id.to_string()).is_some() {
            return Err(format!("grant alias `{alias}` is defined twice"));
        }
        Ok(())
    }

    async fn derive(
        &mut self,
        d: &DeriveStep,
        expect: Option<&serde_yaml::Value>,
        err: Option<&ErrorExpect>,
    ) -> StepResult {
        let mut m = Map::new();
        m.insert("disposition".into(), json!(d.disposition));
        m.insert("owner".into(), json!(d.owner));
        m.insert("sources".into(), json!(d.sources));
        insert_some(&mut m, "id", &d.id);
        insert_some(&mut m, "content", &d.content);
        if let Some(c) = &d.container {
            m.insert("container".into(), viewers_json(c));
        }
        insert_some(&mut m, "outputs", &d.outputs);
        insert_some(&mut m, "members", &d.members);
        insert_some(&mut m, "reason", &d.reason);
        insert_some(&mut m, "expires_at", &d.expires_at);
        insert_some(&mut m, "subjects", &d.subjects);
        let before = self.app.revision(STORE);
        let Some(resp) = self.send("POST", &Self::store_path("derivations"), Some(Value::Object(m)), err).await? else {
            return Ok(());
        };
        let after = self.app.revision(STORE);
        let outcome = resp.get("outcome").and_then(Value::as_str).unwrap_or("");
        match expect {
            Some(e) => {
                let e: DeriveExpect = from_yaml(e, "derivation outcome {outcome, reason, source, ids}")?;
                let got = |k: &str| resp.get(k).and_then(Value::as_str).map(str::to_string);
                let mut bad = outcome != e.outcome;
                bad |= e.reason.is_some() && got("reason") != e.reason;
                bad |= e.source.is_some() && got("source") != e.source;
                if let Some(ids) = &e.ids {
                    bad |= resp.get("ids") != Some(&json!(ids));
                }
                if bad {
                    return Err(format!("expected {e:?}, got {resp}"));
                }
            }
            None if outcome == "suppressed" && d.disposition != "suppress" => {
                return Err(format!("derivation was suppressed but the step expects it to be created: {resp}"));
            }
            None => {}
        }
        if outcome == "suppressed" && before != after {
            return Err(format!("a suppressed derivation changed the revision from {before} to {after}: {resp}"));
        }
        if outcome != "suppressed" && after != before + 1 {
            return Err(format!("a derivation that wrote should commit one revision ({before} -> {after}): {resp}"));
        }
        self.remember_grant(d.alias.as_deref(), Some(&resp))
    }

    /// Compares one decision with its expectation, and checks the decision's own consistency.
    fn compare_decision(&self, item: &str, e: &CheckExpect, got: &Value) -> StepResult {
        let reason = got.get("reason").and_then(Value::as_str).unwrap_or("");
        let admitted = got.get("admitted").and_then(Value::as_bool);
        let basis = got.get("basis").and_then(Value::as_str);
        let grant = got.get("grant").and_then(Value::as_str);
        let fail = |why: String| Err(format!("{item}: {why}; got {got}"));
        // The decision must agree with itself whatever the scenario expects.
        let coherent = match reason {
            "admitted_origin" | "admitted_public" => {
                admitted == Some(true) && basis == Some("origin") && grant.is_none()
            }
            "admitted_grant" => admitted == Some(true) && basis == Some("grant") && grant.is_some(),
            _ => admitted == Some(false) && basis.is_none() && grant.is_none(),
        };
        if !coherent {
            return fail("incoherent decision (reason, admitted, basis and grant disagree)".into());
        }
        // SPEC §6.2: an admitted answer carries its role, data with its author (none exactly
        // when the author is unknown); a denial none.
        let role = got.get("role").and_then(Value::as_str);
        let author = got.get("author").and_then(Value::as_str);
        let data_reason = got.get("data_reason").and_then(Value::as_str);
        let role_coherent = match (admitted, role) {
            (Some(true), Some("instruction")) => author.is_none() && got.get("untrusted_source").is_none(),
            (Some(true), Some("data")) => {
                data_reason.is_some() && author.is_none() == (data_reason == Some("author_unknown"))
            }
            (Some(false), None) => author.is_none(),
            _ => false,
        };
        if !role_coherent {
            return fail(
                "incoherent role (an admitted answer carries `role`, data its `author` unless unknown, a denial neither)".into(),
            );
        }
        if got.get("item").and_then(Value::as_str) != Some(item) {
            return fail("decision names another item".into());
        }
        let full = match e {
            CheckExpect::Reason(r) => {
                return if r == reason { Ok(()) } else { fail(format!("expected {r}")) };
            }
            CheckExpect::Full(f) => f,
        };
        let want_admitted = full.admitted.unwrap_or_else(|| full.reason.starts_with("admitted_"));
        if admitted != Some(want_admitted) || reason != full.reason {
            return fail(format!("expected admitted={want_admitted} {}", full.reason));
        }
        if let Some(b) = &full.basis {
            if basis != Some(b.as_str()) {
                return fail(format!("expected basis {b}"));
            }
        }
        if let Some(g) = &full.grant {
            let want = self.grant_id(g)?;
            if grant != Some(want.as_str()) {
                let got_alias = grant.map(|g| self.alias_name(g));
                return fail(format!("expected grant {g} ({want}), got grant {got_alias:?}"));
            }
        }
        if let Some(bb) = &full.blocked_by {
            let want = json!({ "state": bb.state, "item": bb.item });
            if got.get("blocked_by") != Some(&want) {
                return fail(format!("expected blocked_by {want}"));
            }
        }
        compare_role(full.role.as_deref(), full.author.as_deref(), full.untrusted_source.as_ref(), got).or_else(fail)
    }

    async fn check(&self, c: &CheckStep, expect: Option<&serde_yaml::Value>, err: Option<&ErrorExpect>) -> StepResult {
        let container = self.container(&c.container)?;
        if let Some(item) = &c.item {
            let body = json!({ "item": item, "container": container });
            let Some(resp) = self.send("POST", &Self::store_path("check"), Some(body), err).await? else {
                return Ok(());
            };
            let e = expect.ok_or("a check needs `expect` (or `expect_error`)")?;
            let e: CheckExpect = from_yaml(e, "decision")?;
            return self.compare_decision(item, &e, &resp);
        }
        let e = expect.ok_or("a check of several items needs `expect: {item: decision, ...}`")?;
        let e: BTreeMap<String, CheckExpect> = from_yaml(e, "map of item ids to decisions")?;
        let items: Vec<&String> = e.keys().collect();
        let body = json!({ "items": items, "container": container });
        let Some(resp) = self.send("POST", &Self::store_path("check/bulk"), Some(body), err).await? else {
            return Ok(());
        };
        let results = resp.get("results").and_then(Value::as_array).ok_or_else(|| format!("no results in {resp}"))?;
        if results.len() != items.len() {
            return Err(format!("asked for {} decisions, got {resp}", items.len()));
        }
        let mut problems = Vec::new();
        for ((item, want), got) in e.iter().zip(results) {
            if let Err(p) = self.compare_decision(item, want, got) {
                problems.push(p);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n    "))
        }
    }

    async fn lookup(
        &self,
        l: &LookupStep,
        expect: Option<&serde_yaml::Value>,
        err: Option<&ErrorExpect>,
    ) -> StepResult {
        let container = self.container(&l.container)?;
        let limit = l.limit.unwrap_or(PAGE_LIMIT);
        let mut ids: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = Vec::new();
        for _ in 0..MAX_PAGES {
            let mut body = json!({ "container": container, "limit": limit });
            if !l.owners.is_empty() {
                body["owners"] = json!(l.owners);
            }
            if let Some(c) = &cursor {
                body["cursor"] = json!(c);
            }
            let Some(resp) = self.send("POST", &Self::store_path("lookup"), Some(body), err).await? else {
                return Ok(());
            };
            let items = resp.get("items").and_then(Value::as_array).ok_or_else(|| format!("no items in {resp}"))?;
            if items.len() > limit {
                return Err(format!("a page of limit {limit} returned {} items: {resp}", items.len()));
            }
            for it in items {
                if it.get("admitted").and_then(Value::as_bool) != Some(true) {
                    return Err(format!("lookup returned a decision that is not admitted: {it}"));
                }
                ids.push(it.get("item").and_then(Value::as_str).unwrap_or("").to_string());
            }
            pages.push(resp.clone());
            cursor = resp.get("cursor").and_then(Value::as_str).map(str::to_string);
            if cursor.is_none() {
                break;
            }
            if items.is_empty() {
                return Err(format!("an empty page carried a cursor: {resp}"));
            }
        }
        if cursor.is_some() {
            return Err(format!("lookup did not end after {MAX_PAGES} pages"));
        }
        let e = expect.ok_or("a lookup needs `expect: [item ids in order]`")?;
        let want: Vec<String> = from_yaml(e, "list of item ids")?;
        if ids != want {
            return Err(format!("expected {want:?}, got {ids:?} (pages: {})", Value::Array(pages)));
        }
        // Every item a lookup returns must also pass a single check in the same container.
        for id in &ids {
            let body = json!({ "item": id, "container": container });
            let (status, resp) = self.app.call("POST", &Self::store_path("check"), Some(body)).await;
            if !status.is_success() || resp.get("admitted") != Some(&json!(true)) {
                return Err(format!("lookup returned {id} but check says {status} {resp}"));
            }
        }
        Ok(())
    }

    async fn context(
        &self,
        c: &ContextStep,
        expect: Option<&serde_yaml::Value>,
        err: Option<&ErrorExpect>,
    ) -> StepResult {
        let container = self.container(&c.container)?;
        let body = json!({ "container": container });
        let attempt = self.send("POST", &Self::store_path("attempts"), Some(body), None).await?.unwrap_or_default();
        let id = attempt.get("attempt").and_then(Value::as_str).ok_or_else(|| format!("no attempt in {attempt}"))?;
        let mut body = json!({ "query": c.query });
        if let Some(f) = c.fetch {
            body["fetch"] = json!(f);
        }
        if let Some(k) = c.k {
            body["k"] = json!(k);
        }
        if !c.owners.is_empty() {
            body["owners"] = json!(c.owners);
        }
        let path = Self::store_path(&format!("attempts/{id}/context"));
        let Some(resp) = self.send("POST", &path, Some(body), err).await? else { return Ok(()) };
        let items = resp.get("items").and_then(Value::as_array).ok_or_else(|| format!("no items in {resp}"))?;
        let ids: Vec<String> =
            items.iter().map(|i| i.get("item").and_then(Value::as_str).unwrap_or("").to_string()).collect();
        let e = expect.ok_or("a context needs `expect: [item ids in context order]`")?;
        let want: ContextExpect = from_yaml(e, "list of item ids, or of {item, role, author, untrusted_source}")?;
        let want_ids: Vec<String> = match &want {
            ContextExpect::Ids(v) => v.clone(),
            ContextExpect::Full(v) => v.iter().map(|i| i.item.clone()).collect(),
        };
        if ids != want_ids {
            return Err(format!("expected {want_ids:?}, got {ids:?} ({resp})"));
        }
        if let ContextExpect::Full(v) = &want {
            for (w, got) in v.iter().zip(items) {
                compare_role(w.role.as_deref(), w.author.as_deref(), w.untrusted_source.as_ref(), got)
                    .map_err(|why| format!("context item {}: {why}; got {got}", w.item))?;
            }
        }
        // Every item of the context passes a check under the same attempt, with the same role.
        for (item, got) in ids.iter().zip(items) {
            let body = json!({ "item": item, "attempt": id });
            let (status, d) = self.app.call("POST", &Self::store_path("check"), Some(body)).await;
            if !status.is_success() || d.get("admitted") != Some(&json!(true)) {
                return Err(format!("the context holds {item} but a check under its attempt says {status} {d}"));
            }
            if got.get("role").is_none() || d.get("role") != got.get("role") || d.get("author") != got.get("author") {
                return Err(format!("context item {item} has another role than its check: {got} vs {d}"));
            }
        }
        let (status, back) = self.app.call("GET", &Self::store_path(&format!("attempts/{id}")), None).await;
        let sealed_items = back.pointer("/context/items").and_then(Value::as_array).cloned().unwrap_or_default();
        let sealed: Vec<&str> = sealed_items.iter().filter_map(|i| i.get("item").and_then(Value::as_str)).collect();
        if !status.is_success() || sealed != ids.iter().map(String::as_str).collect::<Vec<_>>() {
            return Err(format!("the attempt's readback does not hold the sealed context: {status} {back}"));
        }
        // The sealed record keeps each item's role for audit.
        let roles =
            |v: &[Value]| v.iter().map(|i| (i.get("role").cloned(), i.get("author").cloned())).collect::<Vec<_>>();
        if roles(&sealed_items) != roles(items) {
            return Err(format!("the sealed context's roles differ from the response's: {back}"));
        }
        Ok(())
    }

    fn compare_audience(&self, want: &AudSpec, got: &Value) -> StepResult {
        let members: Vec<String> = got
            .get("members")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let kind = got.get("kind").and_then(Value::as_str).unwrap_or("");
        let grant = got.get("grant").and_then(Value::as_str);
        let (want_members, want_grant) = match want {
            AudSpec::Keyword(k) if k == "public" => {
                return if kind == "public" && members.is_empty() {
                    Ok(())
                } else {
                    Err(format!("expected the public audience, got {got}"))
                };
            }
            AudSpec::Keyword(k) => return Err(format!("unknown audience keyword `{k}` (only `public`)")),
            AudSpec::Members(m) => (m, None),
            AudSpec::Full(f) => {
                if let Some(c) = &f.consent {
                    let got_consent = got.get("consent").cloned().unwrap_or(Value::Null);
                    if !subset(c, &got_consent) {
                        return Err(format!("expected a consent state containing {c}, got {got}"));
                    }
                }
                (&f.members, f.grant.as_deref())
            }
        };
        let mut want_sorted = want_members.clone();
        want_sorted.sort();
        want_sorted.dedup();
        if members != want_sorted {
            return Err(format!("expected members {want_sorted:?}, got {got}"));
        }
        let want_kind = if want_sorted.len() == 1 { "owner_private" } else { "shared" };
        if kind != want_kind {
            return Err(format!("expected kind {want_kind}, got {got}"));
        }
        if let Some(g) = want_grant {
            let id = self.grant_id(g)?;
            if grant != Some(id.as_str()) {
                return Err(format!("expected grant {g} ({id}), got {got}"));
            }
        }
        Ok(())
    }

    async fn expand(&self, item: &str, expect: Option<&serde_yaml::Value>, err: Option<&ErrorExpect>) -> StepResult {
        let path = Self::store_path(&format!("items/{item}/audiences"));
        let Some(resp) = self.send("GET", &path, None, err).await? else { return Ok(()) };
        let e = expect.ok_or("an expand needs `expect: [audiences, origin first]`")?;
        let want: Vec<AudSpec> = from_yaml(e, "list of audiences")?;
        let got = resp.get("audiences").and_then(Value::as_array).ok_or_else(|| format!("no audiences in {resp}"))?;
        if got.len() != want.len() {
            return Err(format!("expected {} audiences, got {resp}", want.len()));
        }
        for (n, (w, g)) in want.iter().zip(got).enumerate() {
            let source = if n == 0 { "origin" } else { "grant" };
            if g.get("source").and_then(Value::as_str) != Some(source) {
                return Err(format!("audience {n} should come from the {source}: {resp}"));
            }
            self.compare_audience(w, g).map_err(|e| format!("audience {n}: {e}; whole response {resp}"))?;
        }
        Ok(())
    }

    async fn view(&self, item: &str, expect: Option<&serde_yaml::Value>, err: Option<&ErrorExpect>) -> StepResult {
        let Some(resp) = self.send("GET", &Self::store_path(&format!("items/{item}")), None, err).await? else {
            return Ok(());
        };
        let e = expect.ok_or("a view needs `expect`")?;
        let e: ViewExpect = from_yaml(e, "item view (see ViewExpect)")?;
        let s = |k: &str| resp.get(k).and_then(Value::as_str);
        let mut why = Vec::new();
        if let Some(st) = &e.state {
            if s("state") != Some(st.as_str()) {
                why.push(format!("state {st}"));
            }
        }
        if let Some(c) = e.current {
            if resp.get("current") != Some(&json!(c)) {
                why.push(format!("current {c}"));
            }
        }
        if let Some(bb) = &e.blocked_by {
            if resp.get("blocked_by") != Some(&json!({ "state": bb.state, "item": bb.item })) {
                why.push(format!("blocked_by {bb:?}"));
            }
        } else if e.current == Some(true) && resp.get("blocked_by").is_some() {
            why.push("no blocked_by".into());
        }
        if let Some(src) = &e.sources {
            if resp.get("sources") != Some(&json!(src)) {
                why.push(format!("sources {src:?}"));
            }
        }
        if let Some(subjects) = &e.subjects {
            let got = resp.get("subjects").cloned().unwrap_or_else(|| json!([]));
            if got != json!(subjects) {
                why.push(format!("subjects {subjects:?}"));
            }
        }
        if let Some(by) = &e.superseded_by {
            if s("superseded_by") != Some(by.as_str()) {
                why.push(format!("superseded_by {by}"));
            }
        }
        if let Some(a) = &e.audience {
            let aud = resp.get("audience").cloned().unwrap_or(Value::Null);
            if let Err(x) = self.compare_audience(a, &aud) {
                why.push(x);
            }
        }
        let digest = resp.pointer("/audience/digest").and_then(Value::as_str).unwrap_or("");
        let others =
            e.same_audience_as.iter().map(|o| (o, true)).chain(e.other_audience_than.iter().map(|o| (o, false)));
        for (other, same) in others {
            let (status, o) = self.app.call("GET", &Self::store_path(&format!("items/{other}")), None).await;
            let od = o.pointer("/audience/digest").and_then(Value::as_str);
            if !status.is_success() || od.is_none() {
                why.push(format!("a readable item {other} (got {status} {o})"));
            } else if (od == Some(digest)) != same {
                let rel = if same { "the same audience as" } else { "another audience than" };
                why.push(format!("{rel} {other} (whose audience is {})", o["audience"]));
            }
        }
        if why.is_empty() {
            Ok(())
        } else {
            Err(format!("expected {}; got {resp}", why.join(", ")))
        }
    }
}

impl Scenario {
    /// Number of setup steps.
    pub fn setup_len(&self) -> usize {
        self.setup.len()
    }

    /// Number of steps (after the setup).
    pub fn steps_len(&self) -> usize {
        self.steps.len()
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing, running, reporting.

/// The two lists of steps of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `setup:` — steps that must all succeed; the first failure ends the run.
    Setup,
    /// `steps:` — steps with expectations; every failure is reported.
    Steps,
}

/// One failed expectation (or failed setup step).
#[derive(Debug, Clone)]
pub struct Failure {
    /// Which list the step is in.
    pub phase: Phase,
    /// Its position in that list, from 1 (0: creating the scenario's store).
    pub number: usize,
    /// What the step does, e.g. `check f1 in bob_dm`.
    pub action: String,
    /// The step's `note`, if any.
    pub note: Option<String>,
    /// What was expected and what the service answered.
    pub message: String,
}

impl fmt::Display for Failure {
    /// `step 3 (check f1 in bob_dm): f1: expected admitted_origin; got {...} [note: ...]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.phase, self.number) {
            (Phase::Setup, 0) => write!(f, "setup")?,
            (Phase::Setup, n) => write!(f, "setup step {n}")?,
            (Phase::Steps, n) => write!(f, "step {n}")?,
        }
        write!(f, " ({}): {}", self.action, self.message)?;
        if let Some(note) = &self.note {
            write!(f, " [note: {}]", note.trim())?;
        }
        Ok(())
    }
}

/// The outcome of one scenario run.
#[derive(Debug, Clone)]
pub struct Report {
    /// Setup steps plus steps.
    pub steps: usize,
    /// Every failure, in step order.
    pub failures: Vec<Failure>,
    /// A setup step failed, so the run stopped there.
    pub setup_failed: bool,
}

impl Report {
    /// No failure.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// A scenario that cannot be read: the YAML error or the misshapen step, with the line and
/// column (1-based) when the YAML parser gives them.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "line {l} column {c}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses a scenario and checks the shape of every step (exactly one action; `expect` or
/// `expect_error`, not both; none on setup steps), so that a misshapen file is refused whole
/// before anything runs.
pub fn parse(text: &str) -> Result<Scenario, ParseError> {
    let sc = serde_yaml::from_str::<Scenario>(text).map_err(|e| {
        let at = e.location();
        // serde_yaml's message ends with " at line L column C"; the location is given apart.
        let mut message = e.to_string();
        if let Some(loc) = &at {
            let suffix = format!(" at line {} column {}", loc.line(), loc.column());
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_string();
            }
        }
        ParseError { message, line: at.as_ref().map(|l| l.line()), column: at.as_ref().map(|l| l.column()) }
    })?;
    let phases: [(Phase, &[Step]); 2] = [(Phase::Setup, &sc.setup), (Phase::Steps, &sc.steps)];
    for (phase, steps) in phases {
        for (i, step) in steps.iter().enumerate() {
            if let Err((label, e)) = step.check_shape(phase) {
                let place = Failure { phase, number: i + 1, action: label, note: None, message: e };
                return Err(ParseError { message: place.to_string(), line: None, column: None });
            }
        }
    }
    Ok(sc)
}

/// Runs one scenario against a target (which must hold no store `s` yet), from a clock at
/// [`T0_MS`].
pub async fn run<T: Target>(target: &T, scenario: &Scenario) -> Report {
    target.set_clock(T0_MS);
    Runner::new(target, scenario).run().await
}

/// The real router (`earshot_api::router`, authentication off) over a throwaway in-memory
/// store with a manual clock, called in process: what `earshot validate` runs scenarios on.
pub struct Sandbox {
    earshot: Arc<Earshot>,
    clock: Arc<ManualClock>,
    router: axum::Router,
}

impl Sandbox {
    /// A fresh, empty instance at [`T0_MS`].
    pub fn new() -> earshot_store::Result<Self> {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let earshot =
            Arc::new(Earshot::open_with(Arc::new(MemoryBackend::default()), clock.clone(), Config::default())?);
        let router = earshot_api::router(AppState::new(earshot.clone(), Auth::disabled()));
        Ok(Sandbox { earshot, clock, router })
    }

    /// Stops the stores' writers.
    pub fn shutdown(&self) {
        self.earshot.shutdown();
    }
}

impl Target for Sandbox {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let refused =
            |what: String| (StatusCode::BAD_REQUEST, json!({ "error": { "code": "bad_step", "message": what } }));
        let Ok(method) = Method::from_bytes(method.as_bytes()) else {
            return refused(format!("`{method}` is not an HTTP method"));
        };
        let req = Request::builder().method(method).uri(path);
        let req = match body {
            Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        };
        let req = match req {
            Ok(r) => r,
            Err(e) => return refused(format!("`{path}` is not a request path: {e}")),
        };
        let resp = match self.router.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = resp.status();
        let bytes = match resp.into_body().collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": { "message": e.to_string() } })),
        };
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    fn revision(&self, store: &str) -> u64 {
        self.earshot.store(store).map_or(0, |h| h.latest().revision())
    }

    fn set_clock(&self, ms: i64) {
        self.clock.set(ms);
    }
}

/// What `earshot validate` found over its files; an error (for `main`'s exit code) unless
/// every file passed.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Files given.
    pub files: usize,
    /// Files that ran with at least one failure.
    pub failed: usize,
    /// Files that could not be read or parsed.
    pub unreadable: usize,
}

impl Summary {
    /// 0 when every file passed, 2 when a file could not be read or parsed, else 1.
    pub fn exit_code(&self) -> u8 {
        if self.unreadable > 0 {
            2
        } else if self.failed > 0 {
            1
        } else {
            0
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} file(s) failed", self.failed, self.files)?;
        if self.unreadable > 0 {
            write!(f, ", {} could not be read or parsed", self.unreadable)?;
        }
        Ok(())
    }
}

impl std::error::Error for Summary {}

/// One file, read, parsed and run in a fresh [`Sandbox`]; its lines of the report go to `out`.
async fn validate_file(path: &Path, out: &mut dyn Write, summary: &mut Summary) -> std::io::Result<()> {
    let file = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            summary.unreadable += 1;
            return writeln!(out, "{file}: cannot read: {e}");
        }
    };
    let scenario = match parse(&text) {
        Ok(s) => s,
        Err(e) => {
            summary.unreadable += 1;
            return match (e.line, e.column) {
                (Some(l), Some(c)) => writeln!(out, "{file}:{l}:{c}: cannot parse: {}", e.message),
                _ => writeln!(out, "{file}: cannot parse: {}", e.message),
            };
        }
    };
    let sandbox = match Sandbox::new() {
        Ok(s) => s,
        Err(e) => {
            summary.failed += 1;
            return writeln!(out, "{file}: cannot start an in-memory store: {e}");
        }
    };
    let report = run(&sandbox, &scenario).await;
    sandbox.shutdown();
    if report.passed() {
        return writeln!(out, "{file}: ok ({} steps)", report.steps);
    }
    summary.failed += 1;
    for f in &report.failures {
        writeln!(out, "{file}:{f}")?;
    }
    if report.setup_failed {
        writeln!(out, "{file}: setup failed, so the steps after it were not run")?;
    }
    Ok(())
}

/// `earshot validate FILE...`: runs each file in its own throwaway store and writes
/// `FILE: ok (N steps)` or one `FILE:step K (action): …` line per failure to `out`.
pub fn run_files(paths: &[PathBuf], out: &mut dyn Write) -> std::io::Result<Summary> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut summary = Summary { files: paths.len(), ..Summary::default() };
    for path in paths {
        runtime.block_on(validate_file(path, out, &mut summary))?;
    }
    Ok(summary)
}
