//! The driver drains a node before its instance goes, through the Eviction
//! API: a PodDisruptionBudget that allows no disruption holds the node (its
//! instance stays) until it allows one, or until the claim's
//! `terminationGracePeriod` runs out; a pod with `karpenter.sh/do-not-disrupt`
//! is not evicted at all, and holds the node the same way.

use std::sync::Arc;

use crate::support::{World, pool, provider_ids};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use karpenter_core::cluster::Cluster as _;
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_core::pods::{bound_node, pod_key};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

/// A budget over `app: db` allowing `allowed` disruptions.
fn budget(allowed: i32) -> PodDisruptionBudget {
    serde_json::from_value(json!({
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}, "minAvailable": 1},
        "status": {
            "disruptionsAllowed": allowed, "currentHealthy": 1 + allowed,
            "desiredHealthy": 1, "expectedPods": 1 + allowed,
        },
    }))
    .expect("a PodDisruptionBudget")
}

/// A settled world of one node running `db-0` (labelled `app: db`), from a
/// pool whose claims carry `pool_extra` in their template spec.
async fn one_db_node(template_extra: serde_json::Value) -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    let mut pool = pool("default", "1", json!([]));
    if let (Some(spec), Some(extra)) = (
        pool["spec"]["template"]["spec"].as_object_mut(),
        template_extra.as_object(),
    ) {
        spec.extend(extra.clone());
    }
    world.add_pool(pool);
    let mut db = pending_pod("db-0", Shape::Plain, "1", "1Gi");
    db.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    world.add_pods([db]);
    world.run_until(20, |w| w.settled()).await;
    assert_eq!(world.claims(), 1);
    world
}

fn db_node(world: &World) -> Option<String> {
    world
        .cluster
        .pod_list()
        .iter()
        .find(|p| pod_key(p) == "default/db-0")
        .and_then(|p| bound_node(p).map(str::to_owned))
}

async fn delete_the_claim(world: &World) -> String {
    let claims = world.cluster.node_claim_list();
    let name = claims[0].metadata.name.clone().expect("a name");
    world
        .cluster
        .delete_node_claim(&name)
        .await
        .expect("deletion asked");
    name
}

#[tokio::test]
async fn a_budget_allowing_no_disruption_holds_the_node_until_it_allows_one() {
    let mut world = one_db_node(json!({})).await;
    let node = db_node(&world).expect("db-0 runs");
    let instance = provider_ids(&world);
    world.cluster.apply_pod_disruption_budget(budget(0));
    delete_the_claim(&world).await;
    for _ in 0..5 {
        world.step().await;
    }
    // Drained it is not: the pod stays, and so does the instance (beside
    // the capacity provisioning bought for the pod, as upstream plans for
    // the pods of a node being deleted).
    assert_eq!(db_node(&world).as_deref(), Some(node.as_str()));
    assert!(provider_ids(&world).contains(&instance[0]));
    assert!(world.count(|e| matches!(e, Event::EvictionBlocked { .. })) >= 5);
    assert_eq!(world.count(|e| matches!(e, Event::Terminated { .. })), 0);

    // The budget allows one: the pod goes, then the node, and the pod runs
    // on new capacity.
    world.cluster.apply_pod_disruption_budget(budget(1));
    world
        .run_until(30, |w| {
            w.count(|e| matches!(e, Event::Terminated { .. })) == 1 && w.settled()
        })
        .await;
    let moved = db_node(&world).expect("db-0 runs again");
    assert_ne!(moved, node);
    assert!(!provider_ids(&world).contains(&instance[0]));
}

#[tokio::test]
async fn the_termination_grace_period_ends_the_wait() {
    let mut world = one_db_node(json!({"terminationGracePeriod": "60s"})).await;
    world.cluster.apply_pod_disruption_budget(budget(0));
    delete_the_claim(&world).await;
    let steps = world
        .run_until(30, |w| {
            w.count(|e| matches!(e, Event::Terminated { .. })) == 1
        })
        .await;
    // Held for the grace period (steps of 10 s), then terminated anyway.
    assert!((6..=8).contains(&steps), "terminated after {steps} steps");
    assert!(world.count(|e| matches!(e, Event::EvictionBlocked { .. })) >= 5);
}

/// Marks db-0 `karpenter.sh/do-not-disrupt: "true"`.
fn guard_db(world: &World) {
    let mut db = world
        .cluster
        .pod_list()
        .into_iter()
        .find(|p| pod_key(p) == "default/db-0")
        .expect("db-0");
    db.metadata.annotations =
        Some([("karpenter.sh/do-not-disrupt".to_owned(), "true".to_owned())].into());
    world.cluster.apply_pod(db);
}

#[tokio::test]
async fn a_do_not_disrupt_pod_is_not_evicted_and_holds_the_node() {
    let mut world = one_db_node(json!({})).await;
    let node = db_node(&world).expect("db-0 runs");
    let instance = provider_ids(&world);
    guard_db(&world);
    delete_the_claim(&world).await;
    for _ in 0..10 {
        world.step().await;
    }
    // Without a grace period the node waits for as long as the pod runs.
    assert_eq!(db_node(&world).as_deref(), Some(node.as_str()));
    assert!(provider_ids(&world).contains(&instance[0]));
    assert!(world.count(|e| matches!(e, Event::EvictionWaiting { .. })) >= 10);
    assert_eq!(world.count(|e| matches!(e, Event::Terminated { .. })), 0);
}

#[tokio::test]
async fn a_do_not_disrupt_pod_holds_the_node_until_the_grace_period_ends() {
    let mut world = one_db_node(json!({"terminationGracePeriod": "60s"})).await;
    let node = db_node(&world).expect("db-0 runs");
    guard_db(&world);
    delete_the_claim(&world).await;
    let steps = world
        .run_until(30, |w| {
            w.count(|e| matches!(e, Event::Terminated { .. })) == 1
        })
        .await;
    assert!((6..=8).contains(&steps), "terminated after {steps} steps");
    // Never evicted: it ran on its node until the node went.
    assert!(world.count(|e| matches!(e, Event::EvictionWaiting { .. })) >= 5);
    assert_eq!(
        world.count(|e| matches!(e, Event::EvictionBlocked { .. })),
        0
    );
    world.run_until(30, |w| w.settled()).await;
    let moved = db_node(&world).expect("db-0 runs again");
    assert_ne!(moved, node);
}
