//! Unit tests of [`next_change`]: for each kind of moment a plan depends on,
//! the moment found, and the plan the same until then and different from
//! then on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::jiff::SignedDuration;
use serde_json::{Value, json};

use super::*;
use crate::api::NodePool;
use crate::cloudprovider::{InstanceType, Offering, RepairPolicy};
use crate::disruption::{CommandReason, FirstCommand, first_command_explained};
use crate::features::FeatureGates;
use crate::planning::PlanningOptions;
use crate::pods::PodInfo;
use crate::resources::ResourceList;
use crate::snapshot::ClusterNode;

const NOW: &str = "2026-06-01T00:00:00Z";
/// When the fixtures' nodes and claims were created.
const CREATED: &str = "2026-05-01T00:00:00Z";
/// When the fixtures' claims became initialized.
const INITIALIZED: &str = "2026-05-01T00:05:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().expect("a valid timestamp")
}

fn now() -> Timestamp {
    at(NOW)
}

fn plus(at: Timestamp, seconds: i64) -> Timestamp {
    at.checked_add(SignedDuration::from_secs(seconds))
        .expect("in range")
}

/// The NodePool `default` with `disruption` and `expireAfter` (`Never` when
/// `None`).
fn pool(disruption: Value, expire_after: Option<&str>) -> NodePool {
    serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {
            "template": {"spec": {"expireAfter": expire_after.unwrap_or("Never")}},
            "disruption": disruption,
        },
    }))
    .expect("a valid NodePool")
}

/// `small`: on-demand at 0.10 in zone-a.
fn small() -> InstanceType {
    InstanceType::new(
        "small",
        [("kubernetes.io/arch", "amd64")],
        vec![Offering::new("zone-a", "on-demand", 0.10)],
        ResourceList::from_quantities(&BTreeMap::from([
            ("cpu".to_owned(), Quantity("2".to_owned())),
            ("memory".to_owned(), Quantity("8Gi".to_owned())),
            ("pods".to_owned(), Quantity("110".to_owned())),
        ]))
        .expect("capacity"),
        ResourceList::new(),
    )
}

/// A managed, initialized, ready `small` Node `name` of pool `default`.
fn node_json(name: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "creationTimestamp": CREATED,
            "labels": {
                "karpenter.sh/nodepool": "default",
                "karpenter.sh/initialized": "true",
                "karpenter.sh/registered": "true",
                "node.kubernetes.io/instance-type": "small",
                "topology.kubernetes.io/zone": "zone-a",
                "karpenter.sh/capacity-type": "on-demand",
            },
        },
        "status": {
            "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": INITIALIZED}],
        },
    })
}

/// The NodeClaim of `node_json(name)`, initialized.
fn claim_json(name: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "creationTimestamp": CREATED,
            "labels": {
                "karpenter.sh/nodepool": "default",
                "node.kubernetes.io/instance-type": "small",
                "topology.kubernetes.io/zone": "zone-a",
                "karpenter.sh/capacity-type": "on-demand",
            },
        },
        "spec": {"nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"}},
        "status": {
            "nodeName": name,
            "providerID": format!("fake:///{name}"),
            "conditions": [
                {"type": "Launched", "status": "True", "lastTransitionTime": CREATED},
                {"type": "Registered", "status": "True", "lastTransitionTime": CREATED},
                {"type": "Initialized", "status": "True", "lastTransitionTime": INITIALIZED},
            ],
        },
    })
}

fn joined(node: Value, claim: Value) -> ClusterNode {
    ClusterNode {
        node: Some(Arc::new(
            serde_json::from_value(node).expect("a valid Node"),
        )),
        node_claim: Some(serde_json::from_value(claim).expect("a valid NodeClaim")),
    }
}

/// A running ReplicaSet pod `default/<name>` on `node`, asking for one cpu,
/// created and started at `created`.
fn pod_json(name: &str, node: &str, created: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": created,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}],
        },
        "spec": {
            "nodeName": node,
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
        },
        "status": {"phase": "Running", "startTime": created},
    })
}

fn snapshot(pool: NodePool, nodes: Vec<ClusterNode>, pods: Vec<Value>) -> Snapshot {
    Snapshot {
        node_pools: vec![pool],
        instance_types: BTreeMap::from([("default".to_owned(), Arc::from(vec![small()]))]),
        nodes,
        pods: pods
            .into_iter()
            .map(|p| {
                let pod: Pod = serde_json::from_value(p).expect("a valid Pod");
                Arc::new(PodInfo::from(pod))
            })
            .collect(),
        ..Snapshot::default()
    }
}

/// Consolidation as soon as a node qualifies, no budget limit.
fn consolidate_at_once() -> Value {
    json!({"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s", "budgets": []})
}

fn plan(snapshot: &Snapshot, at: Timestamp, options: &DisruptionOptions) -> FirstCommand {
    first_command_explained(snapshot, at, options)
}

/// Checks that the plan at `now` finds no command, that [`next_change`]
/// finds `expected`, that plans up to a nanosecond before it answer as the
/// one at `now`, and that the plan at it answers otherwise; returns that
/// plan.
fn turns_at(snapshot: &Snapshot, options: &DisruptionOptions, expected: Timestamp) -> FirstCommand {
    let quiet = plan(snapshot, now(), options);
    assert_eq!(quiet.command, None, "nothing to do at {NOW}");
    assert_eq!(next_change(snapshot, now(), options), Some(expected));
    let half = now()
        .checked_add(expected.duration_since(now()) / 2)
        .expect("in range");
    let last = expected
        .checked_sub(SignedDuration::from_nanos(1))
        .expect("in range");
    for moment in [plus(now(), 1), half, last] {
        assert_eq!(plan(snapshot, moment, options), quiet, "at {moment}");
    }
    let turned = plan(snapshot, expected, options);
    assert_ne!(turned, quiet, "at {expected}");
    turned
}

#[test]
fn nothing_turns_in_an_empty_cluster_nor_in_a_settled_one() {
    let options = DisruptionOptions::default();
    assert_eq!(next_change(&Snapshot::default(), now(), &options), None);
    // A node long past its window, with nothing else timed: no moment
    // changes anything.
    let settled = snapshot(
        pool(json!({"consolidateAfter": "5m"}), None),
        vec![joined(node_json("node-a"), claim_json("node-a"))],
        vec![pod_json("web-0", "node-a", CREATED)],
    );
    assert_eq!(next_change(&settled, now(), &options), None);
}

#[test]
fn consolidate_after_counts_from_the_last_pod_event() {
    let mut claim = claim_json("node-a");
    claim["status"]["lastPodEventTime"] = json!("2026-05-31T23:58:00Z");
    let snapshot = snapshot(
        pool(json!({"consolidateAfter": "10m", "budgets": []}), None),
        vec![joined(node_json("node-a"), claim)],
        vec![],
    );
    let turned = turns_at(
        &snapshot,
        &DisruptionOptions::default(),
        at("2026-06-01T00:08:00Z"),
    );
    let command = turned.command.expect("the empty node goes");
    assert_eq!(command.reason, CommandReason::Empty);
}

#[test]
fn consolidate_after_without_pod_events_counts_from_the_newest_pod() {
    // No lastPodEventTime: the window counts from the claim's
    // initialization or its newest pod's creation, whichever is later.
    let snapshot = snapshot(
        pool(json!({"consolidateAfter": "10m", "budgets": []}), None),
        vec![joined(node_json("node-a"), claim_json("node-a"))],
        vec![
            pod_json("old", "node-a", CREATED),
            pod_json("new", "node-a", "2026-05-31T23:55:00Z"),
        ],
    );
    let turned = turns_at(
        &snapshot,
        &DisruptionOptions::default(),
        at("2026-06-01T00:05:00Z"),
    );
    // Single-node consolidation now weighs the node (and finds nothing
    // cheaper than the cheapest type).
    assert_eq!(turned.command, None);
    assert_eq!(turned.unconsolidatable.len(), 1);
}

#[test]
fn a_node_of_unknown_age_waits_for_its_pods_with_a_zero_window() {
    // Neither the claim nor the Node says when it was created, and the
    // claim's initialization has no time: the node counts as new at every
    // moment, so only a zero window closes, once its pods exist.
    let mut node = node_json("node-a");
    node["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("creationTimestamp");
    let mut claim = claim_json("node-a");
    claim["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("creationTimestamp");
    claim["status"]["conditions"] = json!([{"type": "Initialized", "status": "True"}]);
    let nodes = vec![joined(node, claim)];
    let future_pod = pod_json("web-0", "node-a", "2026-06-01T00:10:00Z");
    let zero = snapshot(
        pool(consolidate_at_once(), None),
        nodes.clone(),
        vec![future_pod.clone()],
    );
    let turned = turns_at(
        &zero,
        &DisruptionOptions::default(),
        at("2026-06-01T00:10:00Z"),
    );
    assert_eq!(turned.unconsolidatable.len(), 1);
    // With a window, the node never leaves it: whatever the moment it
    // reports, nothing it reports turns.
    let windowed = snapshot(
        pool(json!({"consolidateAfter": "5m"}), None),
        nodes,
        vec![future_pod],
    );
    let options = DisruptionOptions::default();
    if let Some(moment) = next_change(&windowed, now(), &options) {
        assert_eq!(
            plan(&windowed, moment, &options),
            plan(&windowed, now(), &options)
        );
    }
}

#[test]
fn expiry_comes_at_creation_plus_expire_after() {
    // Created 744 hours before NOW: expires an hour after it.
    let snapshot = snapshot(
        pool(json!({"consolidateAfter": "Never"}), Some("745h")),
        vec![joined(node_json("node-a"), claim_json("node-a"))],
        vec![pod_json("web-0", "node-a", CREATED)],
    );
    let turned = turns_at(
        &snapshot,
        &DisruptionOptions::default(),
        at("2026-06-01T01:00:00Z"),
    );
    let command = turned.command.expect("the node expires");
    assert_eq!(command.reason, CommandReason::Expired);
}

#[test]
fn a_budget_schedule_turns_at_its_hits_and_their_windows_end() {
    // No disruption from midnight to 09:00 (UTC); NOW is midnight.
    let budgets = json!([{"nodes": "0", "schedule": "0 0 * * *", "duration": "9h"}]);
    let mut disruption = consolidate_at_once();
    disruption["budgets"] = budgets;
    let snapshot = snapshot(
        pool(disruption, None),
        vec![joined(node_json("node-a"), claim_json("node-a"))],
        vec![],
    );
    let turned = turns_at(
        &snapshot,
        &DisruptionOptions::default(),
        at("2026-06-01T09:00:00Z"),
    );
    let command = turned.command.expect("the empty node goes");
    assert_eq!(command.reason, CommandReason::Empty);
    // At 10:00, the budget turns active again at the next midnight.
    let ten = at("2026-06-01T10:00:00Z");
    let options = DisruptionOptions::default();
    assert_eq!(
        next_change(&snapshot, ten, &options),
        Some(at("2026-06-02T00:00:00Z"))
    );
}

#[test]
fn repair_is_due_when_the_condition_outlasts_its_toleration() {
    let mut node = node_json("node-a");
    node["status"]["conditions"] = json!([
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-05-31T23:50:00Z"},
    ]);
    let snapshot = snapshot(
        pool(json!({"consolidateAfter": "Never"}), None),
        vec![joined(node, claim_json("node-a"))],
        vec![pod_json("web-0", "node-a", CREATED)],
    );
    let policies = vec![RepairPolicy::unhealthy(
        "Ready",
        "False",
        Duration::from_secs(30 * 60),
    )];
    let gates = FeatureGates::UPSTREAM
        .apply("NodeRepair=true")
        .expect("a gate");
    let options = DisruptionOptions::default()
        .with_planning(PlanningOptions::default().with_feature_gates(gates))
        .with_repair_policies(policies.clone());
    let turned = turns_at(&snapshot, &options, at("2026-06-01T00:20:00Z"));
    let command = turned.command.expect("the node is repaired");
    assert_eq!(command.reason, CommandReason::Unhealthy);
    // Without the gate the policies are not applied: nothing turns.
    let off = DisruptionOptions::default().with_repair_policies(policies);
    assert_eq!(next_change(&snapshot, now(), &off), None);
}

#[test]
fn a_do_not_disrupt_duration_ends_its_protection() {
    let mut protected = pod_json("db-0", "node-a", "2026-05-31T23:50:00Z");
    protected["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "30m"});
    let mut forever = pod_json("db-1", "node-b", "2026-05-31T23:50:00Z");
    forever["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
    let mut over = pod_json("db-2", "node-b", CREATED);
    over["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "1h"});
    let snapshot = snapshot(
        pool(consolidate_at_once(), None),
        vec![
            joined(node_json("node-a"), claim_json("node-a")),
            joined(node_json("node-b"), claim_json("node-b")),
        ],
        vec![protected, forever, over],
    );
    let turned = turns_at(
        &snapshot,
        &DisruptionOptions::default(),
        at("2026-06-01T00:20:00Z"),
    );
    // node-a is no longer blocked; node-b still is, by `true`.
    let blocked: Vec<&str> = turned.blocked.iter().map(|b| b.node.as_str()).collect();
    assert_eq!(blocked, ["node-b"]);
}

#[test]
fn a_vanished_instance_type_drifts_its_node_once_the_claim_is_an_hour_old() {
    // The claim's type `large` is not the provider's; the claim was created
    // half an hour before NOW (its Node long before). Upstream checks the
    // type once the claim is strictly older than an hour.
    let young = "2026-05-31T23:30:00Z";
    let mut claim = claim_json("node-a");
    claim["metadata"]["creationTimestamp"] = json!(young);
    claim["metadata"]["labels"]["node.kubernetes.io/instance-type"] = json!("large");
    let disruption = json!({"consolidateAfter": "Never", "budgets": []});
    let snapshot = snapshot(
        pool(disruption.clone(), None),
        vec![joined(node_json("node-a"), claim)],
        vec![pod_json("web-0", "node-a", CREATED)],
    );
    let hour_and_a_nanosecond = plus(at(young), 3600)
        .checked_add(SignedDuration::from_nanos(1))
        .expect("in range");
    let turned = turns_at(
        &snapshot,
        &DisruptionOptions::default(),
        hour_and_a_nanosecond,
    );
    let command = turned.command.expect("the node drifted");
    assert_eq!(command.reason, CommandReason::Drifted);
    assert_eq!(command.drift.len(), 1);
    assert_eq!(command.drift[0].reason, "InstanceTypeNotFound");
    // A young claim whose type is still offered gives no moment: the check
    // will find nothing.
    let mut offered = claim_json("node-a");
    offered["metadata"]["creationTimestamp"] = json!(young);
    let settled = self::snapshot(
        pool(disruption, None),
        vec![joined(node_json("node-a"), offered)],
        vec![pod_json("web-0", "node-a", CREATED)],
    );
    assert_eq!(
        next_change(&settled, now(), &DisruptionOptions::default()),
        None
    );
}

#[test]
fn the_first_moment_of_all_is_the_answer() {
    // A protection ending at 00:20, a window closing at 00:08, an expiry
    // at 01:00: 00:08.
    let mut claim = claim_json("node-b");
    claim["status"]["lastPodEventTime"] = json!("2026-05-31T23:58:00Z");
    let mut protected = pod_json("db-0", "node-a", "2026-05-31T23:50:00Z");
    protected["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "30m"});
    let snapshot = snapshot(
        pool(
            json!({"consolidateAfter": "10m", "budgets": []}),
            Some("745h"),
        ),
        vec![
            joined(node_json("node-a"), claim_json("node-a")),
            joined(node_json("node-b"), claim),
        ],
        vec![protected],
    );
    assert_eq!(
        next_change(&snapshot, now(), &DisruptionOptions::default()),
        Some(at("2026-06-01T00:08:00Z"))
    );
}
