//! Pods and claims selecting AKS labels, through the provider on a fake ARM:
//! a label a size lacks leaves it out, and the cluster label is the node
//! resource group's.

use std::sync::Arc;

use crate::common::{claim, pool, provider};
use karpenter_azure::instancetype::labels;
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError};
use karpenter_core::driver::{Driver, Event};
use karpenter_fake::InMemoryCluster;
use serde_json::{Value, json};

/// Runs the driver once on a pending pod with `node_selector`, and returns
/// the body of the one VM it launched.
async fn launch_for(node_selector: Value) -> Value {
    let (_server, arm, provider) = provider().await;
    let cluster = Arc::new(InMemoryCluster::new());
    cluster.apply_node_pool(pool());
    let pod = serde_json::from_value(json!({
        "metadata": {"name": "web-0", "namespace": "default", "uid": "uid-web-0"},
        "spec": {
            "nodeSelector": node_selector,
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        },
        "status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
        ]},
    }))
    .expect("a Pod");
    cluster.apply_pod(pod);
    let mut driver = Driver::new(Arc::new(provider), cluster.clone());
    let report = driver
        .reconcile("2026-06-01T08:00:00Z".parse().expect("a time"))
        .await
        .expect("a reconcile");
    let launched = report
        .events
        .iter()
        .filter(|e| matches!(e, Event::Launched { .. }))
        .count();
    assert_eq!(launched, 1, "{:#?}", report.events);
    let puts = arm.state.lock().expect("state").vm_puts.clone();
    assert_eq!(puts.len(), 1);
    puts[0].clone()
}

fn size(vm: &Value) -> String {
    vm["properties"]["hardwareProfile"]["vmSize"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A pod selecting an AKS label that no NodePool mentions is planned and
/// launched through the driver, as upstream's provider registers its labels
/// as well known.
#[tokio::test]
async fn the_driver_plans_with_the_aks_labels() {
    let vm = launch_for(json!({labels::SKU_FAMILY: "D"})).await;
    let size = size(&vm);
    assert!(size.starts_with("Standard_D"), "{size}");
}

/// Sizes without a GPU have no `sku-gpu-name`: a pod asking for a T4 gets a
/// T4 size, not the cheapest size at all.
#[tokio::test]
async fn a_pod_selecting_a_gpu_name_gets_a_size_with_that_gpu() {
    let vm = launch_for(json!({labels::SKU_GPU_NAME: "T4"})).await;
    let size = size(&vm);
    assert!(size.contains("_T4_"), "{size}");
}

/// The same for the largest ephemeral OS disk, which most sizes lack.
#[tokio::test]
async fn a_pod_selecting_an_ephemeral_os_disk_size_gets_a_size_that_has_it() {
    let catalog = karpenter_azure::Catalog::embedded();
    let vm = launch_for(json!({labels::SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE: "107"})).await;
    let sku = catalog.sku(&size(&vm)).expect("in the catalog");
    assert_eq!(labels::ephemeral_os_max_size_gb(sku), 107, "{}", sku.name);
}

/// Nodes carry the cluster's node resource group; a claim for another
/// cluster's nodes cannot be launched here.
#[tokio::test]
async fn the_cluster_label_names_the_node_resource_group() {
    let (_server, _arm, provider) = provider().await;
    let ours = claim(
        "default-c1",
        json!([{"key": labels::CLUSTER, "operator": "In", "values": ["MC_rg_cluster_eastus"]}]),
    );
    let launched = provider.create(&ours).await.expect("launched");
    let node_labels = launched.metadata.labels.expect("labels");
    assert_eq!(node_labels[labels::CLUSTER], "MC_rg_cluster_eastus");
    let theirs = claim(
        "default-c2",
        json!([{"key": labels::CLUSTER, "operator": "In", "values": ["MC_other"]}]),
    );
    let error = provider.create(&theirs).await.expect_err("not here");
    assert!(
        matches!(error, CloudProviderError::InsufficientCapacity { .. }),
        "{error:?}"
    );
    assert!(provider.well_known_labels().contains(labels::CLUSTER));
}

/// A pod selecting a priority gets an offering of that priority: regular
/// (on-demand) even where spot costs the same and would be preferred, and
/// spot where asked.
#[tokio::test]
async fn a_pod_selecting_a_priority_gets_an_offering_of_that_priority() {
    for (selector, priority) in [
        (json!({labels::PRIORITY: "regular"}), "Regular"),
        (json!({labels::SCALE_SET_PRIORITY: "regular"}), "Regular"),
        (json!({labels::SCALE_SET_PRIORITY: "spot"}), "Spot"),
    ] {
        let vm = launch_for(selector.clone()).await;
        assert_eq!(vm["properties"]["priority"], priority, "{selector}");
    }
}

/// A claim selecting the regional placement scope launches without a zone;
/// the launched claim carries the offering's labels.
#[tokio::test]
async fn a_claim_selecting_a_placement_scope_launches_there() {
    let (_server, arm, provider) = provider().await;
    let regional = claim(
        "default-r1",
        json!([{"key": labels::PLACEMENT_SCOPE, "operator": "In", "values": ["regional"]}]),
    );
    let launched = provider.create(&regional).await.expect("launched");
    let node_labels = launched.metadata.labels.expect("labels");
    assert_eq!(node_labels["topology.kubernetes.io/zone"], "0");
    assert_eq!(node_labels[labels::PLACEMENT_SCOPE], "regional");
    let priority = &node_labels[labels::SCALE_SET_PRIORITY];
    assert_eq!(priority, &node_labels[labels::PRIORITY]);
    let capacity_type = &node_labels["karpenter.sh/capacity-type"];
    assert_eq!(priority == "spot", capacity_type == "spot");
    let vm = arm.state.lock().expect("state").vm_puts[0].clone();
    assert!(vm.get("zones").is_none(), "{vm}");
    // Read back, the VM says the same.
    let id = launched.status.and_then(|s| s.provider_id).expect("an ID");
    let read = provider.get(&id).await.expect("read back");
    let read_labels = read.metadata.labels.expect("labels");
    for key in [
        labels::PLACEMENT_SCOPE,
        labels::SCALE_SET_PRIORITY,
        labels::PRIORITY,
    ] {
        assert_eq!(read_labels[key], node_labels[key], "{key}");
    }
}

/// A claim that requires Ultra SSD gets a VM created with the capability (on
/// an offering that has it: a size's regional one), and reads back as having
/// it; a claim that leaves it open gets none, as upstream's
/// `resolveUltraSSDRequested` decides.
#[tokio::test]
async fn a_claim_requiring_ultra_ssd_launches_with_it() {
    let (_server, arm, provider) = provider().await;
    let wants = claim(
        "default-u1",
        json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D4s_v3"]},
            {"key": labels::SKU_STORAGE_ULTRA_SSD, "operator": "In", "values": ["true"]},
        ]),
    );
    let launched = provider.create(&wants).await.expect("launched");
    let vm = arm.state.lock().expect("state").vm_puts[0].clone();
    assert_eq!(
        vm["properties"]["additionalCapabilities"]["ultraSSDEnabled"],
        json!(true),
        "{vm}"
    );
    let node_labels = launched.metadata.labels.expect("labels");
    assert_eq!(node_labels[labels::SKU_STORAGE_ULTRA_SSD], "true");
    let id = launched.status.and_then(|s| s.provider_id).expect("an ID");
    let read = provider.get(&id).await.expect("read back");
    assert_eq!(
        read.metadata.labels.expect("labels")[labels::SKU_STORAGE_ULTRA_SSD],
        "true"
    );
    // Left open, no capability.
    let open = claim(
        "default-u2",
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D4s_v3"]}]),
    );
    provider.create(&open).await.expect("launched");
    let vm = arm.state.lock().expect("state").vm_puts[1].clone();
    assert!(
        vm["properties"].get("additionalCapabilities").is_none(),
        "{vm}"
    );
}
