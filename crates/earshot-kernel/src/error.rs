//! The kernel's one error type: every way the storage seam, revisions, tokens, the revision log
//! and the writer refuse, whatever the records mean. The store's error type takes each variant
//! as its own variant of the same name (and code), so a refusal reads the same at the HTTP edge
//! whichever layer made it.

/// Everything the kernel can refuse. Plain values (no sources), so a refusal is cloned to every
/// write of a group it refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    #[error("consistency token is malformed")]
    InvalidToken,
    #[error("consistency token belongs to another store")]
    TokenStoreMismatch,
    /// A token of an earlier (or, on a replica that has not noticed yet, a later) life of the
    /// store: the store was deleted and created again under the same id since it was issued.
    #[error("consistency token belongs to another incarnation of store `{0}`: the store was deleted and created again since the token was issued; read again without it")]
    TokenIncarnationMismatch(String),
    /// The store this replica runs was deleted, or deleted and created again, by another
    /// replica: nothing was done; the same request finds the store as it is now.
    #[error("store `{0}` was deleted or created again on another replica; retry")]
    StoreReplaced(String),
    #[error("revision {requested} is outside the retention window (oldest retained: {oldest})")]
    RevisionExpired { requested: u64, oldest: u64 },
    #[error("revision {requested} was not reached in time (latest: {latest})")]
    ConsistencyTimeout { requested: u64, latest: u64 },
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
}

/// Marks a `StorageUnavailable` reason as the shared datastore's (see
/// [`KernelError::datastore_unavailable`]). A marker in the reason rather than a variant of its
/// own, because the writer passes storage refusals on by variant and wraps a refusal's reason
/// into later ones ("storage is unavailable: <reason>"): the reason, and so the code, survives
/// both, while a new variant would be flattened into `storage_failure` there.
pub const DATASTORE_UNAVAILABLE: &str = "the datastore is unreachable";

impl KernelError {
    /// The shared datastore (PostgreSQL) cannot be reached: the same condition as
    /// `StorageUnavailable` (503, retry later, reads go on from memory) with its own code,
    /// `datastore_unavailable`, so a client or operator behind a load balancer can tell "the
    /// database is down" (every replica answers it) from one replica's local storage.
    pub fn datastore_unavailable(detail: impl std::fmt::Display) -> Self {
        KernelError::StorageUnavailable(format!("{DATASTORE_UNAVAILABLE}: {detail}"))
    }
}

impl From<sled::Error> for KernelError {
    fn from(e: sled::Error) -> Self {
        KernelError::Storage(e.to_string())
    }
}

pub type Result<T, E = KernelError> = std::result::Result<T, E>;
