//! The Deployments the cluster runs, as their ReplicaSets would: pods made
//! pending or deleted to hold the replicas asked for.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::capacity_buffers::ScalableWorkload;
use karpenter_core::cluster::ClusterError;
use karpenter_core::pods::PodKey;

use super::InMemoryCluster;
use super::eviction::remove_pod;
use super::objects::{Objects, not_found};
use crate::deployments::{Running, key_of, surplus};

impl InMemoryCluster {
    /// Runs a Deployment (by namespace and name): the pods already here that
    /// are its own (owned by it, or named `<deployment>-<n>` in its
    /// namespace) are kept, and pods are made pending or deleted to hold
    /// `spec.replicas` (1 when unset), as [`scale_deployment`](Self::scale_deployment)
    /// does. A CapacityBuffer's `scalableRef` sees it too. Returns how many
    /// pods were made and deleted.
    pub fn apply_deployment(&self, deployment: &Deployment) -> (usize, usize) {
        let mut running = Running::of(deployment);
        let replicas = deployment.spec.replicas.unwrap_or(1);
        let mut objects = self.write();
        running.adopt(objects.pods.values().map(Arc::as_ref));
        let key = format!("{}/{}", running.namespace, running.name);
        objects.deployments.insert(key, running);
        let workload = ScalableWorkload::from(deployment);
        objects.scalable_workloads.insert(
            (
                workload.kind.clone(),
                workload.namespace.clone(),
                workload.name.clone(),
            ),
            workload,
        );
        let name = deployment.metadata.name.clone().unwrap_or_default();
        let namespace = deployment
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        scale(&mut objects, &namespace, &name, replicas).unwrap_or_default()
    }

    /// Scales a Deployment [applied](Self::apply_deployment) before to
    /// `replicas`: new pods `<deployment>-<n>` (a name never reused) are made
    /// pending, created now; surplus pods are deleted as a ReplicaSet picks
    /// them, those not bound to a node first, then the newest. Returns how
    /// many were made and deleted; [`ClusterError::NotFound`] for a
    /// Deployment the cluster does not run.
    pub fn scale_deployment(
        &self,
        namespace: &str,
        name: &str,
        replicas: i32,
    ) -> Result<(usize, usize), ClusterError> {
        scale(&mut self.write(), namespace, name, replicas)
    }
}

/// Brings the Deployment `namespace/name` to `replicas` pods (a negative
/// count as 0), keeping its workload's replicas in step.
fn scale(
    objects: &mut Objects,
    namespace: &str,
    name: &str,
    replicas: i32,
) -> Result<(usize, usize), ClusterError> {
    let key = format!("{namespace}/{name}");
    let now = objects.now;
    let Some(running) = objects.deployments.get_mut(&key) else {
        return Err(not_found("Deployment", &key));
    };
    let want = usize::try_from(replicas).unwrap_or(0);
    let owned: BTreeMap<PodKey, Arc<Pod>> = objects
        .pods
        .iter()
        .filter(|(_, p)| running.owns(p))
        .map(|(k, p)| (k.clone(), Arc::clone(p)))
        .collect();
    let workload_key = (
        "Deployment".to_owned(),
        namespace.to_owned(),
        name.to_owned(),
    );
    if let Some(workload) = objects.scalable_workloads.get_mut(&workload_key) {
        workload.replicas = Some(replicas.max(0));
    }
    let mut made = Vec::new();
    for _ in owned.len()..want {
        made.push(running.new_pod(now));
    }
    let deleted = surplus(running, &owned, want);
    for key in &deleted {
        remove_pod(objects, key);
    }
    let created = made.len();
    for pod in made {
        objects.pods.insert(key_of(&pod), Arc::new(pod));
    }
    Ok((created, deleted.len()))
}
