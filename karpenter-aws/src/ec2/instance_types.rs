//! `DescribeInstanceTypes` and `DescribeInstanceTypeOfferings`: what EC2
//! says the types are and where they are offered, in the AWS SDK's names.

use super::filter::Filter;

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
