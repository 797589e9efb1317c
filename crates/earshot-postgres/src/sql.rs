//! Every SQL text the backend sends: the schema (created idempotently) and the statements each
//! connection prepares once. Only SQL that PostgreSQL, CockroachDB and YugabyteDB all speak:
//! `CREATE TABLE IF NOT EXISTS`, `INSERT … ON CONFLICT`, `UNNEST` of arrays, `= ANY($n)`, and
//! explicit casts where a parameter's type cannot be inferred from a column.
//!
//! Two tables and a sequence: the records, the heads, and the order of head changes. The revision log is the store's own `l/` records
//! (written by the store's kernel in each revision's commit), so there is no log table; a
//! `{prefix}log` table left by an earlier version is unused and dropped by `drop_all`. A head
//! row carries the store's incarnation (NULL for stores created before incarnations were kept;
//! the column is added to a table of an earlier version). Every change of a head takes the next
//! value of `{prefix}head_changes` into its `changed` column (and, unless notifications are
//! off, notifies channel `{prefix}heads` at commit): one query for "which heads changed since"
//! serves every store a replica follows. A deleted store's head stays as a tombstone
//! (revision 0, no incarnation), so that the change feed reports the deletion too.

use crate::error::{PgError, Result};

/// Longest table prefix accepted (PostgreSQL truncates identifiers at 63 bytes).
const MAX_PREFIX: usize = 40;

/// The tables' names, from a validated prefix.
#[derive(Debug, Clone)]
pub struct Tables {
    pub records: String,
    pub heads: String,
    /// The sequence that orders head changes (`heads.changed`).
    pub changes: String,
    /// The index of heads by change.
    pub changes_index: String,
    /// Past values of the records, by the revision that overwrote them (multi-version rows).
    pub history: String,
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
            changes: format!("{prefix}head_changes"),
            changes_index: format!("{prefix}heads_changed"),
            history: format!("{prefix}history"),
            legacy_log: format!("{prefix}log"),
        })
    }

    /// The schema, one statement each, safe to run again.
    pub fn schema(&self) -> [String; 7] {
        let Tables { records, heads, history, changes, changes_index, .. } = self;
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
            format!("CREATE SEQUENCE IF NOT EXISTS {changes}"),
            format!("ALTER TABLE {heads} ADD COLUMN IF NOT EXISTS changed BIGINT NOT NULL DEFAULT 0"),
            format!("CREATE INDEX IF NOT EXISTS {changes_index} ON {heads} (changed)"),
            // A value a revision overwrote or deleted, as it was before that revision (`value`
            // NULL: the key did not exist). The records of revision `r` are the current ones
            // with each key touched after `r` replaced by its row of the first revision after
            // `r` that touched it.
            format!(
                "CREATE TABLE IF NOT EXISTS {history} (\
                   store TEXT NOT NULL, revision BIGINT NOT NULL, key BYTEA NOT NULL, value BYTEA, \
                   PRIMARY KEY (store, revision, key))"
            ),
        ]
    }

    /// Drops the tables (tests, tools).
    pub fn drop_all(&self) -> String {
        let Tables { records, heads, history, legacy_log, changes, .. } = self;
        format!("DROP TABLE IF EXISTS {records}, {heads}, {history}, {legacy_log}; DROP SEQUENCE IF EXISTS {changes}")
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
    /// A revisioned commit's records and their past values, in one statement.
    pub write_versioned: String,
    pub load_at: String,
    pub prune_history: String,
    pub drop_history: String,
    pub insert_new: String,
    /// The heads of several stores (the follower's sweep).
    pub heads_of: String,
    /// Heads changed after a position of the change sequence, in its order (the change feed).
    pub changed_since: String,
    /// The newest position of the change sequence in the heads (where a feed starts).
    pub newest_change: String,
}

/// The on-demand ranges (`c/`, `l/`, `t/`, `y/`: content, the revision log, sealed contexts,
/// attempts), as the bounds a load skips (`0` follows `/` bytewise). Neither a load nor the
/// history holds them.
pub const ON_DEMAND_RANGES: [&[u8]; 8] = [b"c/", b"c0", b"l/", b"l0", b"t/", b"t0", b"y/", b"y0"];

/// The condition on `key` that skips the on-demand ranges, their bounds being parameters
/// `$first` to `$first + 7`.
fn not_on_demand(first: usize) -> String {
    (0..4)
        .map(|i| format!("NOT (key >= ${} AND key < ${})", first + 2 * i, first + 2 * i + 1))
        .collect::<Vec<_>>()
        .join(" AND ")
}

impl Texts {
    /// The statements under `t`; `notify`: whether a head change notifies `{prefix}heads` at
    /// commit (PostgreSQL's `pg_notify`, which CockroachDB and YugabyteDB lack).
    pub fn new(t: &Tables, notify: bool) -> Self {
        let Tables { records, heads, history, changes, .. } = t;
        // The payload `<revision>/<incarnation or ->/<store>` (a store id may hold `/`: last).
        let returning = if notify {
            format!(
                " RETURNING pg_notify('{heads}', revision::TEXT || '/' || COALESCE(incarnation, '-') || '/' || store)"
            )
        } else {
            String::new()
        };
        Texts {
            stores: format!("SELECT store FROM {heads} WHERE revision > 0 ORDER BY store"),
            // Key order is bytewise on BYTEA. The on-demand records are read one by one, so the
            // load skips their ranges.
            load: format!("SELECT key, value FROM {records} WHERE store = $1 AND {} ORDER BY key", not_on_demand(2)),
            get: format!("SELECT value FROM {records} WHERE store = $1 AND key = $2"),
            head: format!("SELECT revision, incarnation FROM {heads} WHERE store = $1 AND revision > 0"),
            // The compare-and-set that makes racing writers safe: zero rows means another
            // writer moved the head first, or the store is another incarnation than the
            // writer's (deleted and created again meanwhile).
            cas_head: format!(
                "UPDATE {heads} SET revision = $3, changed = nextval('{changes}') \
                   WHERE store = $1 AND revision = $2 AND incarnation IS NOT DISTINCT FROM $4::TEXT{returning}"
            ),
            // A new store, or a new life of a deleted one (its tombstone, revision 0).
            insert_head: format!(
                "INSERT INTO {heads} AS h (store, revision, incarnation, changed) \
                   VALUES ($1, $2, $3::TEXT, nextval('{changes}')) \
                   ON CONFLICT (store) DO UPDATE \
                     SET revision = excluded.revision, incarnation = excluded.incarnation, changed = excluded.changed \
                     WHERE h.revision = 0{returning}"
            ),
            upsert: format!(
                "INSERT INTO {records} (store, key, value) \
                   SELECT $1::TEXT, k, v FROM UNNEST($2::BYTEA[], $3::BYTEA[]) AS t (k, v) \
                   ON CONFLICT (store, key) DO UPDATE SET value = excluded.value"
            ),
            delete: format!("DELETE FROM {records} WHERE store = $1 AND key = ANY($2::BYTEA[])"),
            drop_records: format!("DELETE FROM {records} WHERE store = $1"),
            drop_head: format!(
                "UPDATE {heads} SET revision = 0, incarnation = NULL, changed = nextval('{changes}') \
                   WHERE store = $1{returning}"
            ),
            scan: format!(
                "SELECT key, value FROM {records} WHERE store = $1 AND key >= $2 AND key < $3 ORDER BY key LIMIT $4"
            ),
            // Every sub-statement of one statement reads the same snapshot: the history rows
            // take the values the records have *before* this statement changes them. Keys a
            // commit touches for the first time take their past value from the records ($2,
            // $3); keys an earlier revision of the same commit touched take the value that
            // revision wrote ($4 to $6). Deletes ($9) and puts ($7, $8) never share a key.
            write_versioned: format!(
                "WITH first_touch AS (\
                   INSERT INTO {history} (store, revision, key, value) \
                   SELECT $1::TEXT, t.rev, t.key, \
                     (SELECT r.value FROM {records} r WHERE r.store = $1::TEXT AND r.key = t.key) \
                   FROM UNNEST($2::BIGINT[], $3::BYTEA[]) AS t (rev, key) \
                   ON CONFLICT (store, revision, key) DO NOTHING), \
                 again AS (\
                   INSERT INTO {history} (store, revision, key, value) \
                   SELECT $1::TEXT, t.rev, t.key, t.value \
                   FROM UNNEST($4::BIGINT[], $5::BYTEA[], $6::BYTEA[]) AS t (rev, key, value) \
                   ON CONFLICT (store, revision, key) DO NOTHING), \
                 removed AS (DELETE FROM {records} WHERE store = $1::TEXT AND key = ANY($9::BYTEA[])) \
                 INSERT INTO {records} (store, key, value) \
                   SELECT $1::TEXT, k, v FROM UNNEST($7::BYTEA[], $8::BYTEA[]) AS t (k, v) \
                   ON CONFLICT (store, key) DO UPDATE SET value = excluded.value"
            ),
            // The records of revision $2: the current ones not touched after it, and the past
            // value of each key touched after it, from the first revision after it that did.
            load_at: format!(
                "SELECT key, value FROM {records} r WHERE store = $1 AND {} \
                   AND NOT EXISTS (SELECT 1 FROM {history} h WHERE h.store = $1 AND h.revision > $2 AND h.key = r.key) \
                 UNION ALL \
                 SELECT key, value FROM (\
                   SELECT DISTINCT ON (key) key, value FROM {history} WHERE store = $1 AND revision > $2 \
                   ORDER BY key, revision) past WHERE value IS NOT NULL \
                 ORDER BY 1",
                not_on_demand(3)
            ),
            // A bounded range: an unbounded one would walk, at every prune, the index entries of
            // every row pruned before and not yet vacuumed.
            prune_history: format!("DELETE FROM {history} WHERE store = $1 AND revision > $2 AND revision <= $3"),
            drop_history: format!("DELETE FROM {history} WHERE store = $1"),
            insert_new: format!(
                "INSERT INTO {records} (store, key, value) VALUES ($1, $2, $3) ON CONFLICT (store, key) DO NOTHING"
            ),
            heads_of: format!(
                "SELECT store, revision, incarnation FROM {heads} WHERE store = ANY($1::TEXT[]) AND revision > 0"
            ),
            changed_since: format!(
                "SELECT store, revision, incarnation, changed FROM {heads} WHERE changed > $1 ORDER BY changed LIMIT $2"
            ),
            newest_change: format!("SELECT COALESCE(MAX(changed), 0)::BIGINT FROM {heads}"),
        }
    }
}
