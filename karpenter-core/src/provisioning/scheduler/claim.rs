//! A new NodeClaim the plan is filling: its requirements narrow and its instance
//! types shrink with every pod it takes.

use super::reservations::ReservedRefusal;
use crate::planning::MinValuesPolicy;
use crate::provisioning::demand::host_ports::HostPort;
use crate::provisioning::demand::pending_pod::PendingPod;
use crate::provisioning::instance_types::filter::{FilterError, distinct_values};
use crate::provisioning::instance_types::narrowing;
use crate::provisioning::instance_types::templates::{HEADROOM_RESOURCES, Template};
use crate::provisioning::instance_types::type_cache::TypeSet;
use crate::provisioning::topology::{NodeKeys, TopologyError};
use crate::resources::ResourceList;
use crate::scheduling::{
    IncompatibleError, LABEL_HOSTNAME, Requirement, Requirements, TaintError, WellKnownLabels,
    tolerates_all,
};

/// A claim being planned.
#[derive(Clone, Debug)]
pub(crate) struct NewClaim {
    /// Its template (an index into the scheduler's templates).
    pub template: usize,
    /// The placeholder hostname that stands for its node in topology.
    pub hostname: String,
    /// Its requirements so far, the placeholder hostname included.
    pub requirements: Requirements,
    /// The instance types still possible (of the template's types).
    pub options: TypeSet,
    /// What its pods request (daemons excluded).
    pub requests: ResourceList,
    /// Its pods (indices of the pending pods), in the order they came.
    pub pods: Vec<usize>,
    /// Host ports its pods bind.
    pub host_ports: Vec<HostPort>,
    /// Its requirements on the topology keys, as ids (kept up to date by the
    /// scheduler, which owns the topology).
    pub topology_keys: NodeKeys,
    /// The most cpu, memory and pods any of its instance types can give pods: what
    /// no addition may pass, checked before anything dearer.
    headroom: [i64; 3],
    /// Its pods' cpu, memory and pods (of `requests`), for the same check.
    used: [i64; 3],
    /// Whether every type of `options` is known to hold `requests` with its
    /// daemons (true once a pod was added), so that narrowing for one more pod
    /// only looks for the types that stop holding.
    fitted: bool,
    /// The capacity reservations it holds (indices into the scheduler's
    /// reservations, ascending).
    pub reserved: Vec<u32>,
}

/// What adding a pod to a claim would make of it.
pub(crate) struct Admission {
    pub requirements: Requirements,
    pub options: TypeSet,
    /// The reservations it would hold (see [`Reservations::to_hold`](super::reservations::Reservations::to_hold)).
    pub reserved: Vec<u32>,
}

/// Why a claim (or a new one from a template) cannot take a pod. Kept as
/// data and put in words only when shown: most refusals are never read.
#[derive(Clone, Debug)]
pub(crate) enum Refusal {
    /// A taint the pod does not tolerate.
    Taint(TaintError),
    /// The pod's requirements conflict with the claim's.
    Requirements(IncompatibleError),
    /// The pod's volume requirements conflict with the claim's (the last of
    /// its volumes' alternatives tried).
    VolumeRequirements(IncompatibleError),
    /// The pod has volumes, but not one alternative of them.
    NoVolumeAlternative,
    /// The pod's topology cannot be met on this claim.
    Topology(TopologyError),
    /// The topology's requirements conflict with the claim's.
    TopologyRequirements(IncompatibleError),
    /// No instance type is left.
    InstanceTypes(FilterError),
    /// The claim could launch into a capacity reservation but cannot have
    /// one (provisioning's strict mode).
    Reserved(ReservedRefusal),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Taint(e) => write!(f, "{e}"),
            Refusal::Requirements(e) => write!(f, "incompatible requirements, {e}"),
            Refusal::VolumeRequirements(e) => write!(f, "incompatible volume requirements, {e}"),
            Refusal::NoVolumeAlternative => f.write_str("no volume alternative"),
            Refusal::Topology(e) => write!(f, "{e}"),
            Refusal::TopologyRequirements(e) => {
                write!(f, "incompatible topology requirements, {e}")
            }
            Refusal::InstanceTypes(e) => write!(f, "{e}"),
            Refusal::Reserved(e) => write!(f, "{e}"),
        }
    }
}

impl NewClaim {
    /// An empty claim from a template, with the types that respect the pool's
    /// limits.
    pub(crate) fn new(
        template_index: usize,
        template: &Template<'_>,
        options: TypeSet,
        id: usize,
    ) -> NewClaim {
        let hostname = format!("hostname-placeholder-{id:04}");
        let mut requirements = template.requirements.clone();
        requirements.add(Requirement::in_values(LABEL_HOSTNAME, [&hostname]));
        NewClaim {
            template: template_index,
            hostname,
            requirements,
            options,
            requests: ResourceList::new(),
            pods: Vec::new(),
            host_ports: Vec::new(),
            topology_keys: NodeKeys::default(),
            headroom: [i64::MAX; 3],
            used: [0; 3],
            fitted: false,
            reserved: Vec::new(),
        }
    }

    /// Whether a pod requesting `needs` (its amounts of the
    /// [`HEADROOM_RESOURCES`]) could fit at all: its requests with the claim's
    /// stay within the largest instance type left. A cheap, certain refusal;
    /// passing it decides nothing.
    pub(crate) fn may_fit(&self, needs: &[i64; 3]) -> bool {
        (0..3).all(|r| self.used[r].saturating_add(needs[r]) <= self.headroom[r])
    }

    /// The claim's requirements with the pod's, if they can go together (taints,
    /// then requirements); topology comes after.
    pub(crate) fn base_requirements(
        &self,
        template: &Template<'_>,
        pod: &PendingPod,
        well_known: &WellKnownLabels,
    ) -> Result<Requirements, Refusal> {
        let tolerations = pod.spec.tolerations.as_deref().unwrap_or_default();
        tolerates_all(&template.taints, tolerations).map_err(Refusal::Taint)?;
        self.requirements
            .compatible(&pod.requirements, well_known)
            .map_err(Refusal::Requirements)?;
        let mut requirements = self.requirements.clone();
        requirements.add_all(&pod.requirements);
        Ok(requirements)
    }

    /// The instance types left once the pod (and its topology requirements, already
    /// in `requirements`) is added. With [`MinValuesPolicy::BestEffort`], types
    /// that meet everything but a `minValues` are kept, and each unmet
    /// `minValues` is lowered to the values they have (upstream's
    /// `relaxMinValues`).
    pub(crate) fn narrow(
        &self,
        template: &Template<'_>,
        pod: &PendingPod,
        pod_ports: &[HostPort],
        requirements: Requirements,
        policy: MinValuesPolicy,
    ) -> Result<Admission, Refusal> {
        match self.narrow_strictly(template, pod, pod_ports, requirements.clone()) {
            Err(Refusal::InstanceTypes(error)) if error.names_min_values() && policy.relaxes() => {
                let loose = requirements.without_min_values();
                let admission = self.narrow_strictly(template, pod, pod_ports, loose)?;
                let kept: Vec<usize> = admission.options.iter().collect();
                Ok(Admission {
                    requirements: relaxed(&requirements, template, &kept),
                    options: admission.options,
                    reserved: Vec::new(),
                })
            }
            other => other,
        }
    }

    /// [`narrow`](Self::narrow) with every `minValues` as written.
    fn narrow_strictly(
        &self,
        template: &Template<'_>,
        pod: &PendingPod,
        pod_ports: &[HostPort],
        requirements: Requirements,
    ) -> Result<Admission, Refusal> {
        let total = &self.requests + &pod.requests;
        // A pod that adds no requirement (most do not) leaves the claim's types as
        // compatible as they were: only whether they still fit can change.
        let unchanged = !self.pods.is_empty() && requirements == self.requirements;
        // Its types all hold its requests so far (once it has pods): only those
        // that stop holding with the pod's, or stop meeting new requirements,
        // drop out.
        let grown = pod_ports
            .is_empty()
            .then(|| {
                let before = self.fitted.then_some(&self.requests);
                narrowing::grown(
                    template,
                    &self.options,
                    &requirements,
                    unchanged,
                    before,
                    &total,
                )
            })
            .flatten();
        if let Some(options) = grown {
            return Ok(Admission {
                requirements,
                options,
                reserved: Vec::new(),
            });
        }
        let candidates: Vec<usize> = self.options.iter().collect();
        let options = narrowing::for_claim(
            template,
            &candidates,
            &requirements,
            unchanged,
            &pod.requests,
            &total,
            pod_ports,
            &self.host_ports,
        )
        .map_err(Refusal::InstanceTypes)?;
        Ok(Admission {
            requirements,
            options: TypeSet::of(template.types.len(), &options),
            reserved: Vec::new(),
        })
    }

    /// Takes the pod.
    pub(crate) fn add(
        &mut self,
        template: &Template<'_>,
        pod_index: usize,
        pod: &PendingPod,
        pod_ports: Vec<HostPort>,
        admission: Admission,
    ) {
        self.requirements = admission.requirements;
        self.options = admission.options;
        self.headroom = template.headroom_of(&self.options);
        self.requests += &pod.requests;
        self.used = HEADROOM_RESOURCES.map(|name| self.requests.get(name));
        self.fitted = true;
        self.reserved = admission.reserved;
        self.pods.push(pod_index);
        self.host_ports.extend(pod_ports);
    }
}

/// `requirements` with each `minValues` the types `kept` (indices into the
/// template's types) do not reach lowered to the values they have, as
/// upstream's `SatisfiesMinValues` counts them.
pub(crate) fn relaxed(
    requirements: &Requirements,
    template: &Template<'_>,
    kept: &[usize],
) -> Requirements {
    requirements
        .iter()
        .map(|r| match r.min_values() {
            Some(min) => {
                let types = kept.iter().map(|&t| &template.types[t]);
                let have = u32::try_from(distinct_values(types, r.key())).unwrap_or(u32::MAX);
                r.clone().with_min_values(Some(min.min(have)))
            }
            None => r.clone(),
        })
        .collect()
}
