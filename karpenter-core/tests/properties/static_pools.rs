//! Static NodePools over random clusters: the plan holds each pool at its
//! replicas within its `nodes` limit (as the plan validator checks), and a
//! cluster that carries the plan out needs nothing more.

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::jiff::Timestamp;
use karpenter_core::Snapshot;
use karpenter_core::features::{FeatureGate, FeatureGates};
use karpenter_core::planning::PlanningOptions;
use karpenter_core::provisioning::{ProvisioningOptions, plan_provisioning_with, validate};
use karpenter_core::scheduling::{CapacityType, DISRUPTED_TAINT_KEY};
use karpenter_core::snapshot::ClusterNode;
use karpenter_core::snapshot::build::{
    InstanceTypeBuilder, NodeBuilder, NodePoolBuilder, PodBuilder,
};
use proptest::prelude::*;
use serde_json::json;

/// What a claim of the pool is: launched, not launched yet, taken by a
/// command, or being deleted; and how many pods it runs.
#[derive(Clone, Copy, Debug)]
enum State {
    Running(usize),
    Unlaunched,
    Taken,
    Deleting,
}

fn state() -> impl Strategy<Value = State> {
    prop_oneof![
        4 => (0usize..3).prop_map(State::Running),
        1 => Just(State::Unlaunched),
        1 => Just(State::Taken),
        1 => Just(State::Deleting),
    ]
}

fn claim(name: &str, state: State) -> ClusterNode {
    let mut builder = NodeBuilder::managed(name, "fixed", "small")
        .zone("zone-a")
        .allocatable("cpu", "2")
        .allocatable("memory", "4Gi")
        .allocatable("pods", "10");
    if let State::Taken = state {
        builder = builder.taint(Taint {
            key: DISRUPTED_TAINT_KEY.to_owned(),
            effect: "NoSchedule".to_owned(),
            ..Taint::default()
        });
    }
    let mut node = builder.build();
    match state {
        State::Unlaunched => {
            node.node = None;
            if let Some(status) = node.node_claim.as_mut().and_then(|c| c.status.as_mut()) {
                status.provider_id = None;
                status.node_name = None;
            }
        }
        State::Deleting => {
            if let Some(claim) = node.node_claim.as_mut() {
                claim.metadata.deletion_timestamp =
                    Some(serde_json::from_value(json!("2026-01-01T00:00:00Z")).expect("a time"));
            }
        }
        _ => {}
    }
    node
}

fn snapshot(replicas: i64, limit: Option<u32>, states: &[State]) -> Snapshot {
    let mut pool = NodePoolBuilder::new("fixed");
    if let Some(limit) = limit {
        pool = pool.limit("nodes", limit.to_string());
    }
    let mut pool = pool.build();
    pool.spec.replicas = Some(replicas);
    let nodes: Vec<ClusterNode> = (states.iter().enumerate())
        .map(|(i, &s)| claim(&format!("fixed-{i:02}"), s))
        .collect();
    let pods: Vec<_> = (states.iter().enumerate())
        .flat_map(|(i, s)| {
            let count = if let State::Running(n) = s { *n } else { 0 };
            (0..count).map(move |p| {
                PodBuilder::new("default", format!("p-{i}-{p}"))
                    .requests("100m", "100Mi")
                    .on_node(format!("fixed-{i:02}"))
                    .build()
            })
        })
        .collect();
    Snapshot {
        node_pools: vec![pool],
        nodes,
        ..Snapshot::default()
    }
    .with_pods(pods)
    .with_instance_types(
        "fixed",
        vec![
            InstanceTypeBuilder::new("small")
                .cpu("2")
                .memory("4Gi")
                .offering("zone-a", CapacityType::OnDemand, 0.1)
                .build(),
        ],
    )
}

fn options() -> ProvisioningOptions {
    let gates = FeatureGates::UPSTREAM.with(FeatureGate::StaticCapacity, true);
    ProvisioningOptions::from(PlanningOptions::default().with_feature_gates(gates))
        .at("2026-06-01T00:00:00Z".parse::<Timestamp>().expect("a time"))
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn static_pools_are_held_at_their_replicas(
        replicas in 0i64..6,
        limit in prop::option::of(0u32..8),
        states in prop::collection::vec(state(), 0..8),
    ) {
        let snapshot = snapshot(replicas, limit, &states);
        let plan = plan_provisioning_with(&snapshot, &options());
        let violations = validate(&snapshot, &plan);
        prop_assert!(violations.is_empty(), "{:?}\n{}", violations, serde_json::to_string(&plan).unwrap_or_default());
        prop_assert!(plan.node_claims.is_empty() || plan.static_removals.is_empty());
        // Carried out: the launches become claims in flight, the removals
        // are being deleted. The next plan has nothing to do, unless the
        // limit or the taken claims held the launches back.
        let mut after = states.clone();
        for removal in &plan.static_removals {
            let at: usize = removal.node_claim["fixed-".len()..].parse().expect("an index");
            after[at] = State::Deleting;
        }
        after.extend(plan.node_claims.iter().map(|_| State::Unlaunched));
        let next = plan_provisioning_with(&self::snapshot(replicas, limit, &after), &options());
        prop_assert!(next.static_removals.is_empty(), "{:?}", next.static_removals);
        let active = after.iter().filter(|s| matches!(s, State::Running(_) | State::Unlaunched)).count() as i64;
        if active >= replicas {
            prop_assert!(next.node_claims.is_empty());
        }
        let taken = states.iter().filter(|s| matches!(s, State::Taken)).count();
        if limit.is_none() && taken == 0 {
            prop_assert_eq!(active, replicas, "held exactly");
        }
    }
}
