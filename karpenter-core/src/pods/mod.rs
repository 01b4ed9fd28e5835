//! What a pod's metadata and status say, as upstream Karpenter's pod and
//! PodDisruptionBudget helpers (`pkg/utils/pod`, `pkg/utils/pdb`) read them:
//! how plans name a pod, whether it has finished or is being deleted, who owns
//! it, whether it must find a new node when its node goes, whether
//! `karpenter.sh/do-not-disrupt` or a PodDisruptionBudget holds it in place.
//!
//! Provisioning and disruption both ask these questions (provisioning plans
//! for the pods of nodes being deleted), so the answers live below both, and
//! this module is their one public home: which pods are pending
//! ([`is_pending`]), how plans name them ([`PodKey`]), what a snapshot keeps
//! of each ([`PodInfo`]).

use k8s_openapi::api::core::v1::PodCondition;

mod cost;
mod dra;
mod info;
mod key;
mod pdbs;
mod pending;
mod protection;
#[cfg(test)]
pub(crate) mod test_pods;

pub(crate) use cost::{
    PER_NODE_BASE_DISRUPTION_COST, disruption_cost, lifetime_remaining, reschedule_disruption_cost,
};
pub use dra::has_dra_requirements;
pub use info::{PodFields, PodInfo, PodInfoStatus, PodInterner};
pub use key::{PodKey, PodKeyError};
pub(crate) use pdbs::Pdbs;
pub(crate) use pending::{as_unschedulable, is_pending_but_for_nomination};
pub use pending::{is_pending, is_preempting, marked_unschedulable, nominated_node};
pub(crate) use protection::{PodBlock, do_not_disrupt};
pub(crate) use protection::{goes_through_eviction, waits_for_eviction};

/// How plans name a pod: `namespace/name` (namespace `default` when unset),
/// the name callers know for [`PodKey::of`].
pub fn pod_key(pod: &(impl PodFields + ?Sized)) -> PodKey {
    PodKey::of(pod)
}

/// The node a pod is bound to, if any.
pub fn bound_node(pod: &(impl PodFields + ?Sized)) -> Option<&str> {
    pod.node_name().filter(|n| !n.is_empty())
}

/// Whether a pod is owned by a DaemonSet, of whatever API group: what a
/// DaemonSet's pods look like to provisioning's daemon overhead. The rules
/// that follow upstream's `IsOwnedByDaemonSet` match the group too (as
/// disruption's test of whether a pod needs a new home does).
pub fn is_daemon_pod(pod: &(impl PodFields + ?Sized)) -> bool {
    pod.metadata()
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "DaemonSet")
}

/// Whether a pod has finished (phase Succeeded or Failed).
pub fn is_terminal(pod: &(impl PodFields + ?Sized)) -> bool {
    matches!(pod.phase(), Some("Succeeded" | "Failed"))
}

/// Whether the pod is being deleted (upstream `IsTerminating`).
pub(crate) fn is_terminating(pod: &(impl PodFields + ?Sized)) -> bool {
    pod.metadata().deletion_timestamp.is_some()
}

/// Neither finished nor being deleted (upstream `IsActive`).
pub(crate) fn is_active(pod: &(impl PodFields + ?Sized)) -> bool {
    !is_terminal(pod) && !is_terminating(pod)
}

/// Whether an owner reference names `kind` in `api_version`. Upstream compares
/// both, so a look-alike kind from another API group (OpenKruise's Advanced
/// DaemonSet is `apps.kruise.io/v1alpha1` `DaemonSet`) is not the built-in one;
/// this is why the kind-only [`is_daemon_pod`] is not used here.
pub(crate) fn is_owned_by(pod: &(impl PodFields + ?Sized), api_version: &str, kind: &str) -> bool {
    pod.metadata()
        .owner_references
        .iter()
        .flatten()
        .any(|owner| owner.api_version == api_version && owner.kind == kind)
}

/// A static pod, which the kubelet mirrors with the Node as owner (upstream
/// `IsOwnedByNode`): the API server cannot delete or evict it.
pub(crate) fn is_owned_by_node(pod: &(impl PodFields + ?Sized)) -> bool {
    is_owned_by(pod, "v1", "Node")
}

/// Whether the pod must find room elsewhere when its node goes (upstream
/// `IsReschedulable`): an active pod, or a terminating one owned by a
/// StatefulSet (its replacement cannot be created until it is gone, so it is
/// counted as if still running), but never a DaemonSet's pod (the DaemonSet
/// runs one on every node anyway) nor a static pod.
pub(crate) fn is_reschedulable(pod: &(impl PodFields + ?Sized)) -> bool {
    (is_active(pod) || (is_owned_by(pod, "apps/v1", "StatefulSet") && is_terminating(pod)))
        && !is_owned_by(pod, "apps/v1", "DaemonSet")
        && !is_owned_by_node(pod)
}

/// The condition the kube-scheduler writes on a pod it has tried.
pub(crate) const POD_SCHEDULED: &str = "PodScheduled";
/// Its reason when no node can take the pod.
pub(crate) const UNSCHEDULABLE: &str = "Unschedulable";

/// The condition the kube-scheduler writes on a pod it cannot place
/// (`PodScheduled` `False`, reason `Unschedulable`), which provisioning's
/// `is_pending` reads: what every pod made to be planned for carries.
pub(crate) fn unschedulable_condition() -> PodCondition {
    PodCondition {
        type_: POD_SCHEDULED.to_owned(),
        status: "False".to_owned(),
        reason: Some(UNSCHEDULABLE.to_owned()),
        ..PodCondition::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::test_pods::{NOW, owned_by, pod, running};
    use super::*;

    #[test]
    fn reschedulable_pods() {
        assert!(is_reschedulable(&pod(running("web", NOW))));
        assert!(is_reschedulable(&pod(owned_by("apps/v1", "ReplicaSet"))));
        // A pending pod bound to the node is active too.
        assert!(is_reschedulable(&pod(
            json!({"metadata": {"name": "p"}, "status": {"phase": "Pending"}})
        )));
        // The DaemonSet recreates its pod on every node; a static pod is the kubelet's.
        assert!(!is_reschedulable(&pod(owned_by("apps/v1", "DaemonSet"))));
        assert!(!is_reschedulable(&pod(owned_by("v1", "Node"))));
        // Upstream matches the API group too: a look-alike kind is an ordinary owner.
        assert!(is_reschedulable(&pod(owned_by(
            "apps.kruise.io/v1alpha1",
            "DaemonSet"
        ))));

        let mut finished = running("done", NOW);
        finished["status"]["phase"] = json!("Succeeded");
        assert!(!is_reschedulable(&pod(finished)));

        // A terminating StatefulSet pod still needs room (its successor waits for
        // it); any other terminating pod does not.
        let terminating = |mut value: Value| {
            value["metadata"]["deletionTimestamp"] = json!(NOW);
            pod(value)
        };
        assert!(is_reschedulable(&terminating(owned_by(
            "apps/v1",
            "StatefulSet"
        ))));
        assert!(!is_reschedulable(&terminating(owned_by(
            "apps/v1",
            "ReplicaSet"
        ))));
    }

    #[test]
    fn keys_and_bindings() {
        assert_eq!(
            pod_key(&pod(json!({"metadata": {"name": "web"}}))),
            "default/web"
        );
        assert_eq!(pod_key(&pod(running("db", NOW))), "default/db");
        let mut bound = running("db", NOW);
        bound["spec"] = json!({"nodeName": "node-a", "containers": []});
        assert_eq!(bound_node(&pod(bound.clone())), Some("node-a"));
        bound["spec"]["nodeName"] = json!("");
        assert_eq!(bound_node(&pod(bound)), None);
        // The kind alone makes a daemon pod here, whatever its group.
        assert!(is_daemon_pod(&pod(owned_by(
            "apps.kruise.io/v1alpha1",
            "DaemonSet"
        ))));
        assert!(!is_daemon_pod(&pod(owned_by("apps/v1", "ReplicaSet"))));
    }
}
