//! The kube-scheduler's part: each pending pod nominated to a node is bound
//! to it once the node is ready, tolerated and has room (the driver
//! nominates; nothing here picks a node).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::pods::bound_node;
use karpenter_core::resources::{ResourceList, pod_requests};
use karpenter_core::scheduling::tolerates_all;

use super::eviction::pod_event;
use super::objects::Objects;

/// What a pod requests; a pod whose requests do not parse asks for nothing.
fn requests(pod: &Pod) -> ResourceList {
    pod.spec
        .as_ref()
        .and_then(|s| pod_requests(s).ok())
        .unwrap_or_default()
}

/// Binds each pending pod nominated to a ready, schedulable node it
/// tolerates and fits on; whether it bound any.
pub(super) fn bind_nominated(objects: &mut Objects, now: Timestamp) -> bool {
    // The nodes pending pods are nominated to: only their pods' requests
    // are added up (none at all, most ticks, when no pod waits).
    let targets: BTreeSet<&str> = objects
        .pods
        .values()
        .filter(|pod| bound_node(pod).is_none())
        .filter_map(|pod| pod.status.as_ref()?.nominated_node_name.as_deref())
        .collect();
    if targets.is_empty() {
        return false;
    }
    let mut used: BTreeMap<String, ResourceList> = BTreeMap::new();
    for pod in objects.pods.values() {
        if let Some(node) = bound_node(pod).filter(|node| targets.contains(node)) {
            let entry = used.entry(node.to_owned()).or_default();
            *entry = entry
                .checked_add(&requests(pod))
                .unwrap_or_else(|| entry.clone());
        }
    }
    let mut bound = BTreeSet::new();
    let Objects { pods, nodes, .. } = objects;
    for pod in pods.values_mut() {
        if bound_node(pod).is_some() {
            continue;
        }
        let Some(target) = pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone())
        else {
            continue;
        };
        let Some(node) = nodes.get(&target) else {
            continue;
        };
        if !schedulable(node, pod) {
            continue;
        }
        let allocatable = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|a| ResourceList::from_quantities(a).ok())
            .unwrap_or_default();
        let asks = requests(pod);
        let on_node = used.entry(target.clone()).or_default();
        let Some(after) = on_node.checked_add(&asks) else {
            continue;
        };
        if !after.fits(&allocatable) {
            continue;
        }
        *on_node = after;
        bound.insert(target.clone());
        let pod = Arc::make_mut(pod);
        pod.spec.get_or_insert_with(Default::default).node_name = Some(target);
        let status = pod.status.get_or_insert_with(PodStatus::default);
        status.phase = Some("Running".to_owned());
        status.nominated_node_name = None;
        status.start_time = Some(Time(now));
    }
    for node in &bound {
        pod_event(objects, node, now);
    }
    !bound.is_empty()
}

/// Whether a pod may be bound to the node: ready, not being deleted, every
/// taint tolerated.
fn schedulable(node: &Node, pod: &Pod) -> bool {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    ready
        && node.metadata.deletion_timestamp.is_none()
        && tolerates_all(taints, tolerations).is_ok()
}
