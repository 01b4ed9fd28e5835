//! M-to-N consolidation, beyond upstream (kubernetes-sigs/karpenter issue
//! #1442 and its duplicates): with
//! [`DisruptionOptions::m_to_n`](crate::disruption::DisruptionOptions),
//! multi-node consolidation may replace its candidates with several new
//! nodes, as long as they are fewer than the candidates and cheaper together.
//!
//! Upstream keeps a replacement strictly cheaper than its candidates by its
//! *worst* launch price, so whichever of its types the cloud provider picks,
//! the move saves money. With several claims the same guarantee needs the
//! worst prices to add up below the candidates' price: each claim's cheapest
//! possible worst price is found first, and what is left below the
//! candidates' price is shared among the claims in proportion to those, so
//! every claim keeps the types whose worst price stays under its share. The
//! claims launch their cheapest offering (pinned to spot when they allow both
//! spot and on-demand, as a single replacement is), and spot candidates follow
//! the spot-to-spot rules' first part (the option must be on; the claims are
//! spot only).

use super::Pass;
use super::prices::{
    Pin, SPOT, allows, cheaper_types, requirements_of, spot_pin, usable, worst_launch_price,
    written,
};
use crate::disruption::candidates::Candidate;
use crate::disruption::unconsolidatable::Unconsolidatable;
use crate::provisioning::PlannedClaim;
use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, Requirement};

/// The claims replacing `candidates`, each kept to types within its share of
/// their price (see the module documentation); refused when M-to-N
/// consolidation is off or the claims are not fewer than the candidates
/// ([`TooManyReplacements`](Unconsolidatable::TooManyReplacements)), or
/// when they cannot be kept cheaper together.
pub(super) fn fewer_cheaper(
    pass: &Pass<'_, '_>,
    candidates: &[&Candidate<'_>],
    claims: &[PlannedClaim],
) -> Result<Vec<PlannedClaim>, Unconsolidatable> {
    if !pass.options.m_to_n || claims.len() >= candidates.len() {
        return Err(Unconsolidatable::TooManyReplacements {
            claims: claims.len(),
        });
    }
    let limit: f64 = candidates.iter().map(|c| c.price).sum();
    let all_spot = candidates
        .iter()
        .all(|c| c.capacity_type.as_deref() == Some(SPOT));
    // Each claim's requirements (spot only on the spot-to-spot path), its
    // types and the lowest worst launch price among them.
    let mut prepared = Vec::with_capacity(claims.len());
    for claim in claims {
        let types = pass
            .snapshot
            .instance_types
            .get(&claim.node_pool)
            .ok_or(Unconsolidatable::NoCheaperReplacement)?;
        let mut requirements = requirements_of(claim)?;
        let spot_to_spot = all_spot && allows(&requirements, SPOT);
        if spot_to_spot {
            if !pass.options.spot_to_spot() {
                return Err(Unconsolidatable::SpotToSpotDisabled);
            }
            requirements.add(Requirement::in_values(CAPACITY_TYPE_LABEL_KEY, [SPOT]));
        }
        let lowest = cheaper_types(claim, types, &requirements, f64::INFINITY)
            .iter()
            .filter_map(|t| worst_launch_price(t, &requirements))
            .min_by(f64::total_cmp)
            .ok_or(Unconsolidatable::NoCheaperReplacement)?;
        prepared.push((claim, types, requirements, spot_to_spot, lowest));
    }
    let floor: f64 = prepared.iter().map(|p| p.4).sum();
    let slack = limit - floor;
    if slack <= 0.0 || floor <= 0.0 {
        return Err(Unconsolidatable::NoCheaperReplacement);
    }
    prepared
        .into_iter()
        .map(|(claim, types, requirements, spot_to_spot, lowest)| {
            let share = lowest + slack * (lowest / floor);
            let kept = cheaper_types(claim, types, &requirements, share);
            usable(&kept, &requirements)?;
            let pin = if spot_to_spot {
                Pin::Spot
            } else {
                spot_pin(&requirements, &kept)
            };
            written(claim, &requirements, &kept, pin, pass.snapshot.launch_rank)
                .ok_or(Unconsolidatable::NoCheaperReplacement)
        })
        .collect()
}
