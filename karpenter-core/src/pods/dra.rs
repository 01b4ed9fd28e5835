//! Dynamic Resource Allocation (DRA): whether a pod claims devices through
//! `ResourceClaim`s ([`has_dra_requirements`]). Provisioning gives such a pod
//! no capacity (see `provisioning::DRA_UNSUPPORTED`).

use k8s_openapi::api::core::v1::{Container, PodSpec};

/// Whether the pod has Dynamic Resource Allocation requirements (upstream
/// `HasDRARequirements`): it lists `resourceClaims`, or a container or init
/// container consumes a claim (`resources.claims`).
///
/// Such a pod gets no capacity, as upstream Karpenter decides with its option
/// `ignore-dra-requests` on, the default. Its scheduler
/// (`pkg/controllers/provisioning/scheduling/scheduler.go`) refuses the pod
/// with a `DRAError` ([`DRA_UNSUPPORTED`](crate::provisioning::DRA_UNSUPPORTED)) before it tries any node, existing
/// or new; the refusal is final, so the pod's preferences are not relaxed to
/// try again; and a DaemonSet whose pod has DRA requirements is left out of
/// the daemon overhead of new nodes and of the room kept on existing nodes
/// for daemons still to come. A disruption simulation that must move such a
/// pod therefore fails, and the node holding it is neither consolidated nor
/// replaced for drift (`SimulateScheduling` in
/// `pkg/controllers/disruption/helpers.go` hands the pod to the same
/// scheduler).
///
/// The engine always behaves as upstream's default, so it has no such
/// option. Upstream's other setting turns on real device allocation against
/// `ResourceSlice`s, `DeviceClass`es and the devices instance types promise,
/// none of which a snapshot carries; that mode is not built here.
///
/// ```
/// use k8s_openapi::api::core::v1::PodSpec;
/// use karpenter_core::pods::has_dra_requirements;
///
/// let spec: PodSpec = serde_json::from_value(serde_json::json!({
///     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
///     "containers": [{"name": "app", "resources": {"claims": [{"name": "gpu"}]}}],
/// }))?;
/// assert!(has_dra_requirements(&spec));
/// assert!(!has_dra_requirements(&PodSpec::default()));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn has_dra_requirements(spec: &PodSpec) -> bool {
    let consumes_a_claim = |container: &Container| {
        container
            .resources
            .as_ref()
            .and_then(|r| r.claims.as_ref())
            .is_some_and(|claims| !claims.is_empty())
    };
    spec.resource_claims
        .as_ref()
        .is_some_and(|claims| !claims.is_empty())
        || spec.init_containers.iter().flatten().any(consumes_a_claim)
        || spec.containers.iter().any(consumes_a_claim)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn spec(value: Value) -> PodSpec {
        serde_json::from_value(value).expect("a PodSpec")
    }

    #[test]
    fn claims_in_the_pod_or_any_container_count() {
        let plain = json!({"containers": [{"name": "app"}]});
        assert!(!has_dra_requirements(&spec(plain)));
        // Empty lists claim nothing.
        let empty = json!({
            "resourceClaims": [],
            "containers": [{"name": "app", "resources": {"claims": []}}],
        });
        assert!(!has_dra_requirements(&spec(empty)));
        let pod_level = json!({
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
            "containers": [{"name": "app"}],
        });
        assert!(has_dra_requirements(&spec(pod_level)));
        let container = json!({"containers": [
            {"name": "sidecar"},
            {"name": "app", "resources": {"claims": [{"name": "gpu"}]}},
        ]});
        assert!(has_dra_requirements(&spec(container)));
        let init = json!({
            "initContainers": [{"name": "setup", "resources": {"claims": [{"name": "gpu"}]}}],
            "containers": [{"name": "app"}],
        });
        assert!(has_dra_requirements(&spec(init)));
    }
}
