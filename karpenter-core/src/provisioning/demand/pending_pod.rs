//! The pods provisioning places: what each asks for, and the order the queue
//! takes them in (which pods are pending is `pending`'s).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::jiff::Timestamp;

use super::attach::Attached;
use super::volumes::VolumeError;
use crate::pods::has_dra_requirements;
use crate::pods::{PodKey, pod_key};
use crate::resources::{self, QuantityError, ResourceList};
use crate::scheduling::{
    RequirementError, Requirements, WellKnownLabels, has_preferred_node_affinity, validate_pod_spec,
};

/// A pod waiting for capacity, with what scheduling needs to know of it,
/// borrowed from the snapshot. `spec` is the snapshot's until relaxation
/// removes a preference from it: then it is the pod's own copy.
#[derive(Clone, Debug)]
pub(crate) struct PendingPod<'s> {
    /// The pod's key, as the plan names pods.
    pub key: PodKey,
    /// The UID (the key when the pod has none), the queue's last tie-break.
    pub uid: Cow<'s, str>,
    /// The namespace.
    pub namespace: &'s str,
    /// The labels.
    pub labels: &'s BTreeMap<String, String>,
    /// The spec, relaxed as scheduling goes (a retry starts from the
    /// snapshot's again).
    pub spec: Spec<'s>,
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
    /// The claims its volumes attach, by CSI driver (for existing nodes'
    /// attach limits).
    pub attached: Attached,
    /// Pods with the same signature meet the same topology answers on the same
    /// node: same namespace, labels, affinity, spread, node selection and
    /// tolerations (an index into the scheduler's signatures).
    pub topology_signature: usize,
    /// Whether it has Dynamic Resource Allocation claims: then it gets no
    /// capacity (see [`has_dra_requirements`]).
    pub dra: bool,
    /// For a CapacityBuffer's virtual pod, the buffer's index in the
    /// snapshot's buffers: placed like any pod, never listed as one.
    pub buffer: Option<u32>,
}

/// A pending pod's spec: the snapshot's, or the pod's own once relaxation
/// changed it. Unlike a `Cow`, which is as large as a whole `PodSpec` (well
/// over a kilobyte) even when it borrows, it is two words: a plan of 100,000
/// pods keeps that much less for specs that nearly all borrow.
#[derive(Clone, Debug)]
pub(crate) struct Spec<'s> {
    /// The snapshot's.
    original: &'s PodSpec,
    /// The pod's own, once relaxation changed it.
    pub(crate) relaxed: Option<Box<PodSpec>>,
}

impl<'s> Spec<'s> {
    /// The snapshot's spec.
    pub(crate) fn borrowed(original: &'s PodSpec) -> Spec<'s> {
        Spec {
            original,
            relaxed: None,
        }
    }

    /// The spec to change, copied from the snapshot's first.
    pub(crate) fn to_mut(&mut self) -> &mut PodSpec {
        let original = self.original;
        self.relaxed
            .get_or_insert_with(|| Box::new(original.clone()))
    }
}

impl std::ops::Deref for Spec<'_> {
    type Target = PodSpec;

    fn deref(&self) -> &PodSpec {
        self.relaxed.as_deref().unwrap_or(self.original)
    }
}

/// Why a pod cannot even be considered: its spec cannot be read.
#[derive(Clone, Debug)]
pub(crate) enum Unreadable {
    /// A resource request that is not a quantity.
    Requests(QuantityError),
    /// A selector, affinity term or label the requirement algebra refuses.
    Requirements(RequirementError),
    /// One of its volumes cannot be used.
    Volume(VolumeError),
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Requests(e) => write!(f, "{e}"),
            Unreadable::Requirements(e) => write!(f, "{e}"),
            Unreadable::Volume(e) => write!(f, "{e}"),
        }
    }
}

/// A pod that cannot even be considered, with why.
#[derive(Clone, Debug)]
pub(crate) struct Rejected {
    /// The pod.
    pub(crate) key: PodKey,
    /// Why (boxed: rare, and large beside a result).
    pub(crate) why: Box<Unreadable>,
    /// For a CapacityBuffer's virtual pod, the buffer's index.
    pub(crate) buffer: Option<u32>,
}

/// What a pod without labels or a spec is read as.
static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
static NO_SPEC: LazyLock<PodSpec> = LazyLock::new(PodSpec::default);

impl<'s> PendingPod<'s> {
    /// Reads a pending pod; an invalid one (a quantity or a selector that cannot be
    /// read, a restricted label) is rejected with why.
    pub(crate) fn new(
        pod: &'s PodInfo,
        well_known: &WellKnownLabels,
    ) -> Result<PendingPod<'s>, Rejected> {
        let key = pod_key(pod);
        let reject = |why: Unreadable| Rejected {
            key: pod_key(pod),
            why: Box::new(why),
            buffer: None,
        };
        let spec: &'s PodSpec = pod.spec.as_deref().unwrap_or(&NO_SPEC);
        let requests =
            resources::pod_requests(spec).map_err(|e| reject(Unreadable::Requests(e)))?;
        validate_pod_spec(spec, well_known).map_err(|e| reject(Unreadable::Requirements(e)))?;
        let uid = match pod.metadata.uid.as_deref() {
            Some(uid) => Cow::Borrowed(uid),
            None => Cow::Owned(key.as_str().to_owned()),
        };
        let mut pending = PendingPod {
            uid,
            namespace: pod.metadata.namespace.as_deref().unwrap_or("default"),
            labels: pod.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
            created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
            key,
            spec: Spec::borrowed(spec),
            requests,
            requirements: Requirements::new(),
            strict_requirements: Requirements::new(),
            volume_alternatives: Vec::new(),
            attached: Attached::new(),
            topology_signature: 0,
            dra: has_dra_requirements(spec),
            buffer: None,
        };
        pending
            .refresh()
            .map_err(|e| reject(Unreadable::Requirements(e)))?;
        Ok(pending)
    }

    /// Puts the spec back as the snapshot has it, undoing relaxation.
    pub(crate) fn reset(&mut self) -> Result<(), RequirementError> {
        self.spec.relaxed = None;
        self.refresh()
    }

    /// Recomputes the requirements from the (relaxed) spec.
    pub(crate) fn refresh(&mut self) -> Result<(), RequirementError> {
        self.requirements = Requirements::from_pod_spec(&self.spec)?;
        self.strict_requirements = if has_preferred_node_affinity(&self.spec) {
            Requirements::from_pod_spec_strict(&self.spec)?
        } else {
            self.requirements.clone()
        };
        Ok(())
    }
}

impl PendingPod<'_> {
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

    /// Whether the two pods have the same [`topology_text`](Self::topology_text),
    /// compared field by field.
    pub(crate) fn same_topology(&self, other: &PendingPod<'_>) -> bool {
        let (a, b) = (&*self.spec, &*other.spec);
        self.namespace == other.namespace
            && self.labels == other.labels
            && a.affinity == b.affinity
            && a.topology_spread_constraints == b.topology_spread_constraints
            && a.node_selector == b.node_selector
            && a.tolerations == b.tolerations
    }
}

/// The queue's order, as upstream: cpu descending, memory descending, creation
/// time, then UID, as a key to sort by.
pub(crate) fn queue_key<'p>(
    pod: &'p PendingPod<'_>,
) -> (Reverse<i64>, Reverse<i64>, Option<Timestamp>, &'p str) {
    (
        Reverse(pod.requests.get(resources::CPU)),
        Reverse(pod.requests.get(resources::MEMORY)),
        pod.created,
        &pod.uid,
    )
}
