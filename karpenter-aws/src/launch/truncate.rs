//! The cut of a launch's types to the [`MAX_LAUNCH_INSTANCE_TYPES`]
//! cheapest, after the core's `InstanceTypes.Truncate`. The engine's own cut
//! (`karpenter_core::provisioning::MAX_INSTANCE_TYPES`) serves the planner
//! and is not public as a function, so the launch path has its own.

use std::collections::BTreeSet;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::Requirements;

use super::errors::LaunchError;

/// How many instance types one fleet request lists at most (upstream's
/// `maxInstanceTypes`).
pub const MAX_LAUNCH_INSTANCE_TYPES: usize = 60;

/// The price `it` launches at for a claim with `requirements`: its
/// cheapest available compatible offering, or infinity without one so that
/// it sorts last.
fn launch_price(it: &InstanceType, requirements: &Requirements) -> f64 {
    it.available_offerings(requirements)
        .map(|o| o.price)
        .min_by(f64::total_cmp)
        .unwrap_or(f64::INFINITY)
}

/// `types` ordered by [`launch_price`] (then name, so that equal prices
/// come out the same every time) and cut to [`MAX_LAUNCH_INSTANCE_TYPES`].
///
/// # Errors
///
/// [`LaunchError::InsufficientCapacity`] when the claim has `minValues`
/// the cut no longer meets.
pub(crate) fn truncate(
    requirements: &Requirements,
    mut types: Vec<InstanceType>,
) -> Result<Vec<InstanceType>, LaunchError> {
    let mut keyed: Vec<(f64, InstanceType)> = types
        .drain(..)
        .map(|it| (launch_price(&it, requirements), it))
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let kept: Vec<InstanceType> = keyed
        .into_iter()
        .take(MAX_LAUNCH_INSTANCE_TYPES)
        .map(|(_, it)| it)
        .collect();
    if let Some(problem) = unmet_min_values(requirements, &kept) {
        return Err(LaunchError::InsufficientCapacity(format!(
            "truncating instance types based on the passed-in requirements, {problem}"
        )));
    }
    Ok(kept)
}

/// The first requirement whose `minValues` the values of `types` do not
/// reach, described; `None` when all are met.
pub(crate) fn unmet_min_values(
    requirements: &Requirements,
    types: &[InstanceType],
) -> Option<String> {
    requirements.iter().find_map(|requirement| {
        let wanted = requirement.min_values()?;
        let key = requirement.key();
        let values: BTreeSet<&str> = types
            .iter()
            .filter_map(|it| it.requirements.get_defined(key))
            .filter(|r| !r.is_complement())
            .flat_map(|r| r.values())
            .collect();
        let have = values.len();
        (u32::try_from(have).unwrap_or(u32::MAX) < wanted).then(|| {
            format!("minValues requirement is not met for label {key:?}: {have} of {wanted}")
        })
    })
}
