//! The inputs `SdkEc2` sends, read back from the form into this crate's
//! input types: exactly the fields it sets, nothing else.

use karpenter_aws::ec2::{
    CreateFleetInput, CreateTagsInput, DescribeImagesInput, DescribeInput,
    DescribeInstanceStatusInput, DescribeInstanceTypeOfferingsInput, DescribeInstanceTypesInput,
    DescribeLaunchTemplatesInput, DescribePlacementGroupsInput, DescribeSpotPriceHistoryInput,
    Filter, FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides, LocationType,
    OnDemandAllocationStrategy, SpotAllocationStrategy, Tag, TagSpecification, TargetCapacityType,
    TerminateInstancesInput,
};

use super::form::{BadRequest, Form};

/// The filters `Filter.N.Name` / `Filter.N.Value.M`.
pub(crate) fn filters(form: &Form) -> Result<Vec<Filter>, BadRequest> {
    form.items("Filter")?
        .iter()
        .map(|f| {
            Ok(Filter {
                name: f.required("Name")?,
                values: f.list("Value")?,
            })
        })
        .collect()
}

/// The tags `key.N.Key` / `key.N.Value`.
pub(crate) fn tags(form: &Form, key: &str) -> Result<Vec<Tag>, BadRequest> {
    form.items(key)?
        .iter()
        .map(|t| {
            Ok(Tag {
                key: t.required("Key")?,
                value: t.get("Value").unwrap_or_default(),
            })
        })
        .collect()
}

/// The tag specifications `key.N.ResourceType` / `key.N.Tag.M`.
pub(crate) fn tag_specifications(
    form: &Form,
    key: &str,
) -> Result<Vec<TagSpecification>, BadRequest> {
    form.items(key)?
        .iter()
        .map(|s| {
            Ok(TagSpecification {
                resource_type: s.required("ResourceType")?,
                tags: tags(s, "Tag")?,
            })
        })
        .collect()
}

/// A describe call by `ids_key` IDs and filters.
pub(crate) fn describe(form: &Form, ids_key: &str) -> Result<DescribeInput, BadRequest> {
    Ok(DescribeInput {
        ids: form.list(ids_key)?,
        filters: filters(form)?,
    })
}

/// `DescribePlacementGroups`: `GroupId.N`, `GroupName.N` and filters.
pub(crate) fn describe_placement_groups(
    form: &Form,
) -> Result<DescribePlacementGroupsInput, BadRequest> {
    Ok(DescribePlacementGroupsInput {
        group_ids: form.list("GroupId")?,
        group_names: form.list("GroupName")?,
        filters: filters(form)?,
    })
}

pub(crate) fn describe_images(form: &Form) -> Result<DescribeImagesInput, BadRequest> {
    Ok(DescribeImagesInput {
        image_ids: form.list("ImageId")?,
        owners: form.list("Owner")?,
        filters: filters(form)?,
    })
}

pub(crate) fn describe_instance_types(
    form: &Form,
) -> Result<DescribeInstanceTypesInput, BadRequest> {
    Ok(DescribeInstanceTypesInput {
        instance_types: form.list("InstanceType")?,
        filters: filters(form)?,
    })
}

pub(crate) fn describe_instance_type_offerings(
    form: &Form,
) -> Result<DescribeInstanceTypeOfferingsInput, BadRequest> {
    let location_type = match form.get("LocationType").as_deref() {
        Some("region") => LocationType::Region,
        Some("availability-zone") | None => LocationType::AvailabilityZone,
        Some("availability-zone-id") => LocationType::AvailabilityZoneId,
        Some(other) => return Err(BadRequest::invalid("LocationType", other)),
    };
    Ok(DescribeInstanceTypeOfferingsInput {
        location_type,
        filters: filters(form)?,
    })
}

pub(crate) fn describe_launch_templates(
    form: &Form,
) -> Result<DescribeLaunchTemplatesInput, BadRequest> {
    Ok(DescribeLaunchTemplatesInput {
        launch_template_names: form.list("LaunchTemplateName")?,
        filters: filters(form)?,
    })
}

pub(crate) fn terminate_instances(form: &Form) -> Result<TerminateInstancesInput, BadRequest> {
    let instance_ids = form.list("InstanceId")?;
    if instance_ids.is_empty() {
        return Err(BadRequest::missing("InstanceId"));
    }
    Ok(TerminateInstancesInput { instance_ids })
}

pub(crate) fn create_tags(form: &Form) -> Result<CreateTagsInput, BadRequest> {
    let resources = form.list("ResourceId")?;
    if resources.is_empty() {
        return Err(BadRequest::missing("ResourceId"));
    }
    Ok(CreateTagsInput {
        resources,
        tags: tags(form, "Tag")?,
    })
}

pub(crate) fn describe_spot_price_history(
    form: &Form,
) -> Result<DescribeSpotPriceHistoryInput, BadRequest> {
    Ok(DescribeSpotPriceHistoryInput {
        instance_types: form.list("InstanceType")?,
        product_descriptions: form.list("ProductDescription")?,
        start_time: form.parsed("StartTime")?,
    })
}

pub(crate) fn describe_instance_status(
    form: &Form,
) -> Result<DescribeInstanceStatusInput, BadRequest> {
    Ok(DescribeInstanceStatusInput {
        instance_ids: form.list("InstanceId")?,
        filters: filters(form)?,
        include_all_instances: form.parsed("IncludeAllInstances")?.unwrap_or(false),
    })
}

/// `CreateFleet`: templates and overrides, capacity, strategies, tags.
pub(crate) fn create_fleet(form: &Form) -> Result<CreateFleetInput, BadRequest> {
    let capacity = form
        .member("TargetCapacitySpecification")
        .ok_or_else(|| BadRequest::missing("TargetCapacitySpecification"))?;
    let default_type = capacity.required("DefaultTargetCapacityType")?;
    let default_target_capacity_type = match default_type.as_str() {
        "spot" => TargetCapacityType::Spot,
        "on-demand" => TargetCapacityType::OnDemand,
        "capacity-block" => TargetCapacityType::CapacityBlock,
        "reserved-capacity" => TargetCapacityType::ReservedCapacity,
        other => {
            return Err(BadRequest::invalid(
                &capacity.name("DefaultTargetCapacityType"),
                other,
            ));
        }
    };
    let spot = form.get("SpotOptions.AllocationStrategy");
    let spot_allocation_strategy = match spot.as_deref() {
        Some("price-capacity-optimized") | None => SpotAllocationStrategy::PriceCapacityOptimized,
        Some("capacity-optimized-prioritized") => {
            SpotAllocationStrategy::CapacityOptimizedPrioritized
        }
        Some("capacity-optimized") => SpotAllocationStrategy::CapacityOptimized,
        Some("lowest-price") => SpotAllocationStrategy::LowestPrice,
        Some(other) => return Err(BadRequest::invalid("SpotOptions.AllocationStrategy", other)),
    };
    let on_demand = form.get("OnDemandOptions.AllocationStrategy");
    let on_demand_allocation_strategy = match on_demand.as_deref() {
        Some("lowest-price") | None => OnDemandAllocationStrategy::LowestPrice,
        Some("prioritized") => OnDemandAllocationStrategy::Prioritized,
        Some(other) => {
            return Err(BadRequest::invalid(
                "OnDemandOptions.AllocationStrategy",
                other,
            ));
        }
    };
    let reservation_types = form.list("ReservedCapacityOptions.ReservationType")?;
    Ok(CreateFleetInput {
        launch_template_configs: form
            .items("LaunchTemplateConfigs")?
            .iter()
            .map(template_config)
            .collect::<Result<_, _>>()?,
        total_target_capacity: capacity
            .parsed("TotalTargetCapacity")?
            .ok_or_else(|| BadRequest::missing(&capacity.name("TotalTargetCapacity")))?,
        default_target_capacity_type,
        spot_allocation_strategy,
        on_demand_allocation_strategy,
        interruptible_capacity_reservation: reservation_types
            .iter()
            .any(|t| t == "interruptible-capacity-reservation"),
        tag_specifications: tag_specifications(form, "TagSpecification")?,
        context: form.get("Context"),
    })
}

fn template_config(config: &Form) -> Result<FleetLaunchTemplateConfig, BadRequest> {
    let spec = config
        .member("LaunchTemplateSpecification")
        .ok_or_else(|| BadRequest::missing(&config.name("LaunchTemplateSpecification")))?;
    Ok(FleetLaunchTemplateConfig {
        launch_template_name: spec.required("LaunchTemplateName")?,
        version: spec.required("Version")?,
        overrides: config
            .items("Overrides")?
            .iter()
            .map(|o| {
                Ok(FleetLaunchTemplateOverrides {
                    instance_type: o.required("InstanceType")?,
                    subnet_id: o.get("SubnetId").unwrap_or_default(),
                    availability_zone: o.get("AvailabilityZone").unwrap_or_default(),
                    image_id: o.get("ImageId"),
                    priority: o.parsed("Priority")?,
                })
            })
            .collect::<Result<_, _>>()?,
    })
}
