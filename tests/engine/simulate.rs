//! The reference disruption simulation on the bundled example
//! (`examples/scenarios/disrupt-basic.yaml`: a large node running one small
//! pod, and an empty small node), and on variants of it.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::{Simulation, StrandedReason, simulate};
use karpenter::core::planning::PlanningOptions;
use karpenter::core::snapshot::Snapshot;
use karpenter::scenario::{LoadOptions, Scenario};

const EXAMPLE: &str = include_str!("../../examples/scenarios/disrupt-basic.yaml");

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a timestamp")
}

fn snapshot(text: &str) -> Snapshot {
    let scenario =
        Scenario::from_str("disrupt-basic.yaml", text, &LoadOptions::default()).expect("loads");
    let types = scenario.fake_instance_types().expect("instance types");
    scenario.into_snapshot(types)
}

fn without(snapshot: &Snapshot, nodes: &[&str]) -> Simulation {
    let removed: BTreeSet<&str> = nodes.iter().copied().collect();
    simulate(
        snapshot,
        &removed,
        &BTreeSet::new(),
        now(),
        PlanningOptions::default(),
    )
}

#[test]
fn removing_the_empty_node_moves_nothing() {
    let simulation = without(&snapshot(EXAMPLE), &["node-2"]);
    assert!(simulation.moved.is_empty());
    assert!(simulation.all_moved());
    assert_eq!(simulation.new_claims(), 0);
}

#[test]
fn the_pod_of_a_removed_node_moves_to_the_other_node() {
    let simulation = without(&snapshot(EXAMPLE), &["node-1"]);
    assert_eq!(simulation.moved, ["default/api-0"]);
    assert!(simulation.all_moved());
    assert_eq!(simulation.new_claims(), 0);
    let placed = &simulation.plan.existing_nodes;
    assert_eq!(placed.len(), 1);
    assert_eq!(placed[0].name, "node-2");
    assert_eq!(placed[0].pods, ["default/api-0"]);
}

#[test]
fn with_both_nodes_gone_the_pod_needs_one_cheap_claim() {
    let simulation = without(&snapshot(EXAMPLE), &["node-1", "node-2"]);
    assert!(simulation.all_moved());
    assert_eq!(simulation.new_claims(), 1);
    let launch = simulation.plan.node_claims[0]
        .launch
        .as_ref()
        .expect("a launch");
    assert_eq!(launch.instance_type, "small");
    assert_eq!(simulation.plan.total_price_per_hour, 0.1);
}

#[test]
fn a_do_not_disrupt_pod_stays_with_its_node() {
    let text = EXAMPLE.replacen(
        "  name: api-0\n",
        "  name: api-0\n  annotations:\n    karpenter.sh/do-not-disrupt: 'true'\n",
        1,
    );
    let simulation = without(&snapshot(&text), &["node-1"]);
    assert!(simulation.moved.is_empty());
    assert_eq!(simulation.new_claims(), 0);
}

#[test]
fn a_pod_landing_on_an_uninitialized_node_is_stranded() {
    // node-2 loses its initialized label and its claim's Initialized condition.
    let text = EXAMPLE
        .replace(
            "    kubernetes.io/hostname: node-2\n    kubernetes.io/arch: amd64\n    kubernetes.io/os: linux\n    karpenter.sh/initialized: 'true'\n",
            "    kubernetes.io/hostname: node-2\n    kubernetes.io/arch: amd64\n    kubernetes.io/os: linux\n",
        )
        .replace(
            "  nodeName: node-2\n  providerID: fake:///node-2\n  conditions:\n  - type: Launched\n    status: 'True'\n    lastTransitionTime: '2026-01-01T00:00:00Z'\n  - type: Registered\n    status: 'True'\n    lastTransitionTime: '2026-01-01T00:00:00Z'\n  - type: Initialized\n    status: 'True'\n",
            "  nodeName: node-2\n  providerID: fake:///node-2\n  conditions:\n  - type: Launched\n    status: 'True'\n    lastTransitionTime: '2026-01-01T00:00:00Z'\n  - type: Registered\n    status: 'True'\n    lastTransitionTime: '2026-01-01T00:00:00Z'\n  - type: Initialized\n    status: 'False'\n",
        );
    assert_ne!(text, EXAMPLE);
    let snapshot = snapshot(&text);
    let simulation = without(&snapshot, &["node-1"]);
    assert_eq!(simulation.moved, ["default/api-0"]);
    // The scheduler still places it there (an uninitialized managed node is
    // capacity), and the simulation refuses that move, as upstream does.
    assert_eq!(simulation.plan.existing_nodes[0].name, "node-2");
    assert!(!simulation.all_moved());
    assert_eq!(simulation.stranded[0].pod, "default/api-0");
    assert_eq!(
        simulation.stranded[0].reason,
        StrandedReason::Uninitialized {
            node: "node-2".to_owned()
        }
    );
    assert!(
        simulation.stranded[0]
            .reason
            .to_string()
            .contains("not initialized")
    );
}
