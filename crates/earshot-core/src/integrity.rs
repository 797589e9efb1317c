//! Origin-bound integrity (SPEC §6.2): whether an item is trusted, and so whether it may enter a
//! context as an `instruction` or only as `data`.
//!
//! Every item records its **author**, the participant whose words it carries (a derived item's
//! author is its owner). An item is trusted when its author is its owner, or a participant the
//! owner has a live trust delegation to, **and** every transitive source is trusted. The walk
//! over the sources is bounded ([`MAX_WALK`]); an item whose provenance cannot be walked in full
//! (the bound, or a source that does not exist) is untrusted: fail closed.
//!
//! Generic over the item and participant id types (the store runs it on interned `u32`s, the
//! tests on strings), and a pure function of the [`ProvenanceView`] it is given.

use serde::{Deserialize, Serialize};

/// Most items (the item itself and its distinct transitive sources) one decision walks before
/// it gives up and answers `data`.
pub const MAX_WALK: usize = 4096;

/// The role of an item in an assembled context (SPEC §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Trusted: the item and every transitive source are the owner's words or those of a
    /// participant the owner trusts.
    Instruction,
    /// Untrusted: to be read, never obeyed.
    Data,
}

impl Role {
    /// The role as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Instruction => "instruction",
            Role::Data => "data",
        }
    }
}

/// Why an item is data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taint<I, P> {
    /// Its own author is neither its owner nor trusted by it.
    Author,
    /// A transitive source, `item`, was written by `author`, whom its owner does not trust (the
    /// first such source in a depth-first walk of the sources in their recorded order).
    Source { item: I, author: P },
    /// The provenance could not be walked in full: more than [`MAX_WALK`] items, or a source
    /// that does not exist.
    Incomplete,
}

impl<I, P> Taint<I, P> {
    /// The stable code of this reason (`untrusted_author`, `untrusted_source`,
    /// `provenance_incomplete`).
    pub fn code(&self) -> &'static str {
        match self {
            Taint::Author => "untrusted_author",
            Taint::Source { .. } => "untrusted_source",
            Taint::Incomplete => "provenance_incomplete",
        }
    }
}

/// The integrity of one item: trusted, or data and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integrity<I, P> {
    Trusted,
    Untrusted(Taint<I, P>),
}

impl<I, P> Integrity<I, P> {
    pub fn role(&self) -> Role {
        match self {
            Integrity::Trusted => Role::Instruction,
            Integrity::Untrusted(_) => Role::Data,
        }
    }
}

/// What the rule needs to know of one item.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a, I, P> {
    pub owner: P,
    pub author: P,
    pub sources: &'a [I],
}

/// The provenance the rule reads: items with their owner, author and sources, and the live
/// trust delegations. A snapshot of the store implements it; so does the tests' oracle.
pub trait ProvenanceView<I, P> {
    /// The item, or `None` if it does not exist.
    fn origin(&self, item: I) -> Option<Origin<'_, I, P>>;
    /// Whether `owner` has a live delegation of authority to `participant`.
    fn delegated(&self, owner: P, participant: P) -> bool;
}

/// Whether one item's own author is trusted by its owner.
pub fn author_trusted<I, P: Copy + Eq>(o: &Origin<'_, I, P>, view: &impl ProvenanceView<I, P>) -> bool {
    o.author == o.owner || view.delegated(o.owner, o.author)
}

/// The integrity of `item` (SPEC §6.2). An owner-authored item without sources is decided
/// without allocating or looking anything else up.
pub fn integrity<I: Copy + Ord, P: Copy + Eq>(item: I, view: &impl ProvenanceView<I, P>) -> Integrity<I, P> {
    let Some(o) = view.origin(item) else { return Integrity::Untrusted(Taint::Incomplete) };
    if !author_trusted(&o, view) {
        return Integrity::Untrusted(Taint::Author);
    }
    if o.sources.is_empty() {
        return Integrity::Trusted;
    }
    let mut seen = std::collections::BTreeSet::new();
    seen.insert(item);
    let mut stack: Vec<I> = o.sources.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        if !seen.insert(i) {
            continue;
        }
        if seen.len() > MAX_WALK {
            return Integrity::Untrusted(Taint::Incomplete);
        }
        let Some(s) = view.origin(i) else { return Integrity::Untrusted(Taint::Incomplete) };
        if !author_trusted(&s, view) {
            return Integrity::Untrusted(Taint::Source { item: i, author: s.author });
        }
        stack.extend(s.sources.iter().rev().copied());
    }
    Integrity::Trusted
}

/// Whether a trust delegation may be recorded: the owner cannot delegate to itself (it is
/// trusted by definition).
pub fn may_delegate<P: Eq>(owner: &P, participant: &P) -> bool {
    owner != participant
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[derive(Default)]
    struct Store {
        items: BTreeMap<u32, (char, char, Vec<u32>)>,
        trust: BTreeSet<(char, char)>,
    }

    impl ProvenanceView<u32, char> for Store {
        fn origin(&self, item: u32) -> Option<Origin<'_, u32, char>> {
            self.items.get(&item).map(|(owner, author, sources)| Origin { owner: *owner, author: *author, sources })
        }
        fn delegated(&self, owner: char, participant: char) -> bool {
            self.trust.contains(&(owner, participant))
        }
    }

    fn store(items: &[(u32, char, &[u32])]) -> Store {
        let mut s = Store::default();
        for (id, author, sources) in items {
            s.items.insert(*id, ('a', *author, sources.to_vec()));
        }
        s
    }

    #[test]
    fn an_owner_note_is_an_instruction_and_a_stranger_is_data() {
        let s = store(&[(1, 'a', &[]), (2, 'b', &[])]);
        assert_eq!(integrity(1, &s), Integrity::Trusted);
        assert_eq!(integrity(2, &s), Integrity::Untrusted(Taint::Author));
        assert_eq!(integrity(9, &s), Integrity::Untrusted(Taint::Incomplete));
    }

    #[test]
    fn a_delegation_trusts_the_author_and_its_derivatives() {
        let mut s = store(&[(1, 'b', &[]), (2, 'a', &[]), (3, 'a', &[1, 2]), (4, 'a', &[3]), (5, 'a', &[4])]);
        assert_eq!(integrity(5, &s), Integrity::Untrusted(Taint::Source { item: 1, author: 'b' }));
        assert_eq!(integrity(5, &s).role(), Role::Data);
        s.trust.insert(('a', 'b'));
        assert_eq!(integrity(5, &s), Integrity::Trusted);
        // A delegation from someone else is not the owner's.
        s.trust.clear();
        s.trust.insert(('c', 'b'));
        assert_eq!(integrity(1, &s).role(), Role::Data);
    }

    #[test]
    fn the_first_untrusted_source_in_walk_order_is_named() {
        let s = store(&[(1, 'a', &[]), (2, 'c', &[]), (3, 'b', &[]), (4, 'a', &[1, 2]), (5, 'a', &[4, 3])]);
        assert_eq!(integrity(5, &s), Integrity::Untrusted(Taint::Source { item: 2, author: 'c' }));
        assert_eq!(Taint::<u32, char>::Incomplete.code(), "provenance_incomplete");
    }

    #[test]
    fn a_walk_past_its_bound_or_to_a_missing_source_fails_closed() {
        // A chain longer than the bound, every item trusted.
        let n = u32::try_from(MAX_WALK).unwrap() + 1;
        let mut s = Store::default();
        s.items.insert(0, ('a', 'a', vec![]));
        for i in 1..=n {
            s.items.insert(i, ('a', 'a', vec![i - 1]));
        }
        assert_eq!(integrity(n, &s), Integrity::Untrusted(Taint::Incomplete));
        assert_eq!(integrity(n - 2, &s), Integrity::Trusted);
        let s = store(&[(1, 'a', &[7])]);
        assert_eq!(integrity(1, &s), Integrity::Untrusted(Taint::Incomplete));
        assert!(!may_delegate(&'a', &'a') && may_delegate(&'a', &'b'));
    }

    #[test]
    fn a_shared_source_is_walked_once() {
        // A diamond of depth 30: 2^30 paths, 61 items.
        let mut s = Store::default();
        s.items.insert(0, ('a', 'a', vec![]));
        for level in 1..=30u32 {
            let below = if level == 1 { vec![0] } else { vec![2 * level - 3, 2 * level - 2] };
            s.items.insert(2 * level - 1, ('a', 'a', below.clone()));
            s.items.insert(2 * level, ('a', 'a', below));
        }
        assert_eq!(integrity(60, &s), Integrity::Trusted);
    }
}
