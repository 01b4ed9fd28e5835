//! Provisioning: which pending pods go to existing capacity and which new
//! NodeClaims to launch, with which instance types, as upstream Karpenter's
//! scheduler (`pkg/controllers/provisioning/scheduling`) decides.
//!
//! [`plan_provisioning`] reads a [`Snapshot`] and returns a [`ProvisioningPlan`]. It is pure:
//! the same snapshot gives the same plan, byte for byte once serialized.
//!
//! How it decides, in brief:
//! - the pods planned are the pending ones, as upstream reads a pod's status
//!   (see [`is_pending`](crate::pods::is_pending): not bound, not preempting, marked unschedulable by the
//!   kube-scheduler or written without a status, not a DaemonSet's or a Node's,
//!   neither finished nor being deleted), and those of the nodes on their way
//!   out (being deleted, or tainted by a disruption command) that will be
//!   evicted: reschedulable, and held neither by `karpenter.sh/do-not-disrupt`
//!   nor by a PodDisruptionBudget that forbids every eviction. Those nodes
//!   take no pods and count against no NodePool limit;
//! - pods are taken cpu-descending, then memory-descending, then by age and UID;
//! - each pod tries existing nodes (initialized first, then by name), then the
//!   plan's new claims (fewest pods first), then a new claim from each NodePool in
//!   weight order (heaviest first; equal weights by name, descending, as upstream);
//! - a claim's requirements are the NodePool's, the pod's (nodeSelector, the first
//!   required node-affinity term, the heaviest preferred term as if required) and
//!   its topology's; its instance types narrow with every pod;
//! - when a pod fits nowhere, one preference is relaxed and it tries again; a pod
//!   that still fails goes to the back of the queue until a cycle makes no progress;
//! - a pod with Dynamic Resource Allocation claims gets no capacity and is not
//!   relaxed, and DaemonSets whose pods have such claims are no overhead, as
//!   upstream's default `ignore-dra-requests` (see [`has_dra_requirements`](crate::pods::has_dra_requirements));
//! - a claim lists its instance types cheapest first (at most 600) and launches the
//!   cheapest available offering.

mod demand;
mod instance_types;
mod names;
#[cfg(feature = "optimise")]
mod optimise;
mod options;
mod plan;
mod scheduler;
mod static_pools;
#[cfg(test)]
mod test_support;
pub(crate) mod topology;
mod validate;

pub(crate) use demand::daemons::is_pod_of_any;
pub use demand::dra::DRA_UNSUPPORTED;
pub(crate) use instance_types::filter::unmet_min_values_of;
pub use names::NameList;
#[cfg(feature = "optimise")]
pub use optimise::lower_bound::lower_bound;
pub use options::ProvisioningOptions;

use crate::planning::{MinValuesPolicy, Packing};
pub use plan::{
    BufferPlacement, ExistingPlacement, Launch, MAX_INSTANCE_TYPES, PlannedClaim, ProvisioningPlan,
    RequirementOutput, StaticRemoval, Unschedulable,
};
pub(crate) use plan::{read_requirements, round_price};
pub(crate) use scheduler::carry::CarriedSetup;
pub(crate) use scheduler::existing::is_destination;
pub(crate) use scheduler::prepared::Prepared;
pub(crate) use scheduler::reservations::ReservedMode;
pub(crate) use scheduler::solve::Fence;
pub(crate) use static_pools::{StaticCounts, static_claim};
pub use validate::{Rule, Subject, Violation, validate};

use k8s_openapi::jiff::Timestamp;

use crate::features::FeatureGate;
use crate::snapshot::Snapshot;
use scheduler::solve::Scheduler;

/// Plans provisioning for the snapshot's pending pods (and those of its nodes
/// on their way out), as upstream does, with no clock (see
/// [`ProvisioningOptions::now`]).
pub fn plan_provisioning(snapshot: &Snapshot) -> ProvisioningPlan {
    plan_provisioning_with(snapshot, &ProvisioningOptions::default())
}

/// Plans provisioning for the snapshot's pending pods (and those of its nodes
/// on their way out) with `options`: with the default [`Packing::Upstream`]
/// it decides as upstream; [`Packing::Cost`] keeps every constraint and
/// lowers the new claims' total price where it can.
///
/// ```
/// use karpenter_core::planning::Packing;
/// use karpenter_core::provisioning::{plan_provisioning, plan_provisioning_with};
/// use karpenter_core::snapshot::Snapshot;
///
/// let snapshot = Snapshot::default();
/// let cost = plan_provisioning_with(&snapshot, &Packing::Cost.into());
/// assert!(cost.total_price_per_hour <= plan_provisioning(&snapshot).total_price_per_hour);
/// ```
pub fn plan_provisioning_with(
    snapshot: &Snapshot,
    options: &ProvisioningOptions,
) -> ProvisioningPlan {
    // No work for nothing: with no pod to place, the plan is empty whatever
    // the cluster, and reading every node into a destination would only say so
    // slowly (this is what a controller asks most often).
    let planning = &options.planning;
    let buffers = planning.feature_gates.is_on(FeatureGate::CapacityBuffer);
    let mut plan = if has_pods_to_plan(snapshot, options.now, buffers) {
        let mut scheduler =
            Scheduler::new(snapshot, options.now, planning.min_values_policy, buffers);
        scheduler.packing = planning.packing;
        scheduler.buffer_summary = buffers;
        // Provisioning is strict: a pod that could launch into a reservation
        // waits for one (upstream's `DisableReservedCapacityFallback`).
        let reserving = planning.feature_gates.is_on(FeatureGate::ReservedCapacity);
        scheduler.reservations = scheduler
            .reservations
            .with_mode(reserving.then_some(ReservedMode::Strict));
        solve(scheduler)
    } else {
        ProvisioningPlan::default()
    };
    // Buffers with no chunk to place (none resolved, or all empty) are
    // listed all the same.
    if buffers && plan.capacity_buffers.is_empty() && !snapshot.capacity_buffers.is_empty() {
        let states = snapshot.capacity_buffers.states();
        plan.capacity_buffers =
            scheduler::buffer_tally::BufferTally::new(states.len()).placements(states);
    }
    if planning.feature_gates.is_on(FeatureGate::StaticCapacity) {
        let changes = static_pools::static_changes(snapshot, options.now);
        for claim in changes.launches {
            plan.total_price_per_hour += claim.launch.as_ref().map_or(0.0, |l| l.price);
            plan.node_claims.push(claim);
        }
        plan.total_price_per_hour = round_price(plan.total_price_per_hour);
        plan.static_removals = changes.removals;
    }
    plan
}

/// Whether the snapshot has any pod for provisioning to place at `now`, the
/// pods a scheduler plans for: a pending pod, one leaving a node on its way
/// out, or with `buffers` a CapacityBuffer's virtual pod.
pub(crate) fn has_pods_to_plan(snapshot: &Snapshot, now: Option<Timestamp>, buffers: bool) -> bool {
    (buffers && snapshot.capacity_buffers.virtual_pod_count() > 0)
        || snapshot.pods.iter().any(crate::pods::is_pending)
        || !demand::leaving::leaving_pods(snapshot, now).is_empty()
}

/// Plans a scheduler built elsewhere (see [`Prepared`]): upstream's solve
/// loop places every pod it can; in the cost mode the loose claims are then
/// packed again at least price, against the pools' limits as they stood
/// before any new claim was charged.
pub(crate) fn solve(mut scheduler: Scheduler<'_>) -> ProvisioningPlan {
    match scheduler.packing {
        Packing::Upstream => scheduler.solve(),
        #[cfg(feature = "optimise")]
        Packing::Cost => {
            let limits_at_start = scheduler.limits.clone();
            scheduler.solve();
            scheduler.repack_for_cost(&limits_at_start);
        }
    }
    scheduler.into_plan()
}

/// [`plan_provisioning_with`] for a disruption simulation's changed cluster, keeping
/// the fence's pods off its nodes (with `buffers`, its CapacityBuffers'
/// virtual pods planned too). Its nodes on their way out are gone already
/// and their pods pending.
pub(crate) fn schedule_fenced(
    snapshot: &Snapshot,
    fence: Fence,
    packing: Packing,
    min_values_policy: MinValuesPolicy,
    reserved: Option<ReservedMode>,
    buffers: bool,
) -> ProvisioningPlan {
    let mut scheduler = Scheduler::new(snapshot, None, min_values_policy, buffers);
    scheduler.fence = fence;
    scheduler.packing = packing;
    scheduler.reservations = scheduler.reservations.with_mode(reserved);
    solve(scheduler)
}

#[cfg(test)]
mod tests {
    use super::test_support::{instance_type, pod, snapshot};
    use super::*;
    use crate::snapshot::build::{NodeBuilder, PodBuilder};

    /// A pool with a running node holding two pods, and `pending` pods.
    fn cluster(pending: Vec<k8s_openapi::api::core::v1::Pod>, deleting: bool) -> Snapshot {
        let mut cluster = snapshot(vec![instance_type("small", 2, 4, 0.1)], pending);
        let mut node = NodeBuilder::managed("node-a", "default", "small")
            .zone("zone-a")
            .allocatable("cpu", "2")
            .allocatable("memory", "4Gi")
            .build();
        if deleting && let Some(claim) = node.node_claim.as_mut() {
            claim.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    "2026-01-01T00:00:00Z".parse().expect("a time"),
                ));
        }
        cluster.nodes.push(node);
        for name in ["bound-a", "bound-b"] {
            let bound = PodBuilder::new("default", name)
                .requests("500m", "1Gi")
                .on_node("node-a")
                .build();
            cluster.pods.push(std::sync::Arc::new(bound.into()));
        }
        cluster
    }

    #[test]
    fn with_nothing_to_place_the_plan_is_what_a_full_run_gives() {
        let quiet = cluster(Vec::new(), false);
        let options = ProvisioningOptions::default();
        assert!(!has_pods_to_plan(&quiet, options.now, false));
        let full = solve(Scheduler::new(
            &quiet,
            options.now,
            options.planning.min_values_policy,
            false,
        ));
        assert_eq!(plan_provisioning_with(&quiet, &options), full);
        assert_eq!(full, ProvisioningPlan::default());
    }

    #[test]
    fn pending_pods_and_a_deleting_nodes_pods_are_planned() {
        let options = ProvisioningOptions::default();
        let waiting = cluster(vec![pod("web", "1", "1Gi")], false);
        assert!(has_pods_to_plan(&waiting, options.now, false));
        assert_eq!(
            plan_provisioning_with(&waiting, &options).node_claims.len(),
            1
        );
        let leaving = cluster(Vec::new(), true);
        assert!(has_pods_to_plan(&leaving, options.now, false));
        assert_eq!(
            plan_provisioning_with(&leaving, &options).node_claims.len(),
            1
        );
    }
}
