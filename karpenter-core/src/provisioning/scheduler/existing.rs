//! Capacity that already exists: nodes, and claims launched but not yet
//! registered. Pods go there first.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::Taint;

use crate::pods::{is_daemon_pod, is_terminal};
use crate::provisioning::demand::attach::{self, Attached};
use crate::provisioning::demand::daemons::DaemonPod;
use crate::provisioning::demand::host_ports::{HostPort, conflict, host_ports};
use crate::provisioning::demand::pending_pod::PendingPod;
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    LABEL_HOSTNAME, Requirements, WellKnownLabels, tolerates_all, uninitialized_node_taints,
};
use crate::snapshot::{ClusterNode, Snapshot};

/// A node (or in-flight claim) as a destination for pending pods.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExistingNode {
    /// The node's name.
    pub name: String,
    /// The name upstream's cluster state gives it
    /// ([`ClusterNode::state_name`]), which orders destinations.
    pub state_name: String,
    /// Whether it is initialized (initialized nodes are tried first).
    pub initialized: bool,
    /// Its labels as requirements, with its hostname.
    pub requirements: Requirements,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// The taints pods must tolerate now.
    pub taints: Vec<Taint>,
    /// What is left: allocatable less bound pods and the daemons still to come.
    pub available: ResourceList,
    /// Host ports bound by its pods.
    pub host_ports: Vec<HostPort>,
    /// The claims its pods attach, by CSI driver.
    pub attached: Attached,
    /// How many claims of each CSI driver it may attach (its CSINode's;
    /// none for a claim with no Node yet, as upstream).
    pub attach_limits: BTreeMap<String, u32>,
    /// Pending pods placed here by this plan (indices of the pending pods).
    pub pods: Vec<usize>,
}

impl ExistingNode {
    /// A destination from a cluster node and the pods bound to it, their
    /// volumes read in `snapshot`.
    pub(crate) fn new(
        node: &ClusterNode,
        bound: &[&Arc<PodInfo>],
        daemons: &[DaemonPod],
        snapshot: &Snapshot,
    ) -> ExistingNode {
        let name = node.name().to_string();
        let mut labels = node.labels().cloned().unwrap_or_default();
        labels
            .entry(LABEL_HOSTNAME.to_string())
            .or_insert_with(|| name.clone());
        let initialized = node.is_initialized();
        let mut taints = node.taints();
        if node.is_managed() && !initialized {
            // A node still starting carries taints it will lose (not-ready, startup
            // taints): upstream schedules past them.
            let startup = node
                .node_claim
                .as_ref()
                .map(|c| c.spec.startup_taints().to_vec());
            taints = uninitialized_node_taints(&taints, startup.as_deref().unwrap_or_default())
                .cloned()
                .collect();
        }
        let requirements = Requirements::from_labels(&labels);
        let mut used = ResourceList::new();
        let mut bound_daemons = ResourceList::new();
        let mut ports = Vec::new();
        // Limits come from the Node's CSINode: an in-flight claim has none.
        let attach_limits = match &node.node {
            Some(_) => attach::limits(&snapshot.csi_nodes, &name),
            None => BTreeMap::new(),
        };
        let mut attached = Attached::new();
        for pod in bound.iter().filter(|p| !is_terminal(p)) {
            let Some(spec) = pod.spec.as_ref() else {
                continue;
            };
            if !attach_limits.is_empty() {
                attach::attach(&mut attached, &attach::attached(snapshot, pod.as_ref()));
            }
            let Ok(requests) = resources::pod_requests(spec) else {
                continue;
            };
            if is_daemon_pod(pod) {
                bound_daemons += &requests;
            }
            used += &requests;
            ports.extend(host_ports(spec));
        }
        // Daemons that will land on the node but are not running yet still need room.
        let mut expected_daemons = ResourceList::new();
        for daemon in daemons
            .iter()
            .filter(|d| d.runs_on_node(&requirements, &taints))
        {
            expected_daemons += &daemon.requests;
        }
        let daemons_to_come = expected_daemons
            .saturating_sub(&bound_daemons)
            .max(&ResourceList::new());
        let available = node
            .allocatable()
            .saturating_sub(&used)
            .saturating_sub(&daemons_to_come);
        ExistingNode {
            name,
            state_name: node.state_name().to_owned(),
            initialized,
            requirements,
            labels,
            taints,
            available,
            host_ports: ports,
            attached,
            attach_limits,
            pods: Vec::new(),
        }
    }

    /// Whether the pod may go here as far as the node itself is concerned (taints,
    /// host ports, volume attach limits, resources, labels); topology is
    /// checked by the scheduler.
    ///
    /// A yes or no, with no why: a pod is tried against every node until one
    /// takes it, and a refusal is never reported (a pod no node takes is
    /// reported with why no claim could take it), so words for the thousands
    /// of refusals of a big cluster would be written for nobody.
    pub(crate) fn admits(&self, pod: &PendingPod, pod_ports: &[HostPort]) -> bool {
        let tolerations = pod.spec.tolerations.as_deref().unwrap_or_default();
        // Cheapest first: most nodes of a busy cluster are too full.
        pod.requests.fits(&self.available)
            && conflict(&self.host_ports, pod_ports).is_none()
            && !attach::exceeds(&self.attach_limits, &self.attached, &pod.attached)
            && tolerates_all(&self.taints, tolerations).is_ok()
            // A node's labels are concrete: no well-known label is left undefined.
            && self
                .requirements
                .is_compatible(&pod.requirements, &WellKnownLabels::empty())
    }

    /// Places the pod here.
    pub(crate) fn add(&mut self, pod_index: usize, pod: &PendingPod, pod_ports: Vec<HostPort>) {
        self.available = self.available.saturating_sub(&pod.requests);
        self.host_ports.extend(pod_ports);
        if !self.attach_limits.is_empty() {
            attach::attach(&mut self.attached, &pod.attached);
        }
        self.pods.push(pod_index);
    }
}

/// An existing node as one scheduling run has it: shared with the other runs
/// of a cluster (a disruption pass starts one per candidate, each with every
/// node) until a pod lands on it, then the run's own copy. A pointer either
/// way, so that the runs share the nodes without counting references, and
/// trying a pod on every node reads each through one pointer.
#[derive(Debug)]
pub(crate) enum Destination<'s> {
    /// The node as the runs share it, no pod placed yet.
    Shared(&'s ExistingNode),
    /// The run's own copy, with the pods it placed.
    Own(Box<ExistingNode>),
}

impl Destination<'_> {
    /// The node, made the run's own to change.
    pub(crate) fn to_mut(&mut self) -> &mut ExistingNode {
        if let Destination::Shared(node) = *self {
            *self = Destination::Own(Box::new(node.clone()));
        }
        match self {
            Destination::Own(node) => node,
            Destination::Shared(_) => unreachable!("made the run's own above"),
        }
    }
}

impl std::ops::Deref for Destination<'_> {
    type Target = ExistingNode;

    fn deref(&self) -> &ExistingNode {
        match self {
            Destination::Shared(node) => node,
            Destination::Own(node) => node,
        }
    }
}

/// Whether a cluster node can take pods: not being deleted and not tainted for
/// disruption.
pub(crate) fn is_destination(node: &ClusterNode) -> bool {
    !node.is_marked_for_deletion()
}
