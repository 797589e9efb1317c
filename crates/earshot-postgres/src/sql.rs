//! Every SQL text the backend sends: the schema (created idempotently) and the statements each
//! connection prepares once. Only SQL that PostgreSQL, CockroachDB and YugabyteDB all speak:
//! `CREATE TABLE IF NOT EXISTS`, `INSERT … ON CONFLICT`, `UNNEST` of arrays, `= ANY($n)`, and
//! explicit casts where a parameter's type cannot be inferred from a column.
//!
//! Two tables: the records and the heads. The revision log is the store's own `l/` records
//! (written by the store's kernel in each revision's commit), so there is no log table; a
//! `{prefix}log` table left by an earlier version is unused and dropped by `drop_all`. A head
//! row carries the store's incarnation (NULL for stores created before incarnations were kept;
//! the column is added to a table of an earlier version).

use crate::error::{PgError, Result};

/// Longest table prefix accepted (PostgreSQL truncates identifiers at 63 bytes).
const MAX_PREFIX: usize = 40;

/// The tables' names, from a validated prefix.
#[derive(Debug, Clone)]
pub struct Tables {
    pub records: String,
    pub heads: String,
    /// The ops log of an earlier version, only ever dropped.
    legacy_log: String,
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
        Ok(Tables {
            records: format!("{prefix}records"),
            heads: format!("{prefix}heads"),
            legacy_log: format!("{prefix}log"),
        })
    }

    /// The schema, one statement each, safe to run again.
    pub fn schema(&self) -> [String; 3] {
        let Tables { records, heads, .. } = self;
        [
            format!(
                "CREATE TABLE IF NOT EXISTS {records} (\
                   store TEXT NOT NULL, key BYTEA NOT NULL, value BYTEA NOT NULL, \
                   PRIMARY KEY (store, key))"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {heads} (store TEXT PRIMARY KEY, revision BIGINT NOT NULL, incarnation TEXT)"
            ),
            format!("ALTER TABLE {heads} ADD COLUMN IF NOT EXISTS incarnation TEXT"),
        ]
    }

    /// Drops the tables (tests, tools).
    pub fn drop_all(&self) -> String {
        let Tables { records, heads, legacy_log } = self;
        format!("DROP TABLE IF EXISTS {records}, {heads}, {legacy_log}")
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
    pub scan: String,
    pub drop_records: String,
    pub drop_head: String,
}

impl Texts {
    pub fn new(t: &Tables) -> Self {
        let Tables { records, heads, .. } = t;
        Texts {
            stores: format!("SELECT store FROM {heads} ORDER BY store"),
            // Key order is bytewise on BYTEA. Content (`c/…`), the revision log (`l/…`) and
            // sealed contexts (`t/…`) are read on demand, so the load skips those ranges (`0`
            // follows `/`).
            load: format!(
                "SELECT key, value FROM {records} WHERE store = $1 \
                   AND NOT (key >= $2 AND key < $3) AND NOT (key >= $4 AND key < $5) \
                   AND NOT (key >= $6 AND key < $7) ORDER BY key"
            ),
            get: format!("SELECT value FROM {records} WHERE store = $1 AND key = $2"),
            head: format!("SELECT revision, incarnation FROM {heads} WHERE store = $1"),
            // The compare-and-set that makes racing writers safe: zero rows means another
            // writer moved the head first, or the store is another incarnation than the
            // writer's (deleted and created again meanwhile).
            cas_head: format!(
                "UPDATE {heads} SET revision = $3 \
                   WHERE store = $1 AND revision = $2 AND incarnation IS NOT DISTINCT FROM $4::TEXT"
            ),
            insert_head: format!(
                "INSERT INTO {heads} (store, revision, incarnation) VALUES ($1, $2, $3::TEXT) \
                   ON CONFLICT (store) DO NOTHING"
            ),
            upsert: format!(
                "INSERT INTO {records} (store, key, value) \
                   SELECT $1::TEXT, k, v FROM UNNEST($2::BYTEA[], $3::BYTEA[]) AS t (k, v) \
                   ON CONFLICT (store, key) DO UPDATE SET value = excluded.value"
            ),
            delete: format!("DELETE FROM {records} WHERE store = $1 AND key = ANY($2::BYTEA[])"),
            drop_records: format!("DELETE FROM {records} WHERE store = $1"),
            drop_head: format!("DELETE FROM {heads} WHERE store = $1"),
            scan: format!(
                "SELECT key, value FROM {records} WHERE store = $1 AND key >= $2 AND key < $3 ORDER BY key LIMIT $4"
            ),
        }
    }
}
