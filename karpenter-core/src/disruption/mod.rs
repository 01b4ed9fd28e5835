//! Disruption planning: which nodes to delete or replace, and why, as upstream
//! Karpenter's disruption controller (`pkg/controllers/disruption`) decides.
//!
//! [`planner::plan`] (and [`planner::plan_with`], with options) answers for a
//! snapshot at a moment: forceful commands first (interruption notices and
//! unhealthy nodes, as the provider's repair policies say, then expiration),
//! then passes of the graceful methods in upstream's order
//! (emptiness, drift, multi-node and single-node consolidation), each pass
//! taking the first command a method finds, until none does; then the nodes
//! that would qualify but may not move now. The modules:
//!
//! - [`candidates`]: which nodes disruption may act on, with their price, pods,
//!   costs, consolidateAfter and expiry times and drift, and which would be
//!   candidates but are blocked, with why;
//! - [`pods`]: what a pod on a candidate node means for disruption: whether it
//!   blocks the node (`karpenter.sh/do-not-disrupt`, PodDisruptionBudgets), whether
//!   it must be rescheduled, and what evicting it costs
//!   ([`pods::Pdbs`]: which PodDisruptionBudgets select a pod and whether they
//!   let it be evicted);
//! - [`budgets`]: how many of a NodePool's nodes its disruption budgets (with
//!   their cron schedules) let be disrupted now, for a reason;
//! - [`allowances`]: what the pools' budgets still allow as a plan goes;
//! - [`expiration`]: the forceful deletion of nodes past their `expireAfter`;
//! - [`repair`]: the forceful replacement of unhealthy and interrupted nodes,
//!   by the provider's repair policies;
//! - [`drift`]: whether a node has drifted from its NodePool, and why;
//! - [`simulate`]: where the pods of nodes about to go would land (the
//!   reference simulation, planning the changed cluster from scratch, and the
//!   [`simulate::Simulator`] that answers many such questions over one set-up);
//! - [`methods`]: the graceful methods behind one trait: emptiness, drift,
//!   multi-node and single-node consolidation, and the opt-in M-to-N
//!   replacement;
//! - [`balanced`]: the `Balanced` consolidation policy's test of a move;
//! - [`planner`]: the plan and its options (repair policies, packing, M-to-N,
//!   spot-to-spot);
//! - [`apply`]: the cluster as a command leaves it, for the passes after it;
//! - [`plan`]: the commands and blocked nodes a plan is made of.

pub mod allowances;
pub mod apply;
pub mod balanced;
pub mod budgets;
pub mod candidates;
pub mod drift;
pub mod expiration;
pub mod methods;
mod options;

pub use options::DisruptionOptions;
pub mod plan;
pub mod planner;
pub mod pods;
pub mod repair;
pub mod simulate;
