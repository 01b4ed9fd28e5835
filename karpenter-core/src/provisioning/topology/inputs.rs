//! What topology reads: pods (pending and placed), the domains NodePools can
//! create, and the kind of node a pod is recorded on.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::pods::{PodFields, PodInfo};
use k8s_openapi::api::core::v1::{PodSpec, Taint};

use crate::cloudprovider::InstanceType;
use crate::scheduling::Requirements;

/// A pod as topology sees it: its namespace, labels and the constraints it
/// has now (after the scheduler's relaxation removed some preferred terms).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PodView<'a> {
    /// The pod's UID; it names the pod's group memberships, so it must be
    /// unique among the pods given to one [`Topology`].
    pub uid: &'a str,
    /// The pod's namespace.
    pub namespace: &'a str,
    /// The pod's labels.
    pub labels: &'a BTreeMap<String, String>,
    /// The pod's spec, as relaxed so far.
    pub spec: &'a PodSpec,
}

/// An existing node as the topology reads it: a domain pods may go to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExistingView<'a> {
    /// The caller's id for it.
    pub id: usize,
    /// Its labels.
    pub labels: &'a BTreeMap<String, String>,
    /// Its taints.
    pub taints: &'a [Taint],
    /// Its labels as requirements, when the caller has read them already
    /// (`Requirements::from_labels` of `labels`): a big cluster's labels are
    /// not read twice.
    pub requirements: Option<&'a Requirements>,
}

/// Where a pod already runs, for counting: the pod and its node's labels and
/// taints. Only pods that count belong here: bound to a node, neither
/// terminal nor terminating (see [`ignored_for_topology`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlacedPod<'a> {
    /// The caller's id of the pod's node.
    pub node_id: usize,
    /// The caller's id of the pod, if it has one: a base carried to a later
    /// copy of the cluster finds the pods that moved by it.
    pub pod_id: Option<usize>,
    /// The pod.
    pub pod: PodView<'a>,
    /// Its node's labels.
    pub node_labels: &'a BTreeMap<String, String>,
    /// Its node's labels as requirements, when the caller has read them
    /// already (as [`ExistingView::requirements`]).
    pub node_requirements: Option<&'a Requirements>,
    /// Its node's taints.
    pub node_taints: &'a [Taint],
    /// The snapshot's pod it views, when there is one: a [`LabelMemo`]
    /// knows it again by it.
    ///
    /// [`LabelMemo`]: super::LabelMemo
    pub source: Option<&'a Arc<PodInfo>>,
}

/// The topology domains a NodePool can create: its requirements (pool
/// requirements ∩ template labels), its instance types (whose requirements
/// narrow the pool's per type), and its taints (for `nodeTaintsPolicy:
/// Honor`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DomainSource<'a> {
    /// The NodePool's requirements, template labels included.
    pub pool_requirements: &'a Requirements,
    /// The NodePool's instance types.
    pub instance_types: &'a [InstanceType],
    /// The NodePool's taints (not its startup taints).
    pub taints: &'a [Taint],
}

/// What a node a pod is recorded on is, which decides how a spread
/// constraint's node filter reads its requirements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// A node of the cluster: its labels are all it has, so every label a
    /// filter asks for must be on it.
    Existing,
    /// A NodeClaim being planned: well-known labels it does not constrain yet
    /// are left to its instance types.
    NewClaim,
}

/// Whether a pod is left out of topology counts, after upstream's
/// `IgnoredForTopology`: not bound to a node, terminal (`Succeeded` or
/// `Failed`), or terminating.
pub(crate) fn ignored_for_topology(pod: &(impl PodFields + ?Sized)) -> bool {
    let unbound = pod.node_name().is_none_or(str::is_empty);
    let terminal = pod
        .phase()
        .is_some_and(|phase| phase == "Succeeded" || phase == "Failed");
    unbound || terminal || pod.metadata().deletion_timestamp.is_some()
}

/// A node pods were counted on.
#[derive(Clone, Debug)]
pub(crate) struct NodeInfo {
    /// Its labels, as `In` requirements.
    pub(crate) labels: Requirements,
    pub(crate) taints: Box<[Taint]>,
}

impl NodeInfo {
    /// A node with these labels (`read` if given: the same labels as
    /// requirements) and taints.
    pub(crate) fn new(
        labels: &BTreeMap<String, String>,
        read: Option<&Requirements>,
        taints: &[Taint],
    ) -> NodeInfo {
        NodeInfo {
            labels: read.map_or_else(|| Requirements::from_labels(labels), Clone::clone),
            taints: taints.into(),
        }
    }

    /// The node's value for label `key`.
    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        let requirement = self.labels.get_defined(key)?;
        let mut values = requirement.values();
        if requirement.is_complement() || values.len() != 1 {
            return None;
        }
        values.next()
    }
}
