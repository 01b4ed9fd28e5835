//! The large running cluster the scale benchmarks plan for, shaped as a busy
//! production cluster rather than a synthetic grid:
//!
//! - one NodePool, `WhenEmptyOrUnderutilized`, `consolidateAfter: 0s`, a
//!   disruption budget of 10 % of its nodes;
//! - three instance families (`c`, `m`, `r`: 2, 4 and 8 GiB per vCPU) of 4, 8,
//!   16 and 32 vCPU, on-demand in three zones;
//! - nodes filled to 40-85 % of their cpu, and one in ten nearly empty (at
//!   most 10 %);
//! - apps run as ReplicaSets of 5 to 20 replicas of 100m-1500m cpu and
//!   128Mi-2Gi memory, about fifteen pods a node; one app in five spreads its
//!   replicas over zones (`maxSkew: 1`, `ScheduleAnyway`), and one in ten is
//!   guarded by a PodDisruptionBudget that allows one disruption.
//!
//! Replicas are dealt to the nodes in turn (an app's replicas land on
//! consecutive nodes, so in different zones), each node taking pods until the
//! next would pass its target. The same arguments give the same cluster.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::{self, ResourceList};
use karpenter_core::snapshot::Snapshot;

use super::catalog::three_families;
use super::running::{pdb, pool_with_budget, requests, running_snapshot};
use super::workload::{Shape, SplitMix64, pending_pod};

/// The vCPU sizes the pool offers.
pub const SIZES: [i64; 4] = [4, 8, 16, 32];
/// The share of the pool's nodes that may be disrupted at once.
pub const BUDGET: &str = "10%";

const CPUS_MILLI: [i64; 10] = [100, 100, 150, 250, 300, 500, 500, 750, 1000, 1500];
const MEMORIES_MI: [i64; 5] = [128, 256, 512, 1024, 2048];
/// Failed placements after which a node takes no more pods.
const TRIES: u8 = 5;

/// The pool's catalog: [`three_families`] cut to [`SIZES`].
pub fn scale_instance_types() -> Vec<InstanceType> {
    three_families()
        .into_iter()
        .filter(|t| {
            SIZES
                .iter()
                .any(|&cpus| t.capacity.get(resources::CPU) == cpus * 1000)
        })
        .collect()
}

/// A node being filled: what it may still take before reaching its target.
struct Filling {
    index: usize,
    room: ResourceList,
    failures: u8,
    pods: Vec<Pod>,
}

/// One app: its name, replica count, per-replica requests and whether it
/// spreads over zones.
struct App {
    name: String,
    replicas: usize,
    cpu: i64,
    memory_mi: i64,
    spread: bool,
}

/// A running cluster of `nodes` nodes in the shape the module describes
/// (about fifteen pods a node), for `disrupt`, `summary` and the scale
/// benchmarks.
pub fn scale_cluster(nodes: usize, seed: u64) -> Snapshot {
    let nodes = nodes.max(1);
    let types: Arc<[InstanceType]> = scale_instance_types().into();
    let mut rng = SplitMix64::new(seed);
    let mut queue: VecDeque<Filling> = VecDeque::with_capacity(nodes);
    let mut node_types = Vec::with_capacity(nodes);
    for index in 0..nodes {
        let instance_type = &types[rng.below(types.len())];
        let allocatable = instance_type.allocatable();
        let percent = if rng.below(10) == 0 {
            3 + rng.below(8) as i64
        } else {
            40 + rng.below(46) as i64
        };
        let mut room = ResourceList::new();
        room.set(
            resources::CPU,
            allocatable.get(resources::CPU) * percent / 100,
        );
        room.set(
            resources::MEMORY,
            allocatable.get(resources::MEMORY) / 10 * 9,
        );
        room.set(resources::PODS, allocatable.get(resources::PODS));
        node_types.push(instance_type);
        queue.push_back(Filling {
            index,
            room,
            failures: 0,
            pods: Vec::new(),
        });
    }
    let mut filled: Vec<Vec<Pod>> = vec![Vec::new(); nodes];
    let mut guarded = Vec::new();
    let mut app_number = 0;
    'apps: while !queue.is_empty() {
        let app = App {
            name: format!("app-{app_number}"),
            replicas: 5 + rng.below(16),
            cpu: CPUS_MILLI[rng.below(CPUS_MILLI.len())],
            memory_mi: MEMORIES_MI[rng.below(MEMORIES_MI.len())],
            spread: app_number % 5 == 0,
        };
        if app_number % 10 == 3 {
            guarded.push(pdb(&app.name, app.replicas));
        }
        app_number += 1;
        let mut placed = 0;
        while placed < app.replicas {
            let Some(mut node) = queue.pop_front() else {
                break 'apps;
            };
            let pod = replica(&app, placed);
            let needs = requests(&pod);
            if needs.fits(&node.room) {
                node.room = node.room.saturating_sub(&needs);
                node.pods.push(pod);
                placed += 1;
                queue.push_back(node);
            } else if node.failures + 1 < TRIES {
                node.failures += 1;
                queue.push_back(node);
            } else {
                filled[node.index] = std::mem::take(&mut node.pods);
            }
        }
    }
    let nodes = filled.into_iter().zip(node_types).collect();
    running_snapshot(pool_with_budget(BUDGET), &types, nodes, guarded)
}

/// Replica `i` of `app`, owned by the app's ReplicaSet.
fn replica(app: &App, i: usize) -> Pod {
    let shape = if app.spread {
        Shape::ZonalSpread
    } else {
        Shape::Plain
    };
    let name = format!("{}-{i}", app.name);
    let mut pod = pending_pod(
        &name,
        shape,
        &format!("{}m", app.cpu),
        &format!("{}Mi", app.memory_mi),
    );
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert("app".to_string(), app.name.clone());
    for owner in pod.metadata.owner_references.iter_mut().flatten() {
        owner.name = format!("{}-rs", app.name);
        owner.uid = format!("uid-{}-rs", app.name);
    }
    let constraints = pod
        .spec
        .as_mut()
        .and_then(|spec| spec.topology_spread_constraints.as_mut());
    for constraint in constraints.into_iter().flatten() {
        constraint.when_unsatisfiable = "ScheduleAnyway".to_string();
        if let Some(selector) = constraint.label_selector.as_mut() {
            selector.match_labels = Some(BTreeMap::from([("app".to_string(), app.name.clone())]));
        }
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(cluster: &Snapshot, node: &str) -> ResourceList {
        let mut used = ResourceList::new();
        for pod in cluster
            .pods
            .iter()
            .filter(|p| p.node_name.as_deref() == Some(node))
        {
            used = used.checked_add(&requests(pod)).unwrap_or(used);
        }
        used
    }

    #[test]
    fn nodes_are_filled_to_their_targets_and_the_seed_decides_everything() {
        let cluster = scale_cluster(200, 3);
        assert_eq!(cluster.nodes.len(), 200);
        let per_node = cluster.pods.len() as f64 / 200.0;
        assert!((10.0..20.0).contains(&per_node), "{per_node} pods a node");
        let mut nearly_empty = 0;
        for node in &cluster.nodes {
            let used = used(&cluster, node.name());
            let allocatable = node.allocatable();
            assert!(used.fits(&allocatable), "{} over-committed", node.name());
            let percent = used.get(resources::CPU) * 100 / allocatable.get(resources::CPU);
            assert!(percent <= 85, "{} at {percent} %", node.name());
            if percent <= 10 {
                nearly_empty += 1;
            }
        }
        assert!(
            (5..=45).contains(&nearly_empty),
            "{nearly_empty} nearly empty"
        );
        let spread = cluster
            .pods
            .iter()
            .filter(|p| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.topology_spread_constraints.as_ref())
                    .is_some_and(|c| c[0].when_unsatisfiable == "ScheduleAnyway")
            })
            .count();
        assert!(spread * 10 > cluster.pods.len() && spread * 3 < cluster.pods.len());
        assert!(!cluster.pod_disruption_budgets.is_empty());
        let again = scale_cluster(200, 3);
        assert_eq!(again.nodes, cluster.nodes);
        assert_eq!(again.pods, cluster.pods);
    }
}
