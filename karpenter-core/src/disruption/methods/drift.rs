//! Drift, as upstream's `drift.go`: replace drifted nodes one at a time, the
//! longest drifted first (empty ones before the rest), each within its pool's
//! `Drifted` budget, once a simulation finds every pod a place; the
//! replacements are whatever new claims that takes, however many.
//!
//! Drift is of the eventual class: a node kept only by a pod blocker is still
//! taken when its NodeClaim has a `terminationGracePeriod` (see
//! [`Candidates::eventual`](crate::disruption::candidates::Candidates::eventual)).
//! A node found drifted without a `Drifted` condition (its NodePool hash or
//! requirements changed, or its instance type vanished, since the condition
//! was last written) counts as drifted since the beginning of time, as a
//! missing condition time reads upstream. Each command names why its node
//! drifted ([`Command::drift`]).

use k8s_openapi::jiff::Timestamp;

use super::{Method, Pass};
use crate::api::{Conditions as _, DisruptionReason, condition_types};
use crate::disruption::candidates::Candidate;
use crate::disruption::plan::{Command, CommandReason, launch_price};
use crate::provisioning::round_price;

/// The drift method.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Drift;

/// When the candidate's NodeClaim was found drifted.
fn drifted_since(candidate: &Candidate<'_>) -> Timestamp {
    let status = candidate.claim.status.as_ref();
    status
        .and_then(|s| s.conditions.transition_time(condition_types::DRIFTED))
        .unwrap_or(Timestamp::MIN)
}

impl Method for Drift {
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command> {
        let mut drifted: Vec<&Candidate<'_>> = pass
            .eventual
            .iter()
            .copied()
            .filter(|c| !c.pool.spec.is_static() && c.drift.is_some())
            .collect();
        drifted.sort_by(|a, b| {
            let empty_first = b.reschedulable.is_empty().cmp(&a.reschedulable.is_empty());
            empty_first
                .then_with(|| drifted_since(a).cmp(&drifted_since(b)))
                .then_with(|| a.name.cmp(b.name))
        });
        drifted.into_iter().find_map(|candidate| {
            let pool = candidate.pool.name().unwrap_or_default();
            if !pass.allowances.admits(pool, DisruptionReason::Drifted) {
                return None;
            }
            let simulation = pass.simulate_without(&[candidate.name]);
            if !simulation.all_moved() {
                return None;
            }
            let replacements = simulation.plan.node_claims;
            let savings = candidate.price - launch_price(&replacements);
            Some(Command {
                reason: CommandReason::Drifted,
                candidates: vec![candidate.name.to_owned()],
                replacements,
                savings_per_hour: round_price(savings),
                drift: candidate.drift_causes(),
            })
        })
    }
}
