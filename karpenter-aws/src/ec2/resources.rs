//! The resources a NodeClass resolves to, read by ID and filters:
//! subnets, security groups, images and capacity reservations, in the AWS
//! SDK's names.

use jiff::Timestamp;

use super::filter::{Filter, Tag};

/// The input of the describe calls that take IDs and filters
/// (`DescribeSubnets`, `DescribeSecurityGroups`, `DescribeImages`,
/// `DescribeCapacityReservations`, `DescribeInstances`, ...): the named
/// resources (all when empty) that match every filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInput {
    /// The resources' IDs.
    pub ids: Vec<String>,
    /// Filters.
    pub filters: Vec<Filter>,
}

/// `DescribeSubnets`' input.
pub type DescribeSubnetsInput = DescribeInput;
/// `DescribeSecurityGroups`' input.
pub type DescribeSecurityGroupsInput = DescribeInput;
/// `DescribeCapacityReservations`' input.
pub type DescribeCapacityReservationsInput = DescribeInput;

/// A subnet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subnet {
    /// `subnet-…`.
    pub subnet_id: String,
    /// `vpc-…`.
    pub vpc_id: String,
    /// Its zone's name.
    pub availability_zone: String,
    /// Its zone's ID.
    pub availability_zone_id: String,
    /// Free IPv4 addresses.
    pub available_ip_address_count: u32,
    /// Tags.
    pub tags: Vec<Tag>,
}

/// `DescribeSubnetsOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeSubnetsOutput {
    /// The subnets.
    pub subnets: Vec<Subnet>,
}

/// A security group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SecurityGroup {
    /// `sg-…`.
    pub group_id: String,
    /// Its name.
    pub group_name: String,
    /// `vpc-…`.
    pub vpc_id: String,
    /// Tags.
    pub tags: Vec<Tag>,
}

/// `DescribeSecurityGroupsOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeSecurityGroupsOutput {
    /// The groups.
    pub security_groups: Vec<SecurityGroup>,
}

/// `DescribeImages`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeImagesInput {
    /// `ami-…` IDs (all when empty).
    pub image_ids: Vec<String>,
    /// Owner account IDs or aliases (`self`, `amazon`); any when empty.
    pub owners: Vec<String>,
    /// Filters (`name`, `architecture`, `tag:<key>`, ...).
    pub filters: Vec<Filter>,
}

/// An image (AMI).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// `ami-…`.
    pub image_id: String,
    /// Its name.
    pub name: String,
    /// `x86_64` or `arm64`.
    pub architecture: String,
    /// The owner's account ID.
    pub owner_id: String,
    /// When it was created.
    pub creation_date: Option<Timestamp>,
    /// When it is deprecated, if it is.
    pub deprecation_time: Option<Timestamp>,
    /// `available`, `pending`, ...
    pub state: String,
    /// Tags.
    pub tags: Vec<Tag>,
}

/// `DescribeImagesOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeImagesOutput {
    /// The images.
    pub images: Vec<Image>,
}

/// A capacity reservation (ODCR or capacity block).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapacityReservation {
    /// `cr-…`.
    pub capacity_reservation_id: String,
    /// The owner's account ID.
    pub owner_id: String,
    /// The instance type it holds.
    pub instance_type: String,
    /// Its zone's name.
    pub availability_zone: String,
    /// Its zone's ID.
    pub availability_zone_id: String,
    /// Instances it can still launch.
    pub available_instance_count: u32,
    /// Instances it holds in all.
    pub total_instance_count: u32,
    /// `active`, `expired`, ...
    pub state: String,
    /// `default` or `capacity-block`.
    pub reservation_type: String,
    /// `targeted` or `open`.
    pub instance_match_criteria: String,
    /// Whether its instances may be interrupted (an interruptible ODCR).
    pub interruptible: bool,
    /// When it ends, if it does.
    pub end_date: Option<Timestamp>,
    /// Tags.
    pub tags: Vec<Tag>,
}

/// `DescribeCapacityReservationsOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeCapacityReservationsOutput {
    /// The reservations.
    pub capacity_reservations: Vec<CapacityReservation>,
}
