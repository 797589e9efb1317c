//! Lifecycle states, legal transitions and currentness through every transitive source (SPEC §1.7).

use serde::{Deserialize, Serialize};

/// The lifecycle state of one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Active,
    Superseded,
    Frozen,
    Quarantined,
    Revoked,
    Deleted,
}

impl State {
    /// The snake_case spelling used on the wire and in reason details.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Superseded => "superseded",
            State::Frozen => "frozen",
            State::Quarantined => "quarantined",
            State::Revoked => "revoked",
            State::Deleted => "deleted",
        }
    }
}

/// A lifecycle action requested by an administrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Supersede,
    Freeze,
    Unfreeze,
    Quarantine,
    Release,
    Revoke,
    Delete,
}

/// A transition that the state machine does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot {action:?} an item that is {}", from.as_str())]
pub struct TransitionError {
    pub from: State,
    pub action: Action,
}

/// The state after `action`, or an error when the action does not apply to `from`.
///
/// `revoked` and `deleted` are terminal except that a revoked item may still be deleted;
/// freezing and quarantining are the only reversible departures from `active`.
pub fn transition(from: State, action: Action) -> Result<State, TransitionError> {
    use Action as A;
    use State as S;
    let to = match (from, action) {
        (S::Active | S::Frozen, A::Supersede) => S::Superseded,
        (S::Active, A::Freeze) => S::Frozen,
        (S::Frozen, A::Unfreeze) => S::Active,
        (S::Active | S::Frozen, A::Quarantine) => S::Quarantined,
        (S::Quarantined, A::Release) => S::Active,
        (S::Active | S::Frozen | S::Quarantined | S::Superseded, A::Revoke) => S::Revoked,
        (S::Active | S::Frozen | S::Quarantined | S::Superseded | S::Revoked, A::Delete) => S::Deleted,
        _ => return Err(TransitionError { from, action }),
    };
    Ok(to)
}

/// `Current(m, t)`, memoised per item: either current, or the state that stops it and the
/// ancestor holding that state (`None` when the item itself is not active).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Currentness<I> {
    Current,
    NotCurrent { state: State, ancestor: Option<I> },
}

impl<I: Copy> Currentness<I> {
    pub fn is_current(&self) -> bool {
        matches!(self, Currentness::Current)
    }

    /// Currentness of an item from its own state and its direct sources' currentness.
    ///
    /// Sources are given as `(source id, source currentness)`; because each source's currentness
    /// already covers its own ancestors, this covers every transitive source. The first blocking
    /// source (in the given order) is reported, naming the deepest ancestor that blocks.
    pub fn derive(own: State, sources: impl IntoIterator<Item = (I, Currentness<I>)>) -> Self {
        if own != State::Active {
            return Currentness::NotCurrent { state: own, ancestor: None };
        }
        for (id, c) in sources {
            if let Currentness::NotCurrent { state, ancestor } = c {
                return Currentness::NotCurrent { state, ancestor: Some(ancestor.unwrap_or(id)) };
            }
        }
        Currentness::Current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_STATES: [State; 6] =
        [State::Active, State::Superseded, State::Frozen, State::Quarantined, State::Revoked, State::Deleted];

    #[test]
    fn reversible_and_terminal_states() {
        assert_eq!(transition(State::Active, Action::Freeze), Ok(State::Frozen));
        assert_eq!(transition(State::Frozen, Action::Unfreeze), Ok(State::Active));
        assert_eq!(transition(State::Active, Action::Quarantine), Ok(State::Quarantined));
        assert_eq!(transition(State::Quarantined, Action::Release), Ok(State::Active));
        assert_eq!(transition(State::Active, Action::Supersede), Ok(State::Superseded));
        assert!(transition(State::Revoked, Action::Release).is_err());
        assert!(transition(State::Active, Action::Unfreeze).is_err());
        assert!(transition(State::Active, Action::Release).is_err());
        for s in ALL_STATES {
            assert!(transition(State::Deleted, Action::Delete).is_err(), "{s:?}");
            // Nothing ever leads back to active except unfreeze and release.
            for a in [Action::Supersede, Action::Freeze, Action::Quarantine, Action::Revoke, Action::Delete] {
                assert_ne!(transition(s, a), Ok(State::Active));
            }
        }
    }

    #[test]
    fn currentness_names_the_blocking_ancestor() {
        let blocked: Currentness<u32> = Currentness::derive(State::Revoked, []);
        assert_eq!(blocked, Currentness::NotCurrent { state: State::Revoked, ancestor: None });
        let child = Currentness::derive(State::Active, [(1, Currentness::Current), (2, blocked)]);
        assert_eq!(child, Currentness::NotCurrent { state: State::Revoked, ancestor: Some(2) });
        let grandchild = Currentness::derive(State::Active, [(3, child)]);
        assert_eq!(grandchild, Currentness::NotCurrent { state: State::Revoked, ancestor: Some(2) });
        assert!(Currentness::<u32>::derive(State::Active, [(1, Currentness::Current)]).is_current());
        assert!(!Currentness::<u32>::derive(State::Frozen, [(1, Currentness::Current)]).is_current());
    }

    #[test]
    fn states_have_their_wire_spellings() {
        let names = ["active", "superseded", "frozen", "quarantined", "revoked", "deleted"];
        for (s, n) in ALL_STATES.iter().zip(names) {
            assert_eq!(s.as_str(), n);
        }
    }

    #[test]
    fn the_whole_transition_table() {
        use Action as A;
        use State as S;
        let allowed = [
            (S::Active, A::Supersede, S::Superseded),
            (S::Frozen, A::Supersede, S::Superseded),
            (S::Active, A::Freeze, S::Frozen),
            (S::Frozen, A::Unfreeze, S::Active),
            (S::Active, A::Quarantine, S::Quarantined),
            (S::Frozen, A::Quarantine, S::Quarantined),
            (S::Quarantined, A::Release, S::Active),
            (S::Active, A::Revoke, S::Revoked),
            (S::Frozen, A::Revoke, S::Revoked),
            (S::Quarantined, A::Revoke, S::Revoked),
            (S::Superseded, A::Revoke, S::Revoked),
            (S::Active, A::Delete, S::Deleted),
            (S::Frozen, A::Delete, S::Deleted),
            (S::Quarantined, A::Delete, S::Deleted),
            (S::Superseded, A::Delete, S::Deleted),
            (S::Revoked, A::Delete, S::Deleted),
        ];
        let actions = [A::Supersede, A::Freeze, A::Unfreeze, A::Quarantine, A::Release, A::Revoke, A::Delete];
        for from in ALL_STATES {
            for action in actions {
                let want = allowed.iter().find(|(f, a, _)| *f == from && *a == action).map(|(_, _, to)| *to);
                match want {
                    Some(to) => assert_eq!(transition(from, action), Ok(to), "{from:?} {action:?}"),
                    None => assert_eq!(transition(from, action), Err(TransitionError { from, action })),
                }
            }
        }
    }
}
