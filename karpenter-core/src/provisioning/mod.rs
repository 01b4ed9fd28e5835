//! Provisioning: which pending pods go to existing capacity and which new
//! NodeClaims to launch, with which instance types, as upstream Karpenter's
//! scheduler (`pkg/controllers/provisioning/scheduling`) decides.
//!
//! [`schedule`] reads a [`Snapshot`] and returns a [`ProvisioningPlan`]. It is pure:
//! the same snapshot gives the same plan, byte for byte once serialized.
//!
//! How it decides, in brief:
//! - the pods planned are the pending ones, as upstream reads a pod's status
//!   (see [`is_pending`]: not bound, not preempting, marked unschedulable by the
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
//!   upstream's default `ignore-dra-requests` (see [`has_dra_requirements`]);
//! - a claim lists its instance types cheapest first (at most 600) and launches the
//!   cheapest available offering.

mod bound;
mod claim;
mod claim_order;
mod claim_sets;
mod cost;
mod daemons;
mod dra;
mod dual;
mod existing;
mod filter;
mod finalize;
mod fit_index;
mod host_ports;
mod leaving;
mod names;
mod options;
mod pending;
mod plan;
mod pods;
mod preferences;
mod scheduler;
mod setup;
mod templates;
#[cfg(test)]
mod test_support;
pub(crate) mod topology;
mod type_cache;
mod validate;
mod volumes;

pub use bound::lower_bound;
pub use cost::Packing;
pub use dra::{DRA_UNSUPPORTED, has_dra_requirements};
pub(crate) use filter::unmet_min_values_of;
pub use finalize::MAX_INSTANCE_TYPES;
pub use names::NameList;
pub use options::ProvisioningOptions;
pub(crate) use plan::round_price;
pub use plan::{
    ExistingPlacement, Launch, PlannedClaim, ProvisioningPlan, RequirementOutput, Unschedulable,
};

pub use crate::pods::{bound_node, is_daemon_pod, is_terminal, pod_key};
pub(crate) use existing::is_destination;
pub(crate) use leaving::leaving_pods;
pub(crate) use pending::{as_unschedulable, is_pending_but_for_nomination};
pub use pending::{is_pending, is_preempting, marked_unschedulable, nominated_node};
pub(crate) use scheduler::Fence;
pub(crate) use setup::Prepared;
pub(crate) use validate::read_requirements;
pub use validate::{Rule, Subject, Violation, validate};

use crate::snapshot::Snapshot;

/// Plans provisioning for the snapshot's pending pods (and those of its nodes
/// on their way out), as upstream does, with no clock (see
/// [`ProvisioningOptions::now`]).
pub fn schedule(snapshot: &Snapshot) -> ProvisioningPlan {
    schedule_with(snapshot, &ProvisioningOptions::default())
}

/// Plans provisioning for the snapshot's pending pods (and those of its nodes
/// on their way out) with `options`: with the default [`Packing::Upstream`]
/// it decides as upstream; [`Packing::Cost`] keeps every constraint and
/// lowers the new claims' total price where it can.
///
/// ```
/// use karpenter_core::provisioning::{Packing, ProvisioningOptions, schedule, schedule_with};
/// use karpenter_core::snapshot::Snapshot;
///
/// let snapshot = Snapshot::default();
/// let cost = schedule_with(&snapshot, &ProvisioningOptions::default().with_packing(Packing::Cost));
/// assert!(cost.total_price_per_hour <= schedule(&snapshot).total_price_per_hour);
/// ```
pub fn schedule_with(snapshot: &Snapshot, options: &ProvisioningOptions) -> ProvisioningPlan {
    let mut scheduler = scheduler::Scheduler::new(snapshot, options.now);
    scheduler.packing = options.packing;
    scheduler.solve();
    scheduler.into_plan()
}

/// Plans a scheduler built elsewhere (see [`Prepared`]).
pub(crate) fn solve(mut scheduler: scheduler::Scheduler<'_>) -> ProvisioningPlan {
    scheduler.solve();
    scheduler.into_plan()
}

/// [`schedule_with`] for a disruption simulation's changed cluster, keeping
/// the fence's pods off its nodes. Its nodes on their way out are gone
/// already and their pods pending.
pub(crate) fn schedule_fenced(
    snapshot: &Snapshot,
    fence: Fence,
    packing: Packing,
) -> ProvisioningPlan {
    let mut scheduler = scheduler::Scheduler::new(snapshot, None);
    scheduler.fence = fence;
    scheduler.packing = packing;
    scheduler.solve();
    scheduler.into_plan()
}
