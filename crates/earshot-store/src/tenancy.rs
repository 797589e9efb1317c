//! Many stores per process: the coarse clock that marks when a store was last used, the
//! figures `/metrics` reports (stores loaded, evictions, reloads and their latency), and which
//! loaded stores to evict (idle ones, then the least recently used above the cap). The
//! eviction itself is `crate::Earshot::housekeep`, and each store decides whether it may go
//! (`StoreHandle::evict_if_idle`).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The coarse clock: whole seconds since the process first asked, advanced by
/// [`advance_tick`] (every housekeeping pass). A store's use is marked with it, so that the
/// decision path pays one load and, at most once a second per store, one store.
static TICK: AtomicU32 = AtomicU32::new(0);

fn started() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// The coarse clock now.
#[inline]
pub(crate) fn tick() -> u32 {
    TICK.load(Ordering::Relaxed)
}

/// Moves the coarse clock to the present.
pub(crate) fn advance_tick() -> u32 {
    let now = u32::try_from(started().elapsed().as_secs()).unwrap_or(u32::MAX);
    TICK.fetch_max(now, Ordering::Relaxed).max(now)
}

/// A store used less than this long ago is never evicted, even above the cap: a request that
/// resolved it is almost surely done with it by then.
pub(crate) const MIN_IDLE_SECS: u32 = 2;

/// Loading and eviction figures of one process, for `/metrics`.
#[derive(Debug, Default)]
pub struct TenancyStats {
    evictions: AtomicU64,
    reloads: AtomicU64,
    reload_micros: AtomicU64,
    reload_micros_max: AtomicU64,
}

/// A copy of [`TenancyStats`] and the count of stores loaded now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tenancy {
    /// Stores loaded in memory now.
    pub loaded: usize,
    /// Stores known to exist and not loaded (evicted, or not loaded at start-up).
    pub unloaded: usize,
    /// Stores evicted since the process started.
    pub evictions: u64,
    /// Stores loaded again on their first use after an eviction (or after start-up).
    pub reloads: u64,
    /// Total time those loads took, in microseconds.
    pub reload_micros: u64,
    /// The longest of them.
    pub reload_micros_max: u64,
    /// Threads of the writer pool.
    pub writer_threads: usize,
}

impl TenancyStats {
    pub(crate) fn evicted(&self) {
        self.evictions.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn reloaded(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.reloads.fetch_add(1, Ordering::Relaxed);
        self.reload_micros.fetch_add(micros, Ordering::Relaxed);
        self.reload_micros_max.fetch_max(micros, Ordering::Relaxed);
    }

    pub(crate) fn figures(&self, loaded: usize, unloaded: usize, writer_threads: usize) -> Tenancy {
        Tenancy {
            loaded,
            unloaded,
            evictions: self.evictions.load(Ordering::Relaxed),
            reloads: self.reloads.load(Ordering::Relaxed),
            reload_micros: self.reload_micros.load(Ordering::Relaxed),
            reload_micros_max: self.reload_micros_max.load(Ordering::Relaxed),
            writer_threads,
        }
    }
}

/// Which stores to try to evict, most deserving first: every store idle for `idle_after`
/// (zero: none for idleness), then, while more than `max_loaded` (zero: no cap) would stay,
/// the least recently used of those idle at least [`MIN_IDLE_SECS`]. `stores` are `(id, last
/// used)`; `now` is the coarse clock.
pub(crate) fn candidates(
    mut stores: Vec<(String, u32)>,
    now: u32,
    idle_after: Duration,
    max_loaded: usize,
) -> Vec<String> {
    stores.sort_unstable_by(|(a, used_a), (b, used_b)| used_a.cmp(used_b).then_with(|| a.cmp(b)));
    let idle_secs = u32::try_from(idle_after.as_secs()).unwrap_or(u32::MAX);
    let total = stores.len();
    let mut out = Vec::new();
    for (i, (id, used)) in stores.into_iter().enumerate() {
        let idle = now.saturating_sub(used);
        let too_idle = idle_secs > 0 && idle >= idle_secs;
        let over_cap = max_loaded > 0 && total - i > max_loaded;
        if too_idle || (over_cap && idle >= MIN_IDLE_SECS) {
            out.push(id);
        } else if !over_cap && !too_idle {
            // Sorted by last use: nothing after this one is idle longer.
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores(used: &[u32]) -> Vec<(String, u32)> {
        used.iter().enumerate().map(|(i, u)| (format!("s{i}"), *u)).collect()
    }

    #[test]
    fn idle_stores_go_first_and_the_cap_takes_the_least_recently_used() {
        // No cap, idle after 60 s: only those idle that long.
        assert_eq!(candidates(stores(&[10, 100, 39, 41]), 100, Duration::from_secs(60), 0), vec!["s0", "s2"]);
        // A cap of 2 of 4: the two least recently used, idle at least MIN_IDLE_SECS.
        assert_eq!(candidates(stores(&[90, 100, 95, 97]), 100, Duration::ZERO, 2), vec!["s0", "s2"]);
        // Used within MIN_IDLE_SECS: kept even above the cap.
        assert_eq!(candidates(stores(&[99, 100, 100]), 100, Duration::ZERO, 1), Vec::<String>::new());
        // Neither idle nor over the cap: nothing.
        assert!(candidates(stores(&[1, 2]), 100, Duration::ZERO, 0).is_empty());
        assert!(candidates(stores(&[1, 2]), 100, Duration::ZERO, 5).is_empty());
    }

    #[test]
    fn the_tick_only_moves_forward() {
        let a = advance_tick();
        assert!(tick() >= a);
        assert!(advance_tick() >= a);
    }
}
