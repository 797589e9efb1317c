//! The store's one error type: every way a write or read can be refused, with a stable code.

use earshot_core::{IdError, TransitionError};

/// Everything the store can refuse. The API maps each variant to an HTTP status once, at its
/// edge; [`StoreError::code`] is the stable snake_case code clients see.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("`{field}` is not a valid identifier: {source}")]
    InvalidId { field: &'static str, value: String, source: IdError },
    #[error("`{field}`: {message}")]
    InvalidInput { field: &'static str, message: String },
    #[error("`{field}` exceeds its limit of {limit}")]
    LimitExceeded { field: &'static str, limit: usize },
    #[error("store `{0}` does not exist")]
    StoreNotFound(String),
    #[error("store `{0}` already exists")]
    StoreExists(String),
    #[error("participant `{0}` does not exist")]
    ParticipantNotFound(String),
    #[error("participant `{0}` already exists")]
    ParticipantExists(String),
    #[error("participant `{0}` owns items and cannot be removed")]
    ParticipantOwnsItems(String),
    #[error("the anonymous participant can never be named in an audience or grant")]
    AnonymousParticipant,
    #[error("item `{0}` does not exist")]
    ItemNotFound(String),
    #[error("item `{0}` already exists")]
    ItemExists(String),
    #[error("source `{0}` does not exist")]
    SourceNotFound(String),
    #[error("source `{source_id}` is owned by `{source_owner}`, not by the deriving owner `{owner}`")]
    SourceOwnerMismatch { source_id: String, source_owner: String, owner: String },
    #[error("the origin viewers did not all resolve; the item was not written")]
    OriginUnresolved,
    #[error("{0}")]
    InvalidTransition(TransitionError),
    #[error("partition output {output} mixes sources of different audiences")]
    PartitionMixedAudiences { output: usize },
    #[error("grant `{0}` does not exist")]
    GrantNotFound(String),
    #[error("grant `{0}` is already revoked")]
    GrantAlreadyRevoked(String),
    /// A subject named for a new item is not a participant of the store (SPEC §6.3).
    #[error("subject `{0}` is not a participant of the store")]
    SubjectNotFound(String),
    /// Only a subject whose consent a grant needs (a subject of its item other than the owner,
    /// still in the store) may consent to it or withdraw (SPEC §6.3).
    #[error("`{subject}` is not a subject whose consent grant `{grant}` needs")]
    NotASubject { grant: String, subject: String },
    #[error("consistency token is malformed")]
    InvalidToken,
    #[error("consistency token belongs to another store")]
    TokenStoreMismatch,
    /// A token of an earlier (or, on a replica that has not noticed yet, a later) life of the
    /// store: the store was deleted and created again under the same id since it was issued.
    #[error("consistency token belongs to another incarnation of store `{0}`: the store was deleted and created again since the token was issued; read again without it")]
    TokenIncarnationMismatch(String),
    /// A list cursor of another incarnation of the store (see `TokenIncarnationMismatch`).
    #[error("cursor belongs to another incarnation of store `{0}`: the store was deleted and created again since the cursor was issued; list again from the first page")]
    CursorIncarnationMismatch(String),
    /// The store this replica runs was deleted, or deleted and created again, by another
    /// replica: nothing was done; the same request finds the store as it is now.
    #[error("store `{0}` was deleted or created again on another replica; retry")]
    StoreReplaced(String),
    #[error("revision {requested} is outside the retention window (oldest retained: {oldest})")]
    RevisionExpired { requested: u64, oldest: u64 },
    #[error("revision {requested} was not reached in time (latest: {latest})")]
    ConsistencyTimeout { requested: u64, latest: u64 },
    #[error("revision {requested} cannot be used now: the newest revision is {latest}, or time has changed what revision {requested} decides since it was written; an attempt assembles contexts for use, so it pins the newest state at the time of the request (omit `consistency`, or use `at_least`)")]
    RevisionNotLatest { requested: u64, latest: u64 },
    #[error("attempt `{0}` does not exist or has expired")]
    AttemptNotFound(String),
    #[error("too many open attempts; retry later")]
    AttemptCapacity,
    #[error("cursor is malformed, or belongs to another list or store")]
    InvalidCursor,
    #[error("the schema has {} problem(s); the first: {}", .0.len(), .0.first().map(|p| p.to_string()).unwrap_or_default())]
    SchemaInvalid(Vec<earshot_core::schema::SchemaProblem>),
    #[error("the store has no schema yet; `PUT /schema` first")]
    SchemaNotFound,
    #[error("relation `{relation}` is still exercised by {edges} unrevoked grant(s); revoke them first")]
    RelationInUse { relation: String, edges: usize },
    #[error("relation `{0}` is not declared by the store's schema")]
    UnknownRelation(String),
    #[error("relation grant `{0}` does not exist")]
    RelationNotFound(String),
    #[error("relation grant `{0}` already exists")]
    RelationExists(String),
    #[error("only the grantor can revoke relation grant `{edge}`")]
    NotGrantor { edge: String },
    #[error("`{0}` is already revoked")]
    AlreadyRevoked(String),
    #[error("device `{0}` does not exist")]
    DeviceNotFound(String),
    #[error("`{0}` already exists (as a device or participant)")]
    DeviceExists(String),
    #[error("only the owner of device `{device}` can mint a root capability; `{issuer}` is not")]
    NotDeviceOwner { issuer: String, device: String },
    #[error("`{issuer}` does not hold capability `{capability}`, so cannot delegate it")]
    NotCapabilityHolder { issuer: String, capability: String },
    #[error("only the device's owner or the holder of an ancestor can revoke capability `{capability}`")]
    NotRevoker { capability: String },
    #[error("capability `{0}` does not exist")]
    CapabilityNotFound(String),
    #[error("capability `{0}` already exists")]
    CapabilityExists(String),
    #[error("the delegation is wider than its parent in {}", .0.iter().map(|w| format!("{:?}", w.dimension).to_lowercase()).collect::<Vec<_>>().join(", "))]
    CapabilityNotWithinParent(Vec<earshot_core::capability::Widening>),
    #[error("the parent chain is not valid now: `{capability}` is {reason}")]
    ParentNotValid { capability: String, reason: &'static str },
    #[error("participant `{0}` is a device, and a device is not removed")]
    ParticipantIsDevice(String),
    #[error("participant `{participant}` owns {devices} device(s) and cannot be removed")]
    ParticipantOwnsDevices { participant: String, devices: usize },
    #[error("`{field}` is not a valid path: {message}")]
    InvalidPath { field: &'static str, message: String },
    #[error("{message}")]
    InvalidCondition { message: String },
    #[error("integrity failure: {0}")]
    Integrity(String),
    #[error("storage failure: {0}")]
    Storage(String),
    #[error("the store is shutting down")]
    Unavailable,
    /// The disk holding the data has less free space than the configured reserve: the write
    /// was refused before anything was written, and writes pass again once space is freed.
    #[error("insufficient storage: {available} bytes free, {required} needed (the reserve kept free so the database never runs out mid-commit); free disk space and retry")]
    InsufficientStorage { available: u64, required: u64 },
    /// The write path cannot make writes durable right now (the database failed and is being
    /// reopened, or it has not answered in time). Retrying later is safe; when the message says
    /// the outcome is unknown, the retry may find the write already applied.
    #[error("storage is unavailable: {0}")]
    StorageUnavailable(String),
    /// Another writer (a replica over the same shared datastore) committed the store's next
    /// revision first. The write was applied again on the newer state and lost once more, so
    /// it was not applied at all; retrying it is safe.
    #[error("write conflict: another writer committed to this store first and the write was not applied; it is safe to retry ({0})")]
    WriteConflict(String),
    #[error("attempt `{0}` already has a sealed context; a retry is a new attempt")]
    AttemptSealed(String),
    #[error("the search index holds {indexed} items, the read needs {needed}; retry later")]
    SearchLagging { indexed: u64, needed: u64 },
    #[error("search index failure: {0}")]
    Search(String),
    /// An `Idempotency-Key` that is not 1 to 255 visible ASCII characters.
    #[error("`Idempotency-Key` must be 1 to {max} visible ASCII characters (0x21 to 0x7E)", max = MAX_IDEMPOTENCY_KEY_LEN)]
    InvalidIdempotencyKey,
    /// The key was recorded, within its window, for a different request (another route, body
    /// or caller): the write was not applied.
    #[error("`Idempotency-Key` `{0}` was used for a different request; use a fresh key for a new request")]
    IdempotencyKeyReused(String),
    /// An import's input is not a whole, valid export; nothing of it was kept. `line` is the
    /// input's line at fault: the line read, or the record a check of the whole set found at
    /// fault; 0 only when no one line is (the records as a whole, such as a gap in a sequence).
    #[error("the import was refused at line {line}: {message}")]
    ImportInvalid { line: u64, message: String },
    /// An item create names an `author` that is not a participant of the store.
    #[error("author `{0}` is not a participant of the store")]
    AuthorNotFound(String),
    #[error("trust delegation `{0}` does not exist")]
    TrustNotFound(String),
    /// An owner trusts its own words by definition; a delegation to itself is refused.
    #[error("`{0}` cannot delegate trust to itself")]
    TrustSelf(String),
    /// A grant's `expires_at` or a window's `not_after` at or before the write's own time: the
    /// grant or window would never have held, so the write is refused rather than recorded.
    #[error("`{field}` ({ends_at}) is not after the time of the write ({now}): the window would already be over")]
    WindowInThePast { field: &'static str, ends_at: String, now: String },
    /// An embedding (an item's or a query's) whose length is not the store's dimension, fixed
    /// by the first embedding written.
    #[error("`{field}` has {got} dimensions; this store's embeddings have {expected}")]
    EmbeddingDimensionMismatch { field: &'static str, expected: usize, got: usize },
    /// An embedding that cannot be scored: empty, too long, a value that is not finite, a
    /// zero vector under `cosine`, or a metric other than the store's.
    #[error("`{field}`: {message}")]
    InvalidEmbedding { field: &'static str, message: String },
}

/// Longest `Idempotency-Key` accepted (here, below every part, so that the error type names
/// nothing of the crate: `idempotency` takes it from here).
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// See [`earshot_kernel::error::DATASTORE_UNAVAILABLE`].
pub(crate) use earshot_kernel::error::DATASTORE_UNAVAILABLE;

/// A kernel refusal is the store's variant of the same name.
impl From<earshot_kernel::KernelError> for StoreError {
    fn from(e: earshot_kernel::KernelError) -> Self {
        use earshot_kernel::KernelError as K;
        match e {
            K::InvalidToken => StoreError::InvalidToken,
            K::TokenStoreMismatch => StoreError::TokenStoreMismatch,
            K::TokenIncarnationMismatch(s) => StoreError::TokenIncarnationMismatch(s),
            K::StoreReplaced(s) => StoreError::StoreReplaced(s),
            K::RevisionExpired { requested, oldest } => StoreError::RevisionExpired { requested, oldest },
            K::ConsistencyTimeout { requested, latest } => StoreError::ConsistencyTimeout { requested, latest },
            K::Integrity(m) => StoreError::Integrity(m),
            K::Storage(m) => StoreError::Storage(m),
            K::Unavailable => StoreError::Unavailable,
            K::InsufficientStorage { available, required } => StoreError::InsufficientStorage { available, required },
            K::StorageUnavailable(m) => StoreError::StorageUnavailable(m),
            K::WriteConflict(m) => StoreError::WriteConflict(m),
        }
    }
}

impl StoreError {
    /// The stable snake_case code of this error.
    pub fn code(&self) -> &'static str {
        use StoreError as E;
        match self {
            E::InvalidId { source: IdError::Anonymous, .. } | E::AnonymousParticipant => "anonymous_participant",
            E::InvalidId { .. } => "invalid_id",
            E::InvalidInput { .. } => "invalid_request",
            E::LimitExceeded { .. } => "limit_exceeded",
            E::StoreNotFound(_) => "store_not_found",
            E::StoreExists(_) => "store_exists",
            E::ParticipantNotFound(_) => "participant_not_found",
            E::ParticipantExists(_) => "participant_exists",
            E::ParticipantOwnsItems(_) => "participant_owns_items",
            E::ItemNotFound(_) => "item_not_found",
            E::ItemExists(_) => "item_exists",
            E::SourceNotFound(_) => "source_not_found",
            E::SourceOwnerMismatch { .. } => "source_owner_mismatch",
            E::OriginUnresolved => "origin_unresolved",
            E::InvalidTransition(_) => "invalid_transition",
            E::PartitionMixedAudiences { .. } => "partition_mixed_audiences",
            E::GrantNotFound(_) => "grant_not_found",
            E::GrantAlreadyRevoked(_) => "grant_already_revoked",
            E::SubjectNotFound(_) => "subject_not_found",
            E::NotASubject { .. } => "not_a_subject",
            E::InvalidToken => "invalid_consistency_token",
            E::TokenStoreMismatch => "consistency_token_store_mismatch",
            E::TokenIncarnationMismatch(_) => "consistency_token_incarnation_mismatch",
            E::CursorIncarnationMismatch(_) => "cursor_incarnation_mismatch",
            E::StoreReplaced(_) => "store_replaced",
            E::RevisionExpired { .. } => "revision_expired",
            E::ConsistencyTimeout { .. } => "consistency_timeout",
            E::RevisionNotLatest { .. } => "revision_not_latest",
            E::AttemptNotFound(_) => "attempt_not_found",
            E::AttemptCapacity => "attempt_capacity",
            E::InvalidCursor => "invalid_cursor",
            E::SchemaInvalid(_) => "schema_invalid",
            E::SchemaNotFound => "schema_not_found",
            E::RelationInUse { .. } => "relation_in_use",
            E::UnknownRelation(_) => "unknown_relation",
            E::RelationNotFound(_) => "relation_not_found",
            E::RelationExists(_) => "relation_exists",
            E::NotGrantor { .. } => "not_grantor",
            E::AlreadyRevoked(_) => "already_revoked",
            E::DeviceNotFound(_) => "device_not_found",
            E::DeviceExists(_) => "device_exists",
            E::NotDeviceOwner { .. } => "not_device_owner",
            E::NotCapabilityHolder { .. } => "not_capability_holder",
            E::NotRevoker { .. } => "not_revoker",
            E::CapabilityNotFound(_) => "capability_not_found",
            E::CapabilityExists(_) => "capability_exists",
            E::CapabilityNotWithinParent(_) => "capability_not_within_parent",
            E::ParentNotValid { .. } => "parent_capability_invalid",
            E::ParticipantIsDevice(_) => "participant_is_device",
            E::ParticipantOwnsDevices { .. } => "participant_owns_devices",
            E::InvalidPath { .. } => "invalid_slice_path",
            E::InvalidCondition { .. } => "invalid_condition",
            E::Integrity(_) => "integrity_failure",
            E::Storage(_) => "storage_failure",
            E::Unavailable => "unavailable",
            E::InsufficientStorage { .. } => "insufficient_storage",
            E::StorageUnavailable(m) if m.contains(DATASTORE_UNAVAILABLE) => "datastore_unavailable",
            E::StorageUnavailable(_) => "storage_unavailable",
            E::WriteConflict(_) => "write_conflict",
            E::AttemptSealed(_) => "attempt_sealed",
            E::SearchLagging { .. } => "search_index_lagging",
            E::Search(_) => "search_failure",
            E::InvalidIdempotencyKey => "invalid_idempotency_key",
            E::IdempotencyKeyReused(_) => "idempotency_key_reused",
            E::ImportInvalid { .. } => "import_invalid",
            E::AuthorNotFound(_) => "author_not_found",
            E::TrustNotFound(_) => "trust_not_found",
            E::TrustSelf(_) => "trust_self_delegation",
            E::WindowInThePast { .. } => "window_in_the_past",
            E::EmbeddingDimensionMismatch { .. } => "embedding_dimension_mismatch",
            E::InvalidEmbedding { .. } => "invalid_embedding",
        }
    }

    /// The shared datastore (PostgreSQL) cannot be reached: the same condition as
    /// [`StoreError::StorageUnavailable`] (503, retry later, reads go on from memory) with its
    /// own code, `datastore_unavailable`, so a client or operator behind a load balancer can
    /// tell "the database is down" (every replica answers it) from one replica's local storage.
    pub fn datastore_unavailable(detail: impl std::fmt::Display) -> Self {
        earshot_kernel::KernelError::datastore_unavailable(detail).into()
    }

    pub(crate) fn input(field: &'static str, message: impl Into<String>) -> Self {
        StoreError::InvalidInput { field, message: message.into() }
    }
}

impl From<sled::Error> for StoreError {
    fn from(e: sled::Error) -> Self {
        StoreError::Storage(e.to_string())
    }
}

/// Checks an identifier field, naming the field in the error.
pub(crate) fn check_id(field: &'static str, value: &str) -> Result<(), StoreError> {
    earshot_core::validate_id(value).map_err(|source| StoreError::InvalidId {
        field,
        value: value.chars().take(64).collect(),
        source,
    })
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
