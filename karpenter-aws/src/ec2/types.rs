//! The inputs and outputs of EC2's describe calls, named after the AWS
//! SDK's and holding only the fields the provider reads.

use jiff::Timestamp;

/// An EC2 filter: a resource matches when its field `name` has any of
/// `values` (`*` matches any run of characters). `tag:<key>` filters on a
/// tag's value, `tag-key` on tag keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// The field, e.g. `availability-zone`, `tag:karpenter.sh/discovery`.
    pub name: String,
    /// The accepted values.
    pub values: Vec<String>,
}

impl Filter {
    /// A filter on `name` accepting `values`.
    pub fn new<V: Into<String>>(name: &str, values: impl IntoIterator<Item = V>) -> Self {
        Filter {
            name: name.to_owned(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }
}

/// A resource tag.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tag {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

impl Tag {
    /// The tag `key=value`.
    pub fn new(key: &str, value: &str) -> Self {
        Tag {
            key: key.to_owned(),
            value: value.to_owned(),
        }
    }
}

/// `DescribeInstanceTypes`' input: the named types (all when empty) that
/// match every filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInstanceTypesInput {
    /// The types' names.
    pub instance_types: Vec<String>,
    /// Filters (`instance-type`, `processor-info.supported-architecture`,
    /// `bare-metal`, ...).
    pub filters: Vec<Filter>,
}

/// One instance type as `DescribeInstanceTypes` describes it, as far as the
/// provider reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceTypeInfo {
    /// `m5.large`.
    pub instance_type: String,
    /// `VCpuInfo.DefaultVCpus`.
    pub default_vcpus: u32,
    /// `MemoryInfo.SizeInMiB`.
    pub memory_mib: u64,
    /// `ProcessorInfo.SupportedArchitectures` (`x86_64`, `arm64`).
    pub supported_architectures: Vec<String>,
    /// `BareMetal`.
    pub bare_metal: bool,
    /// `Hypervisor` (`nitro`, `xen`); `None` on bare metal.
    pub hypervisor: Option<String>,
    /// `NetworkInfo.MaximumNetworkInterfaces` (of the default card).
    pub maximum_network_interfaces: u32,
    /// `NetworkInfo.Ipv4AddressesPerInterface`.
    pub ipv4_addresses_per_interface: u32,
    /// `NetworkInfo.EfaInfo.MaximumEfaInterfaces`.
    pub maximum_efa_interfaces: u32,
    /// `GpuInfo.Gpus[].Count`, summed.
    pub gpu_count: u32,
    /// `SupportedUsageClasses` (`on-demand`, `spot`).
    pub supported_usage_classes: Vec<String>,
}

/// `DescribeInstanceTypesOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DescribeInstanceTypesOutput {
    /// The matching types.
    pub instance_types: Vec<InstanceTypeInfo>,
}

/// Where an instance type offering is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum LocationType {
    /// The region.
    Region,
    /// A zone by name (`us-east-1a`): what upstream asks for.
    #[default]
    AvailabilityZone,
    /// A zone by ID (`use1-az1`).
    AvailabilityZoneId,
}

/// `DescribeInstanceTypeOfferings`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInstanceTypeOfferingsInput {
    /// What `location` names in the answer.
    pub location_type: LocationType,
    /// Filters (`instance-type`, `location`).
    pub filters: Vec<Filter>,
}

/// One instance type offered in one location.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceTypeOffering {
    /// The type.
    pub instance_type: String,
    /// The kind of `location`.
    pub location_type: LocationType,
    /// The region, zone name or zone ID.
    pub location: String,
}

/// `DescribeInstanceTypeOfferingsOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInstanceTypeOfferingsOutput {
    /// The offerings.
    pub instance_type_offerings: Vec<InstanceTypeOffering>,
}

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

/// `DescribeSpotPriceHistory`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeSpotPriceHistoryInput {
    /// The types (all when empty).
    pub instance_types: Vec<String>,
    /// `Linux/UNIX`, `Linux/UNIX (Amazon VPC)`.
    pub product_descriptions: Vec<String>,
    /// The earliest price wanted; upstream asks for `now` (the current
    /// price).
    pub start_time: Option<Timestamp>,
}

/// One spot price.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpotPrice {
    /// The type.
    pub instance_type: String,
    /// The zone's name.
    pub availability_zone: String,
    /// The product description.
    pub product_description: String,
    /// Per hour (the SDK's string, parsed).
    pub spot_price: f64,
    /// Since when.
    pub timestamp: Timestamp,
}

/// `DescribeSpotPriceHistoryOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DescribeSpotPriceHistoryOutput {
    /// The prices.
    pub spot_price_history: Vec<SpotPrice>,
}
