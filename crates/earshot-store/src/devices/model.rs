//! Request and response shapes for devices, relation grants, capabilities and `authorize`.

use earshot_core::condition::RequestContext;
use serde::{Deserialize, Serialize};

use crate::kernel::token::Consistency;

/// Bounds on device requests.
pub mod limits {
    /// Most path patterns in one capability.
    pub const MAX_CAPABILITY_PATHS: usize = 32;
    /// Most actions in one capability.
    pub const MAX_ACTIONS: usize = 16;
    /// Longest delegation chain (a root is depth 1).
    pub const MAX_CHAIN_DEPTH: usize = 16;
}

/// `PUT /schema`: the schema text (see `earshot_core::schema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaInput {
    pub schema: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewDevice {
    pub id: String,
    pub owner: String,
    #[serde(default)]
    pub name: Option<String>,
}

/// Constraints as clients write them; times are RFC 3339, the window is `[not_before, not_after)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintsInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uses: Option<u32>,
    /// A CEL expression over the request's context; must evaluate to `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// A directed relation grant `grantor --relation--> grantee`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRelation {
    #[serde(default)]
    pub id: Option<String>,
    pub grantor: String,
    pub relation: String,
    pub grantee: String,
    #[serde(default)]
    pub constraints: Option<ConstraintsInput>,
}

/// A capability: a root (no `parent`, issued by the device's owner) or a delegation (issued by
/// the parent's holder).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCapability {
    #[serde(default)]
    pub id: Option<String>,
    pub issuer: String,
    pub holder: String,
    pub device: String,
    pub paths: Vec<String>,
    pub actions: Vec<String>,
    #[serde(default)]
    pub constraints: Option<ConstraintsInput>,
    #[serde(default)]
    pub parent: Option<String>,
}

/// `POST /authorize` (pure) and `POST /uses` (consumes one use on an allow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthorizeRequest {
    pub principal: String,
    pub device: String,
    pub path: String,
    pub action: String,
    #[serde(default)]
    pub context: RequestContext,
    /// Ignored by `POST /uses`, which always decides at the latest revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
}

/// One link of a capability chain, as a decision reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainLinkView {
    pub capability: String,
    pub holder: String,
    pub issuer: String,
    pub paths: Vec<String>,
    pub actions: Vec<String>,
}

/// The authority a decision used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AuthorityView {
    Owner {
        device: String,
        owner: String,
    },
    Relation {
        edge: String,
        grantor: String,
        relation: String,
        grantee: String,
    },
    /// Root first, the principal's capability last.
    Capability {
        chain: Vec<ChainLinkView>,
    },
}

/// Why the covering authority did not hold: the link that failed and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureView {
    /// The edge or capability id that failed (an ancestor, for a chain).
    pub link: String,
    pub message: String,
}

/// Why a use was refused by the aggregation guard (SPEC §6.4): the conflict, and the earlier
/// use of another member that completes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AggregationView {
    pub conflict: String,
    /// The earlier use (`use-<n>`); absent when the requested slice matches two members of the
    /// conflict by itself.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub earlier_use: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub earlier_device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub earlier_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub earlier_at: Option<String>,
}

/// A decision as clients see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizeView {
    pub allowed: bool,
    pub reason: String,
    /// On an allow: the edge or the whole chain used. On a denial by a failing link: the authority
    /// that would have covered the request.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub authority: Option<AuthorityView>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub failure: Option<FailureView>,
    /// On `denied_aggregation`: the conflict and the earlier use (the authority is the one that
    /// would otherwise have allowed the use).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub aggregation: Option<AggregationView>,
    /// Set when the decision was read at a revision older than the newest: the decision as it
    /// was then, for audit and explanation only; `allowed` is then always false (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub historical: Option<Box<AuthorizeView>>,
}

impl AuthorizeView {
    /// This decision as a historical answer: never a usable allow, with the decision as it
    /// was then kept under `historical`.
    pub fn into_historical(self) -> AuthorizeView {
        AuthorizeView {
            allowed: false,
            reason: crate::common::HISTORICAL_REASON.to_string(),
            authority: None,
            failure: None,
            aggregation: None,
            historical: Some(Box::new(self)),
        }
    }
}

/// Constraints as stored and shown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintsView {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub not_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub not_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub uses: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub condition: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityView {
    pub id: String,
    pub holder: String,
    pub issuer: String,
    pub device: String,
    pub paths: Vec<String>,
    pub actions: Vec<String>,
    pub constraints: ConstraintsView,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub uses_left: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent: Option<String>,
    pub depth: usize,
    /// Whether this capability itself was revoked.
    pub revoked: bool,
    /// The nearest revoked ancestor, when there is one: this capability is then invalidated
    /// through it (it authorizes nothing) though not itself revoked.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub invalidated_by: Option<String>,
    pub created_revision: u64,
}

/// `GET /capabilities/{c}/chain`: root first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainView {
    pub capability: String,
    pub chain: Vec<CapabilityView>,
}

/// `GET /capabilities/{c}/dependents`: what revoking `capability` would invalidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependentsView {
    pub capability: String,
    /// The descendants the revocation would newly invalidate: no link of their chain is revoked
    /// yet. In creation order.
    pub invalidates: Vec<String>,
    /// The descendants already invalid through a revocation: revoked themselves, or below a
    /// revoked link (`capability` itself or one of its ancestors included). In creation order.
    #[serde(default)]
    pub already_invalid: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpeningView {
    pub pattern: String,
    pub actions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelationView {
    pub name: String,
    pub includes: Vec<String>,
    pub opens: Vec<OpeningView>,
    /// Unrevoked edges of this relation.
    pub edges: usize,
}

/// An aggregation conflict of the schema (SPEC §6.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictView {
    pub name: String,
    pub members: Vec<String>,
    /// As written (`24h`).
    pub window: String,
    pub window_ms: i64,
}

/// `GET /schema`: the declared relations and which of them no edge exercises.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaView {
    pub schema: String,
    pub relations: Vec<RelationView>,
    /// Declared relations that no unrevoked edge exercises (declared is not exercised).
    pub unexercised: Vec<String>,
    /// Declared aggregation conflicts, in the order written.
    #[serde(default)]
    pub conflicts: Vec<ConflictView>,
}
