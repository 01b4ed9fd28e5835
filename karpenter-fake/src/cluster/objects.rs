//! The store: every object the cluster holds, and the revision that moves
//! with each write to them. Kept apart from the parts that act on it (the
//! kubelet, the scheduler, the ReplicaSet), which all borrow it whole under
//! one lock.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::capacity_buffers::ScalableWorkload;
#[cfg(doc)]
use karpenter_core::cluster::Cluster;
use karpenter_core::cluster::ClusterError;
use karpenter_core::pods::PodKey;
use karpenter_core::pods::{PodInfo, PodInterner};

use crate::deployments::Running;

/// What the cluster holds.
#[derive(Debug, Default)]
pub(super) struct Objects {
    /// Bumped by every write to the objects the [`Cluster`] reads return (see
    /// [`Cluster::revision`]): the cluster's own changes (the kubelet, the
    /// scheduler, the ReplicaSet) and everyone else's.
    pub(super) revision: u64,
    pub(super) now: Timestamp,
    /// How long after a launch the kubelet registers the Node.
    pub(super) registration_delay: Duration,
    pub(super) node_pools: BTreeMap<String, NodePool>,
    /// Nodes by name, shared as a watch cache holds them (a read hands out
    /// `Arc`s; a write changes its own copy, [`Arc::make_mut`]).
    pub(super) nodes: BTreeMap<String, Arc<Node>>,
    pub(super) node_claims: BTreeMap<String, NodeClaim>,
    /// Pods by key, shared as a watch cache holds them: a read hands out
    /// `Arc`s, a write changes its own copy ([`Arc::make_mut`]).
    pub(super) pods: BTreeMap<PodKey, Arc<Pod>>,
    /// Each pod as planning last read it, with the version it was read
    /// from: a pod written since is another `Arc` (a write to a shared pod
    /// copies it), so it is read again; the others are not.
    pub(super) pod_infos: BTreeMap<PodKey, (Arc<Pod>, Arc<PodInfo>)>,
    /// Shares the specs of the pods read (replicas of a template keep one).
    pub(super) interner: PodInterner,
    pub(super) daemon_sets: Vec<DaemonSet>,
    pub(super) pod_disruption_budgets: Vec<PodDisruptionBudget>,
    /// PersistentVolumes by name.
    pub(super) persistent_volumes: BTreeMap<String, PersistentVolume>,
    /// PersistentVolumeClaims by `namespace/name`.
    pub(super) persistent_volume_claims: BTreeMap<String, PersistentVolumeClaim>,
    /// StorageClasses by name.
    pub(super) storage_classes: BTreeMap<String, StorageClass>,
    /// CSINodes by name (their Node's).
    pub(super) csi_nodes: BTreeMap<String, CSINode>,
    /// Namespaces by name.
    pub(super) namespaces: BTreeMap<String, Namespace>,
    /// NodeOverlays by name.
    pub(super) node_overlays: BTreeMap<String, NodeOverlay>,
    /// CapacityBuffers by `namespace/name`.
    pub(super) capacity_buffers: BTreeMap<String, CapacityBuffer>,
    /// PodTemplates by `namespace/name`.
    pub(super) pod_templates: BTreeMap<String, PodTemplate>,
    /// Deployments, StatefulSets and ReplicaSets by kind, namespace and name.
    pub(super) scalable_workloads: BTreeMap<(String, String, String), ScalableWorkload>,
    /// The Deployments whose pods the cluster runs, by `namespace/name`.
    pub(super) deployments: BTreeMap<String, Running>,
}

impl Objects {
    /// Notes a change to what the reads return.
    pub(super) fn changed(&mut self) {
        self.revision += 1;
    }
}

/// `namespace/name` of an object (`default` when it has no namespace).
pub(super) fn namespaced(metadata: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        metadata.namespace.as_deref().unwrap_or("default"),
        metadata.name.as_deref().unwrap_or_default()
    )
}

/// The error for an object the cluster does not hold.
pub(super) fn not_found(kind: &'static str, name: &str) -> ClusterError {
    ClusterError::NotFound {
        kind,
        name: name.to_owned(),
    }
}
