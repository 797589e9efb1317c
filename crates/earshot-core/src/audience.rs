//! Audiences (SPEC §1.3): the three kinds, their canonical digests, containment and intersection.

use crate::viewers::Viewers;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// The three kinds of audience. `public` is the only one containing the anonymous participant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AudienceKind {
    Public,
    OwnerPrivate,
    Shared,
}

impl AudienceKind {
    /// The kind of a resolved member set: one member is owner-private, more is shared.
    ///
    /// Canonicalising `{o}` to `owner_private` means an item recorded in an owner-only container
    /// and an item written as `owner_private` share one audience record.
    pub fn of_members(count: usize) -> Self {
        if count <= 1 {
            AudienceKind::OwnerPrivate
        } else {
            AudienceKind::Shared
        }
    }

    fn tag(self) -> &'static str {
        match self {
            AudienceKind::Public => "public",
            AudienceKind::OwnerPrivate => "owner_private",
            AudienceKind::Shared => "shared",
        }
    }
}

/// SHA-256 over the audience's kind and its sorted, deduplicated member ids.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AudienceDigest(pub [u8; 32]);

impl AudienceDigest {
    /// Digest of a canonical audience. `sorted_members` must be sorted and deduplicated; the
    /// public audience has no members.
    pub fn compute<S: AsRef<str>>(kind: AudienceKind, sorted_members: &[S]) -> Self {
        let mut h = Sha256::new();
        h.update(b"earshot.audience.v1\0");
        h.update(kind.tag().as_bytes());
        h.update([0u8]);
        h.update((sorted_members.len() as u64).to_be_bytes());
        for m in sorted_members {
            let m = m.as_ref().as_bytes();
            h.update((m.len() as u32).to_be_bytes());
            h.update(m);
        }
        AudienceDigest(h.finalize().into())
    }

    /// Lowercase hex, the digest's external spelling.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses the external spelling; `None` for anything that is not 64 hex digits.
    pub fn from_hex(s: &str) -> Option<Self> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out).ok()?;
        Some(AudienceDigest(out))
    }
}

impl fmt::Debug for AudienceDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AudienceDigest({})", &self.to_hex()[..12])
    }
}

impl fmt::Display for AudienceDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// The members of an audience, borrowed for a decision: `Everyone` for public, else a sorted list.
#[derive(Debug, PartialEq, Eq)]
pub enum MemberSet<'a, P> {
    Everyone,
    Only(&'a [P]),
}

// Manual impls: a borrowed member set is copyable whatever `P` is.
impl<P> Clone for MemberSet<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for MemberSet<'_, P> {}

impl<P: Ord> MemberSet<'_, P> {
    /// `V ⊆ A`. `U` is contained only in the public audience.
    pub fn contains_all(&self, viewers: &Viewers<P>) -> bool {
        match (self, viewers) {
            (MemberSet::Everyone, _) => true,
            (MemberSet::Only(_), Viewers::Unresolved) => false,
            (MemberSet::Only(members), Viewers::Resolved(v)) => {
                v.len() <= members.len() && v.iter().all(|p| members.binary_search(p).is_ok())
            }
        }
    }

    /// Number of members, with `Everyone` larger than any finite audience.
    pub fn size(&self) -> usize {
        match self {
            MemberSet::Everyone => usize::MAX,
            MemberSet::Only(m) => m.len(),
        }
    }
}

/// An owned audience membership, the result of an intersection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedMembers<P> {
    Everyone,
    Only(Vec<P>),
}

/// `∩ Aud(s)` over the sources of an intersection derivation (SPEC §1.5).
///
/// Public is the identity of intersection, so the result is public only when every source is.
/// Returns `Everyone` for an empty input, which callers must refuse (a derivation needs sources).
pub fn intersect<P: Ord + Clone>(sets: &[MemberSet<'_, P>]) -> OwnedMembers<P> {
    let mut acc: Option<Vec<P>> = None;
    for set in sets {
        let MemberSet::Only(members) = set else { continue };
        acc = Some(match acc {
            None => members.to_vec(),
            Some(prev) => prev.into_iter().filter(|p| members.binary_search(p).is_ok()).collect(),
        });
    }
    match acc {
        None => OwnedMembers::Everyone,
        Some(v) => OwnedMembers::Only(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_canonical_and_separates_kind_count_and_members() {
        let a = AudienceDigest::compute(AudienceKind::Shared, &["alice", "bob"]);
        assert_eq!(a, AudienceDigest::compute(AudienceKind::Shared, &["alice".to_string(), "bob".to_string()]));
        assert_ne!(a, AudienceDigest::compute(AudienceKind::Shared, &["alice", "bobx"]));
        assert_ne!(a, AudienceDigest::compute(AudienceKind::Shared, &["alice"]));
        assert_ne!(a, AudienceDigest::compute(AudienceKind::Shared, &["aliceb", "ob"]));
        assert_ne!(
            AudienceDigest::compute(AudienceKind::OwnerPrivate, &["alice"]),
            AudienceDigest::compute(AudienceKind::Shared, &["alice"])
        );
        assert_eq!(AudienceDigest::from_hex(&a.to_hex()), Some(a));
        assert_eq!(AudienceDigest::from_hex("zz"), None);
    }

    #[test]
    fn containment_is_subset_and_unresolved_fits_only_public() {
        let members = [1, 2, 3];
        let aud = MemberSet::Only(&members[..]);
        assert!(aud.contains_all(&Viewers::Resolved(vec![1, 3])));
        assert!(aud.contains_all(&Viewers::Resolved(vec![1, 2, 3])));
        assert!(!aud.contains_all(&Viewers::Resolved(vec![1, 4])));
        assert!(!aud.contains_all(&Viewers::Unresolved));
        assert!(MemberSet::<i32>::Everyone.contains_all(&Viewers::Unresolved));
    }

    #[test]
    fn intersection_treats_public_as_identity() {
        let a = [1, 2, 3];
        let b = [1, 3, 4];
        assert_eq!(
            intersect(&[MemberSet::Only(&a[..]), MemberSet::Everyone, MemberSet::Only(&b[..])]),
            OwnedMembers::Only(vec![1, 3])
        );
        assert_eq!(intersect::<i32>(&[MemberSet::Everyone, MemberSet::Everyone]), OwnedMembers::Everyone);
    }

    #[test]
    fn one_member_is_owner_private_and_more_is_shared() {
        assert_eq!(AudienceKind::of_members(0), AudienceKind::OwnerPrivate);
        assert_eq!(AudienceKind::of_members(1), AudienceKind::OwnerPrivate);
        assert_eq!(AudienceKind::of_members(2), AudienceKind::Shared);
        assert_eq!(AudienceKind::of_members(9), AudienceKind::Shared);
    }

    #[test]
    fn digests_print_as_hex() {
        let d = AudienceDigest::compute(AudienceKind::Public, &[] as &[&str]);
        let hex = d.to_hex();
        assert_eq!(hex.len(), 64);
        assert_eq!(format!("{d}"), hex);
        assert_eq!(format!("{d:?}"), format!("AudienceDigest({})", &hex[..12]));
    }
}
