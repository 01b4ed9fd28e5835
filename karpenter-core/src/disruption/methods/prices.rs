//! What the consolidations know of a replacement's types and prices, shared by
//! single- and multi-node consolidation and M-to-N replacement: upstream's
//! worst launch price, the types cheaper than a limit by it, whether a claim
//! is pinned to spot, and the claim written for the types kept.

use crate::cloudprovider::{InstanceType, LaunchRank, Offering};
use crate::disruption::unconsolidatable::Unconsolidatable;
use crate::provisioning::{
    Launch, NameList, PlannedClaim, RequirementOutput, read_requirements, unmet_min_values_of,
};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND as ON_DEMAND,
    CAPACITY_TYPE_RESERVED as RESERVED, CAPACITY_TYPE_SPOT, LABEL_INSTANCE_TYPE_STABLE,
    Requirements,
};

/// The spot capacity type, which a replacement allowing both is pinned to.
pub(super) const SPOT: &str = CAPACITY_TYPE_SPOT;

/// Whether the requirements allow capacity type `capacity`.
pub(super) fn allows(requirements: &Requirements, capacity: &str) -> bool {
    requirements
        .get_defined(CAPACITY_TYPE_LABEL_KEY)
        .is_none_or(|r| r.has(capacity))
}

/// The claim's types (in its order, cheapest first) whose worst launch price
/// under `requirements` is below `limit`.
pub(super) fn cheaper_types<'t>(
    claim: &PlannedClaim,
    types: &'t [InstanceType],
    requirements: &Requirements,
    limit: f64,
) -> Vec<&'t InstanceType> {
    let by_name = |name: &str| types.iter().find(|t| t.name == name);
    claim
        .instance_types
        .iter()
        .filter_map(by_name)
        .filter(|t| worst_launch_price(t, requirements).is_some_and(|p| p < limit))
        .collect()
}

/// Which offerings a replacement may launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pin {
    /// Whichever offering its requirements allow.
    Unpinned,
    /// Spot only; its capacity-type requirement is written `In [spot]`.
    Spot,
}

/// Whether a replacement allowing both spot and on-demand is pinned to spot:
/// upstream pins it whenever it allows both; here only when a kept type
/// offers spot, since a claim pinned to spot with no spot offering can never
/// launch (a departure, see docs/design.md).
pub(super) fn spot_pin(requirements: &Requirements, kept: &[&InstanceType]) -> Pin {
    let offers_spot = kept
        .iter()
        .any(|t| offerings(t, requirements).any(|o| o.capacity_type == SPOT));
    if allows(requirements, SPOT) && allows(requirements, ON_DEMAND) && offers_spot {
        Pin::Spot
    } else {
        Pin::Unpinned
    }
}

/// The claim kept to the `kept` types, launching their cheapest allowed
/// offering (spot only when pinned to it, see [`Pin`]).
pub(super) fn written(
    claim: &PlannedClaim,
    requirements: &Requirements,
    kept: &[&InstanceType],
    pin: Pin,
    rank: LaunchRank,
) -> Option<PlannedClaim> {
    let launchable = |o: &&Offering| pin == Pin::Unpinned || o.capacity_type == SPOT;
    let launch = kept
        .iter()
        .flat_map(|t| {
            offerings(t, requirements)
                .filter(launchable)
                .map(move |o| (*t, o))
        })
        // What the provider's create would launch.
        .min_by(|a, b| rank.compare(*a, *b))
        .map(|(t, o)| Launch {
            instance_type: t.name.clone(),
            zone: o.zone.clone(),
            capacity_type: o.capacity_type.clone(),
            price: o.price,
            reservation_id: o.reservation_id().map(str::to_owned),
        })?;
    let kept_names: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
    let mut sorted_names = kept_names.clone();
    sorted_names.sort_unstable();
    let written = claim
        .requirements
        .iter()
        .map(|r| match r.key.as_str() {
            LABEL_INSTANCE_TYPE_STABLE => RequirementOutput {
                values: sorted_names.iter().collect(),
                ..r.clone()
            },
            CAPACITY_TYPE_LABEL_KEY if pin == Pin::Spot => RequirementOutput {
                operator: "In".to_owned(),
                values: [SPOT].into_iter().collect(),
                ..r.clone()
            },
            _ => r.clone(),
        })
        .collect();
    Some(PlannedClaim {
        node_pool: claim.node_pool.clone(),
        instance_types: kept_names.into_iter().collect::<NameList>(),
        requirements: written,
        launch: Some(launch),
        pods: claim.pods.clone(),
        min_values_relaxed: claim.min_values_relaxed,
        capacity_buffers: claim.capacity_buffers.clone(),
    })
}

/// A type's available offerings the requirements allow.
fn offerings<'t>(
    instance_type: &'t InstanceType,
    requirements: &'t Requirements,
) -> impl Iterator<Item = &'t Offering> + 't {
    instance_type
        .offerings
        .iter()
        .filter(move |o| o.available && o.is_compatible(requirements))
}

/// Upstream's `WorstLaunchPrice`: the dearest allowed available offering of the
/// first capacity type present in launch precedence (reserved, spot,
/// on-demand).
pub(super) fn worst_launch_price(
    instance_type: &InstanceType,
    requirements: &Requirements,
) -> Option<f64> {
    [RESERVED, SPOT, ON_DEMAND]
        .into_iter()
        .find_map(|capacity| {
            offerings(instance_type, requirements)
                .filter(|o| o.capacity_type == capacity)
                .map(|o| o.price)
                .max_by(f64::total_cmp)
        })
}

/// The claim's requirements, read back; a claim whose requirements do not
/// read (which the scheduler never writes) has no replacement.
pub(super) fn requirements_of(claim: &PlannedClaim) -> Result<Requirements, Unconsolidatable> {
    read_requirements(&claim.requirements).map_err(|_| Unconsolidatable::NoCheaperReplacement)
}

/// The types kept for a replacement, or why none will do: none kept (none
/// cheaper), or too few for a requirement's `minValues`.
pub(super) fn usable(
    kept: &[&InstanceType],
    requirements: &Requirements,
) -> Result<(), Unconsolidatable> {
    if kept.is_empty() {
        return Err(Unconsolidatable::NoCheaperReplacement);
    }
    match unmet_min_values_of(kept.iter().copied(), requirements) {
        Some(key) => Err(Unconsolidatable::MinValuesUnmet {
            key: key.to_owned(),
        }),
        None => Ok(()),
    }
}
