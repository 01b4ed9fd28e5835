//! `karpenter-sim disrupt` explains a real cluster: the AKS dump in
//! `tests/fixtures/cluster-dump.yaml` (`kubectl get ... -o yaml`: two NodePools,
//! three nodes, a drifted spot node whose postgres pod has
//! `karpenter.sh/do-not-disrupt`, budgets closing consolidation on weekday
//! mornings, pending pods), read with fake `InstanceType` documents for its VM
//! sizes (`tests/fixtures/cluster-dump-instance-types.yaml`), so that its
//! prices and allocatable stay fixed whatever the embedded catalog holds.

use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::{
    CommandReason, DisruptionOptions, DisruptionPlan, plan_disruption_with,
};
use karpenter::fake::repair_policies;
use karpenter::scenario::{LoadOptions, Scenario};

fn plan_at(now: &str) -> DisruptionPlan {
    let scenario = Scenario::load_files(
        &[
            "tests/fixtures/cluster-dump.yaml",
            "tests/fixtures/cluster-dump-instance-types.yaml",
        ],
        &LoadOptions::default(),
    )
    .expect("the dump and its instance types load");
    let types = scenario.fake_instance_types().expect("instance types");
    let now: Timestamp = now.parse().expect("a timestamp");
    let options = DisruptionOptions::default().with_repair_policies(repair_policies());
    plan_disruption_with(&scenario.into_snapshot(types), now, &options)
}

fn summary(plan: &DisruptionPlan) -> Vec<(CommandReason, Vec<&str>)> {
    plan.commands
        .iter()
        .map(|c| (c.reason, c.candidates.iter().map(String::as_str).collect()))
        .collect()
}

#[test]
fn a_weekday_morning_rolls_the_drifted_node_only() {
    // Monday 10:00 UTC, inside the general pool's budget window that allows no
    // Underutilized or Empty disruption; its Drifted budget allows one node.
    // The drifted node's postgres pod has do-not-disrupt, but its NodeClaim's
    // terminationGracePeriod (24h) waives pod blockers for drift, as upstream.
    let plan = plan_at("2025-07-14T10:00:00Z");
    assert_eq!(
        summary(&plan),
        [(CommandReason::Drifted, vec!["aks-general-b9q4m"])],
        "{plan:?}"
    );
    // The drift replacement also brings capacity for the pods pending in the
    // dump (upstream's simulation schedules pending pods too).
    let replacement_pods: usize = plan.commands[0]
        .replacements
        .iter()
        .map(|r| r.pods.len())
        .sum();
    assert!(replacement_pods >= 1, "{plan:?}");
    assert!(plan.blocked.is_empty(), "{:?}", plan.blocked);
}

#[test]
fn after_thirty_days_the_general_nodes_expire_and_the_gpu_node_does_not() {
    // The general pool's claims expire after 720h; the gpu pool's never do.
    let plan = plan_at("2025-08-15T00:00:00Z");
    assert_eq!(
        summary(&plan)[0],
        (
            CommandReason::Expired,
            vec!["aks-general-7xk2p", "aks-general-b9q4m"]
        ),
        "{plan:?}"
    );
    assert!(
        plan.commands
            .iter()
            .all(|c| !c.candidates.iter().any(|n| n == "aks-gpu-x4tzn")),
        "{plan:?}"
    );
}
