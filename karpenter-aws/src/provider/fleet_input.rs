//! A launch's [`FleetRequest`] as the SDK-shaped [`CreateFleetInput`]:
//! one launch template config per template (version `$Latest`), each
//! override with its subnet, zone, image and price as priority, one
//! instance, and the tags on the instance, its volumes and the fleet.

use std::collections::BTreeMap;

use crate::ec2::{
    CreateFleetInput, FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides,
    OnDemandAllocationStrategy, SpotAllocationStrategy, Tag, TagSpecification,
};
use crate::launch::{AllocationStrategy, FleetRequest, SubnetInfo};

/// The launch template version every config asks for.
const LATEST: &str = "$Latest";

/// The resources a launch tags, as upstream's `CreateFleet` does.
const TAGGED_RESOURCES: [&str; 3] = ["instance", "volume", "fleet"];

/// `request` as a `CreateFleet` input. An override without a subnet (a
/// reservation's, which EC2 places by zone) gets the subnet `subnets`
/// chose for its zone, so that the instance still lands in one of the
/// NodeClass's subnets.
pub fn create_fleet_input(
    request: &FleetRequest,
    subnets: &BTreeMap<String, SubnetInfo>,
) -> CreateFleetInput {
    let mut configs: Vec<FleetLaunchTemplateConfig> = Vec::new();
    for o in &request.overrides {
        let subnet_id = o
            .subnet_id
            .clone()
            .or_else(|| subnets.get(&o.zone).map(|s| s.id.clone()))
            .unwrap_or_default();
        let overrides = FleetLaunchTemplateOverrides {
            instance_type: o.instance_type.clone(),
            subnet_id,
            availability_zone: o.zone.clone(),
            image_id: Some(o.image_id.clone()),
            priority: Some(o.priority),
        };
        match configs
            .iter_mut()
            .find(|c| c.launch_template_name == o.template_name)
        {
            Some(config) => config.overrides.push(overrides),
            None => configs.push(FleetLaunchTemplateConfig {
                launch_template_name: o.template_name.clone(),
                version: LATEST.to_owned(),
                overrides: vec![overrides],
            }),
        }
    }
    let tags: Vec<Tag> = request
        .tags
        .iter()
        .map(|(key, value)| Tag::new(key, value))
        .collect();
    CreateFleetInput {
        launch_template_configs: configs,
        total_target_capacity: 1,
        default_target_capacity_type: request.target_capacity_type,
        spot_allocation_strategy: SpotAllocationStrategy::PriceCapacityOptimized,
        on_demand_allocation_strategy: match request.allocation_strategy {
            // Upstream's only other on-demand strategy, `prioritized`,
            // follows NodeOverlay prices, which are not modelled.
            Some(AllocationStrategy::LowestPrice | AllocationStrategy::PriceCapacityOptimized)
            | None => OnDemandAllocationStrategy::LowestPrice,
        },
        interruptible_capacity_reservation: request.interruptible_reservation,
        tag_specifications: TAGGED_RESOURCES
            .iter()
            .map(|resource| TagSpecification {
                resource_type: (*resource).to_owned(),
                tags: tags.clone(),
            })
            .collect(),
        context: request.context.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ec2::TargetCapacityType;
    use crate::launch::FleetOverride;

    fn subnet(id: &str, zone: &str) -> SubnetInfo {
        SubnetInfo {
            id: id.to_owned(),
            zone: zone.to_owned(),
            zone_id: None,
            available_ips: 10,
        }
    }

    fn request(capacity_type: &str, target: TargetCapacityType) -> FleetRequest {
        let over = |template: &str, ty: &str, zone: &str, subnet: Option<&str>, price: f64| {
            FleetOverride {
                template_name: template.to_owned(),
                instance_type: ty.to_owned(),
                zone: zone.to_owned(),
                subnet_id: subnet.map(str::to_owned),
                image_id: format!("ami-{template}"),
                priority: price,
            }
        };
        FleetRequest {
            capacity_type: capacity_type.to_owned(),
            target_capacity_type: target,
            allocation_strategy: Some(AllocationStrategy::LowestPrice),
            interruptible_reservation: false,
            overrides: vec![
                over("t1", "m5.large", "z-a", Some("subnet-a"), 0.1),
                over("t2", "m6g.large", "z-b", None, 0.08),
                over("t1", "m5.xlarge", "z-b", Some("subnet-b"), 0.2),
            ],
            tags: BTreeMap::from([("k".to_owned(), "v".to_owned())]),
            context: Some("ctx".to_owned()),
        }
    }

    #[test]
    fn overrides_are_grouped_by_template_in_first_seen_order() {
        let subnets = BTreeMap::from([
            ("z-a".to_owned(), subnet("subnet-a", "z-a")),
            ("z-b".to_owned(), subnet("subnet-b2", "z-b")),
        ]);
        let input = create_fleet_input(
            &request("on-demand", TargetCapacityType::OnDemand),
            &subnets,
        );
        let names: Vec<&str> = input
            .launch_template_configs
            .iter()
            .map(|c| c.launch_template_name.as_str())
            .collect();
        assert_eq!(names, ["t1", "t2"]);
        let t1 = &input.launch_template_configs[0];
        assert_eq!(t1.version, "$Latest");
        let types: Vec<&str> = t1
            .overrides
            .iter()
            .map(|o| o.instance_type.as_str())
            .collect();
        assert_eq!(types, ["m5.large", "m5.xlarge"]);
        assert_eq!(t1.overrides[1].subnet_id, "subnet-b");
        assert_eq!(t1.overrides[0].priority, Some(0.1));
        assert_eq!(t1.overrides[0].image_id.as_deref(), Some("ami-t1"));
        // The override without a subnet gets its zone's.
        assert_eq!(
            input.launch_template_configs[1].overrides[0].subnet_id,
            "subnet-b2"
        );
        assert_eq!(input.total_target_capacity, 1);
        assert_eq!(
            input.default_target_capacity_type,
            TargetCapacityType::OnDemand
        );
        assert!(!input.interruptible_capacity_reservation);
        assert_eq!(input.context.as_deref(), Some("ctx"));
        let resources: Vec<&str> = input
            .tag_specifications
            .iter()
            .map(|s| s.resource_type.as_str())
            .collect();
        assert_eq!(resources, ["instance", "volume", "fleet"]);
        assert!(
            input
                .tag_specifications
                .iter()
                .all(|s| s.tags == [Tag::new("k", "v")])
        );
    }

    #[test]
    fn capacity_types_map_and_interruptible_reservations_say_so() {
        let subnets = BTreeMap::new();
        let spot = create_fleet_input(&request("spot", TargetCapacityType::Spot), &subnets);
        assert_eq!(spot.default_target_capacity_type, TargetCapacityType::Spot);
        // A plain reservation launches as on-demand, into the reservation its
        // launch template targets.
        let reserved =
            create_fleet_input(&request("reserved", TargetCapacityType::OnDemand), &subnets);
        assert_eq!(
            reserved.default_target_capacity_type,
            TargetCapacityType::OnDemand
        );
        assert!(!reserved.interruptible_capacity_reservation);
        let mut interruptible = request("reserved", TargetCapacityType::ReservedCapacity);
        interruptible.interruptible_reservation = true;
        let interruptible = create_fleet_input(&interruptible, &subnets);
        assert_eq!(
            interruptible.default_target_capacity_type,
            TargetCapacityType::ReservedCapacity
        );
        assert!(interruptible.interruptible_capacity_reservation);
        let block = create_fleet_input(
            &request("reserved", TargetCapacityType::CapacityBlock),
            &subnets,
        );
        assert_eq!(
            block.default_target_capacity_type,
            TargetCapacityType::CapacityBlock
        );
        assert!(!block.interruptible_capacity_reservation);
        // No subnet known for the zone: left empty rather than invented.
        assert_eq!(block.launch_template_configs[1].overrides[0].subnet_id, "");
    }
}
