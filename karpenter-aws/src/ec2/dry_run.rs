//! [`DryRunCall`]: the launch calls the NodeClass validation asks EC2
//! about with `DryRun=true` (its launch template it makes for real), and [`RunInstancesInput`], the one of them
//! the provider never makes for real.

use super::{CreateFleetInput, Operation, TagSpecification};

/// EC2's answer to a dry run the caller is authorized for: the call would
/// have succeeded, nothing was made.
pub const DRY_RUN_OPERATION: &str = "DryRunOperation";

/// EC2's answer to a call (dry run or not) the caller's policies do not
/// allow.
pub const UNAUTHORIZED_OPERATION: &str = "UnauthorizedOperation";

/// `RunInstances`' input as the NodeClass validation sends it: one
/// instance into one subnet, tagged as a launch is, its launch data given
/// in the call (no launch template is named: none need exist for the
/// question to be asked). Only ever sent as a dry run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunInstancesInput {
    /// The image.
    pub image_id: Option<String>,
    /// The instance type.
    pub instance_type: String,
    /// The instance profile's name.
    pub iam_instance_profile: Option<String>,
    /// The subnet of the primary network interface (device index 0).
    pub subnet_id: String,
    /// The security groups of that interface.
    pub security_group_ids: Vec<String>,
    /// The tags of the instance, its volumes and its network interfaces.
    pub tag_specifications: Vec<TagSpecification>,
}

/// A call made with `DryRun=true`: EC2 checks that the caller may make it
/// and makes nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum DryRunCall {
    /// `CreateFleet` of `Type=instant`.
    CreateFleet(Box<CreateFleetInput>),
    /// `RunInstances`.
    RunInstances(RunInstancesInput),
}

impl DryRunCall {
    /// The operation asked about.
    pub fn operation(&self) -> Operation {
        match self {
            DryRunCall::CreateFleet(_) => Operation::CreateFleet,
            DryRunCall::RunInstances(_) => Operation::RunInstances,
        }
    }
}
