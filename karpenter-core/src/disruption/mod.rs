//! Disruption planning: which nodes to delete or replace, and why, as upstream
//! Karpenter's disruption controller (`pkg/controllers/disruption`) decides.
//!
//! Being built (see the project's disruption issue). So far:
//! - [`budgets`]: how many of a NodePool's nodes its disruption budgets let be
//!   disrupted now, for a reason;
//! - [`pods`]: what a pod on a candidate node means for disruption: whether it
//!   blocks the node (`karpenter.sh/do-not-disrupt`, PodDisruptionBudgets), whether
//!   it must be rescheduled, and what evicting it costs;
//!   ([`pods::Pdbs`]: which PodDisruptionBudgets select a pod and whether they
//!   let it be evicted);
//! - [`candidates`]: which nodes disruption may act on, with their price, pods,
//!   costs, consolidateAfter and expiry times and drift, and which would be
//!   candidates but are blocked, with why;
//! - [`drift`]: whether a node has drifted from its NodePool, and why;
//! - [`expiration`]: the forceful deletion of nodes past their `expireAfter`;
//! - [`simulate`]: where the pods of nodes about to go would land (the
//!   reference simulation, planning the changed cluster from scratch);
//! - [`plan`]: the commands and blocked nodes a plan is made of;
//! - [`allowances`]: what the pools' budgets still allow as a plan goes;
//! - [`methods`]: the disruption methods behind one trait (emptiness so far);
//! - [`planner`]: passes of the methods until none finds a command;
//! - [`apply`]: the cluster as a command leaves it, for the passes after it.

pub mod allowances;
pub mod apply;
pub mod balanced;
pub mod budgets;
pub mod candidates;
pub mod drift;
pub mod expiration;
pub mod methods;
pub mod plan;
pub mod planner;
pub mod pods;
pub mod repair;
pub mod simulate;
