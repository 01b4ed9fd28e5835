//! Instances read back: `DescribeInstances`, `TerminateInstances` and
//! `DescribeInstanceStatus` answers in this crate's types.

use aws_sdk_ec2::types as sdk;

use super::convert::{tags_in, text, time_in};
use crate::ec2::{
    Instance, InstanceState, InstanceStateChange, InstanceStatus, InstanceStatusEvent,
};

/// An instance state; one EC2 adds later reads as running, the state an
/// instance is in for longest.
fn state(state: Option<&sdk::InstanceState>) -> InstanceState {
    match state.and_then(sdk::InstanceState::name) {
        Some(sdk::InstanceStateName::Pending) => InstanceState::Pending,
        Some(sdk::InstanceStateName::ShuttingDown) => InstanceState::ShuttingDown,
        Some(sdk::InstanceStateName::Terminated) => InstanceState::Terminated,
        Some(sdk::InstanceStateName::Stopping) => InstanceState::Stopping,
        Some(sdk::InstanceStateName::Stopped) => InstanceState::Stopped,
        _ => InstanceState::Running,
    }
}

/// One instance of a `DescribeInstances` reservation.
pub(super) fn instance(instance: &sdk::Instance) -> Instance {
    Instance {
        instance_id: text(instance.instance_id()),
        instance_type: instance
            .instance_type()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default(),
        image_id: text(instance.image_id()),
        state: state(instance.state()),
        launch_time: instance.launch_time().and_then(time_in).unwrap_or_default(),
        availability_zone: text(
            instance
                .placement()
                .and_then(sdk::Placement::availability_zone),
        ),
        subnet_id: text(instance.subnet_id()),
        security_group_ids: instance
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(str::to_owned))
            .collect(),
        instance_lifecycle: instance.instance_lifecycle().map(|l| l.as_str().to_owned()),
        capacity_reservation_id: instance.capacity_reservation_id().map(str::to_owned),
        tags: tags_in(instance.tags()),
    }
}

/// One `TerminateInstances` state change.
pub(super) fn state_change(change: &sdk::InstanceStateChange) -> InstanceStateChange {
    InstanceStateChange {
        instance_id: text(change.instance_id()),
        previous_state: state(change.previous_state()),
        current_state: state(change.current_state()),
    }
}

/// One `DescribeInstanceStatus` entry.
pub(super) fn instance_status(status: &sdk::InstanceStatus) -> InstanceStatus {
    let summaries = [status.instance_status(), status.system_status()];
    let impaired_since = summaries
        .iter()
        .flatten()
        .flat_map(|s| s.details())
        .filter_map(|d| d.impaired_since().and_then(time_in))
        .min();
    InstanceStatus {
        instance_id: text(status.instance_id()),
        availability_zone: text(status.availability_zone()),
        instance_state: state(status.instance_state()),
        instance_status: summary(status.instance_status()),
        system_status: summary(status.system_status()),
        impaired_since,
        events: status.events().iter().map(event).collect(),
    }
}

fn summary(summary: Option<&sdk::InstanceStatusSummary>) -> String {
    summary
        .and_then(sdk::InstanceStatusSummary::status)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_default()
}

fn event(event: &sdk::InstanceStatusEvent) -> InstanceStatusEvent {
    InstanceStatusEvent {
        code: event
            .code()
            .map(|c| c.as_str().to_owned())
            .unwrap_or_default(),
        description: text(event.description()),
        not_before: event.not_before().and_then(time_in),
    }
}
