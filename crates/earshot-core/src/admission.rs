//! Admission, SPEC §1.9: `Adm(C,t) = { m : Current(m,t) and ∃ A ∈ AuthSets(m,t) : V(C) ⊆ A }`.
//!
//! The store gathers an item's currentness, its origin audience and its live grants at one
//! snapshot and hands them here; this module decides, picks the basis and names the reason.

use crate::audience::{AudienceDigest, MemberSet};
use crate::lifecycle::{Currentness, State};
use crate::viewers::Viewers;
use serde::{Deserialize, Serialize};

/// The closed set of decision reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    AdmittedOrigin,
    AdmittedGrant,
    AdmittedPublic,
    DeniedNotInAudience,
    DeniedUnresolvedViewers,
    DeniedNotCurrent,
    DeniedUnknownItem,
    /// Only grants still waiting for (or withdrawn from) a subject's consent would contain the
    /// viewers (SPEC §6.3).
    DeniedConsentPending,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::AdmittedOrigin => "admitted_origin",
            Reason::AdmittedGrant => "admitted_grant",
            Reason::AdmittedPublic => "admitted_public",
            Reason::DeniedNotInAudience => "denied_not_in_audience",
            Reason::DeniedUnresolvedViewers => "denied_unresolved_viewers",
            Reason::DeniedNotCurrent => "denied_not_current",
            Reason::DeniedUnknownItem => "denied_unknown_item",
            Reason::DeniedConsentPending => "denied_consent_pending",
        }
    }
}

/// Which authorized audience admitted the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis<G> {
    Origin,
    Grant(G),
}

/// One member of `AuthSets(m, t)`: the origin audience (`grant: None`) or one live grant.
#[derive(Debug)]
pub struct AuthSet<'a, P, G> {
    pub grant: Option<G>,
    pub members: MemberSet<'a, P>,
    pub digest: &'a AudienceDigest,
    /// A grant still missing a subject's consent (SPEC §6.3, see [`crate::consent`]): it admits
    /// nothing and is never a basis; it only names the denial `denied_consent_pending` when it
    /// alone would have contained the viewers. Always `false` for the origin audience.
    pub pending: bool,
}

impl<P, G: Copy> Clone for AuthSet<'_, P, G> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P, G: Copy> Copy for AuthSet<'_, P, G> {}

/// The answer for one item and one container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision<I, G> {
    pub admitted: bool,
    pub reason: Reason,
    pub basis: Option<Basis<G>>,
    /// For `denied_not_current`: the blocking state and the ancestor holding it (`None`: the item).
    pub blocked_by: Option<(State, Option<I>)>,
}

impl<I, G> Decision<I, G> {
    fn deny(reason: Reason) -> Self {
        Decision { admitted: false, reason, basis: None, blocked_by: None }
    }
}

/// True when a grant still counts at snapshot time `now` (milliseconds since the epoch):
/// not revoked, and either without expiry or expiring strictly after `now`.
pub fn grant_is_live(revoked: bool, expires_at_ms: Option<i64>, now_ms: i64) -> bool {
    !revoked && expires_at_ms.is_none_or(|e| now_ms < e)
}

/// Decides admission of one item.
///
/// `origin` is `Aud(m)`; `grants` are the item's grants that are live at the snapshot (see
/// [`grant_is_live`]). Each authorized audience is tested **separately**: nothing here ever forms
/// the union of two audiences. The basis is deterministic: the origin audience if it contains
/// `V`, else the smallest admitting grant audience, ties broken by digest, among effective grants
/// only. A pending grant (SPEC §6.3) admits nothing; when only pending grants would contain `V`,
/// the denial is `denied_consent_pending`.
pub fn decide<'a, P: Ord, G: Copy, I>(
    viewers: &Viewers<P>,
    currentness: Currentness<I>,
    origin: AuthSet<'a, P, G>,
    grants: impl IntoIterator<Item = AuthSet<'a, P, G>>,
) -> Decision<I, G> {
    if let Currentness::NotCurrent { state, ancestor } = currentness {
        let mut d = Decision::deny(Reason::DeniedNotCurrent);
        d.blocked_by = Some((state, ancestor));
        return d;
    }
    if origin.members.contains_all(viewers) {
        let reason = match origin.members {
            MemberSet::Everyone => Reason::AdmittedPublic,
            MemberSet::Only(_) => Reason::AdmittedOrigin,
        };
        return Decision { admitted: true, reason, basis: Some(Basis::Origin), blocked_by: None };
    }
    let mut best: Option<AuthSet<'a, P, G>> = None;
    let mut pending = false;
    for g in grants {
        if g.grant.is_none() || !g.members.contains_all(viewers) {
            continue;
        }
        if g.pending {
            pending = true;
            continue;
        }
        let better = match &best {
            None => true,
            Some(b) => (g.members.size(), g.digest) < (b.members.size(), b.digest),
        };
        if better {
            best = Some(g);
        }
    }
    match best.and_then(|b| b.grant) {
        Some(grant) => Decision {
            admitted: true,
            reason: Reason::AdmittedGrant,
            basis: Some(Basis::Grant(grant)),
            blocked_by: None,
        },
        None if viewers == &Viewers::Unresolved => Decision::deny(Reason::DeniedUnresolvedViewers),
        None if pending => Decision::deny(Reason::DeniedConsentPending),
        None => Decision::deny(Reason::DeniedNotInAudience),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audience::AudienceKind;

    fn dg(members: &[&str]) -> AudienceDigest {
        AudienceDigest::compute(AudienceKind::Shared, members)
    }

    #[test]
    fn origin_wins_then_smallest_grant() {
        let (o, b, c) = (1, 2, 3);
        let origin_m = [o];
        let g1 = [o, b, c];
        let g2 = [o, b];
        let (d0, d1, d2) = (dg(&["o"]), dg(&["o", "b", "c"]), dg(&["o", "b"]));
        let origin = AuthSet { grant: None, members: MemberSet::Only(&origin_m[..]), digest: &d0, pending: false };
        let grants = [
            AuthSet { grant: Some(10), members: MemberSet::Only(&g1[..]), digest: &d1, pending: false },
            AuthSet { grant: Some(20), members: MemberSet::Only(&g2[..]), digest: &d2, pending: false },
        ];
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![o, b]), Currentness::Current, origin, grants);
        assert_eq!((d.admitted, d.reason, d.basis), (true, Reason::AdmittedGrant, Some(Basis::Grant(20))));
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![o]), Currentness::Current, origin, grants);
        assert_eq!((d.reason, d.basis), (Reason::AdmittedOrigin, Some(Basis::Origin)));
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![o, 4]), Currentness::Current, origin, grants);
        assert_eq!((d.admitted, d.reason), (false, Reason::DeniedNotInAudience));
        let d: Decision<u32, i32> = decide(&Viewers::Unresolved, Currentness::Current, origin, grants);
        assert_eq!((d.admitted, d.reason), (false, Reason::DeniedUnresolvedViewers));
    }

    #[test]
    fn grants_are_never_unioned() {
        let ob = [1, 2];
        let oc = [1, 3];
        let only_o = [1];
        let (d0, d1, d2) = (dg(&["o"]), dg(&["o", "b"]), dg(&["o", "c"]));
        let origin = AuthSet { grant: None, members: MemberSet::Only(&only_o[..]), digest: &d0, pending: false };
        let grants = [
            AuthSet { grant: Some(1), members: MemberSet::Only(&ob[..]), digest: &d1, pending: false },
            AuthSet { grant: Some(2), members: MemberSet::Only(&oc[..]), digest: &d2, pending: false },
        ];
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![1, 2, 3]), Currentness::Current, origin, grants);
        assert!(!d.admitted);
    }

    #[test]
    fn not_current_denies_before_anything_else() {
        let d0 = dg(&[]);
        let origin = AuthSet::<i32, i32> { grant: None, members: MemberSet::Everyone, digest: &d0, pending: false };
        let d: Decision<u32, i32> = decide(
            &Viewers::Unresolved,
            Currentness::NotCurrent { state: State::Frozen, ancestor: Some(7) },
            origin,
            [],
        );
        assert_eq!(
            (d.admitted, d.reason, d.blocked_by),
            (false, Reason::DeniedNotCurrent, Some((State::Frozen, Some(7))))
        );
        let d: Decision<u32, i32> = decide(&Viewers::Unresolved, Currentness::Current, origin, []);
        assert_eq!((d.admitted, d.reason), (true, Reason::AdmittedPublic));
    }

    #[test]
    fn grant_liveness_is_strict_at_expiry() {
        assert!(grant_is_live(false, None, 5));
        assert!(grant_is_live(false, Some(6), 5));
        assert!(!grant_is_live(false, Some(5), 5));
        assert!(!grant_is_live(true, None, 5));
    }

    #[test]
    fn reason_codes_are_the_wire_spellings() {
        let all = [
            (Reason::AdmittedOrigin, "admitted_origin"),
            (Reason::AdmittedGrant, "admitted_grant"),
            (Reason::AdmittedPublic, "admitted_public"),
            (Reason::DeniedNotInAudience, "denied_not_in_audience"),
            (Reason::DeniedUnresolvedViewers, "denied_unresolved_viewers"),
            (Reason::DeniedNotCurrent, "denied_not_current"),
            (Reason::DeniedUnknownItem, "denied_unknown_item"),
            (Reason::DeniedConsentPending, "denied_consent_pending"),
        ];
        for (r, s) in all {
            assert_eq!(r.as_str(), s);
        }
    }

    #[test]
    fn equal_grant_audiences_keep_the_first_given() {
        // Two grants with the very same audience tie on size and digest: the first one given
        // (the store gives them in creation order) stays the basis.
        let only_o = [1];
        let ob = [1, 2];
        let (d0, d1) = (dg(&["o"]), dg(&["o", "b"]));
        let origin = AuthSet { grant: None, members: MemberSet::Only(&only_o[..]), digest: &d0, pending: false };
        let grants = [
            AuthSet { grant: Some(7), members: MemberSet::Only(&ob[..]), digest: &d1, pending: false },
            AuthSet { grant: Some(8), members: MemberSet::Only(&ob[..]), digest: &d1, pending: false },
        ];
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![1, 2]), Currentness::Current, origin, grants);
        assert_eq!(d.basis, Some(Basis::Grant(7)));
    }

    #[test]
    fn a_pending_grant_admits_nothing_and_names_the_denial() {
        let only_o = [1];
        let ob = [1, 2];
        let obc = [1, 2, 3];
        let (d0, d1, d2) = (dg(&["o"]), dg(&["o", "b"]), dg(&["o", "b", "c"]));
        let origin = AuthSet { grant: None, members: MemberSet::Only(&only_o[..]), digest: &d0, pending: false };
        let pending_ob = AuthSet { grant: Some(1), members: MemberSet::Only(&ob[..]), digest: &d1, pending: true };
        let effective_obc = AuthSet { grant: Some(2), members: MemberSet::Only(&obc[..]), digest: &d2, pending: false };
        let v = Viewers::Resolved(vec![1, 2]);
        // Only the pending grant contains {o, b}: denied, and the reason says why.
        let d: Decision<u32, i32> = decide(&v, Currentness::Current, origin, [pending_ob]);
        assert_eq!((d.admitted, d.reason, d.basis), (false, Reason::DeniedConsentPending, None));
        // An effective grant admits, and the basis is chosen among effective grants only, even
        // though the pending one is smaller.
        let d: Decision<u32, i32> = decide(&v, Currentness::Current, origin, [pending_ob, effective_obc]);
        assert_eq!((d.admitted, d.reason, d.basis), (true, Reason::AdmittedGrant, Some(Basis::Grant(2))));
        // A pending grant that would not contain the viewers changes nothing.
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![1, 4]), Currentness::Current, origin, [pending_ob]);
        assert_eq!(d.reason, Reason::DeniedNotInAudience);
        // The origin audience is unaffected by consent.
        let d: Decision<u32, i32> = decide(&Viewers::Resolved(vec![1]), Currentness::Current, origin, [pending_ob]);
        assert_eq!(d.reason, Reason::AdmittedOrigin);
        // Not current still comes first.
        let nc = Currentness::NotCurrent { state: State::Frozen, ancestor: None };
        let d: Decision<u32, i32> = decide(&v, nc, origin, [pending_ob]);
        assert_eq!(d.reason, Reason::DeniedNotCurrent);
    }
}
