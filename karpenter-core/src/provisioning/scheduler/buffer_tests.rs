//! CapacityBuffer virtual pods through the scheduler: planned with the
//! pending pods, counted by buffer, never listed as pods.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplate;
use serde_json::json;

use crate::api::CapacityBuffer;
use crate::capacity_buffers::CapacityBuffers;
use crate::features::{FeatureGate, FeatureGates};
use crate::planning::PlanningOptions;
use crate::provisioning::test_support::{instance_type, pod, snapshot};
use crate::provisioning::{ProvisioningOptions, plan_provisioning_with, validate};
use crate::snapshot::Snapshot;
use crate::snapshot::build::{NodeBuilder, PodBuilder};

/// A buffer `headroom` of `replicas` chunks of `cpu` cores each.
fn buffers(replicas: i32, cpu: &str) -> CapacityBuffers {
    let buffer: CapacityBuffer = serde_json::from_value(json!({
        "metadata": {"name": "headroom", "namespace": "default"},
        "spec": {"podTemplateRef": {"name": "chunk"}, "replicas": replicas},
    }))
    .expect("a buffer");
    let template: PodTemplate = serde_json::from_value(json!({
        "metadata": {"name": "chunk", "namespace": "default"},
        "template": {"spec": {"containers": [
            {"name": "pause", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}},
        ]}},
    }))
    .expect("a template");
    CapacityBuffers::new(vec![buffer], vec![template], Vec::new())
}

fn gates_on() -> ProvisioningOptions {
    ProvisioningOptions::from(
        PlanningOptions::default()
            .with_feature_gates(FeatureGates::default().with(FeatureGate::CapacityBuffer, true)),
    )
}

/// A 2-core type at 0.1, and an initialized node of it (`node-a`) running
/// a pod of `used` cores.
fn with_node(pending: Vec<k8s_openapi::api::core::v1::Pod>, used: &str) -> Snapshot {
    let mut cluster = snapshot(vec![instance_type("small", 2, 4, 0.1)], pending);
    cluster.nodes.push(
        NodeBuilder::managed("node-a", "default", "small")
            .zone("zone-a")
            .allocatable("cpu", "2")
            .allocatable("memory", "4Gi")
            .allocatable("pods", "110")
            .build(),
    );
    let running = PodBuilder::new("default", "running")
        .requests(used, "1Gi")
        .on_node("node-a")
        .build();
    cluster.pods.push(Arc::new(running.into()));
    cluster
}

#[test]
fn buffers_launch_claims_that_list_no_pods_only_with_the_gate() {
    let mut cluster = snapshot(vec![instance_type("small", 2, 4, 0.1)], Vec::new());
    cluster.capacity_buffers = buffers(3, "1");
    let off = plan_provisioning_with(&cluster, &ProvisioningOptions::default());
    assert!(off.node_claims.is_empty() && off.capacity_buffers.is_empty());

    let plan = plan_provisioning_with(&cluster, &gates_on());
    // Two chunks of 1 core on a 2-core node, one on another.
    assert_eq!(plan.node_claims.len(), 2);
    let counts: Vec<u32> = plan
        .node_claims
        .iter()
        .map(|c| {
            assert!(c.pods.is_empty(), "virtual pods are not listed: {c:?}");
            c.capacity_buffers["default/headroom"]
        })
        .collect();
    assert_eq!(counts, [2, 1]);
    assert!(plan.unschedulable.is_empty() && plan.existing_nodes.is_empty());
    assert_eq!(plan.total_price_per_hour, 0.2);
    let summary = &plan.capacity_buffers[0];
    assert_eq!(
        (summary.replicas, summary.new_claims, summary.unschedulable),
        (3, 3, 0)
    );
    assert_eq!(summary.ready, "Resolved");
    assert_eq!(summary.provisioning.as_deref(), Some("RequiresNewCapacity"));
    assert!(
        validate(&cluster, &plan).is_empty(),
        "{:?}",
        validate(&cluster, &plan)
    );
}

#[test]
fn room_on_an_existing_node_holds_the_chunks() {
    let mut cluster = with_node(Vec::new(), "500m");
    cluster.capacity_buffers = buffers(1, "1");
    let plan = plan_provisioning_with(&cluster, &gates_on());
    assert!(plan.node_claims.is_empty());
    // No real pod moved there: no placement is listed.
    assert!(plan.existing_nodes.is_empty());
    let summary = &plan.capacity_buffers[0];
    assert_eq!(
        summary.existing_nodes,
        BTreeMap::from([("node-a".to_owned(), 1)])
    );
    assert_eq!(
        summary.provisioning.as_deref(),
        Some("FitsExistingCapacity")
    );
}

#[test]
fn a_pending_pod_of_equal_size_goes_first() {
    // 1.5 cores free on node-a: one 1-core pod fits there.
    let mut cluster = with_node(vec![pod("web", "1", "256Mi")], "500m");
    cluster.capacity_buffers = buffers(1, "1");
    let plan = plan_provisioning_with(&cluster, &gates_on());
    assert_eq!(plan.existing_nodes.len(), 1);
    assert_eq!(plan.existing_nodes[0].pods[0].to_string(), "default/web");
    assert_eq!(plan.node_claims.len(), 1);
    assert!(plan.node_claims[0].pods.is_empty());
    assert_eq!(plan.node_claims[0].capacity_buffers["default/headroom"], 1);
}

#[test]
fn a_larger_chunk_goes_before_a_smaller_pending_pod() {
    // The queue orders by size, priority aside: the 1.5-core chunk takes
    // node-a's room and the half-core pod needs a new claim.
    let mut cluster = with_node(vec![pod("web", "500m", "256Mi")], "500m");
    cluster.capacity_buffers = buffers(1, "1500m");
    let plan = plan_provisioning_with(&cluster, &gates_on());
    assert!(plan.existing_nodes.is_empty());
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods[0].to_string(), "default/web");
    assert!(plan.node_claims[0].capacity_buffers.is_empty());
    assert_eq!(
        plan.capacity_buffers[0].existing_nodes,
        BTreeMap::from([("node-a".to_owned(), 1)])
    );
}

#[test]
fn chunks_too_large_for_any_type_are_counted_not_listed() {
    let mut cluster = snapshot(vec![instance_type("small", 2, 4, 0.1)], Vec::new());
    cluster.capacity_buffers = buffers(2, "3");
    let plan = plan_provisioning_with(&cluster, &gates_on());
    assert!(plan.node_claims.is_empty() && plan.unschedulable.is_empty());
    assert_eq!(plan.capacity_buffers[0].unschedulable, 2);
    assert_eq!(
        plan.capacity_buffers[0].provisioning.as_deref(),
        Some("RequiresNewCapacity")
    );
}

#[test]
fn the_validator_holds_chunks_to_their_counts_and_their_room() {
    use crate::provisioning::Rule;
    let rules = |cluster: &Snapshot, plan: &crate::provisioning::ProvisioningPlan| {
        validate(cluster, plan)
            .into_iter()
            .map(|v| v.rule)
            .collect::<Vec<_>>()
    };
    let mut fresh = snapshot(vec![instance_type("small", 2, 4, 0.1)], Vec::new());
    fresh.capacity_buffers = buffers(3, "1");
    let plan = plan_provisioning_with(&fresh, &gates_on());
    assert!(rules(&fresh, &plan).is_empty());

    // A chunk lost from a claim.
    let mut lost = plan.clone();
    lost.node_claims[1].capacity_buffers.clear();
    assert_eq!(rules(&fresh, &lost), [Rule::CapacityBuffer]);
    // A third chunk on a 2-core claim: over-committed.
    let mut crowded = plan.clone();
    crowded.node_claims[0]
        .capacity_buffers
        .insert("default/headroom".into(), 3);
    crowded.node_claims.pop();
    crowded.total_price_per_hour = 0.1;
    assert_eq!(rules(&fresh, &crowded), [Rule::OverCommitted]);
    // A buffer the cluster does not have.
    let mut stray = plan.clone();
    stray.node_claims[1].capacity_buffers = BTreeMap::from([("default/other".into(), 1)]);
    assert!(rules(&fresh, &stray).contains(&Rule::CapacityBuffer));

    // Chunks on an existing node count against its room.
    let mut cluster = with_node(Vec::new(), "500m");
    cluster.capacity_buffers = buffers(1, "1");
    let plan = plan_provisioning_with(&cluster, &gates_on());
    assert!(rules(&cluster, &plan).is_empty());
    let mut heavy = plan.clone();
    heavy.capacity_buffers[0]
        .existing_nodes
        .insert("node-a".into(), 2);
    heavy.capacity_buffers[0].replicas = 2;
    let found = rules(&cluster, &heavy);
    assert!(found.contains(&Rule::OverCommitted), "{found:?}");
}

#[test]
fn buffers_without_chunks_are_listed_when_nothing_else_is_planned() {
    let mut cluster = snapshot(vec![instance_type("small", 2, 4, 0.1)], Vec::new());
    cluster.capacity_buffers = buffers(0, "1");
    let plan = plan_provisioning_with(&cluster, &gates_on());
    assert!(plan.node_claims.is_empty());
    assert_eq!(plan.capacity_buffers.len(), 1);
    assert_eq!(
        plan.capacity_buffers[0].provisioning.as_deref(),
        Some("BufferEmpty")
    );
    assert!(validate(&cluster, &plan).is_empty());
}
