//! A snapshot's nodes by name, an index a plan's set-ups carry from pass to
//! pass (see the [module documentation](super)): a plan only ever adds
//! nodes, so the next set-up indexes only those added.

use crate::fast_hash::HashMap;
use crate::snapshot::Snapshot;

/// A snapshot's node indices by name (several for a name that several nodes
/// share). A plan's copies of a cluster only ever add nodes, so the index of
/// one copy is carried to the next and extended by the nodes added
/// ([`NodeNames::carried_over`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NodeNames {
    by_name: HashMap<Box<str>, Vec<usize>>,
    /// How many of the snapshot's nodes are indexed.
    indexed: usize,
}

impl NodeNames {
    /// The index of `snapshot`'s nodes.
    pub(crate) fn of(snapshot: &Snapshot) -> NodeNames {
        NodeNames::default().carried_over(snapshot)
    }

    /// This index of an earlier copy of `snapshot`, whose nodes `snapshot`
    /// starts with, extended by the nodes added since (read afresh when
    /// `snapshot` has fewer nodes than it indexed).
    pub(crate) fn carried_over(mut self, snapshot: &Snapshot) -> NodeNames {
        if self.indexed > snapshot.nodes.len() {
            return NodeNames::of(snapshot);
        }
        for (i, node) in snapshot.nodes.iter().enumerate().skip(self.indexed) {
            match self.by_name.get_mut(node.name()) {
                Some(indices) => indices.push(i),
                None => {
                    self.by_name.insert(node.name().into(), vec![i]);
                }
            }
        }
        self.indexed = snapshot.nodes.len();
        self
    }

    /// The indices of the nodes named `name`, in order.
    pub(crate) fn get(&self, name: &str) -> &[usize] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether no two nodes share a name.
    pub(crate) fn all_distinct(&self) -> bool {
        self.by_name.len() == self.indexed
    }
}
