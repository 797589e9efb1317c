//! Capabilities and constraints (SPEC §2.3–2.5): what one link of authority allows, the rule that
//! delegation only narrows, whether a link is valid at the point of use, and the reason codes of
//! `authorize`.

use crate::actions::Actions;
use crate::condition::{Budget, Condition, ConditionFailure, RequestContext};
use crate::path::{Path, PathPattern};

/// Static and dynamic constraints of a relation grant or capability.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constraints {
    /// Valid from this instant (ms since the epoch), inclusive.
    pub not_before_ms: Option<i64>,
    /// Valid until this instant, exclusive: at `not_after` the link is already expired.
    pub not_after_ms: Option<i64>,
    /// Uses granted at issue; `None` is unlimited. What is left is state, not a constraint.
    pub uses: Option<u32>,
    pub condition: Option<Condition>,
}

/// The authority one capability carries, as delegation compares it.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a, D> {
    pub device: D,
    pub paths: &'a [PathPattern],
    pub actions: &'a Actions,
    pub constraints: &'a Constraints,
    /// Uses left now (for a parent) or asked for (for a child); `None` is unlimited.
    pub uses_left: Option<u32>,
}

/// A dimension in which a requested delegation is wider than its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Device,
    Paths,
    Actions,
    NotBefore,
    NotAfter,
    Uses,
}

/// One widening, with what exactly widened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Widening {
    pub dimension: Dimension,
    pub detail: String,
}

/// Every dimension in which `child` is not within `parent`; empty means the delegation narrows
/// (or keeps) the parent's authority. Conditions never widen: a child's condition is conjoined
/// with every ancestor's, because each link's condition is evaluated at the point of use.
pub fn widenings<D: PartialEq>(child: &Scope<'_, D>, parent: &Scope<'_, D>) -> Vec<Widening> {
    let mut out = Vec::new();
    if child.device != parent.device {
        out.push(Widening {
            dimension: Dimension::Device,
            detail: "a delegation must name its parent's device".into(),
        });
    }
    for p in child.paths {
        if !parent.paths.iter().any(|q| p.within(q)) {
            out.push(Widening {
                dimension: Dimension::Paths,
                detail: format!("`{p}` is not within any of the parent's paths"),
            });
        }
    }
    for a in child.actions.iter() {
        if !parent.actions.contains(a) {
            out.push(Widening {
                dimension: Dimension::Actions,
                detail: format!("action `{a}` is not held by the parent"),
            });
        }
    }
    let (c, q) = (child.constraints, parent.constraints);
    if let Some(pnb) = q.not_before_ms {
        if c.not_before_ms.is_none_or(|cnb| cnb < pnb) {
            out.push(Widening {
                dimension: Dimension::NotBefore,
                detail: "the window must not start before the parent's".into(),
            });
        }
    }
    if let Some(pna) = q.not_after_ms {
        if c.not_after_ms.is_none_or(|cna| cna > pna) {
            out.push(Widening {
                dimension: Dimension::NotAfter,
                detail: "the window must not end after the parent's".into(),
            });
        }
    }
    if let Some(left) = parent.uses_left {
        if child.uses_left.is_none_or(|u| u > left) {
            out.push(Widening {
                dimension: Dimension::Uses,
                detail: format!("the parent has {left} uses left; a delegation may carry at most that many"),
            });
        }
    }
    out
}

/// Why one link (an edge or a capability) is not valid at the point of use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkFailure {
    Revoked,
    NotYetValid,
    Expired,
    UsesExhausted,
    Condition(ConditionFailure),
}

impl LinkFailure {
    /// The denial reason this failure reports.
    pub fn reason(&self) -> AuthReason {
        match self {
            LinkFailure::Revoked => AuthReason::DeniedRevoked,
            LinkFailure::NotYetValid => AuthReason::DeniedNotYetValid,
            LinkFailure::Expired => AuthReason::DeniedExpired,
            LinkFailure::UsesExhausted => AuthReason::DeniedUsesExhausted,
            LinkFailure::Condition(ConditionFailure::False(_)) => AuthReason::DeniedConditionFalse,
            LinkFailure::Condition(_) => AuthReason::DeniedConditionError,
        }
    }
}

/// Whether a link holds at `now_ms` with `uses_left` against the request context. Checks are
/// ordered cheapest first, so a revoked or expired link never evaluates its condition. A
/// condition spends from the decision's `budget` (SPEC §2.6), shared by all its links.
pub fn link_holds(
    revoked: bool,
    c: &Constraints,
    uses_left: Option<u32>,
    now_ms: i64,
    ctx: &RequestContext,
    budget: &Budget,
) -> Result<(), LinkFailure> {
    if revoked {
        return Err(LinkFailure::Revoked);
    }
    if c.not_before_ms.is_some_and(|nb| now_ms < nb) {
        return Err(LinkFailure::NotYetValid);
    }
    if c.not_after_ms.is_some_and(|na| now_ms >= na) {
        return Err(LinkFailure::Expired);
    }
    if uses_left == Some(0) {
        return Err(LinkFailure::UsesExhausted);
    }
    if let Some(cond) = &c.condition {
        cond.evaluate_within(ctx, budget).map_err(LinkFailure::Condition)?;
    }
    Ok(())
}

/// The part of a link's constraints that needs no request context: its window, and whether it
/// has a condition. Small and `Copy`, so an index record carries it inline and a decision
/// checks an unconditioned link without reading its [`Constraints`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// `not_before`, or `i64::MIN` when there is none (every instant is at or after it).
    pub not_before_ms: i64,
    /// `not_after`, or `None`.
    pub not_after_ms: Option<i64>,
    pub conditioned: bool,
}

impl Window {
    pub fn of(c: &Constraints) -> Self {
        Window {
            not_before_ms: c.not_before_ms.unwrap_or(i64::MIN),
            not_after_ms: c.not_after_ms,
            conditioned: c.condition.is_some(),
        }
    }

    /// [`link_holds`] for a link without a condition: the same checks in the same order.
    /// Meaningless for a conditioned link (`conditioned`), which must go through
    /// [`link_holds`] with its constraints.
    pub fn holds(&self, revoked: bool, uses_left: Option<u32>, now_ms: i64) -> Result<(), LinkFailure> {
        if revoked {
            return Err(LinkFailure::Revoked);
        }
        if now_ms < self.not_before_ms {
            return Err(LinkFailure::NotYetValid);
        }
        if self.not_after_ms.is_some_and(|na| now_ms >= na) {
            return Err(LinkFailure::Expired);
        }
        if uses_left == Some(0) {
            return Err(LinkFailure::UsesExhausted);
        }
        Ok(())
    }
}

/// Whether a capability's own scope covers `(path, action)` (validity is separate). The
/// action is compared first: it is inline in the record.
pub fn covers(paths: &[PathPattern], actions: &Actions, path: &Path<'_>, action: &str) -> bool {
    actions.contains(action) && paths.iter().any(|p| p.matches(path))
}

/// The closed set of `authorize` reason codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthReason {
    /// The principal owns the device.
    AllowedOwner,
    /// A valid relation grant from the device's owner opens the path.
    AllowedRelation,
    /// A valid capability chain covers the path.
    AllowedCapability,
    DeniedUnknownPrincipal,
    DeniedUnknownDevice,
    /// No edge or capability covers the path and action.
    DeniedNoAuthority,
    /// The only covering authority (or an ancestor) is revoked.
    DeniedRevoked,
    DeniedNotYetValid,
    DeniedExpired,
    DeniedUsesExhausted,
    DeniedConditionFalse,
    /// A condition referenced a variable the context lacks, failed, or was not a boolean.
    DeniedConditionError,
    /// The use would complete an aggregation conflict of the schema (SPEC §6.4): the principal
    /// used a slice of another member of the conflict on the same grantor's devices within its
    /// window. Decided after the authority, which is valid.
    DeniedAggregation,
}

impl AuthReason {
    pub fn code(self) -> &'static str {
        match self {
            AuthReason::AllowedOwner => "allowed_owner",
            AuthReason::AllowedRelation => "allowed_relation",
            AuthReason::AllowedCapability => "allowed_capability",
            AuthReason::DeniedUnknownPrincipal => "denied_unknown_principal",
            AuthReason::DeniedUnknownDevice => "denied_unknown_device",
            AuthReason::DeniedNoAuthority => "denied_no_authority",
            AuthReason::DeniedRevoked => "denied_revoked",
            AuthReason::DeniedNotYetValid => "denied_not_yet_valid",
            AuthReason::DeniedExpired => "denied_expired",
            AuthReason::DeniedUsesExhausted => "denied_uses_exhausted",
            AuthReason::DeniedConditionFalse => "denied_condition_false",
            AuthReason::DeniedConditionError => "denied_condition_error",
            AuthReason::DeniedAggregation => "denied_aggregation",
        }
    }

    pub fn allowed(self) -> bool {
        matches!(self, AuthReason::AllowedOwner | AuthReason::AllowedRelation | AuthReason::AllowedCapability)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pats(ps: &[&str]) -> Vec<PathPattern> {
        ps.iter().map(|p| PathPattern::parse(p).unwrap()).collect()
    }

    fn acts(a: &[&str]) -> Actions {
        Actions::new(a).unwrap()
    }

    #[test]
    fn narrowing_in_every_dimension() {
        let (pp, pa) = (pats(&["calendar/next-start"]), acts(&["read"]));
        let pc = Constraints { not_before_ms: Some(10), not_after_ms: Some(100), uses: Some(5), condition: None };
        let parent = Scope { device: 1, paths: &pp, actions: &pa, constraints: &pc, uses_left: Some(3) };
        let ok_c = Constraints { not_before_ms: Some(10), not_after_ms: Some(50), uses: Some(3), condition: None };
        let child = Scope { device: 1, paths: &pp, actions: &pa, constraints: &ok_c, uses_left: Some(3) };
        assert!(widenings(&child, &parent).is_empty());

        let wide = pats(&["calendar/**"]);
        let w = widenings(&Scope { paths: &wide, ..child }, &parent);
        assert_eq!(w.iter().map(|w| w.dimension).collect::<Vec<_>>(), vec![Dimension::Paths]);
        let write = acts(&["read", "write"]);
        assert_eq!(widenings(&Scope { actions: &write, ..child }, &parent)[0].dimension, Dimension::Actions);
        assert_eq!(widenings(&Scope { device: 2, ..child }, &parent)[0].dimension, Dimension::Device);
        assert_eq!(widenings(&Scope { uses_left: Some(4), ..child }, &parent)[0].dimension, Dimension::Uses);
        assert_eq!(widenings(&Scope { uses_left: None, ..child }, &parent)[0].dimension, Dimension::Uses);
        let early = Constraints { not_before_ms: Some(9), ..ok_c.clone() };
        assert_eq!(widenings(&Scope { constraints: &early, ..child }, &parent)[0].dimension, Dimension::NotBefore);
        let open = Constraints { not_before_ms: None, ..ok_c.clone() };
        assert_eq!(widenings(&Scope { constraints: &open, ..child }, &parent)[0].dimension, Dimension::NotBefore);
        let late = Constraints { not_after_ms: Some(101), ..ok_c.clone() };
        assert_eq!(widenings(&Scope { constraints: &late, ..child }, &parent)[0].dimension, Dimension::NotAfter);
        let endless = Constraints { not_after_ms: None, ..ok_c.clone() };
        assert_eq!(widenings(&Scope { constraints: &endless, ..child }, &parent)[0].dimension, Dimension::NotAfter);
    }

    #[test]
    fn windows_are_half_open_and_uses_run_out() {
        let c = Constraints { not_before_ms: Some(10), not_after_ms: Some(20), uses: Some(1), condition: None };
        let ctx = RequestContext::new();
        assert_eq!(link_holds(false, &c, Some(1), 9, &ctx, &Budget::per_decision()), Err(LinkFailure::NotYetValid));
        assert_eq!(link_holds(false, &c, Some(1), 10, &ctx, &Budget::per_decision()), Ok(()));
        assert_eq!(link_holds(false, &c, Some(1), 19, &ctx, &Budget::per_decision()), Ok(()));
        assert_eq!(link_holds(false, &c, Some(1), 20, &ctx, &Budget::per_decision()), Err(LinkFailure::Expired));
        assert_eq!(link_holds(false, &c, Some(0), 15, &ctx, &Budget::per_decision()), Err(LinkFailure::UsesExhausted));
        assert_eq!(link_holds(true, &c, Some(1), 15, &ctx, &Budget::per_decision()), Err(LinkFailure::Revoked));
    }

    #[test]
    fn conditions_are_checked_last_and_fail_closed() {
        let c = Constraints { condition: Some(Condition::compile("ok").unwrap()), ..Constraints::default() };
        assert_eq!(
            link_holds(false, &c, None, 0, &RequestContext::new(), &Budget::per_decision()).map_err(|e| e.reason()),
            Err(AuthReason::DeniedConditionError)
        );
        let mut ctx = RequestContext::new();
        ctx.insert("ok".into(), crate::condition::ContextValue::Bool(false));
        assert_eq!(
            link_holds(false, &c, None, 0, &ctx, &Budget::per_decision()).map_err(|e| e.reason()),
            Err(AuthReason::DeniedConditionFalse)
        );
        ctx.insert("ok".into(), crate::condition::ContextValue::Bool(true));
        assert_eq!(link_holds(false, &c, None, 0, &ctx, &Budget::per_decision()), Ok(()));
    }

    #[test]
    fn equal_bounds_are_within() {
        let (pp, pa) = (pats(&["a/**"]), acts(&["read"]));
        let pc = Constraints { not_before_ms: Some(10), not_after_ms: Some(100), uses: Some(5), condition: None };
        let parent = Scope { device: 1, paths: &pp, actions: &pa, constraints: &pc, uses_left: Some(3) };
        let child = Scope { uses_left: Some(3), ..parent };
        assert!(widenings(&child, &parent).is_empty(), "the same window and the uses left are within");
    }

    #[test]
    fn covers_needs_both_the_action_and_a_matching_path() {
        let (ps, acts_) = (pats(&["a/*"]), acts(&["read"]));
        let p = Path::parse("a/b").unwrap();
        assert!(covers(&ps, &acts_, &p, "read"));
        assert!(!covers(&ps, &acts_, &p, "write"));
        assert!(!covers(&ps, &acts_, &Path::parse("b/b").unwrap(), "read"));
        assert!(!covers(&ps, &acts_, &Path::parse("b/b").unwrap(), "write"));
    }

    #[test]
    fn reason_codes_are_distinct_snake_case_and_agree_with_allowed() {
        use AuthReason as R;
        let all = [
            R::AllowedOwner,
            R::AllowedRelation,
            R::AllowedCapability,
            R::DeniedUnknownPrincipal,
            R::DeniedUnknownDevice,
            R::DeniedNoAuthority,
            R::DeniedRevoked,
            R::DeniedNotYetValid,
            R::DeniedExpired,
            R::DeniedUsesExhausted,
            R::DeniedConditionFalse,
            R::DeniedConditionError,
            R::DeniedAggregation,
        ];
        let codes: std::collections::BTreeSet<&str> = all.iter().map(|r| r.code()).collect();
        assert_eq!(codes.len(), all.len());
        for r in all {
            let json = serde_json_like(r);
            assert_eq!(r.code(), json, "code and serde name agree");
            assert_eq!(r.allowed(), r.code().starts_with("allowed_"), "{r:?}");
        }
        assert_eq!(R::DeniedConditionError.code(), "denied_condition_error");
    }

    /// The serde name of a reason, without a JSON dependency: the `Debug` name in snake case.
    fn serde_json_like(r: AuthReason) -> String {
        let mut out = String::new();
        for (i, ch) in format!("{r:?}").chars().enumerate() {
            if ch.is_ascii_uppercase() {
                if i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_lowercase());
            } else {
                out.push(ch);
            }
        }
        out
    }

    /// `Window::holds` is `link_holds` for every unconditioned link: same verdict, same
    /// failure, at every instant around both bounds and for every uses count.
    #[test]
    fn the_inline_window_decides_like_the_constraints() {
        let bounds = [None, Some(-5), Some(0), Some(10), Some(i64::MIN), Some(i64::MAX)];
        let ctx = RequestContext::new();
        for nb in bounds {
            for na in bounds {
                for uses in [None, Some(0), Some(1)] {
                    let c = Constraints { not_before_ms: nb, not_after_ms: na, uses, condition: None };
                    let w = Window::of(&c);
                    assert!(!w.conditioned);
                    for revoked in [false, true] {
                        for now in [i64::MIN, -6, -5, -1, 0, 9, 10, 11, i64::MAX - 1, i64::MAX] {
                            let budget = Budget::per_decision();
                            assert_eq!(
                                w.holds(revoked, uses, now),
                                link_holds(revoked, &c, uses, now, &ctx, &budget),
                                "nb={nb:?} na={na:?} uses={uses:?} revoked={revoked} now={now}"
                            );
                        }
                    }
                }
            }
        }
        let cond = Constraints { condition: Some(Condition::compile("ok").unwrap()), ..Constraints::default() };
        assert!(Window::of(&cond).conditioned);
    }
}
