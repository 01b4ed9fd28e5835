//! Destinations carried from one scheduling set-up to the next one over a
//! later copy of the same cluster.
//!
//! A disruption plan builds a set-up for each of its passes, and reading
//! every node into a destination (its pods' requests summed, its labels made
//! requirements) was a fifth of a 5,000-node plan. A command changes a few
//! hundred nodes at most, so a pass takes the destinations of the pass before
//! for every node nothing changed on.
//!
//! What changed is what the plan notes ([`Carried::note_changes`]): the
//! nodes its commands take, the nodes they move pods from and to, and the
//! pods they move; a plan changes nothing else. The nodes noted are read
//! again, and so is a node whose Node is not the very object its destination
//! was read from (the memo holds it, and an `Arc` that another holder shares
//! cannot change in place: [`Arc::make_mut`] copies it first). The DaemonSet
//! pods every destination made room for are compared.
//!
//! The pods' index by node ([`BoundPods`]) and the topology base (every
//! placed pod counted) are carried too: the next set-up updates them for the
//! pods moved instead of reading every pod again (see `topology/carry.rs`).

use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::{Node, Taint};

use super::existing::ExistingNode;
use super::names::NodeNames;
use super::pods_by_node::BoundPods;
use crate::fast_hash::{HashMap, HashSet};
use crate::provisioning::demand::daemons::DaemonPod;
use crate::provisioning::topology::{DomainSource, LabelMemo, TopologyBase};
use crate::scheduling::{Requirements, WellKnownLabels};
use crate::snapshot::ClusterNode;

/// The destinations one set-up read, each with what it was read from, for
/// the next set-up to take unread (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Carried {
    /// The DaemonSet pods the destinations made room for.
    daemons: Vec<DaemonPod>,
    /// By node name.
    nodes: HashMap<String, Read>,
    /// The nodes changed since (see [`Carried::note_changes`]), by name.
    changed: HashSet<String>,
    /// The pods moved since, as indices into the snapshot's pods (which a
    /// plan's copies of the cluster share).
    moved: Vec<usize>,
    /// The pods by node, for the next set-up to take (once).
    bound: Mutex<Option<BoundPods>>,
    /// The placed pods' labels as the last topology base stored them: the
    /// next set-up takes them (once).
    labels: Mutex<LabelMemo>,
    /// The last topology base, for the next set-up to take (once).
    topology: Mutex<Option<CarriedTopology>>,
    /// The last set-up's node index by name, for the next to take (once).
    names: Mutex<Option<NodeNames>>,
    /// The pods the last set-up found pending (indices into the snapshot's
    /// pods, in order), for the next to take (once).
    pending: Mutex<Option<Vec<usize>>>,
}

/// What a topology base reads of the pools: each pool's requirements,
/// instance types (by address: a plan's copies of a cluster share them) and
/// taints, and the well-known labels. A base is carried to a later copy of
/// its cluster only if these are the same.
#[derive(Debug, PartialEq)]
pub(crate) struct TopologySources {
    pools: Vec<(Requirements, usize, usize, Vec<Taint>)>,
    well_known: WellKnownLabels,
}

impl TopologySources {
    /// What a base over `pools` reads, with `well_known` labels.
    pub(crate) fn of(pools: &[DomainSource<'_>], well_known: &WellKnownLabels) -> TopologySources {
        TopologySources {
            pools: pools
                .iter()
                .map(|p| {
                    (
                        p.pool_requirements.clone(),
                        p.instance_types.as_ptr().addr(),
                        p.instance_types.len(),
                        p.taints.to_vec(),
                    )
                })
                .collect(),
            well_known: well_known.clone(),
        }
    }
}

/// A topology base, with what it read of the pools.
#[derive(Debug)]
pub(crate) struct CarriedTopology {
    /// The base.
    pub(crate) base: TopologyBase,
    /// What it read of the pools.
    pub(crate) sources: TopologySources,
}

/// A destination and what it was read from.
#[derive(Debug)]
struct Read {
    node: Option<Arc<Node>>,
    destination: Arc<ExistingNode>,
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

impl Carried {
    /// Whether nothing is carried: no pass before this one built a set-up.
    pub(crate) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// These destinations, if they made room for the same `daemons`: none of
    /// them is of use otherwise.
    pub(crate) fn for_daemons(&self, daemons: &[DaemonPod]) -> Option<&Carried> {
        (self.daemons == daemons).then_some(self)
    }

    /// The destination read from `node`, if it is carried and the node has
    /// not changed since (see the module documentation).
    pub(crate) fn get(&self, node: &ClusterNode) -> Option<Arc<ExistingNode>> {
        if self.changed.contains(node.name()) {
            return None;
        }
        let read = self.nodes.get(node.name())?;
        let same_node = match (&read.node, &node.node) {
            (Some(was), Some(is)) => Arc::ptr_eq(was, is),
            (None, None) => true,
            _ => false,
        };
        same_node.then(|| Arc::clone(&read.destination))
    }

    /// The destinations of a set-up to carry to the next: each of
    /// `destinations` (with the node it was read from, and whether it was
    /// taken from `self` unread); those taken keep what they were read
    /// from. `names_distinct` says that no two of the cluster's nodes share
    /// a name. The changes noted are cleared: the next set-up starts from
    /// this one's cluster.
    pub(crate) fn next<'a, I>(
        mut self,
        daemons: &[DaemonPod],
        destinations: I,
        names_distinct: bool,
    ) -> Carried
    where
        I: Iterator<Item = (&'a ClusterNode, &'a Arc<ExistingNode>, bool)> + Clone,
    {
        // Updated in place: most destinations were taken as they were, and
        // a destination taken is the one kept under its name. The nodes
        // noted changed were read again, if they are destinations still.
        for name in &self.changed {
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
        self.changed.clear();
        self.moved.clear();
        if self.daemons != daemons {
            self.daemons = daemons.to_vec();
        }
        self
    }

    /// These, with `labels` as the stored labels to carry.
    pub(crate) fn with_labels(self, labels: LabelMemo) -> Carried {
        Carried {
            labels: Mutex::new(labels),
            ..self
        }
    }

    /// These, with `topology` as the topology base to carry.
    pub(crate) fn with_topology(self, topology: Option<CarriedTopology>) -> Carried {
        Carried {
            topology: Mutex::new(topology),
            ..self
        }
    }

    /// These, with `names` as the node index by name to carry.
    pub(crate) fn with_names(self, names: NodeNames) -> Carried {
        Carried {
            names: Mutex::new(Some(names)),
            ..self
        }
    }

    /// These, with `pending` as the pending pods to carry.
    pub(crate) fn with_pending(self, pending: Vec<usize>) -> Carried {
        Carried {
            pending: Mutex::new(Some(pending)),
            ..self
        }
    }

    /// Takes the pending pods carried, if any, leaving none.
    pub(crate) fn take_pending(&self) -> Option<Vec<usize>> {
        take_once(&self.pending)
    }

    /// Takes the node index by name carried, if any, leaving none.
    pub(crate) fn take_names(&self) -> Option<NodeNames> {
        take_once(&self.names)
    }

    /// Takes the topology base carried, if any, leaving none.
    pub(crate) fn take_topology(&self) -> Option<CarriedTopology> {
        take_once(&self.topology)
    }

    /// Notes a change to the cluster these were read from: the pods at
    /// `moved` (indices into the snapshot's pods) are bound elsewhere now,
    /// and the `nodes` named changed (taken, or their pods moved). Every
    /// change between the set-up that carried these and the next must be
    /// noted: the next set-up reads the nodes noted again and updates the
    /// topology base for the pods noted, and takes the rest as they were.
    pub(crate) fn note_changes<'n>(
        &mut self,
        moved: impl IntoIterator<Item = usize>,
        nodes: impl IntoIterator<Item = &'n str>,
    ) {
        self.changed.extend(nodes.into_iter().map(str::to_owned));
        self.moved.extend(moved);
    }

    /// The pods moved since these were carried (see
    /// [`note_changes`](Self::note_changes)).
    pub(crate) fn moved(&self) -> &[usize] {
        &self.moved
    }

    /// These, with `bound` as the pods' index to carry.
    pub(crate) fn with_bound(self, bound: BoundPods) -> Carried {
        Carried {
            bound: Mutex::new(Some(bound)),
            ..self
        }
    }

    /// Takes the pods' index carried, if any, leaving none.
    pub(crate) fn take_bound(&self) -> Option<BoundPods> {
        take_once(&self.bound)
    }

    /// Takes the stored labels carried, leaving none.
    pub(crate) fn take_labels(&self) -> LabelMemo {
        take_once(&self.labels)
    }
}

/// What `slot` holds, leaving its default: a set-up takes each thing carried
/// once, through a shared `Carried`. A poisoned slot is still whole (what
/// goes in goes in complete).
fn take_once<T: Default>(slot: &Mutex<T>) -> T {
    std::mem::take(&mut *slot.lock().unwrap_or_else(PoisonError::into_inner))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use proptest::prelude::*;

    use super::Carried;
    use crate::fast_hash::HashSet;
    use crate::planning::MinValuesPolicy;
    use crate::pods::PodInfo;
    use crate::provisioning::scheduler::names::NodeNames;
    use crate::provisioning::scheduler::setup::Setup;
    use crate::provisioning::test_support::{instance_type, snapshot};
    use crate::provisioning::topology::{LabelMemo, TopologyBase};
    use crate::snapshot::Snapshot;
    use crate::snapshot::build::{NodeBuilder, PodBuilder};

    /// `nodes` managed nodes of 8 cpu, the last still a NodeClaim alone (in
    /// flight, its labels the claim's), and a pod of `millis` on each
    /// `(node, millis)`.
    fn cluster(nodes: usize, pods: &[(usize, u32)]) -> Snapshot {
        let mut cluster = snapshot(vec![instance_type("m-8", 8, 32, 1.0)], vec![]);
        cluster.nodes = (0..nodes)
            .map(|n| {
                NodeBuilder::managed(format!("node-{n}"), "default", "m-8")
                    .allocatable("cpu", "8")
                    .allocatable("memory", "32Gi")
                    .allocatable("pods", "110")
                    .build()
            })
            .collect();
        if let Some(last) = cluster.nodes.last_mut() {
            last.node = None;
        }
        cluster.pods = pods
            .iter()
            .enumerate()
            .map(|(i, &(node, millis))| {
                let pod = PodBuilder::new("default", format!("pod-{i}"))
                    .requests(format!("{millis}m"), "1Gi")
                    .on_node(format!("node-{}", node % nodes))
                    .build();
                Arc::new(PodInfo::from(pod))
            })
            .collect();
        cluster
    }

    /// What a later pass's cluster may differ in.
    #[derive(Clone, Debug)]
    enum Change {
        /// The pod at this index (modulo) moves to the node at that index.
        Rebind(usize, usize),
        /// The node at this index is being deleted.
        Delete(usize),
        /// The NodeClaim of the node at this index gains a label.
        Relabel(usize),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            (any::<usize>(), any::<usize>()).prop_map(|(p, n)| Change::Rebind(p, n)),
            any::<usize>().prop_map(Change::Delete),
            any::<usize>().prop_map(Change::Relabel),
        ]
    }

    /// Applies `change`, noting it in `carried` as a plan does.
    fn apply(cluster: &mut Snapshot, change: &Change, carried: &mut Carried) {
        let nodes = cluster.nodes.len();
        match *change {
            Change::Rebind(pod, node) if !cluster.pods.is_empty() => {
                let at = pod % cluster.pods.len();
                let pod = Arc::make_mut(&mut cluster.pods[at]);
                if pod.spec.is_some() {
                    let to = format!("node-{}", node % nodes);
                    let from = pod.node_name.replace(to.clone());
                    let touched = from.iter().map(String::as_str).chain([to.as_str()]);
                    carried.note_changes([at], touched);
                }
            }
            Change::Rebind(..) => {}
            Change::Delete(node) => {
                let node = &mut cluster.nodes[node % nodes];
                if let Some(claim) = node.node_claim.as_mut() {
                    claim.metadata.deletion_timestamp =
                        Some(Time("2026-06-01T00:00:00Z".parse().expect("a time")));
                }
                carried.note_changes([], [node.name()]);
            }
            Change::Relabel(node) => {
                let node = &mut cluster.nodes[node % nodes];
                if let Some(claim) = node.node_claim.as_mut() {
                    claim
                        .metadata
                        .labels
                        .get_or_insert_with(Default::default)
                        .insert("team".to_owned(), "blue".to_owned());
                }
                carried.note_changes([], [node.name()]);
            }
        }
    }

    /// The indices of the pods `changes` rebind in a cluster of `pods` pods.
    fn rebound(changes: &[Change], pods: usize) -> Vec<usize> {
        changes
            .iter()
            .filter_map(|change| match *change {
                Change::Rebind(pod, _) if pods > 0 => Some(pod % pods),
                _ => None,
            })
            .collect()
    }

    /// `before` changed by each of `changes` in turn, and what was
    /// `carried` from it with every change noted.
    fn changed(before: &Snapshot, mut carried: Carried, changes: &[Change]) -> (Snapshot, Carried) {
        let mut after = before.clone();
        for change in changes {
            apply(&mut after, change, &mut carried);
        }
        (after, carried)
    }

    /// A fresh topology base of the set-up's cluster.
    fn fresh_base(setup: &Setup<'_>, snapshot: &Snapshot) -> TopologyBase {
        setup.topology_base(
            snapshot,
            &HashSet::default(),
            &HashSet::default(),
            true,
            &mut LabelMemo::default(),
        )
    }

    proptest! {
        /// A topology base carried from an earlier copy of the cluster and
        /// updated for the pods rebound since reads as a fresh one, whatever
        /// else changed (nodes deleted, their claims relabelled).
        #[test]
        fn carried_topology_bases_read_as_fresh_ones(
            nodes in 1..6usize,
            pods in prop::collection::vec((any::<usize>(), 100..2000u32), 0..24),
            changes in prop::collection::vec(change(), 0..6),
        ) {
            let before = cluster(nodes, &pods);
            let first = Setup::new(&before);
            let base = fresh_base(&first, &before);
            let sources = first.topology_sources();
            let (after, carried) =
                changed(&before, first.carry(&before, Carried::default()), &changes);
            let taking = Setup::carrying(&after, Some(&carried), MinValuesPolicy::Strict);
            let moved = rebound(&changes, before.pods.len());
            prop_assert_eq!(carried.moved(), &moved[..]);
            let updated =
                taking.carried_topology_base(&after, &NodeNames::of(&after), base, &sources, &moved);
            prop_assert!(updated.is_some(), "a rebound pod is an update");
            let fresh = fresh_base(&Setup::new(&after), &after);
            prop_assert_eq!(updated.map(|b| b.canonical()), Some(fresh.canonical()));
        }

        /// A set-up that takes destinations carried from an earlier copy of
        /// the cluster reads the changed cluster exactly as a fresh set-up
        /// does, and takes unread the destinations of the nodes no change
        /// touched.
        #[test]
        fn carried_destinations_read_as_fresh_ones(
            nodes in 1..6usize,
            pods in prop::collection::vec((any::<usize>(), 100..2000u32), 0..24),
            changes in prop::collection::vec(change(), 0..6),
        ) {
            let before = cluster(nodes, &pods);
            let (after, carried) =
                changed(&before, Setup::new(&before).carry(&before, Carried::default()), &changes);
            let fresh = Setup::new(&after);
            let taking = Setup::carrying(&after, Some(&carried), MinValuesPolicy::Strict);
            let read = |setup: &Setup<'_>| {
                setup.existing.iter().map(|(i, n)| (*i, (**n).clone())).collect::<Vec<_>>()
            };
            prop_assert_eq!(read(&taking), read(&fresh));
            let first = Setup::new(&before);
            for (i, node) in &taking.existing {
                let unchanged = before.nodes[*i] == after.nodes[*i]
                    && first.bound.on(after.nodes[*i].name()).len()
                        == taking.bound.on(after.nodes[*i].name()).len()
                    && !changes.iter().any(|c| matches!(c, Change::Rebind(..)));
                if unchanged {
                    let name = after.nodes[*i].name();
                    prop_assert!(carried.nodes.get(name).is_some_and(|r| Arc::ptr_eq(&r.destination, node)));
                }
            }
        }

        /// Carrying on from a set-up that took destinations carried, told
        /// that the node names are distinct (so that the destinations taken
        /// are not looked up), keeps what carrying on without knowing keeps.
        #[test]
        fn carrying_on_with_distinct_names_keeps_the_same(
            nodes in 1..6usize,
            pods in prop::collection::vec((any::<usize>(), 100..2000u32), 0..24),
            changes in prop::collection::vec(change(), 0..6),
        ) {
            let before = cluster(nodes, &pods);
            let kept = |names_distinct: bool| {
                let (after, carried) =
                    changed(&before, Setup::new(&before).carry(&before, Carried::default()), &changes);
                let taking = Setup::carrying(&after, Some(&carried), MinValuesPolicy::Strict);
                let next = taking.carry_knowing(&after, carried, names_distinct);
                let mut kept: Vec<(String, super::ExistingNode)> = next
                    .nodes
                    .iter()
                    .map(|(name, read)| (name.clone(), (*read.destination).clone()))
                    .collect();
                kept.sort_by(|a, b| a.0.cmp(&b.0));
                kept
            };
            prop_assert!(before.nodes.iter().map(|n| n.name()).collect::<HashSet<_>>().len() == before.nodes.len());
            prop_assert_eq!(kept(true), kept(false));
        }
    }
}
