//! The parts of `RequestLaunchTemplateData` beyond the image and groups:
//! volumes, the instance metadata service, monitoring and network
//! interfaces, in the AWS SDK's names.

use serde::Serialize;

/// `LaunchTemplateBlockDeviceMappingRequest`: one volume.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateBlockDeviceMapping {
    /// `/dev/xvda`, ...
    pub device_name: Option<String>,
    /// The EBS volume behind the device.
    pub ebs: Option<LaunchTemplateEbsBlockDevice>,
}

/// `LaunchTemplateEbsBlockDeviceRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateEbsBlockDevice {
    /// Whether the volume goes with the instance.
    pub delete_on_termination: Option<bool>,
    /// Whether it is encrypted.
    pub encrypted: Option<bool>,
    /// `gp3`, `io2`, ...
    pub volume_type: Option<String>,
    /// Provisioned IOPS.
    pub iops: Option<i64>,
    /// Throughput in MiB/s.
    pub throughput: Option<i64>,
    /// The KMS key.
    pub kms_key_id: Option<String>,
    /// The snapshot it is made from.
    pub snapshot_id: Option<String>,
    /// The snapshot fetch rate in MiB/s.
    pub volume_initialization_rate: Option<i64>,
    /// The size in GiB, rounded up.
    pub volume_size: Option<i64>,
}

/// `LaunchTemplateInstanceMetadataOptionsRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateMetadataOptions {
    /// `enabled` or `disabled`.
    pub http_endpoint: Option<String>,
    /// `enabled` or `disabled`; unset in regions without IPv6 IMDS.
    pub http_protocol_ipv6: Option<String>,
    /// The PUT response hop limit.
    pub http_put_response_hop_limit: Option<i64>,
    /// `required` or `optional`.
    pub http_tokens: Option<String>,
    /// `enabled` or `disabled` (upstream: always `disabled`).
    pub instance_metadata_tags: Option<String>,
}

/// `LaunchTemplateInstanceNetworkInterfaceSpecificationRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateNetworkInterface {
    /// The network card.
    pub network_card_index: Option<i64>,
    /// The device index on the card.
    pub device_index: Option<i64>,
    /// `interface`, `efa` or `efa-only`; EC2's default when unset.
    pub interface_type: Option<String>,
    /// Whether the interface gets a public IPv4 address.
    pub associate_public_ip_address: Option<bool>,
    /// IPv4 prefixes delegated to the interface.
    pub ipv4_prefix_count: Option<i64>,
    /// IPv6 prefixes delegated to the interface.
    pub ipv6_prefix_count: Option<i64>,
    /// IPv6 addresses assigned to the interface.
    pub ipv6_address_count: Option<i64>,
    /// Whether the first IPv6 address is the primary one.
    pub primary_ipv6: Option<bool>,
    /// The interface's security groups, `sg-…`.
    pub groups: Vec<String>,
}

/// `LaunchTemplatePlacementRequest`: the placement group instances launch
/// into and, for a partition group, the partition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchTemplatePlacement {
    /// `pg-…`.
    pub group_id: Option<String>,
    /// The partition, from 1; `None` lets EC2 choose.
    pub partition_number: Option<u32>,
}
