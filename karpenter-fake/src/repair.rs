//! The fake provider's repair policies.

use std::time::Duration;

use karpenter_core::cloudprovider::RepairPolicy;

/// How long the fake provider tolerates an unhealthy condition (upstream's
/// fake provider and the AWS provider use 30 minutes).
const TOLERATION: Duration = Duration::from_secs(30 * 60);

/// The fake provider's repair policies: upstream fake provider's `BadNode`
/// `False`, a kubelet that stopped reporting ready (`Ready` `False` or
/// `Unknown`), each tolerated for 30 minutes; and a spot eviction notice
/// (`PreemptionScheduled` `True`, as AKS sets it) acted on at once as an
/// interruption.
pub fn repair_policies() -> Vec<RepairPolicy> {
    vec![
        RepairPolicy::unhealthy("BadNode", "False", TOLERATION),
        RepairPolicy::unhealthy("Ready", "False", TOLERATION),
        RepairPolicy::unhealthy("Ready", "Unknown", TOLERATION),
        RepairPolicy::interruption("PreemptionScheduled", "True", Duration::ZERO),
    ]
}
