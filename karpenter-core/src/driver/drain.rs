//! Draining a node before its instance goes, as upstream's terminator does
//! (`pkg/controllers/node/termination/terminator`): the pods waiting for
//! eviction are evicted one priority group at a time (ordinary pods, then
//! ordinary DaemonSet pods, then critical pods, then critical DaemonSet
//! pods), each through the Eviction API, so that a PodDisruptionBudget that
//! allows no disruption holds its pod (and the node) until it does.

use std::sync::Arc;

use super::Driver;
use super::report::{Event, Report};
use crate::cluster::Eviction;
use crate::error::Error;
use crate::pods::{
    PodInfo, PodKey, bound_node, goes_through_eviction, is_daemon_pod, waits_for_eviction,
};

/// The priority classes whose pods are evicted last (upstream's "critical").
const CRITICAL_PRIORITY_CLASSES: [&str; 2] = ["system-cluster-critical", "system-node-critical"];

/// How many priority groups there are (see [`group`]).
const GROUPS: usize = 4;

/// Whether the pod keeps `node` from being drained: bound to it, and one
/// draining waits for ([`waits_for_eviction`]).
fn waiting_eviction(pod: &PodInfo, node: &str) -> bool {
    bound_node(pod) == Some(node) && waits_for_eviction(pod)
}

/// The pod's eviction group: 0 for ordinary pods, 1 for ordinary DaemonSet
/// pods, 2 for critical pods, 3 for critical DaemonSet pods.
fn group(pod: &PodInfo) -> usize {
    let critical = pod
        .spec
        .as_ref()
        .and_then(|s| s.priority_class_name.as_deref())
        .is_some_and(|class| CRITICAL_PRIORITY_CLASSES.contains(&class));
    usize::from(critical) * 2 + usize::from(is_daemon_pod(pod))
}

/// The pods to evict next: the first group, in [`group`] order, with a pod
/// waiting for eviction that is not already on its way out. Empty when only
/// terminating pods are left (or none).
fn next_group<'p>(pods: &'p [Arc<PodInfo>], node: &str) -> Vec<&'p PodInfo> {
    let evictable = || {
        pods.iter()
            .map(Arc::as_ref)
            .filter(|p| bound_node(p) == Some(node) && goes_through_eviction(p))
    };
    (0..GROUPS)
        .map(|g| evictable().filter(|p| group(p) == g).collect::<Vec<_>>())
        .find(|pods| !pods.is_empty())
        .unwrap_or_default()
}

/// Drains the node: evicts its pods group by group while the cluster lets
/// it, and says whether the node is drained (no pod waits for eviction any
/// more). A pod a PodDisruptionBudget holds is reported and tried again at
/// the next reconcile; so is a group whose pods are still terminating.
pub(super) async fn drain(driver: &Driver, node: &str, report: &mut Report) -> Result<bool, Error> {
    // Each round evicts one group; pods that leave at once (as the in-memory
    // cluster's do) let the next group go in the same reconcile.
    for _ in 0..GROUPS {
        let pods = driver.cluster.pods().await?;
        if !pods.iter().any(|p| waiting_eviction(p, node)) {
            return Ok(true);
        }
        let group = next_group(&pods, node);
        if group.is_empty() {
            return Ok(false);
        }
        let mut blocked = false;
        for pod in group {
            let key = PodKey::of(pod);
            if driver.cluster.evict_pod(&key).await? == Eviction::Blocked {
                blocked = true;
                report.push(Event::EvictionBlocked {
                    pod: key,
                    node: node.to_owned(),
                });
            }
        }
        if blocked {
            return Ok(false);
        }
    }
    let pods = driver.cluster.pods().await?;
    Ok(!pods.iter().any(|p| waiting_eviction(p, node)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, extra: serde_json::Value) -> PodInfo {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "c"}]},
            "status": {"phase": "Running"},
        });
        json_patch(&mut value, extra);
        PodInfo::of(&serde_json::from_value(value).expect("a pod"))
    }

    /// Merges `patch` into `value`, object by object.
    fn json_patch(value: &mut serde_json::Value, patch: serde_json::Value) {
        match (value, patch) {
            (serde_json::Value::Object(into), serde_json::Value::Object(from)) => {
                for (key, patch) in from {
                    json_patch(into.entry(key).or_insert(serde_json::Value::Null), patch);
                }
            }
            (slot, patch) => *slot = patch,
        }
    }

    fn daemon() -> serde_json::Value {
        json!({"metadata": {"ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u"},
        ]}})
    }

    fn critical() -> serde_json::Value {
        json!({"spec": {"priorityClassName": "system-node-critical"}})
    }

    #[test]
    fn groups_go_ordinary_first_critical_daemons_last() {
        let mut critical_daemon = daemon();
        json_patch(&mut critical_daemon, critical());
        let pods = [
            pod("critical-daemon", critical_daemon),
            pod("critical", critical()),
            pod("daemon", daemon()),
            pod("web", json!({})),
        ]
        .map(Arc::new);
        let groups: Vec<usize> = pods.iter().map(|p| group(p)).collect();
        assert_eq!(groups, [3, 2, 1, 0]);
        let first: Vec<_> = next_group(&pods, "node-a")
            .into_iter()
            .map(PodKey::of)
            .collect();
        assert_eq!(first, ["default/web"]);
        let later: Vec<_> = next_group(&pods[..3], "node-a")
            .into_iter()
            .map(PodKey::of)
            .collect();
        assert_eq!(later, ["default/daemon"]);
    }

    #[test]
    fn only_pods_that_must_leave_keep_a_node_from_draining() {
        let finished = pod("done", json!({"status": {"phase": "Succeeded"}}));
        let mirror = pod(
            "kube-proxy",
            json!({"metadata": {"ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": "n"},
            ]}}),
        );
        let tolerant = pod(
            "agent",
            json!({"spec": {"tolerations": [{"operator": "Exists"}]}}),
        );
        let elsewhere = pod("away", json!({"spec": {"nodeName": "node-b"}}));
        for pod in [&finished, &mirror, &tolerant, &elsewhere] {
            assert!(!waiting_eviction(pod, "node-a"), "{:?}", PodKey::of(pod));
        }
        let leaving = pod(
            "leaving",
            json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
        );
        // Still waiting, but not evicted again.
        assert!(waiting_eviction(&leaving, "node-a"));
        assert!(next_group(&[Arc::new(leaving)], "node-a").is_empty());
    }
}
