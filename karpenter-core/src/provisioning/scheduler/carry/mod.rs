//! What a scheduling set-up carries to the next set-up over a later copy of
//! its cluster, so that a disruption plan's later passes cost what the
//! commands between them changed rather than what the cluster holds.
//!
//! # What is carried
//!
//! A disruption plan builds a set-up (its simulator's [`Prepared`]) for each
//! of its passes, over the cluster as the commands before left it. Reading
//! the cluster is most of a set-up, and a command changes a few hundred nodes
//! at most. So a [`CarriedSetup`] takes from one set-up to the next:
//!
//! - the destinations read from the nodes, each with the Node it was read
//!   from, and the DaemonSet pods they made room for ([`destinations`]);
//! - the pods' index by node ([`BoundPods`]) and the nodes' index by name
//!   ([`NodeNames`]);
//! - the topology base, every placed pod counted, with what it read of the
//!   pools ([`CarriedTopology`]), and the placed pods' labels as it stored
//!   them ([`LabelMemo`]);
//! - the pods found pending.
//!
//! The next set-up takes each of these once ([`take_once`]); what it reads,
//! it carries on in turn ([`Prepared::carry`]).
//!
//! # The invariant
//!
//! Between two set-ups, the plan notes every change it made to the cluster
//! ([`CarriedSetup::note_changes`]): the nodes its commands take, the nodes
//! they move pods from and to, and the pods they move. A plan changes nothing
//! else a set-up carries: it never adds, removes or reorders a pod, only ever
//! adds nodes (the replacements), changes neither the pools nor the
//! DaemonSets, and changes the instance types only when a replacement takes
//! a capacity reservation, as a new copy of them. So everything not noted is
//! taken as it was: the next set-up reads the nodes noted again, updates the
//! indices, the topology base and the pending pods for the pods noted, and
//! takes the rest unread.
//!
//! What could change without a note is checked, not trusted:
//!
//! - a destination is taken only if its node's Node is the very object it
//!   was read from (`Arc::ptr_eq`; or neither has a Node, a claim still in
//!   flight): the destination holds the Node, and an `Arc` another holder
//!   shares cannot change in place ([`Arc::make_mut`] copies it first);
//! - no destination is taken unless the DaemonSet pods it made room for are
//!   the same;
//! - the topology base is taken only over the same pools' sources (each
//!   pool's requirements and taints, its instance types by address: a plan's
//!   copies of a cluster share them) and well-known labels, with no two
//!   nodes of one name; what its update does not handle it refuses, and the
//!   base is built afresh ([`TopologyBase::carried_over`]);
//! - the pods' index is taken only over as many pods as it read, the nodes'
//!   index only over at least as many nodes;
//! - the label memo knows a pod by its address, which stays the pod's own
//!   while the memo holds it.
//!
//! So a set-up that takes what was carried reads the cluster exactly as a
//! fresh set-up does: a destination, an index entry or a counted pod is taken
//! unread only when what it was read from is unchanged, by the plan's notes or
//! by these checks, and all else is read again. Every run from it, and every
//! command a pass finds, is the one a fresh pass finds. The disruption plan
//! carries its candidates' assessments from pass to pass on the same notes
//! (`disruption/carry.rs`).
//!
//! # How it is held to fresh set-ups
//!
//! The unit tests' builds hold every set-up that takes what was carried to a
//! fresh one: its destinations and pods' index ([`Setup::carrying`]), its
//! nodes' index, topology base and pending pods ([`Prepared::carrying`]).
//! So every unit test that plans disruption checks the plan's notes, among
//! them the planner's property test over random clusters whose commands move
//! pods (`carried_candidates_read_as_fresh_ones` in
//! `disruption/planner/tests.rs`, which fails if the plan does not note the
//! nodes its commands move pods from and to). The property tests of this
//! module (`tests.rs`: `carried_destinations_read_as_fresh_ones`,
//! `carried_topology_bases_read_as_fresh_ones`,
//! `carrying_on_with_distinct_names_keeps_the_same`) and of the pods' index
//! (`rebound_pods_read_as_fresh`) change random clusters, noting each change
//! as a plan does, and hold what is carried to what a fresh set-up reads.
//!
//! What each piece saved is measured in `docs/performance.md` ("The
//! incremental passes").
//!
//! [`Prepared`]: super::prepared::Prepared
//! [`Prepared::carry`]: super::prepared::Prepared::carry
//! [`Prepared::carrying`]: super::prepared::Prepared::carrying
//! [`Setup::carrying`]: super::setup::Setup::carrying
//! [`TopologyBase::carried_over`]: crate::provisioning::topology::TopologyBase::carried_over

mod destinations;
mod node_names;
mod pods_by_node;
mod topology_base;

#[cfg(test)]
mod tests;

pub(crate) use node_names::NodeNames;
pub(crate) use pods_by_node::BoundPods;
pub(crate) use topology_base::{CarriedTopology, TopologySources};

use std::sync::{Arc, Mutex, PoisonError};

use super::existing::ExistingNode;
use crate::fast_hash::HashSet;
use crate::provisioning::demand::daemons::DaemonPod;
use crate::provisioning::topology::LabelMemo;
use crate::snapshot::ClusterNode;
use destinations::CarriedDestinations;

/// What one set-up read, for the next set-up over a later copy of its
/// cluster to take where nothing changed (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct CarriedSetup {
    /// The destinations, each with what it was read from.
    destinations: CarriedDestinations,
    /// The nodes changed since (see [`CarriedSetup::note_changes`]), by name.
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

impl CarriedSetup {
    /// Whether nothing is carried: no pass before this one built a set-up.
    pub(crate) fn is_empty(&self) -> bool {
        self.destinations.is_empty()
    }

    /// Notes a change to the cluster these were read from: the pods at
    /// `moved` (indices into the snapshot's pods) are bound elsewhere now,
    /// and the `nodes` named changed (taken, or their pods moved). Every
    /// change between the set-up that carried these and the next must be
    /// noted (see the module documentation).
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
    pub(super) fn moved(&self) -> &[usize] {
        &self.moved
    }

    /// These destinations, if they made room for the same `daemons`: none of
    /// them is of use otherwise.
    pub(super) fn for_daemons(&self, daemons: &[DaemonPod]) -> Option<&CarriedSetup> {
        self.destinations.made_room_for(daemons).then_some(self)
    }

    /// The destination read from `node`, if it is carried and the node has
    /// not changed since (see the module documentation).
    pub(super) fn get(&self, node: &ClusterNode) -> Option<Arc<ExistingNode>> {
        if self.changed.contains(node.name()) {
            return None;
        }
        self.destinations.get(node)
    }

    /// The destinations of a set-up to carry to the next: each of
    /// `destinations` (with the node it was read from, and whether it was
    /// taken from `self` unread); those taken keep what they were read
    /// from. `names_distinct` says that no two of the cluster's nodes share
    /// a name. The changes noted are cleared: the next set-up starts from
    /// this one's cluster.
    pub(super) fn next<'a, I>(
        mut self,
        daemons: &[DaemonPod],
        destinations: I,
        names_distinct: bool,
    ) -> CarriedSetup
    where
        I: Iterator<Item = (&'a ClusterNode, &'a Arc<ExistingNode>, bool)> + Clone,
    {
        self.destinations
            .update(&self.changed, daemons, destinations, names_distinct);
        self.changed.clear();
        self.moved.clear();
        self
    }

    /// These, with `labels` as the stored labels to carry.
    pub(super) fn with_labels(self, labels: LabelMemo) -> CarriedSetup {
        CarriedSetup {
            labels: Mutex::new(labels),
            ..self
        }
    }

    /// These, with `topology` as the topology base to carry.
    pub(super) fn with_topology(self, topology: Option<CarriedTopology>) -> CarriedSetup {
        CarriedSetup {
            topology: Mutex::new(topology),
            ..self
        }
    }

    /// These, with `names` as the node index by name to carry.
    pub(super) fn with_names(self, names: NodeNames) -> CarriedSetup {
        CarriedSetup {
            names: Mutex::new(Some(names)),
            ..self
        }
    }

    /// These, with `pending` as the pending pods to carry.
    pub(super) fn with_pending(self, pending: Vec<usize>) -> CarriedSetup {
        CarriedSetup {
            pending: Mutex::new(Some(pending)),
            ..self
        }
    }

    /// These, with `bound` as the pods' index to carry.
    pub(super) fn with_bound(self, bound: BoundPods) -> CarriedSetup {
        CarriedSetup {
            bound: Mutex::new(Some(bound)),
            ..self
        }
    }

    /// Takes the pending pods carried, if any, leaving none.
    pub(super) fn take_pending(&self) -> Option<Vec<usize>> {
        take_once(&self.pending)
    }

    /// Takes the node index by name carried, if any, leaving none.
    pub(super) fn take_names(&self) -> Option<NodeNames> {
        take_once(&self.names)
    }

    /// Takes the topology base carried, if any, leaving none.
    pub(super) fn take_topology(&self) -> Option<CarriedTopology> {
        take_once(&self.topology)
    }

    /// Takes the pods' index carried, if any, leaving none.
    pub(super) fn take_bound(&self) -> Option<BoundPods> {
        take_once(&self.bound)
    }

    /// Takes the stored labels carried, leaving none.
    pub(super) fn take_labels(&self) -> LabelMemo {
        take_once(&self.labels)
    }
}

/// What `slot` holds, leaving its default: a set-up takes each thing carried
/// once, through a shared `CarriedSetup`. A poisoned slot is still whole
/// (what goes in goes in complete).
fn take_once<T: Default>(slot: &Mutex<T>) -> T {
    std::mem::take(&mut *slot.lock().unwrap_or_else(PoisonError::into_inner))
}
