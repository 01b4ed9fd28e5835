//! The launch requests as the SDK builds them, sent for real or with
//! `DryRun=true` ([`Ec2Api::dry_run`](crate::ec2::Ec2Api::dry_run)).

use aws_sdk_ec2::operation::create_fleet::builders::CreateFleetFluentBuilder;
use aws_sdk_ec2::operation::run_instances::builders::RunInstancesFluentBuilder;
use aws_sdk_ec2::types as sdk;

use super::fleet;
use crate::ec2::{CreateFleetInput, DRY_RUN_OPERATION, DryRunCall, Ec2Error, RunInstancesInput};
use crate::sdk::error::sdk_error;

/// `CreateFleet` of `Type=instant` for `input`, not yet sent.
pub(super) fn fleet_request(
    ec2: &aws_sdk_ec2::Client,
    input: CreateFleetInput,
) -> CreateFleetFluentBuilder {
    let capacity = fleet::target_capacity(&input);
    let reserved = input
        .interruptible_capacity_reservation
        .then(fleet::interruptible_reservation);
    ec2.create_fleet()
        .r#type(sdk::FleetType::Instant)
        .target_capacity_specification(capacity)
        .set_launch_template_configs(Some(fleet::template_configs(input.launch_template_configs)))
        .spot_options(fleet::spot_options(input.spot_allocation_strategy))
        .on_demand_options(fleet::on_demand_options(
            input.on_demand_allocation_strategy,
        ))
        .set_reserved_capacity_options(reserved)
        .set_tag_specifications(fleet::tag_specifications(input.tag_specifications))
        .set_context(input.context)
}

/// `RunInstances` of one instance for `input`, not yet sent.
fn run_request(ec2: &aws_sdk_ec2::Client, input: RunInstancesInput) -> RunInstancesFluentBuilder {
    let interface = sdk::InstanceNetworkInterfaceSpecification::builder()
        .device_index(0)
        .subnet_id(input.subnet_id)
        .set_groups(Some(input.security_group_ids).filter(|g| !g.is_empty()))
        .build();
    let profile = input.iam_instance_profile.map(|name| {
        sdk::IamInstanceProfileSpecification::builder()
            .name(name)
            .build()
    });
    ec2.run_instances()
        .min_count(1)
        .max_count(1)
        .set_image_id(input.image_id)
        .instance_type(sdk::InstanceType::from(input.instance_type.as_str()))
        .set_iam_instance_profile(profile)
        .network_interfaces(interface)
        .set_tag_specifications(fleet::tag_specifications(input.tag_specifications))
}

/// `call` sent with `DryRun=true`; EC2's `DryRunOperation` is `Ok(())`.
pub(super) async fn dry_run(ec2: &aws_sdk_ec2::Client, call: DryRunCall) -> Result<(), Ec2Error> {
    let op = call.operation();
    let answer = match call {
        DryRunCall::CreateFleet(input) => fleet_request(ec2, *input)
            .dry_run(true)
            .send()
            .await
            .map(drop)
            .map_err(|e| sdk_error(op, e)),
        DryRunCall::RunInstances(input) => run_request(ec2, input)
            .dry_run(true)
            .send()
            .await
            .map(drop)
            .map_err(|e| sdk_error(op, e)),
    };
    match answer {
        Err(error) if error.code() == Some(DRY_RUN_OPERATION) => Ok(()),
        // EC2 never answers a dry run with success; one that did made
        // nothing either, so it is read the same.
        other => other,
    }
}
