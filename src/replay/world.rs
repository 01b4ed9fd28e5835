//! The replay's world: the in-memory cluster holding the scenario's objects,
//! the cloud holding its instances, and the driver between them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use karpenter_core::api::NodePool;
use karpenter_core::cluster::Cluster;
use karpenter_core::driver::{Driver, DriverOptions};
use karpenter_core::scheduling::NODE_POOL_LABEL_KEY;
use karpenter_fake::InMemoryCluster;

use super::cloud::{Cloud, PriceBook, not_adopted};
use super::{ReplayError, ReplayOptions, block_on};
use crate::scenario::{DeploymentRef, Scenario};

/// The cluster, the cloud and the driver of one replay.
pub(crate) struct World {
    pub cluster: Arc<InMemoryCluster>,
    pub cloud: Cloud,
    pub driver: Driver,
    pub prices: PriceBook,
    /// Every Deployment the cluster runs.
    pub deployments: Vec<DeploymentRef>,
    /// Every NodePool's name.
    pub node_pools: Vec<String>,
    /// What the reader should know about the set-up.
    pub warnings: Vec<String>,
}

impl World {
    /// Puts the scenario's objects into a new cluster and cloud at `start`,
    /// with nodes taking `launch_delay` to register.
    pub(super) fn build(
        scenario: &Scenario,
        options: &ReplayOptions,
        start: Timestamp,
        launch_delay: Duration,
    ) -> Result<World, ReplayError> {
        let (cloud, prices, warnings) =
            Cloud::build(scenario, &options.cloud, &options.planning, start)?;
        let cluster = Arc::new(InMemoryCluster::new().with_registration_delay(launch_delay));
        cluster.tick(start);
        for pool in &scenario.node_pools {
            cluster.apply_node_pool(cloud.node_pool(pool.object.clone()));
        }
        for overlay in &scenario.node_overlays {
            cluster.apply_node_overlay(overlay.object.clone());
        }
        for daemon_set in &scenario.daemon_sets {
            cluster.apply_daemon_set(daemon_set.object.clone());
        }
        for budget in &scenario.pod_disruption_budgets {
            cluster.apply_pod_disruption_budget(budget.object.clone());
        }
        for volume in &scenario.persistent_volumes {
            cluster.apply_persistent_volume(volume.object.clone());
        }
        for claim in &scenario.persistent_volume_claims {
            cluster.apply_persistent_volume_claim(claim.object.clone());
        }
        for class in &scenario.storage_classes {
            cluster.apply_storage_class(class.object.clone());
        }
        for csi_node in &scenario.csi_nodes {
            cluster.apply_csi_node(csi_node.object.clone());
        }
        for namespace in &scenario.namespaces {
            cluster.apply_namespace(namespace.object.clone());
        }
        for buffer in &scenario.capacity_buffers {
            cluster.apply_capacity_buffer(buffer.object.clone());
        }
        for template in &scenario.pod_templates {
            cluster.apply_pod_template(template.object.clone());
        }
        for set in &scenario.stateful_sets {
            cluster.apply_scalable_workload((&set.object).into());
        }
        for set in &scenario.replica_sets {
            cluster.apply_scalable_workload((&set.object).into());
        }
        for node in &scenario.nodes {
            cluster.apply_node(node.object.clone());
        }
        let pools: BTreeMap<String, NodePool> = (scenario.node_pools.iter())
            .map(|p| {
                let mut pool = cloud.node_pool(p.object.clone());
                pool.annotate_hash();
                (pool.metadata.name.clone().unwrap_or_default(), pool)
            })
            .collect();
        for (index, claim) in scenario.node_claims.iter().enumerate() {
            // A claim the cloud launched before the replay runs there still.
            let mut claim = cloud.node_claim(claim.object.clone());
            // Hashed by another scheme (upstream's) or not at all: the
            // hash controller gives it its pool's hash, so a later change
            // of the pool drifts it as it drifts a launched one.
            let pool = (claim.metadata.labels.as_ref())
                .and_then(|l| l.get(NODE_POOL_LABEL_KEY))
                .and_then(|name| pools.get(name));
            if let Some(pool) = pool {
                pool.rehash_claim(&mut claim);
            }
            cloud
                .adopt(&claim)
                .map_err(|refused| not_adopted(scenario, index, refused))?;
            block_on(cluster.create_node_claim(claim))?;
        }
        for pod in &scenario.pods {
            cluster.apply_pod(pod.object.to_pod());
        }
        let mut deployments = Vec::new();
        for deployment in &scenario.deployments {
            cluster.apply_deployment(&deployment.object);
            let metadata = &deployment.object.metadata;
            deployments.push(DeploymentRef {
                namespace: metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into()),
                name: metadata.name.clone().unwrap_or_default(),
            });
        }
        let node_pools = scenario
            .node_pools
            .iter()
            .filter_map(|p| p.object.metadata.name.clone())
            .collect();
        let driver_options = DriverOptions::default()
            .with_planning(options.planning)
            .with_m_to_n(options.m_to_n)
            .with_quiet_skip(options.quiet_skip);
        let driver = Driver::new(cloud.provider(), cluster.clone()).with_options(driver_options);
        Ok(World {
            cluster,
            cloud,
            driver,
            prices,
            deployments,
            node_pools,
            warnings,
        })
    }
}
