//! The disruption methods, one file each, behind one trait, tried in
//! upstream's order (`pkg/controllers/disruption/controller.go`): emptiness,
//! drift, multi-node consolidation, single-node consolidation. Each pass takes
//! the first command a method finds; the plan repeats passes until none does.
//!
//! Built so far: [`emptiness`].

pub mod emptiness;

use k8s_openapi::jiff::Timestamp;

use super::allowances::Allowances;
use super::candidates::Candidate;
use super::plan::{Command, CommandReason};
use crate::snapshot::Snapshot;

/// What a method sees in one pass.
#[derive(Debug)]
pub struct Pass<'p, 's> {
    /// The cluster.
    pub snapshot: &'s Snapshot,
    /// The moment planned for.
    pub now: Timestamp,
    /// The candidates no earlier command took, in name order.
    pub candidates: &'p [&'p Candidate<'s>],
    /// What the pools' budgets still allow.
    pub allowances: &'p Allowances<'s>,
}

/// A way of disrupting nodes.
pub trait Method {
    /// The reason its commands give.
    fn reason(&self) -> CommandReason;

    /// The command it would start in this pass, if any.
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command>;
}
