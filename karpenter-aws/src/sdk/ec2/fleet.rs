//! `CreateFleet` and the launch template calls: requests built from this
//! crate's inputs, answers read back into its outputs.

use aws_sdk_ec2::types as sdk;

use super::convert::{tags_in, tags_out, text, time_in};
use crate::ec2::{
    CreateFleetError, CreateFleetInput, CreateFleetInstance, FleetLaunchTemplateConfig,
    FleetLaunchTemplateOverrides, LaunchTemplate, OnDemandAllocationStrategy,
    SpotAllocationStrategy, TagSpecification,
};

/// The fleet's launch template configurations.
pub(super) fn template_configs(
    configs: Vec<FleetLaunchTemplateConfig>,
) -> Vec<sdk::FleetLaunchTemplateConfigRequest> {
    configs
        .into_iter()
        .map(|config| {
            let specification = sdk::FleetLaunchTemplateSpecificationRequest::builder()
                .launch_template_name(config.launch_template_name)
                .version(config.version)
                .build();
            let overrides = config.overrides.into_iter().map(override_out).collect();
            sdk::FleetLaunchTemplateConfigRequest::builder()
                .launch_template_specification(specification)
                .set_overrides(Some(overrides))
                .build()
        })
        .collect()
}

fn override_out(o: FleetLaunchTemplateOverrides) -> sdk::FleetLaunchTemplateOverridesRequest {
    sdk::FleetLaunchTemplateOverridesRequest::builder()
        .instance_type(sdk::InstanceType::from(o.instance_type.as_str()))
        .subnet_id(o.subnet_id)
        .availability_zone(o.availability_zone)
        .set_image_id(o.image_id)
        .set_priority(o.priority)
        .build()
}

/// The fleet's capacity: `total` instances, of the input's default type.
pub(super) fn target_capacity(input: &CreateFleetInput) -> sdk::TargetCapacitySpecificationRequest {
    sdk::TargetCapacitySpecificationRequest::builder()
        .total_target_capacity(i32::try_from(input.total_target_capacity).unwrap_or(i32::MAX))
        .default_target_capacity_type(sdk::DefaultTargetCapacityType::from(
            input.default_target_capacity_type.as_str(),
        ))
        .build()
}

/// The spot allocation strategy.
pub(super) fn spot_options(strategy: SpotAllocationStrategy) -> sdk::SpotOptionsRequest {
    let strategy = match strategy {
        SpotAllocationStrategy::PriceCapacityOptimized => {
            sdk::SpotAllocationStrategy::PriceCapacityOptimized
        }
        SpotAllocationStrategy::CapacityOptimizedPrioritized => {
            sdk::SpotAllocationStrategy::CapacityOptimizedPrioritized
        }
        SpotAllocationStrategy::CapacityOptimized => sdk::SpotAllocationStrategy::CapacityOptimized,
        SpotAllocationStrategy::LowestPrice => sdk::SpotAllocationStrategy::LowestPrice,
    };
    sdk::SpotOptionsRequest::builder()
        .allocation_strategy(strategy)
        .build()
}

/// The on-demand allocation strategy.
pub(super) fn on_demand_options(
    strategy: OnDemandAllocationStrategy,
) -> sdk::OnDemandOptionsRequest {
    let strategy = match strategy {
        OnDemandAllocationStrategy::LowestPrice => {
            sdk::FleetOnDemandAllocationStrategy::LowestPrice
        }
        OnDemandAllocationStrategy::Prioritized => {
            sdk::FleetOnDemandAllocationStrategy::Prioritized
        }
    };
    sdk::OnDemandOptionsRequest::builder()
        .allocation_strategy(strategy)
        .build()
}

/// The reserved-capacity options of a launch into an interruptible
/// capacity reservation.
pub(super) fn interruptible_reservation() -> sdk::ReservedCapacityOptionsRequest {
    sdk::ReservedCapacityOptionsRequest::builder()
        .reservation_types(sdk::FleetReservationType::InterruptibleCapacityReservation)
        .build()
}

/// Tag specifications of a fleet or a launch template.
pub(super) fn tag_specifications(
    specs: Vec<TagSpecification>,
) -> Option<Vec<sdk::TagSpecification>> {
    let out: Vec<_> = specs
        .into_iter()
        .map(|spec| {
            sdk::TagSpecification::builder()
                .resource_type(sdk::ResourceType::from(spec.resource_type.as_str()))
                .set_tags(Some(tags_out(spec.tags)))
                .build()
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// An instance the fleet launched.
pub(super) fn fleet_instance(instance: &sdk::CreateFleetInstance) -> CreateFleetInstance {
    CreateFleetInstance {
        instance_ids: instance.instance_ids().to_vec(),
        instance_type: instance
            .instance_type()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default(),
        launch_template_and_overrides: overrides_in(instance.launch_template_and_overrides()),
        lifecycle: instance
            .lifecycle()
            .map(|l| l.as_str().to_owned())
            .unwrap_or_default(),
    }
}

/// An override the fleet could not launch.
pub(super) fn fleet_error(error: &sdk::CreateFleetError) -> CreateFleetError {
    CreateFleetError {
        error_code: text(error.error_code()),
        error_message: text(error.error_message()),
        launch_template_and_overrides: overrides_in(error.launch_template_and_overrides()),
        lifecycle: error
            .lifecycle()
            .map(|l| l.as_str().to_owned())
            .unwrap_or_default(),
    }
}

fn overrides_in(
    response: Option<&sdk::LaunchTemplateAndOverridesResponse>,
) -> FleetLaunchTemplateOverrides {
    let Some(o) = response.and_then(sdk::LaunchTemplateAndOverridesResponse::overrides) else {
        return FleetLaunchTemplateOverrides::default();
    };
    FleetLaunchTemplateOverrides {
        instance_type: o
            .instance_type()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default(),
        subnet_id: text(o.subnet_id()),
        availability_zone: text(o.availability_zone()),
        image_id: o.image_id().map(str::to_owned),
        priority: o.priority(),
    }
}

/// A launch template EC2 described or made.
pub(super) fn launch_template(template: &sdk::LaunchTemplate) -> LaunchTemplate {
    LaunchTemplate {
        launch_template_id: text(template.launch_template_id()),
        launch_template_name: text(template.launch_template_name()),
        create_time: template.create_time().and_then(time_in).unwrap_or_default(),
        tags: tags_in(template.tags()),
    }
}
