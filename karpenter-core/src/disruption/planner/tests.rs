//! Passes that carry what the passes before them read decide as passes that
//! read everything afresh: over random clusters whose commands move pods
//! (consolidation, expiry), some of them guarded by a PodDisruptionBudget,
//! newly created, or costly to evict, so that the nodes they land on read
//! differently in the passes after. The pods spread over hostnames and the
//! guarded ones keep apart, so the topology base carried between passes
//! (held to a fresh one in `Prepared::carrying`) has groups and inverse
//! groups to update.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::api::{NodeClaim, NodePool};
use crate::cloudprovider::{InstanceType, Offering};
use crate::pods::PodInfo;
use crate::resources::ResourceList;
use crate::scheduling::WellKnownLabels;
use crate::snapshot::join_nodes;

const NOW: &str = "2026-06-01T00:00:00Z";

/// Fails unless `found` (assessed with what earlier passes carried) reads as
/// the candidates of `working` assessed afresh.
pub(super) fn assert_fresh(
    found: &super::super::candidates::Candidates<'_>,
    working: &Snapshot,
    now: Timestamp,
) {
    let fresh = candidates(working, now);
    assert_eq!(
        format!("{found:?}"),
        format!("{fresh:?}"),
        "carried candidates differ from fresh ones"
    );
}

/// Holds a pass's budget counts, from the standings carried, to fresh ones.
pub(super) fn assert_fresh_allowances(
    allowances: &super::super::allowances::Allowances<'_>,
    working: &Snapshot,
    now: Timestamp,
) {
    let fresh = super::super::allowances::Allowances::new(working, now);
    assert_eq!(
        format!("{allowances:?}"),
        format!("{fresh:?}"),
        "carried budget counts differ from fresh ones"
    );
}

/// One pod: cpu in millicores, guarded by the budget that allows none,
/// created just before `NOW`, and its deletion cost.
type PodSpec = (i64, bool, bool, i32);

/// One node: whether it expired, its pods.
type NodeSpec = (bool, Vec<PodSpec>);

fn from<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

fn cluster(consolidate_after: &str, nodes: &[NodeSpec]) -> Snapshot {
    let mut capacity = ResourceList::new();
    capacity.set("cpu", 4000);
    capacity.set("memory", 16 * 1024 * 1024 * 1024 * 1000);
    capacity.set("pods", 110_000);
    let labels: [(&str, &str); 0] = [];
    let medium = InstanceType::new(
        "medium",
        labels,
        vec![Offering::new("zone-a", "on-demand", 0.2)],
        capacity,
        ResourceList::new(),
    );
    let pool: NodePool = from(json!({
        "metadata": {"name": "default"},
        "spec": {
            "template": {"spec": {"requirements": [], "expireAfter": "720h"}},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": consolidate_after, "budgets": [{"nodes": "100%"}]},
        },
    }));
    let mut kube_nodes: Vec<Node> = Vec::new();
    let mut claims: Vec<NodeClaim> = Vec::new();
    let mut pods: Vec<Pod> = Vec::new();
    for (i, (expired, node_pods)) in nodes.iter().enumerate() {
        let name = format!("node-{i}");
        let created = if *expired {
            "2026-01-01T00:00:00Z"
        } else {
            "2026-05-20T00:00:00Z"
        };
        let labels = json!({
            "karpenter.sh/nodepool": "default",
            "node.kubernetes.io/instance-type": "medium",
            "topology.kubernetes.io/zone": "zone-a",
            "karpenter.sh/capacity-type": "on-demand",
            "kubernetes.io/hostname": name,
            "karpenter.sh/initialized": "true",
            "karpenter.sh/registered": "true",
        });
        let allocatable = json!({"cpu": "4", "memory": "16Gi", "pods": "110"});
        kube_nodes.push(from(json!({
            "metadata": {"name": name, "labels": labels, "creationTimestamp": created},
            "status": {"allocatable": allocatable, "capacity": allocatable, "conditions": [{"type": "Ready", "status": "True"}]},
        })));
        claims.push(from(json!({
            "metadata": {"name": format!("nc-{name}"), "labels": labels, "creationTimestamp": created},
            "spec": {"requirements": []},
            "status": {"nodeName": name, "conditions": [{"type": "Initialized", "status": "True", "lastTransitionTime": created}]},
        })));
        for (j, &(cpu, guarded, new, cost)) in node_pods.iter().enumerate() {
            let pod_name = format!("app-{i}-{j}");
            let app = if guarded { "guarded" } else { "app" };
            // Guarded pods keep apart, so their nodes carry inverse groups.
            let affinity = if guarded {
                json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "guarded"}}, "topologyKey": "kubernetes.io/hostname"},
                ]}})
            } else {
                json!({})
            };
            let created = if new {
                "2026-05-31T23:59:00Z"
            } else {
                "2026-05-21T00:00:00Z"
            };
            pods.push(from(json!({
                "metadata": {
                    "name": pod_name, "namespace": "default", "uid": pod_name,
                    "creationTimestamp": created, "labels": {"app": app},
                    "annotations": {"controller.kubernetes.io/pod-deletion-cost": cost.to_string()},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs", "controller": true}],
                },
                "spec": {
                    "nodeName": name,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": format!("{cpu}m"), "memory": "1Gi"}}}],
                    "affinity": affinity.clone(),
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": app}}}],
                },
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            })));
        }
    }
    let pdb: PodDisruptionBudget = from(json!({
        "metadata": {"name": "guard", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "guarded"}}, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
    }));
    Snapshot {
        node_pools: vec![pool],
        instance_types: BTreeMap::from([("default".to_owned(), Arc::from(vec![medium]))]),
        nodes: join_nodes(kube_nodes, claims),
        pods: pods
            .into_iter()
            .map(|p| Arc::new(PodInfo::from(p)))
            .collect(),
        pod_disruption_budgets: vec![pdb],
        well_known_labels: WellKnownLabels::core().clone(),
        ..Snapshot::default()
    }
}

fn node() -> impl Strategy<Value = NodeSpec> {
    let pod = (
        prop::sample::select(vec![250i64, 500, 1000, 1500]),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.2),
        prop::sample::select(vec![0, 100, -100]),
    );
    (prop::bool::weighted(0.2), prop::collection::vec(pod, 0..5))
}

proptest! {
    /// Every pass of a plan finds, with what the passes before carried, the
    /// candidates a fresh assessment finds (`assert_fresh` in `with_pass`);
    /// the plan is the same planned twice.
    #[test]
    fn carried_candidates_read_as_fresh_ones(
        consolidate_after in prop::sample::select(vec!["0s", "1h"]),
        nodes in prop::collection::vec(node(), 1..9),
    ) {
        let snapshot = cluster(consolidate_after, &nodes);
        let now = NOW.parse().expect("a valid time");
        let first = plan_disruption(&snapshot, now);
        prop_assert_eq!(first, plan_disruption(&snapshot, now));
    }
}

/// A node that a command moves a guarded pod onto is blocked in the passes
/// after: its carried assessment is forgotten.
#[test]
fn a_node_receiving_a_guarded_pod_is_assessed_again() {
    // node-0 expired and runs a guarded pod; node-1 is nearly empty. Expiry
    // moves the guarded pod to node-1, which no later pass may take.
    let snapshot = cluster(
        "0s",
        &[
            (true, vec![(500, true, false, 0)]),
            (false, vec![(250, false, false, 0)]),
        ],
    );
    let now = NOW.parse().expect("a valid time");
    let plan = plan_disruption(&snapshot, now);
    let taken: Vec<&str> = plan
        .commands
        .iter()
        .flat_map(|c| c.candidates.iter().map(String::as_str))
        .collect();
    assert_eq!(taken, ["node-0"], "{plan:?}");
}
