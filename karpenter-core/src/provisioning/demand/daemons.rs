//! DaemonSet pods: every new node runs the daemons that tolerate it and whose node
//! selection admits it, so their requests are overhead on that node.

use std::sync::Arc;

use crate::pods::PodInfo;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration};

use super::host_ports::{HostPort, host_ports};
use super::preferences::remove_required_node_affinity_term;
use crate::pods::has_dra_requirements;
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    Requirements, TAINT_EFFECT_PREFER_NO_SCHEDULE, WellKnownLabels, tolerates_all,
};

/// A DaemonSet's pod as provisioning counts it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DaemonPod {
    /// The pod spec: a live pod's when one runs (it carries what the cluster really
    /// asks for), else the template's; node affinity always the template's (the
    /// DaemonSet controller rewrites live pods' affinity to pin them to a node).
    pub spec: PodSpec,
    /// Its requests.
    pub requests: ResourceList,
    /// The host ports it binds.
    pub host_ports: Vec<HostPort>,
}

/// The daemon pods of the DaemonSets (a DaemonSet whose pod spec cannot be read is
/// left out: it was refused when the input was read). A daemon pod with Dynamic
/// Resource Allocation claims is left out too: upstream's default
/// `ignore-dra-requests` counts it neither as overhead of new nodes nor as room
/// to keep on existing ones.
pub(crate) fn daemon_pods(daemon_sets: &[DaemonSet], pods: &[Arc<PodInfo>]) -> Vec<DaemonPod> {
    daemon_sets
        .iter()
        .filter_map(|ds| {
            let live = newest(pods.iter().map(Arc::as_ref).filter(|p| is_pod_of(ds, p)));
            daemon_pod(ds, live)
        })
        .filter(|daemon| !has_dra_requirements(&daemon.spec))
        .collect()
}

/// Whether `pod` belongs to `daemon_set`, as upstream's cluster state finds a
/// DaemonSet's pods (`metav1.IsControlledBy`): in its namespace, with a
/// controller reference (`controller: true`) to it. A DaemonSet with a UID is
/// matched by UID alone, as upstream does (a pod of an earlier DaemonSet of
/// the same name is not its pod); one written without a UID, as hand-written
/// scenarios are, by kind and name.
pub(crate) fn is_pod_of(daemon_set: &DaemonSet, pod: &PodInfo) -> bool {
    if pod.metadata.namespace != daemon_set.metadata.namespace {
        return false;
    }
    let Some(controller) = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
    else {
        return false;
    };
    match daemon_set.metadata.uid.as_deref() {
        Some(uid) => controller.uid == uid,
        None => {
            controller.kind == "DaemonSet"
                && Some(&controller.name) == daemon_set.metadata.name.as_ref()
        }
    }
}

/// Whether `pod` belongs to one of `daemon_sets` (see [`is_pod_of`]).
pub(crate) fn is_pod_of_any(daemon_sets: &[DaemonSet], pod: &PodInfo) -> bool {
    daemon_sets.iter().any(|ds| is_pod_of(ds, pod))
}

/// The newest of a DaemonSet's live pods, the one that stands for them as
/// upstream's cluster state keeps it (`UpdateDaemonSet`: a pod replaces the
/// one found so far only when strictly newer, so the first listed of equally
/// new ones).
pub(crate) fn newest<'p>(pods: impl Iterator<Item = &'p PodInfo>) -> Option<&'p PodInfo> {
    pods.fold(None, |newest: Option<&PodInfo>, pod| match newest {
        Some(found) if created(pod) <= created(found) => Some(found),
        _ => Some(pod),
    })
}

fn created(pod: &PodInfo) -> Option<k8s_openapi::jiff::Timestamp> {
    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// The daemon pod of `ds` as its `live` pod (else its template) asks for it;
/// `None` when its spec cannot be read.
pub(crate) fn daemon_pod(ds: &DaemonSet, live: Option<&PodInfo>) -> Option<DaemonPod> {
    let template_spec = ds.spec.template.spec.clone().unwrap_or_default();
    let mut spec = live
        .and_then(|p| p.spec.as_deref().cloned())
        .unwrap_or_else(|| template_spec.clone());
    // The DaemonSet controller pins each live pod to its node with a
    // `matchFields` term; what selects nodes is the template's affinity.
    let template_required = template_spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .clone()
        });
    if let Some(node_affinity) = spec
        .affinity
        .as_mut()
        .and_then(|a| a.node_affinity.as_mut())
    {
        node_affinity.required_during_scheduling_ignored_during_execution = template_required;
    } else if let Some(required) = template_required {
        let affinity = spec.affinity.get_or_insert_with(Default::default);
        let node_affinity = affinity.node_affinity.get_or_insert_with(Default::default);
        node_affinity.required_during_scheduling_ignored_during_execution = Some(required);
    }
    spec.node_name = None;
    let requests = resources::pod_requests(&spec).ok()?;
    let host_ports = host_ports(&spec);
    Some(DaemonPod {
        spec,
        requests,
        host_ports,
    })
}

impl DaemonPod {
    /// Whether this daemon would run on a node of a NodePool whose template has
    /// `template_requirements` and `template_taints`, of an instance type with
    /// `type_requirements`. A daemon ignores `PreferNoSchedule`; its required
    /// node-affinity terms are tried one by one.
    pub(crate) fn runs_on(
        &self,
        template_requirements: &Requirements,
        template_taints: &[Taint],
        type_requirements: &Requirements,
        well_known: &WellKnownLabels,
    ) -> bool {
        let mut tolerations = self.spec.tolerations.clone().unwrap_or_default();
        tolerations.push(Toleration {
            operator: Some("Exists".to_string()),
            effect: Some(TAINT_EFFECT_PREFER_NO_SCHEDULE.to_string()),
            ..Toleration::default()
        });
        if tolerates_all(template_taints, &tolerations).is_err() {
            return false;
        }
        let mut spec = self.spec.clone();
        loop {
            let Ok(requirements) = Requirements::from_pod_spec_strict(&spec) else {
                return false;
            };
            if template_requirements.is_compatible(&requirements, well_known)
                && type_requirements.is_intersecting(&requirements)
            {
                return true;
            }
            // Only the required terms are relaxed for daemons (upstream ignores their
            // other preferences here).
            if !remove_required_node_affinity_term(&mut spec) {
                return false;
            }
        }
    }

    /// Whether this daemon runs on an existing node with these labels and taints.
    pub(crate) fn runs_on_node(&self, labels: &Requirements, taints: &[Taint]) -> bool {
        let tolerations = self.spec.tolerations.as_deref().unwrap_or_default();
        if tolerates_all(taints, tolerations).is_err() {
            return false;
        }
        Requirements::from_pod_spec_strict(&self.spec)
            .is_ok_and(|r| labels.is_compatible(&r, &WellKnownLabels::empty()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn daemon_set(uid: Option<&str>) -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "kube-system", "uid": uid},
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "agent", "resources": {"requests": {"cpu": "4"}}}
            ]}}},
        }))
        .expect("a valid DaemonSet")
    }

    fn pod(name: &str, created: &str, owners: Value) -> PodInfo {
        let pod = serde_json::from_value(json!({
            "metadata": {
                "name": name, "namespace": "kube-system",
                "creationTimestamp": created, "ownerReferences": owners,
            },
            "spec": {"containers": [{"name": "agent"}]},
        }))
        .expect("a valid Pod");
        PodInfo::of(&pod)
    }

    fn owner(name: &str, uid: &str, controller: Option<bool>) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name, "uid": uid,
               "controller": controller})
    }

    const AT: &str = "2026-01-01T00:00:00Z";

    #[test]
    fn a_daemon_set_with_a_uid_controls_the_pods_whose_controller_has_it() {
        let ds = daemon_set(Some("uid-2"));
        let is_its = |owners| is_pod_of(&ds, &pod("p", AT, owners));
        assert!(is_its(json!([owner("agent", "uid-2", Some(true))])));
        // An earlier DaemonSet of that name made it.
        assert!(!is_its(json!([owner("agent", "uid-1", Some(true))])));
        // Owned without being controlled.
        assert!(!is_its(json!([owner("agent", "uid-2", None)])));
        assert!(!is_its(json!([owner("agent", "uid-2", Some(false))])));
        assert!(!is_its(json!([])));
        // Another namespace.
        let mut elsewhere = pod("p", AT, json!([owner("agent", "uid-2", Some(true))]));
        elsewhere.metadata.namespace = Some("default".into());
        assert!(!is_pod_of(&ds, &elsewhere));
    }

    #[test]
    fn a_daemon_set_without_a_uid_controls_the_pods_naming_it() {
        let ds = daemon_set(None);
        let is_its = |owners| is_pod_of(&ds, &pod("p", AT, owners));
        assert!(is_its(json!([owner("agent", "any", Some(true))])));
        assert!(!is_its(json!([owner("other", "any", Some(true))])));
        assert!(!is_its(json!([owner("agent", "any", None)])));
        let replica_set = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                  "name": "agent", "uid": "u", "controller": true}]);
        assert!(!is_its(replica_set));
    }

    #[test]
    fn the_newest_pod_stands_for_the_daemon_set_the_first_of_equals() {
        let older = pod("older", AT, json!([]));
        let newer = pod("newer", "2026-01-02T00:00:00Z", json!([]));
        let twin = pod("twin", "2026-01-02T00:00:00Z", json!([]));
        let name = |p: Option<&PodInfo>| p.and_then(|p| p.metadata.name.clone());
        assert_eq!(
            name(newest([&older, &newer].into_iter())),
            Some("newer".into())
        );
        assert_eq!(
            name(newest([&newer, &older].into_iter())),
            Some("newer".into())
        );
        assert_eq!(
            name(newest([&newer, &twin].into_iter())),
            Some("newer".into())
        );
        assert_eq!(
            name(newest([&twin, &newer].into_iter())),
            Some("twin".into())
        );
        assert_eq!(name(newest(std::iter::empty())), None);
    }
}
