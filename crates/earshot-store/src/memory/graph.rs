//! The provenance graph (petgraph): edges from each source to the items derived from it.
//!
//! Held by the writer only. Node index `i` is item `Iid` `i`, because items are appended in
//! creation order and never removed. The writer walks it to find every descendant whose
//! currentness a lifecycle change may alter; readers use the memoised currentness instead.

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use crate::memory::snapshot::Iid;

#[derive(Debug, Default, Clone)]
pub(crate) struct Provenance {
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
