//! The provenance graph (petgraph): edges from each source to the items derived from it.
//!
//! Held by the writer only. Node index `i` is item `Iid` `i`, because items are appended in
//! creation order and never removed. The writer walks it to find every descendant whose
//! currentness a lifecycle change may alter; readers use the memoised currentness instead.

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use crate::memory::snapshot::Iid;

#[derive(Debug, Default, Clone)]
pub struct Provenance {
    graph: DiGraph<(), (), u32>,
}

impl Provenance {
    /// Appends item `iid` (which must be the next index) with edges from its sources.
    pub fn add_item(&mut self, iid: Iid, sources: &[Iid]) {
        let node = self.graph.add_node(());
        debug_assert_eq!(node.index(), iid as usize);
        for &s in sources {
            self.graph.add_edge(NodeIndex::new(s as usize), node, ());
        }
    }

    /// Forgets every item from `items` on (with its edges): the graph of a state with `items`
    /// items, after applies to copies of it that were not kept added items beyond it. Only the
    /// last node is ever removed, so no index moves.
    pub fn truncate(&mut self, items: usize) {
        while self.graph.node_count() > items {
            let last = NodeIndex::new(self.graph.node_count() - 1);
            self.graph.remove_node(last);
        }
    }

    /// How many items the graph holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// Every transitive descendant of `iid`, ascending (so sources precede what derives from them).
    pub fn descendants(&self, iid: Iid) -> Vec<Iid> {
        let start = NodeIndex::new(iid as usize);
        if start.index() >= self.graph.node_count() {
            return Vec::new();
        }
        let mut dfs = Dfs::new(&self.graph, start);
        let mut out = Vec::new();
        while let Some(n) = dfs.next(&self.graph) {
            if n != start {
                out.push(n.index() as Iid);
            }
        }
        out.sort_unstable();
        out
    }

    /// Direct sources of `iid` according to the graph, ascending (for index agreement checks).
    pub fn sources_of(&self, iid: Iid) -> Vec<Iid> {
        let mut v: Vec<Iid> = self
            .graph
            .neighbors_directed(NodeIndex::new(iid as usize), petgraph::Direction::Incoming)
            .map(|n| n.index() as Iid)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncating_forgets_later_items_and_their_edges_only() {
        let mut g = Provenance::default();
        g.add_item(0, &[]);
        g.add_item(1, &[0]);
        let kept = g.clone();
        g.add_item(2, &[0, 1]);
        g.add_item(3, &[2]);
        assert_eq!(g.descendants(0), [1, 2, 3]);
        g.truncate(2);
        assert_eq!((g.len(), g.descendants(0), g.sources_of(1)), (2, vec![1], vec![0]));
        assert_eq!(g.descendants(1), kept.descendants(1));
        // Growing again after a truncation gives the indices back in order.
        g.add_item(2, &[1]);
        assert_eq!(g.descendants(0), [1, 2]);
    }
}
