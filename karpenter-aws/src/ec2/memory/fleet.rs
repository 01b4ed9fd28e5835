//! `CreateFleet` in memory: overrides tried in the order the allocation
//! strategy gives, each launching until the target is met or it fails.

use super::catalog::{architecture, catalog, spot};
use super::{State, Template};
use crate::ec2::{
    CapacityReservation, CreateFleetError, CreateFleetInput, CreateFleetInstance,
    CreateFleetOutput, Ec2Error, FleetLaunchTemplateOverrides, Instance, InstanceState,
    LaunchTemplateData, Operation, SpotAllocationStrategy, Tag, TagSpecification,
    TargetCapacityType,
};

/// Why one override could not launch: EC2's code and message.
type Refusal = (&'static str, String);

/// One override with what it launches from.
struct Candidate<'a> {
    overrides: &'a FleetLaunchTemplateOverrides,
    template: Template,
    /// Lower is tried first.
    rank: f64,
}

/// Runs `CreateFleet` against `state`.
pub(super) fn create_fleet(
    state: &mut State,
    input: &CreateFleetInput,
) -> Result<CreateFleetOutput, Ec2Error> {
    let candidates = candidates(state, input)?;
    state.counters.fleet += 1;
    let mut output = CreateFleetOutput {
        fleet_id: format!(
            "fleet-{:08x}-0000-4000-8000-000000000000",
            state.counters.fleet
        ),
        ..CreateFleetOutput::default()
    };
    let kind = input.default_target_capacity_type;
    let lifecycle = if kind == TargetCapacityType::Spot {
        "spot"
    } else {
        "on-demand"
    };
    let mut remaining = input.total_target_capacity;
    for candidate in candidates {
        if remaining == 0 {
            break;
        }
        let mut launched = Vec::new();
        let mut refusal = None;
        while remaining > 0 {
            match launch(state, &candidate, input) {
                Ok(id) => {
                    launched.push(id);
                    remaining -= 1;
                }
                Err(why) => {
                    refusal = Some(why);
                    break;
                }
            }
        }
        if !launched.is_empty() {
            output.instances.push(CreateFleetInstance {
                instance_ids: launched,
                instance_type: candidate.overrides.instance_type.clone(),
                launch_template_and_overrides: candidate.overrides.clone(),
                lifecycle: lifecycle.to_owned(),
            });
        }
        if let Some((code, message)) = refusal {
            output.errors.push(CreateFleetError {
                error_code: code.to_owned(),
                error_message: message,
                launch_template_and_overrides: candidate.overrides.clone(),
                lifecycle: lifecycle.to_owned(),
            });
        }
    }
    Ok(output)
}

/// The overrides in the order they are tried; an unknown launch template
/// fails the call.
fn candidates<'a>(
    state: &State,
    input: &'a CreateFleetInput,
) -> Result<Vec<Candidate<'a>>, Ec2Error> {
    let by_price = input.default_target_capacity_type == TargetCapacityType::Spot
        && input.spot_allocation_strategy != SpotAllocationStrategy::CapacityOptimizedPrioritized;
    let catalog = catalog(Operation::CreateFleet)?;
    let mut candidates = Vec::new();
    for config in &input.launch_template_configs {
        let name = &config.launch_template_name;
        let template = state.templates.get(name).cloned().ok_or_else(|| {
            Ec2Error::service(
                Operation::CreateFleet,
                "InvalidLaunchTemplateName.NotFoundException",
                format!(
                    "The specified launch template, with template name {name}, does not exist."
                ),
            )
        })?;
        for overrides in &config.overrides {
            let rank = if by_price {
                spot(
                    state,
                    catalog,
                    &overrides.instance_type,
                    &overrides.availability_zone,
                )
            } else {
                // Upstream sets each override's priority to its price, so
                // lowest-price and prioritized both follow it.
                overrides.priority
            };
            candidates.push(Candidate {
                overrides,
                template: template.clone(),
                rank: rank.unwrap_or(f64::INFINITY),
            });
        }
    }
    // A stable sort: equal ranks keep the input's order.
    candidates.sort_by(|a, b| a.rank.total_cmp(&b.rank));
    Ok(candidates)
}

/// Launches one instance of `candidate`; its ID, or why not.
fn launch(
    state: &mut State,
    candidate: &Candidate<'_>,
    input: &CreateFleetInput,
) -> Result<String, Refusal> {
    let overrides = candidate.overrides;
    let instance_type = overrides.instance_type.as_str();
    let subnet = state.subnets.get(&overrides.subnet_id).ok_or_else(|| {
        (
            "InvalidSubnetID.NotFound",
            format!("The subnet ID '{}' does not exist", overrides.subnet_id),
        )
    })?;
    let zone = subnet.availability_zone.clone();
    if subnet.available_ip_address_count == 0 {
        return Err((
            "InsufficientFreeAddressesInSubnet",
            format!(
                "There are not enough free addresses in subnet '{}'",
                subnet.subnet_id
            ),
        ));
    }
    let image_id = overrides
        .image_id
        .clone()
        .or_else(|| candidate.template.data.image_id.clone())
        .ok_or(("MissingParameter", "No image ID was given".to_owned()))?;
    let image_arch = match state.images.get(&image_id) {
        Some(image) => image.architecture.as_str(),
        None => {
            return Err((
                "InvalidAMIID.NotFound",
                format!("The image id '[{image_id}]' does not exist"),
            ));
        }
    };
    let catalog = catalog(Operation::CreateFleet).ok();
    let Some(record) = catalog.and_then(|c| c.record(instance_type)) else {
        return Err((
            "Unsupported",
            format!("{instance_type} is not supported in {zone}"),
        ));
    };
    let type_arch = architecture(record.arch);
    if !image_arch.is_empty() && image_arch != type_arch {
        return Err((
            "InvalidParameterValue",
            format!(
                "The architecture '{type_arch}' of the specified instance type does not match the architecture '{image_arch}' of the specified AMI."
            ),
        ));
    }
    let kind = input.default_target_capacity_type;
    let reservation = reservation_for(state, instance_type, &zone, kind, &candidate.template.data)?;
    let key = (instance_type.to_owned(), zone.clone(), kind);
    if state.capacity.get(&key) == Some(&0) {
        return Err((
            "InsufficientInstanceCapacity",
            format!(
                "We currently do not have sufficient {instance_type} capacity in the Availability Zone you requested ({zone})."
            ),
        ));
    }
    // Every check passed: take the capacity, the address and the place.
    if let Some(left) = state.capacity.get_mut(&key) {
        *left -= 1;
    }
    if let Some(subnet) = state.subnets.get_mut(&overrides.subnet_id) {
        subnet.available_ip_address_count -= 1;
    }
    if let Some(r) = reservation
        .as_ref()
        .and_then(|id| state.reservations.get_mut(id))
    {
        r.available_instance_count -= 1;
    }
    // The next number whose ID no instance has: an inserted instance may
    // hold one this count would reach.
    let instance_id = loop {
        state.counters.instance += 1;
        let id = format!("i-{:017x}", state.counters.instance);
        if !state.instances.contains_key(&id) {
            break id;
        }
    };
    let tags = instance_tags(
        &input.tag_specifications,
        &candidate.template.data.tag_specifications,
    );
    let instance = Instance {
        instance_id: instance_id.clone(),
        instance_type: instance_type.to_owned(),
        image_id,
        state: InstanceState::Running,
        launch_time: state.now,
        availability_zone: zone,
        subnet_id: overrides.subnet_id.clone(),
        // The fleet's overrides name no groups: the template's apply.
        security_group_ids: template_groups(&candidate.template.data),
        instance_lifecycle: (kind == TargetCapacityType::Spot).then(|| "spot".to_owned()),
        capacity_reservation_id: reservation,
        tags,
    };
    state.instances.insert(instance_id.clone(), instance);
    Ok(instance_id)
}

/// The reservation a launch of `instance_type` in `zone` from `data` runs
/// in: the one the template targets, which must have room for it, or
/// else, for capacity blocks and interruptible reservations, the first of
/// that kind with room; none for other launches.
fn reservation_for(
    state: &State,
    instance_type: &str,
    zone: &str,
    kind: TargetCapacityType,
    data: &LaunchTemplateData,
) -> Result<Option<String>, Refusal> {
    let has_room = |r: &CapacityReservation| {
        r.instance_type == instance_type
            && r.availability_zone == zone
            && r.state == "active"
            && r.available_instance_count > 0
    };
    let found = if let Some(id) = &data.capacity_reservation_id {
        state.reservations.get(id).filter(|r| has_room(r))
    } else {
        state.reservations.values().find(|r| {
            let kind_fits = match kind {
                TargetCapacityType::CapacityBlock => r.reservation_type == "capacity-block",
                TargetCapacityType::ReservedCapacity => r.interruptible,
                TargetCapacityType::OnDemand | TargetCapacityType::Spot => return false,
            };
            kind_fits && has_room(r)
        })
    };
    let needed = data.capacity_reservation_id.is_some()
        || matches!(
            kind,
            TargetCapacityType::CapacityBlock | TargetCapacityType::ReservedCapacity
        );
    match found {
        Some(r) => Ok(Some(r.capacity_reservation_id.clone())),
        None if needed => Err((
            "ReservationCapacityExceeded",
            format!("No capacity reservation has room for {instance_type} in {zone}"),
        )),
        None => Ok(None),
    }
}

/// The tags an instance gets: the template's `instance` tags, then the
/// fleet's, a later key replacing an earlier one.
fn instance_tags(fleet: &[TagSpecification], template: &[TagSpecification]) -> Vec<Tag> {
    let mut tags: Vec<Tag> = Vec::new();
    let specified = template
        .iter()
        .chain(fleet)
        .filter(|s| s.resource_type == "instance");
    for tag in specified.flat_map(|s| &s.tags) {
        match tags.iter_mut().find(|t| t.key == tag.key) {
            Some(existing) => existing.value.clone_from(&tag.value),
            None => tags.push(tag.clone()),
        }
    }
    tags
}

/// The security groups an instance launched from `data` gets: the
/// template's, or its primary interface's when it names interfaces (EC2
/// takes the groups from there then).
fn template_groups(data: &LaunchTemplateData) -> Vec<String> {
    if !data.security_group_ids.is_empty() {
        return data.security_group_ids.clone();
    }
    data.network_interfaces
        .iter()
        .find(|i| i.device_index.unwrap_or(0) == 0 && i.network_card_index.unwrap_or(0) == 0)
        .map(|i| i.groups.clone())
        .unwrap_or_default()
}
