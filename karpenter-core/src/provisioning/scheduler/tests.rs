use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::solve::Scheduler;
use crate::planning::MinValuesPolicy;
use crate::provisioning::DRA_UNSUPPORTED;
use crate::provisioning::test_support::{instance_type, pod, snapshot};

/// A pending pod preferring a zone no instance type is in, so that only
/// relaxing the preference lets it schedule; with `dra`, it also claims a
/// device.
fn preferring_a_missing_zone(name: &str, dra: bool) -> Pod {
    let mut value = serde_json::to_value(pod(name, "1", "1Gi")).expect("a pod as JSON");
    value["spec"]["affinity"] = json!({"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 10,
            "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-z"]},
            ]},
        }],
    }});
    if dra {
        value["spec"]["containers"][0]["resources"]["claims"] = json!([{"name": "gpu"}]);
        value["spec"]["resourceClaims"] = json!([{"name": "gpu", "resourceClaimName": "gpu-0"}]);
    }
    serde_json::from_value(value).expect("a Pod")
}

#[test]
fn a_pod_with_dra_claims_is_refused_without_relaxing_it() {
    let cluster = snapshot(
        vec![instance_type("m-4", 4, 16, 1.0)],
        vec![
            preferring_a_missing_zone("plain", false),
            preferring_a_missing_zone("claims", true),
        ],
    );
    let mut scheduler = Scheduler::new(&cluster, None, MinValuesPolicy::Strict, false);
    // The plain pod schedules once its preference is dropped: its spec is
    // its own, relaxed copy.
    assert!(scheduler.try_schedule(0).is_ok());
    assert!(scheduler.pods[0].spec.relaxed.is_some());
    // The pod with claims is refused with upstream's reason, its spec still
    // the snapshot's: nothing was relaxed.
    let refused = scheduler.try_schedule(1).expect_err("refused");
    assert_eq!(refused.to_string(), DRA_UNSUPPORTED);
    assert!(scheduler.pods[1].spec.relaxed.is_none());
}
