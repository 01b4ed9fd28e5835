//! The instance-status poll over EC2: `DescribeInstanceStatus` with
//! upstream's filters, read into [`InstanceHealth`] and decided by
//! [`unhealthy`] and [`status_actions`].

use jiff::Timestamp;
use karpenter_core::api::NodeClaim;

use super::action::ClaimAction;
use super::status::{InstanceHealth, SCHEDULED_EVENT_CODES, Unhealthy, status_actions, unhealthy};
use crate::ec2::{
    DescribeInstanceStatusInput, DescribeInstanceStatusOutput, Ec2Api, Ec2Error, Filter,
    InstanceStatus,
};

/// The summary status EC2 gives a failing check.
const IMPAIRED: &str = "impaired";

/// What one poll found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusPoll {
    /// The instances found unhealthy, for upstream's
    /// `instance_status_unhealthy_total` metric: one per instance, in the
    /// order EC2 answered.
    pub unhealthy: Vec<Unhealthy>,
    /// What to do to the NodeClaims given to the poll.
    pub actions: Vec<ClaimAction>,
}

/// The filter sets of upstream's poll, one call each: EC2 requires a status
/// to match every filter of a call, and the poll wants instances with a
/// failed instance check, or a failed system check, or a scheduled event.
pub fn status_filters() -> [Vec<Filter>; 3] {
    [
        vec![Filter::new("instance-status.status", [IMPAIRED])],
        vec![Filter::new("system-status.status", [IMPAIRED])],
        vec![Filter::new("event.code", SCHEDULED_EVENT_CODES)],
    ]
}

/// What `output` says of each instance's health, in its order.
///
/// A check whose summary status is `impaired` failed since the status's
/// `impaired_since`; without one it counts as failed since the Unix epoch,
/// so past the threshold at once, as upstream reads a missing time as Go's
/// zero time. Other summaries (`ok`, `initializing`, `insufficient-data`)
/// have not failed. Every scheduled event's code is kept; attached EBS
/// volume checks are not read at all.
pub fn instance_health(output: &DescribeInstanceStatusOutput) -> Vec<InstanceHealth> {
    output.instance_statuses.iter().map(health_of).collect()
}

/// One instance's health.
fn health_of(status: &InstanceStatus) -> InstanceHealth {
    let failed_since = |summary: &str| {
        (summary == IMPAIRED).then(|| status.impaired_since.unwrap_or(Timestamp::UNIX_EPOCH))
    };
    InstanceHealth {
        instance_id: status.instance_id.clone(),
        instance_status_failed_since: failed_since(&status.instance_status),
        system_status_failed_since: failed_since(&status.system_status),
        scheduled_events: status.events.iter().map(|e| e.code.clone()).collect(),
    }
}

/// One poll of `ec2` at `now`: the three calls of [`status_filters`] (running
/// instances only, as upstream), the instances they show unhealthy (an
/// instance two calls show counts once, as the first shows it), and what to
/// do to `claims` for them.
///
/// # Errors
///
/// The first failed call's error; nothing is decided from a partial answer.
/// Upstream logs an `UnauthorizedOperation` and carries on; that is the
/// caller's choice here, by [`Ec2Error::code`].
pub async fn poll_instance_status(
    ec2: &dyn Ec2Api,
    claims: &[NodeClaim],
    now: Timestamp,
) -> Result<StatusPoll, Ec2Error> {
    let mut health = Vec::new();
    for filters in status_filters() {
        let input = DescribeInstanceStatusInput {
            instance_ids: Vec::new(),
            filters,
            include_all_instances: false,
        };
        health.extend(instance_health(&ec2.describe_instance_status(input).await?));
    }
    let unhealthy = unhealthy(&health, now);
    let actions = status_actions(&unhealthy, claims);
    Ok(StatusPoll { unhealthy, actions })
}
