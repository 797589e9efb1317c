//! Resolved viewer sets of a container (SPEC §1.2): either a finite set containing the owner, or `U`.

use serde::{Deserialize, Serialize};

/// How much the transport's report of who is present can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    #[default]
    Fresh,
    Stale,
    LowConfidence,
    Conflicting,
}

/// `V(C)`: the viewers of a container after resolution.
///
/// `Resolved` holds a sorted, deduplicated member list that always includes the acting owner;
/// `Unresolved` stands for `U`, everyone including the anonymous participant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewers<P> {
    Resolved(Vec<P>),
    Unresolved,
}

impl<P: Ord + Clone> Viewers<P> {
    /// Builds `V(C)` from resolved ids: sorts, deduplicates and adds the owner (SPEC §1.2).
    ///
    /// `all_resolved` is false when any identity or id failed to resolve; a quality other than
    /// `fresh` also makes the container unresolved. Either way the result is `U`.
    pub fn from_resolution(
        owner: P,
        resolved: impl IntoIterator<Item = P>,
        all_resolved: bool,
        quality: Quality,
    ) -> Self {
        if !all_resolved || quality != Quality::Fresh {
            return Viewers::Unresolved;
        }
        let mut members: Vec<P> = resolved.into_iter().collect();
        members.push(owner);
        members.sort();
        members.dedup();
        Viewers::Resolved(members)
    }

    /// True for `Resolved(vec![owner])`: the owner-only container.
    pub fn is_owner_only(&self, owner: &P) -> bool {
        matches!(self, Viewers::Resolved(v) if v.len() == 1 && v.first() == Some(owner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_is_always_added_and_members_are_canonical() {
        let v = Viewers::from_resolution(1, [3, 2, 3], true, Quality::Fresh);
        assert_eq!(v, Viewers::Resolved(vec![1, 2, 3]));
        assert!(Viewers::from_resolution(1, [], true, Quality::Fresh).is_owner_only(&1));
    }

    #[test]
    fn anything_unresolved_or_not_fresh_is_everyone() {
        assert_eq!(Viewers::from_resolution(1, [2], false, Quality::Fresh), Viewers::Unresolved);
        for q in [Quality::Stale, Quality::LowConfidence, Quality::Conflicting] {
            assert_eq!(Viewers::from_resolution(1, [2], true, q), Viewers::Unresolved);
        }
    }

    #[test]
    fn only_the_owner_alone_is_owner_only() {
        assert!(Viewers::Resolved(vec![1]).is_owner_only(&1));
        assert!(!Viewers::Resolved(vec![2]).is_owner_only(&1));
        assert!(!Viewers::Resolved(vec![1, 2]).is_owner_only(&1));
        assert!(!Viewers::<u32>::Unresolved.is_owner_only(&1));
    }
}
