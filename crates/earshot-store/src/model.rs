//! Request and answer shapes (serde, no HTTP) of both domains in one place, and the two that
//! belong to neither: the `Command` the writer applies (a memory or a device write) and the
//! `WriteOutcome` it answers.

use serde::{Deserialize, Serialize};

use crate::devices::model::{AuthorizeRequest, AuthorizeView, NewCapability, NewDevice, NewRelation, SchemaInput};
pub use crate::memory::model::*;
pub use crate::memory::trust::{NewTrust, RoleView, TrustFilter, TrustView, UntrustedSource};

/// A write as the writer applies it. `issuer` is the authenticated caller, filled in by the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    CreateParticipant(NewParticipant),
    RemoveParticipant {
        id: String,
    },
    BindIdentity(NewIdentity),
    CreateItem(NewItem),
    Lifecycle {
        item: String,
        request: LifecycleRequest,
    },
    Derive {
        request: DeriveRequest,
        issuer: String,
    },
    Grant {
        item: String,
        grant: NewGrant,
        issuer: String,
    },
    RevokeGrant {
        grant: String,
    },
    /// SPEC §6.3: `subject` consents to `grant` (one of its item's subjects other than the owner).
    Consent {
        grant: String,
        subject: String,
    },
    /// SPEC §6.3: `subject` withdraws its consent to `grant`; it stops admitting from this revision.
    WithdrawConsent {
        grant: String,
        subject: String,
    },
    /// SPEC §6.2: `issuer` is the authenticated caller.
    CreateTrust {
        trust: NewTrust,
        issuer: String,
    },
    RevokeTrust {
        trust: String,
    },
    PutSchema(SchemaInput),
    CreateDevice(NewDevice),
    CreateRelation(NewRelation),
    RevokeRelation {
        edge: String,
        by: String,
    },
    CreateCapability(NewCapability),
    RevokeCapability {
        capability: String,
        by: String,
    },
    /// Decide at the latest revision and, on an allow, consume one use (SPEC §2.4).
    ConsumeUse(AuthorizeRequest),
    /// `command` sent with an `Idempotency-Key` (build it with `crate::idempotency::keyed`):
    /// a retry with the same key and fingerprint answers the recorded outcome without writing.
    Keyed {
        key: String,
        /// SHA-256 of the caller and `command` (see `crate::idempotency`).
        fingerprint: String,
        command: Box<Command>,
    },
}

/// What a committed (or suppressed) write produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct WriteOutcome {
    /// `created`, `updated`, `removed`, `granted`, `exists` (a replayed live grant: nothing written),
    /// `revoked`, `quarantined`, `suppressed`, `consented` or `withdrawn`; for a use `consumed`,
    /// `recorded`, `allowed` (nothing written) or `denied` (nothing written).
    pub outcome: String,
    /// Ids of items, participants or grants created or changed.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ids: Vec<String>,
    /// A capability's revocation: the descendants it newly invalidates, valid through it until
    /// then (not themselves revoked; their chain view names the revoked one as `invalidated_by`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub invalidated: Vec<String>,
    /// A capability's revocation: the descendants already invalid through an earlier revocation
    /// (revoked themselves, or below a revoked link); the revocation changes nothing for them.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub already_invalid: Vec<String>,
    /// For a suppressed or quarantined derivation: why, and which source. For a grant, a
    /// declassification or a consent decision: `consent_pending` while the grant still waits
    /// for a subject's consent (SPEC §6.3).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<String>,
    /// The revision this write committed, or the latest revision when nothing was written.
    pub revision: u64,
    /// Consistency token for `revision`.
    pub token: String,
    /// For `POST /uses`: the decision taken at the writer (`outcome` is `consumed` when a use
    /// was counted, `recorded` when nothing was counted but the use was kept for the aggregation
    /// guard, `allowed` when nothing was written, or `denied`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub decision: Option<AuthorizeView>,
}
