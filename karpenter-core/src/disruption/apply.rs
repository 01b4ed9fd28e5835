//! What a command leaves behind, for the passes after it: as upstream's later
//! passes see the cluster once a command has started, its nodes are being
//! deleted (they still count for budgets), its pods are bound where the
//! simulation placed them, and its replacements are in-flight NodeClaims
//! holding the pods that needed them.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::carry::Move;
use super::options::DisruptionOptions;
use super::plan::Command;
use super::simulate::{Simulation, moves_any, simulate};
use crate::api::Quantities;
use crate::fast_hash::{HashMap, HashSet};
use crate::planning::PlanningOptions;
use crate::pods::PodKey;
use crate::provisioning::PlannedClaim;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, NODE_POOL_LABEL_KEY,
};
use crate::snapshot::{ClusterNode, Snapshot};

/// Where a command came from, which says how its simulation is found again.
#[derive(Debug)]
pub(crate) enum Origin {
    /// A forceful step (expiration, repair): its own nodes are deleted
    /// whatever their pods' protections, so they are exempt from the
    /// `consolidateAfter` fence as well.
    Forceful,
    /// A method, with the simulation the command came from (its nodes and
    /// those being deleted removed, the latter exempt from the fence) when
    /// the pass still has it.
    Method(Option<Simulation>),
}

/// Applies a plan's commands, one after another, to the cluster the next
/// passes see: it numbers the replacements across the whole plan.
#[derive(Debug)]
pub(crate) struct Applier {
    /// The moment planned for.
    now: Timestamp,
    /// How a command simulated again chooses its new claims.
    simulation: PlanningOptions,
    /// How many replacements the commands applied so far launch.
    replacements: usize,
    /// The indices of the working cluster's pods by key, made when a command
    /// first moves pods: a plan's commands never add, remove or rename a
    /// pod, so the indices hold for every command after.
    pods_by_key: Option<HashMap<PodKey, Vec<usize>>>,
}

impl Applier {
    /// An applier for a plan at `now` with `options`.
    pub(crate) fn new(now: Timestamp, options: &DisruptionOptions) -> Applier {
        Applier {
            now,
            simulation: options.planning,
            replacements: 0,
            pods_by_key: None,
        }
    }

    /// Applies `command`, from `origin`, to `working`; `deleting` are the
    /// nodes earlier commands took. Without the command's simulation it is
    /// simulated again. Returns the pods it moved.
    pub(crate) fn apply(
        &mut self,
        working: &mut Snapshot,
        command: &Command,
        deleting: &BTreeSet<String>,
        origin: Origin,
    ) -> Vec<Move> {
        let now = self.now;
        // Where the simulation behind the command put the moved pods on the
        // remaining capacity (the replacements' pods are the command's own).
        let forceful = matches!(origin, Origin::Forceful);
        let simulation = match origin {
            Origin::Method(Some(simulation)) => Some(simulation),
            Origin::Forceful | Origin::Method(None) => {
                let mut removed: BTreeSet<&str> = deleting.iter().map(String::as_str).collect();
                removed.extend(command.candidates.iter().map(String::as_str));
                let exempt: BTreeSet<&str> = if forceful {
                    removed.clone()
                } else {
                    deleting.iter().map(String::as_str).collect()
                };
                // A simulation moves only currently reschedulable pods: with
                // none on the way out (an empty node's command), it would
                // move nothing, and planning the whole cluster again to
                // learn that is the costliest step of a plan.
                if !moves_any(working, &removed, now) {
                    None
                } else {
                    Some(simulate(working, &removed, &exempt, now, self.simulation))
                }
            }
        };
        let mut destination: HashMap<PodKey, String> = HashMap::default();
        if let Some(simulation) = &simulation {
            let moved: BTreeSet<&PodKey> = simulation.moved.iter().collect();
            for placement in &simulation.plan.existing_nodes {
                for pod in placement.pods.iter().filter(|p| moved.contains(p)) {
                    destination.insert(pod.clone(), placement.name.clone());
                }
            }
        }
        for claim in &command.replacements {
            self.replacements += 1;
            let name = format!("replacement-{:04}", self.replacements);
            if let Some(node) = in_flight(working, claim, &name, now) {
                working.nodes.push(node);
                for pod in &claim.pods {
                    destination.insert(pod.clone(), name.clone());
                }
            }
            // The cloud launches it into one unit of its reservation, which
            // the later passes see taken, as a provider reports it.
            let reserved = claim
                .launch
                .as_ref()
                .and_then(|l| l.reservation_id.as_deref());
            if let Some(id) = reserved {
                working.take_reservation(id);
            }
        }
        // The moved pods found by key: a command moves a few hundred of a
        // cluster's pods, and matching every pod against the moves cost more
        // than applying them (docs/performance.md, "Moves found by key").
        let mut moved = Vec::new();
        if !destination.is_empty() {
            let pods_by_key = self
                .pods_by_key
                .get_or_insert_with(|| index_by_key(&working.pods));
            for (key, node) in &destination {
                for &i in pods_by_key.get(key).into_iter().flatten() {
                    let pod = &mut working.pods[i];
                    if pod.spec.is_some() {
                        let from = Arc::make_mut(pod).node_name.replace(node.clone());
                        moved.push(Move {
                            pod: i,
                            from,
                            to: node.clone(),
                        });
                    }
                }
            }
            moved.sort_by_key(|m| m.pod);
        }
        let deleted = Some(Time(now));
        let taken: HashSet<&str> = command.candidates.iter().map(String::as_str).collect();
        for node in working
            .nodes
            .iter_mut()
            .filter(|n| taken.contains(n.name()))
        {
            if let Some(kube) = node.node.as_mut() {
                Arc::make_mut(kube).metadata.deletion_timestamp = deleted.clone();
            }
            if let Some(claim) = node.node_claim.as_mut() {
                claim.metadata.deletion_timestamp = deleted.clone();
            }
        }
        moved
    }
}

/// The indices of `pods` by key (several for a key that several pods share).
fn index_by_key(pods: &[Arc<crate::pods::PodInfo>]) -> HashMap<PodKey, Vec<usize>> {
    let mut by_key: HashMap<PodKey, Vec<usize>> = HashMap::default();
    by_key.reserve(pods.len());
    for (i, pod) in pods.iter().enumerate() {
        by_key.entry(PodKey::of(pod.as_ref())).or_default().push(i);
    }
    by_key
}

/// A replacement as an in-flight NodeClaim: its pool's template, the launch's
/// labels and the launched type's capacity; `None` when its pool or type is
/// unknown.
fn in_flight(
    snapshot: &Snapshot,
    claim: &PlannedClaim,
    name: &str,
    now: Timestamp,
) -> Option<ClusterNode> {
    let launch = claim.launch.as_ref()?;
    let pool = snapshot
        .node_pools
        .iter()
        .find(|p| p.name() == Some(claim.node_pool.as_str()))?;
    let instance_type = snapshot
        .instance_types
        .get(&claim.node_pool)?
        .iter()
        .find(|t| t.name == launch.instance_type)?;
    let mut node_claim = pool.spec.template.to_node_claim();
    node_claim.metadata.name = Some(name.to_owned());
    node_claim.metadata.creation_timestamp = Some(Time(now));
    let labels = node_claim
        .metadata
        .labels
        .get_or_insert_with(Default::default);
    labels.extend(claim.node_labels(&snapshot.well_known_labels));
    for (key, value) in [
        (NODE_POOL_LABEL_KEY, claim.node_pool.as_str()),
        (LABEL_INSTANCE_TYPE_STABLE, launch.instance_type.as_str()),
        (LABEL_TOPOLOGY_ZONE, launch.zone.as_str()),
        (CAPACITY_TYPE_LABEL_KEY, launch.capacity_type.as_str()),
    ] {
        labels.insert(key.to_owned(), value.to_owned());
    }
    // The launched offering's further labels (Azure's priority, say).
    if let Some(offering) = instance_type.offerings.iter().find(|o| launch.is_of(o)) {
        labels.extend(offering.requirements.labels());
    }
    let status = node_claim.status.get_or_insert_with(Default::default);
    status.capacity = Some(Quantities::from(instance_type.capacity.to_quantities()));
    status.allocatable = Some(Quantities::from(
        instance_type.allocatable().to_quantities(),
    ));
    Some(ClusterNode {
        node: None,
        node_claim: Some(node_claim),
    })
}
