//! The consolidation decision, as upstream's `computeConsolidation`
//! (`pkg/controllers/disruption/consolidation.go`): simulate the candidates'
//! pods on the rest of the cluster, then
//! - every pod lands on remaining capacity: delete the candidates;
//! - they need exactly one new claim: replace the candidates with it, keeping
//!   only the instance types whose worst launch price is strictly below the
//!   candidates' price (so a replacement can never cost more), pinned to spot
//!   when it allows both spot and on-demand;
//! - more than one claim: no command, unless M-to-N consolidation is on and
//!   the claims are fewer than the candidates and cheaper together (see
//!   [`m_to_n`](super::m_to_n));
//! - anything else (a pod that cannot land, no cheaper type): no command.
//!
//! When there is no command, [`compute`] says why, as upstream's
//! `Unconsolidatable` events do ([`Unconsolidatable`]); the decisions are
//! the same whether or not anyone reads the reason.
//!
//! When every candidate is spot and the replacement may be spot, the
//! spot-to-spot rules apply instead (upstream's `computeSpotToSpotConsolidation`):
//! only with [`DisruptionOptions::with_spot_to_spot`](crate::disruption::DisruptionOptions)
//! (upstream's feature gate, off by default there too); the replacement is
//! spot only, cheaper by worst launch price, and for a single candidate needs
//! at least 15 cheaper types and launches from the cheapest 15 (or as many as
//! `minValues` needs), so it cannot land on a type that would be consolidated
//! again at once.
//!
//! Pools with the `Balanced` policy must also approve the move (see
//! [`balanced`](crate::disruption::balanced)); the methods ask `approved`.

use super::Pass;
use super::m_to_n::fewer_cheaper;
use super::prices::{Pin, SPOT, allows, cheaper_types, requirements_of, spot_pin, usable, written};
use crate::cloudprovider::{InstanceType, LaunchRank};
use crate::disruption::candidates::Candidate;
use crate::disruption::plan::{Command, CommandReason, launch_price};
use crate::disruption::unconsolidatable::Unconsolidatable;
use crate::provisioning::{PlannedClaim, round_price, unmet_min_values_of};
use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, Requirement};

/// The command consolidating `candidates`, or why there is none.
pub(crate) fn compute(
    pass: &Pass<'_, '_>,
    candidates: &[&Candidate<'_>],
) -> Result<Command, Unconsolidatable> {
    let names: Vec<&str> = candidates.iter().map(|c| c.name).collect();
    let simulation = pass.simulate_without(&names);
    if !simulation.all_moved() {
        return Err(Unconsolidatable::PodsWouldNotSchedule {
            stranded: simulation.stranded,
        });
    }
    let candidate_price: f64 = candidates.iter().map(|c| c.price).sum();
    let names = candidates.iter().map(|c| c.name.to_owned()).collect();
    if simulation.new_claims() > 1 {
        let replacements = fewer_cheaper(pass, candidates, &simulation.plan.node_claims)?;
        let launched = launch_price(&replacements);
        return Ok(command(names, replacements, candidate_price - launched));
    }
    let Some(claim) = simulation.plan.node_claims.first() else {
        return Ok(command(names, Vec::new(), candidate_price));
    };
    let types = pass
        .snapshot
        .instance_types
        .get(&claim.node_pool)
        .ok_or(Unconsolidatable::NoCheaperReplacement)?;
    let all_spot = candidates
        .iter()
        .all(|c| c.capacity_type.as_deref() == Some(SPOT));
    let replacement = if all_spot && allows(&requirements_of(claim)?, SPOT) {
        if !pass.options.spot_to_spot() {
            return Err(Unconsolidatable::SpotToSpotDisabled);
        }
        let scope = if candidates.len() == 1 {
            SpotToSpot::SingleNode
        } else {
            SpotToSpot::MultiNode
        };
        spot_to_spot(
            claim,
            types,
            candidate_price,
            scope,
            pass.snapshot.launch_rank,
        )?
    } else {
        cheaper_replacement(claim, types, candidate_price, pass.snapshot.launch_rank)?
    };
    let price = replacement
        .launch
        .as_ref()
        .ok_or(Unconsolidatable::NoCheaperReplacement)?
        .price;
    Ok(command(names, vec![replacement], candidate_price - price))
}

/// The fewest cheaper types a single spot node is replaced from, as upstream
/// (`MinInstanceTypesForSpotToSpotConsolidation`).
pub(crate) const MIN_SPOT_TO_SPOT_TYPES: usize = 15;

/// How many spot nodes a spot-to-spot replacement stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpotToSpot {
    /// One: upstream asks for a choice of at least
    /// [`MIN_SPOT_TO_SPOT_TYPES`] types, and keeps only the cheapest of them.
    SingleNode,
    /// Several: any cheaper type will do.
    MultiNode,
}

/// The spot-only claim of the types cheaper than `limit` by worst spot launch
/// price; for a single candidate, refused below 15 such types, else the
/// cheapest 15 (or as many as `minValues` needs).
fn spot_to_spot(
    claim: &PlannedClaim,
    types: &[InstanceType],
    limit: f64,
    scope: SpotToSpot,
    rank: LaunchRank,
) -> Result<PlannedClaim, Unconsolidatable> {
    let mut requirements = requirements_of(claim)?;
    requirements.add(Requirement::in_values(CAPACITY_TYPE_LABEL_KEY, [SPOT]));
    let mut kept = cheaper_types(claim, types, &requirements, limit);
    usable(&kept, &requirements)?;
    if scope == SpotToSpot::SingleNode {
        if kept.len() < MIN_SPOT_TO_SPOT_TYPES {
            return Err(Unconsolidatable::SpotToSpotTooFewTypes {
                required: MIN_SPOT_TO_SPOT_TYPES,
                cheaper: kept.len(),
            });
        }
        let needed = (1..=kept.len())
            .find(|&n| unmet_min_values_of(kept[..n].iter().copied(), &requirements).is_none())
            .unwrap_or(kept.len());
        kept.truncate(needed.max(MIN_SPOT_TO_SPOT_TYPES));
    }
    written(claim, &requirements, &kept, Pin::Spot, rank)
        .ok_or(Unconsolidatable::NoCheaperReplacement)
}

/// What a consolidation command saves per hour, unrounded: the candidates'
/// price less the replacement's launch price (upstream `EstimatedSavings`).
pub(super) fn savings(candidates: &[&Candidate<'_>], command: &Command) -> f64 {
    let source: f64 = candidates.iter().map(|c| c.price).sum();
    source - launch_price(&command.replacements)
}

/// Whether the Balanced policy lets the command go (pools of other policies
/// always do).
pub(super) fn approved(
    pass: &Pass<'_, '_>,
    candidates: &[&Candidate<'_>],
    command: &Command,
) -> bool {
    pass.balanced()
        .approves(candidates, savings(candidates, command))
}

fn command(mut candidates: Vec<String>, replacements: Vec<PlannedClaim>, savings: f64) -> Command {
    candidates.sort();
    Command {
        reason: CommandReason::Underutilized,
        candidates,
        replacements,
        savings_per_hour: round_price(savings),
        drift: Vec::new(),
    }
}

/// The claim kept to the types whose worst launch price is below `limit`,
/// pinned to spot when it allows both spot and on-demand and a kept type
/// offers spot; refused when no type is cheaper (or too few for
/// `minValues`).
pub(super) fn cheaper_replacement(
    claim: &PlannedClaim,
    types: &[InstanceType],
    limit: f64,
    rank: LaunchRank,
) -> Result<PlannedClaim, Unconsolidatable> {
    let requirements = requirements_of(claim)?;
    let kept = cheaper_types(claim, types, &requirements, limit);
    usable(&kept, &requirements)?;
    let pin = spot_pin(&requirements, &kept);
    written(claim, &requirements, &kept, pin, rank).ok_or(Unconsolidatable::NoCheaperReplacement)
}

#[cfg(test)]
mod tests;
