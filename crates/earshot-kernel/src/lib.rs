//! The kernel of an Earshot store, which knows nothing of what its records mean: the storage
//! seam (`backend`: sled and in memory here, PostgreSQL in `earshot-postgres`), revisions and
//! consistency tokens (`token`), the revision log (`log`), the writer of each store with group
//! commit, snapshot publication, retention and waits (`writer`), run on a pool of threads that
//! every store shares (`pool`), following other replicas through the datastore's feed of
//! changed heads (`follower`, `lag`), reads of the records at one revision while writes go on
//! (`pin`), and each store's operational figures (`metrics`), over any [`State`].
//!
//! Arrows run one way: `earshot-store` (the domains and their composition) and
//! `earshot-postgres` use the kernel; the kernel names neither (the compiler enforces it: this
//! crate does not depend on them).

pub mod backend;
pub mod error;
pub mod follower;
pub mod lag;
pub mod log;
pub mod metrics;
pub mod pin;
pub mod pool;
pub mod reclaim;
pub mod sled_backend;
mod sled_migrate;
pub mod token;
pub mod writer;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use backend::Op;
pub use backend::{Backend, Head, MemoryBackend, RecordsView, SledBackend};
pub use error::{KernelError, Result};

/// What every store of one process shares: the writer pool that runs their writers, the thread
/// that frees the revisions they prune (`reclaim`) and, on a shared datastore, the one follower
/// that learns which of them another replica changed.
pub struct Runtime {
    pub pool: Arc<pool::Pool>,
    pub reclaimer: Arc<reclaim::Reclaimer>,
    pub follower: Option<Arc<follower::Follower>>,
}

impl Runtime {
    /// Starts the pool (`config.writer_threads`) and, on a shared backend that is followed,
    /// the follower.
    pub fn start(backend: &Arc<dyn backend::Backend>, config: &Config) -> Result<Arc<Self>> {
        let failed = |e: std::io::Error| KernelError::Storage(format!("cannot start a thread: {e}"));
        let pool = pool::Pool::start(config.writer_threads).map_err(failed)?;
        let reclaimer = reclaim::Reclaimer::start().map_err(failed)?;
        let follower = if backend.shared() && !config.follow_interval.is_zero() {
            Some(
                follower::Follower::start(backend.clone(), config.follow_interval, config.follow_notifications)
                    .map_err(failed)?,
            )
        } else {
            None
        };
        Ok(Arc::new(Runtime { pool, reclaimer, follower }))
    }

    /// Stops the follower and the pool (after every writer drained its own work).
    pub fn stop(&self) {
        if let Some(f) = &self.follower {
            f.stop();
        }
        self.pool.stop();
        self.reclaimer.stop();
    }
}

/// What applying a command gives: its outcome and, when anything changed, the next state and
/// what changed.
pub type Applied<S> = (<S as State>::Outcome, Option<(S, <S as State>::Dirty)>);

/// What the writer keeps and publishes: one revision of a store's state, as the domains compose
/// it. The kernel clones it (which must be cheap: persistent maps), applies one command to the
/// clone, asks it to encode what the command touched, commits, and publishes the clone.
pub trait State: Clone + Send + Sync + 'static {
    /// Every way loading, applying or encoding a state may be refused (the domains' error,
    /// which takes the kernel's refusals as its own).
    type Error: From<KernelError> + std::fmt::Display + Send + 'static;
    /// What the writer holds beside the published state and readers never see (an index only
    /// writes need), rebuilt with the state.
    type Aside: Send + 'static;
    /// One write (cloned to log it, and to apply it once more after a lost race on a shared
    /// backend). Serialised into the revision log, from which followers replay it.
    type Command: Clone + Send + serde::Serialize + serde::de::DeserializeOwned + 'static;
    /// What a write answers.
    type Outcome: Send + 'static;
    /// Which records a command touched.
    type Dirty;

    /// Projects a store's records (as `Backend::load` returns them) into a state and its aside,
    /// refusing records that do not add up.
    fn load(store: &str, raw: &[(Vec<u8>, Vec<u8>)]) -> Result<(Self, Self::Aside), Self::Error>;
    /// The revision this state is.
    fn revision(&self) -> u64;
    /// When this revision was committed (retention, and the time `at_exact` reads judge at).
    fn committed_at_ms(&self) -> i64;
    /// Marks this state as `revision`, committed at `committed_at_ms`.
    fn stamp(&mut self, revision: u64, committed_at_ms: i64);
    /// Applies `cmd` to a copy of `self`. On success, the outcome and, when anything changed,
    /// the next state with what changed; on error nothing changed (the aside only grows in
    /// ways a reload undoes).
    fn apply(
        &self,
        aside: &mut Self::Aside,
        cmd: Self::Command,
        now_ms: i64,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<Applied<Self>, Self::Error>;
    /// Brings `aside` back to what it is for this state, after applies to copies of this state
    /// that were not kept (a group decided again once the writer caught up with the datastore).
    fn rewind(&self, aside: &mut Self::Aside);
    /// The ops that write every record `dirty` names, as they are in `self`.
    fn encode(&self, dirty: &Self::Dirty) -> Result<Vec<Op>, Self::Error>;
    /// The same refusal again, for every write of a group one refusal answers (the domains'
    /// error need not be `Clone`: it may carry sources).
    fn duplicate_error(e: &Self::Error) -> Self::Error;
    /// What a command that made a revision changed, as watchers see it: kinds and ids, never
    /// content (the revision log keeps it for the watch stream).
    fn change(cmd: &Self::Command, outcome: &Self::Outcome) -> serde_json::Value;
    /// Takes what it needs of the store's configuration; the writer calls it on every state
    /// it loads from the records (start and reload), and applied states keep it.
    fn tune(&mut self, _config: &Config) {}
}

/// Time source. Decisions take their time from the snapshot; this only stamps snapshots.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to (scenario tests of expiry).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(ms: i64) -> Self {
        ManualClock(AtomicI64::new(ms))
    }
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Bounds on waiting, retention and attempts.
#[derive(Debug, Clone)]
pub struct Config {
    /// How long past revisions stay readable with `at_exact`.
    pub retention_window: Duration,
    /// Most past revisions kept, whatever their age.
    pub retention_max: usize,
    /// How long an `at_least`/`at_exact` read waits for a revision not yet published.
    pub consistency_wait: Duration,
    /// How long an attempt stays readable.
    pub attempt_ttl: Duration,
    /// Most attempts open at once per store.
    pub max_attempts: usize,
    /// Longest a write waits for its commit; past it the write is refused with
    /// `storage_unavailable` (outcome unknown), and later writes are refused at once while that
    /// commit has still not returned.
    pub write_wait: Duration,
    /// Bytes kept free on the data directory's filesystem: commits are refused with
    /// `insufficient_storage` below it, so that sled never runs out of space mid-commit.
    pub min_free_bytes: u64,
    /// sled's page cache, in bytes (the embedded store only): what it keeps of its pages in
    /// memory beside the stores' projections.
    pub sled_cache_bytes: u64,
    /// On a shared backend (several replicas over one database), how often each store's
    /// writer, when idle, polls the backend's head and reloads the store when another replica
    /// moved it. Zero turns following off.
    pub follow_interval: Duration,
    /// How many revisions the revision log keeps (followers further behind, and watchers
    /// resuming from further back, fall back to a full reload or are refused).
    pub log_retention: u64,
    /// On a shared backend, how long a store may go without having caught up with the
    /// datastore's head before readiness reports it behind.
    pub ready_max_lag: Duration,
    /// Most stores kept loaded in memory (0: no cap). Above it, `Earshot::housekeep` evicts
    /// the least recently used of those idle for a few seconds; an evicted store is loaded
    /// again from its records on its next use, with the same answers and tokens.
    pub max_loaded_stores: usize,
    /// A store unused for this long is evicted whatever the cap (zero: never for idleness).
    pub idle_store_after: Duration,
    /// Threads of the writer pool that runs every store's writer (a store has no thread of
    /// its own).
    pub writer_threads: usize,
    /// On a shared backend, whether the follower also listens for the datastore's
    /// notifications of commits (PostgreSQL `LISTEN`), which bring another replica's write
    /// within milliseconds; polling every `follow_interval` stays the fallback.
    pub follow_notifications: bool,
    /// Start no store when opening: each starts on its first use (a replica among many that
    /// hold more stores than one can, where the load balancer routes by store).
    pub load_on_first_use: bool,
    /// Items from which a store rebuilds its item name table off the writer, on a thread of
    /// its own, when the table goes stale (the items fold into a new base, or a participant's
    /// removal changes an audience); below it the write that made it stale rebuilds it. In a
    /// large store the rebuild would stall every write queued behind it (BENCHMARKS.md, "A store
    /// grown by single writes, and the writer's pauses"). Decisions are the same either way.
    pub item_lines_off_writer_from: usize,
}

/// The default of `Config::item_lines_off_writer_from`: below it a rebuild of the item lines
/// costs the write that needs it less than 50 ms.
pub const DEFAULT_ITEM_LINES_OFF_WRITER_FROM: usize = 1 << 16;

impl Default for Config {
    fn default() -> Self {
        writer::default_config()
    }
}
