//! When a plan that found nothing to do could find something: the moments
//! at which the planner's answers about time turn.
//!
//! [`first_command_explained`](super::first_command_explained) is a pure
//! function of the snapshot, the moment and the options. Most of what it
//! decides does not read the moment at all; what does compares it with
//! moments the snapshot fixes, each in one direction (once true, true from
//! then on). For a snapshot and options that stay the same, its answer can
//! therefore change only at one of those moments. [`next_change`] finds the
//! first of them after `now`; a driver whose cluster did not change since a
//! plan found no command may skip planning until then.
//!
//! Where the moment is read, and what turns with it:
//!
//! - repair (`repair.rs`, `due`): a node's condition held past a policy's
//!   toleration ([`next_due`]);
//! - expiration (`expiration.rs`): a claim's creation plus its `expireAfter`
//!   ([`next_expiry`]);
//! - candidates (`candidates.rs`): `consolidateAfter` counted from the
//!   claim's `lastPodEventTime` (or its initialization, its creation, its
//!   pods' creation): emptiness and both consolidations take only
//!   consolidatable candidates, and a simulation fences the nodes still
//!   inside their window (`simulate.rs`, `consolidating`)
//!   ([`next_window_end`]). A node of unknown creation counts as created at
//!   `now`, which `next_window_end` accounts for. The candidates'
//!   `disruption_cost` and `created`, which also read the moment, are read by
//!   tests only;
//! - a pod's duration-valued `karpenter.sh/do-not-disrupt` (`pods/protection.rs`),
//!   read by the candidates (a blocked node), by the simulations (whether a
//!   pod moves, through `Pdbs::is_currently_reschedulable`) and by the
//!   provisioning run that finds the nodes holding CapacityBuffer pods
//!   (`methods/mod.rs`, the pods leaving nodes on their way out): the moment
//!   the protection ends;
//! - the NodePools' budgets (`budgets.rs`, `allowances.rs`): a scheduled
//!   budget turns active at a hit of its schedule and inactive a `duration`
//!   later ([`next_activity_change`]);
//! - drift (`drift.rs`): the instance type check runs once a claim is more
//!   than an hour old, and may then find it drifted ([`next_drift_check`]).
//!
//! Nothing else the plan reads turns with the moment: the other drift
//! checks, prices, the Balanced policy, PodDisruptionBudgets (their status
//! is cluster data), the methods' order and the simulations' scheduling
//! (which never read it: `schedule_fenced` plans with no clock). The
//! commands a plan applies between passes (`apply.rs`) read it too, but
//! only after a first command: a plan without one never applies anything.
//! The provisioning run above also works out static pools' changes at the
//! moment (the share of a node's lifetime left), which the CapacityBuffer
//! answer does not read.

use k8s_openapi::jiff::Timestamp;

use super::budgets::next_activity_change;
use super::candidates::{next_drift_check, next_window_end};
use super::expiration::next_expiry;
use super::options::DisruptionOptions;
use super::repair::next_due;
use crate::pods::{PodBlock, do_not_disrupt};
use crate::snapshot::Snapshot;

/// The first moment after `now` at which a disruption plan of `snapshot`
/// with `options` may decide anything differently than it does at `now`;
/// `None` when no moment will make a difference.
///
/// Until then, [`first_command_explained`](super::first_command_explained)
/// (and [`plan_disruption_with`](super::plan_disruption_with)) on the same snapshot and options
/// answers as it does at `now`, provided its answer at `now` has no command
/// (a command's replacements and the passes after it read more of the
/// moment). What is counted: a node's repair toleration running out, its
/// claim expiring, its `consolidateAfter` window closing, its claim
/// coming of age for the instance type drift check (and found drifted by
/// it), a pod's `karpenter.sh/do-not-disrupt` duration ending, and a
/// NodePool budget's schedule turning it on or off; nothing else a plan
/// reads depends on the moment.
///
/// ```
/// use karpenter_core::Snapshot;
/// use karpenter_core::disruption::{DisruptionOptions, next_change};
///
/// // An empty cluster has nothing that time could change.
/// let now = "2026-06-01T00:00:00Z".parse()?;
/// assert_eq!(next_change(&Snapshot::default(), now, &DisruptionOptions::default()), None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn next_change(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> Option<Timestamp> {
    let protections =
        snapshot
            .pods
            .iter()
            .filter_map(|pod| match do_not_disrupt(pod.as_ref(), now) {
                Some(PodBlock::DoNotDisrupt { until, .. }) => until,
                _ => None,
            });
    let budgets = snapshot.node_pools.iter().flat_map(|pool| {
        let budgets = pool.spec.effective_budgets().into_owned();
        budgets
            .into_iter()
            .filter_map(move |budget| next_activity_change(&budget, now))
    });
    [
        next_due(snapshot, now, options.repair_policies()),
        next_expiry(snapshot, now),
        next_window_end(snapshot, now),
        next_drift_check(snapshot, now),
    ]
    .into_iter()
    .flatten()
    .chain(protections)
    .chain(budgets)
    .filter(|at| *at > now)
    .min()
}

#[cfg(test)]
mod tests;
