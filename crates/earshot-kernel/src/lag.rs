//! How far a replica trails the shared datastore, and whether that makes it unready, with
//! hysteresis: pure bookkeeping over the heads a follower saw and the revisions it applied,
//! given the instants (so that tests drive time).
//!
//! **Lag** is the age of the oldest revision this replica has seen at the datastore's head and
//! not applied yet: zero when it has applied every head it saw. A follower under a steady
//! stream of writes from other replicas applies each head within one poll and a replay, so its
//! lag stays near the poll interval; measuring instead "time since the replica last found
//! itself exactly at the head" (what an earlier version did) grows without bound under such a
//! stream, because a poll almost never lands between two writes, and made readiness flap.
//!
//! **Readiness** has hysteresis: a store becomes unready only when its lag exceeds the limit
//! (`ready_max_lag`: it has trailed for that long, a sustained condition by construction),
//! and ready again only once it has caught up (applied every head it saw), not merely when the
//! lag dips under the limit. A store whose follower has not completed a poll for longer than
//! the limit is unready too (a stuck follower sees no head, so it would otherwise look caught
//! up for ever).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Most distinct heads remembered; past it the newest entry takes the newer head and keeps its
/// older instant, which can only overstate the lag (never understate it).
const MAX_SEEN: usize = 64;

/// One store's lag and readiness.
#[derive(Debug)]
pub struct Lag {
    /// Heads seen and not yet applied, oldest first, each with when it was first seen.
    seen: VecDeque<(u64, Instant)>,
    /// The newest revision applied here.
    applied: u64,
    /// Whether the store is unready for lag now (the hysteresis state).
    unready: bool,
}

impl Lag {
    /// A store loaded at `applied` (from the datastore: at its head then, so caught up).
    pub fn new(applied: u64) -> Self {
        Lag { seen: VecDeque::new(), applied, unready: false }
    }

    /// A poll read `head` at `now`.
    pub fn saw_head(&mut self, head: u64, now: Instant) {
        if head <= self.applied || self.seen.back().is_some_and(|(h, _)| *h >= head) {
            return;
        }
        if self.seen.len() >= MAX_SEEN {
            if let Some(last) = self.seen.back_mut() {
                last.0 = head;
            }
            return;
        }
        self.seen.push_back((head, now));
    }

    /// `revision` was applied (committed here, or replayed from another replica's).
    pub fn applied(&mut self, revision: u64) {
        self.applied = self.applied.max(revision);
        while self.seen.front().is_some_and(|(h, _)| *h <= self.applied) {
            self.seen.pop_front();
        }
    }

    /// The newest head seen (at least what is applied).
    pub fn head(&self) -> u64 {
        self.seen.back().map_or(self.applied, |(h, _)| *h).max(self.applied)
    }

    /// The age of the oldest head seen and not applied (zero when caught up).
    pub fn lag(&self, now: Instant) -> Duration {
        self.seen.front().map_or(Duration::ZERO, |(_, t)| now.saturating_duration_since(*t))
    }

    /// Whether every head seen has been applied.
    pub fn caught_up(&self) -> bool {
        self.seen.is_empty()
    }

    /// Decides readiness at `now` for a store whose last successful poll is `since_poll` old
    /// (`None`: never polled), given the limit: unready from when the lag (or the time without
    /// a poll) exceeds `limit`, ready again once caught up after a poll within the limit.
    /// Answers whether the store is unready now.
    pub fn unready(&mut self, now: Instant, since_poll: Option<Duration>, limit: Duration) -> bool {
        let stale = since_poll.is_some_and(|d| d > limit);
        if self.unready {
            if self.caught_up() && !stale {
                self.unready = false;
            }
        } else if stale || self.lag(now) > limit {
            self.unready = true;
        }
        self.unready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(2);

    fn ms(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    /// A steady stream of writes elsewhere, each applied within one poll: the lag stays at
    /// about a poll interval and the store never turns unready, however long it goes on.
    #[test]
    fn a_follower_that_keeps_up_with_a_steady_stream_stays_ready() {
        let t0 = Instant::now();
        let mut lag = Lag::new(10);
        for i in 0..1_000u64 {
            // A poll every 50 ms sees two new revisions; the replay applies them 30 ms later.
            let polled = ms(t0, i * 50);
            lag.saw_head(10 + 2 * (i + 1), polled);
            assert!(!lag.unready(ms(t0, i * 50 + 10), Some(Duration::from_millis(10)), LIMIT), "poll {i}");
            assert!(lag.lag(ms(t0, i * 50 + 29)) <= Duration::from_millis(29));
            lag.applied(10 + 2 * (i + 1));
            assert!(lag.caught_up());
        }
    }

    /// Unready only after trailing for longer than the limit; ready again only once caught up,
    /// not when the lag merely shrinks under the limit.
    #[test]
    fn readiness_has_hysteresis() {
        let t0 = Instant::now();
        let mut lag = Lag::new(5);
        lag.saw_head(6, ms(t0, 0));
        lag.saw_head(9, ms(t0, 1_000));
        let poll = Some(Duration::from_millis(20));
        assert!(!lag.unready(ms(t0, 1_999), poll, LIMIT));
        assert!(!lag.unready(ms(t0, 2_000), poll, LIMIT), "exactly the limit is not beyond it");
        assert!(lag.unready(ms(t0, 2_001), poll, LIMIT));
        // Revision 6 applied: the oldest unapplied head (9) is 1.5 s old, under the limit, but
        // the store is not caught up: still unready.
        lag.applied(6);
        assert_eq!(lag.lag(ms(t0, 2_500)), Duration::from_millis(1_500));
        assert!(lag.unready(ms(t0, 2_500), poll, LIMIT));
        lag.applied(9);
        assert!(!lag.unready(ms(t0, 2_600), poll, LIMIT), "caught up: ready again");
        assert_eq!(lag.head(), 9);
    }

    /// A follower that has not polled for longer than the limit sees no head, and is unready
    /// for it; it is ready again after a poll that finds it caught up.
    #[test]
    fn a_follower_that_stopped_polling_is_unready() {
        let t0 = Instant::now();
        let mut lag = Lag::new(3);
        assert!(!lag.unready(t0, None, LIMIT), "a store not polled yet, loaded at the head");
        assert!(lag.unready(t0, Some(Duration::from_millis(2_001)), LIMIT));
        assert!(!lag.unready(t0, Some(Duration::from_millis(10)), LIMIT));
    }

    /// More distinct heads than remembered: the newest entry takes the newer heads and keeps its
    /// instant, so the lag is never understated.
    #[test]
    fn a_long_backlog_never_understates_the_lag() {
        let t0 = Instant::now();
        let mut lag = Lag::new(0);
        for i in 0..(MAX_SEEN as u64 + 50) {
            lag.saw_head(i + 1, ms(t0, i));
        }
        assert_eq!(lag.head(), MAX_SEEN as u64 + 50);
        lag.applied(MAX_SEEN as u64 - 1);
        // Everything after the applied revision was first seen at or before its own instant.
        assert!(lag.lag(ms(t0, 1_000)) >= Duration::from_millis(1_000 - MAX_SEEN as u64));
        assert!(!lag.caught_up());
        lag.applied(MAX_SEEN as u64 + 50);
        assert!(lag.caught_up() && lag.lag(ms(t0, 5_000)).is_zero());
    }
}
