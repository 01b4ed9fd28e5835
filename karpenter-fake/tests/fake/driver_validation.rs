//! A computed emptiness or consolidation command waits (15 s, upstream's
//! `commandValidationDelay`) and is checked against the cluster as it is
//! then before it runs, as upstream's `validation.go` checks it; it is
//! dropped when the cluster moved under it. The cases follow upstream's
//! `consolidation_test.go: Consolidation > TTL` tests ("should wait for the
//! node TTL for non-empty nodes before consolidating", "should not
//! consolidate if the action becomes invalid during the node TTL wait",
//! "should not consolidate if the action picks different instance types
//! after the node TTL wait", "should not replace node if a pod schedules with
//! karpenter.sh/do-not-disrupt set to true during the TTL wait", "should not
//! replace node if a pod schedules with a blocking PDB during the TTL wait")
//! and `Consolidation > Delete > does not delete nodes with pod churn,
//! deletes nodes without pod churn`.
//!
//! Steps are 10 s apart: a command held at one step is checked at the
//! second step after (20 s on, the first at or after 15 s).

use std::sync::Arc;
use std::time::Duration;

use crate::support::{World, pool};
use k8s_openapi::api::core::v1::{Pod, PodStatus};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use karpenter_core::disruption::CommandReason;
use karpenter_core::driver::{Driver, DriverOptions, Event, SpawnBlocking, ValidationFailure};
use karpenter_core::pods::{bound_node, pod_key};
use karpenter_core::scheduling::DO_NOT_DISRUPT_ANNOTATION_KEY;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

/// A pool of on-demand nodes (no spot-to-spot rules in the way), budget
/// `budget` nodes.
fn on_demand_pool(budget: &str) -> serde_json::Value {
    let on_demand = json!([{
        "key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"],
    }]);
    pool("default", budget, on_demand)
}

/// A world settled by a driver that does not disrupt, from `pods`, added a
/// batch at a time (each batch settled before the next).
async fn settled(batches: Vec<Vec<Pod>>) -> World {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(on_demand_pool("10"));
    for batch in batches {
        world.add_pods(batch);
        world.run_until(30, |w| w.settled()).await;
    }
    world
}

/// Hands the world to a driver that disrupts, with `options`.
fn disrupting(world: &mut World, options: DriverOptions) {
    let options = options.with_planning_runner(SpawnBlocking);
    world.driver = Driver::new(world.provider.clone(), world.cluster.clone()).with_options(options);
}

/// Three pods that keep apart (hostname anti-affinity), each on a node of
/// its own, handed to a driver with `options`.
async fn one_pod_per_node(options: DriverOptions) -> World {
    let pods = (0..3)
        .map(|i| {
            pending_pod(
                &format!("app-{i}"),
                Shape::HostnameSelfAntiAffinity,
                "1",
                "1Gi",
            )
        })
        .collect();
    let mut world = settled(vec![pods]).await;
    assert_eq!(world.claims(), 3);
    disrupting(&mut world, options);
    world
}

/// Two 4-cpu nodes running half a cpu each (`small-0`, `small-1`, labelled
/// `app: small`): together they fit on one node a fraction of the price,
/// which multi-node consolidation finds.
async fn two_underused_nodes() -> World {
    let big = |name: &str| pending_pod(name, Shape::Plain, "3", "1Gi");
    let mut world = settled(vec![vec![big("big-0")], vec![big("big-1")]]).await;
    assert_eq!(world.claims(), 2);
    for (i, big) in ["big-0", "big-1"].into_iter().enumerate() {
        let node = node_of(&world, big);
        let mut small = bound_pod(&format!("small-{i}"), "500m", &node);
        small.metadata.labels = Some([("app".to_owned(), "small".to_owned())].into());
        world.cluster.apply_pod(small);
        delete(&world, big);
    }
    disrupting(&mut world, DriverOptions::default());
    world
}

/// A pod of `cpu` bound to `node` and running.
fn bound_pod(name: &str, cpu: &str, node: &str) -> Pod {
    let mut pod = pending_pod(name, Shape::Plain, cpu, "256Mi");
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = Some(node.to_owned());
    }
    pod.status = Some(PodStatus {
        phase: Some("Running".to_owned()),
        ..PodStatus::default()
    });
    pod
}

fn pod(world: &World, name: &str) -> Pod {
    world
        .cluster
        .pod_list()
        .into_iter()
        .find(|p| p.metadata.name.as_deref() == Some(name))
        .expect("the pod")
}

fn node_of(world: &World, name: &str) -> String {
    bound_node(&pod(world, name)).expect("bound").to_owned()
}

/// The claim of the node the pod `name` runs on.
fn claim_of(world: &World, name: &str) -> String {
    let node = node_of(world, name);
    world
        .cluster
        .node_claim_list()
        .into_iter()
        .find(|c| c.status.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node.as_str()))
        .and_then(|c| c.metadata.name)
        .expect("a claim")
}

fn delete(world: &World, name: &str) {
    assert!(world.cluster.delete_pod(&pod_key(&pod(world, name))));
}

/// A command as its events tell it: the step, the reason, the candidates.
type Told = (usize, CommandReason, Vec<String>);

fn held(world: &World) -> Vec<Told> {
    world
        .events
        .iter()
        .filter_map(|(step, e)| match e {
            Event::CommandHeld {
                reason, candidates, ..
            } => Some((*step, *reason, candidates.clone())),
            _ => None,
        })
        .collect()
}

fn started(world: &World) -> Vec<Told> {
    world
        .events
        .iter()
        .filter_map(|(step, e)| match e {
            Event::CommandStarted {
                reason, candidates, ..
            } => Some((*step, *reason, candidates.clone())),
            _ => None,
        })
        .collect()
}

fn dropped(world: &World) -> Vec<(usize, ValidationFailure, String)> {
    world
        .events
        .iter()
        .filter_map(|(step, e)| match e {
            Event::CommandDropped { failure, why, .. } => Some((*step, *failure, why.clone())),
            _ => None,
        })
        .collect()
}

/// Steps until a command is held; returns it.
async fn until_held(world: &mut World) -> Told {
    world.run_until(5, |w| !held(w).is_empty()).await;
    let first = held(world).remove(0);
    assert!(started(world).is_empty(), "nothing starts at once");
    first
}

/// Steps to the held command's check: one step still waits, the next
/// checks.
async fn to_the_check(world: &mut World, held_at: usize) {
    world.step().await;
    assert_eq!(world.step, held_at + 1);
    assert!(started(world).is_empty() && dropped(world).is_empty());
    world.step().await;
}

#[tokio::test]
async fn an_empty_node_waits_then_goes_when_nothing_changed() {
    let mut world = one_pod_per_node(DriverOptions::default()).await;
    let claim = claim_of(&world, "app-0");
    delete(&world, "app-0");
    let (at, reason, candidates) = until_held(&mut world).await;
    assert_eq!(
        (reason, candidates.clone()),
        (CommandReason::Empty, vec![claim])
    );
    to_the_check(&mut world, at).await;
    assert_eq!(
        started(&world),
        [(at + 2, CommandReason::Empty, candidates)]
    );
    assert!(dropped(&world).is_empty());
}

#[tokio::test]
async fn a_pod_bound_to_the_empty_node_while_it_waits_drops_the_command() {
    let mut world = one_pod_per_node(DriverOptions::default()).await;
    let node = node_of(&world, "app-0");
    let claim = claim_of(&world, "app-0");
    delete(&world, "app-0");
    let (at, ..) = until_held(&mut world).await;
    world.cluster.apply_pod(bound_pod("late", "500m", &node));
    to_the_check(&mut world, at).await;
    let dropped = dropped(&world);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(
        (dropped[0].0, dropped[0].1),
        (at + 2, ValidationFailure::Churn)
    );
    assert_eq!(dropped[0].2, "1 candidates are no longer valid");
    // The node, no longer empty, is not deleted as empty (consolidation
    // may move its new pod later: a command of its own, held and checked).
    for _ in 0..3 {
        world.step().await;
    }
    assert!(
        !started(&world)
            .iter()
            .any(|(_, reason, c)| *reason == CommandReason::Empty && c.contains(&claim)),
        "{:?}",
        started(&world)
    );
}

#[tokio::test]
async fn emptiness_keeps_the_candidates_still_empty() {
    let mut world = one_pod_per_node(DriverOptions::default()).await;
    let (busy_node, busy) = (node_of(&world, "app-0"), claim_of(&world, "app-0"));
    let still_empty = claim_of(&world, "app-1");
    delete(&world, "app-0");
    delete(&world, "app-1");
    let (at, _, mut candidates) = until_held(&mut world).await;
    candidates.sort();
    let mut both = vec![busy.clone(), still_empty.clone()];
    both.sort();
    assert_eq!(candidates, both);
    world
        .cluster
        .apply_pod(bound_pod("late", "500m", &busy_node));
    to_the_check(&mut world, at).await;
    assert!(dropped(&world).is_empty(), "{:?}", dropped(&world));
    assert_eq!(
        started(&world),
        [(at + 2, CommandReason::Empty, vec![still_empty])]
    );
}

#[tokio::test]
async fn a_budget_that_closes_while_it_waits_drops_the_command() {
    let mut world = one_pod_per_node(DriverOptions::default()).await;
    delete(&world, "app-0");
    let (at, ..) = until_held(&mut world).await;
    world.add_pool(on_demand_pool("0"));
    to_the_check(&mut world, at).await;
    let dropped = dropped(&world);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].1, ValidationFailure::Budget);
    assert!(started(&world).is_empty());
}

#[tokio::test]
async fn a_do_not_disrupt_node_annotation_while_it_waits_drops_the_command() {
    let mut world = one_pod_per_node(DriverOptions::default()).await;
    let name = node_of(&world, "app-0");
    delete(&world, "app-0");
    let (at, ..) = until_held(&mut world).await;
    let mut node = world
        .cluster
        .node_list()
        .into_iter()
        .find(|n| n.metadata.name.as_deref() == Some(name.as_str()))
        .expect("the node");
    node.metadata
        .annotations
        .get_or_insert_default()
        .insert(DO_NOT_DISRUPT_ANNOTATION_KEY.to_owned(), "true".to_owned());
    world.cluster.apply_node(node);
    to_the_check(&mut world, at).await;
    let dropped = dropped(&world);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].1, ValidationFailure::Churn);
    assert!(started(&world).is_empty());
}

#[tokio::test]
async fn with_no_delay_a_command_starts_at_once() {
    let options = DriverOptions::default().with_validation_delay(Duration::ZERO);
    let mut world = one_pod_per_node(options).await;
    let claim = claim_of(&world, "app-0");
    delete(&world, "app-0");
    world.step().await;
    assert_eq!(
        started(&world),
        [(world.step, CommandReason::Empty, vec![claim])]
    );
    assert!(held(&world).is_empty());
}

#[tokio::test]
async fn a_consolidation_waits_then_runs_when_nothing_changed() {
    let mut world = two_underused_nodes().await;
    let (at, reason, candidates) = until_held(&mut world).await;
    assert_eq!(reason, CommandReason::Underutilized);
    assert_eq!(candidates.len(), 2, "{candidates:?}");
    to_the_check(&mut world, at).await;
    assert_eq!(
        started(&world),
        [(at + 2, CommandReason::Underutilized, candidates)]
    );
    assert!(dropped(&world).is_empty());
}

#[tokio::test]
async fn a_consolidation_whose_simulation_changed_while_it_waits_is_dropped() {
    let mut world = two_underused_nodes().await;
    let node = node_of(&world, "small-0");
    let (at, ..) = until_held(&mut world).await;
    // The candidates' pods now need a node as large as one of theirs: the
    // cheap replacement the command launches no longer holds them.
    world.cluster.apply_pod(bound_pod("late", "2500m", &node));
    to_the_check(&mut world, at).await;
    let dropped = dropped(&world);
    assert!(!dropped.is_empty());
    assert_eq!(
        (dropped[0].0, dropped[0].1),
        (at + 2, ValidationFailure::Scheduling)
    );
    assert!(
        dropped[0]
            .2
            .contains("scheduling simulation produced new results"),
        "{}",
        dropped[0].2
    );
    assert!(started(&world).iter().all(|(step, ..)| *step > at + 2));
}

#[tokio::test]
async fn a_do_not_disrupt_pod_while_it_waits_drops_the_consolidation() {
    let mut world = two_underused_nodes().await;
    let (at, ..) = until_held(&mut world).await;
    let mut guarded = pod(&world, "small-1");
    guarded
        .metadata
        .annotations
        .get_or_insert_default()
        .insert(DO_NOT_DISRUPT_ANNOTATION_KEY.to_owned(), "true".to_owned());
    world.cluster.apply_pod(guarded);
    to_the_check(&mut world, at).await;
    let dropped = dropped(&world);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(
        (dropped[0].1, dropped[0].2.as_str()),
        (ValidationFailure::Churn, "1 candidates are no longer valid")
    );
    assert!(started(&world).is_empty());
}

#[tokio::test]
async fn a_blocking_pdb_created_while_it_waits_drops_the_consolidation() {
    let mut world = two_underused_nodes().await;
    let (at, ..) = until_held(&mut world).await;
    let budget: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "small", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "small"}}, "maxUnavailable": 0},
        "status": {
            "disruptionsAllowed": 0, "currentHealthy": 2,
            "desiredHealthy": 2, "expectedPods": 2,
        },
    }))
    .expect("a PodDisruptionBudget");
    world.cluster.apply_pod_disruption_budget(budget);
    to_the_check(&mut world, at).await;
    let dropped = dropped(&world);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].1, ValidationFailure::Churn);
    assert!(started(&world).is_empty());
}

#[tokio::test]
async fn a_restarted_driver_plans_the_held_command_again() {
    let mut world = one_pod_per_node(DriverOptions::default()).await;
    delete(&world, "app-0");
    let (at, _, candidates) = until_held(&mut world).await;
    disrupting(&mut world, DriverOptions::default());
    // The new driver knows nothing held: it plans, and holds, anew.
    world.step().await;
    let again = held(&world);
    assert_eq!(again.len(), 2, "{again:?}");
    assert_eq!(again[1], (at + 1, CommandReason::Empty, candidates));
    assert!(started(&world).is_empty());
}
