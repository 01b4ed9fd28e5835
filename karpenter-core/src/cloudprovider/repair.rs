//! Repair policies: node conditions that mean a node should be replaced, as
//! upstream's `cloudprovider.RepairPolicy` (node repair,
//! `pkg/controllers/node/health`).

use std::time::Duration;

/// A node condition that, held for longer than its toleration, makes the
/// node be replaced (upstream `RepairPolicy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairPolicy {
    /// The node condition's `type`, e.g. `Ready`.
    pub condition_type: String,
    /// The condition's `status` that is unhealthy, e.g. `False` or `Unknown`.
    pub condition_status: String,
    /// How long the condition may hold (since its `lastTransitionTime`)
    /// before the node is replaced.
    pub toleration: Duration,
    /// Whether the condition is a notice that the instance is going away
    /// (a spot eviction, Azure's `PreemptionScheduled`): the plan gives such
    /// replacements the reason `Interrupted` rather than `Unhealthy`.
    pub interruption: bool,
}

impl RepairPolicy {
    /// A policy for an unhealthy condition.
    pub fn unhealthy(condition_type: &str, condition_status: &str, toleration: Duration) -> Self {
        RepairPolicy {
            condition_type: condition_type.to_owned(),
            condition_status: condition_status.to_owned(),
            toleration,
            interruption: false,
        }
    }

    /// A policy for an interruption notice.
    pub fn interruption(
        condition_type: &str,
        condition_status: &str,
        toleration: Duration,
    ) -> Self {
        RepairPolicy {
            interruption: true,
            ..RepairPolicy::unhealthy(condition_type, condition_status, toleration)
        }
    }
}
