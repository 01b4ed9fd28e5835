//! A launch template's data as the SDK's `RequestLaunchTemplateData`:
//! image, profile, groups, user data, tags, reservation and market, volumes,
//! the metadata service, monitoring, network interfaces and placement.

use aws_sdk_ec2::operation::create_launch_template::builders::CreateLaunchTemplateFluentBuilder;
use aws_sdk_ec2::types as sdk;

use super::convert::tags_out;
use super::fleet;
use crate::ec2::{
    CapacityReservationPreference, CreateLaunchTemplateInput, LaunchTemplateBlockDeviceMapping,
    LaunchTemplateData, LaunchTemplateMetadataOptions, LaunchTemplateNetworkInterface, MarketType,
};

/// `CreateLaunchTemplate` for `input`, not yet sent.
pub(super) fn template_request(
    ec2: &aws_sdk_ec2::Client,
    input: CreateLaunchTemplateInput,
) -> CreateLaunchTemplateFluentBuilder {
    ec2.create_launch_template()
        .launch_template_name(input.launch_template_name)
        .launch_template_data(template_data(input.launch_template_data))
        .set_tag_specifications(fleet::tag_specifications(input.tag_specifications))
}

/// A launch template's data as the SDK's request.
pub(super) fn template_data(data: LaunchTemplateData) -> sdk::RequestLaunchTemplateData {
    let profile = data.iam_instance_profile.map(|name| {
        sdk::LaunchTemplateIamInstanceProfileSpecificationRequest::builder()
            .name(name)
            .build()
    });
    let tag_specifications: Vec<_> = data
        .tag_specifications
        .into_iter()
        .map(|spec| {
            sdk::LaunchTemplateTagSpecificationRequest::builder()
                .resource_type(sdk::ResourceType::from(spec.resource_type.as_str()))
                .set_tags(Some(tags_out(spec.tags)))
                .build()
        })
        .collect();
    let reservation = (data.capacity_reservation_id.is_some()
        || data.capacity_reservation_preference.is_some())
    .then(|| {
        let target = data.capacity_reservation_id.map(|id| {
            sdk::CapacityReservationTarget::builder()
                .capacity_reservation_id(id)
                .build()
        });
        sdk::LaunchTemplateCapacityReservationSpecificationRequest::builder()
            .set_capacity_reservation_preference(
                data.capacity_reservation_preference
                    .map(reservation_preference),
            )
            .set_capacity_reservation_target(target)
            .build()
    });
    let market = data.market_type.map(|market| {
        sdk::LaunchTemplateInstanceMarketOptionsRequest::builder()
            .market_type(market_type(market))
            .build()
    });
    let volumes: Vec<_> = data.block_device_mappings.into_iter().map(volume).collect();
    let interfaces: Vec<_> = data.network_interfaces.into_iter().map(interface).collect();
    let placement = data.placement.map(|placement| {
        sdk::LaunchTemplatePlacementRequest::builder()
            .set_group_id(placement.group_id)
            .set_partition_number(
                placement
                    .partition_number
                    .and_then(|n| i32::try_from(n).ok()),
            )
            .build()
    });
    let monitoring = data.monitoring_enabled.map(|enabled| {
        sdk::LaunchTemplatesMonitoringRequest::builder()
            .enabled(enabled)
            .build()
    });
    sdk::RequestLaunchTemplateData::builder()
        .set_image_id(data.image_id)
        .set_iam_instance_profile(profile)
        .set_security_group_ids(
            (!data.security_group_ids.is_empty()).then_some(data.security_group_ids),
        )
        .set_user_data(data.user_data)
        .set_tag_specifications((!tag_specifications.is_empty()).then_some(tag_specifications))
        .set_capacity_reservation_specification(reservation)
        .set_instance_market_options(market)
        .set_block_device_mappings((!volumes.is_empty()).then_some(volumes))
        .set_metadata_options(data.metadata_options.map(metadata))
        .set_monitoring(monitoring)
        .set_network_interfaces((!interfaces.is_empty()).then_some(interfaces))
        .set_placement(placement)
        .build()
}

fn reservation_preference(p: CapacityReservationPreference) -> sdk::CapacityReservationPreference {
    match p {
        CapacityReservationPreference::CapacityReservationsOnly => {
            sdk::CapacityReservationPreference::CapacityReservationsOnly
        }
        CapacityReservationPreference::Open => sdk::CapacityReservationPreference::Open,
        CapacityReservationPreference::None => sdk::CapacityReservationPreference::None,
    }
}

fn market_type(m: MarketType) -> sdk::MarketType {
    match m {
        MarketType::Spot => sdk::MarketType::Spot,
        MarketType::CapacityBlock => sdk::MarketType::CapacityBlock,
        MarketType::InterruptibleCapacityReservation => {
            sdk::MarketType::InterruptibleCapacityReservation
        }
    }
}

/// A 64-bit count as the SDK's 32-bit one, saturating (EC2 refuses values
/// that large, naming the field, rather than taking a wrapped one).
fn int(value: Option<i64>) -> Option<i32> {
    value.map(|v| i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX }))
}

fn volume(
    mapping: LaunchTemplateBlockDeviceMapping,
) -> sdk::LaunchTemplateBlockDeviceMappingRequest {
    let ebs = mapping.ebs.map(|ebs| {
        sdk::LaunchTemplateEbsBlockDeviceRequest::builder()
            .set_delete_on_termination(ebs.delete_on_termination)
            .set_encrypted(ebs.encrypted)
            .set_volume_type(ebs.volume_type.as_deref().map(sdk::VolumeType::from))
            .set_iops(int(ebs.iops))
            .set_throughput(int(ebs.throughput))
            .set_kms_key_id(ebs.kms_key_id)
            .set_snapshot_id(ebs.snapshot_id)
            .set_volume_initialization_rate(int(ebs.volume_initialization_rate))
            .set_volume_size(int(ebs.volume_size))
            .build()
    });
    sdk::LaunchTemplateBlockDeviceMappingRequest::builder()
        .set_device_name(mapping.device_name)
        .set_ebs(ebs)
        .build()
}

fn metadata(
    options: LaunchTemplateMetadataOptions,
) -> sdk::LaunchTemplateInstanceMetadataOptionsRequest {
    sdk::LaunchTemplateInstanceMetadataOptionsRequest::builder()
        .set_http_endpoint(
            options
                .http_endpoint
                .as_deref()
                .map(sdk::LaunchTemplateInstanceMetadataEndpointState::from),
        )
        .set_http_protocol_ipv6(
            options
                .http_protocol_ipv6
                .as_deref()
                .map(sdk::LaunchTemplateInstanceMetadataProtocolIpv6::from),
        )
        .set_http_put_response_hop_limit(int(options.http_put_response_hop_limit))
        .set_http_tokens(
            options
                .http_tokens
                .as_deref()
                .map(sdk::LaunchTemplateHttpTokensState::from),
        )
        .set_instance_metadata_tags(
            options
                .instance_metadata_tags
                .as_deref()
                .map(sdk::LaunchTemplateInstanceMetadataTagsState::from),
        )
        .build()
}

fn interface(
    nic: LaunchTemplateNetworkInterface,
) -> sdk::LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
    sdk::LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
        .set_network_card_index(int(nic.network_card_index))
        .set_device_index(int(nic.device_index))
        .set_interface_type(nic.interface_type)
        .set_associate_public_ip_address(nic.associate_public_ip_address)
        .set_ipv4_prefix_count(int(nic.ipv4_prefix_count))
        .set_ipv6_prefix_count(int(nic.ipv6_prefix_count))
        .set_ipv6_address_count(int(nic.ipv6_address_count))
        .set_primary_ipv6(nic.primary_ipv6)
        .set_groups((!nic.groups.is_empty()).then_some(nic.groups))
        .build()
}
