//! Where the pods of nodes about to be disrupted would go: the cluster without
//! those nodes, their pods pending, through the provisioning scheduler, as
//! upstream's `SimulateScheduling` (`pkg/controllers/disruption/helpers.go`)
//! does.
//!
//! This is the reference simulation: it builds the changed cluster and plans it
//! from scratch, which is simple enough to trust. Methods that try many node
//! sets will reuse one scheduling set-up instead, and are checked against this.
//!
//! As upstream, the simulated pods are the pending pods and the removed nodes'
//! pods that are *currently reschedulable* (reschedulable, not protected by
//! `karpenter.sh/do-not-disrupt`, not fully blocked by a PodDisruptionBudget);
//! the other pods of those nodes go with them. Pods that were pending before
//! may stay pending without failing the simulation; a moved pod must land, and
//! not on a node that is not initialized yet (upstream's
//! `UninitializedNodeError`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::candidates::under_consolidate_after;
use super::pdbs::Pdbs;
use crate::provisioning::{Fence, ProvisioningPlan, bound_node, pod_key, schedule_fenced};
use crate::snapshot::Snapshot;

/// What happened to the pods of the removed nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulation {
    /// The plan for the changed cluster: new claims, placements on the
    /// remaining nodes, and what cannot be placed.
    pub plan: ProvisioningPlan,
    /// The removed nodes' pods that were rescheduled, as `namespace/name`,
    /// sorted.
    pub moved: Vec<String>,
    /// Moved pods that found no home, each with why.
    pub stranded: Vec<(String, String)>,
}

impl Simulation {
    /// Whether every moved pod found a home.
    pub fn all_moved(&self) -> bool {
        self.stranded.is_empty()
    }

    /// How many new claims the moved (and pending) pods need.
    pub fn new_claims(&self) -> usize {
        self.plan.node_claims.len()
    }
}

/// Reschedules the pods of the nodes named in `removed` on the rest of the
/// cluster at `now`, none of them being deleted already (see
/// [`simulate_with`]).
pub fn simulate(snapshot: &Snapshot, removed: &BTreeSet<&str>, now: Timestamp) -> Simulation {
    simulate_with(snapshot, removed, &BTreeSet::new(), now)
}

/// Reschedules the pods of the nodes named in `removed` on the rest of the
/// cluster at `now`. As upstream's consolidation simulation, the pods of the
/// removed nodes that are not already being deleted (`deleting`) stay off
/// nodes still inside their `consolidateAfter` window.
pub fn simulate_with(
    snapshot: &Snapshot,
    removed: &BTreeSet<&str>,
    deleting: &BTreeSet<&str>,
    now: Timestamp,
) -> Simulation {
    let (changed, moved) = without_nodes(snapshot, removed, now);
    let fence = fence(snapshot, &changed, removed, deleting, now);
    let plan = schedule_fenced(&changed, fence);
    let stranded = stranded(&changed, &plan, &moved);
    Simulation {
        plan,
        moved,
        stranded,
    }
}

/// The remaining nodes inside their `consolidateAfter` window, and the pods of
/// removed nodes not being deleted, which may not land on them.
fn fence(
    snapshot: &Snapshot,
    changed: &Snapshot,
    removed: &BTreeSet<&str>,
    deleting: &BTreeSet<&str>,
    now: Timestamp,
) -> Fence {
    let mut bound: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
    for pod in &snapshot.pods {
        if let Some(node) = bound_node(pod) {
            bound.entry(node).or_default().push(pod);
        }
    }
    let pool = |name: &str| snapshot.node_pools.iter().find(|p| p.name() == Some(name));
    let nodes = changed
        .nodes
        .iter()
        .filter(|node| {
            let pods = bound.get(node.name()).map_or(&[][..], Vec::as_slice);
            node.node_pool()
                .and_then(pool)
                .is_some_and(|pool| under_consolidate_after(node, pool, pods, now))
        })
        .map(|node| node.name().to_owned())
        .collect();
    let pods = removed
        .iter()
        .filter(|node| !deleting.contains(*node))
        .flat_map(|node| bound.get(node).into_iter().flatten())
        .map(|pod| pod_key(pod))
        .collect();
    Fence { nodes, pods }
}

/// The cluster a simulation plans: the nodes of `removed` gone, their
/// currently reschedulable pods pending (their other pods go with them); and
/// those pods, as `namespace/name`, sorted.
pub fn without_nodes(
    snapshot: &Snapshot,
    removed: &BTreeSet<&str>,
    now: Timestamp,
) -> (Snapshot, Vec<String>) {
    let pdbs = Pdbs::new(&snapshot.pod_disruption_budgets);
    let mut changed = Snapshot {
        node_pools: snapshot.node_pools.clone(),
        instance_types: snapshot.instance_types.clone(),
        nodes: snapshot
            .nodes
            .iter()
            .filter(|n| !removed.contains(n.name()))
            .cloned()
            .collect(),
        pods: Vec::with_capacity(snapshot.pods.len()),
        daemon_sets: snapshot.daemon_sets.clone(),
        pod_disruption_budgets: snapshot.pod_disruption_budgets.clone(),
        persistent_volume_claims: snapshot.persistent_volume_claims.clone(),
        persistent_volumes: snapshot.persistent_volumes.clone(),
        storage_classes: snapshot.storage_classes.clone(),
        well_known_labels: snapshot.well_known_labels.clone(),
    };
    let mut moved = Vec::new();
    for pod in &snapshot.pods {
        match bound_node(pod) {
            Some(node) if removed.contains(node) => {
                if pdbs.is_currently_reschedulable(pod, now) {
                    let mut pending = pod.clone();
                    if let Some(spec) = pending.spec.as_mut() {
                        spec.node_name = None;
                    }
                    moved.push(pod_key(pod));
                    changed.pods.push(pending);
                }
            }
            _ => changed.pods.push(pod.clone()),
        }
    }
    moved.sort();
    (changed, moved)
}

/// The moved pods the plan leaves unplaced, or places on a node that is not
/// initialized.
fn stranded(
    changed: &Snapshot,
    plan: &ProvisioningPlan,
    moved: &[String],
) -> Vec<(String, String)> {
    let is_moved = |pod: &str| moved.binary_search_by(|m| m.as_str().cmp(pod)).is_ok();
    let mut stranded: Vec<(String, String)> = plan
        .unschedulable
        .iter()
        .filter(|u| is_moved(&u.pod))
        .map(|u| (u.pod.clone(), u.reason.clone()))
        .collect();
    for placement in &plan.existing_nodes {
        let initialized = changed
            .nodes
            .iter()
            .find(|n| n.name() == placement.name)
            .is_none_or(|n| n.is_initialized());
        if initialized {
            continue;
        }
        for pod in placement.pods.iter().filter(|p| is_moved(p)) {
            let reason = format!(
                "would land on node {}, which is not initialized",
                placement.name
            );
            stranded.push((pod.clone(), reason));
        }
    }
    stranded.sort();
    stranded
}
