//! Derivation dispositions (SPEC §1.5): which audience a derived item gets, and when it is suppressed.
//!
//! A derived audience is computed from each source's origin audience only. Grants never enter
//! that computation: a grant cannot become authority for an item that might outlive it.

use crate::audience::{intersect, MemberSet, OwnedMembers};
use crate::viewers::Viewers;
use serde::{Deserialize, Serialize};

/// The four closed dispositions (suppress and quarantine are the two forms of the fourth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    Partition,
    Intersection,
    Declassification,
    Suppress,
    Quarantine,
}

/// Why a derivation was suppressed (nothing created) or quarantined (created, never current
/// until released).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuppressReason<I> {
    /// Provenance is incomplete: the source is not current.
    SourceNotCurrent(I),
    /// The deriving container reaches the source only through a grant.
    SourceReachableOnlyThroughGrant(I),
    /// The deriving container cannot reach the source at all.
    SourceNotAdmissible(I),
}

impl<I> SuppressReason<I> {
    pub fn code(&self) -> &'static str {
        match self {
            SuppressReason::SourceNotCurrent(_) => "source_not_current",
            SuppressReason::SourceReachableOnlyThroughGrant(_) => "source_reachable_only_through_grant",
            SuppressReason::SourceNotAdmissible(_) => "source_not_admissible",
        }
    }

    pub fn source(&self) -> &I {
        match self {
            SuppressReason::SourceNotCurrent(i)
            | SuppressReason::SourceReachableOnlyThroughGrant(i)
            | SuppressReason::SourceNotAdmissible(i) => i,
        }
    }
}

/// What the suppress rule needs to know about one source.
#[derive(Debug, Clone, Copy)]
pub struct SourceView<'a, I, P> {
    pub id: I,
    pub current: bool,
    pub origin: MemberSet<'a, P>,
    /// Whether some live grant of the source contains the container's viewers. Used only to
    /// name the reason; it never changes the outcome nor any audience.
    pub reachable_by_grant: bool,
}

/// Applies the suppress rule to the sources of a derivation, in order.
///
/// Every source must be current (else provenance is incomplete). When the derivation names the
/// container it was produced for, every source must be reachable from that container through
/// its origin audience; an owner-only container always is.
pub fn suppression<I: Copy, P: Ord>(
    container: Option<&Viewers<P>>,
    sources: &[SourceView<'_, I, P>],
) -> Option<SuppressReason<I>> {
    for s in sources {
        if !s.current {
            return Some(SuppressReason::SourceNotCurrent(s.id));
        }
    }
    let viewers = container?;
    for s in sources {
        if !s.origin.contains_all(viewers) {
            return Some(if s.reachable_by_grant {
                SuppressReason::SourceReachableOnlyThroughGrant(s.id)
            } else {
                SuppressReason::SourceNotAdmissible(s.id)
            });
        }
    }
    None
}

/// `Aud(d) = ∩ Aud(s)`: the audience of an intersection (or quarantined) derived item.
pub fn intersection_audience<P: Ord + Clone>(sources: &[MemberSet<'_, P>]) -> OwnedMembers<P> {
    intersect(sources)
}

/// For a partition output: the one audience all its sources share, or `None` when they differ.
pub fn partition_audience<'a, P: Ord>(sources: &[MemberSet<'a, P>]) -> Option<MemberSet<'a, P>> {
    let (first, rest) = sources.split_first()?;
    rest.iter().all(|s| s == first).then_some(*first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(id: u32, current: bool, origin: MemberSet<'_, u32>, by_grant: bool) -> SourceView<'_, u32, u32> {
        SourceView { id, current, origin, reachable_by_grant: by_grant }
    }

    #[test]
    fn suppress_on_incomplete_provenance_first() {
        let m = [1, 2];
        let s = [src(7, true, MemberSet::Only(&m[..]), false), src(8, false, MemberSet::Everyone, false)];
        assert_eq!(suppression(None, &s), Some(SuppressReason::SourceNotCurrent(8)));
    }

    #[test]
    fn suppress_when_container_reaches_a_source_only_through_a_grant() {
        let m = [1];
        let s = [src(7, true, MemberSet::Only(&m[..]), true)];
        let bob_and_owner = Viewers::Resolved(vec![1, 2]);
        assert_eq!(suppression(Some(&bob_and_owner), &s), Some(SuppressReason::SourceReachableOnlyThroughGrant(7)));
        let s = [src(7, true, MemberSet::Only(&m[..]), false)];
        assert_eq!(suppression(Some(&bob_and_owner), &s), Some(SuppressReason::SourceNotAdmissible(7)));
        // The owner-only container reaches every source of its owner through the origin audience.
        assert_eq!(suppression(Some(&Viewers::Resolved(vec![1])), &s), None);
        assert_eq!(suppression::<u32, u32>(None, &s), None);
    }

    #[test]
    fn partition_needs_one_shared_audience() {
        let a = [1, 2];
        let b = [1, 3];
        assert_eq!(
            partition_audience(&[MemberSet::Only(&a[..]), MemberSet::Only(&a[..])]),
            Some(MemberSet::Only(&a[..]))
        );
        assert_eq!(partition_audience(&[MemberSet::Only(&a[..]), MemberSet::Only(&b[..])]), None);
        assert_eq!(partition_audience::<u32>(&[]), None);
    }

    #[test]
    fn intersection_with_public_source_keeps_the_other() {
        let a = [1, 2];
        assert_eq!(
            intersection_audience(&[MemberSet::Everyone, MemberSet::Only(&a[..])]),
            OwnedMembers::Only(vec![1, 2])
        );
    }

    #[test]
    fn suppress_reasons_have_stable_codes_and_name_their_source() {
        let cases = [
            (SuppressReason::SourceNotCurrent(1), "source_not_current"),
            (SuppressReason::SourceReachableOnlyThroughGrant(2), "source_reachable_only_through_grant"),
            (SuppressReason::SourceNotAdmissible(3), "source_not_admissible"),
        ];
        for (n, (r, code)) in cases.iter().enumerate() {
            assert_eq!(r.code(), *code);
            assert_eq!(*r.source(), n as u32 + 1);
        }
    }
}
