//! The backend's one error type, how a PostgreSQL client error is classified into it, and how
//! it becomes the store's [`KernelError`].

use earshot_kernel::KernelError;
use postgres::error::SqlState;

/// Everything the PostgreSQL backend can refuse.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// Another writer advanced the store first: the head was not at the expected revision, the
    /// database reported a serialization failure or deadlock, or the revision was already in
    /// the log. Nothing of this commit was applied; reload and retry.
    #[error("commit conflict on store `{store}`: {detail}; nothing was applied")]
    Conflict { store: String, detail: String },
    /// The database could not be reached or the connection broke. `outcome_unknown` is set when
    /// it broke while the commit itself was in flight: the write may or may not be applied.
    #[error("PostgreSQL is unavailable: {detail}{}", if *.outcome_unknown { " (the commit's outcome is unknown)" } else { "" })]
    Unavailable { detail: String, outcome_unknown: bool },
    /// The database answered with an error that is neither a conflict nor a lost connection.
    #[error("PostgreSQL error: {0}")]
    Database(String),
    /// Data read back does not decode (a log entry, a meta record): damage, or another writer
    /// that does not speak this format.
    #[error("integrity failure: {0}")]
    Corrupt(String),
    /// The caller's input is unusable: a bad URL or table prefix, ops without order.
    #[error("invalid: {0}")]
    Invalid(String),
}

impl PgError {
    /// Whether this is a lost race with another writer.
    pub fn is_conflict(&self) -> bool {
        matches!(self, PgError::Conflict { .. })
    }

    /// Whether the database could not be reached.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, PgError::Unavailable { .. })
    }

    /// Classifies a client error met while working on `store`. `in_commit` marks an error
    /// raised by the `COMMIT` itself, whose outcome is unknown if the connection broke.
    pub(crate) fn from_client(store: &str, e: &postgres::Error, in_commit: bool) -> Self {
        let Some(code) = e.code() else {
            // No SQLSTATE: the client failed (I/O, closed connection, timeout, TLS, protocol).
            let mut detail = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                detail = format!("{detail}: {cause}");
                source = cause.source();
            }
            return PgError::Unavailable { detail, outcome_unknown: in_commit };
        };
        let detail =
            e.as_db_error().map_or_else(|| e.to_string(), |d| format!("{} ({})", d.message(), d.code().code()));
        if *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::T_R_DEADLOCK_DETECTED
            || *code == SqlState::UNIQUE_VIOLATION
        {
            return PgError::Conflict { store: store.to_string(), detail };
        }
        let class = code.code().get(..2).unwrap_or("");
        // 08: connection exception; 57P0x: the server is shutting down or starting; 53:
        // insufficient resources (too many connections, disk full); 40003: statement completion
        // unknown.
        if class == "08"
            || class == "53"
            || code.code().starts_with("57P")
            || *code == SqlState::T_R_STATEMENT_COMPLETION_UNKNOWN
        {
            return PgError::Unavailable { detail, outcome_unknown: in_commit };
        }
        PgError::Database(detail)
    }
}

impl From<PgError> for KernelError {
    /// A lost race becomes `WriteConflict` (nothing was applied; the store's writer reloads and
    /// applies the write once more before answering it); an unreachable database
    /// `StorageUnavailable` marked as the datastore's (code `datastore_unavailable`).
    fn from(e: PgError) -> Self {
        match e {
            PgError::Conflict { .. } => KernelError::WriteConflict(e.to_string()),
            PgError::Unavailable { .. } => KernelError::datastore_unavailable(e),
            PgError::Database(_) | PgError::Invalid(_) => KernelError::Storage(e.to_string()),
            PgError::Corrupt(m) => KernelError::Integrity(m),
        }
    }
}

/// The backend's result type.
pub type Result<T, E = PgError> = std::result::Result<T, E>;
