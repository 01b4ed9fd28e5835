//! The pods provisioning places: which pods are pending, what each asks for, and
//! the order the queue takes them in.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::jiff::Timestamp;

use crate::resources::{self, ResourceList};
use crate::scheduling::{
    Requirements, WellKnownLabels, has_preferred_node_affinity, validate_pod_spec,
};

/// A pod waiting for capacity, with what scheduling needs to know of it. `spec`
/// is the pod's own copy: relaxation removes preferences from it.
#[derive(Clone, Debug)]
pub(crate) struct PendingPod {
    /// `namespace/name`, as the plan names pods.
    pub key: String,
    /// The UID (the name when the pod has none), the queue's last tie-break.
    pub uid: String,
    /// The namespace.
    pub namespace: String,
    /// The labels.
    pub labels: BTreeMap<String, String>,
    /// The spec, relaxed as scheduling goes.
    pub spec: PodSpec,
    /// What it requests, `pods: 1` included.
    pub requests: ResourceList,
    /// When it was created.
    pub created: Option<Timestamp>,
    /// nodeSelector, the first required node-affinity term and the heaviest preferred
    /// term as if required.
    pub requirements: Requirements,
    /// The same without the preferred term.
    pub strict_requirements: Requirements,
    /// The node requirements its volumes bring, one set per alternative (empty:
    /// none); they go on the node, never into the pod's own requirements.
    pub volume_alternatives: Vec<Requirements>,
    /// Pods with the same signature meet the same topology answers on the same
    /// node: same namespace, labels, affinity, spread, node selection and
    /// tolerations (an index into the scheduler's signatures).
    pub topology_signature: usize,
}

/// A pod that cannot even be considered, with why.
pub(crate) struct Rejected {
    pub key: String,
    pub reason: String,
}

/// `namespace/name`.
pub(crate) fn pod_key(pod: &Pod) -> String {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    format!(
        "{namespace}/{}",
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Whether a pod is owned by a DaemonSet.
pub fn is_daemon_pod(pod: &Pod) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "DaemonSet")
}

/// Whether a pod has finished (phase Succeeded or Failed).
pub fn is_terminal(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    matches!(phase, Some("Succeeded" | "Failed"))
}

/// The node a pod is bound to, if any.
pub fn bound_node(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()?
        .node_name
        .as_deref()
        .filter(|n| !n.is_empty())
}

/// Whether a pod needs capacity: not bound, not finished, not being deleted, not a
/// daemon pod (daemons are accounted as overhead of every node instead).
pub fn is_pending(pod: &Pod) -> bool {
    bound_node(pod).is_none()
        && !is_terminal(pod)
        && pod.metadata.deletion_timestamp.is_none()
        && !is_daemon_pod(pod)
}

impl PendingPod {
    /// Reads a pending pod; an invalid one (a quantity or a selector that cannot be
    /// read, a restricted label) is rejected with why.
    pub(crate) fn new(pod: &Pod, well_known: &WellKnownLabels) -> Result<PendingPod, Rejected> {
        let key = pod_key(pod);
        let reject = |reason: String| Rejected {
            key: pod_key(pod),
            reason,
        };
        let spec = pod.spec.clone().unwrap_or_default();
        let requests = resources::pod_requests(&spec).map_err(|e| reject(e.to_string()))?;
        validate_pod_spec(&spec, well_known).map_err(|e| reject(e.to_string()))?;
        let mut pending = PendingPod {
            uid: pod.metadata.uid.clone().unwrap_or_else(|| key.clone()),
            namespace: pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_string()),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
            key,
            spec,
            requests,
            requirements: Requirements::new(),
            strict_requirements: Requirements::new(),
            volume_alternatives: Vec::new(),
            topology_signature: 0,
        };
        pending.refresh().map_err(reject)?;
        Ok(pending)
    }

    /// Recomputes the requirements from the (relaxed) spec.
    pub(crate) fn refresh(&mut self) -> Result<(), String> {
        self.requirements = Requirements::from_pod_spec(&self.spec).map_err(|e| e.to_string())?;
        self.strict_requirements = if has_preferred_node_affinity(&self.spec) {
            Requirements::from_pod_spec_strict(&self.spec).map_err(|e| e.to_string())?
        } else {
            self.requirements.clone()
        };
        Ok(())
    }
}

impl PendingPod {
    /// The text two pods share exactly when topology cannot tell them apart.
    pub(crate) fn topology_text(&self) -> String {
        let spec = &self.spec;
        let parts = (
            &self.namespace,
            &self.labels,
            &spec.affinity,
            &spec.topology_spread_constraints,
            &spec.node_selector,
            &spec.tolerations,
        );
        serde_json::to_string(&parts).unwrap_or_default()
    }
}

/// The queue's order, as upstream: cpu descending, memory descending, creation
/// time, then UID.
pub(crate) fn queue_order(a: &PendingPod, b: &PendingPod) -> Ordering {
    let cpu = |p: &PendingPod| p.requests.get(resources::CPU);
    let memory = |p: &PendingPod| p.requests.get(resources::MEMORY);
    cpu(b)
        .cmp(&cpu(a))
        .then_with(|| memory(b).cmp(&memory(a)))
        .then_with(|| a.created.cmp(&b.created))
        .then_with(|| a.uid.cmp(&b.uid))
}
