//! Draining a node before its instance goes, as upstream's terminator does
//! (`pkg/controllers/node/termination/terminator`): the pods waiting for
//! eviction are evicted one priority group at a time (ordinary pods, then
//! ordinary DaemonSet pods, then critical pods, then critical DaemonSet
//! pods), each through the Eviction API, so that a PodDisruptionBudget that
//! allows no disruption holds its pod (and the node) until it does.
//!
//! A pod whose `karpenter.sh/do-not-disrupt` is active is never evicted, as
//! upstream's eviction queue keeps it waiting (`IsEvictable`): the drain
//! waits for it to finish, for its annotation to run out, or for the claim's
//! `terminationGracePeriod` to end, when the node goes with it.

use std::sync::Arc;

use jiff::Timestamp;

use super::Driver;
use super::report::{Event, Report};
use crate::cluster::Eviction;
use crate::error::Error;
use crate::pods::{
    PodInfo, PodKey, bound_node, do_not_disrupt, goes_through_eviction, is_daemon_pod,
    waits_for_eviction,
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
/// waiting for eviction that is not already on its way out; of it, the pods
/// whose `karpenter.sh/do-not-disrupt` is not active at `now` (evicted), and
/// those whose is (waited for). Both empty when only terminating pods are
/// left (or none).
fn next_group<'p>(
    pods: &'p [Arc<PodInfo>],
    node: &str,
    now: Timestamp,
) -> (Vec<&'p PodInfo>, Vec<&'p PodInfo>) {
    let evictable = || {
        pods.iter()
            .map(Arc::as_ref)
            .filter(|p| bound_node(p) == Some(node) && goes_through_eviction(p))
    };
    (0..GROUPS)
        .map(|g| evictable().filter(|p| group(p) == g).collect::<Vec<_>>())
        .find(|pods| !pods.is_empty())
        .unwrap_or_default()
        .into_iter()
        .partition(|p| do_not_disrupt(*p, now).is_none())
}

/// Drains the node at `now`: evicts its pods group by group while the
/// cluster lets it, and says whether the node is drained (no pod waits for
/// eviction any more). A pod a PodDisruptionBudget holds is reported and
/// tried again at the next reconcile; so is a group whose pods are still
/// terminating. A pod `karpenter.sh/do-not-disrupt` keeps is reported and
/// waited for, and holds back the groups after its own.
pub(super) async fn drain(
    driver: &Driver,
    node: &str,
    now: Timestamp,
    report: &mut Report,
) -> Result<bool, Error> {
    // Each round evicts one group; pods that leave at once (as the in-memory
    // cluster's do) let the next group go in the same reconcile.
    for _ in 0..GROUPS {
        let pods = driver.cluster.pods().await?;
        if !pods.iter().any(|p| waiting_eviction(p, node)) {
            return Ok(true);
        }
        let (group, kept) = next_group(&pods, node, now);
        for pod in &kept {
            report.push(Event::EvictionWaiting {
                pod: PodKey::of(*pod),
                node: node.to_owned(),
            });
        }
        if group.is_empty() {
            return Ok(false);
        }
        let mut blocked = !kept.is_empty();
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
        let first: Vec<_> = next_group(&pods, "node-a", now())
            .0
            .into_iter()
            .map(PodKey::of)
            .collect();
        assert_eq!(first, ["default/web"]);
        let later: Vec<_> = next_group(&pods[..3], "node-a", now())
            .0
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
        let leaving = [Arc::new(leaving)];
        let (evicted, kept) = next_group(&leaving, "node-a", now());
        assert!(evicted.is_empty() && kept.is_empty());
    }

    fn now() -> Timestamp {
        "2026-06-01T00:00:00Z".parse().expect("a time")
    }

    #[test]
    fn an_active_do_not_disrupt_pod_is_waited_for_not_evicted() {
        let guarded = |value: &str| {
            pod(
                "guarded",
                json!({
                    "metadata": {"annotations": {"karpenter.sh/do-not-disrupt": value}},
                    "status": {"startTime": "2026-05-31T23:00:00Z"},
                }),
            )
        };
        let names = |pods: Vec<&PodInfo>| -> Vec<String> {
            pods.into_iter()
                .map(|p| PodKey::of(p).to_string())
                .collect()
        };
        let pods = [guarded("true"), pod("web", json!({}))].map(Arc::new);
        let (evicted, kept) = next_group(&pods, "node-a", now());
        assert_eq!(names(evicted), ["default/web"]);
        assert_eq!(names(kept), ["default/guarded"]);
        // It still keeps the node from draining.
        assert!(waiting_eviction(&pods[0], "node-a"));
        // A duration counts from the pod's start: 2h is still active after
        // one hour, 30m is over and the pod is evicted as any other.
        let two_hours = [Arc::new(guarded("2h"))];
        let (evicted, kept) = next_group(&two_hours, "node-a", now());
        assert!(evicted.is_empty() && kept.len() == 1);
        let half_an_hour = [Arc::new(guarded("30m"))];
        let (evicted, kept) = next_group(&half_an_hour, "node-a", now());
        assert!(evicted.len() == 1 && kept.is_empty());
    }
}
