//! The instance-status poll as a decision: which instances EC2's
//! `DescribeInstanceStatus` shows broken or scheduled for maintenance.
//!
//! Upstream polls every minute for instances whose instance or system
//! status check is `impaired`, or that have a scheduled event. A failed
//! check counts once it has failed for [`UNHEALTHY_THRESHOLD`] and gets the
//! NodeClaim terminated forcefully; a scheduled event counts at once (its
//! time is often in the future, and a host due for maintenance is vacated
//! now) and gets the NodeClaim deleted. Attached EBS volume checks are
//! ignored: a failing volume may be a pod's, not the node's.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::api::NodeClaim;

use super::action::{ClaimAction, Disposition, claim_actions};
use super::kind::Kind;

/// How long an instance or system status check must have failed before the
/// instance counts as unhealthy.
pub const UNHEALTHY_THRESHOLD: SignedDuration = SignedDuration::from_secs(120);

/// The scheduled event codes the poll asks for: every code EC2 schedules.
pub const SCHEDULED_EVENT_CODES: [&str; 5] = [
    "instance-reboot",
    "system-reboot",
    "system-maintenance",
    "instance-retirement",
    "instance-stop",
];

/// What `DescribeInstanceStatus` says of one instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceHealth {
    /// The instance.
    pub instance_id: String,
    /// Since when the instance status check has failed (the earliest
    /// `impairedSince` of its failed details); `None` when it has not.
    pub instance_status_failed_since: Option<Timestamp>,
    /// Since when the system status check has failed; `None` when it has
    /// not.
    pub system_status_failed_since: Option<Timestamp>,
    /// The codes of its scheduled events, e.g. `system-maintenance`.
    pub scheduled_events: Vec<String>,
}

/// An instance the poll finds unhealthy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unhealthy {
    /// The instance.
    pub instance_id: String,
    /// The failing categories, each counted once in upstream's
    /// `instance_status_unhealthy_total` metric: [`Kind::InstanceStatus`],
    /// [`Kind::SystemStatus`], [`Kind::EventStatus`], in that order.
    pub categories: Vec<Kind>,
    /// Since when: the earliest failure, or now for a scheduled event.
    pub impaired_since: Timestamp,
}

impl Unhealthy {
    /// The category acted on: the first of [`categories`](Self::categories),
    /// so that a failing check's forceful termination wins over a scheduled
    /// event's delete. Upstream handles each category in turn; the first
    /// forceful one has already deleted the NodeClaim, so the others only
    /// add their events.
    pub fn kind(&self) -> Kind {
        self.categories.first().copied().unwrap_or(Kind::NoOp)
    }

    /// How the instance's NodeClaims go.
    pub fn disposition(&self) -> Disposition {
        Disposition::of(self.kind())
    }
}

/// The instances of `statuses` that count as unhealthy at `now`, in
/// `statuses`' order; a repeated instance counts once, as its first entry
/// says.
pub fn unhealthy(statuses: &[InstanceHealth], now: Timestamp) -> Vec<Unhealthy> {
    let mut seen = BTreeSet::new();
    statuses
        .iter()
        .filter(|status| seen.insert(status.instance_id.as_str()))
        .filter_map(|status| assess(status, now))
        .collect()
}

/// Whether `status` counts as unhealthy at `now`, and how.
fn assess(status: &InstanceHealth, now: Timestamp) -> Option<Unhealthy> {
    let failed_long_enough = |since: Option<Timestamp>| {
        since.filter(|&since| now.duration_since(since) >= UNHEALTHY_THRESHOLD)
    };
    let scheduled = status
        .scheduled_events
        .iter()
        .any(|code| SCHEDULED_EVENT_CODES.contains(&code.as_str()));
    let failures = [
        (
            Kind::InstanceStatus,
            failed_long_enough(status.instance_status_failed_since),
        ),
        (
            Kind::SystemStatus,
            failed_long_enough(status.system_status_failed_since),
        ),
        (Kind::EventStatus, scheduled.then_some(now)),
    ];
    let (categories, times): (Vec<Kind>, Vec<Timestamp>) = failures
        .into_iter()
        .filter_map(|(kind, since)| Some((kind, since?)))
        .unzip();
    let impaired_since = times.into_iter().min()?;
    Some(Unhealthy {
        instance_id: status.instance_id.clone(),
        categories,
        impaired_since,
    })
}

/// What the provider does to `claims` for the unhealthy instances
/// `unhealthy`: one action per NodeClaim of each, in order.
pub fn status_actions(unhealthy: &[Unhealthy], claims: &[NodeClaim]) -> Vec<ClaimAction> {
    unhealthy
        .iter()
        .flat_map(|instance| claim_actions(instance.kind(), &[&instance.instance_id], claims))
        .collect()
}
