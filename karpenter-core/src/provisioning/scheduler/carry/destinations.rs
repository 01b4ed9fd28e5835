//! The destinations one set-up read from the nodes (each node's pods'
//! requests summed, its labels made requirements), carried to the next
//! set-up with what each was read from. Reading every node so was a large
//! share of each pass's set-up, and a command changes a few nodes: the next
//! set-up reads only the nodes noted changed, or whose Node is not the one
//! read (see the [module documentation](super)).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;

use crate::fast_hash::{HashMap, HashSet};
use crate::provisioning::demand::daemons::DaemonPod;
use crate::provisioning::scheduler::existing::ExistingNode;
use crate::snapshot::ClusterNode;

/// The destinations a set-up read, by node name, with the DaemonSet pods
/// they made room for.
#[derive(Debug, Default)]
pub(super) struct CarriedDestinations {
    /// The DaemonSet pods the destinations made room for.
    daemons: Vec<DaemonPod>,
    /// By node name.
    pub(super) nodes: HashMap<String, Read>,
}

/// A destination and what it was read from.
#[derive(Debug)]
pub(super) struct Read {
    node: Option<Arc<Node>>,
    pub(super) destination: Arc<ExistingNode>,
}

impl Read {
    /// What `destination` was read from: `node`.
    fn of(node: &ClusterNode, destination: &Arc<ExistingNode>) -> Read {
        Read {
            node: node.node.clone(),
            destination: Arc::clone(destination),
        }
    }
}

impl CarriedDestinations {
    /// Whether none is carried.
    pub(super) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether these made room for the same `daemons`.
    pub(super) fn made_room_for(&self, daemons: &[DaemonPod]) -> bool {
        self.daemons == daemons
    }

    /// The destination read from `node`, if one is carried under its name
    /// and its Node is the very one it was read from.
    pub(super) fn get(&self, node: &ClusterNode) -> Option<Arc<ExistingNode>> {
        let read = self.nodes.get(node.name())?;
        let same_node = match (&read.node, &node.node) {
            (Some(was), Some(is)) => Arc::ptr_eq(was, is),
            (None, None) => true,
            _ => false,
        };
        same_node.then(|| Arc::clone(&read.destination))
    }

    /// Updates these to a set-up's `destinations` (each with the node it
    /// was read from, and whether it was taken from these unread), made room
    /// for `daemons`; the nodes `changed` were read again. `names_distinct`
    /// says that no two of the cluster's nodes share a name.
    pub(super) fn update<'a, I>(
        &mut self,
        changed: &HashSet<String>,
        daemons: &[DaemonPod],
        destinations: I,
        names_distinct: bool,
    ) where
        I: Iterator<Item = (&'a ClusterNode, &'a Arc<ExistingNode>, bool)> + Clone,
    {
        // Updated in place: most destinations were taken as they were, and
        // a destination taken is the one kept under its name. The nodes
        // noted changed were read again, if they are destinations still.
        for name in changed {
            self.nodes.remove(name.as_str());
        }
        let mut count = 0;
        for (node, destination, unread) in destinations.clone() {
            count += 1;
            if unread && names_distinct {
                continue;
            }
            match self.nodes.get_mut(node.name()) {
                Some(read) if Arc::ptr_eq(&read.destination, destination) => {}
                Some(read) => *read = Read::of(node, destination),
                None => {
                    self.nodes
                        .insert(node.name().to_owned(), Read::of(node, destination));
                }
            }
        }
        // Every destination's name has its entry now. With distinct names
        // and as many entries as destinations, there is no other.
        if !names_distinct || self.nodes.len() != count {
            let current: HashSet<&str> = destinations.map(|(node, _, _)| node.name()).collect();
            self.nodes.retain(|name, _| current.contains(name.as_str()));
        }
        if self.daemons != daemons {
            self.daemons = daemons.to_vec();
        }
    }
}
