//! Pods leaving their nodes: evicted or shut down (a DaemonSet's go, the
//! others come back pending as their ReplicaSet recreates them) or deleted,
//! and the pod event each departure (or binding) notes on the node's claim.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::pods::{PodKey, bound_node, is_daemon_pod};

use super::objects::Objects;
use crate::generate::workload::unschedulable_status;

/// Notes a pod bound to or gone from `node` on its NodeClaim
/// (`status.lastPodEventTime`), as upstream's pod events controller does:
/// consolidation waits `consolidateAfter` from it.
pub(super) fn pod_event(objects: &mut Objects, node: &str, now: Timestamp) {
    // A claim names its Node, or shares its provider ID.
    let provider_id = objects
        .nodes
        .get(node)
        .and_then(|n| n.spec.as_ref())
        .and_then(|s| s.provider_id.clone());
    for claim in objects.node_claims.values_mut() {
        let Some(status) = claim.status.as_mut() else {
            continue;
        };
        let joined = status.node_name.as_deref() == Some(node)
            || (provider_id.is_some() && status.provider_id == provider_id);
        if joined {
            status.last_pod_event_time = Some(Time(now));
        }
    }
}

/// Deletes a pod; its node's claim notes the event. Whether there was one.
pub(super) fn remove_pod(objects: &mut Objects, key: &PodKey) -> bool {
    let Some(pod) = objects.pods.remove(key) else {
        return false;
    };
    if let Some(node) = bound_node(&pod) {
        let now = objects.now;
        pod_event(objects, node, now);
    }
    true
}

/// Takes every pod off `node` (see [`take_off`]).
pub(super) fn evict(objects: &mut Objects, node: &str) {
    let on_node: Vec<PodKey> = objects
        .pods
        .iter()
        .filter(|(_, pod)| bound_node(pod) == Some(node))
        .map(|(key, _)| key.clone())
        .collect();
    for key in &on_node {
        take_off(objects, key);
    }
}

/// Takes the pod off its node: a DaemonSet pod goes, any other comes back
/// pending (as its ReplicaSet recreates it), marked unschedulable by the
/// scheduler (which binds only the pods nominated to a node).
pub(super) fn take_off(objects: &mut Objects, key: &PodKey) {
    let now = objects.now;
    let Some(pod) = objects.pods.get_mut(key) else {
        return;
    };
    if is_daemon_pod(pod) {
        objects.pods.remove(key);
        return;
    }
    let pod = Arc::make_mut(pod);
    let node = pod.spec.as_mut().and_then(|spec| spec.node_name.take());
    pod.status = Some(unschedulable_status(Time(now)));
    if let Some(node) = node {
        pod_event(objects, &node, now);
    }
}
