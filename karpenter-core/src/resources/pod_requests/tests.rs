//! Tests of a pod's effective requests: containers, init and sidecar containers, and overhead.

use super::*;
use serde_json::json;

fn spec(value: serde_json::Value) -> PodSpec {
    match serde_json::from_value(value) {
        Ok(spec) => spec,
        Err(e) => panic!("test pod spec should deserialize: {e}"),
    }
}

fn requests(value: serde_json::Value) -> ResourceList {
    match pod_requests(&spec(value)) {
        Ok(list) => list,
        Err(e) => panic!("pod requests should compute: {e}"),
    }
}

fn expect(entries: &[(&str, i64)]) -> ResourceList {
    let mut list = ResourceList::new();
    for &(name, milli) in entries {
        list.set(name, milli);
    }
    list
}

const GI: i64 = (1 << 30) * 1000;
const MI: i64 = (1 << 20) * 1000;

#[test]
fn empty_pod_takes_one_pod_slot() {
    assert_eq!(
        requests(json!({"containers": []})),
        expect(&[("pods", 1000)])
    );
    assert_eq!(
        requests(json!({"containers": [{"name": "a"}]})),
        expect(&[("pods", 1000)])
    );
}

#[test]
fn regular_containers_are_summed() {
    let r = requests(json!({"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"requests": {"cpu": "500m", "nvidia.com/gpu": "1"}}},
    ]}));
    assert_eq!(
        r,
        expect(&[
            ("cpu", 1500),
            ("memory", GI),
            ("pods", 1000),
            ("nvidia.com/gpu", 1000)
        ])
    );
}

#[test]
fn missing_requests_take_the_limits() {
    let r = requests(json!({"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "2", "memory": "512Mi"}}},
        {"name": "b", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "1Gi"}}},
    ]}));
    // b's cpu request stands; its memory request comes from the limit.
    assert_eq!(
        r,
        expect(&[("cpu", 2100), ("memory", 512 * MI + GI), ("pods", 1000)])
    );
}

#[test]
fn init_container_larger_than_the_sum_wins() {
    let r = requests(json!({
        "initContainers": [
            {"name": "migrate", "resources": {"requests": {"cpu": "4", "memory": "100Mi"}}},
            {"name": "warm", "resources": {"requests": {"cpu": "1", "memory": "3Gi"}}},
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
            {"name": "b", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        ],
    }));
    assert_eq!(
        r,
        expect(&[("cpu", 4000), ("memory", 3 * GI), ("pods", 1000)])
    );
}

#[test]
fn sidecar_started_before_a_big_init_container_adds_to_it() {
    let r = requests(json!({
        "initContainers": [
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}}},
            {"name": "migrate", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
        ],
        "containers": [
            {"name": "app", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}},
        ],
    }));
    // Init phase: 3 + 0.5 cpu, 1Gi + 128Mi. Running: 1.5 cpu, 2Gi + 128Mi.
    assert_eq!(
        r,
        expect(&[("cpu", 3500), ("memory", 2 * GI + 128 * MI), ("pods", 1000)])
    );
}

#[test]
fn sidecar_after_an_init_container_does_not_add_to_it() {
    let r = requests(json!({
        "initContainers": [
            {"name": "migrate", "resources": {"requests": {"cpu": "3"}}},
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        ],
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
    }));
    assert_eq!(r, expect(&[("cpu", 3000), ("pods", 1000)]));
}

#[test]
fn sidecars_and_overhead() {
    let r = requests(json!({
        "initContainers": [
            {"name": "s1", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "1"}}},
            {"name": "s2", "restartPolicy": "Always", "resources": {"limits": {"cpu": "300m", "memory": "64Mi"}}},
        ],
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
        "overhead": {"cpu": "250m", "memory": "120Mi"},
    }));
    // Running: 0.5 + 0.2 + 0.3 = 1 cpu; init peak: 1 + 0.2 = 1.2 cpu.
    assert_eq!(
        r,
        expect(&[
            ("cpu", 1450),
            ("memory", GI + 64 * MI + 120 * MI),
            ("pods", 1000)
        ])
    );
}

#[test]
fn pod_level_requests_replace_the_aggregate_and_overhead_adds_on_top() {
    let r = requests(json!({
        "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": "8"}, "limits": {"memory": "4Gi"}},
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}}}],
        "overhead": {"cpu": "100m"},
    }));
    // cpu comes from the pod level; gpu is not a pod-level resource, so
    // the container's stands; pod-level limits do not change requests.
    assert_eq!(
        r,
        expect(&[
            ("cpu", 2100),
            ("memory", GI),
            ("pods", 1000),
            ("nvidia.com/gpu", 1000)
        ])
    );
}

#[test]
fn errors_name_the_field() {
    let message = |value| match pod_requests(&spec(value)) {
        Ok(list) => panic!("should fail, got {list:?}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        message(json!({
            "initContainers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"memory": "12Q"}}}],
            "containers": [],
        })),
        r#"spec.initContainers[1].resources.requests.memory: invalid quantity "12Q": unknown suffix "Q""#
    );
    assert_eq!(
        message(json!({"containers": [{"name": "a", "resources": {"limits": {"cpu": "1 "}}}]})),
        r#"spec.containers[0].resources.limits.cpu: invalid quantity "1 ": unexpected character ' ' at byte 1"#
    );
    assert_eq!(
        message(json!({"containers": [], "overhead": {"memory": ""}})),
        r#"spec.overhead.memory: invalid quantity "": empty string"#
    );
    assert_eq!(
        message(json!({"containers": [], "resources": {"requests": {"cpu": "x"}}})),
        r#"spec.resources.requests.cpu: invalid quantity "x": no digits"#
    );
}

#[test]
fn overflowing_totals_are_errors() {
    let err = pod_requests(&spec(json!({"containers": [
        {"name": "a", "resources": {"requests": {"memory": "8000Ti"}}},
        {"name": "b", "resources": {"limits": {"memory": "8000Ti"}}},
    ]})))
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"spec.containers[1].resources.limits.memory: quantity "8000Ti": the total memory exceeds the 64-bit milli-unit range"#
    );
    let err = pod_requests(&spec(json!({
        "containers": [{"name": "a", "resources": {"requests": {"pods": "9223372036854775.807"}}}],
    })))
    .unwrap_err();
    assert_eq!(err.path(), Some("spec"));
    assert!(
        matches!(err.kind(), QuantityErrorKind::TotalOutOfRange { resource } if resource == "pods")
    );
}
