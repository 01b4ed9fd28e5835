//! Many scheduling runs from one cluster.
//!
//! [`Prepared`] keeps a [`Setup`], the topology base and the pending pods of a
//! cluster, so that a disruption pass can ask "what if these nodes were
//! gone?" many times: each run takes the nodes out of what is already built
//! (sharing templates, destinations and counted pods) instead of rebuilding
//! the cluster without them. The runs decide exactly as a scheduler over the
//! changed snapshot would.
//!
//! A [`Prepared`] is `Sync`, so runs may start from it on several threads:
//! what the runs share is read-only or behind thread-safe memos (the
//! templates' type caches, the topology base), and each run's own state (the
//! destinations it fills, its claims, its topology counts) is in its
//! [`Scheduler`], which borrows the destinations until a pod lands on one.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use crate::pods::PodInfo;

use super::carry::{CarriedSetup, CarriedTopology, NodeNames};
use super::existing::Destination;
use super::setup::{Setup, read_pending, read_virtual};
use super::solve::{Fence, Scheduler, view};
use crate::fast_hash::HashSet;
use crate::planning::MinValuesPolicy;
use crate::pods::is_pending;
use crate::provisioning::demand::pending_pod::{PendingPod, Rejected};
use crate::provisioning::topology::{LabelMemo, PodView, Topology, TopologyBase};
use crate::snapshot::Snapshot;

/// A cluster ready for many scheduling runs that each take some of its nodes
/// away (see the module documentation).
pub(crate) struct Prepared<'s> {
    snapshot: &'s Snapshot,
    setup: Setup<'s>,
    topology: Arc<TopologyBase>,
    /// The cluster's pending pods, with their index in the snapshot's pods.
    pending: Vec<(usize, Result<PendingPod<'s>, Rejected>)>,
    /// The CapacityBuffers' virtual pods every run plans after the others
    /// (none with the gate off).
    virtual_pending: Vec<Result<PendingPod<'s>, Rejected>>,
    /// The snapshot's node indices by name.
    nodes_by_name: NodeNames,
    /// The placed pods' labels as the topology base stored them, for the
    /// next set-up to [carry](Prepared::carry).
    labels_read: Mutex<LabelMemo>,
}

impl<'s> Prepared<'s> {
    /// Builds what every run shares, its templates keeping the types
    /// `policy` lets them, taking what an earlier set-up `carried` where the
    /// cluster has not changed since (see [`carry`](super::carry)); with
    /// `buffers`, every run plans the CapacityBuffers' virtual pods too.
    pub(crate) fn carrying(
        snapshot: &'s Snapshot,
        carried: Option<&CarriedSetup>,
        policy: MinValuesPolicy,
        buffers: bool,
    ) -> Prepared<'s> {
        let setup = Setup::carrying(snapshot, carried, policy);
        let nodes_by_name = carried.and_then(CarriedSetup::take_names).map_or_else(
            || NodeNames::of(snapshot),
            |names| names.carried_over(snapshot),
        );
        // The unit tests hold every index carried so to a fresh one.
        #[cfg(test)]
        assert_eq!(
            nodes_by_name,
            NodeNames::of(snapshot),
            "a carried name index differs"
        );
        // Set-ups over copies of one cluster follow this one: what it stores
        // is kept for them.
        let labels_read = carried.map(CarriedSetup::take_labels).unwrap_or_default();
        let mut labels_read = labels_read.keeping_pods();
        let updated = carried.and_then(|c| {
            let t = c.take_topology()?;
            setup.carried_topology_base(snapshot, &nodes_by_name, t.base, &t.sources, c.moved())
        });
        // The unit tests hold every carried base to a fresh one.
        #[cfg(test)]
        if let Some(base) = &updated {
            let fresh = setup.topology_base(
                snapshot,
                &HashSet::default(),
                &HashSet::default(),
                true,
                &mut LabelMemo::default(),
            );
            assert_eq!(
                base.canonical(),
                fresh.canonical(),
                "a carried topology base differs from a fresh one"
            );
        }
        let topology = Arc::new(updated.unwrap_or_else(|| {
            setup.topology_base(
                snapshot,
                &HashSet::default(),
                &HashSet::default(),
                true,
                &mut labels_read,
            )
        }));
        let pending = pending_pods(snapshot, carried)
            .into_iter()
            .map(|i| (i, read_pending(snapshot, &snapshot.pods[i])))
            .collect();
        Prepared {
            snapshot,
            setup,
            topology,
            pending,
            virtual_pending: read_virtual(snapshot, buffers),
            nodes_by_name,
            labels_read: Mutex::new(labels_read),
        }
    }

    /// The indices of the snapshot's nodes named `name`, in order.
    pub(crate) fn nodes_named(&self, name: &str) -> &[usize] {
        self.nodes_by_name.get(name)
    }

    /// The snapshot's pods bound to the node named `name`, in order.
    pub(crate) fn bound_to(&self, name: &str) -> impl Iterator<Item = &'s Arc<PodInfo>> + '_ {
        let pods = &self.snapshot.pods;
        self.setup.bound.on(name).iter().map(move |&i| &pods[i])
    }

    /// The indices in the snapshot's pods of those bound to the node named
    /// `name`, in order.
    pub(crate) fn bound_indices(&self, name: &str) -> impl Iterator<Item = usize> + '_ {
        self.setup.bound.on(name).iter().copied()
    }

    /// A scheduler for the cluster without the nodes at `removed` (indices
    /// into the snapshot's nodes) and every pod bound to them, with `moved`
    /// (indices into the snapshot's pods, bound to removed nodes) pending
    /// again, fenced by `fence`. New nodes' daemon overhead stays what the
    /// whole cluster's DaemonSet pods ask, as upstream's cluster state keeps
    /// them whatever becomes of their nodes.
    pub(crate) fn scheduler(
        &self,
        removed: &BTreeSet<usize>,
        moved: &[usize],
        fence: Fence,
    ) -> Scheduler<'_> {
        let snapshot = self.snapshot;
        // Whether each node is removed, for a look-up per destination.
        let mut gone = vec![false; snapshot.nodes.len()];
        for &i in removed {
            if let Some(slot) = gone.get_mut(i) {
                *slot = true;
            }
        }
        // Sized for all: a filtered collect would grow the list a dozen times.
        let mut existing: Vec<Destination<'_>> = Vec::with_capacity(self.setup.existing.len());
        existing.extend(
            self.setup
                .existing
                .iter()
                .filter(|(i, _)| !gone[*i])
                .map(|(_, n)| Destination::Shared(n.as_ref())),
        );
        // Pending pods in snapshot order, the moved ones among them.
        let mut pods =
            Vec::with_capacity(self.pending.len() + moved.len() + self.virtual_pending.len());
        let mut rejected = Vec::new();
        let mut cluster = self.pending.iter().peekable();
        let mut moved = moved.iter().copied().peekable();
        loop {
            let next_moved = moved.peek().copied();
            let next_pending = cluster.peek().map(|(i, _)| *i);
            let result = match (next_pending, next_moved) {
                (Some(p), Some(m)) if p < m => cluster.next().map(|(_, r)| r.clone()),
                (Some(_), None) => cluster.next().map(|(_, r)| r.clone()),
                (_, Some(m)) => {
                    moved.next();
                    Some(read_pending(snapshot, &snapshot.pods[m]))
                }
                (None, None) => None,
            };
            match result {
                Some(Ok(pod)) => pods.push(pod),
                Some(Err(why)) => rejected.push(why),
                None => break,
            }
        }
        for result in &self.virtual_pending {
            match result {
                Ok(pod) => pods.push(pod.clone()),
                Err(why) => rejected.push(why.clone()),
            }
        }
        let views: Vec<PodView<'_>> = pods.iter().map(view).collect();
        let removal = self.topology.removed(removed);
        let topology = Topology::without(Arc::clone(&self.topology), removal, &views);
        drop(views);
        let limits = self.setup.limits(removed);
        let mut scheduler =
            Scheduler::assemble(&self.setup, existing, limits, pods, rejected, topology);
        scheduler.fence = fence;
        scheduler
    }

    /// What this set-up read, to carry to a later copy of this cluster: the
    /// destinations and pods' index (see [`Setup::carry`]), the stored
    /// labels, the topology base (when no run holds it any more), the node
    /// index by name and the pending pods.
    pub(crate) fn carry(self, previous: CarriedSetup) -> CarriedSetup {
        let labels = self
            .labels_read
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let topology = Arc::try_unwrap(self.topology)
            .ok()
            .map(|base| CarriedTopology {
                base,
                sources: self.setup.topology_sources(),
            });
        let names_distinct = self.nodes_by_name.all_distinct();
        self.setup
            .carry_knowing(self.snapshot, previous, names_distinct)
            .with_labels(labels)
            .with_topology(topology)
            .with_names(self.nodes_by_name)
            .with_pending(self.pending.iter().map(|(i, _)| *i).collect())
    }
}

/// The indices of the snapshot's pending pods, in order. A set-up over an
/// earlier copy of the cluster (`carried`) knew the pods pending then; of
/// the others, only those noted moved since can be pending now (a plan binds
/// pods to nodes, see [`carry`](super::carry)).
fn pending_pods(snapshot: &Snapshot, carried: Option<&CarriedSetup>) -> Vec<usize> {
    let is_pending_at = |i: usize| snapshot.pods.get(i).is_some_and(is_pending);
    let every_pending = || {
        (0..snapshot.pods.len())
            .filter(|&i| is_pending_at(i))
            .collect()
    };
    let pending: Vec<usize> = match carried.and_then(CarriedSetup::take_pending) {
        Some(mut before) => {
            before.extend_from_slice(carried.map_or(&[], CarriedSetup::moved));
            before.sort_unstable();
            before.dedup();
            before.retain(|&i| is_pending_at(i));
            before
        }
        None => every_pending(),
    };
    // The unit tests hold every list carried so to a fresh one.
    #[cfg(test)]
    assert_eq!(
        pending,
        every_pending(),
        "a carried list of pending pods differs"
    );
    pending
}
