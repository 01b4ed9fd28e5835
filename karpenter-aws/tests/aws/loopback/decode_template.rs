//! `CreateLaunchTemplate`'s input read back from the form: the template's
//! data as `SdkEc2` writes it.

use karpenter_aws::ec2::{
    CapacityReservationPreference, CreateLaunchTemplateInput, LaunchTemplateBlockDeviceMapping,
    LaunchTemplateData, LaunchTemplateEbsBlockDevice, LaunchTemplateMetadataOptions,
    LaunchTemplateNetworkInterface, LaunchTemplatePlacement, MarketType,
};

use super::decode::tag_specifications;
use super::form::{BadRequest, Form};

pub(crate) fn create_launch_template(form: &Form) -> Result<CreateLaunchTemplateInput, BadRequest> {
    let data = form
        .member("LaunchTemplateData")
        .ok_or_else(|| BadRequest::missing("LaunchTemplateData"))?;
    Ok(CreateLaunchTemplateInput {
        launch_template_name: form.required("LaunchTemplateName")?,
        launch_template_data: template_data(&data)?,
        tag_specifications: tag_specifications(form, "TagSpecification")?,
    })
}

fn template_data(data: &Form) -> Result<LaunchTemplateData, BadRequest> {
    let preference = data.get("CapacityReservationSpecification.CapacityReservationPreference");
    let capacity_reservation_preference = match preference.as_deref() {
        None => None,
        Some("capacity-reservations-only") => {
            Some(CapacityReservationPreference::CapacityReservationsOnly)
        }
        Some("open") => Some(CapacityReservationPreference::Open),
        Some("none") => Some(CapacityReservationPreference::None),
        Some(other) => {
            return Err(BadRequest::invalid(
                &data.name("CapacityReservationSpecification.CapacityReservationPreference"),
                other,
            ));
        }
    };
    let market_type = match data.get("InstanceMarketOptions.MarketType").as_deref() {
        None => None,
        Some("spot") => Some(MarketType::Spot),
        Some("capacity-block") => Some(MarketType::CapacityBlock),
        Some("interruptible-capacity-reservation") => {
            Some(MarketType::InterruptibleCapacityReservation)
        }
        Some(other) => {
            return Err(BadRequest::invalid(
                &data.name("InstanceMarketOptions.MarketType"),
                other,
            ));
        }
    };
    Ok(LaunchTemplateData {
        image_id: data.get("ImageId"),
        iam_instance_profile: data.get("IamInstanceProfile.Name"),
        security_group_ids: data.list("SecurityGroupId")?,
        user_data: data.get("UserData"),
        tag_specifications: tag_specifications(data, "TagSpecification")?,
        capacity_reservation_id: data.get(
            "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId",
        ),
        capacity_reservation_preference,
        market_type,
        block_device_mappings: data
            .items("BlockDeviceMapping")?
            .iter()
            .map(volume)
            .collect::<Result<_, _>>()?,
        metadata_options: data
            .member("MetadataOptions")
            .map(|m| metadata(&m))
            .transpose()?,
        monitoring_enabled: data.parsed("Monitoring.Enabled")?,
        network_interfaces: data
            .items("NetworkInterface")?
            .iter()
            .map(interface)
            .collect::<Result<_, _>>()?,
        placement: data
            .member("Placement")
            .map(|p| -> Result<_, BadRequest> {
                Ok(LaunchTemplatePlacement {
                    group_id: p.get("GroupId"),
                    partition_number: p.parsed("PartitionNumber")?,
                })
            })
            .transpose()?,
    })
}

fn volume(mapping: &Form) -> Result<LaunchTemplateBlockDeviceMapping, BadRequest> {
    let ebs = mapping
        .member("Ebs")
        .map(|ebs| {
            Ok::<_, BadRequest>(LaunchTemplateEbsBlockDevice {
                delete_on_termination: ebs.parsed("DeleteOnTermination")?,
                encrypted: ebs.parsed("Encrypted")?,
                volume_type: ebs.get("VolumeType"),
                iops: ebs.parsed("Iops")?,
                throughput: ebs.parsed("Throughput")?,
                kms_key_id: ebs.get("KmsKeyId"),
                snapshot_id: ebs.get("SnapshotId"),
                volume_initialization_rate: ebs.parsed("VolumeInitializationRate")?,
                volume_size: ebs.parsed("VolumeSize")?,
            })
        })
        .transpose()?;
    Ok(LaunchTemplateBlockDeviceMapping {
        device_name: mapping.get("DeviceName"),
        ebs,
    })
}

fn metadata(options: &Form) -> Result<LaunchTemplateMetadataOptions, BadRequest> {
    Ok(LaunchTemplateMetadataOptions {
        http_endpoint: options.get("HttpEndpoint"),
        http_protocol_ipv6: options.get("HttpProtocolIpv6"),
        http_put_response_hop_limit: options.parsed("HttpPutResponseHopLimit")?,
        http_tokens: options.get("HttpTokens"),
        instance_metadata_tags: options.get("InstanceMetadataTags"),
    })
}

fn interface(nic: &Form) -> Result<LaunchTemplateNetworkInterface, BadRequest> {
    Ok(LaunchTemplateNetworkInterface {
        network_card_index: nic.parsed("NetworkCardIndex")?,
        device_index: nic.parsed("DeviceIndex")?,
        interface_type: nic.get("InterfaceType"),
        associate_public_ip_address: nic.parsed("AssociatePublicIpAddress")?,
        ipv4_prefix_count: nic.parsed("Ipv4PrefixCount")?,
        ipv6_prefix_count: nic.parsed("Ipv6PrefixCount")?,
        ipv6_address_count: nic.parsed("Ipv6AddressCount")?,
        primary_ipv6: nic.parsed("PrimaryIpv6")?,
        groups: nic.list("SecurityGroupId")?,
    })
}
