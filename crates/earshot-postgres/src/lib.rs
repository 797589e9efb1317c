//! PostgreSQL as Earshot's shared durable backend (issue 10): [`PgBackend`] implements the
//! store's [`earshot_kernel::Backend`] over two tables, advances each store's head by
//! compare-and-set so that racing writers (replicas) can never both commit a revision, and
//! serves the range reads of the store's revision log. Only portable SQL: the same tables and
//! statements work on PostgreSQL, CockroachDB and YugabyteDB.
//!
//! # Tables
//!
//! With the default prefix `earshot_` (see [`PgOptions::table_prefix`]):
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS earshot_records (
//!   store TEXT NOT NULL, key BYTEA NOT NULL, value BYTEA NOT NULL, PRIMARY KEY (store, key));
//! CREATE TABLE IF NOT EXISTS earshot_heads (
//!   store TEXT PRIMARY KEY, revision BIGINT NOT NULL, incarnation TEXT);
//! ALTER TABLE earshot_heads ADD COLUMN IF NOT EXISTS incarnation TEXT;  -- tables of an earlier version
//! CREATE SEQUENCE IF NOT EXISTS earshot_head_changes;
//! ALTER TABLE earshot_heads ADD COLUMN IF NOT EXISTS changed BIGINT NOT NULL DEFAULT 0;
//! CREATE INDEX IF NOT EXISTS earshot_heads_changed ON earshot_heads (changed);
//! ```
//!
//! Every head change takes the next `earshot_head_changes` value into `changed` and notifies
//! channel `earshot_heads` at commit (payload `<revision>/<incarnation>/<store>`): a replica's
//! one follower reads "which heads changed" with one query per interval for all its stores and
//! listens between polls ([`feed`]). A deleted store leaves its head as a tombstone (revision
//! 0), which the feed reports as a deletion.
//!
//! `records` holds exactly what the store's `Backend` contract speaks of (one row per key),
//! including the store's revision log (`l/` + revision, written by the store's kernel in each
//! revision's commit and pruned by it), which followers read with range scans
//! (`Backend::scan`). `heads` holds the revision each store is at and the store's incarnation
//! (which life of its id it is; NULL for stores created before incarnations were kept);
//! followers poll it ([`PgBackend::head`]) and retire a copy of a store whose head is gone or
//! of another incarnation.
//!
//! # A commit
//!
//! The store writes its meta record (`m`, carrying `revision`) in every revisioned commit, and
//! its writer groups several writes into one commit, each ending with its meta record. So the
//! backend derives the revisions from the ops: a commit of revisions `r+1 ..= r+k` expects
//! the head at `r` ([`PgBackend::commit_at`] takes the expected head explicitly). One
//! transaction, in this order:
//!
//! 1. `UPDATE earshot_heads SET revision = r+k WHERE store = $1 AND revision = r AND
//!    incarnation IS NOT DISTINCT FROM $4` (the incarnation the meta records name; or, for a
//!    new store, `INSERT … ON CONFLICT (store) DO NOTHING`). Zero rows: another writer moved
//!    the head first, or the store was deleted and created again since the writer loaded it;
//!    the transaction is rolled back and the commit fails with [`PgError::Conflict`], having
//!    touched nothing.
//! 2. The ops' net effect (last op per key wins) on `records`: one `INSERT … SELECT … FROM
//!    UNNEST(…) ON CONFLICT (store, key) DO UPDATE` and one `DELETE … WHERE key = ANY(…)`.
//! 3. `COMMIT`; durable when it returns (with PostgreSQL's default `synchronous_commit = on`).
//!
//! Ops without a meta record (the store's sealed contexts, audit records outside the revision
//! sequence) are applied to `records` in a transaction without moving the head.
//!
//! # Why racing writers are safe
//!
//! Two replicas both at revision `r` both try to commit `r+1`. The head row is the single
//! point they contend on, and it is touched first:
//!
//! - PostgreSQL, READ COMMITTED (its default): the second `UPDATE` blocks on the first's row
//!   lock; when the first commits, PostgreSQL re-evaluates the `WHERE` on the new row version,
//!   finds `revision = r+1 ≠ r`, updates zero rows, and the second fails as a conflict. Under
//!   REPEATABLE READ or SERIALIZABLE the second gets SQLSTATE 40001 instead, also a conflict.
//!   For a new store the second `INSERT … ON CONFLICT DO NOTHING` waits for the first and then
//!   inserts nothing.
//! - CockroachDB (SERIALIZABLE by default) and YugabyteDB (snapshot or serializable): a
//!   concurrent write to the same head row aborts one transaction with 40001 (retry error),
//!   which is mapped to a conflict; under read committed, where enabled, the CAS behaves as in
//!   PostgreSQL.
//!
//! Either way at most one commit of `r+1` succeeds, and the loser applied nothing. Correctness
//! rests on this row, not on advisory locks, and followers learn of changes by polling the head,
//! not by LISTEN/NOTIFY (neither of which CockroachDB offers in the same form).
//!
//! # Exports
//!
//! An export reads one store's records through [`earshot_kernel::Backend::snapshot`]: a
//! connection of its own (outside the pool, so a long export never holds a writer's) in a
//! `REPEATABLE READ, READ ONLY` transaction, whose snapshot is taken when the export opens. Every
//! read of the export, its revision record first and last, sees that instant, whatever any
//! replica commits meanwhile; the transaction ends (`ROLLBACK`) when the export is dropped.
//! Like any long transaction it holds back `VACUUM` on these tables while it runs.
//!
//! # Errors
//!
//! [`PgError::Conflict`] for a lost race (CAS miss, 40001, 40P01, 23505);
//! [`PgError::Unavailable`] for a failed or lost connection (no SQLSTATE, class 08, 53, 57P0x),
//! noting when it broke during `COMMIT` (the outcome is then unknown). A conflict becomes
//! `KernelError::WriteConflict` (the store's writer then reloads and applies the same writes once
//! more before answering it), unavailability `KernelError::StorageUnavailable` marked as the
//! datastore's (`KernelError::datastore_unavailable`, code `datastore_unavailable`), other database
//! errors `KernelError::Storage`, undecodable data `KernelError::Integrity`.
//!
//! # Secrets
//!
//! A connection string is never shown as given: every message and log line that names one
//! shows [`redacted`]'s reading of it, its passwords masked (`PgOptions`'s `Debug` too).
//!
mod backend;
mod error;
pub mod feed;
pub mod ops;
mod pool;
mod redact;
mod snapshot;
mod sql;
pub mod testing;

pub use backend::{PgBackend, PgOptions};
pub use error::{PgError, Result};
pub use redact::{redacted, MASK};
