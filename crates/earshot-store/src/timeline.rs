//! The instants at which a snapshot's judgements change with time alone (SPEC §2.6): a grant's
//! expiry, an edge's or a capability's window, an explicit use leaving an aggregation window.
//!
//! An `at_exact` read is judged at the time recorded with its revision, so that the same token
//! always gives the same answer; it may be used (admit, allow) only when no judgement of that
//! snapshot could differ at the time of the request. That holds exactly when no instant of the
//! timeline lies in `(then, now]`: every time-bounded rule in the store compares the judging
//! instant `t` with one of these instants `i` as `t < i` (`now < expires_at`, `now < not_after`,
//! `now - used_at < window`) or its negation (`now >= not_before`), so a judgement changes only
//! where time reaches an instant, and is the same at `then` and `now` when none is reached.
//!
//! The timeline is a conservative projection: the writer adds the instants of every record a
//! write touches and never removes one when a record is revoked, so it may hold instants no
//! judgement depends on any more (they only make an `at_exact` answer historical sooner, never
//! usable wrongly). Instants up to the snapshot's own commit time are dropped when it is
//! stamped, since no `at_exact` read of it or of a later revision asks about them; so the set
//! holds only the future of the newest revision, and a rebuild from records holds a subset of
//! what the writer kept (`verify` checks that).

use crate::common::OrdSet;
use crate::devices::apply::DeviceDirty;
use crate::devices::DeviceState;
use crate::memory::apply::Dirty as MemoryDirty;
use crate::memory::snapshot::MemorySnapshot;

/// The pending instants (milliseconds since the epoch) of one snapshot.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub(crate) struct Timeline {
    instants: OrdSet<i64>,
}

impl Timeline {
    /// Whether every judgement of the snapshot is the same at `then` and at `now`: no instant
    /// of the timeline lies in `(then, now]`. A `now` before `then` (a clock behind the one
    /// that stamped the revision) is never alike: the instants up to `then` were dropped, so
    /// nothing can be said.
    pub(crate) fn judged_alike(&self, then: i64, now: i64) -> bool {
        use std::ops::Bound::{Excluded, Included};
        then <= now && self.instants.range((Excluded(then), Included(now))).next().is_none()
    }

    /// Drops the instants up to `t` included (the commit time of the revision being stamped).
    pub(crate) fn prune_through(&mut self, t: i64) {
        if self.instants.get_min().is_some_and(|&m| m <= t) {
            let (_, _, rest) = std::mem::take(&mut self.instants).into_inner().split_member(&t);
            *self.instants = rest;
        }
    }

    /// The timeline of a state rebuilt from its records, from `from` (its commit time) on.
    pub(crate) fn of_state(mem: &MemorySnapshot, dev: &DeviceState, from: i64) -> Timeline {
        let mut t = Timeline::default();
        for g in mem.grants.iter() {
            t.add_grant(g.expires_at_ms);
        }
        for e in dev.edges.iter() {
            t.add_window(e.constraints.not_before_ms, e.constraints.not_after_ms);
        }
        for c in dev.caps.iter() {
            t.add_window(c.constraints.not_before_ms, c.constraints.not_after_ms);
        }
        t.add_uses(dev, dev.uses.iter().map(|u| u.at_ms));
        t.prune_through(from);
        t
    }

    /// Adds the instants of the records a write touched, as they are in the written state.
    pub(crate) fn add_written(&mut self, mem: &MemorySnapshot, dev: &DeviceState, md: &MemoryDirty, dd: &DeviceDirty) {
        for &g in &md.grants {
            if let Some(g) = mem.grant(g) {
                self.add_grant(g.expires_at_ms);
            }
        }
        for &e in &dd.edges {
            if let Some(e) = dev.edge(e) {
                self.add_window(e.constraints.not_before_ms, e.constraints.not_after_ms);
            }
        }
        for &c in &dd.caps {
            if let Some(c) = dev.cap(c) {
                self.add_window(c.constraints.not_before_ms, c.constraints.not_after_ms);
            }
        }
        if dd.schema {
            // New conflict windows apply to every use recorded so far.
            self.add_uses(dev, dev.uses.iter().map(|u| u.at_ms));
        } else {
            self.add_uses(dev, dd.uses.iter().filter_map(|&u| dev.uses.get(u as usize)).map(|u| u.at_ms));
        }
    }

    /// Whether `self` holds every instant of `other` (a rebuild's timeline is a subset of the
    /// writer's, which never forgets a revoked record's instants).
    pub(crate) fn covers(&self, other: &Timeline) -> bool {
        other.instants.iter().all(|t| self.instants.contains(t))
    }

    /// How many instants are pending (for `verify`'s report).
    pub(crate) fn len(&self) -> usize {
        self.instants.len()
    }

    fn add_grant(&mut self, expires_at_ms: Option<i64>) {
        if let Some(e) = expires_at_ms {
            self.instants.insert(e);
        }
    }

    fn add_window(&mut self, not_before_ms: Option<i64>, not_after_ms: Option<i64>) {
        for t in [not_before_ms, not_after_ms].into_iter().flatten() {
            self.instants.insert(t);
        }
    }

    /// A use at `at` clashes until `at + window` for each conflict window of the schema.
    fn add_uses(&mut self, dev: &DeviceState, at: impl Iterator<Item = i64>) {
        let Some(schema) = dev.schema.as_ref().filter(|s| !s.conflicts.is_empty()) else { return };
        for at in at {
            for c in &schema.conflicts {
                self.instants.insert(at.saturating_add(c.window_ms));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(instants: &[i64]) -> Timeline {
        Timeline { instants: instants.iter().copied().collect() }
    }

    #[test]
    fn alike_only_when_no_instant_is_reached_after_then() {
        let t = of(&[100, 200]);
        assert!(t.judged_alike(0, 99));
        assert!(t.judged_alike(100, 199), "a rule `t < 100` is already false at 100");
        assert!(t.judged_alike(150, 150));
        assert!(t.judged_alike(200, 1_000));
        for (then, now) in [(0, 100), (99, 100), (100, 200), (150, 200), (0, 1_000)] {
            assert!(!t.judged_alike(then, now), "({then}, {now}]");
        }
        // A clock behind the revision's: nothing can be said.
        assert!(!of(&[]).judged_alike(10, 9));
        assert!(of(&[]).judged_alike(10, 10));
    }

    #[test]
    fn pruning_drops_the_instant_itself_and_everything_before() {
        let mut t = of(&[1, 5, 9, 12]);
        t.prune_through(9);
        assert_eq!(t, of(&[12]));
        t.prune_through(11);
        assert_eq!(t, of(&[12]));
        t.prune_through(0);
        assert_eq!(t, of(&[12]));
        assert!(t.covers(&of(&[12])) && !t.covers(&of(&[9])));
        t.prune_through(12);
        assert_eq!(t, of(&[]));
    }
}
