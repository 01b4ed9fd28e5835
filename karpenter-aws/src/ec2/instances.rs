//! Instances: `DescribeInstances`, `TerminateInstances`, `CreateTags` and
//! `DescribeInstanceStatus`, in the AWS SDK's names.

use jiff::Timestamp;

use super::filter::Tag;

/// An instance's state (`InstanceStateName`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum InstanceState {
    /// Starting.
    Pending,
    /// Running.
    #[default]
    Running,
    /// Terminating.
    ShuttingDown,
    /// Gone (still listed for a while).
    Terminated,
    /// Stopping.
    Stopping,
    /// Stopped.
    Stopped,
}

impl InstanceState {
    /// AWS's name (`running`, `shutting-down`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            InstanceState::Pending => "pending",
            InstanceState::Running => "running",
            InstanceState::ShuttingDown => "shutting-down",
            InstanceState::Terminated => "terminated",
            InstanceState::Stopping => "stopping",
            InstanceState::Stopped => "stopped",
        }
    }
}

/// An instance, as far as the provider reads it. The SDK's answer groups
/// instances in reservations; an implementation flattens them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instance {
    /// `i-` and 17 hex digits.
    pub instance_id: String,
    /// Its type.
    pub instance_type: String,
    /// Its image.
    pub image_id: String,
    /// Its state.
    pub state: InstanceState,
    /// When it launched.
    pub launch_time: Timestamp,
    /// `Placement.AvailabilityZone`.
    pub availability_zone: String,
    /// Its subnet.
    pub subnet_id: String,
    /// `SecurityGroups[].GroupId`: the groups its primary network
    /// interface is in, which drift compares with the class's.
    pub security_group_ids: Vec<String>,
    /// `spot` for spot; `None` for on-demand.
    pub instance_lifecycle: Option<String>,
    /// The reservation it runs in, if any.
    pub capacity_reservation_id: Option<String>,
    /// Its tags.
    pub tags: Vec<Tag>,
}

/// `DescribeInstancesOutput`: every page, flattened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInstancesOutput {
    /// The instances.
    pub instances: Vec<Instance>,
}

/// `TerminateInstances`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminateInstancesInput {
    /// The instances.
    pub instance_ids: Vec<String>,
}

/// One instance's state change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceStateChange {
    /// The instance.
    pub instance_id: String,
    /// Before the call.
    pub previous_state: InstanceState,
    /// After it.
    pub current_state: InstanceState,
}

/// `TerminateInstancesOutput`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminateInstancesOutput {
    /// One per instance.
    pub terminating_instances: Vec<InstanceStateChange>,
}

/// `CreateTags`' input: every tag on every resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateTagsInput {
    /// Resource IDs.
    pub resources: Vec<String>,
    /// Tags (a key already there takes the new value).
    pub tags: Vec<Tag>,
}

/// `DescribeInstanceStatus`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInstanceStatusInput {
    /// The instances (all when empty).
    pub instance_ids: Vec<String>,
    /// Filters (`instance-status.status`, `system-status.status`,
    /// `event.code`); upstream sends one call per filter, since a status
    /// must match every filter of a call.
    pub filters: Vec<super::filter::Filter>,
    /// Whether instances that are not running are included.
    pub include_all_instances: bool,
}

/// A scheduled event on an instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceStatusEvent {
    /// `instance-reboot`, `system-maintenance`, `instance-retirement`, ...
    pub code: String,
    /// What AWS says.
    pub description: String,
    /// The earliest start.
    pub not_before: Option<Timestamp>,
}

/// An instance's status checks and events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceStatus {
    /// The instance.
    pub instance_id: String,
    /// Its zone.
    pub availability_zone: String,
    /// Its state.
    pub instance_state: InstanceState,
    /// `InstanceStatus.Status`: `ok`, `impaired`, ...
    pub instance_status: String,
    /// `SystemStatus.Status`.
    pub system_status: String,
    /// When the instance check started failing, if it does.
    pub impaired_since: Option<Timestamp>,
    /// Scheduled events.
    pub events: Vec<InstanceStatusEvent>,
}

/// `DescribeInstanceStatusOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeInstanceStatusOutput {
    /// The statuses.
    pub instance_statuses: Vec<InstanceStatus>,
}
