//! Disruption planning: which nodes to delete or replace, and why, as upstream
//! Karpenter's disruption controller (`pkg/controllers/disruption`) decides.
//!
//! Newcomers start with [`plan_disruption()`]: it takes a [`Snapshot`] and a moment and
//! returns a [`DisruptionPlan`], the [`Command`]s in the order they would run
//! (each with its [`CommandReason`], the nodes it deletes and the claims that
//! replace them) and the nodes that would qualify but are [`Blocked`] now.
//! [`plan_disruption_with`] takes [`DisruptionOptions`] beyond upstream's defaults (the
//! provider's repair policies, cost packing, M-to-N and spot-to-spot
//! consolidation); [`first_command`] stops at the first command, for a driver
//! that carries out one at a time, and [`first_command_explained`] adds why
//! the nodes it leaves alone stay: those [`Blocked`], and the candidates
//! single-node consolidation evaluated and refused, each with its
//! [`Unconsolidatable`] reason (upstream's `DisruptionBlocked` and
//! `Unconsolidatable` events), from the same evaluation. [`next_change`]
//! says until when a plan that found nothing would find the same nothing,
//! nothing else changing. A driver checks an emptiness or consolidation
//! command again before it runs, as upstream's validation does (the
//! driver's [`DriverOptions::validation_delay`](crate::driver::DriverOptions::validation_delay)):
//! the check's verdict, when it fails, is a [`ValidationFailure`].
//!
//! ```
//! use karpenter_core::Snapshot;
//! use karpenter_core::disruption::plan_disruption;
//!
//! let snapshot = Snapshot::default();
//! let plan = plan_disruption(&snapshot, "2026-06-01T00:00:00Z".parse()?);
//! // An empty cluster has nothing to disrupt.
//! assert!(plan.commands.is_empty() && plan.blocked.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it decides
//!
//! A plan has forceful commands first (interruption notices and unhealthy
//! nodes, as the provider's repair policies say, then expiration), then
//! passes of the graceful methods in upstream's order (emptiness, drift,
//! multi-node and single-node consolidation), each pass taking the first
//! command a method finds, until none does; then the nodes that would qualify
//! but may not move now. Each pass sees the cluster as the commands before it
//! left it: their nodes being deleted, their pods where the simulation put
//! them, their replacements in flight.
//!
//! What a method may take is decided, in the files of this module, by:
//!
//! - the candidates: the managed, initialized nodes not being deleted, with
//!   their price, pods, costs, `consolidateAfter` and expiry times and drift;
//!   a node kept by `karpenter.sh/do-not-disrupt`, a PodDisruptionBudget or a
//!   missing NodePool is blocked, with why;
//! - the NodePools' disruption budgets (with their cron schedules), by reason
//!   ([`allowed_disruptions`]), and what they still allow as the plan goes;
//! - drift: whether a node no longer matches its NodePool, and why;
//! - the simulation of where the pods of the nodes about to go would land
//!   ([`simulate()`], the reference that plans the changed cluster from
//!   scratch, and the [`Simulator`] that answers many such questions over one
//!   set-up);
//! - for consolidation, a replacement strictly cheaper by its worst launch
//!   price, spot-to-spot rules, and the `Balanced` policy's test of a move.
//!
//! [`Snapshot`]: crate::Snapshot

mod allowances;
mod apply;
mod balanced;
mod budgets;
mod candidates;
mod carry;
mod drift_detection;
mod expiration;
mod methods;
mod next_change;
mod options;
mod plan;
mod planner;
mod repair;
mod simulate;
mod unconsolidatable;
mod validation;

pub use budgets::{Allowance, allowed_disruptions};
pub use next_change::next_change;
pub use options::DisruptionOptions;
pub use plan::{Blocked, Command, CommandReason, DisruptionPlan, DriftCause};
pub use planner::{
    FirstCommand, first_command, first_command_explained, multi_node_command, plan_disruption,
    plan_disruption_with, single_node_options,
};
pub use simulate::{Simulation, Simulator, Stranded, StrandedReason, simulate, without_nodes};
pub use unconsolidatable::Unconsolidatable;
pub use validation::ValidationFailure;
pub(crate) use validation::{is_validated, validate};

/// The planning machinery that is not public is still `Send` and `Sync`, so
/// that a method may weigh its candidates on several threads through one
/// pass: checked when the crate's tests build.
#[cfg(test)]
const _: () = {
    const fn send_and_sync<T: Send + Sync + ?Sized>() {}
    send_and_sync::<methods::Pass<'static, 'static>>();
    send_and_sync::<dyn methods::Method>();
    send_and_sync::<candidates::Candidate<'static>>();
    send_and_sync::<candidates::Candidates<'static>>();
    send_and_sync::<allowances::Allowances<'static>>();
    send_and_sync::<balanced::Balanced>();
    send_and_sync::<balanced::PoolTotals>();
    send_and_sync::<crate::pods::Pdbs<'static>>();
    send_and_sync::<crate::pods::PodBlock>();
    send_and_sync::<drift_detection::DriftReason>();
};
