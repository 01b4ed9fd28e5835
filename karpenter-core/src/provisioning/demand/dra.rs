//! Dynamic Resource Allocation (DRA): what provisioning does with pods that
//! claim devices (see [`has_dra_requirements`](crate::pods::has_dra_requirements)):
//! no capacity, for [`DRA_UNSUPPORTED`].

/// Why a pod with DRA requirements gets no capacity: upstream's `DRAError`,
/// in its words.
pub const DRA_UNSUPPORTED: &str =
    "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter";

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::{Value, json};

    use super::*;
    use crate::provisioning::test_support::{instance_type, pod, snapshot};
    use crate::provisioning::{plan_provisioning, validate};

    /// A pending pod in `default` asking one cpu, its spec changed by `edit`.
    fn pod_with(name: &str, edit: impl FnOnce(&mut Value)) -> Pod {
        let mut value = serde_json::to_value(pod(name, "1", "1Gi")).expect("a pod as JSON");
        edit(&mut value["spec"]);
        serde_json::from_value(value).expect("a Pod")
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
