//! [`Requeue`]: when each part of the status wants its next reconcile, on
//! upstream's periods, and the soonest of them.

use jiff::{SignedDuration, Timestamp};
use karpenter_core::api::{ConditionStatus, Conditions};

use crate::nodeclass::{EC2NodeClass, EC2NodeClassStatus, condition_types as types};

/// Upstream's period while something was not found: a subnet, group or
/// image tagged later is picked up within a minute.
pub const NOT_FOUND_PERIOD: SignedDuration = SignedDuration::from_mins(1);

/// Upstream's period for subnets, found or not: their free addresses
/// change with every launch.
pub const SUBNET_PERIOD: SignedDuration = SignedDuration::from_mins(1);

/// Upstream's period for security groups and images once found.
pub const FOUND_PERIOD: SignedDuration = SignedDuration::from_mins(5);

/// Upstream's period for capacity reservations, unless one ends sooner.
pub const CAPACITY_RESERVATION_PERIOD: SignedDuration = SignedDuration::from_mins(1);

/// When each part of a reconciled status wants to be reconciled again,
/// as upstream's per-part reconcilers answer.
///
/// The placement group has no period of its own: upstream's reconciler
/// asks for none (only a retry after a failed lookup), and the class comes
/// round every minute for its subnets, when the group is looked up again,
/// as upstream's one-minute placement group cache allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requeue {
    /// Subnets: every minute.
    pub subnets: SignedDuration,
    /// Security groups: 5 minutes, 1 when the terms matched none.
    pub security_groups: SignedDuration,
    /// Images: 5 minutes, 1 when none were found; `None` when the alias
    /// is refused for the cluster's Kubernetes version, which upstream
    /// treats as a terminal error.
    pub amis: Option<SignedDuration>,
    /// Capacity reservations: a minute, or until the soonest reservation
    /// ends if that is sooner (zero when one has already ended); `None`
    /// without the `ReservedCapacity` gate, which skips them.
    pub capacity_reservations: Option<SignedDuration>,
}

impl Requeue {
    /// When to reconcile the class again: the soonest part, as upstream
    /// takes the least of its reconcilers' results. `None` when the alias
    /// is refused: upstream's terminal error stops the periodic reconcile
    /// until the class (or the controller) changes.
    pub fn after(&self) -> Option<SignedDuration> {
        let amis = self.amis?;
        let parts = [Some(self.subnets), Some(self.security_groups), Some(amis)];
        parts
            .into_iter()
            .chain([self.capacity_reservations])
            .flatten()
            .min()
    }
}

/// Whether condition `type_` is False for `reason` in `status`.
fn is_false_for(status: &EC2NodeClassStatus, type_: &str, reason: &str) -> bool {
    status.conditions.find(type_).is_some_and(|condition| {
        condition.status == ConditionStatus::False && condition.reason.as_deref() == Some(reason)
    })
}

/// The requeue of `status`, just resolved for `class` at `now`, with or
/// without the `ReservedCapacity` gate.
pub(crate) fn requeue(
    class: &EC2NodeClass,
    status: &EC2NodeClassStatus,
    now: Timestamp,
    reserved_capacity: bool,
) -> Requeue {
    let no_groups =
        status.security_groups.is_none() && !class.spec.security_group_selector_terms.is_empty();
    let amis = if is_false_for(status, types::AMIS_READY, "UnsupportedAlias") {
        None
    } else if status.amis.as_ref().is_none_or(Vec::is_empty) {
        Some(NOT_FOUND_PERIOD)
    } else {
        Some(FOUND_PERIOD)
    };
    Requeue {
        subnets: SUBNET_PERIOD,
        security_groups: if no_groups {
            NOT_FOUND_PERIOD
        } else {
            FOUND_PERIOD
        },
        amis,
        capacity_reservations: reserved_capacity.then(|| reservations_period(status, now)),
    }
}

/// A minute, or the time until the soonest reservation ends if sooner;
/// zero for one already ended.
fn reservations_period(status: &EC2NodeClassStatus, now: Timestamp) -> SignedDuration {
    let soonest = status
        .capacity_reservations
        .iter()
        .flatten()
        .filter_map(|reservation| reservation.end_time.as_ref())
        .map(|end| end.0)
        .min();
    let Some(end) = soonest else {
        return CAPACITY_RESERVATION_PERIOD;
    };
    let left = end.duration_since(now);
    left.clamp(SignedDuration::ZERO, CAPACITY_RESERVATION_PERIOD)
}
