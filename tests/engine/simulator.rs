//! The disruption simulator, which reuses one scheduling set-up across
//! simulations, gives the reference simulation's answers on generated running
//! clusters rich in topology (zonal spread, hostname anti-affinity,
//! PodDisruptionBudgets), for single nodes, pairs and long prefixes removed,
//! with nodes already being deleted, and when a DaemonSet's newest pod goes
//! with a removed node.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::{Simulator, simulate};
use karpenter::core::planning::PlanningOptions;
use karpenter::core::snapshot::Snapshot;
use karpenter::fake::generate::running::running_cluster;
use serde_json::json;

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a timestamp")
}

/// Checks the simulator against the reference for each removal.
fn check(snapshot: &Snapshot, removals: &[(Vec<&str>, Vec<&str>)]) {
    let simulator = Simulator::new(snapshot, now());
    for (removed, deleting) in removals {
        let removed: BTreeSet<&str> = removed.iter().copied().collect();
        let deleting: BTreeSet<&str> = deleting.iter().copied().collect();
        let fast = simulator.simulate(&removed, &deleting);
        let reference = simulate(
            snapshot,
            &removed,
            &deleting,
            now(),
            PlanningOptions::default(),
        );
        assert_eq!(
            fast, reference,
            "removing {removed:?}, deleting {deleting:?}"
        );
    }
}

fn names(snapshot: &Snapshot) -> Vec<&str> {
    snapshot.nodes.iter().map(|n| n.name()).collect()
}

#[test]
fn every_single_node_of_a_generated_cluster() {
    for seed in [1, 2, 3] {
        let snapshot = running_cluster(30, 600, seed);
        let removals: Vec<_> = names(&snapshot)
            .into_iter()
            .map(|n| (vec![n], vec![]))
            .collect();
        check(&snapshot, &removals);
    }
}

#[test]
fn prefixes_pairs_and_deleting_nodes() {
    let snapshot = running_cluster(40, 1200, 9);
    let all = names(&snapshot);
    let mut removals = Vec::new();
    for length in [2, 3, 5, 8, 13, 21, 34] {
        removals.push((all[..length].to_vec(), vec![]));
        removals.push((all[..length].to_vec(), all[..length / 2].to_vec()));
    }
    for pair in all.windows(2).step_by(3) {
        removals.push((pair.to_vec(), vec![pair[0]]));
    }
    check(&snapshot, &removals);
}

#[test]
fn a_cluster_without_room_strands_pods_the_same_way() {
    // Twenty pods per node on twenty nodes: removing half leaves pods that
    // need new claims, and hostname anti-affinity that refuses some nodes.
    let snapshot = running_cluster(20, 400, 4);
    let all = names(&snapshot);
    let removals = vec![
        (all[..10].to_vec(), vec![]),
        (all[5..].to_vec(), all[5..8].to_vec()),
    ];
    check(&snapshot, &removals);
}

/// A DaemonSet with a pod on every node; the pod on `newest` is the newest and
/// asks for `newest_cpu`.
fn with_daemons(mut snapshot: Snapshot, newest: &str, newest_cpu: &str) -> Snapshot {
    let daemon_set: DaemonSet = serde_json::from_value(json!({
        "metadata": {"name": "logs", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "logs"}},
            "template": {
                "metadata": {"labels": {"app": "logs"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
            },
        },
    }))
    .expect("a DaemonSet");
    let mut pods: Vec<Pod> = Vec::new();
    for node in names(&snapshot) {
        let (created, cpu) = if node == newest {
            ("2026-02-01T00:00:00Z", newest_cpu)
        } else {
            ("2026-01-01T00:00:00Z", "100m")
        };
        pods.push(
            serde_json::from_value(json!({
                "metadata": {
                    "name": format!("logs-{node}"), "namespace": "kube-system", "uid": format!("uid-logs-{node}"),
                    "creationTimestamp": created, "labels": {"app": "logs"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "logs", "uid": "ds", "controller": true}],
                },
                "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            }))
            .expect("a Pod"),
        );
    }
    snapshot
        .pods
        .extend(pods.into_iter().map(|p| Arc::new(p.into())));
    snapshot.daemon_sets.push(daemon_set);
    snapshot
}

#[test]
fn daemon_overhead_follows_the_newest_remaining_daemon_pod() {
    for newest_cpu in ["100m", "3"] {
        let snapshot = with_daemons(running_cluster(16, 300, 5), "node-00003", newest_cpu);
        let all = names(&snapshot);
        let removals: Vec<_> = all.iter().map(|n| (vec![*n], vec![])).collect();
        check(&snapshot, &removals);
        check(&snapshot, &[(all[..9].to_vec(), vec![])]);
    }
}

#[test]
fn a_zone_only_a_removed_node_had_is_forgotten() {
    // node-00000 sits in a zone no pool offers: once it is gone, zonal
    // spread takes its minimum over the zones left.
    let mut snapshot = running_cluster(12, 240, 6);
    let node = &mut snapshot.nodes[0];
    for labels in [
        node.node
            .as_mut()
            .and_then(|n| Arc::make_mut(n).metadata.labels.as_mut()),
        node.node_claim
            .as_mut()
            .and_then(|c| c.metadata.labels.as_mut()),
    ]
    .into_iter()
    .flatten()
    {
        labels.insert("topology.kubernetes.io/zone".into(), "test-zone-9".into());
    }
    let all = names(&snapshot);
    let removals: Vec<_> = all.iter().map(|n| (vec![*n], vec![])).collect();
    check(&snapshot, &removals);
    let reference = simulate(
        &snapshot,
        &[all[0]].into(),
        &BTreeSet::new(),
        now(),
        PlanningOptions::default(),
    );
    assert!(reference.all_moved(), "{:?}", reference.stranded);
}

/// Under `--min-values-policy BestEffort` the simulator reads its pools as
/// the reference does: a pool whose `minValues` no claim can meet is kept,
/// its claims relaxed, so the pods of a removed node find new capacity that
/// the Strict policy would refuse them.
#[test]
fn a_best_effort_simulator_relaxes_min_values_as_the_reference() {
    use karpenter::core::api::NodeSelectorRequirementWithMinValues;
    use karpenter::core::planning::MinValuesPolicy;
    let mut snapshot = running_cluster(12, 240, 4);
    // The pool's five largest types and one the provider no longer has: six
    // asked for, five to be had.
    let mut largest: Vec<String> = snapshot
        .instance_types
        .values()
        .next()
        .map(|types| types.iter().rev().take(5).map(|t| t.name.clone()).collect())
        .unwrap_or_default();
    largest.push("retired".to_string());
    for pool in &mut snapshot.node_pools {
        pool.spec
            .template
            .spec
            .requirements
            .get_or_insert_with(Vec::new)
            .push(NodeSelectorRequirementWithMinValues {
                key: "node.kubernetes.io/instance-type".into(),
                operator: "In".into(),
                values: Some(largest.clone()),
                min_values: Some(6),
                ..Default::default()
            });
    }
    let best_effort =
        PlanningOptions::default().with_min_values_policy(MinValuesPolicy::BestEffort);
    // Built Strict, then told BestEffort: the set-up is read again.
    let simulator = Simulator::new(&snapshot, now()).with_options(best_effort);
    let mut relaxed_somewhere = false;
    // Each node alone, and ever longer prefixes (which need new nodes).
    let all = names(&snapshot);
    let removals = all
        .iter()
        .map(|n| vec![*n])
        .chain((2..=all.len()).map(|k| all[..k].to_vec()));
    for removed in removals {
        let removed: BTreeSet<&str> = removed.into_iter().collect();
        let fast = simulator.simulate(&removed, &BTreeSet::new());
        let reference = simulate(&snapshot, &removed, &BTreeSet::new(), now(), best_effort);
        assert_eq!(fast, reference, "removing {removed:?}");
        let strict = simulate(
            &snapshot,
            &removed,
            &BTreeSet::new(),
            now(),
            PlanningOptions::default(),
        );
        assert!(strict.plan.node_claims.is_empty());
        relaxed_somewhere |= reference
            .plan
            .node_claims
            .iter()
            .any(|c| c.min_values_relaxed);
    }
    assert!(relaxed_somewhere, "no removal needed a new node");
}
