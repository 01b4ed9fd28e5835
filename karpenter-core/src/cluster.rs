//! The [`Cluster`] trait: the Kubernetes side of the driver. Planning reads
//! the cluster's objects (turned into a [`Snapshot`] by [`read_snapshot`]);
//! the driver writes back what a plan decides: NodeClaims created and deleted,
//! nodes tainted while they are disrupted, pods nominated to the capacity
//! meant for them.
//!
//! A controller implements it over its informer cache and API client;
//! `karpenter-fake` has an in-memory implementation that also plays the
//! kubelet and the kube-scheduler.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, PodTemplate, Taint,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use thiserror::Error;

use crate::pods::PodKey;
use crate::pods::{PodFields, PodInfo};

use crate::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use crate::capacity_buffers::ScalableWorkload;
use crate::scheduling::WellKnownLabels;
use crate::snapshot::{Snapshot, join_nodes};

/// Why a cluster call failed. `#[non_exhaustive]`: match the variants you act
/// on and keep a catch-all arm.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// The object does not exist (any more).
    #[error("{kind} {name} not found")]
    NotFound {
        /// The object's kind (`NodeClaim`, `Node`, `Pod`).
        kind: &'static str,
        /// Its name (for a pod, its [`PodKey`]'s text, `namespace/name`).
        name: String,
    },
    /// An object of that name exists already.
    #[error("{kind} {name} already exists")]
    AlreadyExists {
        /// The object's kind.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// The call itself failed (network, throttling, a server error);
    /// `retryable` says whether trying again later may succeed.
    #[error("cluster call failed: {message}")]
    Api {
        /// What failed.
        message: String,
        /// Whether a later retry may succeed.
        retryable: bool,
        /// The client's error, when there is one.
        #[source]
        source: Option<crate::cloudprovider::BoxError>,
    },
}

/// The cluster the driver plans for and acts on.
///
/// Implementations are shared across tasks (`Send + Sync`) and used as
/// `dyn Cluster`. The contract:
///
/// - The read methods return the objects as they stand; the driver reads
///   them all at the start of each reconcile and never keeps them across.
/// - Writes name objects by `metadata.name` (pods by [`PodKey`], the text
///   `namespace/name`) and
///   return [`ClusterError::NotFound`] for an object that is not there, except
///   where a method says it is idempotent.
/// - [`delete_node_claim`](Self::delete_node_claim) only asks for deletion
///   (it sets `deletionTimestamp`, as the API server does for an object with
///   a finalizer); the claim stays until the driver has terminated its
///   instance and calls [`remove_node_claim`](Self::remove_node_claim).
/// - [`evict_pod`](Self::evict_pod) is the Eviction API: the pod leaves its
///   node unless a PodDisruptionBudget forbids it now, which is an answer
///   ([`Eviction::Blocked`], the API server's 429), not an error.
#[async_trait]
pub trait Cluster: Send + Sync + fmt::Debug {
    /// The NodePools.
    async fn node_pools(&self) -> Result<Vec<NodePool>, ClusterError>;
    /// The Nodes; shared, as a watch cache holds them.
    async fn nodes(&self) -> Result<Vec<Arc<Node>>, ClusterError>;
    /// The NodeClaims.
    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError>;
    /// Every pod, bound or pending, as planning reads it: an implementation
    /// over a watch cache converts each `Pod` once, as it arrives
    /// ([`PodInterner::pod_info`](crate::pods::PodInterner::pod_info),
    /// replicas sharing their specs), and hands out the cache's `Arc`s.
    async fn pods(&self) -> Result<Vec<Arc<PodInfo>>, ClusterError>;
    /// The DaemonSets.
    async fn daemon_sets(&self) -> Result<Vec<DaemonSet>, ClusterError>;
    /// The PodDisruptionBudgets.
    async fn pod_disruption_budgets(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError>;
    /// The PersistentVolumes: a bound volume's node affinity says where the
    /// pods that use it may run.
    async fn persistent_volumes(&self) -> Result<Vec<PersistentVolume>, ClusterError>;
    /// The PersistentVolumeClaims pods name.
    async fn persistent_volume_claims(&self) -> Result<Vec<PersistentVolumeClaim>, ClusterError>;
    /// The StorageClasses: an unbound claim's class says where its volume
    /// may be made (`allowedTopologies`) and when (`volumeBindingMode`).
    async fn storage_classes(&self) -> Result<Vec<StorageClass>, ClusterError>;
    /// The CSINodes: each Node's volume attach limits per CSI driver. A
    /// cluster that does not serve them has none (no limits): the default.
    async fn csi_nodes(&self) -> Result<Vec<CSINode>, ClusterError> {
        Ok(Vec::new())
    }
    /// The Namespaces, whose labels a pod (anti-)affinity term's
    /// `namespaceSelector` selects. A cluster that does not serve them has
    /// none (every namespace has only its `kubernetes.io/metadata.name`
    /// label): the default.
    async fn namespaces(&self) -> Result<Vec<Namespace>, ClusterError> {
        Ok(Vec::new())
    }
    /// The NodeOverlays (`karpenter.sh/v1alpha1`), which the driver reads
    /// only with the `NodeOverlay` feature gate on. A cluster that does not
    /// serve them has none: the default.
    async fn node_overlays(&self) -> Result<Vec<NodeOverlay>, ClusterError> {
        Ok(Vec::new())
    }
    /// The CapacityBuffers (`autoscaling.x-k8s.io/v1beta1`), which the driver
    /// reads only with the `CapacityBuffer` feature gate on. A cluster that
    /// does not serve them has none: the default.
    async fn capacity_buffers(&self) -> Result<Vec<CapacityBuffer>, ClusterError> {
        Ok(Vec::new())
    }
    /// The PodTemplates a CapacityBuffer's `podTemplateRef` may name (read
    /// with the `CapacityBuffer` gate on; none by default).
    async fn pod_templates(&self) -> Result<Vec<PodTemplate>, ClusterError> {
        Ok(Vec::new())
    }
    /// The Deployments, StatefulSets and ReplicaSets a CapacityBuffer's
    /// `scalableRef` may name (read with the `CapacityBuffer` gate on; none
    /// by default).
    async fn scalable_workloads(&self) -> Result<Vec<ScalableWorkload>, ClusterError> {
        Ok(Vec::new())
    }

    /// A version of everything the read methods above return: a number that
    /// changes whenever anything any of them would return changes, and is
    /// never given again for other contents (a counter bumped by every
    /// write does). The driver uses it to tell that nothing changed since
    /// it last planned disruption, and then skips planning again (see
    /// [`DriverOptions::with_quiet_skip`](crate::driver::DriverOptions::with_quiet_skip)):
    /// a number that stays the same across a change would have it act on a
    /// stale plan, while one that changes when nothing did only costs a
    /// plan.
    ///
    /// `None` (the default) says the cluster cannot tell, and the driver
    /// plans at every pass: right for a cluster others write to behind its
    /// back, as a watch cache over an API server is.
    fn revision(&self) -> Option<u64> {
        None
    }

    /// Creates a NodeClaim; [`ClusterError::AlreadyExists`] when its name is
    /// taken.
    async fn create_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError>;
    /// Replaces a NodeClaim (metadata, spec and status) by its name.
    ///
    /// `claim` is a copy read from this cluster and then changed. An
    /// implementation others write to too should write only that change (as
    /// `karpenter-kube`'s does, diffing against the version the copy was
    /// read at), and may refuse a copy too old to tell with a retryable
    /// [`ClusterError::Api`].
    async fn update_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError>;
    /// Asks for a NodeClaim's deletion (sets `deletionTimestamp`); idempotent.
    async fn delete_node_claim(&self, name: &str) -> Result<(), ClusterError>;
    /// Removes a NodeClaim whose instance is gone, with its Node (the
    /// finalizer released).
    async fn remove_node_claim(&self, name: &str) -> Result<(), ClusterError>;
    /// Replaces a Node (labels, annotations, spec) by its name; a copy read
    /// and changed, as for [`update_node_claim`](Self::update_node_claim).
    async fn update_node(&self, node: Node) -> Result<(), ClusterError>;
    /// Adds a taint to a node; idempotent.
    async fn taint_node(&self, name: &str, taint: Taint) -> Result<(), ClusterError>;
    /// Removes the node's taints with this key; idempotent.
    async fn untaint_node(&self, name: &str, key: &str) -> Result<(), ClusterError>;
    /// Evicts the pod through the Eviction API (`policy/v1`): it leaves its
    /// node (a pod a controller owns comes back pending, as a ReplicaSet
    /// recreates it). [`Eviction::Blocked`] when a PodDisruptionBudget does
    /// not allow it now; a pod that is not there is [`Eviction::Evicted`]
    /// (nothing is left to do).
    async fn evict_pod(&self, pod: &PodKey) -> Result<Eviction, ClusterError>;
    /// Records that the pod (by its [`PodKey`]) is meant for `node` (a Node's
    /// name, or the name of a NodeClaim still launching).
    ///
    /// The driver reads nominations back from `status.nominatedNodeName`. An
    /// implementation that writes the nomination there (as `karpenter-fake`'s
    /// does, playing a scheduler that binds nominated pods) has the pod held on
    /// that capacity while it can take it, out of planning as a preempting pod
    /// is; one that only records an event (as upstream Karpenter does) leaves
    /// the pod pending, planned again at each reconcile.
    async fn nominate_pod(&self, pod: &PodKey, node: &str) -> Result<(), ClusterError>;
}

/// What became of an eviction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Eviction {
    /// The pod is on its way out (or was gone already).
    Evicted,
    /// A PodDisruptionBudget does not allow it now (the API server answers
    /// 429): try again later.
    Blocked,
}

/// Whether the API server would refuse to evict `pod` now because of these
/// PodDisruptionBudgets, as the Eviction API decides: a budget selecting it
/// allows no disruption (unless the pod is not Ready and the budget's
/// `unhealthyPodEvictionPolicy` is `AlwaysAllow`), or more than one budget
/// selects it. For a [`Cluster`] that plays the API server, as
/// karpenter-fake's in-memory one does.
pub fn eviction_refused(budgets: &[PodDisruptionBudget], pod: &(impl PodFields + ?Sized)) -> bool {
    crate::pods::Pdbs::new(budgets).blocks(pod).is_some()
}

/// Reads the cluster into a [`Snapshot`]: nodes joined with their claims,
/// the core's well-known labels. The caller adds what the cloud provider
/// knows: instance types, drift verdicts, more well-known labels.
pub async fn read_snapshot(cluster: &dyn Cluster) -> Result<Snapshot, ClusterError> {
    let nodes = cluster.nodes().await?;
    let claims = cluster.node_claims().await?;
    Ok(Snapshot {
        node_pools: cluster.node_pools().await?,
        nodes: join_nodes(nodes, claims),
        pods: cluster.pods().await?,
        daemon_sets: cluster.daemon_sets().await?,
        pod_disruption_budgets: cluster.pod_disruption_budgets().await?,
        persistent_volumes: cluster.persistent_volumes().await?,
        persistent_volume_claims: cluster.persistent_volume_claims().await?,
        storage_classes: cluster.storage_classes().await?,
        csi_nodes: cluster.csi_nodes().await?,
        namespaces: cluster.namespaces().await?,
        well_known_labels: WellKnownLabels::core().clone(),
        ..Snapshot::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_object() {
        let error = ClusterError::NotFound {
            kind: "NodeClaim",
            name: "default-abc".into(),
        };
        assert_eq!(error.to_string(), "NodeClaim default-abc not found");
    }

    /// The trait is dyn-compatible and its futures are `Send`.
    #[test]
    fn the_trait_is_dyn_compatible() {
        fn assert_send<T: Send>(_: &T) {}
        fn uses(cluster: &dyn Cluster) {
            let future = read_snapshot(cluster);
            assert_send(&future);
        }
        let _ = uses;
    }
}
