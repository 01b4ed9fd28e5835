//! DaemonSets: the pods they would run on a new node, and which of them land on
//! a NodePool's instance type.

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::{PodSpec, Taint};

use super::pods::{first_untolerated, strict_alternatives};
use crate::cloudprovider::InstanceType;
use crate::pods::has_dra_requirements;
use crate::provisioning::demand::daemons::is_pod_of;
use crate::provisioning::demand::host_ports::{HostPort, host_ports};
use crate::resources::{self, ResourceList};
use crate::scheduling::{Requirements, WellKnownLabels};
use crate::snapshot::Snapshot;

/// A DaemonSet's pod, as it counts on new nodes.
pub(super) struct Daemon {
    pub(super) name: String,
    pub(super) spec: PodSpec,
    pub(super) requests: ResourceList,
    pub(super) host_ports: Vec<HostPort>,
}

/// The DaemonSets' pods: the newest live pod's spec (first listed among equals),
/// else the template's; the template's required node affinity always. A pod
/// with Dynamic Resource Allocation claims is no daemon here: upstream's default
/// `ignore-dra-requests` leaves it out of every node's overhead.
pub(super) fn daemons(snapshot: &Snapshot) -> Vec<Daemon> {
    snapshot
        .daemon_sets
        .iter()
        .filter_map(|ds| {
            let template = ds.spec.template.spec.clone().unwrap_or_default();
            let mut live: Option<&PodInfo> = None;
            for pod in &snapshot.pods {
                let owned = is_pod_of(ds, pod);
                let newer = live.is_none_or(|l| {
                    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
                        > l.metadata.creation_timestamp.as_ref().map(|t| t.0)
                });
                if owned && newer {
                    live = Some(pod);
                }
            }
            let mut spec = live
                .and_then(|p| p.spec.as_deref().cloned())
                .unwrap_or_else(|| template.clone());
            let required = template
                .affinity
                .as_ref()
                .and_then(|a| a.node_affinity.as_ref())
                .and_then(|n| {
                    n.required_during_scheduling_ignored_during_execution
                        .clone()
                });
            if let Some(required) = required {
                let affinity = spec.affinity.get_or_insert_with(Default::default);
                affinity
                    .node_affinity
                    .get_or_insert_with(Default::default)
                    .required_during_scheduling_ignored_during_execution = Some(required);
            }
            if has_dra_requirements(&spec) {
                return None;
            }
            let requests = resources::pod_requests(&spec).ok()?;
            Some(Daemon {
                name: format!(
                    "{}/{}",
                    ds.metadata.namespace.as_deref().unwrap_or("default"),
                    ds.metadata.name.as_deref().unwrap_or_default()
                ),
                host_ports: host_ports(&spec),
                spec,
                requests,
            })
        })
        .collect()
}

impl Daemon {
    /// Whether it runs on a new node of type `it` from a pool with these
    /// requirements (`registered`/`initialized` included) and taints.
    pub(super) fn runs_on(
        &self,
        template: &Requirements,
        taints: &[Taint],
        it: &InstanceType,
        well_known: &WellKnownLabels,
    ) -> bool {
        let tolerations = self.spec.tolerations.as_deref().unwrap_or_default();
        if first_untolerated(taints, tolerations).is_some() {
            return false;
        }
        let Ok(alternatives) = strict_alternatives(&self.spec) else {
            return false;
        };
        alternatives
            .iter()
            .any(|r| template.is_compatible(r, well_known) && it.intersects(r))
    }
}
