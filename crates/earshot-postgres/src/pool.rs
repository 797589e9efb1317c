//! A small bounded pool of synchronous PostgreSQL connections, each with the backend's
//! statements prepared once when it opens. Checked-out connections return on drop unless
//! marked broken; a caller waits (bounded) when all are in use.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use postgres::{Client, NoTls, Statement};

use crate::error::{PgError, Result};
use crate::sql::Texts;

/// One connection and its prepared statements.
pub struct Conn {
    pub client: Client,
    pub st: Prepared,
}

/// The backend's statements, prepared on one connection.
pub struct Prepared {
    pub stores: Statement,
    pub load: Statement,
    pub get: Statement,
    pub head: Statement,
    pub cas_head: Statement,
    pub insert_head: Statement,
    pub upsert: Statement,
    pub delete: Statement,
    pub scan: Statement,
    pub drop_records: Statement,
    pub drop_head: Statement,
    pub write_versioned: Statement,
    pub load_at: Statement,
    pub prune_history: Statement,
    pub drop_history: Statement,
    pub insert_new: Statement,
    pub heads_of: Statement,
    pub changed_since: Statement,
    pub newest_change: Statement,
}

impl Prepared {
    fn new(client: &mut Client, t: &Texts) -> std::result::Result<Self, postgres::Error> {
        Ok(Prepared {
            stores: client.prepare(&t.stores)?,
            load: client.prepare(&t.load)?,
            get: client.prepare(&t.get)?,
            head: client.prepare(&t.head)?,
            cas_head: client.prepare(&t.cas_head)?,
            insert_head: client.prepare(&t.insert_head)?,
            upsert: client.prepare(&t.upsert)?,
            delete: client.prepare(&t.delete)?,
            scan: client.prepare(&t.scan)?,
            drop_records: client.prepare(&t.drop_records)?,
            drop_head: client.prepare(&t.drop_head)?,
            write_versioned: client.prepare(&t.write_versioned)?,
            load_at: client.prepare(&t.load_at)?,
            prune_history: client.prepare(&t.prune_history)?,
            drop_history: client.prepare(&t.drop_history)?,
            insert_new: client.prepare(&t.insert_new)?,
            heads_of: client.prepare(&t.heads_of)?,
            changed_since: client.prepare(&t.changed_since)?,
            newest_change: client.prepare(&t.newest_change)?,
        })
    }
}

struct State {
    idle: Vec<Conn>,
    /// Connections open, idle or checked out.
    open: usize,
}

/// The pool: at most `max` connections.
pub struct Pool {
    config: postgres::Config,
    texts: Texts,
    max: usize,
    wait: Duration,
    state: Mutex<State>,
    returned: Condvar,
}

impl Pool {
    pub fn new(config: postgres::Config, texts: Texts, max: usize, wait: Duration) -> Self {
        Pool {
            config,
            texts,
            max: max.max(1),
            wait,
            state: Mutex::new(State { idle: Vec::new(), open: 0 }),
            returned: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A raw connection without prepared statements (schema setup, before the tables exist).
    pub fn connect_raw(&self) -> Result<Client> {
        self.config.connect(NoTls).map_err(|e| PgError::from_client("", &e, false))
    }

    /// A connection: an idle one, a new one while fewer than `max` are open, or the first one
    /// returned within the wait.
    pub fn get(&self) -> Result<Pooled<'_>> {
        let deadline = std::time::Instant::now() + self.wait;
        let mut state = self.state();
        loop {
            while let Some(conn) = state.idle.pop() {
                if conn.client.is_closed() {
                    state.open -= 1;
                    continue;
                }
                return Ok(Pooled { pool: self, conn: Some(conn), broken: false });
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return match self.open() {
                    Ok(conn) => Ok(Pooled { pool: self, conn: Some(conn), broken: false }),
                    Err(e) => {
                        self.state().open -= 1;
                        self.returned.notify_one();
                        Err(e)
                    }
                };
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(PgError::Unavailable {
                    detail: format!("all {} connections stayed busy for {:?}", self.max, self.wait),
                    outcome_unknown: false,
                });
            }
            state = self.returned.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// A connection of the caller's own, with the statements prepared, outside the pool's
    /// count (a long read that must not hold one of the pool's connections).
    pub fn dedicated(&self) -> Result<Conn> {
        self.open()
    }

    fn open(&self) -> Result<Conn> {
        let mut client = self.connect_raw()?;
        // The statements are few and their plans do not depend on their parameters' values
        // (keys and arrays of keys): plan each once. Left to choose, PostgreSQL plans a commit's
        // statement anew at every execution (its arrays and CTEs keep the custom plan looking
        // cheaper), which cost 0.37 ms of planning per commit (BENCHMARKS.md, "Any replica, any
        // token"). A database without the setting (CockroachDB, YugabyteDB) keeps its own.
        if let Err(e) = client.batch_execute("SET plan_cache_mode = force_generic_plan") {
            tracing::debug!(error = %e, "the datastore has no plan_cache_mode; planning is its own");
        }
        let st = Prepared::new(&mut client, &self.texts).map_err(|e| PgError::from_client("", &e, false))?;
        Ok(Conn { client, st })
    }

    /// Closes every idle connection (they reopen on demand).
    pub fn clear(&self) {
        let mut state = self.state();
        let n = state.idle.len();
        state.idle.clear();
        state.open -= n;
    }
}

/// A checked-out connection; back to the pool on drop unless [`Pooled::broken`] was called.
pub struct Pooled<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
    broken: bool,
}

impl Pooled<'_> {
    /// Marks the connection as not to be reused (its state is unknown after an error).
    pub fn broken(&mut self) {
        self.broken = true;
    }

    /// The connection.
    pub fn conn(&mut self) -> Result<&mut Conn> {
        self.conn.as_mut().ok_or_else(|| PgError::Invalid("a pooled connection was used after release".into()))
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let mut state = self.pool.state();
        match self.conn.take() {
            Some(conn) if !self.broken && !conn.client.is_closed() => state.idle.push(conn),
            _ => state.open -= 1,
        }
        drop(state);
        self.pool.returned.notify_one();
    }
}
