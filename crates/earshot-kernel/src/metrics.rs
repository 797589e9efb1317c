//! Operational figures of one store that `/metrics` reads and the writer and replica follower
//! record: writes waiting at the writer, group-commit batch sizes, and replica lag. Plain
//! atomics (no lock, no allocation per record), and a leaf: it names nothing else in the crate,
//! so every part, the kernel included, may use it (`tests/it/tidy.rs`).
//!
//! The kernel's writer records each group commit ([`StoreMetrics::observe_batch`]); the lag
//! ([`StoreMetrics::set_lag`]) is taken from the follower's record when `/metrics` asks.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

/// Upper bounds of the batch-size buckets (commands per group commit; the writer folds at most
/// 256 into one group).
pub const BATCH_BUCKETS: [u64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// The figures of one store; every method is wait-free.
#[derive(Debug, Default)]
pub struct StoreMetrics {
    /// Writes submitted to the writer and not yet answered (queued, or in the group being
    /// applied and committed).
    pending: AtomicI64,
    /// Group commits per bucket of [`BATCH_BUCKETS`] (the last slot counts larger groups).
    batch_buckets: [AtomicU64; BATCH_BUCKETS.len() + 1],
    batch_sum: AtomicU64,
    batch_count: AtomicU64,
    /// Revisions the datastore's head is ahead of this replica's published state.
    lag_revisions: AtomicU64,
    /// Milliseconds since this replica last caught up with the datastore's head.
    lag_ms: AtomicU64,
    /// Whether a lag was ever recorded (only replicas over a shared datastore have one).
    lag_known: AtomicBool,
}

/// A snapshot of the batch-size histogram: per bucket of [`BATCH_BUCKETS`] (not cumulative;
/// the last entry is larger groups), the sum of the sizes and the number of groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSizes {
    pub buckets: [u64; BATCH_BUCKETS.len() + 1],
    pub sum: u64,
    pub count: u64,
}

/// Counts one write waiting at the writer for as long as it lives. It owns its share of the
/// metrics, so it can travel with a write answered elsewhere (`Writer::write_then`).
#[derive(Debug)]
pub struct Pending(Arc<StoreMetrics>);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::Relaxed);
    }
}

impl StoreMetrics {
    /// A write entering the writer's queue; it leaves when the guard is dropped (answered).
    pub fn pending_write(self: &Arc<Self>) -> Pending {
        self.pending.fetch_add(1, Ordering::Relaxed);
        Pending(self.clone())
    }

    /// Writes submitted and not yet answered.
    pub fn queue_depth(&self) -> i64 {
        self.pending.load(Ordering::Relaxed).max(0)
    }

    /// One group commit of `commands` commands.
    pub fn observe_batch(&self, commands: usize) {
        let n = u64::try_from(commands).unwrap_or(u64::MAX);
        let slot = BATCH_BUCKETS.iter().position(|b| n <= *b).unwrap_or(BATCH_BUCKETS.len());
        if let Some(b) = self.batch_buckets.get(slot) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        self.batch_sum.fetch_add(n, Ordering::Relaxed);
        self.batch_count.fetch_add(1, Ordering::Relaxed);
    }

    /// The batch-size histogram so far.
    pub fn batch_sizes(&self) -> BatchSizes {
        BatchSizes {
            buckets: std::array::from_fn(|i| self.batch_buckets[i].load(Ordering::Relaxed)),
            sum: self.batch_sum.load(Ordering::Relaxed),
            count: self.batch_count.load(Ordering::Relaxed),
        }
    }

    /// How far this replica is behind the datastore's head, in
    /// revisions and in milliseconds since it last caught up (both 0 when it is current).
    pub fn set_lag(&self, revisions: u64, behind_ms: u64) {
        self.lag_revisions.store(revisions, Ordering::Relaxed);
        self.lag_ms.store(behind_ms, Ordering::Relaxed);
        self.lag_known.store(true, Ordering::Release);
    }

    /// The last recorded lag (revisions, milliseconds), if this store ever recorded one.
    pub fn lag(&self) -> Option<(u64, u64)> {
        self.lag_known
            .load(Ordering::Acquire)
            .then(|| (self.lag_revisions.load(Ordering::Relaxed), self.lag_ms.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_fall_in_their_bucket_and_pending_writes_leave_when_answered() {
        let m = std::sync::Arc::new(StoreMetrics::default());
        for n in [1, 2, 3, 256, 300] {
            m.observe_batch(n);
        }
        let b = m.batch_sizes();
        assert_eq!(b.buckets, [1, 1, 1, 0, 0, 0, 0, 0, 1, 1]);
        assert_eq!((b.sum, b.count), (562, 5));
        let (a, c) = (m.pending_write(), m.pending_write());
        assert_eq!(m.queue_depth(), 2);
        drop((a, c));
        assert_eq!(m.queue_depth(), 0);
        assert_eq!(m.lag(), None);
        m.set_lag(3, 120);
        assert_eq!(m.lag(), Some((3, 120)));
    }
}
