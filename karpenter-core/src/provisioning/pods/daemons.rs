//! DaemonSet pods: every new node runs the daemons that tolerate it and whose node
//! selection admits it, so their requests are overhead on that node.

use std::sync::Arc;

use crate::pods::PodInfo;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration};

use super::dra::has_dra_requirements;
use super::host_ports::{HostPort, host_ports};
use super::preferences::remove_required_node_affinity_term;
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

/// Whether `pod` belongs to `daemon_set`: same namespace, owned by it.
pub(crate) fn is_pod_of(daemon_set: &DaemonSet, pod: &PodInfo) -> bool {
    pod.metadata.namespace == daemon_set.metadata.namespace
        && pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "DaemonSet" && Some(&o.name) == daemon_set.metadata.name.as_ref())
}

/// The newest of a DaemonSet's live pods, as upstream picks the one that
/// stands for them (the last of equally new ones).
pub(crate) fn newest<'p>(pods: impl Iterator<Item = &'p PodInfo>) -> Option<&'p PodInfo> {
    pods.max_by(|a, b| {
        a.metadata
            .creation_timestamp
            .cmp(&b.metadata.creation_timestamp)
    })
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
