//! The status of an `EC2NodeClass`: what its selector terms resolved to.

use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::api::Condition;
use serde::{Deserialize, Serialize};

use super::other_fields::OtherFields;

/// Condition types an EC2NodeClass's `Ready` rests on.
pub mod condition_types {
    /// Some subnet was found.
    pub const SUBNETS_READY: &str = "SubnetsReady";
    /// Some security group was found.
    pub const SECURITY_GROUPS_READY: &str = "SecurityGroupsReady";
    /// Some image was found.
    pub const AMIS_READY: &str = "AMIsReady";
    /// The instance profile exists.
    pub const INSTANCE_PROFILE_READY: &str = "InstanceProfileReady";
    /// The capacity reservations were resolved (with the `ReservedCapacity`
    /// gate).
    pub const CAPACITY_RESERVATIONS_READY: &str = "CapacityReservationsReady";
    /// The spec passed the controller's validation (launch authorisation,
    /// kubelet configuration).
    pub const VALIDATION_SUCCEEDED: &str = "ValidationSucceeded";
    /// The placement group was resolved.
    pub const PLACEMENT_GROUP_READY: &str = "PlacementGroupReady";
}

/// The status of an [`EC2NodeClass`](super::EC2NodeClass).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EC2NodeClassStatus {
    /// The subnets the terms select, most free addresses first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnets: Option<Vec<Subnet>>,
    /// The security groups the terms select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_groups: Option<Vec<SecurityGroup>>,
    /// The capacity reservations the terms select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservations: Option<Vec<CapacityReservation>>,
    /// The images the terms select, non-deprecated and newest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amis: Option<Vec<Ami>>,
    /// The instance profile nodes get.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_profile: Option<String>,
    /// `Ready` and the conditions behind it (see [`condition_types`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Every other status field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A resolved subnet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Subnet {
    /// The subnet's ID.
    #[serde(default)]
    pub id: String,
    /// Its availability zone, e.g. `us-west-2a`.
    #[serde(default)]
    pub zone: String,
    /// Its zone's ID, e.g. `usw2-az1`.
    #[serde(default, rename = "zoneID", skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A resolved security group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecurityGroup {
    /// The group's ID.
    #[serde(default)]
    pub id: String,
    /// The group's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A resolved image and the nodes it is for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ami {
    /// The image's ID.
    #[serde(default)]
    pub id: String,
    /// The image's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the image is deprecated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    /// The instance types it is for (arch, GPU, accelerators), as node
    /// selector requirements.
    #[serde(default)]
    pub requirements: Vec<NodeSelectorRequirement>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// A resolved capacity reservation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityReservation {
    /// The zone it is in.
    #[serde(default)]
    pub availability_zone: String,
    /// When it ends, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<Time>,
    /// Its ID, `cr-...`.
    #[serde(default)]
    pub id: String,
    /// `open` or `targeted`.
    #[serde(default)]
    pub instance_match_criteria: String,
    /// The instance type it reserves.
    #[serde(default)]
    pub instance_type: String,
    /// The owning account.
    #[serde(default, rename = "ownerID")]
    pub owner_id: String,
    /// `default` or `capacity-block`; `default` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation_type: Option<String>,
    /// Whether EC2 may interrupt instances in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruptible: Option<bool>,
    /// `active` or `expiring`; `active` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

impl CapacityReservation {
    /// Whether this is a capacity block (`reservationType: capacity-block`).
    pub fn is_capacity_block(&self) -> bool {
        self.reservation_type.as_deref() == Some("capacity-block")
    }

    /// Whether it is within EC2's reclaim window (`state: expiring`).
    pub fn is_expiring(&self) -> bool {
        self.state.as_deref() == Some("expiring")
    }
}
