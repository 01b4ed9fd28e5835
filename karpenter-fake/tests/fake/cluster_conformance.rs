//! The in-memory cluster passes the cluster conformance suite; a cluster that
//! breaks the contract fails it.

use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Taint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::StorageClass;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cluster::{Cluster, ClusterError, Eviction};
use karpenter_core::pods::PodInfo;
use karpenter_core::pods::PodKey;
use karpenter_fake::InMemoryCluster;
use karpenter_fake::conformance::{Check, run_cluster};

fn failed(checks: &[Check]) -> Vec<&'static str> {
    checks
        .iter()
        .filter(|c| c.outcome.is_err())
        .map(|c| c.name)
        .collect()
}

#[tokio::test]
async fn the_in_memory_cluster_keeps_the_contract() {
    let cluster = InMemoryCluster::new();
    let checks = run_cluster(&cluster).await;
    assert!(checks.len() >= 8, "{checks:#?}");
    assert_eq!(failed(&checks), Vec::<&str>::new(), "{checks:#?}");
    // It cleans up after itself.
    assert!(cluster.node_claim_list().is_empty());
}

/// A cluster whose writes forget what the API server keeps: a second create
/// overwrites the first, an update drops a deletion under way, and a
/// nomination of a pod that is not there succeeds.
#[derive(Debug, Default)]
struct Forgetful(InMemoryCluster);

#[async_trait]
impl Cluster for Forgetful {
    async fn node_pools(&self) -> Result<Vec<NodePool>, ClusterError> {
        self.0.node_pools().await
    }
    async fn nodes(&self) -> Result<Vec<Arc<Node>>, ClusterError> {
        self.0.nodes().await
    }
    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        self.0.node_claims().await
    }
    async fn pods(&self) -> Result<Vec<Arc<PodInfo>>, ClusterError> {
        self.0.pods().await
    }
    async fn daemon_sets(&self) -> Result<Vec<DaemonSet>, ClusterError> {
        self.0.daemon_sets().await
    }
    async fn pod_disruption_budgets(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        self.0.pod_disruption_budgets().await
    }
    async fn persistent_volumes(&self) -> Result<Vec<PersistentVolume>, ClusterError> {
        self.0.persistent_volumes().await
    }
    async fn persistent_volume_claims(&self) -> Result<Vec<PersistentVolumeClaim>, ClusterError> {
        self.0.persistent_volume_claims().await
    }
    async fn storage_classes(&self) -> Result<Vec<StorageClass>, ClusterError> {
        self.0.storage_classes().await
    }
    async fn create_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let _ = self.0.remove_node_claim(&name).await;
        self.0.create_node_claim(claim).await
    }
    async fn update_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        self.0.remove_node_claim(&name).await?;
        self.0.create_node_claim(claim).await
    }
    async fn delete_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        self.0.delete_node_claim(name).await
    }
    async fn remove_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        self.0.remove_node_claim(name).await
    }
    async fn update_node(&self, node: Node) -> Result<(), ClusterError> {
        self.0.update_node(node).await
    }
    async fn taint_node(&self, name: &str, taint: Taint) -> Result<(), ClusterError> {
        self.0.taint_node(name, taint).await
    }
    async fn untaint_node(&self, name: &str, key: &str) -> Result<(), ClusterError> {
        self.0.untaint_node(name, key).await
    }
    async fn evict_pod(&self, pod: &PodKey) -> Result<Eviction, ClusterError> {
        self.0.evict_pod(pod).await
    }
    async fn nominate_pod(&self, _pod: &PodKey, _node: &str) -> Result<(), ClusterError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_cluster_breaking_the_contract_fails() {
    let checks = run_cluster(&Forgetful::default()).await;
    let failed = failed(&checks);
    assert_eq!(
        failed,
        [
            "creating a taken name is AlreadyExists",
            "delete asks for deletion, again and again, and updates keep it",
            "writes to a Node or Pod that is not there are NotFound",
        ],
        "{checks:#?}"
    );
}
