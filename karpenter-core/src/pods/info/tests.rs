//! Tests of `PodInfo`: what it keeps of a `Pod`, its size, and that the pod rules read it as they read the `Pod`.

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::test_pods::{NOW, at, pod};
use super::super::{
    Pdbs, bound_node, do_not_disrupt, goes_through_eviction, is_active, is_daemon_pod,
    is_owned_by_node, is_reschedulable, is_terminal, is_terminating, pod_key, waits_for_eviction,
};
use super::*;
use crate::pods::{
    as_unschedulable, is_pending, is_pending_but_for_nomination, marked_unschedulable,
    nominated_node,
};
use crate::resources::pod_requests;

/// A pod as the API server returns one: much that planning never reads.
fn full(name: &str, node: &str) -> Value {
    json!({
        "metadata": {
            "name": name, "namespace": "shop", "uid": format!("uid-{name}"),
            "labels": {"app": "web"},
            "annotations": {"karpenter.sh/do-not-disrupt": "1h", "note": "kept"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs"}],
            "managedFields": [{"manager": "kubectl", "operation": "Update"}],
        },
        "spec": {
            "nodeName": node,
            "serviceAccountName": "web",
            "tolerations": [{"key": "dedicated", "operator": "Exists"}],
            "containers": [{
                "name": "app", "image": "shop/web:1.2",
                "env": [{"name": "MODE", "value": "prod"}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                "ports": [{"containerPort": 8080, "hostPort": 80}],
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            }],
        },
        "status": {
            "phase": "Running", "startTime": "2024-05-01T11:30:00Z", "podIP": "10.0.0.7",
            "qosClass": "Burstable",
            "conditions": [
                {"type": "Initialized", "status": "True"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-05-01T11:29:00Z"},
                {"type": "Ready", "status": "True", "message": "all good"},
            ],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "shop/web:1.2", "imageID": ""}],
        },
    })
}

#[test]
fn a_pod_info_keeps_what_planning_reads_and_no_more() {
    let info = PodInfo::of(&pod(full("web-0", "node-a")));
    assert_eq!(info.metadata.name.as_deref(), Some("web-0"));
    assert!(info.metadata.managed_fields.is_none());
    assert_eq!(info.metadata.annotations.as_ref().map(|a| a.len()), Some(2));
    assert_eq!(info.node_name.as_deref(), Some("node-a"));
    let spec = info.spec.as_deref().expect("a spec");
    assert_eq!(spec.node_name, None, "the node is the pod's own");
    assert_eq!(spec.service_account_name, None);
    assert_eq!(spec.tolerations.as_ref().map(Vec::len), Some(1));
    let container = &spec.containers[0];
    assert_eq!(container.name, "app");
    assert_eq!(container.image, None);
    assert_eq!(container.env, None);
    assert_eq!(container.readiness_probe, None);
    assert!(container.resources.is_some() && container.ports.is_some());
    let status = info.status.as_ref().expect("a status");
    let kept: Vec<&str> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(kept, ["PodScheduled", "Ready"]);
    assert_eq!(
        status.conditions.as_ref().expect("conditions")[1].message,
        None
    );
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert!(status.start_time.is_some());
}

#[test]
fn replicas_share_one_spec_and_other_templates_have_their_own() {
    let mut interner = PodInterner::new();
    let a = interner.pod_info(&pod(full("web-0", "node-a")));
    let b = interner.pod_info(&pod(full("web-1", "node-b")));
    let spec = |p: &PodInfo| Arc::clone(p.spec.as_ref().expect("a spec"));
    assert!(
        Arc::ptr_eq(&spec(&a), &spec(&b)),
        "only name and node differ"
    );
    assert_eq!(b.node_name.as_deref(), Some("node-b"));
    let mut other = full("api-0", "node-a");
    other["spec"]["tolerations"] = json!([]);
    let c = interner.pod_info(&pod(other));
    assert!(!Arc::ptr_eq(&spec(&a), &spec(&c)));
    assert_eq!(interner.distinct_specs(), 2);
    let mut unshared = PodInfo::of(&pod(full("web-2", "node-c")));
    interner.intern(&mut unshared);
    assert!(Arc::ptr_eq(&spec(&a), &spec(&unshared)));
    assert_eq!(interner.distinct_specs(), 2);
    drop(c);
    interner.forget_unused();
    assert_eq!(interner.distinct_specs(), 1, "no pod has the other spec");
    drop((a, b, unshared));
    interner.forget_unused();
    assert_eq!(interner.distinct_specs(), 0);
}

#[test]
fn a_pod_info_written_back_reads_the_same() {
    let info = PodInfo::of(&pod(full("web-0", "node-a")));
    assert_eq!(PodInfo::of(&info.to_pod()), info);
    let bare = PodInfo::of(&Pod::default());
    assert_eq!(PodInfo::of(&bare.to_pod()), bare);
}

#[test]
fn a_pod_info_is_small_beside_a_pod() {
    assert!(std::mem::size_of::<PodInfo>() * 4 < std::mem::size_of::<Pod>());
}

/// Pods with every field the pod rules read set one way or another.
fn any_pod() -> impl Strategy<Value = Pod> {
    let node = prop_oneof![Just(None), Just(Some("")), Just(Some("node-a"))];
    let phase = prop_oneof![
        Just(None),
        Just(Some("Pending")),
        Just(Some("Running")),
        Just(Some("Succeeded")),
        Just(Some("Failed"))
    ];
    let scheduled = prop_oneof![
        Just(None),
        Just(Some(("True", None))),
        Just(Some(("False", Some("Unschedulable")))),
        Just(Some(("False", Some("SchedulingGated")))),
    ];
    let ready = prop_oneof![Just(None), Just(Some("True")), Just(Some("False"))];
    let owner = prop_oneof![
        Just(None),
        Just(Some(("apps/v1", "DaemonSet"))),
        Just(Some(("apps.kruise.io/v1alpha1", "DaemonSet"))),
        Just(Some(("apps/v1", "StatefulSet"))),
        Just(Some(("v1", "Node"))),
        Just(Some(("apps/v1", "ReplicaSet"))),
    ];
    let nominated = prop_oneof![Just(None), Just(Some("")), Just(Some("node-b"))];
    let annotation = prop_oneof![
        Just(None),
        Just(Some("true")),
        Just(Some("1h")),
        Just(Some("nonsense"))
    ];
    let flags = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    (
        node, phase, scheduled, ready, owner, nominated, annotation, flags,
    )
        .prop_map(
            |(node, phase, scheduled, ready, owner, nominated, annotation, flags)| {
                let (has_spec, has_status, deleting, started) = flags;
                let mut value = json!({"metadata": {"name": "p", "labels": {"app": "web"}}});
                if let Some((api_version, kind)) = owner {
                    value["metadata"]["ownerReferences"] =
                        json!([{"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u"}]);
                }
                if let Some(annotation) = annotation {
                    value["metadata"]["annotations"] =
                        json!({"karpenter.sh/do-not-disrupt": annotation});
                }
                if deleting {
                    value["metadata"]["deletionTimestamp"] = json!("2024-05-01T11:00:00Z");
                }
                if has_spec {
                    value["spec"] = json!({
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                        "tolerations": [{"key": "karpenter.sh/disrupted", "operator": "Exists"}],
                        "priority": 1000,
                    });
                    if let Some(node) = node {
                        value["spec"]["nodeName"] = json!(node);
                    }
                }
                if has_status {
                    let mut conditions = vec![json!({"type": "Initialized", "status": "True"})];
                    if let Some((status, reason)) = scheduled {
                        conditions.push(
                            json!({"type": "PodScheduled", "status": status, "reason": reason}),
                        );
                    }
                    if let Some(status) = ready {
                        conditions.push(json!({"type": "Ready", "status": status}));
                    }
                    value["status"] = json!({"phase": phase, "conditions": conditions});
                    if let Some(nominated) = nominated {
                        value["status"]["nominatedNodeName"] = json!(nominated);
                    }
                    if started {
                        value["status"]["startTime"] = json!("2024-05-01T11:30:00Z");
                    }
                }
                pod(value)
            },
        )
}

/// Every answer the pod rules give about `pod`, as text.
fn answers(pod: &(impl PodFields + ?Sized), pdbs: &Pdbs<'_>) -> Vec<String> {
    let now = at(NOW);
    vec![
        pod_key(pod).to_string(),
        format!("{:?}", bound_node(pod)),
        format!("{:?}", nominated_node(pod)),
        format!(
            "{} {} {} {} {}",
            is_daemon_pod(pod),
            is_terminal(pod),
            is_terminating(pod),
            is_active(pod),
            is_reschedulable(pod)
        ),
        format!(
            "{} {} {}",
            is_pending(pod),
            is_pending_but_for_nomination(pod),
            marked_unschedulable(pod)
        ),
        format!("{} {}", goes_through_eviction(pod), waits_for_eviction(pod)),
        format!("{:?}", do_not_disrupt(pod, now)),
        format!("{:?}", pdbs.blocks(pod)),
        format!("{:?}", pdbs.is_currently_reschedulable(pod, now)),
        format!("{:?}", pod.scheduling().map(pod_requests)),
    ]
}

fn unready_budget() -> PodDisruptionBudget {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 0},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
    }))
    .expect("a budget")
}

proptest! {
    /// The helpers read a `PodInfo` exactly as they read the `Pod` it
    /// came from, and a moved pod as the `Pod` it stands for.
    #[test]
    fn the_pod_rules_read_a_pod_info_as_they_read_its_pod(pod in any_pod()) {
        let budgets = [unready_budget()];
        let pdbs = Pdbs::new(&budgets);
        let info = PodInfo::of(&pod);
        prop_assert_eq!(answers(&pod, &pdbs), answers(&info, &pdbs));
        let moved = as_unschedulable(&info);
        prop_assert_eq!(answers(&moved.to_pod(), &pdbs), answers(&moved, &pdbs));
        // A pod moved off its node is pending, unless the kubelet or a
        // DaemonSet owns it or it is being deleted.
        let stays = is_daemon_pod(&info) || is_owned_by_node(&info) || is_terminating(&info);
        prop_assert_eq!(is_pending(&moved), !stays);
    }
}
