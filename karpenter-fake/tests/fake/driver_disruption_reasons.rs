//! What the driver tells about the nodes it leaves alone when it plans
//! disruption: a node that may not be disrupted, and why
//! (`Event::DisruptionBlocked`), and a node single-node consolidation
//! evaluated and could not consolidate, and why (`Event::Unconsolidatable`);
//! each once per node and reason, not once per reconcile.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_core::pods::bound_node;
use karpenter_core::scheduling::DO_NOT_DISRUPT_ANNOTATION_KEY;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

/// A world of one on-demand pool running `pod` alone on a node of its own,
/// settled.
async fn one_pod_world(pod: Pod) -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default());
    let on_demand = json!([{
        "key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"],
    }]);
    world.add_pool(pool("default", "1", on_demand));
    world.add_pods([pod]);
    world.run_until(30, |w| w.settled()).await;
    world
}

/// The pod `default/<name>` as the cluster has it now (bound), with the
/// `karpenter.sh/do-not-disrupt` annotation set or removed.
fn with_do_not_disrupt(world: &World, name: &str, on: bool) -> Pod {
    let mut pod = world
        .cluster
        .pod_list()
        .into_iter()
        .find(|p| p.metadata.name.as_deref() == Some(name))
        .expect("the pod");
    let annotations = pod.metadata.annotations.get_or_insert_default();
    if on {
        annotations.insert(DO_NOT_DISRUPT_ANNOTATION_KEY.to_owned(), "true".to_owned());
    } else {
        annotations.remove(DO_NOT_DISRUPT_ANNOTATION_KEY);
    }
    pod
}

fn node_of(world: &World, name: &str) -> String {
    let pods = world.cluster.pod_list();
    let pod = pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some(name))
        .expect("the pod");
    bound_node(pod).expect("bound").to_owned()
}

fn blocked(world: &World) -> Vec<(String, String)> {
    world
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::DisruptionBlocked { node, reason } => Some((node.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

fn unconsolidatable(world: &World) -> Vec<(String, String)> {
    world
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Unconsolidatable { node, reason } => Some((node.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_do_not_disrupt_pod_blocks_its_node_reported_once() {
    let mut pod = pending_pod("keep", Shape::Plain, "1", "1Gi");
    pod.metadata.annotations =
        Some([(DO_NOT_DISRUPT_ANNOTATION_KEY.to_owned(), "true".to_owned())].into());
    let mut world = one_pod_world(pod).await;
    for _ in 0..4 {
        world.step().await;
    }
    let node = node_of(&world, "keep");
    let reported = blocked(&world);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0].0, node);
    assert!(
        reported[0].1.contains("default/keep") && reported[0].1.contains("do-not-disrupt"),
        "{}",
        reported[0].1
    );
    // Blocked for nothing else: single-node consolidation never saw it.
    assert!(
        unconsolidatable(&world).is_empty(),
        "{:?}",
        unconsolidatable(&world)
    );
    // Released, then held again: reported again, once.
    world.add_pods([with_do_not_disrupt(&world, "keep", false)]);
    for _ in 0..2 {
        world.step().await;
    }
    assert_eq!(blocked(&world).len(), 1);
    world.add_pods([with_do_not_disrupt(&world, "keep", true)]);
    for _ in 0..3 {
        world.step().await;
    }
    let reported = blocked(&world);
    assert_eq!(reported.len(), 2, "{reported:?}");
    assert_eq!(reported[1], reported[0]);
    // The node ran throughout.
    assert_eq!(node_of(&world, "keep"), node);
}

#[tokio::test]
async fn a_node_with_no_cheaper_replacement_is_unconsolidatable_reported_once() {
    // The pod's node is the cheapest type it fits: nothing cheaper replaces it.
    let mut world = one_pod_world(pending_pod("web", Shape::Plain, "1", "1Gi")).await;
    for _ in 0..4 {
        world.step().await;
    }
    let node = node_of(&world, "web");
    let reported = unconsolidatable(&world);
    assert_eq!(
        reported,
        [(node.clone(), "Can't replace with a cheaper node".to_owned())]
    );
    assert!(blocked(&world).is_empty(), "{:?}", blocked(&world));
    assert_eq!(
        world.count(|e| matches!(e, Event::CommandStarted { .. })),
        0
    );
    // Blocked a while (not evaluated, so not refused), then free again: the
    // plans that tried every candidate no longer refused it, so it is
    // reported again.
    world.add_pods([with_do_not_disrupt(&world, "web", true)]);
    world.step().await;
    world.add_pods([with_do_not_disrupt(&world, "web", false)]);
    for _ in 0..3 {
        world.step().await;
    }
    let reported = unconsolidatable(&world);
    assert_eq!(reported.len(), 2, "{reported:?}");
    assert_eq!(reported[1], reported[0]);
}

#[test]
fn the_events_say_which_node_and_why() {
    let blocked = Event::DisruptionBlocked {
        node: "node-a".into(),
        reason: "Pod \"default/keep\" has \"karpenter.sh/do-not-disrupt\" annotation".into(),
    };
    assert_eq!(
        blocked.to_string(),
        "cannot disrupt node node-a: Pod \"default/keep\" has \"karpenter.sh/do-not-disrupt\" annotation"
    );
    let refused = Event::Unconsolidatable {
        node: "node-a".into(),
        reason: "Can't replace with a cheaper node".into(),
    };
    assert_eq!(
        refused.to_string(),
        "cannot consolidate node node-a: Can't replace with a cheaper node"
    );
}
