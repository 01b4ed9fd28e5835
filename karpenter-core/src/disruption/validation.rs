//! The check a computed command passes before it runs, as upstream's
//! `validation.go` (`pkg/controllers/disruption`): emptiness and
//! consolidation wait `commandValidationDelay` (15 s) after computing a
//! command, then re-check it against the cluster as it is then, and drop it
//! when the cluster moved under it. Drift, expiration and repair are not
//! checked (upstream simulates drift and runs it, and the forceful methods
//! have no validator).
//!
//! The check reads a fresh [`Pass`] over the new cluster, so the rules are
//! the planner's own:
//!
//! - the candidates are found again ([`candidates`](super::candidates)) and
//!   must still qualify for the command's method
//!   ([`Emptiness::qualifies`], [`consolidatable`]): a pod bound to an empty
//!   node, a `karpenter.sh/do-not-disrupt` pod or node, a
//!   PodDisruptionBudget that now holds a pod each take a node out
//!   (upstream's `ChurnValidationError`);
//! - no pod may be nominated to a candidate, and the pools' budgets
//!   ([`Allowances`](super::allowances)) must still admit them, taken in the
//!   order the method takes them (upstream's `BudgetValidationError`);
//! - for consolidation, the candidates' pods are simulated away again: every
//!   pod must land, and the simulation must still ask for what the command
//!   launches, no claim for a delete, exactly one for a replacement whose
//!   instance types are all among the simulated claim's (which, unfiltered
//!   by price, holds more), else upstream's `SchedulingValidationError`.
//!
//! Emptiness keeps the candidates that pass and drops the command only when
//! none does; consolidation drops the whole command when any candidate
//! fails. Upstream checks the candidates once more after simulating, against
//! a cluster that may have changed meanwhile (its issue 1167); here the whole
//! check reads one snapshot, so that second look would see the same.

use std::collections::BTreeSet;
use std::fmt;

use k8s_openapi::jiff::Timestamp;

use super::candidates::Candidate;
use super::methods::Pass;
use super::methods::by_savings_ratio;
use super::methods::emptiness::Emptiness;
use super::methods::single_node::consolidatable;
use super::options::DisruptionOptions;
use super::plan::{Command, CommandReason};
use super::planner::fresh_pass;
use crate::api::DisruptionReason;
use crate::pods::{bound_node, nominated_node};
use crate::provisioning::{PlannedClaim, round_price};
use crate::snapshot::Snapshot;

/// Why a command failed its check, as upstream labels the failure
/// (`getValidationFailureReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ValidationFailure {
    /// A candidate is nominated for a pod, or its pool's budget no longer
    /// allows it.
    Budget,
    /// The candidates' pods no longer move as the command planned.
    Scheduling,
    /// A candidate is no longer a candidate for the command's method.
    Churn,
}

impl ValidationFailure {
    /// Upstream's label: `budget`, `scheduling` or `churn`.
    pub fn label(self) -> &'static str {
        match self {
            ValidationFailure::Budget => "budget",
            ValidationFailure::Scheduling => "scheduling",
            ValidationFailure::Churn => "churn",
        }
    }
}

impl fmt::Display for ValidationFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A command that failed its check: which kind of failure, and what failed,
/// for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejected {
    pub(crate) failure: ValidationFailure,
    pub(crate) why: String,
}

impl Rejected {
    fn new(failure: ValidationFailure, why: impl Into<String>) -> Rejected {
        Rejected {
            failure,
            why: why.into(),
        }
    }
}

/// Whether a command of `reason` waits and is checked before it runs:
/// emptiness and consolidation commands.
pub(crate) fn is_validated(reason: CommandReason) -> bool {
    matches!(reason, CommandReason::Empty | CommandReason::Underutilized)
}

/// `command`, computed earlier, checked against `snapshot` at `now` (see the
/// [module documentation](self)): the command to run (for emptiness, with
/// the candidates that passed), or why it is dropped. A command of a method
/// that is not checked passes as it is.
pub(crate) fn validate(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
    command: &Command,
) -> Result<Command, Rejected> {
    match command.reason {
        CommandReason::Empty => fresh_pass(snapshot, now, options, |pass| emptiness(pass, command)),
        CommandReason::Underutilized => {
            fresh_pass(snapshot, now, options, |pass| consolidation(pass, command))
        }
        _ => Ok(command.clone()),
    }
}

/// The command's candidates that `qualifies` still keeps, in the order the
/// method takes them.
fn still_candidates<'c, 's>(
    pass: &Pass<'c, 's>,
    command: &Command,
    qualifies: impl Fn(&Candidate<'s>) -> bool,
) -> Vec<&'c Candidate<'s>> {
    by_savings_ratio(pass, |c| {
        command.candidates.iter().any(|name| name == c.name) && qualifies(c)
    })
}

/// The names of the nodes (and claims) some pod not bound yet is nominated
/// to: upstream's `IsNodeNominated`.
fn nominated(snapshot: &Snapshot) -> BTreeSet<&str> {
    snapshot
        .pods
        .iter()
        .filter(|p| bound_node(p.as_ref()).is_none() && p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| nominated_node(p.as_ref()))
        .collect()
}

/// Whether a pod waits for the candidate: nominated to its node or claim.
fn is_nominated(nominated: &BTreeSet<&str>, candidate: &Candidate<'_>) -> bool {
    nominated.contains(candidate.name)
        || candidate
            .claim
            .metadata
            .name
            .as_deref()
            .is_some_and(|claim| nominated.contains(claim))
}

/// Emptiness: the candidates still empty, not nominated, within budgets; the
/// command with those, or dropped when none is left.
fn emptiness(pass: &Pass<'_, '_>, command: &Command) -> Result<Command, Rejected> {
    let still = still_candidates(pass, command, |c| Emptiness::qualifies(c, pass));
    let count = command.candidates.len();
    if still.is_empty() {
        return Err(Rejected::new(
            ValidationFailure::Churn,
            format!("{count} candidates are no longer valid"),
        ));
    }
    let nominated = nominated(pass.snapshot);
    let mut allowances = pass.allowances.clone();
    let mut kept: Vec<&Candidate<'_>> = Vec::new();
    for candidate in still {
        let pool = candidate.pool.name().unwrap_or_default();
        if is_nominated(&nominated, candidate) || !allowances.admits(pool, DisruptionReason::Empty)
        {
            continue;
        }
        allowances.take(pool);
        kept.push(candidate);
    }
    if kept.is_empty() {
        return Err(Rejected::new(
            ValidationFailure::Budget,
            format!(
                "{count} candidates were nominated for a pod or would violate disruption budgets"
            ),
        ));
    }
    let mut candidates: Vec<String> = kept.iter().map(|c| c.name.to_owned()).collect();
    candidates.sort();
    Ok(Command {
        reason: CommandReason::Empty,
        candidates,
        replacements: Vec::new(),
        savings_per_hour: round_price(kept.iter().map(|c| c.price).sum()),
        drift: Vec::new(),
    })
}

/// Consolidation: every candidate still consolidatable, not nominated,
/// within budgets, and the simulation still asking for what the command
/// launches; the command as it was, or dropped.
fn consolidation(pass: &Pass<'_, '_>, command: &Command) -> Result<Command, Rejected> {
    let still = still_candidates(pass, command, |c| consolidatable(c, pass));
    let lost = command.candidates.len() - still.len();
    if lost > 0 {
        return Err(Rejected::new(
            ValidationFailure::Churn,
            format!("{lost} candidates are no longer valid"),
        ));
    }
    let nominated = nominated(pass.snapshot);
    let mut allowances = pass.allowances.clone();
    for candidate in &still {
        if is_nominated(&nominated, candidate) {
            return Err(Rejected::new(
                ValidationFailure::Budget,
                "a candidate was nominated during validation",
            ));
        }
        let pool = candidate.pool.name().unwrap_or_default();
        if !allowances.admits(pool, DisruptionReason::Underutilized) {
            return Err(Rejected::new(
                ValidationFailure::Budget,
                "a candidate can no longer be disrupted without violating budgets",
            ));
        }
        allowances.take(pool);
    }
    let names: Vec<&str> = still.iter().map(|c| c.name).collect();
    let simulation = pass.simulate_without(&names);
    if let Some(stranded) = simulation.stranded.first() {
        return Err(Rejected::new(
            ValidationFailure::Scheduling,
            format!(
                "pod {} would not schedule: {}",
                stranded.pod, stranded.reason
            ),
        ));
    }
    if !replacements_hold(&command.replacements, &simulation.plan.node_claims) {
        return Err(Rejected::new(
            ValidationFailure::Scheduling,
            format!(
                "scheduling simulation produced new results: {} new claims where the command launches {}",
                simulation.new_claims(),
                command.replacements.len()
            ),
        ));
    }
    Ok(command.clone())
}

/// Whether the claims a simulation asks for (`simulated`) still call for
/// the command's `replacements`: as many, each replacement's instance types
/// all among those of a simulated claim of its own. For upstream's commands
/// (none, or one replacement) that is its rule; an M-to-N command's
/// replacements are each matched to a distinct simulated claim.
fn replacements_hold(replacements: &[PlannedClaim], simulated: &[PlannedClaim]) -> bool {
    if replacements.len() != simulated.len() {
        return false;
    }
    let mut unmatched: Vec<&PlannedClaim> = simulated.iter().collect();
    replacements.iter().all(|replacement| {
        let found = unmatched.iter().position(|claim| {
            replacement
                .instance_types
                .iter()
                .all(|name| claim.instance_types.contains(name))
        });
        found.map(|i| unmatched.swap_remove(i)).is_some()
    })
}

#[cfg(test)]
mod tests;
