//! The driver and persistent volumes: the cluster's PersistentVolumes,
//! claims and StorageClasses reach planning, so a pod goes where its volume
//! can be reached, as upstream's volume topology places it.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use karpenter_core::driver::DriverOptions;
use karpenter_core::pods::{bound_node, pod_key};
use karpenter_core::scheduling::LABEL_TOPOLOGY_ZONE;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

/// A world with the default pool and nothing else, not disrupting.
fn world() -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "1", json!([])));
    world
}

/// The pending pod `name`, mounting the claim `claim`.
fn mounting(name: &str, claim: &str) -> Pod {
    let mut pod = pending_pod(name, Shape::Plain, "1", "1Gi");
    let spec = pod.spec.as_mut().expect("a spec");
    spec.volumes = Some(vec![
        serde_json::from_value(
            json!({"name": "data", "persistentVolumeClaim": {"claimName": claim}}),
        )
        .expect("a volume"),
    ]);
    pod
}

/// The zone of the node the pod `name` is bound to, once it is.
fn zone_of(world: &World, name: &str) -> Option<String> {
    let pods = world.cluster.pod_list();
    let pod = pods
        .iter()
        .find(|p| pod_key(p) == format!("default/{name}").as_str())?;
    let node = bound_node(pod)?.to_owned();
    world
        .cluster
        .node_list()
        .into_iter()
        .find(|n| n.metadata.name.as_deref() == Some(node.as_str()))?
        .metadata
        .labels?
        .get(LABEL_TOPOLOGY_ZONE)
        .cloned()
}

#[tokio::test]
async fn a_pod_follows_its_bound_volume_to_its_zone() {
    let mut world = world();
    let volume: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": "pv-data"},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["test-zone-3"]},
            ]}]}},
        },
    }))
    .expect("a PersistentVolume");
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {
            "name": "data", "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {"volumeName": "pv-data", "accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Bound"},
    }))
    .expect("a PersistentVolumeClaim");
    world.cluster.apply_persistent_volume(volume);
    world.cluster.apply_persistent_volume_claim(claim);
    world.add_pods([mounting("db-0", "data")]);
    world.run_until(20, |w| w.settled()).await;
    assert_eq!(world.claims(), 1);
    assert_eq!(zone_of(&world, "db-0").as_deref(), Some("test-zone-3"));
}

#[tokio::test]
async fn an_unbound_claim_follows_its_storage_class() {
    let mut world = world();
    let class: StorageClass = serde_json::from_value(json!({
        "metadata": {"name": "zonal"},
        "provisioner": "disk.csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [
            {"key": LABEL_TOPOLOGY_ZONE, "values": ["test-zone-2"]},
        ]}],
    }))
    .expect("a StorageClass");
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "scratch", "namespace": "default"},
        "spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Pending"},
    }))
    .expect("a PersistentVolumeClaim");
    world.cluster.apply_storage_class(class);
    world.cluster.apply_persistent_volume_claim(claim);
    world.add_pods([mounting("cache-0", "scratch")]);
    world.run_until(20, |w| w.settled()).await;
    assert_eq!(zone_of(&world, "cache-0").as_deref(), Some("test-zone-2"));
}

#[tokio::test]
async fn a_missing_claim_keeps_the_pod_waiting_and_buys_nothing() {
    let mut world = world();
    world.add_pods([mounting("orphan-0", "nowhere")]);
    for _ in 0..5 {
        world.step().await;
    }
    assert_eq!(world.claims(), 0);
    assert_eq!(world.pending(), 1);
}

/// A pending pod `name` of 250m mounting the claim `claim` of class `ebs`,
/// with the claim.
fn with_ebs_claim(world: &World, name: &str, claim: &str) -> Pod {
    let claim_object: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": claim, "namespace": "default"},
        "spec": {"storageClassName": "ebs", "accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Pending"},
    }))
    .expect("a PersistentVolumeClaim");
    world.cluster.apply_persistent_volume_claim(claim_object);
    let mut pod = mounting(name, claim);
    let container = &mut pod.spec.as_mut().expect("a spec").containers[0];
    container.resources = Some(
        serde_json::from_value(json!({"requests": {"cpu": "250m", "memory": "256Mi"}}))
            .expect("requests"),
    );
    pod
}

#[tokio::test]
async fn a_nodes_attach_limit_sends_the_next_volume_to_a_new_node() {
    let run = |limit: Option<i32>| async move {
        let mut world = world();
        let class: StorageClass = serde_json::from_value(json!({
            "metadata": {"name": "ebs"},
            "provisioner": "kubernetes.io/aws-ebs",
            "volumeBindingMode": "WaitForFirstConsumer",
        }))
        .expect("a StorageClass");
        world.cluster.apply_storage_class(class);
        let first = with_ebs_claim(&world, "db-0", "data-0");
        world.add_pods([first]);
        world.run_until(20, |w| w.settled()).await;
        assert_eq!(world.claims(), 1);
        if let Some(count) = limit {
            let node = world.cluster.node_list()[0]
                .metadata
                .name
                .clone()
                .expect("a node name");
            let csi: k8s_openapi::api::storage::v1::CSINode = serde_json::from_value(json!({
                "metadata": {"name": node},
                "spec": {"drivers": [
                    {"name": "ebs.csi.aws.com", "nodeID": node, "allocatable": {"count": count}},
                ]},
            }))
            .expect("a CSINode");
            world.cluster.apply_csi_node(csi);
        }
        let second = with_ebs_claim(&world, "db-1", "data-1");
        world.add_pods([second]);
        world.run_until(20, |w| w.settled()).await;
        assert_eq!(world.pending(), 0);
        world.claims()
    };
    // Room on the node: without a limit (or under it) the second pod joins the first.
    assert_eq!(run(None).await, 1);
    assert_eq!(run(Some(2)).await, 1);
    // The node attaches one EBS volume at most (the in-tree class counts as
    // ebs.csi.aws.com): the second volume needs a node of its own.
    assert_eq!(run(Some(1)).await, 2);
}
