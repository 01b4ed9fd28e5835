//! Static NodePools held at their replicas, after upstream's
//! `pkg/controllers/static/{provisioning,deprovisioning}/suite_test.go`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::jiff::Timestamp;

use crate::features::{FeatureGate, FeatureGates};
use crate::planning::PlanningOptions;
use crate::provisioning::{
    ProvisioningOptions, ProvisioningPlan, plan_provisioning_with, validate,
};
use crate::scheduling::CapacityType;
use crate::snapshot::build::{InstanceTypeBuilder, NodeBuilder, NodePoolBuilder, PodBuilder};
use crate::snapshot::{ClusterNode, Snapshot};

const NOW: &str = "2026-06-01T00:00:00Z";

fn static_pool(replicas: i64, nodes_limit: Option<&str>) -> crate::api::NodePool {
    let mut builder = NodePoolBuilder::new("fixed").label("team", "infra");
    if let Some(limit) = nodes_limit {
        builder = builder.limit("nodes", limit);
    }
    let mut pool = builder.build();
    pool.spec.replicas = Some(replicas);
    pool
}

fn node(name: &str) -> ClusterNode {
    NodeBuilder::managed(name, "fixed", "small")
        .zone("zone-a")
        .allocatable("cpu", "2")
        .allocatable("memory", "4Gi")
        .allocatable("pods", "110")
        .build()
}

/// A claim not launched yet: no provider ID, no Node.
fn unlaunched(name: &str) -> ClusterNode {
    let mut node = node(name);
    node.node = None;
    if let Some(status) = node.node_claim.as_mut().and_then(|c| c.status.as_mut()) {
        status.provider_id = None;
        status.node_name = None;
    }
    node
}

fn snapshot(replicas: i64, limit: Option<&str>, nodes: Vec<ClusterNode>) -> Snapshot {
    Snapshot {
        node_pools: vec![static_pool(replicas, limit)],
        nodes,
        ..Snapshot::default()
    }
    .with_instance_types(
        "fixed",
        vec![
            InstanceTypeBuilder::new("small")
                .cpu("2")
                .memory("4Gi")
                .offering("zone-a", CapacityType::OnDemand, 0.1)
                .build(),
            InstanceTypeBuilder::new("large")
                .cpu("8")
                .memory("16Gi")
                .offering("zone-a", CapacityType::OnDemand, 0.4)
                .build(),
        ],
    )
}

fn plan(snapshot: &Snapshot) -> ProvisioningPlan {
    let gates = FeatureGates::UPSTREAM.with(FeatureGate::StaticCapacity, true);
    let options = ProvisioningOptions::from(PlanningOptions::default().with_feature_gates(gates))
        .at(NOW.parse::<Timestamp>().expect("a time"));
    let plan = plan_provisioning_with(snapshot, &options);
    let violations = validate(snapshot, &plan);
    assert!(violations.is_empty(), "{violations:#?}");
    plan
}

fn removed(plan: &ProvisioningPlan) -> Vec<(&str, &str)> {
    (plan.static_removals.iter())
        .map(|r| (r.node_claim.as_str(), r.reason.as_str()))
        .collect()
}

#[test]
fn a_static_pool_launches_up_to_its_replicas_with_no_pods() {
    // upstream: "should create NodeClaims to meet the replica count"
    let snapshot = snapshot(3, None, vec![node("fixed-1")]);
    let plan = plan(&snapshot);
    assert_eq!(plan.node_claims.len(), 2);
    for claim in &plan.node_claims {
        assert!(claim.pods.is_empty());
        assert_eq!(claim.node_pool, "fixed");
        let launch = claim.launch.as_ref().expect("a launch");
        assert_eq!(launch.instance_type, "small", "the cheapest type");
        // The template's requirements, as upstream writes a static claim.
        let keys: Vec<&str> = claim.requirements.iter().map(|r| r.key.as_str()).collect();
        assert!(keys.contains(&"team"), "{keys:?}");
        assert!(
            !keys.contains(&"node.kubernetes.io/instance-type"),
            "{keys:?}"
        );
    }
    assert!((plan.total_price_per_hour - 0.2).abs() < 1e-9);
    // Held: nothing more.
    let full = snapshot_with(3, vec![node("fixed-1"), node("fixed-2"), node("fixed-3")]);
    let held = self::plan(&full);
    assert!(held.node_claims.is_empty() && held.static_removals.is_empty());
}

fn snapshot_with(replicas: i64, nodes: Vec<ClusterNode>) -> Snapshot {
    snapshot(replicas, None, nodes)
}

#[test]
fn without_the_gate_a_static_pool_does_nothing() {
    let snapshot = snapshot(3, None, vec![]);
    let plan = plan_provisioning_with(&snapshot, &ProvisioningOptions::default());
    assert!(plan.node_claims.is_empty());
}

#[test]
fn the_nodes_limit_caps_the_launches() {
    // upstream: "should not exceed the node limit"
    let snapshot = snapshot(5, Some("3"), vec![node("fixed-1")]);
    assert_eq!(plan(&snapshot).node_claims.len(), 2);
}

#[test]
fn claims_taken_by_a_command_count_toward_the_replicas() {
    // upstream: running plus pending-disruption claims at the replica count
    // launch nothing (the disruption's replacement is on its way).
    let taken = NodeBuilder::managed("fixed-2", "fixed", "small")
        .zone("zone-a")
        .allocatable("cpu", "2")
        .taint(Taint {
            key: crate::scheduling::DISRUPTED_TAINT_KEY.to_owned(),
            effect: "NoSchedule".to_owned(),
            ..Taint::default()
        })
        .build();
    let snapshot = snapshot(2, None, vec![node("fixed-1"), taken]);
    assert!(plan(&snapshot).node_claims.is_empty());
}

#[test]
fn the_surplus_goes_unlaunched_first_then_empty_then_the_cheapest_to_disrupt() {
    // upstream: deprovisioning's candidate order.
    let nodes = vec![
        node("fixed-a"),
        node("fixed-b"),
        node("fixed-c"),
        unlaunched("fixed-d"),
        node("fixed-e"),
    ];
    let pods = [
        // fixed-a: one pod; fixed-b: two (dearer); fixed-c: held by
        // do-not-disrupt; fixed-e: a DaemonSet's only, so empty.
        PodBuilder::new("default", "a-0").on_node("fixed-a").build(),
        PodBuilder::new("default", "b-0").on_node("fixed-b").build(),
        PodBuilder::new("default", "b-1").on_node("fixed-b").build(),
        annotated(PodBuilder::new("default", "c-0").on_node("fixed-c").build()),
        daemon(
            PodBuilder::new("kube-system", "ds-e")
                .on_node("fixed-e")
                .build(),
        ),
    ];
    let snapshot = snapshot(1, None, nodes).with_pods(pods);
    let plan = plan(&snapshot);
    assert_eq!(
        removed(&plan),
        [
            ("fixed-d", "not launched yet"),
            ("fixed-e", "empty"),
            ("fixed-a", "the cheapest to disrupt"),
            ("fixed-b", "the cheapest to disrupt"),
        ]
    );
    assert!(plan.node_claims.is_empty());
    assert_eq!(plan.static_removals[1].node.as_deref(), Some("fixed-e"));
    assert_eq!(plan.static_removals[0].node, None);
}

#[test]
fn the_validator_notices_a_pool_not_held() {
    let snapshot = snapshot(3, None, vec![node("fixed-1")]);
    let mut short = plan(&snapshot);
    short.node_claims.pop();
    short.total_price_per_hour = 0.1;
    let rules: Vec<_> = validate(&snapshot, &short)
        .into_iter()
        .map(|v| v.rule)
        .collect();
    assert_eq!(rules, [crate::provisioning::Rule::StaticReplicas]);
    let mut with_pods = plan(&snapshot);
    with_pods.node_claims[0]
        .pods
        .push(crate::pods::PodKey::new("default", "x"));
    let rules: Vec<_> = validate(&snapshot, &with_pods)
        .into_iter()
        .map(|v| v.rule)
        .collect();
    assert!(
        rules.contains(&crate::provisioning::Rule::StaticClaim),
        "{rules:?}"
    );
}

/// The pod, held by `karpenter.sh/do-not-disrupt`.
fn annotated(mut pod: Pod) -> Pod {
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert("karpenter.sh/do-not-disrupt".to_owned(), "true".to_owned());
    pod
}

/// The pod, a DaemonSet's.
fn daemon(mut pod: Pod) -> Pod {
    pod.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".to_owned(),
        kind: "DaemonSet".to_owned(),
        name: "ds".to_owned(),
        uid: "ds-uid".to_owned(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    pod
}

#[test]
fn a_static_pool_no_type_suits_launches_nothing() {
    let mut snapshot = snapshot(2, None, vec![]);
    let mut pool = NodePoolBuilder::new("fixed")
        .requirement("node.kubernetes.io/instance-type", "In", ["huge"])
        .build();
    pool.spec.replicas = Some(2);
    snapshot.node_pools = vec![pool];
    let plan = plan(&snapshot);
    assert!(plan.node_claims.is_empty());
}
