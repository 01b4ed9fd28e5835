//! `CreateFleet` (always `Type=instant`) and the launch template calls, in
//! the AWS SDK's names.

use jiff::Timestamp;
use serde::Serialize;

use super::filter::Tag;
use super::template_parts::{
    LaunchTemplateBlockDeviceMapping, LaunchTemplateMetadataOptions,
    LaunchTemplateNetworkInterface, LaunchTemplatePlacement,
};

/// What capacity a fleet launches (`DefaultTargetCapacityType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetCapacityType {
    /// Spot.
    Spot,
    /// On-demand (also launches into a targeted ODCR).
    #[default]
    OnDemand,
    /// A capacity block.
    CapacityBlock,
    /// An interruptible capacity reservation.
    ReservedCapacity,
}

impl TargetCapacityType {
    /// AWS's value (`spot`, `on-demand`, `capacity-block`,
    /// `reserved-capacity`).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetCapacityType::Spot => "spot",
            TargetCapacityType::OnDemand => "on-demand",
            TargetCapacityType::CapacityBlock => "capacity-block",
            TargetCapacityType::ReservedCapacity => "reserved-capacity",
        }
    }
}

/// `SpotOptions.AllocationStrategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpotAllocationStrategy {
    /// The cheapest pools with capacity: upstream's default.
    #[default]
    PriceCapacityOptimized,
    /// By override priority, lowest first: upstream's choice when a
    /// NodeOverlay priced the offerings.
    CapacityOptimizedPrioritized,
    /// The pool with most capacity.
    CapacityOptimized,
    /// The cheapest pool.
    LowestPrice,
}

/// `OnDemandOptions.AllocationStrategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnDemandAllocationStrategy {
    /// The cheapest override (upstream sets the priority to the price).
    #[default]
    LowestPrice,
    /// By override priority, lowest first.
    Prioritized,
}

/// One instance type in one subnet, as a fleet may launch it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetLaunchTemplateOverrides {
    /// The type.
    pub instance_type: String,
    /// The subnet (which fixes the zone).
    pub subnet_id: String,
    /// The zone's name.
    pub availability_zone: String,
    /// The image, overriding the template's.
    pub image_id: Option<String>,
    /// Lower is preferred; upstream sets the offering's price.
    pub priority: Option<f64>,
}

/// A launch template and the overrides launched from it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetLaunchTemplateConfig {
    /// The template's name.
    pub launch_template_name: String,
    /// Its version (`$Latest`).
    pub version: String,
    /// The (type, subnet) choices.
    pub overrides: Vec<FleetLaunchTemplateOverrides>,
}

/// Tags for the resources of one kind a call creates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TagSpecification {
    /// `instance`, `volume`, `fleet`, `launch-template`, ...
    pub resource_type: String,
    /// The tags.
    pub tags: Vec<Tag>,
}

/// `CreateFleet`'s input, for a fleet of `Type=instant`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CreateFleetInput {
    /// The templates and their overrides.
    pub launch_template_configs: Vec<FleetLaunchTemplateConfig>,
    /// `TargetCapacitySpecification.TotalTargetCapacity` (upstream: 1).
    pub total_target_capacity: u32,
    /// `TargetCapacitySpecification.DefaultTargetCapacityType`.
    pub default_target_capacity_type: TargetCapacityType,
    /// `SpotOptions.AllocationStrategy`, read for spot fleets.
    pub spot_allocation_strategy: SpotAllocationStrategy,
    /// `OnDemandOptions.AllocationStrategy`, read for the other fleets.
    pub on_demand_allocation_strategy: OnDemandAllocationStrategy,
    /// `ReservedCapacityOptions.ReservationTypes =
    /// [interruptible-capacity-reservation]`, set with
    /// [`TargetCapacityType::ReservedCapacity`].
    pub interruptible_capacity_reservation: bool,
    /// Tags for the instance, volume and fleet.
    pub tag_specifications: Vec<TagSpecification>,
    /// `Context`, from the NodeClass.
    pub context: Option<String>,
}

/// Instances one override launched.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CreateFleetInstance {
    /// `i-…`.
    pub instance_ids: Vec<String>,
    /// Their type.
    pub instance_type: String,
    /// The override that launched them.
    pub launch_template_and_overrides: FleetLaunchTemplateOverrides,
    /// `spot` or `on-demand`.
    pub lifecycle: String,
}

/// Why one override launched nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CreateFleetError {
    /// AWS's error code (`InsufficientInstanceCapacity`, ...).
    pub error_code: String,
    /// AWS's message.
    pub error_message: String,
    /// The override.
    pub launch_template_and_overrides: FleetLaunchTemplateOverrides,
    /// `spot` or `on-demand`.
    pub lifecycle: String,
}

/// `CreateFleetOutput`: what launched and what failed, per override.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CreateFleetOutput {
    /// `fleet-…`.
    pub fleet_id: String,
    /// The launches.
    pub instances: Vec<CreateFleetInstance>,
    /// The failures.
    pub errors: Vec<CreateFleetError>,
}

/// `RequestLaunchTemplateData`, as far as the provider fills it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateData {
    /// `ami-…`.
    pub image_id: Option<String>,
    /// The instance profile's name.
    pub iam_instance_profile: Option<String>,
    /// `sg-…` IDs.
    pub security_group_ids: Vec<String>,
    /// Base64 user data.
    pub user_data: Option<String>,
    /// Tags for the resources launched from it.
    pub tag_specifications: Vec<TagSpecification>,
    /// `CapacityReservationSpecification.CapacityReservationTarget`: the
    /// reservation a reserved launch must run in.
    pub capacity_reservation_id: Option<String>,
    /// `CapacityReservationSpecification.CapacityReservationPreference`.
    pub capacity_reservation_preference: Option<CapacityReservationPreference>,
    /// `InstanceMarketOptions.MarketType`, for capacity blocks and
    /// interruptible reservations.
    pub market_type: Option<MarketType>,
    /// The volumes (EC2 takes the image's when empty).
    pub block_device_mappings: Vec<LaunchTemplateBlockDeviceMapping>,
    /// The instance metadata service's exposure.
    pub metadata_options: Option<LaunchTemplateMetadataOptions>,
    /// `Monitoring.Enabled`: detailed CloudWatch monitoring.
    pub monitoring_enabled: Option<bool>,
    /// The network interfaces; when given, the security groups are theirs
    /// and `security_group_ids` stays empty, as EC2 requires.
    pub network_interfaces: Vec<LaunchTemplateNetworkInterface>,
    /// `Placement`: the class's placement group, when it names one. Left
    /// out of the name's hash when absent, so templates without one keep
    /// their names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<LaunchTemplatePlacement>,
}

/// `CapacityReservationPreference`: which reservations a launch may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CapacityReservationPreference {
    /// Only the targeted reservation (upstream's reserved launches).
    CapacityReservationsOnly,
    /// Any open reservation that fits (EC2's default).
    Open,
    /// None (upstream's on-demand and spot launches once reservations are
    /// targeted).
    None,
}

/// `InstanceMarketOptions.MarketType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MarketType {
    /// Spot.
    Spot,
    /// A capacity block.
    CapacityBlock,
    /// An interruptible capacity reservation.
    InterruptibleCapacityReservation,
}

/// `CreateLaunchTemplate`'s input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateLaunchTemplateInput {
    /// `karpenter.k8s.aws/<hash>`.
    pub launch_template_name: String,
    /// What it launches.
    pub launch_template_data: LaunchTemplateData,
    /// Tags for the template itself.
    pub tag_specifications: Vec<TagSpecification>,
}

/// A launch template.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchTemplate {
    /// `lt-…`.
    pub launch_template_id: String,
    /// Its name.
    pub launch_template_name: String,
    /// When it was made.
    pub create_time: Timestamp,
    /// Its tags.
    pub tags: Vec<Tag>,
}

/// `DescribeLaunchTemplates`' input: the named templates (all when empty)
/// matching every filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeLaunchTemplatesInput {
    /// Names.
    pub launch_template_names: Vec<String>,
    /// Filters (`tag:<key>`, `launch-template-name`).
    pub filters: Vec<super::filter::Filter>,
}

/// `DescribeLaunchTemplatesOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeLaunchTemplatesOutput {
    /// The templates.
    pub launch_templates: Vec<LaunchTemplate>,
}
