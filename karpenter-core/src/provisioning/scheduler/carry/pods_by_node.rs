//! [`BoundPods`]: the snapshot's pods by the node they are bound to, as
//! indices into its pods.
//!
//! Every scheduling set-up reads which pods each node runs, hashing every
//! pod's node name, and a command rebinds a few hundred pods: a plan carries
//! the index from one pass to the next and moves only the pods it notes as
//! moved ([`BoundPods::carried_over`], see the [module
//! documentation](super)). The index owns its names, so it outlives the copy
//! of the cluster it was read from.

use std::sync::Arc;

use crate::fast_hash::HashMap;
use crate::pods::{PodInfo, bound_node};

/// The pods bound to each node (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BoundPods {
    /// By node name, the indices of the pods bound to it, ascending.
    by_node: HashMap<Arc<str>, Vec<usize>>,
    /// For each pod, the node it is bound to, if any.
    node_of: Vec<Option<Arc<str>>>,
}

impl BoundPods {
    /// Reads which node each of `pods` is bound to.
    pub(crate) fn new(pods: &[Arc<PodInfo>]) -> BoundPods {
        let mut by_node: HashMap<Arc<str>, Vec<usize>> = HashMap::default();
        let mut node_of = Vec::with_capacity(pods.len());
        // Pods of one node often come together: its name is looked up once
        // per run of them.
        let mut last: Option<Arc<str>> = None;
        for (i, pod) in pods.iter().enumerate() {
            let Some(node) = bound_node(pod) else {
                node_of.push(None);
                continue;
            };
            let name = match &last {
                Some(name) if **name == *node => Arc::clone(name),
                _ => {
                    let name = match by_node.get_key_value(node) {
                        Some((name, _)) => Arc::clone(name),
                        None => Arc::from(node),
                    };
                    last = Some(Arc::clone(&name));
                    name
                }
            };
            by_node.entry(Arc::clone(&name)).or_default().push(i);
            node_of.push(Some(name));
        }
        BoundPods { by_node, node_of }
    }

    /// The indices of the pods bound to the node named `name`, ascending.
    pub(crate) fn on(&self, name: &str) -> &[usize] {
        self.by_node.get(name).map_or(&[], Vec::as_slice)
    }

    /// This index, for `pods` where those at `moved` may be bound elsewhere
    /// now (and no other changed). `None` when `pods` is not the list it
    /// was read from (another length).
    pub(crate) fn carried_over(
        mut self,
        pods: &[Arc<PodInfo>],
        moved: &[usize],
    ) -> Option<BoundPods> {
        if pods.len() != self.node_of.len() {
            return None;
        }
        for &i in moved {
            let now = bound_node(pods.get(i)?);
            if self.node_of[i].as_deref() == now {
                continue;
            }
            if let Some(was) = self.node_of[i].take()
                && let Some(list) = self.by_node.get_mut(&was)
            {
                if let Ok(at) = list.binary_search(&i) {
                    list.remove(at);
                }
                if list.is_empty() {
                    self.by_node.remove(&was);
                }
            }
            if let Some(node) = now {
                let name = match self.by_node.get_key_value(node) {
                    Some((name, _)) => Arc::clone(name),
                    None => Arc::from(node),
                };
                let list = self.by_node.entry(Arc::clone(&name)).or_default();
                if let Err(at) = list.binary_search(&i) {
                    list.insert(at, i);
                }
                self.node_of[i] = Some(name);
            }
        }
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::BoundPods;
    use crate::pods::PodInfo;
    use crate::snapshot::build::PodBuilder;

    fn pods(nodes: &[Option<u8>]) -> Vec<Arc<PodInfo>> {
        nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let mut pod = PodBuilder::new("default", format!("pod-{i}"));
                if let Some(node) = node {
                    pod = pod.on_node(format!("node-{node}"));
                }
                Arc::new(PodInfo::from(pod.build()))
            })
            .collect()
    }

    proptest! {
        /// An index updated for the pods rebound is the index read afresh.
        #[test]
        fn rebound_pods_read_as_fresh(
            before in prop::collection::vec(prop::option::of(0..4u8), 0..30),
            moves in prop::collection::vec((any::<usize>(), prop::option::of(0..5u8)), 0..10),
        ) {
            let mut now = before.clone();
            let mut moved = Vec::new();
            for (pod, node) in moves {
                if now.is_empty() {
                    break;
                }
                let at = pod % now.len();
                now[at] = node;
                moved.push(at);
            }
            let updated = BoundPods::new(&pods(&before)).carried_over(&pods(&now), &moved);
            prop_assert_eq!(updated, Some(BoundPods::new(&pods(&now))));
        }
    }
}
