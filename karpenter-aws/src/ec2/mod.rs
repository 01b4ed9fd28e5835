//! The AWS calls the provider makes: EC2 (and the Pricing API's on-demand
//! prices) behind [`Ec2Api`], the interruption queue (SQS) behind
//! [`QueueApi`], SSM's public parameters behind [`ParameterApi`], with
//! in-memory implementations for tests and simulation ([`InMemoryEc2`],
//! [`InMemoryQueue`], [`InMemoryParameters`]). The implementations over the
//! AWS SDK are in `karpenter_aws::sdk` (feature `sdk`).
//!
//! The inputs and outputs are named after the AWS SDK for Rust's
//! (`aws-sdk-ec2`, `aws-sdk-pricing`, `aws-sdk-sqs`) and hold only the fields
//! the provider uses, so an SDK-backed implementation maps them one to one.

mod dry_run;
mod error;
pub(crate) mod faults;
mod filter;
mod fleet;
mod instance_types;
mod instances;
mod memory;
mod parameters;
mod placement;
mod pricing;
mod queue;
mod resources;
mod spot_prices;
mod template_parts;

#[cfg(test)]
mod tests;

use async_trait::async_trait;

pub use dry_run::{DRY_RUN_OPERATION, DryRunCall, RunInstancesInput, UNAUTHORIZED_OPERATION};
pub use error::{Ec2Error, INSUFFICIENT_CAPACITY_CODES, NO_SUCH_ENTITY, Operation};
pub use filter::{Filter, Tag};
pub use fleet::{
    CapacityReservationPreference, CreateFleetError, CreateFleetInput, CreateFleetInstance,
    CreateFleetOutput, CreateLaunchTemplateInput, DescribeLaunchTemplatesInput,
    DescribeLaunchTemplatesOutput, FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides,
    LaunchTemplate, LaunchTemplateData, MarketType, OnDemandAllocationStrategy,
    SpotAllocationStrategy, TagSpecification, TargetCapacityType,
};
pub use instance_types::{
    DescribeInstanceTypeOfferingsInput, DescribeInstanceTypeOfferingsOutput,
    DescribeInstanceTypesInput, DescribeInstanceTypesOutput, InstanceTypeInfo,
    InstanceTypeOffering, LocationType,
};
pub use instances::{
    CreateTagsInput, DescribeInstanceStatusInput, DescribeInstanceStatusOutput,
    DescribeInstancesOutput, Instance, InstanceState, InstanceStateChange, InstanceStatus,
    InstanceStatusEvent, TerminateInstancesInput, TerminateInstancesOutput,
};
pub use memory::InMemoryEc2;
pub use parameters::{InMemoryParameters, PARAMETER_NOT_FOUND, ParameterApi};
pub use placement::{
    DescribePlacementGroupsInput, DescribePlacementGroupsOutput, PLACEMENT_GROUP_AVAILABLE,
    PLACEMENT_GROUP_UNKNOWN, PlacementGroup,
};
pub use pricing::{
    GetProductsInput, GetProductsOutput, PriceListError, PricingFilter, on_demand_prices,
};
pub use queue::{InMemoryQueue, Message, QueueApi, ReceiveMessageInput};
pub use resources::{
    CapacityReservation, DescribeCapacityReservationsInput, DescribeCapacityReservationsOutput,
    DescribeImagesInput, DescribeImagesOutput, DescribeInput, DescribeSecurityGroupsInput,
    DescribeSecurityGroupsOutput, DescribeSubnetsInput, DescribeSubnetsOutput, Image,
    SecurityGroup, Subnet,
};
pub use spot_prices::{DescribeSpotPriceHistoryInput, DescribeSpotPriceHistoryOutput, SpotPrice};
pub use template_parts::{
    LaunchTemplateBlockDeviceMapping, LaunchTemplateEbsBlockDevice, LaunchTemplateMetadataOptions,
    LaunchTemplateNetworkInterface, LaunchTemplatePlacement,
};

/// What the provider asks of EC2 and of the Pricing API, one method per
/// operation.
///
/// The contract an implementation keeps:
///
/// - **Every page.** A describe call returns all matching resources; the
///   implementation follows `NextToken` itself. One that caps the pages it
///   reads fails with [`Ec2Error::PageLimit`] past the cap rather than
///   answer with part of the list.
/// - **Filters.** A resource is returned when it is named in the input's
///   IDs (or none are named) and matches every [`Filter`]; a filter matches
///   when the field has any of its values. Naming an ID that does not
///   exist is EC2's `*.NotFound` error, as EC2 answers.
/// - **Errors.** A refusal is [`Ec2Error::Service`] with EC2's code and
///   message, throttling is [`Ec2Error::Throttling`], and a failure to
///   reach the service is [`Ec2Error::Transport`] keeping its cause.
/// - **CreateFleet** is always `Type=instant`: the call launches what it
///   can now and answers with the instances launched and one error per
///   override that could not launch; running out of capacity is such an
///   error, not a failed call. A launch template the input names that does
///   not exist fails the call with
///   `InvalidLaunchTemplateName.NotFoundException`.
/// - **Dry runs.** [`dry_run`](Self::dry_run) sends the call with
///   `DryRun=true` and makes nothing: `Ok(())` when EC2 answers
///   `DryRunOperation` (the caller may make it), EC2's own error
///   otherwise, [`UNAUTHORIZED_OPERATION`] when the caller's policies do
///   not allow it.
/// - **Determinism.** Given the same state and input, the same answer, in
///   the same order.
#[async_trait]
pub trait Ec2Api: Send + Sync {
    /// `DescribeInstanceTypes`.
    async fn describe_instance_types(
        &self,
        input: DescribeInstanceTypesInput,
    ) -> Result<DescribeInstanceTypesOutput, Ec2Error>;

    /// `DescribeInstanceTypeOfferings`.
    async fn describe_instance_type_offerings(
        &self,
        input: DescribeInstanceTypeOfferingsInput,
    ) -> Result<DescribeInstanceTypeOfferingsOutput, Ec2Error>;

    /// `DescribeSubnets` (filters `subnet-id`, `availability-zone`,
    /// `tag:<key>`, ...).
    async fn describe_subnets(
        &self,
        input: DescribeSubnetsInput,
    ) -> Result<DescribeSubnetsOutput, Ec2Error>;

    /// `DescribeSecurityGroups` (filters `group-id`, `group-name`,
    /// `tag:<key>`, ...).
    async fn describe_security_groups(
        &self,
        input: DescribeSecurityGroupsInput,
    ) -> Result<DescribeSecurityGroupsOutput, Ec2Error>;

    /// `DescribeImages`.
    async fn describe_images(
        &self,
        input: DescribeImagesInput,
    ) -> Result<DescribeImagesOutput, Ec2Error>;

    /// `DescribeCapacityReservations` (filters `state`, `instance-type`,
    /// `availability-zone`, `tag:<key>`, ...).
    async fn describe_capacity_reservations(
        &self,
        input: DescribeCapacityReservationsInput,
    ) -> Result<DescribeCapacityReservationsOutput, Ec2Error>;

    /// `DescribePlacementGroups` by IDs, names and filters (`state`,
    /// `strategy`, `group-name`, ...). Unlike the other describe calls it
    /// has a single page. A group named (by ID or by name) that does not
    /// exist fails the call with [`PLACEMENT_GROUP_UNKNOWN`], as EC2
    /// answers; one that exists but does not match the filters is simply
    /// not listed.
    async fn describe_placement_groups(
        &self,
        input: DescribePlacementGroupsInput,
    ) -> Result<DescribePlacementGroupsOutput, Ec2Error>;

    /// `CreateFleet` of `Type=instant`.
    async fn create_fleet(&self, input: CreateFleetInput) -> Result<CreateFleetOutput, Ec2Error>;

    /// `CreateLaunchTemplate`; a name already taken is
    /// `InvalidLaunchTemplateName.AlreadyExistsException`.
    async fn create_launch_template(
        &self,
        input: CreateLaunchTemplateInput,
    ) -> Result<LaunchTemplate, Ec2Error>;

    /// `DescribeLaunchTemplates`; a name that does not exist is
    /// `InvalidLaunchTemplateName.NotFoundException`.
    async fn describe_launch_templates(
        &self,
        input: DescribeLaunchTemplatesInput,
    ) -> Result<DescribeLaunchTemplatesOutput, Ec2Error>;

    /// `DeleteLaunchTemplate` by name; the template deleted.
    async fn delete_launch_template(&self, name: &str) -> Result<LaunchTemplate, Ec2Error>;

    /// `DescribeInstances` by IDs and filters (`instance-state-name`,
    /// `tag:<key>`, ...); terminated instances stay listed as EC2 lists
    /// them for a while.
    async fn describe_instances(
        &self,
        input: DescribeInput,
    ) -> Result<DescribeInstancesOutput, Ec2Error>;

    /// `TerminateInstances`.
    async fn terminate_instances(
        &self,
        input: TerminateInstancesInput,
    ) -> Result<TerminateInstancesOutput, Ec2Error>;

    /// `CreateTags`.
    async fn create_tags(&self, input: CreateTagsInput) -> Result<(), Ec2Error>;

    /// `DescribeSpotPriceHistory`: the current price per (type, zone).
    async fn describe_spot_price_history(
        &self,
        input: DescribeSpotPriceHistoryInput,
    ) -> Result<DescribeSpotPriceHistoryOutput, Ec2Error>;

    /// `DescribeInstanceStatus`, for the impaired-instance poll.
    async fn describe_instance_status(
        &self,
        input: DescribeInstanceStatusInput,
    ) -> Result<DescribeInstanceStatusOutput, Ec2Error>;

    /// `call` with `DryRun=true`: `Ok(())` when EC2 answers
    /// [`DRY_RUN_OPERATION`]; nothing is made either way.
    async fn dry_run(&self, call: DryRunCall) -> Result<(), Ec2Error>;

    /// The Pricing API's `GetProducts`; [`on_demand_prices`] reads its
    /// documents.
    async fn get_products(&self, input: GetProductsInput) -> Result<GetProductsOutput, Ec2Error>;
}
