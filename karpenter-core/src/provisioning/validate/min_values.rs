//! A new claim's `minValues`: met by the types it lists, and lowered from
//! its NodePool's only on a claim that says so (`minValuesRelaxed`, upstream's
//! `--min-values-policy BestEffort`).

use crate::api::NodePool;
use crate::cloudprovider::InstanceType;
use crate::provisioning::instance_types::filter::unmet_min_values_of;
use crate::provisioning::plan::PlannedClaim;
use crate::scheduling::Requirements;

use super::pools::pool_requirements;
use super::violation::Rule;

/// Flags, with `flag`, each way the claim's `minValues` break the rule: a
/// `minValues` its `listed` types do not reach (`requirements` being the
/// claim's, read back), one the pool sets and the claim drops, lowers
/// without saying so or raises, and a claim that says it lowered one but
/// lowered none.
pub(super) fn check(
    pool: &NodePool,
    claim: &PlannedClaim,
    listed: &[&InstanceType],
    requirements: &Requirements,
    flag: &mut impl FnMut(Rule, String),
) {
    if let Some(key) = unmet_min_values_of(listed.iter().copied(), requirements) {
        let min = requirements
            .get_defined(key)
            .and_then(|r| r.min_values())
            .unwrap_or_default();
        flag(
            Rule::MinValues,
            format!("the listed types have fewer than {min} values of {key}"),
        );
    }
    let mut lowered = false;
    for written in pool_requirements(pool).iter() {
        let Some(asked) = written.min_values() else {
            continue;
        };
        let kept = requirements
            .get_defined(written.key())
            .and_then(|r| r.min_values());
        match kept {
            Some(kept) if kept == asked => {}
            Some(kept) if kept < asked && claim.min_values_relaxed => lowered = true,
            Some(kept) if kept < asked => flag(
                Rule::MinValues,
                format!(
                    "minValues of {} lowered from {asked} to {kept} without minValuesRelaxed",
                    written.key()
                ),
            ),
            other => flag(
                Rule::MinValues,
                format!(
                    "minValues of {} is {}, the nodepool's is {asked}",
                    written.key(),
                    other.map_or_else(|| "not written".to_string(), |m| m.to_string())
                ),
            ),
        }
    }
    if claim.min_values_relaxed && !lowered {
        flag(
            Rule::MinValues,
            "minValuesRelaxed, but no minValues of the nodepool was lowered".to_string(),
        );
    }
}
