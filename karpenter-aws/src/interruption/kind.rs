//! The kinds of interruption signal, named as upstream's metrics and
//! NodeClaim disruption reasons name them.

use std::fmt;

/// What a signal says about an instance: one per EventBridge event kind, one
/// per failing `DescribeInstanceStatus` category, and a no-op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// An EC2 Spot Instance Interruption Warning: the instance is reclaimed
    /// in two minutes.
    SpotInterrupted,
    /// An EC2 Instance Rebalance Recommendation: the spot instance is at
    /// elevated risk of interruption.
    RebalanceRecommendation,
    /// An AWS Health scheduled change to EC2 instances.
    ScheduledChange,
    /// An instance state change to `stopping` or `stopped`.
    InstanceStopped,
    /// An instance state change to `shutting-down` or `terminated`.
    InstanceTerminated,
    /// An EC2 Capacity Reservation Instance Interruption Warning: the
    /// reservation's owner reclaims the instance.
    CapacityReservationInterrupted,
    /// `DescribeInstanceStatus`: the instance status check failed.
    InstanceStatus,
    /// `DescribeInstanceStatus`: the system status check failed.
    SystemStatus,
    /// `DescribeInstanceStatus`: a scheduled maintenance event.
    EventStatus,
    /// Nothing to act on.
    NoOp,
}

impl Kind {
    /// The name upstream gives the kind in its `message_type` metric label
    /// and as the disruption reason of the NodeClaims it deletes.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SpotInterrupted => "spot_interrupted",
            Kind::RebalanceRecommendation => "rebalance_recommendation",
            Kind::ScheduledChange => "scheduled_change",
            Kind::InstanceStopped => "instance_stopped",
            Kind::InstanceTerminated => "instance_terminated",
            Kind::CapacityReservationInterrupted => "capacity_reservation_interrupted",
            Kind::InstanceStatus => "instance_status",
            Kind::SystemStatus => "system_status",
            Kind::EventStatus => "event_status",
            Kind::NoOp => "no_op",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
