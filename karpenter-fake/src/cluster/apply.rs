//! What a test (or a scenario) writes into the cluster: the objects the
//! driver reads, added, replaced or deleted from outside, each write moving
//! the revision.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use karpenter_core::api::{CapacityBuffer, NodeOverlay, NodePool};
use karpenter_core::capacity_buffers::ScalableWorkload;
#[cfg(doc)]
use karpenter_core::cluster::Cluster;
use karpenter_core::pods::{PodKey, pod_key};

use super::InMemoryCluster;
use super::eviction::remove_pod;
use super::objects::namespaced;

impl InMemoryCluster {
    /// Adds or replaces a NodePool, annotated with its template hash as
    /// upstream's hash controller annotates it (`karpenter.sh/nodepool-hash`):
    /// the driver copies it onto the claims it makes, so a later change of
    /// the template drifts them.
    pub fn apply_node_pool(&self, mut pool: NodePool) {
        pool.annotate_hash();
        let name = pool.metadata.name.clone().unwrap_or_default();
        self.write().node_pools.insert(name, pool);
    }

    /// Adds or replaces a NodeOverlay (read with the `NodeOverlay` gate on).
    pub fn apply_node_overlay(&self, overlay: NodeOverlay) {
        let name = overlay.metadata.name.clone().unwrap_or_default();
        self.write().node_overlays.insert(name, overlay);
    }

    /// Adds or replaces a pod (pending unless it names a node).
    pub fn apply_pod(&self, pod: Pod) {
        self.write().pods.insert(pod_key(&pod), Arc::new(pod));
    }

    /// Deletes a pod, as scaling a deployment down does (its node's claim
    /// notes the pod event).
    pub fn delete_pod(&self, key: &PodKey) -> bool {
        let mut objects = self.lock();
        let removed = remove_pod(&mut objects, key);
        if removed {
            objects.changed();
        }
        removed
    }

    /// Adds or replaces a Node (by name): a cluster's starting nodes. A
    /// managed Node's NodeClaim goes in through
    /// [`create_node_claim`](Cluster::create_node_claim), and its instance
    /// into the cloud (see `FakeCloudProvider::adopt`).
    pub fn apply_node(&self, node: Node) {
        let name = node.metadata.name.clone().unwrap_or_default();
        self.write().nodes.insert(name, Arc::new(node));
    }

    /// Adds a DaemonSet.
    pub fn apply_daemon_set(&self, daemon_set: DaemonSet) {
        self.write().daemon_sets.push(daemon_set);
    }

    /// Adds or replaces a PersistentVolume (by name).
    pub fn apply_persistent_volume(&self, volume: PersistentVolume) {
        let name = volume.metadata.name.clone().unwrap_or_default();
        self.write().persistent_volumes.insert(name, volume);
    }

    /// Adds or replaces a PersistentVolumeClaim (by namespace and name).
    pub fn apply_persistent_volume_claim(&self, claim: PersistentVolumeClaim) {
        let key = namespaced(&claim.metadata);
        self.write().persistent_volume_claims.insert(key, claim);
    }

    /// Adds or replaces a CSINode (by name, its Node's): the Node's volume
    /// attach limits.
    pub fn apply_csi_node(&self, csi_node: CSINode) {
        let name = csi_node.metadata.name.clone().unwrap_or_default();
        self.write().csi_nodes.insert(name, csi_node);
    }

    /// Adds or replaces a Namespace (by name): its labels are what pod
    /// (anti-)affinity terms' `namespaceSelector`s select.
    pub fn apply_namespace(&self, namespace: Namespace) {
        let name = namespace.metadata.name.clone().unwrap_or_default();
        self.write().namespaces.insert(name, namespace);
    }

    /// Adds or replaces a CapacityBuffer (by namespace and name): headroom
    /// the driver keeps with the `CapacityBuffer` feature gate on.
    pub fn apply_capacity_buffer(&self, buffer: CapacityBuffer) {
        let key = namespaced(&buffer.metadata);
        self.write().capacity_buffers.insert(key, buffer);
    }

    /// Deletes a CapacityBuffer; whether there was one.
    pub fn delete_capacity_buffer(&self, namespace: &str, name: &str) -> bool {
        let key = format!("{namespace}/{name}");
        self.write().capacity_buffers.remove(&key).is_some()
    }

    /// Adds or replaces a PodTemplate (by namespace and name), which a
    /// CapacityBuffer's `podTemplateRef` may name.
    pub fn apply_pod_template(&self, template: PodTemplate) {
        let key = namespaced(&template.metadata);
        self.write().pod_templates.insert(key, template);
    }

    /// Adds or replaces a workload (by kind, namespace and name), which a
    /// CapacityBuffer's `scalableRef` may name. Only its template and
    /// replicas are kept: it runs no pods here.
    pub fn apply_scalable_workload(&self, workload: ScalableWorkload) {
        let key = (
            workload.kind.clone(),
            workload.namespace.clone(),
            workload.name.clone(),
        );
        self.write().scalable_workloads.insert(key, workload);
    }

    /// Adds or replaces a StorageClass (by name).
    pub fn apply_storage_class(&self, class: StorageClass) {
        let name = class.metadata.name.clone().unwrap_or_default();
        self.write().storage_classes.insert(name, class);
    }

    /// Adds or replaces (by namespace and name) a PodDisruptionBudget. Its
    /// status is taken as given: a budget that allows no disruption refuses
    /// the eviction of every pod it selects, one that allows some lets them
    /// through (nothing here recounts it).
    pub fn apply_pod_disruption_budget(&self, budget: PodDisruptionBudget) {
        let mut objects = self.write();
        let budgets = &mut objects.pod_disruption_budgets;
        let same = |b: &PodDisruptionBudget| {
            b.metadata.namespace == budget.metadata.namespace
                && b.metadata.name == budget.metadata.name
        };
        match budgets.iter_mut().find(|b| same(b)) {
            Some(existing) => *existing = budget,
            None => budgets.push(budget),
        }
    }
}
