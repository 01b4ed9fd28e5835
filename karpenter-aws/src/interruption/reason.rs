//! The Kubernetes events upstream publishes on an interrupted NodeClaim (and
//! its Node, when it has one).

use super::kind::Kind;

/// An event's reason, with the message and type upstream gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventReason {
    /// A spot interruption warning.
    SpotInterrupted,
    /// A spot rebalance recommendation (the only `Normal` one).
    SpotRebalanceRecommendation,
    /// A capacity reservation interruption warning.
    CapacityReservationInstanceInterrupted,
    /// The instance is stopping.
    InstanceStopping,
    /// The instance is terminating.
    InstanceTerminating,
    /// A scheduled change or failing status check.
    InstanceUnhealthy,
    /// The NodeClaim is being deleted because of the interruption.
    TerminatingOnInterruption,
}

impl EventReason {
    /// The event that announces a message of `kind`; none for a no-op.
    pub fn announcing(kind: Kind) -> Option<EventReason> {
        match kind {
            Kind::SpotInterrupted => Some(EventReason::SpotInterrupted),
            Kind::RebalanceRecommendation => Some(EventReason::SpotRebalanceRecommendation),
            Kind::CapacityReservationInterrupted => {
                Some(EventReason::CapacityReservationInstanceInterrupted)
            }
            Kind::InstanceStopped => Some(EventReason::InstanceStopping),
            Kind::InstanceTerminated => Some(EventReason::InstanceTerminating),
            Kind::ScheduledChange
            | Kind::InstanceStatus
            | Kind::SystemStatus
            | Kind::EventStatus => Some(EventReason::InstanceUnhealthy),
            Kind::NoOp => None,
        }
    }

    /// The event's `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventReason::SpotInterrupted => "SpotInterrupted",
            EventReason::SpotRebalanceRecommendation => "SpotRebalanceRecommendation",
            EventReason::CapacityReservationInstanceInterrupted => {
                "CapacityReservationInstanceInterrupted"
            }
            EventReason::InstanceStopping => "InstanceStopping",
            EventReason::InstanceTerminating => "InstanceTerminating",
            EventReason::InstanceUnhealthy => "InstanceUnhealthy",
            EventReason::TerminatingOnInterruption => "TerminatingOnInterruption",
        }
    }

    /// The event's message on the NodeClaim.
    pub fn message(self) -> &'static str {
        match self {
            EventReason::SpotInterrupted => "Spot interruption warning was triggered",
            EventReason::SpotRebalanceRecommendation => {
                "Spot rebalance recommendation was triggered"
            }
            EventReason::CapacityReservationInstanceInterrupted => {
                "Capacity Reservation interruption warning was triggered"
            }
            EventReason::InstanceStopping => "Instance is stopping",
            EventReason::InstanceTerminating => "Instance is terminating",
            EventReason::InstanceUnhealthy => "An unhealthy warning was triggered for the instance",
            EventReason::TerminatingOnInterruption => {
                "Interruption triggered termination for the NodeClaim"
            }
        }
    }

    /// Whether the event is a `Warning` rather than `Normal`.
    pub fn is_warning(self) -> bool {
        self != EventReason::SpotRebalanceRecommendation
    }
}
