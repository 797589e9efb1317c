//! The aggregation guard (SPEC §6.4): two permitted reads can reveal a third thing (a location
//! and a calendar reveal an empty home), so the schema may declare conflicts between slice
//! patterns, and a principal that used a slice of one member may not use a slice of another
//! member of the same conflict on the same grantor's devices within the conflict's window.
//!
//! This module decides one use against the principal's earlier uses on that grantor's devices;
//! which uses those are (explicit uses, SPEC §2.4, that were allowed; owners exempt) is the
//! store's business. Decisions:
//! - "Within the window" is half-open like every window here: an earlier use at `t` conflicts
//!   with a use at `now` when `now - t < window` (at exactly `t + window` it no longer does).
//! - A use conflicts with an earlier one when the two slices match *different* members of one
//!   conflict. Using a slice of the same member again is never a conflict.
//! - A single slice that matches two members of one conflict (overlapping patterns) would by
//!   itself hold both, so it is refused even with no earlier use (fail closed).

use crate::path::Path;
use crate::schema::Conflict;

/// Why a use is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash<'c, U> {
    pub conflict: &'c Conflict,
    /// The earlier use that completes the conflict; `None` when the slice matches two members
    /// by itself.
    pub earlier: Option<U>,
}

/// The first conflict (in declaration order) that a use of `path` at `now_ms` would complete,
/// given the principal's earlier uses on the same grantor's devices as `(id, path, at_ms)`,
/// newest first or in any order (the earliest-listed clashing use is named). `None`: the use
/// completes no conflict.
pub fn clash<'c, 'p, U: Copy>(
    conflicts: &'c [Conflict],
    path: &Path<'_>,
    now_ms: i64,
    earlier: impl IntoIterator<Item = (U, Path<'p>, i64)> + Clone,
) -> Option<Clash<'c, U>> {
    for conflict in conflicts {
        let mine = conflict.members_of(path);
        if mine == 0 {
            continue;
        }
        if mine.count_ones() > 1 {
            return Some(Clash { conflict, earlier: None });
        }
        for (id, then, at_ms) in earlier.clone() {
            if now_ms.saturating_sub(at_ms) >= conflict.window_ms {
                continue;
            }
            let theirs = conflict.members_of(&then);
            if theirs != 0 && theirs != mine {
                return Some(Clash { conflict, earlier: Some(id) });
            }
        }
    }
    None
}

/// The longest window of any conflict (0 when there is none): uses older than this can never
/// clash again, so a caller may stop looking at them.
pub fn longest_window(conflicts: &[Conflict]) -> i64 {
    conflicts.iter().map(|c| c.window_ms).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::parse;

    fn p(s: &str) -> Path<'_> {
        Path::parse(s).unwrap()
    }

    const HOUR: i64 = 3_600_000;

    #[test]
    fn a_second_member_within_the_window_clashes_and_names_the_earlier_use() {
        let s = parse("conflict empty_home { location/**, calendar/** within 24h }").unwrap();
        let earlier = vec![(7u32, p("location/now"), 0)];
        let c = clash(&s.conflicts, &p("calendar/today"), 23 * HOUR, earlier.clone()).unwrap();
        assert_eq!((c.conflict.name.as_str(), c.earlier), ("empty_home", Some(7)));
        // The same member again, another slice outside every member, or the window passed.
        assert_eq!(clash(&s.conflicts, &p("location/home"), HOUR, earlier.clone()), None);
        assert_eq!(clash(&s.conflicts, &p("vitals/pulse"), HOUR, earlier.clone()), None);
        assert_eq!(clash(&s.conflicts, &p("calendar/today"), 24 * HOUR, earlier.clone()), None);
        assert!(clash(&s.conflicts, &p("calendar/today"), 24 * HOUR - 1, earlier).is_some());
        assert_eq!(clash::<u32>(&s.conflicts, &p("calendar/today"), 0, vec![]), None);
    }

    #[test]
    fn a_slice_in_two_members_is_refused_alone_and_the_first_conflict_is_named() {
        let s = parse("conflict a { x/**, x/y within 1h }\nconflict b { q, r within 1h }").unwrap();
        let c = clash::<u32>(&s.conflicts, &p("x/y"), 0, vec![]).unwrap();
        assert_eq!((c.conflict.name.as_str(), c.earlier), ("a", None));
        let c = clash(&s.conflicts, &p("r"), 10, vec![(1u32, p("x/z"), 0), (2, p("q"), 5)]).unwrap();
        assert_eq!((c.conflict.name.as_str(), c.earlier), ("b", Some(2)));
        assert_eq!(longest_window(&s.conflicts), HOUR);
        assert_eq!(longest_window(&[]), 0);
    }
}
