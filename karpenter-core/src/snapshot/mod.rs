//! The cluster as the engine sees it at one moment: what planning reads.
//!
//! A snapshot is plain data. `karpenter-sim` builds one from manifests; a controller
//! builds one from its informer cache and its cloud provider; a test or a program
//! writes one in code with the builders of [`build`] (a NodePool, a pod, an existing
//! node joined to its NodeClaim). The planners read it and never change it.

pub mod build;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, Taint,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};

use crate::api::Conditions as _;
use crate::api::{NodeClaim, NodePool, condition_types};
use crate::capacity_buffers::CapacityBuffers;
use crate::cloudprovider::{InstanceType, LaunchRank, OfferingKey};
use crate::fast_hash::HashMap;
use crate::pods::{PodInfo, PodInterner};
use crate::resources::ResourceList;
use crate::scheduling::{
    DISRUPTED_TAINT_KEY, NODE_INITIALIZED_LABEL_KEY, NODE_POOL_LABEL_KEY,
    NODE_REGISTERED_LABEL_KEY, WellKnownLabels,
};

/// The resource NodePool limits count nodes with (`limits.nodes`).
pub const NODES_RESOURCE: &str = "nodes";

/// Everything planning reads.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The NodePools.
    pub node_pools: Vec<NodePool>,
    /// The provider's instance types for each NodePool, by the pool's name,
    /// unavailable offerings included.
    pub instance_types: BTreeMap<String, Arc<[InstanceType]>>,
    /// Nodes and NodeClaims, joined: a node with its claim, a claim still in flight,
    /// or a node Karpenter does not manage.
    pub nodes: Vec<ClusterNode>,
    /// Every pod: pending, bound, finished and daemon pods alike, as
    /// planning reads them ([`PodInfo`]). Shared: cloning a snapshot copies
    /// pointers, not pods; change one with [`Arc::make_mut`].
    pub pods: Vec<Arc<PodInfo>>,
    /// DaemonSets, whose pods land on every new node they tolerate.
    pub daemon_sets: Vec<DaemonSet>,
    /// PodDisruptionBudgets.
    pub pod_disruption_budgets: Vec<PodDisruptionBudget>,
    /// PersistentVolumeClaims, for volume topology.
    pub persistent_volume_claims: Vec<PersistentVolumeClaim>,
    /// PersistentVolumes, for volume topology.
    pub persistent_volumes: Vec<PersistentVolume>,
    /// StorageClasses, for volume topology.
    pub storage_classes: Vec<StorageClass>,
    /// CSINodes: each node's volume attach limits per CSI driver (a node
    /// without one has none).
    pub csi_nodes: Vec<CSINode>,
    /// The Namespaces: their labels are what a pod (anti-)affinity term's
    /// `namespaceSelector` selects (a namespace not listed here has only the
    /// `kubernetes.io/metadata.name` label the API server gives every one).
    pub namespaces: Vec<Namespace>,
    /// The CapacityBuffers, resolved against the PodTemplates and workloads
    /// they name: headroom the planners keep with the `CapacityBuffer`
    /// feature gate on (see [`crate::capacity_buffers`]).
    pub capacity_buffers: CapacityBuffers,
    /// The label keys left to instance types to define: the core's and the
    /// provider's.
    pub well_known_labels: WellKnownLabels,
    /// How the provider ranks the offerings a claim allows (what its `create`
    /// launches first): the plan's `launch` follows it.
    pub launch_rank: LaunchRank,
    /// What the cloud provider's drift check (`is_drifted`) reports, by
    /// NodeClaim name: the reason each drifted claim gives. A controller fills
    /// it from its provider; scenario files leave it empty (a claim's
    /// `Drifted` condition says the same).
    pub provider_drift: BTreeMap<String, String>,
}

impl Snapshot {
    /// Takes one unit of reservation `id` from every offering of it (an
    /// offering left with none becomes unavailable): what a provider reports
    /// once an instance launched into it. Used by a plan's later passes.
    pub(crate) fn take_reservation(&mut self, id: &str) {
        self.edit_instance_types(
            |t| t.offerings.iter().any(|o| o.reservation_id() == Some(id)),
            |t| t.use_reservations(|r| u32::from(r == id)),
        );
    }

    /// Marks every offering that launches into a capacity reservation
    /// unavailable, and says how many distinct offerings were: what a
    /// provider offers while upstream's `ReservedCapacity` gate is off
    /// (upstream's providers list reserved offerings only with it on). The
    /// driver and `karpenter-sim` call it when the gate is off; with the gate
    /// off and reserved offerings left in, the engine plans them as ordinary
    /// offerings, uncounted, as upstream's core does.
    pub fn withhold_reservations(&mut self) -> usize {
        fn reserved(t: &InstanceType) -> impl Iterator<Item = OfferingKey> + '_ {
            t.offerings
                .iter()
                .filter(|o| o.available && o.reservation.is_some())
                .map(move |o| OfferingKey::of(t, o))
        }
        let withheld: std::collections::BTreeSet<_> = self
            .instance_types
            .values()
            .flat_map(|types| types.iter().flat_map(reserved))
            .collect();
        self.edit_instance_types(
            |t| reserved(t).next().is_some(),
            |t| t.mark_unavailable(|o| o.reservation.is_some()),
        );
        withheld.len()
    }

    /// Applies `edit` to every type of each pool's list that has a type
    /// `touches` picks, on a copy of the list: pools often share one list,
    /// and each such list is copied once and stays shared.
    fn edit_instance_types(
        &mut self,
        touches: impl Fn(&InstanceType) -> bool,
        edit: impl Fn(&mut InstanceType),
    ) {
        let mut copies: Vec<(*const InstanceType, Arc<[InstanceType]>)> = Vec::new();
        for types in self.instance_types.values_mut() {
            let address = types.as_ptr();
            if let Some((_, copy)) = copies.iter().find(|(a, _)| *a == address) {
                *types = Arc::clone(copy);
                continue;
            }
            if !types.iter().any(&touches) {
                continue;
            }
            let mut owned = types.to_vec();
            owned.iter_mut().for_each(&edit);
            let copy: Arc<[InstanceType]> = owned.into();
            copies.push((address, Arc::clone(&copy)));
            *types = copy;
        }
    }

    /// This snapshot with `types` as the instance types of the NodePool named
    /// `pool` (replacing any it had).
    #[must_use]
    pub fn with_instance_types(
        mut self,
        pool: impl Into<String>,
        types: Vec<InstanceType>,
    ) -> Self {
        self.instance_types.insert(pool.into(), Arc::from(types));
        self
    }

    /// This snapshot with `pods` added after those it has, read as planning
    /// reads them ([`PodInfo`]), replicas sharing their specs.
    #[must_use]
    pub fn with_pods<P: std::borrow::Borrow<Pod>>(
        mut self,
        pods: impl IntoIterator<Item = P>,
    ) -> Self {
        let mut interner = PodInterner::new();
        self.pods.extend(
            pods.into_iter()
                .map(|pod| Arc::new(interner.pod_info(pod.borrow()))),
        );
        self
    }
}

/// A node of the cluster: a Node, a NodeClaim, or both joined.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterNode {
    /// The Node, once it has registered. Shared, as a watch cache holds it;
    /// change it with [`Arc::make_mut`].
    pub node: Option<Arc<Node>>,
    /// The NodeClaim, for a node Karpenter launched.
    pub node_claim: Option<NodeClaim>,
}

impl ClusterNode {
    /// The Node's name, else the NodeClaim's `status.nodeName`, else the NodeClaim's
    /// own name.
    pub fn name(&self) -> &str {
        if let Some(name) = self.node.as_ref().and_then(|n| n.metadata.name.as_deref()) {
            return name;
        }
        let claim = self.node_claim.as_ref();
        let status_name = claim.and_then(|c| c.status.as_ref()?.node_name.as_deref());
        status_name
            .or_else(|| claim.and_then(|c| c.name()))
            .unwrap_or_default()
    }

    /// The name upstream's cluster state gives the node (`StateNode.Name()`),
    /// which orders existing nodes on ties: the NodeClaim's name while there
    /// is no Node or a managed Node is not registered yet (no
    /// `karpenter.sh/registered: "true"` label), else the Node's. Pods bind
    /// to the Node's name, which [`name`](Self::name) gives.
    pub fn state_name(&self) -> &str {
        let claim_name = self.node_claim.as_ref().and_then(|c| c.name());
        let node_name = self.node.as_ref().and_then(|n| n.metadata.name.as_deref());
        let registered = !self.is_managed()
            || self
                .node
                .as_ref()
                .and_then(|n| n.metadata.labels.as_ref())
                .and_then(|labels| labels.get(NODE_REGISTERED_LABEL_KEY))
                .is_some_and(|v| v == "true");
        match (node_name, claim_name) {
            (Some(node), Some(claim)) => {
                if registered {
                    node
                } else {
                    claim
                }
            }
            (Some(node), None) => node,
            (None, Some(claim)) => claim,
            (None, None) => self.name(),
        }
    }

    /// The labels: the Node's, else the NodeClaim's.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        match &self.node {
            Some(node) => node.metadata.labels.as_ref(),
            None => self.node_claim.as_ref()?.metadata.labels.as_ref(),
        }
    }

    /// The NodePool it belongs to (`karpenter.sh/nodepool`), if Karpenter manages it.
    pub fn node_pool(&self) -> Option<&str> {
        self.labels()?.get(NODE_POOL_LABEL_KEY).map(String::as_str)
    }

    /// Whether Karpenter manages it.
    pub fn is_managed(&self) -> bool {
        self.node_pool().is_some()
    }

    /// Whether it has no Node yet: a claim still launching or registering.
    pub fn is_in_flight(&self) -> bool {
        self.node.is_none()
    }

    /// Whether it is initialized: an unmanaged node always is (once it has a
    /// Node); a managed one only when its Node carries
    /// `karpenter.sh/initialized=true`, as upstream's `StateNode.Initialized`
    /// reads it (the NodeClaim's `Initialized` condition is not enough: the
    /// label is what the scheduler and kube-scheduler see).
    pub fn is_initialized(&self) -> bool {
        if !self.is_managed() {
            return self.node.is_some();
        }
        self.node
            .as_ref()
            .and_then(|n| n.metadata.labels.as_ref())
            .is_some_and(|labels| {
                labels
                    .get(NODE_INITIALIZED_LABEL_KEY)
                    .is_some_and(|v| v == "true")
            })
    }

    /// Whether its NodeClaim says the instance is terminating.
    pub fn is_instance_terminating(&self) -> bool {
        self.node_claim.as_ref().is_some_and(|claim| {
            claim
                .status
                .as_ref()
                .is_some_and(|s| s.conditions.is_true(condition_types::INSTANCE_TERMINATING))
        })
    }

    /// Whether it is being deleted, as upstream's `StateNode.Deleted` reads it:
    /// its NodeClaim has a deletion timestamp or says its instance is
    /// terminating; without a NodeClaim, its Node has a deletion timestamp. (A
    /// Node deleted under a live NodeClaim is not: the claim decides.)
    pub fn is_deleting(&self) -> bool {
        match (&self.node_claim, &self.node) {
            (Some(claim), _) => {
                claim.metadata.deletion_timestamp.is_some() || self.is_instance_terminating()
            }
            (None, Some(node)) => node.metadata.deletion_timestamp.is_some(),
            (None, None) => false,
        }
    }

    /// Whether it is on its way out, as upstream's `StateNode.MarkedForDeletion`:
    /// being deleted, or taken by a disruption command (tainted
    /// `karpenter.sh/disrupted`, which a command puts on its candidates). Such a
    /// node takes no pods and does not count against its NodePool's limits.
    pub fn is_marked_for_deletion(&self) -> bool {
        self.is_deleting() || self.taints().iter().any(|t| t.key == DISRUPTED_TAINT_KEY)
    }

    /// The Node's taints, else the NodeClaim's (with its startup taints).
    pub fn taints(&self) -> Vec<Taint> {
        if let Some(node) = &self.node {
            return node
                .spec
                .as_ref()
                .and_then(|s| s.taints.clone())
                .unwrap_or_default();
        }
        let Some(claim) = &self.node_claim else {
            return Vec::new();
        };
        let mut taints = claim.spec.taints().to_vec();
        taints.extend_from_slice(claim.spec.startup_taints());
        taints
    }

    /// What it has, with `nodes: 1` (what NodePool limits count): the Node's
    /// `status.capacity`; while a managed node is not initialized, each
    /// resource the Node reports as zero or not at all comes from its
    /// NodeClaim's status (a GPU node whose device plugin has not registered
    /// yet), and without a Node all of it does, as upstream's
    /// `StateNode.Capacity`. Quantities that do not parse count as nothing.
    pub fn capacity(&self) -> ResourceList {
        let node = self.node.as_ref().and_then(|n| n.status.as_ref());
        let claim = self.node_claim.as_ref().and_then(|c| c.status.as_ref());
        let mut capacity = self.while_starting(
            node.and_then(|s| s.capacity.as_ref()).map(parse_node_list),
            claim
                .and_then(|s| s.capacity.as_ref())
                .map(parse_claim_list),
        );
        capacity.set(NODES_RESOURCE, 1000);
        capacity
    }

    /// What pods may use: the Node's `status.allocatable` (its capacity when
    /// it reports no allocatable at all, as a hand-written manifest may), with
    /// a starting node's missing or zero resources from its NodeClaim's status
    /// as for [`capacity`](Self::capacity) (upstream's `StateNode.Allocatable`).
    /// Quantities that do not parse count as nothing (the scenario loader
    /// refuses them before this point).
    pub fn allocatable(&self) -> ResourceList {
        let node = self.node.as_ref().and_then(|n| n.status.as_ref());
        let from_node = node.and_then(|s| {
            s.allocatable
                .as_ref()
                .filter(|a| !a.is_empty())
                .or(s.capacity.as_ref())
        });
        let claim = self.node_claim.as_ref().and_then(|c| c.status.as_ref());
        let from_claim = claim.and_then(|s| s.allocatable.as_ref().or(s.capacity.as_ref()));
        self.while_starting(
            from_node.map(parse_node_list),
            from_claim.map(parse_claim_list),
        )
    }

    /// The Node's list, or the claim's without a Node; while a managed node is
    /// not initialized, the Node's zero or missing resources taken from the
    /// claim's.
    fn while_starting(
        &self,
        from_node: Option<ResourceList>,
        from_claim: Option<ResourceList>,
    ) -> ResourceList {
        let Some(mut list) = from_node else {
            return from_claim.unwrap_or_default();
        };
        if self.node_claim.is_some() && !self.is_initialized() {
            for (name, milli) in from_claim.iter().flat_map(|c| c.iter()) {
                if list.get(name) == 0 {
                    list.set(name, milli);
                }
            }
        }
        list
    }
}

fn parse_node_list(
    list: &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
) -> ResourceList {
    ResourceList::from_quantities(list).unwrap_or_default()
}

fn parse_claim_list(list: &crate::api::Quantities) -> ResourceList {
    ResourceList::from_quantities(list.as_map()).unwrap_or_default()
}

/// Joins Nodes and NodeClaims: a claim goes with the node its `status.nodeName`
/// names, else with the node of its `status.providerID`. Nodes keep their order;
/// claims without a node follow, in their order.
///
/// The nodes may be owned (`Vec<Node>`) or shared (`Vec<Arc<Node>>`, as a
/// watch cache holds them); either way the joined nodes share them.
pub fn join_nodes(
    nodes: impl IntoIterator<Item: Into<Arc<Node>>>,
    claims: Vec<NodeClaim>,
) -> Vec<ClusterNode> {
    let nodes: Vec<Arc<Node>> = nodes.into_iter().map(Into::into).collect();
    let mut by_name = HashMap::default();
    let mut by_provider_id = HashMap::default();
    for (i, node) in nodes.iter().enumerate() {
        if let Some(name) = node.metadata.name.clone() {
            by_name.insert(name, i);
        }
        if let Some(id) = node.spec.as_ref().and_then(|s| s.provider_id.clone()) {
            by_provider_id.insert(id, i);
        }
    }
    let mut joined: Vec<ClusterNode> = nodes
        .into_iter()
        .map(|node| ClusterNode {
            node: Some(node),
            node_claim: None,
        })
        .collect();
    let mut in_flight = Vec::new();
    for claim in claims {
        let status = claim.status.as_ref();
        let by_node_name = status
            .and_then(|s| s.node_name.as_ref())
            .and_then(|n| by_name.get(n));
        let by_id = || {
            status
                .and_then(|s| s.provider_id.as_ref())
                .and_then(|id| by_provider_id.get(id))
        };
        match by_node_name.or_else(by_id).copied() {
            Some(i) if joined[i].node_claim.is_none() => joined[i].node_claim = Some(claim),
            _ => in_flight.push(ClusterNode {
                node: None,
                node_claim: Some(claim),
            }),
        }
    }
    joined.extend(in_flight);
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(labels: serde_json::Value, capacity: serde_json::Value) -> Node {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "n", "labels": labels},
            "status": {"capacity": capacity, "allocatable": capacity},
        }))
        .expect("a Node")
    }

    fn claim(capacity: serde_json::Value) -> NodeClaim {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c", "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {"nodeClassRef": {"group": "g", "kind": "K", "name": "n"}},
            "status": {"nodeName": "n", "capacity": capacity, "allocatable": capacity,
                "conditions": [{"type": "Initialized", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Initialized", "message": ""}]},
        }))
        .expect("a NodeClaim")
    }

    fn joined(labels: serde_json::Value) -> ClusterNode {
        let node = node(
            labels,
            serde_json::json!({"cpu": "4", "nvidia.com/gpu": "0"}),
        );
        let claim = claim(serde_json::json!({"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}));
        join_nodes(vec![node], vec![claim]).remove(0)
    }

    #[test]
    fn a_managed_node_is_initialized_by_its_nodes_label_only() {
        let starting = joined(serde_json::json!({"karpenter.sh/nodepool": "default"}));
        // The claim's Initialized condition does not make it so.
        assert!(!starting.is_initialized());
        let ready = joined(serde_json::json!({
            "karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true",
        }));
        assert!(ready.is_initialized());
    }

    #[test]
    fn a_starting_node_takes_what_its_node_lacks_from_its_claim() {
        let starting = joined(serde_json::json!({"karpenter.sh/nodepool": "default"}));
        for list in [starting.capacity(), starting.allocatable()] {
            assert_eq!(list.get("nvidia.com/gpu"), 1000, "{list:?}");
            assert_eq!(list.get("memory"), 8 * (1 << 30) * 1000);
            assert_eq!(list.get("cpu"), 4000);
        }
        // Initialized, the Node's word is final, zeros included.
        let ready = joined(serde_json::json!({
            "karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true",
        }));
        for list in [ready.capacity(), ready.allocatable()] {
            assert_eq!(list.get("nvidia.com/gpu"), 0);
            assert_eq!(list.get("memory"), 0);
        }
        assert_eq!(ready.capacity().get(NODES_RESOURCE), 1000);
    }
}
