//! Unit tests of [`compute`]'s refusals, on one-node snapshots built here.

use crate::pods::PodInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::*;
use crate::api::NodePool;
use crate::cloudprovider::Offering;
use crate::disruption::DisruptionOptions;
use crate::disruption::allowances::Allowances;
use crate::disruption::candidates::candidates;
use crate::disruption::methods::Seed;
use crate::pods::Pdbs;
use crate::provisioning::CarriedSetup;
use crate::resources::ResourceList;
use crate::snapshot::{ClusterNode, Snapshot};

const CREATED: &str = "2026-05-01T00:00:00Z";

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a valid timestamp")
}

/// A type of `cpu` cores (4 GiB of memory each), with these offerings in
/// zone-a.
fn instance_type(name: &str, cpu: i64, offerings: &[(&str, f64)]) -> InstanceType {
    let mut capacity = ResourceList::new();
    capacity.set("cpu", cpu * 1000);
    capacity.set("memory", cpu * 4 * 1024 * 1024 * 1024 * 1000);
    capacity.set("pods", 110_000);
    let offerings = offerings
        .iter()
        .map(|&(capacity_type, price)| Offering::new("zone-a", capacity_type, price))
        .collect();
    InstanceType::new(
        name,
        [("kubernetes.io/arch", "amd64")],
        offerings,
        capacity,
        ResourceList::new(),
    )
}

/// `big`: 8 cores, on-demand 1.0 and spot 0.8.
fn big() -> InstanceType {
    instance_type("big", 8, &[("on-demand", 1.0), ("spot", 0.8)])
}

/// `small`: 2 cores, on-demand 0.1 and spot 0.05.
fn small() -> InstanceType {
    instance_type("small", 2, &[("on-demand", 0.1), ("spot", 0.05)])
}

fn pool() -> NodePool {
    serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {
            "template": {"spec": {"requirements": []}},
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": "100%"}],
            },
        },
    }))
    .expect("a valid NodePool")
}

/// The initialized node `node-a` of pool `default` (8 cores allocatable),
/// of this capacity type and instance type, with its claim.
fn node(capacity_type: &str, instance_type: &str) -> ClusterNode {
    let labels = json!({
        "karpenter.sh/nodepool": "default",
        "karpenter.sh/initialized": "true",
        "karpenter.sh/registered": "true",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/zone": "zone-a",
        "karpenter.sh/capacity-type": capacity_type,
        "kubernetes.io/hostname": "node-a",
        "kubernetes.io/arch": "amd64",
    });
    let resources = json!({"cpu": "8", "memory": "32Gi", "pods": "110"});
    let node = json!({
        "metadata": {"name": "node-a", "creationTimestamp": CREATED, "labels": labels},
        "spec": {"providerID": "fake:///node-a"},
        "status": {
            "allocatable": resources,
            "capacity": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    });
    let claim = json!({
        "metadata": {"name": "nc-node-a", "creationTimestamp": CREATED, "labels": labels},
        "spec": {"requirements": []},
        "status": {
            "nodeName": "node-a",
            "providerID": "fake:///node-a",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": CREATED},
            ],
        },
    });
    ClusterNode {
        node: Some(serde_json::from_value(node).expect("a valid Node")),
        node_claim: Some(serde_json::from_value(claim).expect("a valid NodeClaim")),
    }
}

/// A running ReplicaSet pod `default/<name>` on `node-a` asking for `cpu`.
fn pod_value(name: &str, cpu: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": format!("uid-{name}"),
            "labels": {"app": "web"},
            "creationTimestamp": CREATED,
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs",
                "controller": true,
            }],
        },
        "spec": {
            "containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
            "nodeName": "node-a",
        },
        "status": {"phase": "Running", "startTime": CREATED},
    })
}

fn pod(name: &str, cpu: &str) -> Pod {
    serde_json::from_value(pod_value(name, cpu)).expect("a valid pod")
}

fn snapshot(node: ClusterNode, pods: Vec<Pod>, types: Vec<InstanceType>) -> Snapshot {
    Snapshot {
        node_pools: vec![pool()],
        instance_types: BTreeMap::from([("default".to_owned(), Arc::from(types))]),
        nodes: vec![node],
        pods: pods
            .into_iter()
            .map(|p| Arc::new(PodInfo::from(p)))
            .collect(),
        ..Snapshot::default()
    }
}

/// What [`compute`] decides for `node-a` alone.
fn decide(snapshot: &Snapshot, options: &DisruptionOptions) -> Result<Command, Unconsolidatable> {
    let found = candidates(snapshot, now());
    let allowances = Allowances::new(snapshot, now());
    let left: Vec<&Candidate<'_>> = found.candidates.iter().collect();
    assert_eq!(left.len(), 1, "node-a is the one candidate");
    let eventual = found.eventual();
    let taken = BTreeSet::new();
    let carried = CarriedSetup::default();
    let pdbs = Arc::new(Pdbs::new(&snapshot.pod_disruption_budgets));
    let seed = Seed {
        carried: &carried,
        pdbs: &pdbs,
    };
    let pass = Pass::new(
        snapshot,
        now(),
        &left,
        &eventual,
        &allowances,
        &taken,
        options,
        seed,
        None,
    );
    compute(&pass, &left)
}

#[test]
fn an_on_demand_node_is_replaced_by_a_cheaper_one() {
    let on_demand_only = vec![
        instance_type("big", 8, &[("on-demand", 1.0)]),
        instance_type("small", 2, &[("on-demand", 0.1)]),
    ];
    let snapshot = snapshot(
        node("on-demand", "big"),
        vec![pod("web", "500m")],
        on_demand_only,
    );
    let command = decide(&snapshot, &DisruptionOptions::default()).expect("a command");
    assert_eq!(command.candidates, ["node-a"]);
    assert_eq!(command.replacements.len(), 1);
}

#[test]
fn a_spot_node_stays_when_spot_to_spot_is_off() {
    let snapshot = snapshot(
        node("spot", "big"),
        vec![pod("web", "500m")],
        vec![big(), small()],
    );
    let why = decide(&snapshot, &DisruptionOptions::default()).unwrap_err();
    assert_eq!(why, Unconsolidatable::SpotToSpotDisabled);
    assert_eq!(
        why.to_string(),
        "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
    );
}

#[test]
fn a_spot_node_needs_fifteen_cheaper_spot_types() {
    let snapshot = snapshot(
        node("spot", "big"),
        vec![pod("web", "500m")],
        vec![big(), small()],
    );
    let options = DisruptionOptions::default().with_spot_to_spot(true);
    let why = decide(&snapshot, &options).unwrap_err();
    assert_eq!(
        why,
        Unconsolidatable::SpotToSpotTooFewTypes {
            required: MIN_SPOT_TO_SPOT_TYPES,
            cheaper: 1,
        }
    );
}

#[test]
fn no_cheaper_type_leaves_the_node() {
    // The only type the pod fits is the node's own, at the node's price.
    let only = vec![instance_type("small", 2, &[("on-demand", 0.1)])];
    let snapshot = snapshot(node("on-demand", "small"), vec![pod("web", "500m")], only);
    let why = decide(&snapshot, &DisruptionOptions::default()).unwrap_err();
    assert_eq!(why, Unconsolidatable::NoCheaperReplacement);
    assert_eq!(why.to_string(), "Can't replace with a cheaper node");
}

#[test]
fn pods_that_cannot_move_keep_the_node() {
    // No type has 16 cores: the pod would find no home.
    let snapshot = snapshot(
        node("on-demand", "big"),
        vec![pod("huge", "16")],
        vec![big(), small()],
    );
    let why = decide(&snapshot, &DisruptionOptions::default()).unwrap_err();
    let Unconsolidatable::PodsWouldNotSchedule { stranded } = &why else {
        panic!("expected stranded pods, got {why:?}");
    };
    assert_eq!(stranded.len(), 1);
    assert_eq!(stranded[0].pod.to_string(), "default/huge");
    assert!(
        why.to_string()
            .starts_with("not all pods would schedule, default/huge => "),
        "{why}"
    );
}

#[test]
fn pods_needing_two_nodes_keep_the_node() {
    // Each pod keeps the other off its host: two new nodes, for one.
    let apart = |name: &str| {
        let mut value = pod_value(name, "500m");
        value["spec"]["affinity"] = json!({"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname",
            }],
        }});
        serde_json::from_value::<Pod>(value).expect("a valid pod")
    };
    let snapshot = snapshot(
        node("on-demand", "big"),
        vec![apart("web-1"), apart("web-2")],
        vec![big(), small()],
    );
    let why = decide(&snapshot, &DisruptionOptions::default()).unwrap_err();
    assert_eq!(why, Unconsolidatable::TooManyReplacements { claims: 2 });
    assert_eq!(
        why.to_string(),
        "Can't remove without creating 2 candidates"
    );
}
