//! The Azure provider's repair policies (upstream `cloudprovider.go`): a
//! kubelet that stopped reporting ready for 10 minutes, AKS's node health
//! check failing, and a spot eviction notice, the last two at once.

use std::time::Duration;

use karpenter_core::cloudprovider::RepairPolicy;

/// How long a node may report `Ready` `False` or `Unknown` before it is
/// replaced.
const NOT_READY_TOLERATION: Duration = Duration::from_secs(10 * 60);

/// The node conditions that get an AKS node replaced (upstream
/// `cloudprovider.go`): a kubelet that stopped reporting ready for 10
/// minutes, AKS's node health check failing, and a spot eviction notice, the
/// last two at once.
pub fn repair_policies() -> Vec<RepairPolicy> {
    vec![
        RepairPolicy::unhealthy("Ready", "False", NOT_READY_TOLERATION),
        RepairPolicy::unhealthy("Ready", "Unknown", NOT_READY_TOLERATION),
        RepairPolicy::unhealthy("kubernetes.azure.com/NodeHealthy", "False", Duration::ZERO),
        RepairPolicy::interruption("PreemptionScheduled", "True", Duration::ZERO),
    ]
}
