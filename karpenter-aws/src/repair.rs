//! The AWS provider's repair policies (upstream `cloudprovider.go`): the
//! kubelet's `Ready`, and the conditions of the EKS node monitoring agent.

use std::time::Duration;

use karpenter_core::cloudprovider::RepairPolicy;

/// How long a node may report a condition unhealthy before it is replaced.
const TOLERATION: Duration = Duration::from_secs(30 * 60);

/// How long a node's accelerators may report not ready: upstream replaces
/// such a node sooner than the others.
const ACCELERATED_HARDWARE_TOLERATION: Duration = Duration::from_secs(10 * 60);

/// The node monitoring agent's conditions other than the accelerators',
/// each unhealthy when `False`.
const MONITORING_AGENT_CONDITIONS: [&str; 4] = [
    "StorageReady",
    "NetworkingReady",
    "KernelReady",
    "ContainerRuntimeReady",
];

/// The node conditions that get an EKS node replaced (upstream
/// `RepairPolicies`): `Ready` `False` or `Unknown` for 30 minutes,
/// `AcceleratedHardwareReady` `False` for 10, and the node monitoring
/// agent's `StorageReady`, `NetworkingReady`, `KernelReady` and
/// `ContainerRuntimeReady` `False` for 30. None is an interruption notice:
/// the queue's messages carry those.
pub fn repair_policies() -> Vec<RepairPolicy> {
    let mut policies = vec![
        RepairPolicy::unhealthy("Ready", "False", TOLERATION),
        RepairPolicy::unhealthy("Ready", "Unknown", TOLERATION),
        RepairPolicy::unhealthy(
            "AcceleratedHardwareReady",
            "False",
            ACCELERATED_HARDWARE_TOLERATION,
        ),
    ];
    policies.extend(
        MONITORING_AGENT_CONDITIONS
            .iter()
            .map(|condition| RepairPolicy::unhealthy(condition, "False", TOLERATION)),
    );
    policies
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::repair_policies;

    /// The toleration of the policy on `condition` being `status`, if any.
    fn toleration(condition: &str, status: &str) -> Option<Duration> {
        repair_policies()
            .into_iter()
            .find(|policy| policy.condition_type == condition && policy.condition_status == status)
            .map(|policy| policy.toleration)
    }

    #[test]
    fn ready_false_or_unknown_is_tolerated_for_half_an_hour() {
        let half_hour = Some(Duration::from_secs(1800));
        assert_eq!(toleration("Ready", "False"), half_hour);
        assert_eq!(toleration("Ready", "Unknown"), half_hour);
        assert_eq!(toleration("Ready", "True"), None);
    }

    #[test]
    fn accelerators_are_replaced_sooner_than_the_agents_other_conditions() {
        assert_eq!(
            toleration("AcceleratedHardwareReady", "False"),
            Some(Duration::from_secs(600))
        );
        for condition in [
            "StorageReady",
            "NetworkingReady",
            "KernelReady",
            "ContainerRuntimeReady",
        ] {
            assert_eq!(
                toleration(condition, "False"),
                Some(Duration::from_secs(1800)),
                "{condition}"
            );
            assert_eq!(toleration(condition, "Unknown"), None, "{condition}");
        }
    }

    #[test]
    fn there_are_seven_unhealthy_policies_and_no_interruptions() {
        let policies = repair_policies();
        assert_eq!(policies.len(), 7);
        assert!(policies.iter().all(|policy| !policy.interruption));
    }
}
