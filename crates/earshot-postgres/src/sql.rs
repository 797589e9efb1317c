//! Every SQL text the backend sends: the schema (created idempotently) and the statements each
//! connection prepares once. Only SQL that PostgreSQL, CockroachDB and YugabyteDB all speak:
//! `CREATE TABLE IF NOT EXISTS`, `INSERT … ON CONFLICT`, `UNNEST` of arrays, `= ANY($n)`, and
//! explicit casts where a parameter's type cannot be inferred from a column.

use crate::error::{PgError, Result};

/// Longest table prefix accepted (PostgreSQL truncates identifiers at 63 bytes).
const MAX_PREFIX: usize = 40;

/// The three tables' names, from a validated prefix.
#[derive(Debug, Clone)]
pub struct Tables {
    pub records: String,
    pub heads: String,
    pub log: String,
}

impl Tables {
    /// Names under `prefix`, which must be `[a-z_][a-z0-9_]*` (it is spliced into SQL).
    pub fn new(prefix: &str) -> Result<Self> {
        let ok = prefix.len() <= MAX_PREFIX
            && prefix
                .bytes()
                .enumerate()
                .all(|(i, b)| b == b'_' || b.is_ascii_lowercase() || (i > 0 && b.is_ascii_digit()));
        if !ok {
            return Err(PgError::Invalid(format!(
                "table prefix `{prefix}` must be at most {MAX_PREFIX} of [a-z0-9_], not starting with a digit"
            )));
        }
        Ok(Tables { records: format!("{prefix}records"), heads: format!("{prefix}heads"), log: format!("{prefix}log") })
    }

    /// The schema, one statement each, safe to run again.
    pub fn schema(&self) -> [String; 3] {
        let Tables { records, heads, log } = self;
        [
            format!(
                "CREATE TABLE IF NOT EXISTS {records} (\
                   store TEXT NOT NULL, key BYTEA NOT NULL, value BYTEA NOT NULL, \
                   PRIMARY KEY (store, key))"
            ),
            format!("CREATE TABLE IF NOT EXISTS {heads} (store TEXT PRIMARY KEY, revision BIGINT NOT NULL)"),
            format!(
                "CREATE TABLE IF NOT EXISTS {log} (\
                   store TEXT NOT NULL, revision BIGINT NOT NULL, ops BYTEA NOT NULL, \
                   committed_at TIMESTAMPTZ NOT NULL DEFAULT now(), \
                   PRIMARY KEY (store, revision))"
            ),
        ]
    }

    /// Drops the three tables (tests, tools).
    pub fn drop_all(&self) -> String {
        let Tables { records, heads, log } = self;
        format!("DROP TABLE IF EXISTS {records}, {heads}, {log}")
    }
}

/// The statements a connection prepares when it opens, with their SQL.
pub struct Texts {
    pub stores: String,
    pub load: String,
    pub get: String,
    pub head: String,
    pub cas_head: String,
    pub insert_head: String,
    pub upsert: String,
    pub delete: String,
    pub append_log: String,
    pub changes_after: String,
    pub prune_log: String,
}

impl Texts {
    pub fn new(t: &Tables) -> Self {
        let Tables { records, heads, log } = t;
        Texts {
            stores: format!("SELECT store FROM {heads} ORDER BY store"),
            // Key order is bytewise on BYTEA. Content (`c/…`) and sealed contexts (`t/…`) are
            // read one by one with `get`, so the load skips both ranges (`0` follows `/`).
            load: format!(
                "SELECT key, value FROM {records} WHERE store = $1 \
                   AND NOT (key >= $2 AND key < $3) AND NOT (key >= $4 AND key < $5) ORDER BY key"
            ),
            get: format!("SELECT value FROM {records} WHERE store = $1 AND key = $2"),
            head: format!("SELECT revision FROM {heads} WHERE store = $1"),
            // The compare-and-set that makes racing writers safe: zero rows means another
            // writer moved the head first.
            cas_head: format!("UPDATE {heads} SET revision = $3 WHERE store = $1 AND revision = $2"),
            insert_head: format!(
                "INSERT INTO {heads} (store, revision) VALUES ($1, $2) ON CONFLICT (store) DO NOTHING"
            ),
            upsert: format!(
                "INSERT INTO {records} (store, key, value) \
                   SELECT $1::TEXT, k, v FROM UNNEST($2::BYTEA[], $3::BYTEA[]) AS t (k, v) \
                   ON CONFLICT (store, key) DO UPDATE SET value = excluded.value"
            ),
            delete: format!("DELETE FROM {records} WHERE store = $1 AND key = ANY($2::BYTEA[])"),
            append_log: format!(
                "INSERT INTO {log} (store, revision, ops) \
                   SELECT $1::TEXT, r, o FROM UNNEST($2::BIGINT[], $3::BYTEA[]) AS t (r, o)"
            ),
            changes_after: format!(
                "SELECT revision, ops FROM {log} WHERE store = $1 AND revision > $2 ORDER BY revision LIMIT $3"
            ),
            prune_log: format!("DELETE FROM {log} WHERE store = $1 AND revision <= $2"),
        }
    }
}
