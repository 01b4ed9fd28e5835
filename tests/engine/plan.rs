//! Disruption plans for variants of the bundled example
//! (`examples/scenarios/disrupt-basic.yaml`: a large node running one small
//! pod, and an empty small node). Emptiness and single-node consolidation are
//! planned so far.

use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::{CommandReason, DisruptionPlan, plan_disruption};
use karpenter::scenario::{LoadOptions, Scenario};

/// The bundled example as written: its nodes are five months old at `now`, past
/// the default `expireAfter` of 720h.
const BUNDLED: &str = include_str!("../../examples/scenarios/disrupt-basic.yaml");

/// The example's pool with `expireAfter: Never`, for the graceful methods.
static EXAMPLE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let marker = "      requirements: []\n";
    assert!(BUNDLED.contains(marker));
    BUNDLED.replacen(
        marker,
        "      requirements: []\n      expireAfter: Never\n",
        1,
    )
});

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a timestamp")
}

fn plan_of(text: &str, at: Timestamp) -> DisruptionPlan {
    let scenario =
        Scenario::from_str("example.yaml", text, &LoadOptions::default()).expect("loads");
    let types = scenario.fake_instance_types().expect("instance types");
    plan_disruption(&scenario.into_snapshot(types), at)
}

/// The example with its pool's `disruption` block replaced.
fn with_disruption(disruption: &str) -> String {
    let original = "  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 0s\n    budgets:\n    - nodes: 100%\n";
    assert!(EXAMPLE.as_str().contains(original));
    EXAMPLE.as_str().replace(original, disruption)
}

#[test]
fn the_empty_node_goes_then_the_large_one_is_replaced_by_a_small_one() {
    let plan = plan_of(&EXAMPLE, now());
    assert_eq!(plan.commands.len(), 2);
    let empty = &plan.commands[0];
    assert_eq!(empty.reason, CommandReason::Empty);
    assert_eq!(empty.candidates, ["node-2"]);
    assert!(empty.replacements.is_empty());
    assert_eq!(empty.savings_per_hour, 0.1);
    // With node-2 going, api-0 needs a node: the small type, cheaper than large.
    let replace = &plan.commands[1];
    assert_eq!(replace.reason, CommandReason::Underutilized);
    assert_eq!(replace.candidates, ["node-1"]);
    assert_eq!(replace.replacements.len(), 1);
    let claim = &replace.replacements[0];
    assert_eq!(claim.instance_types.to_vec(), ["small"]);
    assert_eq!(claim.pods, ["default/api-0"]);
    assert_eq!(claim.launch.as_ref().map(|l| l.price), Some(0.1));
    assert_eq!(replace.savings_per_hour, 0.3);
    assert!(plan.blocked.is_empty());
    let json = serde_json::to_value(&plan).expect("serializes");
    assert_eq!(json["commands"][0]["reason"], "Empty");
    assert_eq!(json["commands"][1]["reason"], "Underutilized");
    assert_eq!(json["commands"][1]["savingsPerHour"], 0.3);
}

#[test]
fn no_replacement_that_is_not_cheaper() {
    // Only the large type exists: replacing large by large saves nothing.
    let large_only = without_type(&EXAMPLE, "small");
    let plan = plan_of(&large_only, now());
    assert_eq!(plan.commands.len(), 1);
    assert_eq!(plan.commands[0].reason, CommandReason::Empty);
}

#[test]
fn a_zero_budget_or_never_keeps_the_node() {
    let zero = with_disruption(
        "  disruption:\n    consolidateAfter: 0s\n    budgets:\n    - nodes: '0'\n",
    );
    assert!(plan_of(&zero, now()).commands.is_empty());
    let never = with_disruption("  disruption:\n    consolidateAfter: Never\n");
    assert!(plan_of(&never, now()).commands.is_empty());
}

#[test]
fn a_budget_only_for_drift_does_not_limit_emptiness() {
    let drift_only = with_disruption(
        "  disruption:\n    consolidateAfter: 0s\n    budgets:\n    - nodes: '0'\n      reasons: [Drifted]\n",
    );
    let plan = plan_of(&drift_only, now());
    assert_eq!(plan.commands[0].candidates, ["node-2"]);
}

#[test]
fn consolidate_after_counts_from_initialization() {
    // Initialized 2026-01-01: 1000h later is 2026-02-11T16:00:00Z.
    let slow = with_disruption("  disruption:\n    consolidateAfter: 1000h\n");
    assert!(
        plan_of(&slow, "2026-02-11T15:59:59Z".parse().unwrap())
            .commands
            .is_empty()
    );
    let plan = plan_of(&slow, "2026-02-11T16:00:00Z".parse().unwrap());
    assert_eq!(plan.commands[0].candidates, ["node-2"]);
}

#[test]
fn a_node_marked_do_not_disrupt_is_blocked_not_deleted() {
    let text = EXAMPLE.as_str().replacen(
        "  name: node-2\n  labels:\n",
        "  name: node-2\n  annotations:\n    karpenter.sh/do-not-disrupt: 'true'\n  labels:\n",
        1,
    );
    assert_ne!(text, *EXAMPLE);
    let plan = plan_of(&text, now());
    assert_eq!(plan.blocked.len(), 1);
    assert_eq!(plan.blocked[0].node, "node-2");
    assert_eq!(
        plan.blocked[0].reason,
        "node node-2 has karpenter.sh/do-not-disrupt"
    );
    // node-2 stays, so node-1's pod moves onto it and node-1 is deleted.
    assert_eq!(plan.commands.len(), 1);
    assert_eq!(plan.commands[0].reason, CommandReason::Underutilized);
    assert_eq!(plan.commands[0].candidates, ["node-1"]);
    assert!(plan.commands[0].replacements.is_empty());
    assert_eq!(plan.commands[0].savings_per_hour, 0.4);
}

#[test]
fn the_same_input_gives_the_same_plan() {
    let a = serde_json::to_string(&plan_of(&EXAMPLE, now())).unwrap();
    let b = serde_json::to_string(&plan_of(&EXAMPLE, now())).unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_budget_of_one_takes_the_node_that_saves_most() {
    // Both nodes empty: the example without its pod.
    let documents: Vec<&str> = EXAMPLE
        .as_str()
        .split("\n---\n")
        .filter(|d| !d.contains("\nkind: Pod\n"))
        .collect();
    let no_pod = documents.join("\n---\n");
    let one = no_pod.replace(
        "    budgets:\n    - nodes: 100%\n",
        "    budgets:\n    - nodes: '1'\n",
    );
    assert_ne!(one, no_pod);
    let plan = plan_of(&one, now());
    assert_eq!(plan.commands.len(), 1);
    // The large node (0.4/h) before the small one (0.1/h).
    assert_eq!(plan.commands[0].candidates, ["node-1"]);
    assert_eq!(plan.commands[0].savings_per_hour, 0.4);
    // With room for both, one command takes both.
    let plan = plan_of(&no_pod, now());
    assert_eq!(plan.commands.len(), 1);
    assert_eq!(plan.commands[0].candidates, ["node-1", "node-2"]);
    assert_eq!(plan.commands[0].savings_per_hour, 0.5);
}

/// `text` without the InstanceType document named `name`.
fn without_type(text: &str, name: &str) -> String {
    let marker = format!("\n  name: {name}\n");
    let kept: Vec<&str> = text
        .split("\n---\n")
        .filter(|d| !d.contains(&marker))
        .collect();
    let result = kept.join("\n---\n");
    assert_ne!(result, text);
    result
}

/// The example with node-1's NodeClaim marked `Drifted`.
fn drifted_example() -> String {
    let marker = "  nodeName: node-1\n  providerID: fake:///node-1\n  conditions:\n";
    assert!(EXAMPLE.as_str().contains(marker));
    EXAMPLE.as_str().replacen(
        marker,
        &format!("{marker}  - type: Drifted\n    status: 'True'\n    lastTransitionTime: '2026-05-01T00:00:00Z'\n"),
        1,
    )
}

#[test]
fn a_drifted_node_is_replaced_whatever_the_price() {
    // Only the large type: consolidation could not replace node-1, drift does.
    let text = without_type(&drifted_example(), "small");
    let plan = plan_of(&text, now());
    let reasons: Vec<CommandReason> = plan.commands.iter().map(|c| c.reason).collect();
    assert_eq!(reasons, [CommandReason::Empty, CommandReason::Drifted]);
    let drift = &plan.commands[1];
    assert_eq!(drift.candidates, ["node-1"]);
    assert_eq!(drift.replacements.len(), 1);
    assert_eq!(drift.replacements[0].instance_types.to_vec(), ["large"]);
    assert_eq!(drift.savings_per_hour, 0.0);
}

#[test]
fn drift_comes_before_consolidation() {
    let plan = plan_of(&drifted_example(), now());
    let reasons: Vec<CommandReason> = plan.commands.iter().map(|c| c.reason).collect();
    assert_eq!(reasons, [CommandReason::Empty, CommandReason::Drifted]);
    // Drift keeps every type that fits, cheapest first, and launches the cheapest.
    let claim = &plan.commands[1].replacements[0];
    assert_eq!(claim.instance_types.to_vec(), ["small", "large"]);
    assert_eq!(claim.launch.as_ref().map(|l| l.price), Some(0.1));
    assert_eq!(plan.commands[1].savings_per_hour, 0.3);
}

#[test]
fn a_zero_drift_budget_leaves_consolidation_to_act() {
    let text = drifted_example().replace(
        "    budgets:\n    - nodes: 100%\n",
        "    budgets:\n    - nodes: 100%\n    - nodes: '0'\n      reasons: [Drifted]\n",
    );
    let plan = plan_of(&text, now());
    let reasons: Vec<CommandReason> = plan.commands.iter().map(|c| c.reason).collect();
    assert_eq!(
        reasons,
        [CommandReason::Empty, CommandReason::Underutilized]
    );
}

/// Three large nodes (the example's node-1, copied), each running one small
/// pod, and no empty node.
fn three_large_nodes() -> String {
    let documents: Vec<&str> = EXAMPLE.as_str().split("\n---\n").collect();
    let of_node_1: Vec<&str> = documents
        .iter()
        .copied()
        .filter(|d| d.contains("node-1") || d.contains("name: api-0"))
        .collect();
    let mut kept: Vec<String> = documents
        .iter()
        .filter(|d| !d.contains("node-1") && !d.contains("node-2") && !d.contains("name: api-0"))
        .map(|d| d.to_string())
        .collect();
    for n in 1..=3 {
        for document in &of_node_1 {
            kept.push(
                document
                    .replace("node-1", &format!("node-{n}"))
                    .replace("api-0", &format!("api-{n}")),
            );
        }
    }
    kept.join("\n---\n")
}

#[test]
fn several_underutilized_nodes_become_one_small_node() {
    let plan = plan_of(&three_large_nodes(), now());
    assert_eq!(plan.commands.len(), 1);
    let command = &plan.commands[0];
    assert_eq!(command.reason, CommandReason::Underutilized);
    assert_eq!(command.candidates, ["node-1", "node-2", "node-3"]);
    assert_eq!(command.replacements.len(), 1);
    let claim = &command.replacements[0];
    assert_eq!(claim.instance_types.to_vec(), ["small"]);
    assert_eq!(claim.pods.len(), 3);
    assert_eq!(command.savings_per_hour, 1.1);
}

#[test]
fn a_replacement_never_relaunches_a_type_being_removed_when_deleting_fewer_would_do() {
    // Only the large type: the three pods fit one large node, so two nodes go
    // and their pods move to the third, instead of three going for a new large.
    let plan = plan_of(&without_type(&three_large_nodes(), "small"), now());
    assert_eq!(plan.commands.len(), 1);
    let command = &plan.commands[0];
    assert!(command.replacements.is_empty());
    assert_eq!(command.candidates.len(), 2);
    assert_eq!(command.savings_per_hour, 0.8);
}

#[test]
fn nodes_past_expire_after_are_expired_first_whatever_the_budget() {
    // As bundled: 720h by default, and the nodes are from 2026-01-01.
    let zero_budget = BUNDLED.replace("    - nodes: 100%\n", "    - nodes: '0'\n");
    let plan = plan_of(&zero_budget, now());
    assert_eq!(plan.commands.len(), 1);
    let command = &plan.commands[0];
    assert_eq!(command.reason, CommandReason::Expired);
    assert_eq!(command.candidates, ["node-1", "node-2"]);
    // api-0 needs a node again: every type that fits, the small one launched.
    assert_eq!(command.replacements.len(), 1);
    let claim = &command.replacements[0];
    assert_eq!(claim.instance_types.to_vec(), ["small", "large"]);
    assert_eq!(claim.launch.as_ref().map(|l| l.price), Some(0.1));
    assert_eq!(command.savings_per_hour, 0.4);
    // Before 720h have passed, nothing expires.
    let early: Timestamp = "2026-01-30T23:59:59Z".parse().unwrap();
    assert!(plan_of(&zero_budget, early).commands.is_empty());
}

#[test]
fn the_providers_drift_verdict_rolls_the_node_like_the_condition() {
    // No Drifted condition; the provider's own check reports node-1's claim
    // drifted (as a controller fills `Snapshot::provider_drift` from
    // `is_drifted`): drift replaces it before consolidation would.
    let scenario = Scenario::from_str(
        "example.yaml",
        &without_type(EXAMPLE.as_str(), "small"),
        &LoadOptions::default(),
    )
    .expect("loads");
    let types = scenario.fake_instance_types().expect("instance types");
    let mut snapshot = scenario.into_snapshot(types);
    let before = plan_disruption(&snapshot, now());
    assert!(
        before
            .commands
            .iter()
            .all(|c| c.reason != CommandReason::Drifted),
        "{before:?}"
    );
    snapshot
        .provider_drift
        .insert("nc-node-1".to_owned(), "ImageDrift".to_owned());
    let after = plan_disruption(&snapshot, now());
    let drifted: Vec<&Vec<String>> = after
        .commands
        .iter()
        .filter(|c| c.reason == CommandReason::Drifted)
        .map(|c| &c.candidates)
        .collect();
    assert_eq!(drifted, [&vec!["node-1".to_owned()]], "{after:?}");
}
