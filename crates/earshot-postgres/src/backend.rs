//! `PgBackend`: the store's [`Backend`] over PostgreSQL, its revisioned commit
//! ([`PgBackend::commit_at`]) guarded by a compare-and-set on the store's head, the head that
//! followers poll ([`PgBackend::head`]) and the range reads of the revision log (`scan`).

use std::sync::Mutex;
use std::time::Duration;

use earshot_kernel::{Backend, Head, KernelError, Op, RecordsView};

use crate::error::{PgError, Result};
use crate::ops;
use crate::pool::{Conn, Pool};
use crate::snapshot::PgSnapshot;
use crate::sql::{Tables, Texts};

/// How to reach the database and where the tables live. Its `Debug` masks the URL's
/// passwords ([`crate::redacted`]).
#[derive(Clone)]
pub struct PgOptions {
    /// A libpq-style URL or key-value string, e.g. `postgres://root@127.0.0.1:5432/test`.
    pub url: String,
    /// Prefix of the table names (`{prefix}records`, `{prefix}heads`):
    /// `[a-z_][a-z0-9_]*`, so that several deployments or tests share one database.
    pub table_prefix: String,
    /// Most connections open at once.
    pub pool_size: usize,
    /// Longest a connection attempt may take.
    pub connect_timeout: Duration,
    /// Longest a caller waits for a connection while all are in use.
    pub pool_wait: Duration,
    /// How many revisions back each store's past record values are kept (the history from
    /// which any replica builds the records of an older revision: `at_exact` reads and
    /// attempts after a failover). A store's history is pruned 64 revisions at a time. Zero
    /// keeps none: a replica then answers only the revisions it held itself.
    pub history_revisions: u64,
    /// Whether a head change notifies the tables' channel at commit (`pg_notify`), so that a
    /// replica's follower learns of another replica's write within milliseconds rather than at
    /// its next poll. Off for datastores without `LISTEN`/`NOTIFY` (CockroachDB, YugabyteDB).
    pub notify: bool,
}

/// [`PgOptions::history_revisions`] by default: the retention of past snapshots a replica
/// keeps in memory (`Config::retention_max`).
pub const DEFAULT_HISTORY_REVISIONS: u64 = 10_000;

/// The history is pruned when the head crosses a multiple of this: the revisions that left the
/// kept range since the last prune, and every `PRUNE_EVERY` prunes a wider range, which also
/// catches what a replica with a longer history left behind.
const PRUNE_EVERY: u64 = 64;

impl std::fmt::Debug for PgOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgOptions")
            .field("url", &crate::redacted(&self.url))
            .field("table_prefix", &self.table_prefix)
            .field("pool_size", &self.pool_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("pool_wait", &self.pool_wait)
            .field("history_revisions", &self.history_revisions)
            .field("notify", &self.notify)
            .finish()
    }
}

impl PgOptions {
    /// Defaults: prefix `earshot_`, 4 connections, 5 s to connect, 5 s to wait for one.
    pub fn new(url: impl Into<String>) -> Self {
        PgOptions {
            url: url.into(),
            table_prefix: "earshot_".into(),
            pool_size: 4,
            connect_timeout: Duration::from_secs(5),
            pool_wait: Duration::from_secs(5),
            history_revisions: DEFAULT_HISTORY_REVISIONS,
            notify: true,
        }
    }

    /// The same options with another table prefix.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.table_prefix = prefix.into();
        self
    }
}

/// Earshot's records in PostgreSQL (or CockroachDB, YugabyteDB). See the crate docs for the
/// tables and for why racing writers are safe.
pub struct PgBackend {
    pool: std::sync::Arc<Pool>,
    notify: bool,
    tables: Tables,
    history_revisions: u64,
    /// Why the database is unreachable, set by a failed call and cleared by a successful one.
    fault: Mutex<Option<String>>,
}

/// Runs `f` where the synchronous client may block: on the calling thread, or on a scoped
/// thread when called from inside an async runtime (the client drives its own runtime, which
/// cannot start inside another).
pub(crate) fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(payload) => std::panic::resume_unwind(payload),
    })
}

fn to_i64(revision: u64) -> Result<i64> {
    i64::try_from(revision).map_err(|_| PgError::Invalid(format!("revision {revision} exceeds BIGINT")))
}

fn to_u64(revision: i64) -> Result<u64> {
    u64::try_from(revision).map_err(|_| PgError::Corrupt(format!("negative revision {revision} in the database")))
}

impl PgBackend {
    /// Connects with default options and creates the tables if they are missing.
    pub fn connect(url: &str) -> Result<Self> {
        Self::open(PgOptions::new(url))
    }

    /// Connects and creates the tables under the options' prefix if they are missing.
    pub fn open(options: PgOptions) -> Result<Self> {
        let tables = Tables::new(&options.table_prefix)?;
        let mut config: postgres::Config =
            options.url.parse().map_err(|e| PgError::Invalid(format!("the PostgreSQL URL does not parse: {e}")))?;
        config.connect_timeout(options.connect_timeout);
        if config.get_application_name().is_none() {
            config.application_name("earshot");
        }
        let pool = Pool::new(config, Texts::new(&tables, options.notify), options.pool_size, options.pool_wait);
        let backend = PgBackend {
            pool: std::sync::Arc::new(pool),
            notify: options.notify,
            tables,
            history_revisions: options.history_revisions,
            fault: Mutex::new(None),
        };
        off_runtime(|| backend.create_schema())?;
        Ok(backend)
    }

    /// Creates the tables if missing. Concurrent creators can collide in PostgreSQL's catalog
    /// (a unique violation on `pg_type`) even with `IF NOT EXISTS`; the statement is retried.
    fn create_schema(&self) -> Result<()> {
        let mut client = self.pool.connect_raw()?;
        for statement in self.tables.schema() {
            let mut attempts = 0;
            loop {
                match client.batch_execute(&statement) {
                    Ok(()) => break,
                    Err(e) if attempts < 3 && PgError::from_client("", &e, false).is_conflict() => attempts += 1,
                    Err(e) => return Err(PgError::from_client("", &e, false)),
                }
            }
        }
        Ok(())
    }

    /// Drops the tables and everything in them (tests and tools; irreversible).
    pub fn drop_tables(&self) -> Result<()> {
        off_runtime(|| {
            self.pool.clear();
            let mut client = self.pool.connect_raw()?;
            client.batch_execute(&self.tables.drop_all()).map_err(|e| PgError::from_client("", &e, false))
        })
    }

    /// The names of the tables: records, heads.
    pub fn table_names(&self) -> (&str, &str) {
        (&self.tables.records, &self.tables.heads)
    }

    /// Runs `f` on a pooled connection, off any async runtime. A connection that failed is not
    /// reused; an unreachable database is remembered for [`Backend::condition`].
    fn with_conn<T: Send>(&self, f: impl FnOnce(&mut Conn) -> Result<T> + Send) -> Result<T> {
        off_runtime(|| {
            let result = self.pool.get().and_then(|mut pooled| {
                let out = pooled.conn().and_then(f);
                if out.as_ref().is_err_and(|e| !e.is_conflict()) {
                    pooled.broken();
                }
                out
            });
            let mut fault = self.fault.lock().unwrap_or_else(|p| p.into_inner());
            match &result {
                Err(e) if e.is_unavailable() => {
                    if fault.is_none() {
                        tracing::warn!(error = %e, "PostgreSQL is unavailable");
                    }
                    *fault = Some(e.to_string());
                }
                Err(_) => {}
                Ok(_) => *fault = None,
            }
            result
        })
    }

    /// The revision at the head of `store`'s log and the store's incarnation (`None` for a
    /// store never committed with a revision, or deleted). Followers compare it with the
    /// revision they have applied and the incarnation they run.
    pub fn head(&self, store: &str) -> Result<Option<Head>> {
        self.with_conn(|c| {
            let row = c.client.query_opt(&c.st.head, &[&store]).map_err(|e| PgError::from_client(store, &e, false))?;
            row.map(|r| Ok(Head { revision: to_u64(r.get(0))?, incarnation: r.get(1) })).transpose()
        })
    }

    /// Commits `ops` as the revisions their meta records name, provided the store's head is
    /// at `expected` (0: the store has no head yet) and of the incarnation the meta records
    /// name. In one transaction: the head moves from `expected` to the last revision by
    /// compare-and-set, the records take the ops' net effect. A head not at `expected`, of
    /// another incarnation (the store was deleted and created again), or a serialization
    /// failure, is a [`PgError::Conflict`] and nothing is applied. Returns the new head.
    pub fn commit_at(&self, store: &str, expected: u64, ops: Vec<Op>) -> Result<u64> {
        let segments = ops::segments(&ops)?;
        let (Some(new), Some(first)) = (segments.last().map(|s| s.revision), segments.first()) else {
            return Err(PgError::Invalid("a revisioned commit needs a meta record".into()));
        };
        if first.revision <= expected {
            return Err(PgError::Invalid(format!("revision {new} does not follow the expected head {expected}")));
        }
        let incarnation = first.incarnation.clone();
        let history = if self.history_revisions == 0 { None } else { Some(History::of(&segments, expected)?) };
        self.transact(store, Some((expected, new, incarnation)), &ops, history)?;
        Ok(new)
    }

    /// The records of `store` as they were at `revision`, from the current records and the
    /// history of past values (`None` when the history no longer reaches back to it: the
    /// rebuilt revision record is then of a later revision). In one statement, so of one
    /// instant of the database.
    pub fn load_at(&self, store: &str, revision: u64) -> Result<Option<Vec<earshot_kernel::backend::Record>>> {
        if self.history_revisions == 0 {
            return Ok(None);
        }
        let at = to_i64(revision)?;
        let rows = self.with_conn(|c| {
            let b = crate::sql::ON_DEMAND_RANGES;
            let rows = c
                .client
                .query(&c.st.load_at, &[&store, &at, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]])
                .map_err(|e| PgError::from_client(store, &e, false))?;
            Ok(rows.into_iter().map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, Vec<u8>>(1))).collect::<Vec<_>>())
        })?;
        // Every revision writes the revision record: it names the revision the rows are of.
        let meta = rows.iter().find(|(k, _)| k.as_slice() == ops::META_KEY);
        let meta: Option<earshot_kernel::backend::MetaRecord> = match meta {
            Some((_, v)) => Some(serde_json::from_slice(v).map_err(|e| {
                PgError::Corrupt(format!("store `{store}`: a past revision record is unreadable: {e}"))
            })?),
            None => None,
        };
        Ok(meta.filter(|m| m.revision == revision).map(|_| rows))
    }

    /// One transaction: head CAS (if revisioned), then records, and for a revisioned commit the
    /// past value of every record it touches (the history), in the same statement.
    fn transact(
        &self,
        store: &str,
        head: Option<(u64, u64, Option<String>)>,
        ops: &[Op],
        history: Option<History>,
    ) -> Result<()> {
        let net = ops::net_effect(ops);
        let (mut put_keys, mut put_values, mut del_keys) = (Vec::new(), Vec::new(), Vec::new());
        for (k, v) in net {
            match v {
                Some(v) => {
                    put_keys.push(k);
                    put_values.push(v);
                }
                None => del_keys.push(k),
            }
        }
        let head = head.map(|(e, n, inc)| Ok::<_, PgError>((e, to_i64(e)?, to_i64(n)?, inc))).transpose()?;
        self.with_conn(|c| {
            let err = |e: postgres::Error| PgError::from_client(store, &e, false);
            let mut tx = c.client.transaction().map_err(err)?;
            if let Some((expected, expected_i, new_i, incarnation)) = &head {
                // First, so that a loser waits here (on the head's row lock) and touches nothing.
                let moved = if *expected == 0 {
                    tx.execute(&c.st.insert_head, &[&store, new_i, incarnation]).map_err(err)?
                } else {
                    tx.execute(&c.st.cas_head, &[&store, expected_i, new_i, incarnation]).map_err(err)?
                };
                if moved != 1 {
                    let _ = tx.rollback();
                    return Err(PgError::Conflict {
                        store: store.to_string(),
                        detail: if *expected == 0 {
                            format!("revision {new_i} needs a new store but the store already has a head")
                        } else {
                            format!(
                                "revision {new_i} expected the head at {expected} (of this incarnation of the store) \
                                 but another writer moved it"
                            )
                        },
                    });
                }
            }
            match &history {
                Some(h) => {
                    tx.execute(
                        &c.st.write_versioned,
                        &[
                            &store,
                            &h.first_revisions,
                            &h.first_keys,
                            &h.again_revisions,
                            &h.again_keys,
                            &h.again_values,
                            &put_keys,
                            &put_values,
                            &del_keys,
                        ],
                    )
                    .map_err(err)?;
                    if let Some((expected, _, new_i, _)) = &head {
                        let new = u64::try_from(*new_i).unwrap_or(0);
                        if let Some((after, through)) = prune_range(*expected, new, self.history_revisions) {
                            tx.execute(&c.st.prune_history, &[&store, &to_i64(after)?, &to_i64(through)?])
                                .map_err(err)?;
                        }
                    }
                }
                None => {
                    if !put_keys.is_empty() {
                        tx.execute(&c.st.upsert, &[&store, &put_keys, &put_values]).map_err(err)?;
                    }
                    if !del_keys.is_empty() {
                        tx.execute(&c.st.delete, &[&store, &del_keys]).map_err(err)?;
                    }
                }
            }
            tx.commit().map_err(|e| PgError::from_client(store, &e, true))
        })
    }
}

/// The revisions whose history a commit moving the head from `expected` to `new` prunes, as
/// `(after, through]`, when it crosses a multiple of [`PRUNE_EVERY`]: those that left the kept
/// range since the previous multiple; at every `PRUNE_EVERY`-th multiple, everything from
/// revision 1.
fn prune_range(expected: u64, new: u64, keep: u64) -> Option<(u64, u64)> {
    if new / PRUNE_EVERY == expected / PRUNE_EVERY {
        return None;
    }
    let boundary = new / PRUNE_EVERY * PRUNE_EVERY;
    let through = boundary.checked_sub(keep).filter(|t| *t > 0)?;
    let wide = (boundary / PRUNE_EVERY).is_multiple_of(PRUNE_EVERY);
    let after = if wide { 0 } else { (expected / PRUNE_EVERY * PRUNE_EVERY).saturating_sub(keep) };
    Some((after, through))
}

/// The history rows of one revisioned commit: for every key each revision touches (outside the
/// on-demand ranges), the value it had before that revision. A key first touched in the commit
/// takes it from the records (`first_*`); a key an earlier revision of the same commit touched
/// takes what that revision wrote (`again_*`, `None`: deleted).
struct History {
    first_revisions: Vec<i64>,
    first_keys: Vec<Vec<u8>>,
    again_revisions: Vec<i64>,
    again_keys: Vec<Vec<u8>>,
    again_values: Vec<Option<Vec<u8>>>,
}

impl History {
    /// `expected`: the head the commit follows; 0 for a new store, whose first revision has no
    /// past (no revision before a store's first is ever read), so it keeps none.
    fn of(segments: &[ops::Segment], expected: u64) -> Result<Self> {
        let mut h = History {
            first_revisions: Vec::new(),
            first_keys: Vec::new(),
            again_revisions: Vec::new(),
            again_keys: Vec::new(),
            again_values: Vec::new(),
        };
        let mut written: std::collections::BTreeMap<&[u8], Option<&[u8]>> = std::collections::BTreeMap::new();
        for s in segments {
            let revision = to_i64(s.revision)?;
            for (k, v) in ops::net_effect(&s.ops) {
                if ops::on_demand(k) {
                    continue;
                }
                match written.insert(k, v) {
                    None if expected == 0 && s.revision == 1 => {}
                    None => {
                        h.first_revisions.push(revision);
                        h.first_keys.push(k.to_vec());
                    }
                    Some(before) => {
                        h.again_revisions.push(revision);
                        h.again_keys.push(k.to_vec());
                        h.again_values.push(before.map(<[u8]>::to_vec));
                    }
                }
            }
        }
        Ok(h)
    }
}

impl Drop for PgBackend {
    /// Closes the idle connections off any async runtime: the synchronous client blocks when it
    /// is dropped, which panics on a runtime's thread (a backend whose last handle goes inside
    /// an async test or handler).
    fn drop(&mut self) {
        let pool = &self.pool;
        off_runtime(|| pool.clear());
    }
}

impl Backend for PgBackend {
    /// Every store with a head, i.e. every store committed with a revision (a store is created
    /// by committing its meta record at revision 1). Read from the small heads table rather
    /// than scanning the records.
    fn stores(&self) -> earshot_kernel::Result<Vec<String>> {
        Ok(self.with_conn(|c| {
            let rows = c.client.query(&c.st.stores, &[]).map_err(|e| PgError::from_client("", &e, false))?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })?)
    }

    fn load(&self, store: &str) -> earshot_kernel::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let b = crate::sql::ON_DEMAND_RANGES;
        Ok(self.with_conn(|c| {
            let rows = c
                .client
                .query(&c.st.load, &[&store, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]])
                .map_err(|e| PgError::from_client(store, &e, false))?;
            Ok(rows.into_iter().map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, Vec<u8>>(1))).collect())
        })?)
    }

    /// Derives the revisions from the ops' meta records: the head must be at the first one
    /// minus one (see [`PgBackend::commit_at`]). Ops without a meta record (a sealed context)
    /// are outside the revision sequence: applied to the records, atomically, without moving
    /// the head or writing the log.
    fn commit(&self, store: &str, ops: Vec<Op>) -> earshot_kernel::Result<()> {
        let segments = ops::segments(&ops)?;
        let result = match segments.first() {
            Some(first) => {
                let expected = first.revision.checked_sub(1).ok_or_else(|| {
                    KernelError::Storage(format!("store `{store}`: a commit cannot be of revision 0"))
                })?;
                self.commit_at(store, expected, ops).map(|_| ())
            }
            None => self.transact(store, None, &ops, None),
        };
        if let Err(e) = &result {
            if e.is_conflict() {
                tracing::warn!(store, error = %e, "commit lost a race with another writer");
            }
        }
        Ok(result?)
    }

    fn get(&self, store: &str, key: &[u8]) -> earshot_kernel::Result<Option<Vec<u8>>> {
        Ok(self.with_conn(|c| {
            let row =
                c.client.query_opt(&c.st.get, &[&store, &key]).map_err(|e| PgError::from_client(store, &e, false))?;
            Ok(row.map(|r| r.get::<_, Vec<u8>>(0)))
        })?)
    }

    fn scan(
        &self,
        store: &str,
        from: &[u8],
        to: &[u8],
        limit: usize,
    ) -> earshot_kernel::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if from >= to {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(self.with_conn(|c| {
            let rows = c
                .client
                .query(&c.st.scan, &[&store, &from, &to, &limit])
                .map_err(|e| PgError::from_client(store, &e, false))?;
            Ok(rows.into_iter().map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, Vec<u8>>(1))).collect())
        })?)
    }

    /// Free while the last call succeeded; after a failure, one round trip decides.
    fn writable(&self) -> earshot_kernel::Result<()> {
        if self.condition().is_none() {
            return Ok(());
        }
        self.pool.clear();
        Ok(self.with_conn(|c| {
            c.client.simple_query("SELECT 1").map(|_| ()).map_err(|e| PgError::from_client("", &e, false))
        })?)
    }

    fn condition(&self) -> Option<String> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replicas commit to the same tables: a commit can lose the race for the head.
    fn shared(&self) -> bool {
        true
    }

    /// The head of the store's log, which followers poll.
    fn head(&self, store: &str) -> earshot_kernel::Result<Option<Head>> {
        Ok(PgBackend::head(self, store)?)
    }

    /// One query for a batch of stores (`= ANY`).
    fn heads(&self, stores: &[&str]) -> earshot_kernel::Result<Vec<(String, Head)>> {
        let names: Vec<&str> = stores.to_vec();
        Ok(self.with_conn(|c| {
            let rows = c.client.query(&c.st.heads_of, &[&names]).map_err(|e| PgError::from_client("", &e, false))?;
            rows.into_iter()
                .map(|r| Ok((r.get::<_, String>(0), Head { revision: to_u64(r.get(1))?, incarnation: r.get(2) })))
                .collect()
        })?)
    }

    /// The heads changed since the last poll, and (`notify`, when the backend notifies) the
    /// commits' notifications between polls: see [`crate::feed`].
    fn head_feed(&self, notify: bool) -> earshot_kernel::Result<Option<Box<dyn earshot_kernel::backend::HeadFeed>>> {
        Ok(Some(Box::new(crate::feed::PgFeed::new(
            self.pool.clone(),
            self.tables.heads.clone(),
            notify && self.notify,
        ))))
    }

    /// `INSERT … ON CONFLICT DO NOTHING`: of two replicas writing the key at once, one writes.
    fn put_new(&self, store: &str, key: Vec<u8>, value: Vec<u8>) -> earshot_kernel::Result<bool> {
        Ok(self.with_conn(|c| {
            let rows = c
                .client
                .execute(&c.st.insert_new, &[&store, &key, &value])
                .map_err(|e| PgError::from_client(store, &e, true))?;
            Ok(rows == 1)
        })?)
    }

    fn keeps_history(&self) -> bool {
        self.history_revisions > 0
    }

    /// From the history of past values, as far back as it is kept.
    fn load_at(
        &self,
        store: &str,
        revision: u64,
    ) -> earshot_kernel::Result<Option<Vec<earshot_kernel::backend::Record>>> {
        Ok(PgBackend::load_at(self, store, revision)?)
    }

    /// A `REPEATABLE READ READ ONLY` transaction on a connection of its own: an export reads
    /// one instant of the database, whatever any replica commits meanwhile.
    fn snapshot(&self, store: &str) -> earshot_kernel::Result<Option<Box<dyn RecordsView>>> {
        let view = off_runtime(|| PgSnapshot::open(&self.pool, store))?;
        Ok(Some(Box::new(view)))
    }

    /// Records and head row in one transaction: the store is gone for every replica at once
    /// (`stores` and first use read the head).
    fn drop_store(&self, store: &str) -> earshot_kernel::Result<()> {
        Ok(self.with_conn(|c| {
            let err = |e: postgres::Error| PgError::from_client(store, &e, false);
            let mut tx = c.client.transaction().map_err(err)?;
            tx.execute(&c.st.drop_head, &[&store]).map_err(err)?;
            tx.execute(&c.st.drop_records, &[&store]).map_err(err)?;
            tx.execute(&c.st.drop_history, &[&store]).map_err(err)?;
            tx.commit().map_err(|e| PgError::from_client(store, &e, true))
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_leaves_the_history_once_it_is_out_of_range() {
        // Over a long run of commits of varied sizes, every revision at or before
        // `new - keep - PRUNE_EVERY` has been pruned, and none within the kept range.
        let keep = 1_000;
        let mut pruned_through = 0u64;
        let (mut head, mut step) = (0u64, 1u64);
        while head < 50_000 {
            let new = head + step;
            if let Some((after, through)) = prune_range(head, new, keep) {
                assert!(after <= pruned_through, "a gap: pruned through {pruned_through}, now from {after}");
                assert!(through + keep <= new, "pruned a kept revision: through {through} at {new}");
                pruned_through = pruned_through.max(through);
            }
            if new > keep + PRUNE_EVERY {
                assert!(pruned_through + keep + PRUNE_EVERY >= new, "revision {} kept too long", pruned_through + 1);
            }
            head = new;
            step = step % 97 + 7;
        }
        assert_eq!(prune_range(5, 6, keep), None);
        assert_eq!(prune_range(0, 64, 1_000), None, "nothing is out of range yet");
    }
}
