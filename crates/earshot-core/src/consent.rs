//! Data-subject consent, SPEC §6.3: an item's subjects, whose consent a grant needs, and whether
//! a grant is effective given the consents it holds.
//!
//! A grant (or declassification) widens who hears about an item's subjects, so it is effective
//! only once every subject other than its issuer has consented. Grants are issued on behalf of
//! the item's owner (SPEC §1.6), so the owner is the issuing participant: every subject other
//! than the owner must consent. The origin audience is unaffected. Generic over the id type,
//! like the rest of the core.

/// At most this many subjects per item (a derived item's union included).
pub const MAX_SUBJECTS: usize = 32;

/// The subjects whose consent a grant on an item needs: the item's subjects without the owner,
/// sorted and deduplicated. Empty: the grant is effective at once, as any grant without subjects.
pub fn required<P: Ord + Clone>(subjects: &[P], owner: &P) -> Vec<P> {
    let mut r: Vec<P> = subjects.iter().filter(|s| *s != owner).cloned().collect();
    r.sort();
    r.dedup();
    r
}

/// A derived item's subjects: the union of its sources' subjects and those it names, sorted and
/// deduplicated (SPEC §6.3).
pub fn derived_subjects<'a, P: Ord + Clone + 'a>(sources: impl IntoIterator<Item = &'a [P]>, named: &[P]) -> Vec<P> {
    let mut all: Vec<P> = named.to_vec();
    for s in sources {
        all.extend(s.iter().cloned());
    }
    all.sort();
    all.dedup();
    all
}

/// True when every required subject is among those consenting now (both sorted): the grant may
/// admit. A grant with no required subject is always effective.
pub fn is_effective<P: Ord>(required: &[P], consenting: &[P]) -> bool {
    required.iter().all(|r| consenting.binary_search(r).is_ok())
}

/// The subjects still missing (required, not consenting now), in order.
pub fn missing<'a, P: Ord>(required: &'a [P], consenting: &'a [P]) -> impl Iterator<Item = &'a P> + 'a {
    required.iter().filter(|r| consenting.binary_search(r).is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_never_needs_to_consent() {
        assert_eq!(required(&[3, 1, 2, 1], &1), vec![2, 3]);
        assert!(required(&[1], &1).is_empty());
        assert!(required::<i32>(&[], &1).is_empty());
    }

    #[test]
    fn derived_subjects_are_the_union() {
        let a = [1, 3];
        let b = [2, 3];
        assert_eq!(derived_subjects([&a[..], &b[..]], &[5]), vec![1, 2, 3, 5]);
        assert!(derived_subjects::<i32>([], &[]).is_empty());
    }

    #[test]
    fn effective_only_when_every_required_subject_consents() {
        assert!(is_effective::<i32>(&[], &[]));
        assert!(is_effective(&[2, 3], &[2, 3]));
        assert!(is_effective(&[2, 3], &[1, 2, 3]));
        assert!(!is_effective(&[2, 3], &[2]));
        assert!(!is_effective(&[2, 3], &[]));
        assert_eq!(missing(&[2, 3, 4], &[3]).copied().collect::<Vec<_>>(), vec![2, 4]);
    }
}
