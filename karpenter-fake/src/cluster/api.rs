//! The [`Cluster`] trait over the store: what the driver reads (each object
//! as stored, pods read once per version) and writes (claims, node taints,
//! evictions, nominations).

use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, PodStatus, PodTemplate, Taint,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::capacity_buffers::ScalableWorkload;
use karpenter_core::cluster::{Cluster, ClusterError, Eviction, eviction_refused};
use karpenter_core::pods::PodInfo;
use karpenter_core::pods::PodKey;

use super::InMemoryCluster;
use super::eviction::{evict, take_off};
use super::objects::{Objects, not_found};

#[async_trait]
impl Cluster for InMemoryCluster {
    async fn node_pools(&self) -> Result<Vec<NodePool>, ClusterError> {
        Ok(self.lock().node_pools.values().cloned().collect())
    }

    async fn node_overlays(&self) -> Result<Vec<NodeOverlay>, ClusterError> {
        Ok(self.lock().node_overlays.values().cloned().collect())
    }

    /// The Nodes as stored: a Node not written since the last read is the
    /// same `Arc`, nothing copied.
    async fn nodes(&self) -> Result<Vec<Arc<Node>>, ClusterError> {
        Ok(self.lock().nodes.values().cloned().collect())
    }

    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        Ok(self.node_claim_list())
    }

    /// Its pods read as planning reads them, each version once (as a watch
    /// cache converts each version it is sent): a pod not written since the
    /// last call is handed out as read then.
    async fn pods(&self) -> Result<Vec<Arc<PodInfo>>, ClusterError> {
        let mut objects = self.lock();
        let Objects {
            pods,
            pod_infos,
            interner,
            ..
        } = &mut *objects;
        pod_infos.retain(|key, _| pods.contains_key(key));
        let infos = pods
            .iter()
            .map(|(key, pod)| match pod_infos.get(key) {
                Some((read, info)) if Arc::ptr_eq(read, pod) => Arc::clone(info),
                _ => {
                    let info = Arc::new(interner.pod_info(pod));
                    pod_infos.insert(key.clone(), (Arc::clone(pod), Arc::clone(&info)));
                    info
                }
            })
            .collect();
        // Specs of pods gone are let go once they are most of those held.
        if interner.distinct_specs() > 2 * pods.len() + 64 {
            interner.forget_unused();
        }
        Ok(infos)
    }

    async fn daemon_sets(&self) -> Result<Vec<DaemonSet>, ClusterError> {
        Ok(self.lock().daemon_sets.clone())
    }

    async fn pod_disruption_budgets(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(self.lock().pod_disruption_budgets.clone())
    }

    async fn persistent_volumes(&self) -> Result<Vec<PersistentVolume>, ClusterError> {
        Ok(self.lock().persistent_volumes.values().cloned().collect())
    }

    async fn persistent_volume_claims(&self) -> Result<Vec<PersistentVolumeClaim>, ClusterError> {
        Ok(self
            .lock()
            .persistent_volume_claims
            .values()
            .cloned()
            .collect())
    }

    async fn storage_classes(&self) -> Result<Vec<StorageClass>, ClusterError> {
        Ok(self.lock().storage_classes.values().cloned().collect())
    }

    async fn csi_nodes(&self) -> Result<Vec<CSINode>, ClusterError> {
        Ok(self.lock().csi_nodes.values().cloned().collect())
    }

    async fn namespaces(&self) -> Result<Vec<Namespace>, ClusterError> {
        Ok(self.lock().namespaces.values().cloned().collect())
    }

    async fn capacity_buffers(&self) -> Result<Vec<CapacityBuffer>, ClusterError> {
        Ok(self.lock().capacity_buffers.values().cloned().collect())
    }

    async fn pod_templates(&self) -> Result<Vec<PodTemplate>, ClusterError> {
        Ok(self.lock().pod_templates.values().cloned().collect())
    }

    async fn scalable_workloads(&self) -> Result<Vec<ScalableWorkload>, ClusterError> {
        Ok(self.lock().scalable_workloads.values().cloned().collect())
    }

    /// Bumped by every write, whoever makes it (the driver, a test, the
    /// cluster's own kubelet, scheduler and ReplicaSet), except those that
    /// change nothing (a tick that registers and binds nothing, a taint
    /// already there, an eviction refused), so that a quiet cluster keeps
    /// its revision.
    fn revision(&self) -> Option<u64> {
        Some(self.lock().revision)
    }

    async fn create_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let mut objects = self.lock();
        if objects.node_claims.contains_key(&name) {
            return Err(ClusterError::AlreadyExists {
                kind: "NodeClaim",
                name,
            });
        }
        objects.node_claims.insert(name, claim);
        objects.changed();
        Ok(())
    }

    async fn update_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let mut objects = self.lock();
        let stored = objects
            .node_claims
            .get_mut(&name)
            .ok_or_else(|| not_found("NodeClaim", &name))?;
        // The API server keeps the deletion timestamp whatever an update says.
        let deleting = stored.metadata.deletion_timestamp.take();
        // The pod events this cluster noted since the writer read the claim
        // stay, as another controller's status patch would.
        let noted = stored
            .status
            .as_ref()
            .and_then(|s| s.last_pod_event_time.clone());
        *stored = claim;
        if deleting.is_some() {
            stored.metadata.deletion_timestamp = deleting;
        }
        if let Some(noted) = noted
            && let Some(status) = stored.status.as_mut()
            && status
                .last_pod_event_time
                .as_ref()
                .is_none_or(|t| t.0 < noted.0)
        {
            status.last_pod_event_time = Some(noted);
        }
        objects.changed();
        Ok(())
    }

    async fn delete_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let now = objects.now;
        let claim = objects
            .node_claims
            .get_mut(name)
            .ok_or_else(|| not_found("NodeClaim", name))?;
        if claim.metadata.deletion_timestamp.is_none() {
            claim.metadata.deletion_timestamp = Some(Time(now));
            objects.changed();
        }
        Ok(())
    }

    async fn remove_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let claim = objects
            .node_claims
            .remove(name)
            .ok_or_else(|| not_found("NodeClaim", name))?;
        objects.changed();
        let provider_id = claim.status.and_then(|s| s.provider_id);
        let nodes: Vec<String> = objects
            .nodes
            .iter()
            .filter(|(_, n)| {
                provider_id.is_some()
                    && n.spec.as_ref().and_then(|s| s.provider_id.as_ref()) == provider_id.as_ref()
            })
            .map(|(name, _)| name.clone())
            .collect();
        for node in nodes {
            evict(&mut objects, &node);
            objects.nodes.remove(&node);
        }
        Ok(())
    }

    async fn update_node(&self, node: Node) -> Result<(), ClusterError> {
        let name = node.metadata.name.clone().unwrap_or_default();
        let mut objects = self.lock();
        let stored = objects
            .nodes
            .get_mut(&name)
            .ok_or_else(|| not_found("Node", &name))?;
        *stored = Arc::new(node);
        objects.changed();
        Ok(())
    }

    async fn taint_node(&self, name: &str, taint: Taint) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let node = objects
            .nodes
            .get_mut(name)
            .ok_or_else(|| not_found("Node", name))?;
        // Tainting a tainted node changes nothing (not even its copy): a
        // node draining for long is tainted again at every pass, and stays
        // quiet.
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|taints| {
                taints
                    .iter()
                    .any(|t| t.key == taint.key && t.effect == taint.effect)
            });
        if !tainted {
            Arc::make_mut(node)
                .spec
                .get_or_insert_with(Default::default)
                .taints
                .get_or_insert_with(Vec::new)
                .push(taint);
            objects.changed();
        }
        Ok(())
    }

    async fn untaint_node(&self, name: &str, key: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let node = objects
            .nodes
            .get_mut(name)
            .ok_or_else(|| not_found("Node", name))?;
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|taints| taints.iter().any(|t| t.key == key));
        if tainted
            && let Some(taints) = Arc::make_mut(node)
                .spec
                .as_mut()
                .and_then(|s| s.taints.as_mut())
        {
            taints.retain(|t| t.key != key);
            objects.changed();
        }
        Ok(())
    }

    async fn evict_pod(&self, key: &PodKey) -> Result<Eviction, ClusterError> {
        let mut objects = self.lock();
        let Some(pod) = objects.pods.get(key) else {
            return Ok(Eviction::Evicted);
        };
        if eviction_refused(&objects.pod_disruption_budgets, pod) {
            return Ok(Eviction::Blocked);
        }
        take_off(&mut objects, key);
        objects.changed();
        Ok(Eviction::Evicted)
    }

    async fn nominate_pod(&self, pod: &PodKey, node: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let stored = objects
            .pods
            .get_mut(pod)
            .ok_or_else(|| not_found("Pod", pod.as_str()))?;
        Arc::make_mut(stored)
            .status
            .get_or_insert_with(PodStatus::default)
            .nominated_node_name = Some(node.to_owned());
        objects.changed();
        Ok(())
    }
}
