//! The pods of nodes on their way out: provisioning plans for them as for
//! pending pods, as upstream's `Provisioner.Schedule` adds
//! `nodes.Deleting().CurrentlyReschedulablePods(...)` to the pending pods.
//!
//! A node is on its way out when it is being deleted or a disruption command
//! has tainted it `karpenter.sh/disrupted`
//! ([`ClusterNode::is_marked_for_deletion`]). Its pods that are *currently
//! reschedulable* will be evicted and need a home: reschedulable (not a
//! DaemonSet's or a static pod, not finished, and not being deleted unless a
//! StatefulSet owns it), not held by `karpenter.sh/do-not-disrupt`, and not
//! behind a PodDisruptionBudget that forbids every eviction. Capacity is not
//! planned for the pods that will not leave: upstream does not know when they
//! would.
//!
//! [`ClusterNode::is_marked_for_deletion`]: crate::snapshot::ClusterNode::is_marked_for_deletion

use k8s_openapi::jiff::Timestamp;

use crate::fast_hash::HashSet;
use crate::pods::{Pdbs, bound_node};
use crate::snapshot::Snapshot;

/// The snapshot's pods that leave with their node, as indices into its
/// pods, in order. A `karpenter.sh/do-not-disrupt` annotation with a
/// duration is judged at `now`; without a clock it holds its pod, as
/// upstream holds a pod whose start time is unknown.
pub(crate) fn leaving_pods(snapshot: &Snapshot, now: Option<Timestamp>) -> Vec<usize> {
    // Only a node with a Node object has pods bound to it (upstream reads a
    // deleting node's pods only when its Node exists).
    let leaving: HashSet<&str> = snapshot
        .nodes
        .iter()
        .filter(|n| n.node.is_some() && n.is_marked_for_deletion())
        .map(|n| n.name())
        .collect();
    if leaving.is_empty() {
        return Vec::new();
    }
    let pdbs = Pdbs::new(&snapshot.pod_disruption_budgets);
    // Judged at the start of time, every duration still protects its pod.
    let now = now.unwrap_or(Timestamp::MIN);
    snapshot
        .pods
        .iter()
        .enumerate()
        .filter(|(_, pod)| bound_node(pod).is_some_and(|node| leaving.contains(node)))
        .filter(|(_, pod)| pdbs.is_currently_reschedulable(pod, now))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::json;

    use super::*;
    use crate::provisioning::test_support::{instance_type, pod, snapshot};
    use crate::provisioning::{ProvisioningOptions, plan_provisioning, plan_provisioning_with};
    use crate::snapshot::ClusterNode;

    /// Node `old` in zone-a; `deleting`: tainted by a disruption command.
    fn node(deleting: bool) -> ClusterNode {
        let taints = if deleting {
            json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])
        } else {
            json!([])
        };
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "old", "labels": {"topology.kubernetes.io/zone": "zone-a"}},
            "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
        }))
        .expect("a Node");
        ClusterNode {
            node: Some(Arc::new(node)),
            node_claim: None,
        }
    }

    /// `pod` running on `old` since 2024-05-01T12:00:00Z.
    fn on_old(mut pod: Pod) -> Pod {
        pod.spec.as_mut().expect("a spec").node_name = Some("old".to_owned());
        pod.status = Some(
            serde_json::from_value(
                json!({"phase": "Running", "startTime": "2024-05-01T12:00:00Z"}),
            )
            .expect("a status"),
        );
        pod
    }

    fn with_do_not_disrupt(mut pod: Pod, value: &str) -> Pod {
        pod.metadata.annotations =
            Some([("karpenter.sh/do-not-disrupt".to_owned(), value.to_owned())].into());
        pod
    }

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a timestamp")
    }

    #[test]
    fn only_the_pods_of_nodes_on_their_way_out_leave() {
        let pods = vec![pod("pending", "1", "1Gi"), on_old(pod("web", "1", "1Gi"))];
        let mut cluster = snapshot(vec![instance_type("m", 4, 8, 0.2)], pods);
        cluster.nodes = vec![node(false)];
        assert_eq!(leaving_pods(&cluster, None), Vec::<usize>::new());
        cluster.nodes = vec![node(true)];
        assert_eq!(leaving_pods(&cluster, None), [1]);
        let plan = plan_provisioning(&cluster);
        assert_eq!(plan.node_claims.len(), 1);
        assert_eq!(plan.node_claims[0].pods, ["default/pending", "default/web"]);
    }

    #[test]
    fn a_do_not_disrupt_duration_holds_its_pod_until_it_runs_out() {
        let held = with_do_not_disrupt(on_old(pod("batch", "1", "1Gi")), "1h");
        let mut cluster = snapshot(vec![instance_type("m", 4, 8, 0.2)], vec![held]);
        cluster.nodes = vec![node(true)];
        // Without a clock the duration holds, as for a pod not started yet.
        assert!(leaving_pods(&cluster, None).is_empty());
        assert!(leaving_pods(&cluster, Some(at("2024-05-01T12:59:59Z"))).is_empty());
        assert_eq!(
            leaving_pods(&cluster, Some(at("2024-05-01T13:00:00Z"))),
            [0]
        );
        let later = ProvisioningOptions::default().at(at("2024-05-01T13:00:00Z"));
        assert_eq!(
            plan_provisioning_with(&cluster, &later).node_claims.len(),
            1
        );
        assert!(plan_provisioning(&cluster).node_claims.is_empty());
    }

    #[test]
    fn a_leaving_pod_is_counted_where_it_lands_not_where_it_runs() {
        // web may share no zone with a web pod. Without a UID to tell it
        // apart, its copy on `old` (zone-a, the only zone) would keep it out
        // of every zone.
        let mut web = on_old(pod("web", "1", "1Gi"));
        web.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
        web.spec.as_mut().expect("a spec").affinity = Some(
            serde_json::from_value(json!({"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "topology.kubernetes.io/zone",
                }],
            }}))
            .expect("an affinity"),
        );
        web.metadata.uid = None;
        let mut cluster = snapshot(vec![instance_type("m", 4, 8, 0.2)], vec![web]);
        cluster.nodes = vec![node(true)];
        let plan = plan_provisioning(&cluster);
        assert_eq!(plan.unschedulable, []);
        assert_eq!(plan.node_claims.len(), 1);
        assert_eq!(crate::provisioning::validate(&cluster, &plan), []);
    }
}
