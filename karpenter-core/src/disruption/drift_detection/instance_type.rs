//! Drift of a claim whose instance type, or every offering of it that fits
//! the claim, vanished from the provider (upstream's `instanceTypeNotFound`).
//!
//! The provider's list for a pool holds every type it may launch for it,
//! unavailable offerings included, so a type or offering missing from it is
//! one the provider no longer knows: the node cannot be replaced by the same
//! kind, and upstream drifts it. The claim is read as requirements from its
//! labels (each `key In [value]`) and an offering fits when its zone,
//! capacity type and further requirements meet them.
//!
//! A claim whose capacity type is `reserved` also fits `on-demand`
//! offerings, and its reservation labels are not compared: a provider may
//! demote a reserved node to on-demand after launch before its labels say
//! so, and matching the reservation is left to the provider's own check.
//!
//! Upstream checks a claim only once it is more than an hour old, and then
//! at most once per half hour after a check that found the type: a cache of
//! its controller to spare the provider's API. A plan reads a snapshot whose
//! instance types are at hand, so it checks every time; the age threshold is
//! kept, as it decides when a node first counts as drifted.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::api::NodeClaim;
use crate::cloudprovider::InstanceType;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED,
    LABEL_INSTANCE_TYPE_STABLE, Requirement, Requirements,
};

use super::{DriftInputs, DriftReason};

/// How old a claim must be (strictly) before its instance type is checked.
pub(in crate::disruption) const INSTANCE_TYPE_CHECK_AGE: Duration = Duration::from_secs(60 * 60);

/// Why `claim` is drifted by the provider's types for its pool (in
/// `inputs`), if it is: its `node.kubernetes.io/instance-type` label is
/// missing, names no type of the list, or names one none of whose offerings
/// fits the claim.
pub(super) fn not_found(inputs: &DriftInputs<'_>, claim: &NodeClaim) -> Option<DriftReason> {
    let labels = claim.metadata.labels.as_ref();
    let label = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
    let drifted = |detail: String| Some(DriftReason::InstanceTypeNotFound { detail });
    let Some(name) = label(LABEL_INSTANCE_TYPE_STABLE) else {
        return drifted(format!(
            "NodeClaim has no {LABEL_INSTANCE_TYPE_STABLE} label"
        ));
    };
    let Some(instance_type) = find(inputs, name) else {
        return drifted(format!(
            "instance type {name} is no longer offered by the cloud provider"
        ));
    };
    let wanted = claim_requirements(claim, instance_type);
    if instance_type
        .offerings
        .iter()
        .any(|o| o.is_compatible(&wanted))
    {
        return None;
    }
    let zone = label(crate::scheduling::LABEL_TOPOLOGY_ZONE).unwrap_or("any zone");
    let capacity = label(CAPACITY_TYPE_LABEL_KEY).unwrap_or("any capacity type");
    drifted(format!(
        "instance type {name} has no offering in {zone} for {capacity} any more"
    ))
}

/// The type named `name` among the inputs' instance types.
fn find<'a>(inputs: &DriftInputs<'a>, name: &str) -> Option<&'a InstanceType> {
    let types = inputs.instance_types;
    match inputs.by_name {
        Some(index) => index.get(name).and_then(|&i| types.get(i)),
        None => types.iter().find(|t| t.name == name),
    }
}

/// The claim's labels as requirements, widened for a reserved claim (see
/// the module documentation): `reserved` or `on-demand`, and none of the
/// reservation labels the type's offerings carry.
fn claim_requirements(claim: &NodeClaim, instance_type: &InstanceType) -> Requirements {
    let mut requirements = Requirements::from_labels(claim.metadata.labels.iter().flatten());
    let reserved = requirements
        .get_defined(CAPACITY_TYPE_LABEL_KEY)
        .is_some_and(|r| r.has(CAPACITY_TYPE_RESERVED));
    if reserved {
        requirements.remove(CAPACITY_TYPE_LABEL_KEY);
        requirements.add(Requirement::in_values(
            CAPACITY_TYPE_LABEL_KEY,
            [CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_ON_DEMAND],
        ));
        let reservation_labels: BTreeSet<&str> = instance_type
            .offerings
            .iter()
            .filter_map(|o| o.reservation.as_ref())
            .map(|r| r.label.as_str())
            .collect();
        for label in reservation_labels {
            requirements.remove(label);
        }
    }
    requirements
}
