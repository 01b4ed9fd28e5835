//! What the in-memory cluster notes as a cluster would: pools carry their
//! template hash (so a template change drifts their nodes, as upstream's
//! hash controller makes it), and claims note the pod events that restart
//! `consolidateAfter`.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::apps::v1::Deployment;
use karpenter_core::api::NodePool;
use karpenter_core::disruption::CommandReason;
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use serde_json::json;

fn web(replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]},
            },
        },
    }))
    .expect("a Deployment")
}

fn world(options: DriverOptions) -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    World::new(provider, options)
}

#[tokio::test]
async fn a_template_change_drifts_the_pools_nodes_and_they_are_replaced() {
    let mut world = world(DriverOptions::default());
    world.add_pool(pool("default", "100%", json!([])));
    world.cluster.apply_deployment(&web(2));
    world.run_until(30, |w| w.settled()).await;
    let before = world.claim_names();
    assert!(!before.is_empty());
    // The template gains a label: its hash changes, every claim drifts.
    let mut changed: NodePool =
        serde_json::from_value(pool("default", "100%", json!([]))).expect("a pool");
    changed
        .spec
        .template
        .metadata
        .get_or_insert_with(Default::default)
        .labels = Some([("team".to_owned(), "shop".to_owned())].into());
    world.cluster.apply_node_pool(changed);
    world
        .run_until(60, |w| {
            w.settled() && w.claim_names().iter().all(|n| !before.contains(n))
        })
        .await;
    let drifted = world.count(|e| {
        matches!(
            e,
            Event::CommandStarted {
                reason: CommandReason::Drifted,
                ..
            }
        )
    });
    assert!(drifted >= 1, "no drift command");
    assert_eq!(world.pending(), 0);
}

#[tokio::test]
async fn pod_events_are_noted_on_the_claim() {
    let mut world = world(DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "100%", json!([])));
    world.cluster.apply_deployment(&web(2));
    world.run_until(30, |w| w.settled()).await;
    let stamp = |world: &World| {
        world.cluster.node_claim_list()[0]
            .status
            .as_ref()
            .and_then(|s| s.last_pod_event_time.clone())
            .map(|t| t.0)
    };
    let bound_at = stamp(&world).expect("a pod event when the pods bound");
    assert!(bound_at <= world.now);
    for _ in 0..3 {
        world.step().await;
    }
    assert_eq!(stamp(&world), Some(bound_at), "nothing happened since");
    world
        .cluster
        .scale_deployment("default", "web", 1)
        .expect("scaled");
    assert_eq!(
        stamp(&world),
        Some(world.now),
        "a pod went: the claim notes it"
    );
}
