//! The driver and nominated pods. A pod nominated to a node is preempting
//! there (upstream's `IsPreempting`): it is about to schedule, so the driver
//! buys nothing for it while the node can take it, and plans it again once
//! the nomination is void.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_core::pods::{bound_node, pod_key};
use karpenter_core::resources::ResourceList;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};

/// A world of one node, running one 1-cpu pod, settled.
async fn one_node() -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "1", serde_json::json!([])));
    world.add_pods([pending_pod("web-0", Shape::Plain, "1", "1Gi")]);
    world.run_until(20, |w| w.settled()).await;
    assert_eq!(world.claims(), 1);
    world
}

/// A pod of `cpu` that does not fit beside `web-0` on the world's node,
/// nominated to `node`.
fn preemptor(node: &str, cpu: &str) -> Pod {
    let mut pod = pending_pod("urgent-0", Shape::Plain, cpu, "1Gi");
    if let Some(status) = pod.status.as_mut() {
        status.nominated_node_name = Some(node.to_owned());
    }
    pod
}

/// The preemptor as the cluster has it now.
fn preemptor_now(world: &World) -> Pod {
    world
        .cluster
        .pod_list()
        .into_iter()
        .find(|p| pod_key(p) == "default/urgent-0")
        .expect("the pod")
}

fn created(world: &World) -> usize {
    world.count(|e| matches!(e, Event::ClaimCreated { .. }))
}

#[tokio::test]
async fn a_pod_preempting_on_a_node_gets_no_new_capacity() {
    let mut world = one_node().await;
    let nodes = world.cluster.node_list();
    let node = nodes[0].metadata.name.clone().expect("a name");
    // All the node's cpu: it fits there only once web-0 is gone, as the
    // kube-scheduler preempting web-0 would make it.
    let allocatable = nodes[0]
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .map(|a| ResourceList::from_quantities(a).expect("quantities"))
        .expect("allocatable");
    let cpu = format!("{}m", allocatable.get("cpu"));
    world.add_pods([preemptor(&node, &cpu)]);
    let before = created(&world);
    for _ in 0..5 {
        world.step().await;
    }
    assert_eq!(
        created(&world),
        before,
        "a claim was bought for a preempting pod"
    );
    let urgent = preemptor_now(&world);
    assert_eq!(bound_node(&urgent), None);

    // The kube-scheduler gives up on the node: the pod is pending, and the
    // driver buys it a node at once.
    let mut given_up = urgent;
    if let Some(status) = given_up.status.as_mut() {
        status.nominated_node_name = None;
    }
    world.add_pods([given_up]);
    world.run_until(10, |w| w.pending() == 0).await;
    assert_eq!(created(&world), before + 1);
    let bound = preemptor_now(&world);
    assert!(bound_node(&bound).is_some_and(|n| n != node));
}

#[tokio::test]
async fn a_pod_nominated_to_a_node_that_is_gone_is_planned_again() {
    let mut world = one_node().await;
    let before = created(&world);
    world.add_pods([preemptor("default-gone", "1")]);
    world.run_until(10, |w| w.pending() == 0).await;
    // It went on the existing node, or on a claim of its own.
    let urgent = preemptor_now(&world);
    assert!(bound_node(&urgent).is_some());
    assert!(created(&world) <= before + 1);
}
