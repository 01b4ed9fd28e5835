//! Upstream's launch filters (`pkg/providers/instance/filter`), applied in
//! its order to the types a claim may launch as. A filter that would leave
//! nothing keeps its input instead, except the first: types none of which
//! is compatible and available mean insufficient capacity.

pub(crate) mod reserved;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::ResourceList;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, Requirements,
};

use super::errors::LaunchError;
use super::truncate::truncate;
use crate::instancetype::resources::{
    RESOURCE_AMD_GPU, RESOURCE_HABANA_GAUDI, RESOURCE_NEURON, RESOURCE_NEURON_CORE,
    RESOURCE_NVIDIA_GPU,
};

/// The types a claim with `requirements` and `requests` launches over, as
/// upstream chooses them: compatible-and-available, capacity-reservation
/// type, capacity block, reserved offering, exotic and spot-offering
/// filters, then the cheapest [`MAX_LAUNCH_INSTANCE_TYPES`](super::MAX_LAUNCH_INSTANCE_TYPES)
/// respecting `minValues`. The filters narrow offerings by marking the
/// others unavailable, so each type's requirements stay those of what it
/// can still launch.
///
/// # Errors
///
/// [`LaunchError::InsufficientCapacity`] when no type is compatible and
/// available, or when the cut can no longer meet `minValues`.
pub fn filter_instance_types(
    requirements: &Requirements,
    requests: &ResourceList,
    instance_types: &[InstanceType],
) -> Result<Vec<InstanceType>, LaunchError> {
    let mut types = compatible_available(requirements, requests, instance_types);
    if types.is_empty() {
        return Err(LaunchError::InsufficientCapacity(
            "all requested instance types were unavailable during launch".to_owned(),
        ));
    }
    types = reserved::capacity_reservation_type(requirements, types);
    types = reserved::capacity_block(requirements, types);
    types = reserved::reserved_offering(requirements, types);
    types = exotic(requirements, types);
    types = spot_offering(requirements, types);
    truncate(requirements, types)
}

/// The types whose requirements the claim's intersect and which have an
/// available offering compatible with the claim while their allocatable
/// holds the claim's requests.
pub(crate) fn compatible_available(
    requirements: &Requirements,
    requests: &ResourceList,
    instance_types: &[InstanceType],
) -> Vec<InstanceType> {
    instance_types
        .iter()
        .filter(|it| {
            it.requirements.is_intersecting(requirements)
                && requests.fits(&it.allocatable())
                && it.available_offerings(requirements).next().is_some()
        })
        .cloned()
        .collect()
}

/// The size label, whose value names bare-metal sizes (`metal`,
/// `metal-24xl`).
const INSTANCE_SIZE: &str = "karpenter.k8s.aws/instance-size";

/// Resources that make a type exotic: accelerators most pods do not ask for.
const EXOTIC_RESOURCES: [&str; 5] = [
    RESOURCE_NEURON,
    RESOURCE_NEURON_CORE,
    RESOURCE_AMD_GPU,
    RESOURCE_NVIDIA_GPU,
    RESOURCE_HABANA_GAUDI,
];

/// Whether `it` is bare metal or carries accelerators.
pub(crate) fn is_exotic(it: &InstanceType) -> bool {
    let metal = it
        .requirements
        .get(INSTANCE_SIZE)
        .values()
        .any(|size| size.contains("metal"));
    metal || EXOTIC_RESOURCES.iter().any(|r| it.capacity.get(r) != 0)
}

/// Drops bare-metal and accelerated types, which cost more than a
/// general-purpose launch needs, unless only they are left or the claim
/// asks for `minValues` (dropping could break them).
pub(crate) fn exotic(requirements: &Requirements, types: Vec<InstanceType>) -> Vec<InstanceType> {
    if requirements.has_min_values() || types.iter().all(is_exotic) {
        return types;
    }
    types.into_iter().filter(|it| !is_exotic(it)).collect()
}

/// When the claim allows both spot and on-demand (and has no `minValues`),
/// drops spot offerings dearer than the cheapest compatible available
/// on-demand offering: on-demand would be both cheaper and safer. A type
/// left with nothing available is dropped (upstream keeps one whose only
/// offerings left are unavailable; it could not launch either way).
pub(crate) fn spot_offering(
    requirements: &Requirements,
    types: Vec<InstanceType>,
) -> Vec<InstanceType> {
    let allowed = requirements.get(CAPACITY_TYPE_LABEL_KEY);
    if requirements.has_min_values()
        || !allowed.has(CAPACITY_TYPE_ON_DEMAND)
        || !allowed.has(CAPACITY_TYPE_SPOT)
    {
        return types;
    }
    let offerings = || {
        types
            .iter()
            .flat_map(|it| it.available_offerings(requirements))
    };
    let has_spot = offerings().any(|o| o.capacity_type == CAPACITY_TYPE_SPOT);
    let cheapest_on_demand = offerings()
        .filter(|o| o.capacity_type == CAPACITY_TYPE_ON_DEMAND)
        .map(|o| o.price)
        .min_by(f64::total_cmp);
    let Some(cheapest_on_demand) = cheapest_on_demand.filter(|_| has_spot) else {
        return types;
    };
    types
        .into_iter()
        .filter_map(|mut it| {
            it.mark_unavailable(|o| {
                o.capacity_type == CAPACITY_TYPE_SPOT && o.price > cheapest_on_demand
            });
            it.offerings.iter().any(|o| o.available).then_some(it)
        })
        .collect()
}
