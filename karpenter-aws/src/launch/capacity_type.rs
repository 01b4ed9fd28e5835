//! The capacity type a claim launches as, after upstream's
//! `getCapacityType`.

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT,
    Requirement, Requirements,
};

/// The capacity type a claim with `requirements` launches as over
/// `instance_types`: reserved when the claim allows it and some type has an
/// available reserved offering compatible with the claim, else spot on the
/// same terms, else on-demand. Reservations come first because they are
/// already paid for; spot next because it is cheaper than on-demand.
pub fn capacity_type(requirements: &Requirements, instance_types: &[InstanceType]) -> &'static str {
    let allowed = requirements.get(CAPACITY_TYPE_LABEL_KEY);
    for candidate in [CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT] {
        if !allowed.has(candidate) {
            continue;
        }
        let narrowed = with_capacity_type(requirements, candidate);
        if instance_types
            .iter()
            .any(|it| it.available_offerings(&narrowed).next().is_some())
        {
            return candidate;
        }
    }
    CAPACITY_TYPE_ON_DEMAND
}

/// `requirements` with the capacity type fixed to `capacity_type`.
pub(crate) fn with_capacity_type(requirements: &Requirements, capacity_type: &str) -> Requirements {
    let mut narrowed = requirements.clone();
    narrowed.remove(CAPACITY_TYPE_LABEL_KEY);
    narrowed.add(Requirement::in_values(
        CAPACITY_TYPE_LABEL_KEY,
        [capacity_type],
    ));
    narrowed
}
