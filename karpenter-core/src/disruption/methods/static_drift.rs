//! Static drift, as upstream's `staticdrift.go`: a drifted node of a static
//! NodePool is replaced one for one by a claim of the pool's template (no
//! simulation: a static pool's nodes are its replicas, whatever their pods),
//! within the pool's `Drifted` budget and its `nodes` limit, and only while
//! the pool is not over its replicas (a scale-down first finishes).
//!
//! Upstream starts a batch of such commands at once, up to the budget and
//! the limit; here each pass takes one, and the next pass sees the cluster
//! that command leaves (its node being deleted, its replacement in flight),
//! which comes to the same batch: the replica count stands, and each
//! command takes one more node of the limit's room. Candidates go by name
//! (upstream takes them in its cache's order).

use super::{Method, Pass};
use crate::api::DisruptionReason;
use crate::disruption::candidates::Candidate;
use crate::disruption::plan::{Command, CommandReason, launch_price};
use crate::provisioning::{StaticCounts, round_price, static_claim};

/// The static drift method.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StaticDrift;

impl Method for StaticDrift {
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command> {
        let mut drifted: Vec<&Candidate<'_>> = pass
            .eventual
            .iter()
            .copied()
            .filter(|c| c.pool.spec.is_static() && c.drift.is_some())
            .collect();
        drifted.sort_by(|a, b| (a.pool.name(), a.name).cmp(&(b.pool.name(), b.name)));
        drifted.into_iter().find_map(|candidate| {
            let pool = candidate.pool;
            let name = pool.name().unwrap_or_default();
            if !pass.allowances.admits(name, DisruptionReason::Drifted) {
                return None;
            }
            let counts = StaticCounts::of(pass.snapshot, name);
            let replicas = pool.spec.replicas.unwrap_or(0);
            if counts.active + counts.taken > replicas || counts.room(pool) <= 0 {
                return None;
            }
            let replacement = static_claim(pass.snapshot, pool)?;
            let savings = candidate.price - launch_price(std::slice::from_ref(&replacement));
            Some(Command {
                reason: CommandReason::Drifted,
                candidates: vec![candidate.name.to_owned()],
                replacements: vec![replacement],
                savings_per_hour: round_price(savings),
                drift: candidate.drift_causes(),
            })
        })
    }
}
