//! Unit tests of [`candidates`], on small snapshots built here.

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::Pod;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::cloudprovider::Offering;
use crate::resources::ResourceList;

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

/// A NodePool `name` with `disruption` as its `spec.disruption`.
fn pool_with(name: &str, disruption: Value) -> NodePool {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"template": {"spec": {}}, "disruption": disruption},
    }))
    .expect("a valid NodePool")
}

fn pool(name: &str) -> NodePool {
    pool_with(name, json!({}))
}

/// `small`: on-demand 0.10 and spot 0.04 (unavailable) in zone-a.
fn small() -> InstanceType {
    InstanceType::new(
        "small",
        [("kubernetes.io/arch", "amd64")],
        vec![
            Offering::new("zone-a", "on-demand", 0.10),
            Offering::new("zone-a", "spot", 0.04).unavailable(),
        ],
        ResourceList::new(),
        ResourceList::new(),
    )
}

/// A managed, initialized Node `name` of pool `default`: a `small` on-demand
/// node in zone-a.
fn node_json(name: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "creationTimestamp": CREATED,
            "labels": {
                "karpenter.sh/nodepool": "default",
                "karpenter.sh/initialized": "true",
                "node.kubernetes.io/instance-type": "small",
                "topology.kubernetes.io/zone": "zone-a",
                "karpenter.sh/capacity-type": "on-demand",
            },
        },
    })
}

/// The NodeClaim of `node_json(name)`, launched and initialized, with the
/// labels Karpenter wrote at launch.
fn claim_json(name: &str) -> Value {
    json!({
        "metadata": {
            "name": format!("nc-{name}"),
            "creationTimestamp": CREATED,
            "labels": {
                "karpenter.sh/nodepool": "default",
                "node.kubernetes.io/instance-type": "small",
                "topology.kubernetes.io/zone": "zone-a",
                "karpenter.sh/capacity-type": "on-demand",
            },
        },
        "spec": {},
        "status": {
            "nodeName": name,
            "conditions": [
                {"type": "Launched", "status": "True", "lastTransitionTime": CREATED},
                {"type": "Initialized", "status": "True", "lastTransitionTime": INITIALIZED},
            ],
        },
    })
}

fn joined(node: Value, claim: Value) -> ClusterNode {
    ClusterNode {
        node: Some(serde_json::from_value(node).expect("a valid Node")),
        node_claim: Some(serde_json::from_value(claim).expect("a valid NodeClaim")),
    }
}

fn managed(name: &str) -> ClusterNode {
    joined(node_json(name), claim_json(name))
}

/// A running ReplicaSet pod `default/<name>` bound to `node`, created a day
/// after the nodes.
fn pod_json(name: &str, node: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": name},
            "creationTimestamp": "2026-05-02T00:00:00Z",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}],
        },
        "spec": {"containers": [], "nodeName": node},
        "status": {"phase": "Running", "startTime": "2026-05-02T00:00:00Z"},
    })
}

fn pod(value: Value) -> Pod {
    serde_json::from_value(value).expect("a valid pod")
}

fn daemon_pod(name: &str, node: &str) -> Pod {
    let mut value = pod_json(name, node);
    value["metadata"]["ownerReferences"][0]["kind"] = json!("DaemonSet");
    pod(value)
}

fn snapshot(nodes: Vec<ClusterNode>, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        node_pools: vec![pool("default")],
        instance_types: BTreeMap::from([("default".to_owned(), Arc::from(vec![small()]))]),
        nodes,
        pods: pods
            .into_iter()
            .map(|p| Arc::new(PodInfo::from(p)))
            .collect(),
        ..Snapshot::default()
    }
}

fn names<'a>(candidates: impl IntoIterator<Item = &'a Candidate<'a>>) -> Vec<&'a str> {
    candidates.into_iter().map(|c| c.name).collect()
}

fn blocked(node: &str, reason: &str) -> Blocked {
    Blocked {
        node: node.to_owned(),
        reason: reason.to_owned(),
    }
}

#[test]
fn a_managed_initialized_node_is_a_candidate() {
    let snapshot = snapshot(vec![managed("node-a")], vec![]);
    let found = candidates(&snapshot, now());
    assert_eq!(names(&found.candidates), ["node-a"]);
    assert!(found.blocked.is_empty() && found.pod_blocked.is_empty());
    let candidate = &found.candidates[0];
    assert_eq!(candidate.pool.name(), Some("default"));
    assert_eq!(candidate.claim.name(), Some("nc-node-a"));
    assert_eq!(
        candidate.instance_type.map(|t| t.name.as_str()),
        Some("small")
    );
    assert_eq!(candidate.zone.as_deref(), Some("zone-a"));
    assert_eq!(candidate.capacity_type.as_deref(), Some("on-demand"));
    assert_eq!(candidate.drift, None);
    assert_eq!(candidate.pod_block, None);
}

#[test]
fn unmanaged_nodes_are_left_out() {
    let mut unlabelled = node_json("unlabelled");
    unlabelled["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("karpenter.sh/nodepool");
    let mut plain = managed("plain");
    plain.node_claim = None;
    let mut in_flight = managed("in-flight");
    in_flight.node = None;
    let nodes = vec![
        joined(unlabelled, claim_json("unlabelled")),
        plain,
        in_flight,
    ];
    let snapshot = snapshot(nodes, vec![]);
    let found = candidates(&snapshot, now());
    assert!(found.candidates.is_empty() && found.blocked.is_empty());
}

#[test]
fn uninitialized_nodes_are_left_out() {
    let mut node = node_json("node-a");
    node["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("karpenter.sh/initialized");
    let mut claim = claim_json("node-a");
    claim["status"]["conditions"] = json!([{"type": "Initialized", "status": "False"}]);
    let snapshot = snapshot(vec![joined(node, claim)], vec![]);
    let found = candidates(&snapshot, now());
    assert!(found.candidates.is_empty() && found.blocked.is_empty());
}

#[test]
fn nodes_marked_for_deletion_are_left_out() {
    let mut claim_deleting = claim_json("b");
    claim_deleting["metadata"]["deletionTimestamp"] = json!(NOW);
    let mut terminating = claim_json("c");
    terminating["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "InstanceTerminating", "status": "True"}));
    // Taken by a disruption command: tainted karpenter.sh/disrupted.
    let mut taken = node_json("d");
    taken["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    // A Node deleted under a live NodeClaim is not deleting (the claim
    // decides, as upstream's StateNode.Deleted reads it): still a candidate.
    let mut node_deleting = node_json("a");
    node_deleting["metadata"]["deletionTimestamp"] = json!(NOW);
    let nodes = vec![
        joined(node_deleting, claim_json("a")),
        joined(node_json("b"), claim_deleting),
        joined(node_json("c"), terminating),
        joined(taken, claim_json("d")),
    ];
    let snapshot = snapshot(nodes, vec![]);
    let found = candidates(&snapshot, now());
    let names: Vec<Option<&str>> = found.candidates.iter().map(|c| c.claim.name()).collect();
    assert_eq!(names, [Some("nc-a")]);
    assert!(found.blocked.is_empty());
}

#[test]
fn node_do_not_disrupt_blocks_with_the_exact_reason() {
    let mut node = node_json("node-a");
    node["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
    // Only "true" counts on a node.
    let mut other = node_json("node-b");
    other["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "1h"});
    let nodes = vec![
        joined(node, claim_json("node-a")),
        joined(other, claim_json("node-b")),
    ];
    // A blocking pod on the node does not change the reason: the node comes first.
    let db = annotated(pod_json("db-0", "node-a"), "true");
    let snapshot = snapshot(nodes, vec![db]);
    let found = candidates(&snapshot, now());
    assert_eq!(
        found.blocked,
        [blocked(
            "node-a",
            "node node-a has karpenter.sh/do-not-disrupt"
        )]
    );
    assert!(found.pod_blocked.is_empty());
    assert_eq!(names(&found.candidates), ["node-b"]);
}

fn annotated(mut value: Value, do_not_disrupt: &str) -> Pod {
    value["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": do_not_disrupt});
    pod(value)
}

#[test]
fn pod_do_not_disrupt_blocks() {
    let pods = vec![
        pod(pod_json("web-0", "node-a")),
        annotated(pod_json("db-0", "node-a"), "true"),
        // A protection that has run out, and one on a finished pod, do not block.
        annotated(pod_json("batch", "node-b"), "1h"),
        {
            let mut done = pod_json("done", "node-b");
            done["status"]["phase"] = json!("Succeeded");
            annotated(done, "true")
        },
    ];
    let snapshot = snapshot(vec![managed("node-a"), managed("node-b")], pods);
    let found = candidates(&snapshot, now());
    assert_eq!(
        found.blocked,
        [blocked(
            "node-a",
            "pod default/db-0 has karpenter.sh/do-not-disrupt"
        )]
    );
    assert_eq!(names(&found.candidates), ["node-b"]);
    // The blocked node is kept whole for the eventual class.
    assert_eq!(names(&found.pod_blocked), ["node-a"]);
    let kept = &found.pod_blocked[0];
    assert!(matches!(
        kept.pod_block,
        Some(PodBlock::DoNotDisrupt { .. })
    ));
    assert_eq!(kept.pods.len(), 2);
    // Without a terminationGracePeriod on its claim, drift may not take it.
    assert_eq!(names(found.eventual()), ["node-b"]);
}

#[test]
fn termination_grace_period_waives_pod_blockers_for_the_eventual_class() {
    let mut claim = claim_json("node-a");
    claim["spec"]["terminationGracePeriod"] = json!("1h");
    let pods = vec![annotated(pod_json("db-0", "node-a"), "true")];
    let snapshot = snapshot(
        vec![joined(node_json("node-a"), claim), managed("node-b")],
        pods,
    );
    let found = candidates(&snapshot, now());
    assert_eq!(names(&found.candidates), ["node-b"]);
    assert_eq!(found.blocked.len(), 1);
    let eventual = found.eventual();
    assert_eq!(names(eventual.iter().copied()), ["node-a", "node-b"]);
    assert_eq!(
        eventual[0].termination_grace_period(),
        Some(Duration::from_secs(3600))
    );
    assert_eq!(eventual[1].termination_grace_period(), None);
}

fn pdb(name: &str, app: &str, allowed: i32) -> k8s_openapi::api::policy::v1::PodDisruptionBudget {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
    }))
    .expect("a valid PDB")
}

#[test]
fn pdb_blocks_and_do_not_disrupt_is_checked_first() {
    let with_app = |name: &str, node: &str, app: &str| {
        let mut value = pod_json(name, node);
        value["metadata"]["labels"] = json!({ "app": app });
        value
    };
    let pods = vec![
        // On node-a: a PDB-blocked pod sorts before the do-not-disrupt one, but
        // every pod's annotation is checked before any budget, as upstream.
        pod(with_app("api-0", "node-a", "api")),
        annotated(pod_json("web-0", "node-a"), "true"),
        // On node-b: only the budget.
        pod(with_app("api-1", "node-b", "api")),
        // On node-c: a budget that still allows a disruption.
        pod(with_app("ok-0", "node-c", "ok")),
    ];
    let mut snapshot = snapshot(
        vec![managed("node-c"), managed("node-b"), managed("node-a")],
        pods,
    );
    snapshot.pod_disruption_budgets = vec![pdb("api", "api", 0), pdb("ok", "ok", 1)];
    let found = candidates(&snapshot, now());
    assert_eq!(
        found.blocked,
        [
            blocked(
                "node-a",
                "pod default/web-0 has karpenter.sh/do-not-disrupt"
            ),
            blocked(
                "node-b",
                "pod default/api-1 is protected by PodDisruptionBudget default/api, which allows no disruption now"
            ),
        ]
    );
    assert_eq!(names(&found.pod_blocked), ["node-a", "node-b"]);
    assert!(matches!(
        found.pod_blocked[1].pod_block,
        Some(PodBlock::PdbAllowsNone { .. })
    ));
    assert_eq!(names(&found.candidates), ["node-c"]);
}

#[test]
fn a_missing_pool_or_a_pool_without_instance_types_blocks() {
    let mut orphan = node_json("node-a");
    orphan["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("gone");
    let mut typeless = node_json("node-b");
    typeless["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("bare");
    let mut snapshot = snapshot(
        vec![
            joined(typeless, claim_json("node-b")),
            joined(orphan, claim_json("node-a")),
        ],
        vec![],
    );
    snapshot.node_pools.push(pool("bare"));
    snapshot
        .instance_types
        .insert("bare".to_owned(), Arc::from(Vec::new()));
    let found = candidates(&snapshot, now());
    assert!(found.candidates.is_empty());
    assert_eq!(
        found.blocked,
        [
            blocked("node-a", "nodepool \"gone\" not found"),
            blocked("node-b", "nodepool \"bare\" has no instance types"),
        ]
    );
}

#[test]
fn price_is_the_matching_offering_and_zero_when_unknown() {
    let with_labels = |name: &str, instance_type: &str, zone: &str, capacity: &str| {
        let mut node = node_json(name);
        let labels = &mut node["metadata"]["labels"];
        labels["node.kubernetes.io/instance-type"] = json!(instance_type);
        labels["topology.kubernetes.io/zone"] = json!(zone);
        labels["karpenter.sh/capacity-type"] = json!(capacity);
        joined(node, claim_json(name))
    };
    let mut unlabelled = node_json("e-no-zone");
    unlabelled["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("topology.kubernetes.io/zone");
    let nodes = vec![
        with_labels("a-on-demand", "small", "zone-a", "on-demand"),
        // The spot offering is unavailable, but it is what the node runs on.
        with_labels("b-spot", "small", "zone-a", "spot"),
        with_labels("c-other-zone", "small", "zone-z", "on-demand"),
        with_labels("d-unknown-type", "huge", "zone-a", "on-demand"),
        joined(unlabelled, claim_json("e-no-zone")),
    ];
    let snapshot = snapshot(nodes, vec![]);
    let found = candidates(&snapshot, now());
    let prices: Vec<(&str, f64)> = found.candidates.iter().map(|c| (c.name, c.price)).collect();
    assert_eq!(
        prices,
        [
            ("a-on-demand", 0.10),
            ("b-spot", 0.04),
            ("c-other-zone", 0.0),
            ("d-unknown-type", 0.0),
            ("e-no-zone", 0.0),
        ]
    );
    // An instance type the pool does not know still makes a candidate.
    assert!(found.candidates[3].instance_type.is_none());
    assert_eq!(found.candidates[4].zone, None);
    assert_eq!(found.candidates[0].savings_ratio(), 0.10);
}

#[test]
fn created_from_the_claim_else_the_node_else_now() {
    let mut claim = claim_json("b");
    claim["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    let mut neither_node = node_json("c");
    neither_node["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    let mut neither_claim = claim_json("c");
    neither_claim["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    let mut claim_a = claim_json("a");
    claim_a["metadata"]["creationTimestamp"] = json!("2026-05-10T00:00:00Z");
    let nodes = vec![
        joined(node_json("a"), claim_a),
        joined(node_json("b"), claim),
        joined(neither_node, neither_claim),
    ];
    let snapshot = snapshot(nodes, vec![]);
    let found = candidates(&snapshot, now());
    let created: Vec<Timestamp> = found.candidates.iter().map(|c| c.created).collect();
    assert_eq!(created, [at("2026-05-10T00:00:00Z"), at(CREATED), now()]);
}

#[test]
fn consolidatable_at_counts_from_the_newest_pod_or_initialization() {
    let consolidate_after = |after: &str| {
        let mut snapshot = snapshot(
            vec![managed("node-a"), managed("node-b")],
            vec![
                pod(pod_json("web-0", "node-a")),
                // A daemon pod counts too: the scenario format counts every pod
                // bound to the node.
                daemon_pod("agent", "node-b"),
            ],
        );
        snapshot.node_pools = vec![pool_with("default", json!({"consolidateAfter": after}))];
        snapshot
    };
    let snapshot = consolidate_after("1h");
    let found = candidates(&snapshot, now());
    let [with_pod, with_daemon] = [&found.candidates[0], &found.candidates[1]];
    assert_eq!(with_pod.consolidatable_at, Some(at("2026-05-02T01:00:00Z")));
    assert_eq!(
        with_daemon.consolidatable_at,
        Some(at("2026-05-02T01:00:00Z"))
    );
    assert!(with_pod.is_consolidatable(now()));
    assert!(!with_pod.is_consolidatable(at("2026-05-02T00:59:59Z")));
    assert!(with_pod.is_consolidatable(at("2026-05-02T01:00:00Z")));

    let never = consolidate_after("Never");
    let found = candidates(&never, now());
    assert!(
        found
            .candidates
            .iter()
            .all(|c| c.consolidatable_at.is_none())
    );
    assert!(!found.candidates[0].is_consolidatable(now()));
}

#[test]
fn consolidatable_at_counts_from_the_last_pod_event_else_creation_and_pods() {
    // Initialized by the node's label only: count from the claim's creation.
    let mut by_label = claim_json("a");
    by_label["status"]["conditions"] = json!([]);
    // A recorded pod event, earlier than its pod's creation: upstream counts
    // from it alone.
    let mut evented = claim_json("b");
    evented["status"]["lastPodEventTime"] = json!("2026-05-01T12:00:00Z");
    // No recorded event: the newest of initialization and its pods' creation.
    let plain = claim_json("c");
    let nodes = vec![
        joined(node_json("a"), by_label),
        joined(node_json("b"), evented),
        joined(node_json("c"), plain),
    ];
    let snapshot = snapshot(
        nodes,
        vec![pod(pod_json("web", "b")), pod(pod_json("api", "c"))],
    );
    let found = candidates(&snapshot, now());
    let times: Vec<Option<Timestamp>> = found
        .candidates
        .iter()
        .map(|c| c.consolidatable_at)
        .collect();
    // The default consolidateAfter is 0s.
    assert_eq!(
        times,
        [
            Some(at(CREATED)),
            Some(at("2026-05-01T12:00:00Z")),
            Some(at("2026-05-02T00:00:00Z")),
        ]
    );
}

#[test]
fn expires_at_defaults_to_720h_and_never_disables() {
    let found_for = |expire_after: Option<&str>, claim_expire_after: Option<&str>| {
        let mut snapshot = snapshot(vec![], vec![]);
        let mut claim = claim_json("node-a");
        if let Some(value) = claim_expire_after {
            claim["spec"]["expireAfter"] = json!(value);
        }
        snapshot.nodes = vec![joined(node_json("node-a"), claim)];
        if let Some(value) = expire_after {
            let mut value_pool: Value = serde_json::to_value(pool("default")).unwrap();
            value_pool["spec"]["template"]["spec"]["expireAfter"] = json!(value);
            snapshot.node_pools = vec![serde_json::from_value(value_pool).unwrap()];
        }
        let found = candidates(&snapshot, now());
        let candidate = &found.candidates[0];
        (candidate.expires_at, candidate.is_expired(now()))
    };
    // 720h after 2026-05-01 is 2026-05-31: expired on June 1st.
    assert_eq!(
        found_for(None, None),
        (Some(at("2026-05-31T00:00:00Z")), true)
    );
    assert_eq!(
        found_for(Some("1000h"), None),
        (Some(at("2026-06-11T16:00:00Z")), false)
    );
    assert_eq!(found_for(Some("Never"), None), (None, false));
    // The claim's own expireAfter, set at launch, wins over the pool's.
    assert_eq!(
        found_for(Some("Never"), Some("24h")),
        (Some(at("2026-05-02T00:00:00Z")), true)
    );
    assert_eq!(found_for(None, Some("Never")), (None, false));
}

#[test]
fn disruption_cost_scales_with_remaining_lifetime() {
    let mut claim = claim_json("node-a");
    // Half of a 62-day lifetime has passed by NOW.
    claim["spec"]["expireAfter"] = json!("1488h");
    let nodes = vec![joined(node_json("node-a"), claim)];
    let pods = vec![pod(pod_json("a", "node-a")), daemon_pod("d", "node-a")];
    let snapshot = snapshot(nodes, pods);
    let found = candidates(&snapshot, now());
    let candidate = &found.candidates[0];
    assert_eq!(candidate.disruption_cost, 1.0); // (1 + 1) * 0.5
    assert_eq!(candidate.reschedule_cost, 2.0);
}

#[test]
fn daemon_and_finished_pods_leave_a_node_empty() {
    let mut done = pod_json("done", "node-a");
    done["status"]["phase"] = json!("Succeeded");
    let pods = vec![
        daemon_pod("agent-a", "node-a"),
        pod(done),
        daemon_pod("agent-b", "node-b"),
        pod(pod_json("web", "node-b")),
    ];
    let snapshot = snapshot(vec![managed("node-a"), managed("node-b")], pods);
    let found = candidates(&snapshot, now());
    let [empty, busy] = [&found.candidates[0], &found.candidates[1]];
    assert_eq!(empty.pods.len(), 2);
    assert!(empty.reschedulable.is_empty());
    assert_eq!(empty.reschedule_cost, 1.0);
    assert!(empty.is_empty());
    assert_eq!(names_of(&snapshot, &busy.reschedulable), ["web"]);
    assert_eq!(busy.reschedule_cost, 2.0);
    assert!(!busy.is_empty());
    assert_eq!(busy.savings_ratio(), 0.05);
}

/// The names of the `snapshot`'s pods at `pods`.
fn names_of(snapshot: &Snapshot, pods: &[usize]) -> Vec<String> {
    pods.iter()
        .map(|&i| snapshot.pods[i].metadata.name.clone().unwrap_or_default())
        .collect()
}

#[test]
fn drift_is_reported_on_the_candidate() {
    let mut claim = claim_json("node-a");
    claim["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Drifted", "status": "True", "reason": "ImageDrift"}));
    let snapshot = snapshot(
        vec![joined(node_json("node-a"), claim), managed("node-b")],
        vec![],
    );
    let found = candidates(&snapshot, now());
    assert_eq!(
        found.candidates[0].drift,
        Some(DriftReason::Condition {
            reason: Some("ImageDrift".into())
        })
    );
    assert_eq!(found.candidates[1].drift, None);
}

#[test]
fn a_claim_whose_instance_type_vanished_is_drifted_after_an_hour() {
    let mut claim = claim_json("node-a");
    claim["metadata"]["labels"]["node.kubernetes.io/instance-type"] = json!("large");
    let mut young = claim.clone();
    young["metadata"]["creationTimestamp"] = json!("2026-05-31T23:30:00Z");
    let snapshot = snapshot(
        vec![
            joined(node_json("node-a"), claim),
            joined(node_json("node-b"), young),
        ],
        vec![],
    );
    let found = candidates(&snapshot, now());
    let drift = found.candidates[0].drift.as_ref().expect("drifted");
    assert_eq!(drift.name(), "InstanceTypeNotFound");
    let causes = found.candidates[0].drift_causes();
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].node, "node-a");
    assert_eq!(causes[0].reason, "InstanceTypeNotFound");
    // The young claim is not checked yet (its Node is as old as node-a's).
    assert_eq!(found.candidates[1].drift, None);
    assert!(found.candidates[1].drift_causes().is_empty());
}

#[test]
fn order_is_by_name_whatever_the_input_order() {
    let blocked_node = |name: &str| {
        let mut node = node_json(name);
        node["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
        joined(node, claim_json(name))
    };
    let nodes = vec![
        managed("node-c"),
        blocked_node("node-z"),
        managed("node-a"),
        blocked_node("node-m"),
        managed("node-b"),
    ];
    let pods = vec![
        pod(pod_json("web-2", "node-a")),
        pod(pod_json("web-10", "node-a")),
        pod(pod_json("api", "node-a")),
    ];
    let snapshot = snapshot(nodes, pods);
    let found = candidates(&snapshot, now());
    assert_eq!(names(&found.candidates), ["node-a", "node-b", "node-c"]);
    let blocked: Vec<&str> = found.blocked.iter().map(|b| b.node.as_str()).collect();
    assert_eq!(blocked, ["node-m", "node-z"]);
    assert_eq!(
        names_of(&snapshot, &found.candidates[0].pods),
        ["api", "web-10", "web-2"]
    );
}
