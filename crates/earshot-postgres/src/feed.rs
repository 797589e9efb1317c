//! The change feed over PostgreSQL ([`PgFeed`]): which stores' heads changed, for a replica's
//! one follower. A poll reads the heads whose `changed` position (from the `head_changes`
//! sequence) is past what it has seen; between polls the feed waits on `LISTEN {prefix}heads`,
//! whose notifications PostgreSQL delivers as each commit lands. Both on one connection of the
//! feed's own, outside the backend's pool, opened again after a failure.
//!
//! A sequence hands out positions when a commit takes its head, not when it commits: a commit
//! still in flight can land with a lower position than one already seen. So a poll looks back
//! [`LOOK_BACK`] in time: it reads from the newest position it had seen that long ago, and may
//! answer a change twice (a follower then finds itself caught up), never miss one whose commit
//! took less than that between its head and its end. The follower's periodic sweep of every
//! loaded store bounds the rest.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use earshot_kernel::backend::{Changed, HeadFeed};
use earshot_kernel::Head;
use postgres::fallible_iterator::FallibleIterator;

use crate::error::{PgError, Result};
use crate::pool::{Conn, Pool};

/// How far back in time a poll reads again (see the module docs).
pub const LOOK_BACK: Duration = Duration::from_secs(2);
/// Rows per page of a poll.
const PAGE: i64 = 5_000;

/// The feed: its connection (when open), whether it listens, and the positions it has seen.
pub struct PgFeed {
    pool: std::sync::Arc<Pool>,
    channel: String,
    notify: bool,
    conn: Option<Conn>,
    /// `(when, newest position seen by then)`, oldest first; trimmed to what `LOOK_BACK` needs.
    seen: VecDeque<(Instant, i64)>,
    /// Where the feed started: the newest position when it first connected.
    start: Option<i64>,
}

impl PgFeed {
    pub(crate) fn new(pool: std::sync::Arc<Pool>, channel: String, notify: bool) -> Self {
        PgFeed { pool, channel, notify, conn: None, seen: VecDeque::new(), start: None }
    }

    /// The connection, opened (and listening) if it is not.
    fn conn(&mut self) -> Result<&mut Conn> {
        if self.conn.is_none() {
            let mut conn = self.pool.dedicated()?;
            if self.notify {
                conn.client
                    .batch_execute(&format!("LISTEN {}", self.channel))
                    .map_err(|e| PgError::from_client("", &e, false))?;
            }
            if self.start.is_none() {
                let row = conn
                    .client
                    .query_one(&conn.st.newest_change, &[])
                    .map_err(|e| PgError::from_client("", &e, false))?;
                self.start = Some(row.get(0));
            }
            self.conn = Some(conn);
        }
        self.conn.as_mut().ok_or_else(|| PgError::Invalid("the feed's connection is gone".into()))
    }

    /// Where a poll starts now: the newest position seen `LOOK_BACK` ago (or where the feed
    /// started).
    fn from(&mut self, now: Instant) -> i64 {
        let mut from = self.start.unwrap_or(0);
        // Keep the newest entry at least LOOK_BACK old (it is the floor) and every newer one.
        while self.seen.len() > 1 && self.seen.get(1).is_some_and(|(t, _)| now.duration_since(*t) >= LOOK_BACK) {
            self.seen.pop_front();
        }
        if let Some((t, p)) = self.seen.front() {
            if now.duration_since(*t) >= LOOK_BACK {
                from = from.max(*p);
            }
        }
        from
    }

    fn poll_once(&mut self) -> Result<Vec<Changed>> {
        let now = Instant::now();
        self.conn()?;
        let mut from = self.from(now);
        let conn = self.conn()?;
        let mut out = Vec::new();
        let mut newest = from;
        loop {
            let rows = conn
                .client
                .query(&conn.st.changed_since, &[&from, &PAGE])
                .map_err(|e| PgError::from_client("", &e, false))?;
            let n = rows.len();
            for r in rows {
                let revision: i64 = r.get(1);
                let position: i64 = r.get(3);
                newest = newest.max(position);
                from = from.max(position);
                let head = (revision > 0).then(|| Head { revision: revision as u64, incarnation: r.get(2) });
                out.push(Changed { store: r.get(0), head });
            }
            if (n as i64) < PAGE {
                break;
            }
        }
        let newest = newest.max(self.seen.back().map_or(i64::MIN, |(_, p)| *p));
        self.seen.push_back((now, newest));
        Ok(out)
    }

    fn wait_once(&mut self, wait: Duration) -> Result<Vec<Changed>> {
        if !self.notify {
            std::thread::sleep(wait);
            return Ok(Vec::new());
        }
        let conn = self.conn()?;
        let mut out = Vec::new();
        let mut notes = conn.client.notifications();
        let first = notes.timeout_iter(wait).next().map_err(|e| PgError::from_client("", &e, false))?;
        let mut push = |payload: &str| {
            if let Some(c) = parse(payload) {
                out.push(c);
            }
        };
        if let Some(n) = first {
            push(n.payload());
            // Whatever else has arrived, without waiting.
            let mut more = notes.iter();
            while let Some(n) = more.next().map_err(|e| PgError::from_client("", &e, false))? {
                push(n.payload());
            }
        }
        Ok(out)
    }
}

/// A notification's payload: `<revision>/<incarnation or ->/<store>` (revision 0: deleted).
fn parse(payload: &str) -> Option<Changed> {
    let mut parts = payload.splitn(3, '/');
    let revision: u64 = parts.next()?.parse().ok()?;
    let incarnation = parts.next()?;
    let store = parts.next()?.to_string();
    let head =
        (revision > 0).then(|| Head { revision, incarnation: (incarnation != "-").then(|| incarnation.to_string()) });
    Some(Changed { store, head })
}

impl HeadFeed for PgFeed {
    fn poll(&mut self) -> earshot_kernel::Result<Vec<Changed>> {
        let polled = self.poll_once();
        if polled.is_err() {
            // Opened again at the next call; what it missed meanwhile the look-back finds.
            self.conn = None;
        }
        Ok(polled?)
    }

    fn wait(&mut self, wait: Duration) -> earshot_kernel::Result<Vec<Changed>> {
        let waited = self.wait_once(wait);
        if waited.is_err() {
            self.conn = None;
        }
        Ok(waited?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_parse_with_stores_that_hold_slashes_and_deletions() {
        let c = parse("42/0123abcd/a/b").expect("parses");
        assert_eq!(c.store, "a/b");
        assert_eq!(c.head, Some(Head { revision: 42, incarnation: Some("0123abcd".into()) }));
        let c = parse("7/-/s").expect("parses");
        assert_eq!(c.head, Some(Head { revision: 7, incarnation: None }));
        assert_eq!(parse("0/-/gone").expect("parses").head, None);
        assert_eq!(parse("x/-/s"), None);
        assert_eq!(parse("3"), None);
    }
}
