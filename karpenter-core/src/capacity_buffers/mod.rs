//! Headroom: CapacityBuffers, as upstream Karpenter plans them
//! (`pkg/controllers/capacitybuffer`, `pkg/state/virtualpods`).
//!
//! A buffer names a pod shape (a `v1` PodTemplate, or the template of a
//! Deployment, StatefulSet or ReplicaSet) and a number of chunks; each chunk
//! is a *virtual pod* that provisioning places as it places a pending pod.
//! Room kept for them is room the next real pods find at once.
//!
//! [`CapacityBuffers`] resolves the buffers once, when made: which template
//! each names, how many chunks it wants (upstream's buffer controller:
//! `replicas` and `percentage` of the workload, the larger, capped by
//! `limits`), and the virtual pods. The planners read it only with the
//! `CapacityBuffer` feature gate on (off by default, as upstream):
//!
//! - provisioning plans the virtual pods with the pending pods, in one
//!   queue; a claim that holds only virtual pods is launched (upstream does),
//!   and the plan counts them ([`PlannedClaim::capacity_buffers`],
//!   [`ProvisioningPlan::capacity_buffers`]) but never lists them among pods;
//! - disruption's emptiness keeps a node provisioning would put virtual pods
//!   on, and every simulation plans them as pending pods, so a command whose
//!   nodes hold room the buffers need must find that room elsewhere.
//!
//! [`PlannedClaim::capacity_buffers`]: crate::provisioning::PlannedClaim::capacity_buffers
//! [`ProvisioningPlan::capacity_buffers`]: crate::provisioning::ProvisioningPlan::capacity_buffers

mod resolve;
mod virtual_pods;
mod workload;

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplate;

use crate::api::CapacityBuffer;
use crate::pods::PodInfo;

pub use virtual_pods::{
    BUFFER_NAME_ANNOTATION, BUFFER_NAMESPACE_ANNOTATION, VIRTUAL_POD_ANNOTATION,
};
pub use workload::ScalableWorkload;

/// The cluster's CapacityBuffers, resolved: each buffer's state and the
/// virtual pods of those ready for provisioning. Made once from what the
/// buffers refer to, then read only; cloning shares it.
///
/// ```
/// use karpenter_core::api::CapacityBuffer;
/// use karpenter_core::capacity_buffers::{CapacityBuffers, Readiness};
/// use k8s_openapi::api::core::v1::PodTemplate;
/// use serde_json::json;
///
/// let buffer: CapacityBuffer = serde_json::from_value(json!({
///     "metadata": {"name": "headroom", "namespace": "shop"},
///     "spec": {"podTemplateRef": {"name": "chunk"}, "replicas": 2},
/// }))?;
/// let template: PodTemplate = serde_json::from_value(json!({
///     "metadata": {"name": "chunk", "namespace": "shop"},
///     "template": {"spec": {"containers": [
///         {"name": "pause", "resources": {"requests": {"cpu": "1"}}},
///     ]}},
/// }))?;
/// let buffers = CapacityBuffers::new(vec![buffer], vec![template], Vec::new());
/// assert_eq!(buffers.states()[0].readiness, Readiness::Resolved);
/// assert_eq!(buffers.states()[0].replicas, 2);
/// assert_eq!(buffers.virtual_pod_count(), 2);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct CapacityBuffers {
    inner: Arc<Resolved>,
}

#[derive(Debug, Default)]
struct Resolved {
    buffers: Vec<CapacityBuffer>,
    states: Vec<BufferState>,
    /// The virtual pods, buffer by buffer in the buffers' order.
    pods: Vec<Arc<PodInfo>>,
    /// For each virtual pod, its buffer's index.
    buffer_of: Vec<u32>,
}

/// What a buffer resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferState {
    /// `namespace/name`.
    pub key: String,
    /// Whether its template was found (upstream's `ReadyForProvisioning`
    /// condition), and if not, why.
    pub readiness: Readiness,
    /// How many chunks it wants (upstream's `status.replicas`); 0 when not
    /// resolved.
    pub replicas: u32,
}

impl BufferState {
    /// Whether its template was found.
    pub fn is_resolved(&self) -> bool {
        self.readiness == Readiness::Resolved
    }

    /// Whether it has virtual pods: resolved, with at least one chunk.
    pub fn is_ready_for_provisioning(&self) -> bool {
        self.is_resolved() && self.replicas > 0
    }
}

/// Whether a buffer's template was found, as upstream's
/// `ReadyForProvisioning` condition says (its reasons).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Readiness {
    /// The template was found.
    Resolved,
    /// No PodTemplate of that name in the buffer's namespace.
    PodTemplateNotFound {
        /// The name looked for.
        name: String,
    },
    /// No workload of that kind and name in the buffer's namespace.
    ScalableRefNotFound {
        /// The kind looked for.
        kind: String,
        /// The name looked for.
        name: String,
    },
    /// The reference cannot be resolved at all (neither reference, an
    /// unsupported kind or API group).
    ResolutionFailed {
        /// Why.
        message: String,
    },
}

impl Readiness {
    /// The condition's reason, as upstream writes it.
    pub fn reason(&self) -> &'static str {
        match self {
            Readiness::Resolved => "Resolved",
            Readiness::PodTemplateNotFound { .. } => "PodTemplateNotFound",
            Readiness::ScalableRefNotFound { .. } => "ScalableRefNotFound",
            Readiness::ResolutionFailed { .. } => "ResolutionFailed",
        }
    }
}

impl fmt::Display for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Readiness::Resolved => f.write_str("resolved"),
            Readiness::PodTemplateNotFound { name } => {
                write!(f, "PodTemplate {name:?} not found in its namespace")
            }
            Readiness::ScalableRefNotFound { kind, name } => {
                write!(f, "{kind} {name:?} not found in its namespace")
            }
            Readiness::ResolutionFailed { message } => f.write_str(message),
        }
    }
}

impl CapacityBuffers {
    /// Resolves `buffers` against the PodTemplates and workloads they may
    /// name (only those in a buffer's own namespace count, as upstream),
    /// keeping them by namespace and name.
    pub fn new(
        mut buffers: Vec<CapacityBuffer>,
        pod_templates: Vec<PodTemplate>,
        workloads: Vec<ScalableWorkload>,
    ) -> CapacityBuffers {
        // By namespace and name, whatever order they came in.
        buffers.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
        let mut states = Vec::with_capacity(buffers.len());
        let mut pods = Vec::new();
        let mut buffer_of = Vec::new();
        let mut interner = crate::pods::PodInterner::new();
        for (index, buffer) in buffers.iter().enumerate() {
            let (state, template) = resolve::resolve(buffer, &pod_templates, &workloads);
            if state.is_ready_for_provisioning()
                && let Some(template) = template
            {
                let made = virtual_pods::build(buffer, template, state.replicas, &mut interner);
                let index = u32::try_from(index).unwrap_or(u32::MAX);
                buffer_of.extend(std::iter::repeat_n(index, made.len()));
                pods.extend(made);
            }
            states.push(state);
        }
        CapacityBuffers {
            inner: Arc::new(Resolved {
                buffers,
                states,
                pods,
                buffer_of,
            }),
        }
    }

    /// Whether there are no buffers.
    pub fn is_empty(&self) -> bool {
        self.inner.buffers.is_empty()
    }

    /// The buffers, by namespace and name.
    pub fn buffers(&self) -> &[CapacityBuffer] {
        &self.inner.buffers
    }

    /// What each buffer resolved to, by namespace and name.
    pub fn states(&self) -> &[BufferState] {
        &self.inner.states
    }

    /// How many virtual pods the buffers make.
    pub fn virtual_pod_count(&self) -> usize {
        self.inner.pods.len()
    }

    /// The virtual pods, buffer by buffer, each with its buffer's index.
    pub(crate) fn virtual_pods(&self) -> impl Iterator<Item = (&Arc<PodInfo>, u32)> + '_ {
        self.inner
            .pods
            .iter()
            .zip(self.inner.buffer_of.iter().copied())
    }
}

#[cfg(test)]
mod tests;
