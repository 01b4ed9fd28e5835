//! The launch decisions upstream's instance provider makes before and after
//! it calls EC2's `CreateFleet`, as pure functions over the engine's values:
//! no EC2 client here, so that the provider (and the in-memory EC2) only
//! glue them to the API.
//!
//! In launch order:
//! 1. [`filter_instance_types`]: upstream's six launch filters, then the cut
//!    to [`MAX_LAUNCH_INSTANCE_TYPES`] types respecting `minValues`;
//! 2. [`capacity_type`]: reserved, else spot, else on-demand;
//! 3. [`zonal_subnets`]: per zone the subnet with the most free addresses,
//!    less the addresses launches in flight will take ([`InFlightIps`]);
//! 4. [`launch_templates`]: the launch templates upstream keys, named
//!    `karpenter.k8s.aws/<hash>`;
//! 5. [`fleet_request`]: the `CreateFleet` request as a plain value, with
//!    [`launch_tags`];
//! 6. [`fleet_outcome`] and [`unavailable_marks`]: what the fleet's errors
//!    mean (insufficient capacity or a `CreateError` reason) and what they
//!    mark unavailable; [`provider_id`] and [`parse_provider_id`].

mod capacity_type;
mod errors;
mod filters;
mod fleet;
mod provider_id;
mod subnets;
mod template;
mod truncate;

#[cfg(test)]
mod tests;

pub use capacity_type::capacity_type;
pub use errors::{
    FleetError, LaunchError, UnavailableMark, fleet_outcome, is_insufficient_capacity,
    reason_message, unavailable_marks,
};
pub use filters::filter_instance_types;
pub use fleet::{
    AllocationStrategy, FleetInputs, FleetOverride, FleetRequest, fleet_request, launch_tags,
};
pub(crate) use fleet::{EKS_CLUSTER_NAME_TAG, NODE_CLASS_TAG};
pub use provider_id::{ProviderIdError, parse_provider_id, provider_id};
pub use subnets::{InFlightIps, SubnetInfo, min_pods, zonal_subnets};
pub use template::{LaunchTemplate, TemplateReservation, launch_templates};
pub use truncate::MAX_LAUNCH_INSTANCE_TYPES;
