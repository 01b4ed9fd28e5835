//! How buffers resolve: upstream's replica tests
//! (`pkg/controllers/capacitybuffer/suite_test.go` "should resolve buffer
//! replicas", `helpers_test.go`) and its virtual pods
//! (`pkg/state/virtualpods/utilities_test.go`).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::PodTemplate;
use serde_json::{Value, json};

use super::*;
use crate::pods::PodFields as _;

fn buffer(spec: Value) -> CapacityBuffer {
    serde_json::from_value(json!({
        "metadata": {"name": "headroom", "namespace": "shop", "uid": "b-1"},
        "spec": spec,
    }))
    .expect("a CapacityBuffer")
}

fn template(name: &str, spec: Value) -> PodTemplate {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "shop"},
        "template": {"metadata": {"labels": {"app": "chunk"}, "annotations": {"a": "b"}}, "spec": spec},
    }))
    .expect("a PodTemplate")
}

/// One container asking `cpu` and `memory`.
fn asking(cpu: &str, memory: &str) -> Value {
    json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]})
}

fn deployment(replicas: Option<i32>) -> ScalableWorkload {
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {},
            "template": {"spec": asking("1", "1Gi")},
        },
    }))
    .expect("a Deployment");
    ScalableWorkload::from(&d)
}

fn resolved(spec: Value, pod: Value) -> BufferState {
    let buffers = CapacityBuffers::new(vec![buffer(spec)], vec![template("t", pod)], Vec::new());
    buffers.states()[0].clone()
}

fn replicas(spec: Value) -> u32 {
    let state = resolved(spec, asking("1", "512Mi"));
    assert_eq!(state.readiness, Readiness::Resolved);
    state.replicas
}

fn scalable(spec: Value, workload: ScalableWorkload) -> BufferState {
    let buffers = CapacityBuffers::new(vec![buffer(spec)], Vec::new(), vec![workload]);
    buffers.states()[0].clone()
}

#[test]
fn fixed_replicas_are_the_count() {
    assert_eq!(
        replicas(json!({"podTemplateRef": {"name": "t"}, "replicas": 7})),
        7
    );
}

#[test]
fn limits_cap_replicas_and_alone_size_the_buffer() {
    let t = json!({"name": "t"});
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "replicas": 10, "limits": {"cpu": "3"}})),
        3
    );
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "replicas": 2, "limits": {"cpu": "30"}})),
        2
    );
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "limits": {"cpu": "5"}})),
        5
    );
    // The tightest resource wins; division rounds down.
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "limits": {"cpu": "8", "memory": "1Gi"}})),
        2
    );
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "limits": {"cpu": "3500m"}})),
        3
    );
    // A limit below one chunk: none.
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "limits": {"cpu": "500m"}})),
        0
    );
}

#[test]
fn limits_on_unrequested_resources_do_not_count() {
    let t = json!({"name": "t"});
    // `pods` is the scheduler's slot, not a request of the template's.
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "limits": {"nvidia.com/gpu": "4", "pods": "2"}})),
        0
    );
    assert_eq!(
        replicas(json!({"podTemplateRef": t, "replicas": 3, "limits": {"nvidia.com/gpu": "1"}})),
        3
    );
}

#[test]
fn limits_count_init_containers_and_sidecars() {
    let t = json!({"name": "t"});
    let init = json!({
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
    });
    assert_eq!(
        resolved(json!({"podTemplateRef": t, "limits": {"cpu": "8"}}), init).replicas,
        4
    );
    let sidecar = json!({
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "initContainers": [{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
    });
    assert_eq!(
        resolved(
            json!({"podTemplateRef": t, "limits": {"cpu": "8"}}),
            sidecar
        )
        .replicas,
        4
    );
}

#[test]
fn percentage_of_a_workload_takes_the_larger_count() {
    let r = |spec: Value, replicas: Option<i32>| scalable(spec, deployment(replicas)).replicas;
    let web = json!({"kind": "Deployment", "name": "web"});
    assert_eq!(
        r(json!({"scalableRef": web, "percentage": 20}), Some(10)),
        2
    );
    assert_eq!(
        r(
            json!({"scalableRef": web, "percentage": 20, "replicas": 5}),
            Some(10)
        ),
        5
    );
    assert_eq!(
        r(
            json!({"scalableRef": web, "percentage": 80, "replicas": 5}),
            Some(10)
        ),
        8
    );
    assert_eq!(
        r(
            json!({"scalableRef": web, "percentage": 80, "replicas": 5, "limits": {"cpu": "4"}}),
            Some(10)
        ),
        4
    );
    // Rounded up, at least one.
    assert_eq!(r(json!({"scalableRef": web, "percentage": 10}), Some(1)), 1);
    assert_eq!(
        r(json!({"scalableRef": web, "percentage": 150}), Some(3)),
        5
    );
    // No replicas written reads as one.
    assert_eq!(r(json!({"scalableRef": web, "percentage": 100}), None), 1);
    // A workload scaled to zero gives no percentage count.
    assert_eq!(r(json!({"scalableRef": web, "percentage": 50}), Some(0)), 0);
    assert_eq!(r(json!({"scalableRef": web, "percentage": 0}), Some(4)), 0);
}

#[test]
fn percentage_is_ignored_with_a_pod_template() {
    assert_eq!(
        replicas(json!({"podTemplateRef": {"name": "t"}, "percentage": 50, "replicas": 2})),
        2
    );
}

#[test]
fn unresolved_buffers_say_why_and_have_no_pods() {
    let missing = CapacityBuffers::new(
        vec![buffer(
            json!({"podTemplateRef": {"name": "gone"}, "replicas": 2}),
        )],
        vec![template("t", asking("1", "1Gi"))],
        Vec::new(),
    );
    assert_eq!(
        missing.states()[0].readiness,
        Readiness::PodTemplateNotFound {
            name: "gone".into()
        }
    );
    assert_eq!(missing.virtual_pod_count(), 0);
    let web = json!({"kind": "Deployment", "name": "web"});
    let no_workload = CapacityBuffers::new(
        vec![buffer(json!({"scalableRef": web, "replicas": 1}))],
        Vec::new(),
        Vec::new(),
    );
    assert_eq!(
        no_workload.states()[0].readiness.reason(),
        "ScalableRefNotFound"
    );
    for spec in [
        json!({"replicas": 1}),
        json!({"scalableRef": {"kind": "Job", "name": "web"}, "replicas": 1}),
        json!({"scalableRef": {"apiGroup": "batch", "kind": "Deployment", "name": "web"}, "replicas": 1}),
    ] {
        let state = scalable(spec, deployment(Some(2)));
        assert_eq!(state.readiness.reason(), "ResolutionFailed", "{state:?}");
        assert_eq!(state.replicas, 0);
    }
    // `apps` written out is `apps`.
    let apps = json!({"scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"}, "replicas": 1});
    assert!(scalable(apps, deployment(Some(2))).is_ready_for_provisioning());
}

#[test]
fn templates_in_another_namespace_are_not_found() {
    let mut elsewhere = template("t", asking("1", "1Gi"));
    elsewhere.metadata.namespace = Some("other".into());
    let buffers = CapacityBuffers::new(
        vec![buffer(
            json!({"podTemplateRef": {"name": "t"}, "replicas": 1}),
        )],
        vec![elsewhere],
        Vec::new(),
    );
    assert_eq!(
        buffers.states()[0].readiness.reason(),
        "PodTemplateNotFound"
    );
}

#[test]
fn virtual_pods_are_named_labelled_and_marked_as_upstream() {
    let pod = json!({
        "nodeName": "somewhere",
        "nodeSelector": {"disk": "ssd"},
        "containers": [{"name": "c", "volumeMounts": [{"name": "data", "mountPath": "/d"}, {"name": "cfg", "mountPath": "/c"}],
                        "resources": {"requests": {"cpu": "1"}}}],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
            {"name": "cfg", "configMap": {"name": "cfg"}},
        ],
    });
    let buffers = CapacityBuffers::new(
        vec![buffer(
            json!({"podTemplateRef": {"name": "t"}, "replicas": 2}),
        )],
        vec![template("t", pod)],
        Vec::new(),
    );
    let pods: Vec<_> = buffers.virtual_pods().collect();
    assert_eq!(pods.len(), 2);
    let (first, index) = pods[0];
    assert_eq!(index, 0);
    assert_eq!(
        first.metadata.name.as_deref(),
        Some("capacity-buffer-headroom-1")
    );
    assert_eq!(
        pods[1].0.metadata.name.as_deref(),
        Some("capacity-buffer-headroom-2")
    );
    assert_eq!(first.metadata.namespace.as_deref(), Some("shop"));
    let labels = first.metadata.labels.as_ref().expect("labels");
    assert_eq!(labels.get("app").map(String::as_str), Some("chunk"));
    let annotations = first.metadata.annotations.as_ref().expect("annotations");
    assert_eq!(
        annotations.get(VIRTUAL_POD_ANNOTATION).map(String::as_str),
        Some("true")
    );
    assert_eq!(
        annotations.get(BUFFER_NAME_ANNOTATION).map(String::as_str),
        Some("headroom")
    );
    assert_eq!(
        annotations
            .get(BUFFER_NAMESPACE_ANNOTATION)
            .map(String::as_str),
        Some("shop")
    );
    assert!(
        !annotations.contains_key("a"),
        "template annotations are not copied"
    );
    let spec = first.spec.as_ref().expect("a spec");
    assert_eq!(first.node_name(), None);
    assert_eq!(spec.priority, Some(i32::MIN));
    assert_eq!(
        spec.node_selector
            .as_ref()
            .and_then(|s| s.get("disk"))
            .map(String::as_str),
        Some("ssd")
    );
    let volumes: Vec<&str> = spec
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(volumes, ["cfg"]);
    // The chunks share one spec.
    assert!(Arc::ptr_eq(
        first.spec.as_ref().expect("spec"),
        pods[1].0.spec.as_ref().expect("spec")
    ));
}

#[test]
fn zero_replicas_make_no_pods() {
    let buffers = CapacityBuffers::new(
        vec![buffer(
            json!({"podTemplateRef": {"name": "t"}, "replicas": 0}),
        )],
        vec![template("t", asking("1", "1Gi"))],
        Vec::new(),
    );
    assert!(!buffers.states()[0].is_ready_for_provisioning());
    assert_eq!(buffers.virtual_pod_count(), 0);
}
