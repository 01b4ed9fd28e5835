//! Which pods provisioning plans capacity for: the pending pods, read from a
//! pod's spec and status as upstream Karpenter reads them (`IsProvisionable`
//! and its helpers in `pkg/utils/pod/scheduling.go`). The rule is
//! [`is_pending`]'s.

use k8s_openapi::api::core::v1::PodCondition;

use crate::pods::{
    POD_SCHEDULED, PodFields, PodInfo, PodInfoStatus, UNSCHEDULABLE, bound_node, is_daemon_pod,
    is_owned_by_node, is_terminal, unschedulable_condition,
};

/// Whether provisioning plans capacity for the pod, as upstream's
/// `IsProvisionable` reads it.
///
/// A pod is pending when all of these hold:
///
/// - it is not bound: `spec.nodeName` is empty (upstream `IsScheduled`);
/// - it is not preempting: `status.nominatedNodeName` is empty (upstream
///   `IsPreempting`). The kube-scheduler has chosen a node for a nominated
///   pod and is evicting lower-priority pods there to make room, so the pod
///   is about to schedule and needs no new capacity;
/// - its status does not say the kube-scheduler placed it otherwise: a
///   `PodScheduled` condition, when there is one, has reason `Unschedulable`
///   (upstream `FailedToSchedule`). A scheduling-gated pod (reason
///   `SchedulingGated`) is left alone. A pod with no `PodScheduled` condition
///   (a hand-written manifest, with no status or only a phase) counts as
///   marked, as `karpenter-sim`'s scenario format reads pods: only a status
///   that says otherwise keeps a pod out (upstream, which sees only pods the
///   kube-scheduler has tried, waits for the mark);
/// - it is not a DaemonSet's (the DaemonSet runs one on every node it fits, so
///   its pods are overhead of every node instead) nor a Node's (a static pod's
///   mirror, which the kubelet runs where it is) (upstream
///   `IsOwnedByDaemonSet`, `IsOwnedByNode`). An owner reference of kind
///   `DaemonSet` is enough, whatever its API group, as the scenario format
///   reads daemon pods; upstream also requires `apps/v1`;
/// - it has not finished (phase `Succeeded` or `Failed`) and is not being
///   deleted (`deletionTimestamp`): the kube-scheduler never schedules such a
///   pod. Upstream's `IsProvisionable` does not test these itself; the
///   scenario format does.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use karpenter_core::pods::is_pending;
///
/// let pod = |value: serde_json::Value| -> Pod { serde_json::from_value(value).unwrap() };
/// // A bare manifest is pending.
/// assert!(is_pending(&pod(serde_json::json!({"metadata": {"name": "web-0"}}))));
/// // So is a pod the kube-scheduler marked unschedulable...
/// let marked = serde_json::json!({
///     "metadata": {"name": "web-1"},
///     "status": {"phase": "Pending", "conditions": [
///         {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
///     ]},
/// });
/// assert!(is_pending(&pod(marked.clone())));
/// // ...unless it is preempting pods on the node it was nominated to.
/// let mut preempting = marked;
/// preempting["status"]["nominatedNodeName"] = "node-a".into();
/// assert!(!is_pending(&pod(preempting)));
/// // A pod whose status only gives its phase is pending too.
/// let written = serde_json::json!({"metadata": {"name": "web-2"}, "status": {"phase": "Pending"}});
/// assert!(is_pending(&pod(written)));
/// ```
pub fn is_pending(pod: &(impl PodFields + ?Sized)) -> bool {
    !is_preempting(pod) && is_pending_but_for_nomination(pod)
}

/// Whether the pod would be pending were it not nominated: every clause of
/// [`is_pending`] but the nomination. The driver reads the nominations it
/// made itself with it.
pub(crate) fn is_pending_but_for_nomination(pod: &(impl PodFields + ?Sized)) -> bool {
    bound_node(pod).is_none()
        && marked_unschedulable(pod)
        && !is_daemon_pod(pod)
        && !is_owned_by_node(pod)
        && !is_terminal(pod)
        && pod.metadata().deletion_timestamp.is_none()
}

/// The node a pod is nominated to (`status.nominatedNodeName`), if any.
pub fn nominated_node(pod: &(impl PodFields + ?Sized)) -> Option<&str> {
    pod.nominated_node_name().filter(|name| !name.is_empty())
}

/// Whether the pod is preempting (upstream `IsPreempting`): nominated to a
/// node where the kube-scheduler makes room for it.
pub fn is_preempting(pod: &(impl PodFields + ?Sized)) -> bool {
    nominated_node(pod).is_some()
}

/// Whether the kube-scheduler marked the pod unschedulable (upstream
/// `FailedToSchedule`: a `PodScheduled` condition with reason
/// `Unschedulable`), or the pod has no `PodScheduled` condition to say
/// otherwise (no status, or one without the condition).
pub fn marked_unschedulable(pod: &(impl PodFields + ?Sized)) -> bool {
    match pod
        .conditions()
        .unwrap_or_default()
        .iter()
        .find(|c: &&PodCondition| c.type_ == POD_SCHEDULED)
    {
        None => true,
        Some(scheduled) => scheduled.reason.as_deref() == Some(UNSCHEDULABLE),
    }
}

/// The pod as provisioning reads one that must find a new node (a
/// disruption simulation moving it off a node that goes): unbound, and with
/// the status the kube-scheduler gives a pod it cannot place (phase
/// `Pending`, `PodScheduled` `False` for `Unschedulable`, no nomination).
pub(crate) fn as_unschedulable(pod: &PodInfo) -> PodInfo {
    let mut moved = pod.clone();
    moved.node_name = None;
    moved.status = Some(PodInfoStatus {
        phase: Some("Pending".to_owned()),
        conditions: Some(vec![unschedulable_condition()]),
        ..PodInfoStatus::default()
    });
    moved
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::{Value, json};

    use super::*;

    fn pod(value: Value) -> Pod {
        serde_json::from_value(value).expect("a Pod")
    }

    /// A pod the kube-scheduler found no node for, changed by `edit`.
    fn marked(edit: impl FnOnce(&mut Value)) -> Pod {
        let mut value = json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "app"}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
            ]},
        });
        edit(&mut value);
        pod(value)
    }

    #[test]
    fn a_pod_the_scheduler_marked_unschedulable_is_pending() {
        assert!(is_pending(&marked(|_| {})));
        // Upstream reads the reason only; the kube-scheduler writes it with
        // status False.
        let other_conditions = marked(|p| {
            p["status"]["conditions"] = json!([
                {"type": "Ready", "status": "False"},
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
            ]);
        });
        assert!(is_pending(&other_conditions));
    }

    #[test]
    fn a_pod_without_a_status_is_pending() {
        let bare = pod(json!({"metadata": {"name": "web"}, "spec": {"containers": []}}));
        assert!(is_pending(&bare));
        let empty = pod(json!({"metadata": {"name": "web"}, "status": {}}));
        assert!(is_pending(&empty));
    }

    #[test]
    fn a_pod_the_scheduler_did_not_mark_unschedulable_is_not_pending() {
        // With no PodScheduled condition, nothing says otherwise: pending.
        let written = marked(|p| p["status"] = json!({"phase": "Pending"}));
        assert!(is_pending(&written));
        let gated = marked(|p| {
            p["status"]["conditions"][0]["reason"] = json!("SchedulingGated");
        });
        assert!(!is_pending(&gated));
        let scheduled = marked(|p| {
            p["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"}]);
        });
        assert!(!is_pending(&scheduled));
    }

    #[test]
    fn preempting_bound_finished_and_terminating_pods_are_not_pending() {
        let preempting = marked(|p| p["status"]["nominatedNodeName"] = json!("node-a"));
        assert!(is_preempting(&preempting));
        assert!(!is_pending(&preempting));
        assert!(is_pending_but_for_nomination(&preempting));
        // An empty nomination nominates nothing.
        let empty = marked(|p| p["status"]["nominatedNodeName"] = json!(""));
        assert!(!is_preempting(&empty) && is_pending(&empty));
        let bound = marked(|p| p["spec"]["nodeName"] = json!("node-a"));
        assert!(!is_pending(&bound));
        for phase in ["Succeeded", "Failed"] {
            let finished = marked(|p| p["status"]["phase"] = json!(phase));
            assert!(!is_pending(&finished), "{phase}");
        }
        let terminating =
            marked(|p| p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z"));
        assert!(!is_pending(&terminating));
    }

    #[test]
    fn daemon_and_static_pods_are_not_pending() {
        let owned_by = |api_version: &str, kind: &str| {
            marked(|p| {
                p["metadata"]["ownerReferences"] = json!([
                    {"apiVersion": api_version, "kind": kind, "name": "owner", "uid": "u"},
                ]);
            })
        };
        assert!(!is_pending(&owned_by("apps/v1", "DaemonSet")));
        assert!(!is_pending(&owned_by("v1", "Node")));
        assert!(is_pending(&owned_by("apps/v1", "ReplicaSet")));
        // A Node of another API group is not the kubelet's.
        assert!(is_pending(&owned_by("example.com/v1", "Node")));
    }

    #[test]
    fn a_moved_pod_is_read_as_unschedulable() {
        let running = pod(json!({
            "metadata": {"name": "web"},
            "spec": {"nodeName": "node-a", "containers": []},
            "status": {"phase": "Running", "nominatedNodeName": "node-b", "conditions": [
                {"type": "PodScheduled", "status": "True"},
            ]},
        }));
        assert!(!is_pending(&running));
        let moved = as_unschedulable(&PodInfo::from(&running));
        assert!(is_pending(&moved));
        assert_eq!(bound_node(&moved), None);
        assert_eq!(moved.metadata, running.metadata);
    }
}
