//! The datastore's own snapshot of one store's records, for an export: a connection of its own
//! in a `REPEATABLE READ READ ONLY` transaction, which no replica's commit changes while the
//! export reads. Dropping it ends the transaction and closes the connection.

use earshot_kernel::RecordsView;

use crate::backend::off_runtime;
use crate::error::{PgError, Result};
use crate::pool::{Conn, Pool};

/// One store's records as of the transaction's snapshot.
pub(crate) struct PgSnapshot {
    /// `None` only while being dropped.
    conn: Option<Conn>,
    store: String,
}

impl PgSnapshot {
    /// Opens the transaction and takes its snapshot. The connection is not the pool's: an
    /// export holds it for as long as it streams, and must not starve the writers of theirs.
    pub(crate) fn open(pool: &Pool, store: &str) -> Result<Self> {
        let mut conn = pool.dedicated()?;
        let err = |e: postgres::Error| PgError::from_client(store, &e, false);
        conn.client.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY").map_err(err)?;
        // PostgreSQL takes a transaction's snapshot at its first statement, not at `BEGIN`:
        // take it now, so that the export is of the instant it was opened.
        conn.client.batch_execute("SELECT 1").map_err(err)?;
        Ok(PgSnapshot { conn: Some(conn), store: store.to_string() })
    }

    fn conn(&mut self) -> Result<&mut Conn> {
        self.conn.as_mut().ok_or_else(|| PgError::Invalid("the snapshot was read after it ended".into()))
    }
}

impl RecordsView for PgSnapshot {
    fn get(&mut self, key: &[u8]) -> earshot_kernel::Result<Option<Vec<u8>>> {
        let store = self.store.clone();
        let c = self.conn()?;
        Ok(off_runtime(|| {
            let row =
                c.client.query_opt(&c.st.get, &[&store, &key]).map_err(|e| PgError::from_client(&store, &e, false))?;
            Ok::<_, PgError>(row.map(|r| r.get::<_, Vec<u8>>(0)))
        })?)
    }

    fn scan(&mut self, from: &[u8], to: &[u8], limit: usize) -> earshot_kernel::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if from >= to {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let store = self.store.clone();
        let c = self.conn()?;
        Ok(off_runtime(|| {
            let rows = c
                .client
                .query(&c.st.scan, &[&store, &from, &to, &limit])
                .map_err(|e| PgError::from_client(&store, &e, false))?;
            Ok::<_, PgError>(rows.into_iter().map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, Vec<u8>>(1))).collect())
        })?)
    }
}

impl Drop for PgSnapshot {
    /// Ends the read-only transaction and closes the connection, off any async runtime (the
    /// synchronous client blocks when dropped).
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            off_runtime(move || {
                let _ = conn.client.batch_execute("ROLLBACK");
                drop(conn);
            });
        }
    }
}
