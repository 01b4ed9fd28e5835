//! The driver and CapacityBuffers: with the `CapacityBuffer` gate on, the
//! buffers' virtual pods get room as pending pods would (a claim launched
//! for them alone), that room is never called empty, and a real pod that
//! comes finds it; with the gate off, buffers do nothing.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::core::v1::PodTemplate;
use karpenter_core::api::CapacityBuffer;
use karpenter_core::driver::DriverOptions;
use karpenter_core::features::{FeatureGate, FeatureGates};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

/// A world with the default pool (consolidating at once, every node
/// allowed), a 2-cpu chunk template and a buffer of `replicas` chunks.
fn world(gate: bool, replicas: i32) -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let gates = FeatureGates::default().with(FeatureGate::CapacityBuffer, gate);
    let world = World::new(
        provider,
        DriverOptions::default().with_planning(gates.into()),
    );
    world.add_pool(pool("default", "100%", json!([])));
    let template: PodTemplate = serde_json::from_value(json!({
        "metadata": {"name": "chunk", "namespace": "default"},
        "template": {"spec": {"containers": [
            {"name": "pause", "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}},
        ]}},
    }))
    .expect("a PodTemplate");
    let buffer: CapacityBuffer = serde_json::from_value(json!({
        "metadata": {"name": "headroom", "namespace": "default"},
        "spec": {"podTemplateRef": {"name": "chunk"}, "replicas": replicas},
    }))
    .expect("a CapacityBuffer");
    world.cluster.apply_pod_template(template);
    world.cluster.apply_capacity_buffer(buffer);
    world
}

#[tokio::test]
async fn a_buffer_buys_room_that_emptiness_keeps() {
    let mut world = world(true, 1);
    world
        .run_until(20, |w| w.claims() == 1 && w.settled())
        .await;
    // Empty of real pods, consolidating at once: still kept, step after step.
    for _ in 0..10 {
        world.step().await;
    }
    assert_eq!(world.claims(), 1);
    assert_eq!(world.pending(), 0);
}

#[tokio::test]
async fn with_the_gate_off_a_buffer_buys_nothing() {
    let mut world = world(false, 3);
    for _ in 0..5 {
        world.step().await;
    }
    assert_eq!(world.claims(), 0);
}

#[tokio::test]
async fn a_real_pod_lands_in_the_room_and_the_buffer_refills() {
    let mut world = world(true, 1);
    world
        .run_until(20, |w| w.claims() == 1 && w.settled())
        .await;
    let room = world.cluster.node_list();
    world.add_pods([pending_pod("web-0", Shape::Plain, "2", "2Gi")]);
    world
        .run_until(20, |w| w.pending() == 0 && w.claims() == 2 && w.settled())
        .await;
    // The pod took the room kept for it; the buffer bought more.
    let pods = world.cluster.pod_list();
    let web = pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some("web-0"))
        .expect("web-0");
    let on = web.spec.as_ref().and_then(|s| s.node_name.clone());
    assert_eq!(on, room[0].metadata.name);
}

#[tokio::test]
async fn deleting_the_buffer_lets_its_room_go() {
    let mut world = world(true, 1);
    world
        .run_until(20, |w| w.claims() == 1 && w.settled())
        .await;
    assert!(world.cluster.delete_capacity_buffer("default", "headroom"));
    world.run_until(20, |w| w.claims() == 0).await;
}
