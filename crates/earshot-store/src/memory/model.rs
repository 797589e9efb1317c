//! Request and response shapes of the store: what a write asks for and what a read returns.
//!
//! These are plain serde types with `deny_unknown_fields`, so the API can decode JSON straight
//! into them; nothing here knows about HTTP.

use earshot_core::{Action, AudienceKind, Disposition, Quality, Role, State};

use crate::memory::trust::{RoleView, UntrustedSource};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Bounds on every list and string a request may carry.
pub mod limits {
    pub const MAX_VIEWERS: usize = 256;
    pub const MAX_SOURCES: usize = 256;
    pub const MAX_OUTPUTS: usize = 64;
    pub const MAX_GRANT_MEMBERS: usize = 1024;
    pub const MAX_BULK_ITEMS: usize = 1000;
    pub const MAX_LOOKUP_LIMIT: usize = 1000;
    pub const DEFAULT_LOOKUP_LIMIT: usize = 100;
    pub const MAX_OWNERS: usize = 64;
    pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
    pub const MAX_ATTRIBUTES: usize = 64;
    pub const MAX_ATTRIBUTE_BYTES: usize = 1024;
    pub const MAX_TEXT_BYTES: usize = 1024;
    pub const MAX_TRANSPORT_LEN: usize = 64;
    pub const MAX_IDENTIFIER_LEN: usize = 256;
    /// Context assembly (SPEC §1.10): query length in bytes, fetch budget and context size.
    pub const MAX_QUERY_BYTES: usize = 1024;
    pub const DEFAULT_FETCH: usize = 20;
    pub const MAX_FETCH: usize = 200;
    pub const DEFAULT_K: usize = 5;
    /// Dense recall: the most dimensions an item's embedding or a query embedding may have.
    pub const MAX_EMBEDDING_DIMENSION: usize = 4096;
}

/// The three kinds of participant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParticipantKind {
    Person,
    Agent,
    Device,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewParticipant {
    pub id: String,
    pub kind: ParticipantKind,
    #[serde(default)]
    pub name: Option<String>,
}

/// A transport identity, e.g. `("email", "bob@example.com")`. Read from an object only (see
/// [`object`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Identity {
    pub transport: String,
    pub identifier: String,
}

impl<'de> Deserialize<'de> for Identity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            transport: String,
            identifier: String,
        }
        let f: Fields = object(d, "an identity: an object with `transport` and `identifier`")?;
        Ok(Identity { transport: f.transport, identifier: f.identifier })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewIdentity {
    pub transport: String,
    pub identifier: String,
    pub participant: String,
}

impl<'de> Deserialize<'de> for NewIdentity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            transport: String,
            identifier: String,
            participant: String,
        }
        let f: Fields = object(d, "an object with `transport`, `identifier` and `participant`")?;
        Ok(NewIdentity { transport: f.transport, identifier: f.identifier, participant: f.participant })
    }
}

/// Reads `T` from a map only. serde's derive also reads a struct from an array of its fields in
/// order (`["email", "b@x"]`), which the API document (an object, `additionalProperties: false`)
/// does not allow: the API would then accept what it documents as invalid.
fn object<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D, expecting: &'static str) -> Result<T, D::Error> {
    struct V<T>(std::marker::PhantomData<T>, &'static str);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.1)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_map(V(std::marker::PhantomData, expecting))
}

/// Viewer evidence: participant ids and/or transport identities, plus a quality.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewersInput {
    #[serde(default)]
    pub participants: Vec<String>,
    #[serde(default)]
    pub identities: Vec<Identity>,
    #[serde(default)]
    pub quality: Quality,
}

/// A container: the acting owner and the viewer evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerInput {
    pub owner: String,
    #[serde(default)]
    pub viewers: ViewersInput,
}

/// The origin of a recorded item: one of the two keywords, or the viewers present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OriginInput {
    Keyword(OriginKeyword),
    Viewers(ViewersInput),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OriginKeyword {
    Public,
    OwnerPrivate,
}

/// Free-form attributes: string keys to scalar JSON values.
pub type Attributes = BTreeMap<String, serde_json::Value>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewItem {
    #[serde(default)]
    pub id: Option<String>,
    pub owner: String,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    pub origin: OriginInput,
    /// The participants the item is about (SPEC §6.3): grants on it need their consent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
    /// The participant whose words the item carries (SPEC §6.2); the owner when absent.
    /// Left out of the serialized form when absent, so that the request digests of creates
    /// recorded before authors existed still match their retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The item's embedding (dense recall): finite floats, as many as the store's dimension.
    /// Left out of the serialized form when absent (request digests of older creates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// The metric the embedding is meant for; the store's when absent (`cosine` for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_metric: Option<Metric>,
}

/// How dense recall compares embeddings. Fixed for a store by its first embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Cosine similarity: embeddings are normalised when written, so scoring is a dot product.
    Cosine,
    /// The plain dot product of the vectors as written.
    Dot,
}

impl Metric {
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Cosine => "cosine",
            Metric::Dot => "dot",
        }
    }
}

/// How a context ranks its admissible candidates (SPEC §1.10).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// BM25 over the candidates' content, with the candidates' corpus statistics.
    #[default]
    Bm25,
    /// The similarity of each candidate's embedding to the query embedding.
    Dense,
    /// Reciprocal rank fusion of the BM25 and dense ranks within the candidates.
    Hybrid,
}

impl RankBy {
    pub fn as_str(self) -> &'static str {
        match self {
            RankBy::Bm25 => "bm25",
            RankBy::Dense => "dense",
            RankBy::Hybrid => "hybrid",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifecycleRequest {
    pub action: Action,
    /// For `supersede`: the item that supersedes this one; it must be newer (created later).
    #[serde(default)]
    pub by: Option<String>,
}

/// One output of a partition: its own content and the sources it was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionOutput {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    pub sources: Vec<String>,
    /// Subjects named beyond those inherited from the output's sources (SPEC §6.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeriveRequest {
    pub disposition: Disposition,
    pub owner: String,
    pub sources: Vec<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    /// The viewers of the container the derivation was produced for (suppress rule, §1.5).
    #[serde(default)]
    pub container: Option<ViewersInput>,
    /// Partition only: one output per distinct source audience.
    #[serde(default)]
    pub outputs: Option<Vec<PartitionOutput>>,
    /// Declassification only: the exact audience the grant adds.
    #[serde(default)]
    pub members: Option<Vec<String>>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Intersection or quarantine only: subjects named beyond those inherited from the sources
    /// (SPEC §6.3; a derived item's subjects are the union of its sources').
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
}

/// `POST /grants/{grant}/consents`: the subject who consents to the grant (SPEC §6.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewConsent {
    pub subject: String,
}

/// A consent decision's kind, as records and views spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsentAction {
    Consented,
    Withdrawn,
}

/// One recorded consent decision (audit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentEventView {
    pub subject: String,
    pub action: ConsentAction,
    pub at: String,
    /// The revision that recorded it.
    pub revision: u64,
}

/// The consent state of a grant on an item with subjects (SPEC §6.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentView {
    /// The item's subjects other than its owner: each must consent.
    pub required: Vec<String>,
    /// Those whose consent is in force.
    pub consented: Vec<String>,
    /// Required subjects without consent in force (never consented, or withdrawn).
    pub missing: Vec<String>,
    /// Those of `missing` whose last decision was a withdrawal.
    pub withdrawn: Vec<String>,
    /// Whether consent is complete (the grant then admits while it is live).
    pub effective: bool,
    /// Every decision, in order (the item's admin view; absent from expand).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub history: Vec<ConsentEventView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGrant {
    pub members: Vec<String>,
    #[serde(default)]
    pub reason: Option<String>,
    /// RFC 3339 instant after which the grant no longer counts.
    #[serde(default)]
    pub expires_at: Option<String>,
}

/// What a memory write produced (the composition adds the revision and token to make the
/// client's `WriteOutcome`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Outcome {
    /// `created`, `updated`, `removed`, `granted`, `revoked`, `quarantined` or `suppressed`.
    pub outcome: String,
    /// Ids of items, participants or grants created or changed.
    pub ids: Vec<String>,
    /// For a suppressed or quarantined derivation: why, and which source.
    pub reason: Option<String>,
    pub source: Option<String>,
}

pub use crate::kernel::token::Consistency;

/// One authorized audience of an item, as expand lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudienceView {
    /// `origin` or `grant`.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    pub kind: AudienceKind,
    pub digest: String,
    /// Sorted member ids; empty for the public audience.
    pub members: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// A grant on an item with subjects: its consent state (SPEC §6.3); a grant whose consent
    /// is not `effective` admits nothing.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub consent: Option<ConsentView>,
}

/// A grant as the admin view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantView {
    pub id: String,
    pub item: String,
    pub kind: AudienceKind,
    pub digest: String,
    pub members: Vec<String>,
    pub issuer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    pub revoked: bool,
    pub live: bool,
    /// On an item with subjects: the consent state with its history (SPEC §6.3).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub consent: Option<ConsentView>,
}

/// The admin view of one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemView {
    pub id: String,
    pub owner: String,
    pub state: State,
    pub current: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<BlockedBy>,
    pub audience: AudienceView,
    pub grants: Vec<GrantView>,
    pub sources: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    pub created_revision: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Attributes>,
    pub revision: u64,
    /// Consistency token for `revision`.
    pub token: String,
    /// Read with `at_exact` at a revision whose answers may not be used now (SPEC §2.6): the
    /// newest revision. The view is then the record as it was at `revision`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latest_revision: Option<u64>,
    /// The participants the item is about (SPEC §6.3), sorted.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub subjects: Vec<String>,
    /// The participant whose words the item carries (SPEC §6.2); absent when unknown (written
    /// without an `author` in front of anyone besides the owner).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub author: Option<String>,
    /// The item's role at this revision: `instruction` or `data` (SPEC §6.2).
    pub role: Role,
    /// For data: why (`untrusted_author`, `author_unknown`, `untrusted_source`, `provenance_incomplete`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_reason: Option<String>,
    /// For data made so by a transitive source: that source and its untrusted author.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub untrusted_source: Option<UntrustedSource>,
}

/// Why a container did not resolve (its viewers are then `U`: only public items are admitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnresolvedReason {
    /// The acting owner is not a participant of the store.
    UnknownOwner,
    /// A viewer participant id is not a participant of the store.
    UnknownParticipant,
    /// A viewer identity is bound to no participant.
    UnknownIdentity,
    /// A viewer identity is bound to more than one participant.
    AmbiguousIdentity,
    /// The evidence's quality is not `fresh`.
    EvidenceQuality,
}

/// Whether a container resolved and, when it did not, why. `detail` names the input at fault
/// and echoes only what the caller sent (e.g. `viewers.participants[1]: bob`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerResolution {
    pub resolved: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<UnresolvedReason>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
}

impl ContainerResolution {
    /// A container that resolved.
    pub fn resolved() -> Self {
        ContainerResolution { resolved: true, reason: None, detail: None }
    }

    /// A container that did not resolve, for `reason`, at the input `detail` names.
    pub fn unresolved(reason: UnresolvedReason, detail: impl Into<String>) -> Self {
        ContainerResolution { resolved: false, reason: Some(reason), detail: Some(detail.into()) }
    }
}

/// Why an item is not current: the state that stops it and the item holding that state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedBy {
    pub state: State,
    pub item: String,
}

/// The decision for one item and one container, as clients see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionView {
    pub item: String,
    pub admitted: bool,
    /// A reason code; borrowed from the closed set, so a decision allocates no string for it.
    pub reason: Cow<'static, str>,
    /// `origin`, `grant` or absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<BlockedBy>,
    /// Set when the read was at a revision older than the newest: the decision as it was then,
    /// for audit and explanation only. The answer itself then never admits (SPEC §2.6).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub historical: Option<Box<DecisionView>>,
    /// SPEC §6.2, on an admitted answer: `instruction` when the item and every transitive
    /// source are trusted by its owner, else `data`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub role: Option<Role>,
    /// For data: the item's author (a derived item's author is its owner).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub author: Option<String>,
    /// For data: why (`untrusted_author`, `author_unknown`, `untrusted_source`, `provenance_incomplete`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_reason: Option<Cow<'static, str>>,
    /// For data made so by a transitive source: that source and its untrusted author.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub untrusted_source: Option<UntrustedSource>,
}

pub use crate::common::HISTORICAL_REASON;

impl DecisionView {
    /// Sets the role of an admitted answer (SPEC §6.2).
    pub(crate) fn set_role(&mut self, r: RoleView) {
        self.role = Some(r.role);
        self.author = r.author;
        self.data_reason = r.reason.map(Cow::Borrowed);
        self.untrusted_source = r.source;
    }
}

impl DecisionView {
    /// This decision as a historical answer: not an admission, with the decision as it was
    /// then kept under `historical`.
    pub fn into_historical(self) -> DecisionView {
        DecisionView {
            item: self.item.clone(),
            admitted: false,
            reason: HISTORICAL_REASON.into(),
            basis: None,
            grant: None,
            blocked_by: None,
            historical: Some(Box::new(self)),
            role: None,
            author: None,
            data_reason: None,
            untrusted_source: None,
        }
    }
}

/// One page of a lookup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupPage {
    pub items: Vec<DecisionView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

pub use crate::common::{format_time, parse_time};

/// A context request under an attempt: the query, the fetch budget (candidates ranked) and `k`
/// (the context's size, taken from the top of the fetch window).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// The text query (BM25); empty or absent for a `dense` ranking.
    #[serde(default)]
    pub query: String,
    /// The query embedding (dense recall), in the store's dimension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_embedding: Option<Vec<f32>>,
    /// `bm25` (the default), `dense` or `hybrid`.
    #[serde(default)]
    pub ranking: RankBy,
    #[serde(default)]
    pub fetch: Option<usize>,
    #[serde(default)]
    pub k: Option<usize>,
    /// Whose memories to search; defaults to the attempt's container owner.
    #[serde(default)]
    pub owners: Vec<String>,
}

/// One ranked candidate of the fetch window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextCandidate {
    pub item: String,
    pub score: f32,
}

/// One item of an assembled context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextItem {
    /// 1-based position in the context.
    pub rank: usize,
    pub item: String,
    /// The ranking's score among the admissible candidates: BM25, the dense similarity, or the
    /// reciprocal-rank-fusion score of `hybrid`.
    pub score: f32,
    /// SHA-256 (hex) of the content that was indexed; absent for an item without content.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub digest: Option<String>,
    /// The admission basis: `origin` or `grant`.
    pub basis: Cow<'static, str>,
    /// The admission reason code (`admitted_origin`, `admitted_grant`, `admitted_public`).
    pub reason: Cow<'static, str>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub grant: Option<String>,
    /// The content itself: in the response that assembles the context, never in the sealed record
    /// (which keeps its digest).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub content: Option<String>,
    /// SPEC §6.2: `instruction` or `data` (absent only in contexts sealed before roles existed).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub role: Option<Role>,
    /// For data: the item's author.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub author: Option<String>,
    /// For data: why (`untrusted_author`, `author_unknown`, `untrusted_source`, `provenance_incomplete`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_reason: Option<Cow<'static, str>>,
    /// For data made so by a transitive source: that source and its untrusted author.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub untrusted_source: Option<UntrustedSource>,
}

impl ContextItem {
    /// Sets the role of a context item (SPEC §6.2).
    pub(crate) fn set_role(&mut self, r: RoleView) {
        self.role = Some(r.role);
        self.author = r.author;
        self.data_reason = r.reason.map(Cow::Borrowed);
        self.untrusted_source = r.source;
    }
}

/// The exact context of one attempt, sealed and stored durably when it is assembled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SealedContext {
    pub attempt: String,
    /// The attempt's pinned revision and its token.
    pub revision: u64,
    pub token: String,
    /// The attempt's snapshot time (grants are evaluated at this instant).
    pub at: String,
    pub sealed_at: String,
    pub container: ContainerInput,
    /// Whether the container's viewers resolved (else it saw public items only).
    pub resolved: bool,
    /// Why the container did not resolve (or that it did). Absent in contexts sealed before
    /// it was recorded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resolution: Option<ContainerResolution>,
    /// Whose memories were searched.
    pub owners: Vec<String>,
    pub query: String,
    /// How the candidates were ranked (`bm25` in contexts sealed before dense recall existed).
    #[serde(default)]
    pub ranking: RankBy,
    /// SHA-256 (hex) of the query embedding as little-endian f32s; the vector is not kept.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub query_embedding_digest: Option<String>,
    pub fetch: usize,
    pub k: usize,
    /// How many admissible candidates were ranked.
    pub candidates: usize,
    /// The fetch window: the top `fetch` admissible candidates that match the query, in rank
    /// order (score descending, ties by item id).
    pub fetched: Vec<ContextCandidate>,
    /// The context: the first `k` of the fetch window.
    pub items: Vec<ContextItem>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn instants_need_a_zone() {
        let utc = parse_time("t", "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(parse_time("t", "2026-01-01T01:00:00+01:00").unwrap(), utc);
        assert_eq!(parse_time("t", "2025-12-31T19:00:00-05:00").unwrap(), utc);
        assert_eq!(parse_time("t", "2026-01-01T00:00:00.000z").unwrap(), utc);
        // No zone: ambiguous, refused (issue 9: it used to be read as UTC).
        for s in ["2026-01-01T00:00:00", "2026-01-01 00:00:00", "2026-01-01T00:00:00.5"] {
            let e = parse_time("expires_at", s).unwrap_err();
            assert!(e.to_string().contains("needs a zone"), "{s}: {e}");
        }
    }

    /// Issue 36: an identity is an object (OpenAPI `Identity`, `additionalProperties: false`),
    /// never the array of its fields that serde's derive would also take.
    #[test]
    fn identities_are_objects_only() {
        let read = |s: &str| serde_json::from_str::<ViewersInput>(s).map_err(|e| e.to_string());
        let ok = read(r#"{"identities": [{"transport": "email", "identifier": "b@x"}]}"#).unwrap();
        assert_eq!(ok.identities, vec![Identity { transport: "email".into(), identifier: "b@x".into() }]);
        let e = read(r#"{"identities": [["email", "b@x"]]}"#).unwrap_err();
        assert!(e.contains("expected an identity"), "{e}");
        assert!(read(r#"{"identities": [{"transport": "email", "identifier": "b@x", "x": 1}]}"#).is_err());
        assert!(read(r#"{"identities": [{"transport": "email"}]}"#).is_err());
        let new = |s: &str| serde_json::from_str::<NewIdentity>(s).map_err(|e| e.to_string());
        assert!(new(r#"{"transport": "email", "identifier": "b@x", "participant": "bob"}"#).is_ok());
        assert!(new(r#"["email", "b@x", "bob"]"#).is_err());
        assert!(new(r#"{"transport": "email", "identifier": "b@x", "participant": "bob", "x": 1}"#).is_err());
        // What is written reads back.
        let i = Identity { transport: "sms".into(), identifier: "+1".into() };
        assert_eq!(serde_json::from_str::<Identity>(&serde_json::to_string(&i).unwrap()).unwrap(), i);
    }

    #[test]
    fn consistency_names_one_requirement() {
        let read = |s: &str| serde_json::from_str::<Consistency>(s).map_err(|e| e.to_string());
        assert_eq!(read(r#""latest""#), Ok(Consistency::Latest));
        assert_eq!(read(r#"{"at_least": "1.ab"}"#), Ok(Consistency::AtLeast("1.ab".into())));
        assert_eq!(read(r#"{"at_exact": "1.ab"}"#), Ok(Consistency::AtExact("1.ab".into())));
        let both = read(r#"{"at_least": "1.ab", "at_exact": "1.ab"}"#).unwrap_err();
        assert!(both.contains("not both"), "{both}");
        assert!(read("{}").unwrap_err().contains("needs `at_least` or `at_exact`"));
        assert!(read(r#"{"sometime": "1.ab"}"#).unwrap_err().contains("unknown field"));
        assert!(read(r#""soon""#).is_err());
        assert!(read(r#"{"at_least": 5}"#).is_err());
        // The written form reads back.
        for c in [Consistency::Latest, Consistency::AtLeast("2.x".into()), Consistency::AtExact("3.y".into())] {
            assert_eq!(read(&serde_json::to_string(&c).unwrap()), Ok(c));
        }
    }
}
