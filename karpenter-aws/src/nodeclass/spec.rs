//! The spec of an `EC2NodeClass` and its selector terms.
//!
//! Every field of upstream's CRD (main at 1d92708) is typed; an `other` map on
//! each object keeps fields this version does not know, so a manifest reads and
//! writes back without loss. Enumerated values stay strings here so that an
//! unknown value reaches [`validate`](super::EC2NodeClass::validate) and is
//! reported with its field, as the API server would, rather than failing the
//! whole read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::devices::{BlockDeviceMapping, MetadataOptions};
use super::kubelet::KubeletConfiguration;
use super::network::{ConnectionTracking, CpuOptions, NetworkInterface, PlacementGroupSelector};
pub use super::other_fields::OtherFields;

/// Tags, as a term selects them or as launched resources carry them.
pub type Tags = BTreeMap<String, String>;

/// The spec of an [`EC2NodeClass`](super::EC2NodeClass): how EC2 nodes are
/// launched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EC2NodeClassSpec {
    /// The subnets nodes may launch into (terms OR, a term's fields AND).
    /// Required, 1 to 30 terms.
    #[serde(default)]
    pub subnet_selector_terms: Vec<SubnetSelectorTerm>,
    /// The security groups nodes get. Required, 1 to 30 terms.
    #[serde(default)]
    pub security_group_selector_terms: Vec<SecurityGroupSelectorTerm>,
    /// The capacity reservations nodes may launch into (up to 30 terms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservation_selector_terms: Option<Vec<CapacityReservationSelectorTerm>>,
    /// The placement group nodes launch into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_group_selector: Option<PlacementGroupSelector>,
    /// Whether nodes get a public IPv4 address (the subnet decides when unset).
    #[serde(
        default,
        rename = "associatePublicIPAddress",
        skip_serializing_if = "Option::is_none"
    )]
    pub associate_public_ip_address: Option<bool>,
    /// IPv4 prefixes assigned to the primary network interface (0 or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_prefix_count: Option<i64>,
    /// The images nodes launch from. Required, 1 to 30 terms; an `alias`
    /// term stands alone.
    #[serde(default)]
    pub ami_selector_terms: Vec<AmiSelectorTerm>,
    /// `AL2`, `AL2023`, `Bottlerocket`, `Custom`, `Windows2019`,
    /// `Windows2022` or `Windows2025`; inferred from an alias when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_family: Option<String>,
    /// User data merged with Karpenter's bootstrap, in the family's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// The IAM role of the instance profile Karpenter creates (exclusive
    /// with `instanceProfile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// An existing instance profile (exclusive with `role`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_profile: Option<String>,
    /// Tags put on launched instances, volumes and launch templates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
    /// The kubelet's configuration on these nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfiguration>,
    /// The volumes attached to nodes (up to 50; the family's default when
    /// unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_device_mappings: Option<Vec<BlockDeviceMapping>>,
    /// `RAID0`: the local NVMe disks striped for the kubelet and containerd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_store_policy: Option<String>,
    /// The network interfaces of launched instances (up to 150).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_interfaces: Option<Vec<NetworkInterface>>,
    /// Whether detailed (1-minute) CloudWatch monitoring is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detailed_monitoring: Option<bool>,
    /// The instance metadata service's exposure; see
    /// [`EC2NodeClass::metadata_options`](super::EC2NodeClass::metadata_options)
    /// for the CRD's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_options: Option<MetadataOptions>,
    /// Idle connection-tracking timeouts of the interfaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_tracking: Option<ConnectionTracking>,
    /// EC2 Fleet's reserved `Context` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Processor options (nested virtualization).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_options: Option<CpuOptions>,
    /// Every other spec field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A term of `subnetSelectorTerms`: by tags, or by ID alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubnetSelectorTerm {
    /// Tags the subnet must carry; the value `*` matches any value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
    /// The subnet's ID, `subnet-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A term of `securityGroupSelectorTerms`: by tags, by ID alone, or by
/// group name alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecurityGroupSelectorTerm {
    /// Tags the group must carry; the value `*` matches any value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
    /// The group's ID, `sg-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The EC2 group name (not its `Name` tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A term of `capacityReservationSelectorTerms`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityReservationSelectorTerm {
    /// Tags the reservation must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
    /// The reservation's ID, `cr-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The owning account, twelve digits.
    #[serde(default, rename = "ownerID", skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
    /// `open` or `targeted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_match_criteria: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A term of `amiSelectorTerms`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmiSelectorTerm {
    /// `family@version`, e.g. `al2023@latest`: the family's EKS-optimised
    /// image. The only term when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Tags the image must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
    /// The image's ID, `ami-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The image's name (wildcards allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The owning accounts (`self`, `amazon`, IDs); `self,amazon` for a
    /// name term without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// An SSM parameter whose value is an image ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssm_parameter: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}
