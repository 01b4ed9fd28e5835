//! Dynamic Resource Allocation (DRA): pods that claim devices through
//! `ResourceClaim`s, and what provisioning does with them (see
//! [`has_dra_requirements`]).

use k8s_openapi::api::core::v1::{Container, PodSpec};

/// Why a pod with DRA requirements gets no capacity: upstream's `DRAError`,
/// in its words.
pub const DRA_UNSUPPORTED: &str =
    "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter";

/// Whether the pod has Dynamic Resource Allocation requirements (upstream
/// `HasDRARequirements`): it lists `resourceClaims`, or a container or init
/// container consumes a claim (`resources.claims`).
///
/// Such a pod gets no capacity, as upstream Karpenter decides with its option
/// `ignore-dra-requests` on, the default. Its scheduler
/// (`pkg/controllers/provisioning/scheduling/scheduler.go`) refuses the pod
/// with a `DRAError` ([`DRA_UNSUPPORTED`]) before it tries any node, existing
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
/// use karpenter_core::provisioning::has_dra_requirements;
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
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::{Value, json};

    use super::*;
    use crate::provisioning::test_support::{instance_type, pod, snapshot};
    use crate::provisioning::{plan_provisioning, validate};

    fn spec(value: Value) -> PodSpec {
        serde_json::from_value(value).expect("a PodSpec")
    }

    /// A pending pod in `default` asking one cpu, its spec changed by `edit`.
    fn pod_with(name: &str, edit: impl FnOnce(&mut Value)) -> Pod {
        let mut value = serde_json::to_value(pod(name, "1", "1Gi")).expect("a pod as JSON");
        edit(&mut value["spec"]);
        serde_json::from_value(value).expect("a Pod")
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

    #[test]
    fn a_pod_with_claims_is_unschedulable_with_upstreams_reason() {
        let claims = pod_with("claims", |spec| {
            spec["resourceClaims"] = json!([{"name": "gpu", "resourceClaimName": "gpu-claim"}]);
        });
        let cluster = snapshot(
            vec![instance_type("m-4", 4, 16, 1.0)],
            vec![claims, pod("plain", "1", "1Gi")],
        );
        let plan = plan_provisioning(&cluster);
        assert_eq!(plan.node_claims.len(), 1);
        assert_eq!(plan.node_claims[0].pods, ["default/plain"]);
        assert_eq!(plan.unschedulable.len(), 1);
        assert_eq!(plan.unschedulable[0].pod, "default/claims");
        assert_eq!(plan.unschedulable[0].reason, DRA_UNSUPPORTED);
        assert!(validate(&cluster, &plan).is_empty());
    }

    /// A DaemonSet in `kube-system` whose pods ask `cpu`, claiming a device
    /// when `dra`.
    fn daemon_set(cpu: &str, dra: bool) -> k8s_openapi::api::apps::v1::DaemonSet {
        let mut container = json!({"name": "agent", "resources": {"requests": {"cpu": cpu}}});
        if dra {
            container["resources"]["claims"] = json!([{"name": "gpu"}]);
        }
        serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "kube-system"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {"spec": {"containers": [container]}},
            },
        }))
        .expect("a DaemonSet")
    }

    #[test]
    fn a_daemon_set_with_claims_is_no_overhead() {
        // 1 cpu of pod and 2 of daemon need the 4-cpu type; without the
        // daemon the 2-cpu type is enough.
        let launched = |dra: bool| {
            let mut cluster = snapshot(
                vec![
                    instance_type("m-2", 2, 8, 1.0),
                    instance_type("m-4", 4, 16, 2.0),
                ],
                vec![pod("web", "1", "1Gi")],
            );
            cluster.daemon_sets = vec![daemon_set("2", dra)];
            let plan = plan_provisioning(&cluster);
            assert!(validate(&cluster, &plan).is_empty());
            plan.node_claims[0]
                .launch
                .as_ref()
                .map(|l| l.instance_type.clone())
        };
        assert_eq!(launched(false).as_deref(), Some("m-4"));
        assert_eq!(launched(true).as_deref(), Some("m-2"));
    }
}
