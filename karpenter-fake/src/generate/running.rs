//! Generated running clusters, for disruption benchmarks and tests: managed
//! nodes of the sized catalog, spread over the three fake zones, each running
//! its share of a mixed workload with room to spare, so that consolidation has
//! real choices to weigh. The same arguments give the same cluster.
//!
//! The workload comes in apps of ten replicas: most unconstrained, some spread
//! over zones (`maxSkew: 1`), some with hostname self-anti-affinity, a few
//! guarded by a PodDisruptionBudget that allows one disruption. Replica `j` of
//! the workload runs on node `j % nodes`, so an app's replicas sit on different
//! nodes and its zonal spread holds from the start.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::pods::{PodFields, PodInterner};
use karpenter_core::resources::{self, ResourceList, format_quantity};
use karpenter_core::scheduling::WellKnownLabels;
use karpenter_core::snapshot::{Snapshot, join_nodes};

use super::catalog::{ZONES, sized_instance_types};
use super::workload::{Shape, SplitMix64, pending_pod};

/// The NodePool every generated node belongs to.
pub const POOL: &str = "default";
/// When the generated nodes and pods were created: long before any `now` a
/// benchmark picks, so every `consolidateAfter` has passed.
pub const CREATED: &str = "2026-01-01T00:00:00Z";
/// Replicas per app.
const REPLICAS: usize = 10;
/// Sizes of the catalog the cluster's pool offers (1 to 64 vCPU).
const CATALOG_SIZES: usize = 64;

const CPUS: [i64; 5] = [100, 250, 500, 1000, 1500];
const MEMORIES_MI: [i64; 6] = [100, 256, 512, 1024, 2048, 4096];

/// The shape of app `app`: seven in ten unconstrained, two spread over zones,
/// one with hostname self-anti-affinity.
fn shape_of(app: usize) -> Shape {
    match app % 10 {
        7 | 8 => Shape::ZonalSpread,
        9 => Shape::HostnameSelfAntiAffinity,
        _ => Shape::Plain,
    }
}

/// A running cluster of `nodes` managed nodes and `pods` bound pods (spread
/// evenly), one NodePool (`WhenEmptyOrUnderutilized`, `consolidateAfter: 0s`,
/// `expireAfter: Never`, a budget of 100 %) offered sizes of 1 to 64 vCPU. Each
/// node is the smallest size that holds its pods, then grown by a random
/// 10-150 % (at most 64 vCPU), so utilisation varies from node to node.
pub fn running_cluster(nodes: usize, pods: usize, seed: u64) -> Snapshot {
    let nodes = nodes.max(1);
    let types: Arc<[InstanceType]> = sized_instance_types(CATALOG_SIZES).into();
    let mut rng = SplitMix64::new(seed);
    let mut bound: Vec<Vec<Pod>> = vec![Vec::new(); nodes];
    let mut guarded_apps = Vec::new();
    for j in 0..pods {
        let app = j / REPLICAS;
        let shape = shape_of(app);
        let cpu = CPUS[rng.below(CPUS.len())];
        let memory = MEMORIES_MI[rng.below(MEMORIES_MI.len())];
        let name = format!("app-{app}-{}", j % REPLICAS);
        let mut pod = pending_pod(&name, shape, &format!("{cpu}m"), &format!("{memory}Mi"));
        let app_label = format!("app-{app}");
        relabel(&mut pod, &app_label);
        if app % 25 == 3 && j % REPLICAS == 0 {
            guarded_apps.push(app_label);
        }
        bound[j % nodes].push(pod);
    }
    // Each node's type, in node order (the random growth is drawn in that order).
    let typed: Vec<(Vec<Pod>, &InstanceType)> = bound
        .into_iter()
        .map(|node_pods| {
            let instance_type = node_type(&types, &node_pods, &mut rng);
            (node_pods, instance_type)
        })
        .collect();
    let pdbs = guarded_apps.iter().map(|app| pdb(app, REPLICAS)).collect();
    running_snapshot(pool(), &types, typed, pdbs)
}

/// The snapshot of a generated running cluster: node `i` (`node-{i:05}`, in
/// zone `i % 3`, with its NodeClaim) of each type given, running its pods, in
/// one pool offered `types`.
pub(super) fn running_snapshot(
    pool: NodePool,
    types: &Arc<[InstanceType]>,
    nodes: Vec<(Vec<Pod>, &InstanceType)>,
    pod_disruption_budgets: Vec<PodDisruptionBudget>,
) -> Snapshot {
    let mut cluster_nodes = Vec::with_capacity(nodes.len());
    let mut claims = Vec::with_capacity(nodes.len());
    let mut pods = Vec::new();
    let mut interner = PodInterner::new();
    for (i, (node_pods, instance_type)) in nodes.into_iter().enumerate() {
        let name = format!("node-{i:05}");
        let (node, claim) = managed_node(&name, ZONES[i % ZONES.len()], instance_type);
        cluster_nodes.push(node);
        claims.push(claim);
        for mut pod in node_pods {
            run_on(&mut pod, &name);
            pods.push(Arc::new(interner.pod_info(&pod)));
        }
    }
    Snapshot {
        node_pools: vec![pool],
        instance_types: BTreeMap::from([(POOL.to_string(), Arc::clone(types))]),
        nodes: join_nodes(cluster_nodes, claims),
        pods,
        pod_disruption_budgets,
        well_known_labels: WellKnownLabels::core().clone(),
        ..Snapshot::default()
    }
}

/// The pool of the generated cluster.
fn pool() -> NodePool {
    pool_with_budget("100%")
}

/// The generated clusters' pool, with one budget of `nodes` (`"10%"`, `"5"`).
pub(super) fn pool_with_budget(nodes: &str) -> NodePool {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": POOL},
        "spec": {
            "template": {"spec": {
                "requirements": [],
                "expireAfter": "Never",
                "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            }},
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": nodes}],
            },
        },
    }))
    .unwrap_or_default()
}

/// Gives the pod its app's label (the shapes' selectors name the app too).
fn relabel(pod: &mut Pod, app: &str) {
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert("app".to_string(), app.to_string());
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    let selectors = spec
        .topology_spread_constraints
        .iter_mut()
        .flatten()
        .map(|c| &mut c.label_selector)
        .chain(
            spec.affinity
                .iter_mut()
                .filter_map(|a| a.pod_anti_affinity.as_mut())
                .filter_map(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_mut()
                })
                .flatten()
                .map(|t| &mut t.label_selector),
        );
    for selector in selectors.flatten() {
        selector.match_labels = Some(BTreeMap::from([("app".to_string(), app.to_string())]));
    }
}

/// Binds a generated pod to `node`, running and ready.
fn run_on(pod: &mut Pod, node: &str) {
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = Some(node.to_string());
    }
    let created = Time(CREATED.parse().unwrap_or_default());
    pod.status = Some(PodStatus {
        phase: Some("Running".to_string()),
        start_time: Some(created.clone()),
        conditions: Some(vec![PodCondition {
            type_: "Ready".to_string(),
            status: "True".to_string(),
            last_transition_time: Some(created),
            ..PodCondition::default()
        }]),
        ..PodStatus::default()
    });
}

/// The smallest type holding the pods, grown by 10-150 %, at most the largest.
fn node_type<'t>(
    types: &'t [InstanceType],
    pods: &[Pod],
    rng: &mut SplitMix64,
) -> &'t InstanceType {
    let mut needs = ResourceList::new();
    for pod in pods {
        needs = needs.checked_add(&requests(pod)).unwrap_or(needs);
    }
    let smallest = types
        .iter()
        .position(|t| needs.fits(&t.allocatable()))
        .unwrap_or(types.len() - 1);
    let grown = (smallest + 1) * (110 + rng.below(141)) / 100;
    let index = grown.clamp(smallest, types.len() - 1);
    &types[index]
}

/// What a generated pod requests (`pods: 1` included), as Kubernetes counts it.
pub(super) fn requests(pod: &(impl PodFields + ?Sized)) -> ResourceList {
    pod.scheduling()
        .and_then(|spec| resources::pod_requests(spec).ok())
        .unwrap_or_default()
}

/// A registered, initialized node of the pool and its NodeClaim.
pub(super) fn managed_node(
    name: &str,
    zone: &str,
    instance_type: &InstanceType,
) -> (Node, NodeClaim) {
    let labels = BTreeMap::from([
        ("karpenter.sh/nodepool".to_string(), POOL.to_string()),
        (
            "node.kubernetes.io/instance-type".to_string(),
            instance_type.name.clone(),
        ),
        ("topology.kubernetes.io/zone".to_string(), zone.to_string()),
        (
            "karpenter.sh/capacity-type".to_string(),
            "on-demand".to_string(),
        ),
        ("kubernetes.io/hostname".to_string(), name.to_string()),
        ("kubernetes.io/arch".to_string(), "amd64".to_string()),
        ("kubernetes.io/os".to_string(), "linux".to_string()),
        ("karpenter.sh/initialized".to_string(), "true".to_string()),
        ("karpenter.sh/registered".to_string(), "true".to_string()),
    ]);
    let quantities = |list: &ResourceList| -> BTreeMap<String, Quantity> {
        list.iter()
            .map(|(k, v)| (k.to_string(), Quantity(format_quantity(v))))
            .collect()
    };
    let created = Time(CREATED.parse().unwrap_or_default());
    let provider_id = format!("fake:///{name}");
    let node = Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels.clone()),
            creation_timestamp: Some(created.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            provider_id: Some(provider_id.clone()),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: Some(quantities(&instance_type.capacity)),
            allocatable: Some(quantities(&instance_type.allocatable())),
            conditions: Some(vec![k8s_openapi::api::core::v1::NodeCondition {
                type_: "Ready".to_string(),
                status: "True".to_string(),
                ..Default::default()
            }]),
            ..NodeStatus::default()
        }),
    };
    let claim: NodeClaim = serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("nc-{name}"), "labels": labels, "creationTimestamp": CREATED},
        "spec": {
            "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            "requirements": [],
        },
        "status": {
            "nodeName": name,
            "providerID": provider_id,
            "conditions": [{"type": "Initialized", "status": "True", "lastTransitionTime": CREATED}],
        },
    }))
    .unwrap_or_default();
    (node, claim)
}

/// A PodDisruptionBudget over the app (of `replicas` healthy pods) that allows
/// one disruption.
pub(super) fn pdb(app: &str, replicas: usize) -> PodDisruptionBudget {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("{app}-pdb"), "namespace": "default"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}},
        "status": {
            "currentHealthy": replicas, "desiredHealthy": replicas.saturating_sub(1),
            "disruptionsAllowed": 1, "expectedPods": replicas,
        },
    }))
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_holds_its_pods_and_the_same_seed_gives_the_same_cluster() {
        let cluster = running_cluster(30, 600, 7);
        assert_eq!(cluster.nodes.len(), 30);
        assert_eq!(cluster.pods.len(), 600);
        for node in &cluster.nodes {
            let on_node = cluster
                .pods
                .iter()
                .filter(|p| p.node_name.as_deref() == Some(node.name()));
            let mut used = ResourceList::new();
            for pod in on_node {
                used = used.checked_add(&requests(pod)).unwrap_or(used);
            }
            assert!(
                used.fits(&node.allocatable()),
                "{} over-committed",
                node.name()
            );
        }
        let again = running_cluster(30, 600, 7);
        assert_eq!(again.nodes, cluster.nodes);
        assert_eq!(again.pods, cluster.pods);
    }
}
