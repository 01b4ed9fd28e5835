//! Emptiness, as upstream's `emptiness.go`: delete, in one command, the
//! consolidatable nodes that run no pod needing a home, as far as their pools'
//! budgets allow.
//!
//! A candidate qualifies when its pool is not static, its `consolidateAfter`
//! is not `Never` and has passed, it is empty (its reschedulable pods cost
//! nothing to move: see [`Candidate::is_empty`]), and provisioning would put
//! no CapacityBuffer virtual pod on it (upstream's `HasBufferPods`). Every consolidation policy
//! allows it. Candidates are taken by price per unit of disruption, highest
//! first (ties by name), each while its pool's `Empty` budget has room.

use super::{Method, Pass, by_savings_ratio};
use crate::api::DisruptionReason;
use crate::disruption::candidates::Candidate;
use crate::disruption::plan::{Command, CommandReason};
use crate::provisioning::round_price;

/// The emptiness method.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Emptiness;

impl Emptiness {
    /// Whether emptiness may take the candidate (budgets aside).
    pub(crate) fn qualifies(candidate: &Candidate<'_>, pass: &Pass<'_, '_>) -> bool {
        !candidate.pool.spec.is_static()
            && candidate.is_empty()
            && candidate.is_consolidatable(pass.now)
            && !pass.holds_buffer_pods(candidate.name)
    }
}

impl Method for Emptiness {
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command> {
        let empty = by_savings_ratio(pass, |c| Self::qualifies(c, pass));
        let mut allowances = pass.allowances.clone();
        let mut taken = Vec::new();
        let mut savings = 0.0;
        for candidate in empty {
            let pool = candidate.pool.name().unwrap_or_default();
            if !allowances.admits(pool, DisruptionReason::Empty) {
                continue;
            }
            allowances.take(pool);
            taken.push(candidate.name.to_owned());
            savings += candidate.price;
        }
        if taken.is_empty() {
            return None;
        }
        taken.sort();
        Some(Command {
            reason: CommandReason::Empty,
            candidates: taken,
            replacements: Vec::new(),
            savings_per_hour: round_price(savings),
            drift: Vec::new(),
        })
    }
}
