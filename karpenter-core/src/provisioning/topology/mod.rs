//! Pod topology for the provisioning scheduler: topology spread constraints,
//! pod affinity and pod anti-affinity, after upstream's `topology.go`,
//! `topologygroup.go`, `topologydomaingroup.go` and `topologynodefilter.go`
//! (`pkg/controllers/provisioning/scheduling`).
//!
//! # Model
//!
//! Every constraint of a pending pod becomes a *topology group*: a topology
//! key, the pods it counts (a label selector in some namespaces) and, for
//! spread constraints, `maxSkew`, `minDomains` and the nodes it counts. Equal
//! constraints share one group, so a hundred replicas of a Deployment make one
//! group with a hundred owners. A group counts the selected pods per *domain*
//! (value of its key): the pods already placed, then each pod the scheduler
//! places ([`Topology::record`]).
//!
//! The domains a group knows are those the NodePools can create
//! ([`DomainSource`]), the existing nodes' label values, and the values the
//! scheduler registers as it opens new NodeClaims ([`Topology::register`]).
//!
//! Before placing a pod on a node, the scheduler asks
//! [`Topology::add_requirements`] which domains of each group's key the pod
//! may use there:
//!
//! * **spread**: the lowest-count domain whose count, with the pod, stays
//!   within `maxSkew` of the minimum (ties go to the first domain by name);
//! * **affinity**: the domains holding a selected pod, or, for a pod that
//!   selects itself while none is placed, the first domain it can use;
//! * **anti-affinity**: the domains holding no selected pod;
//! * **inverse anti-affinity**: a pod selected by another pod's *required*
//!   anti-affinity may only use domains that other pod is not in.
//!
//! Preferred (anti-)affinity terms and `ScheduleAnyway` spread constraints
//! count like required ones until the scheduler relaxes them away: it removes
//! the term from the pod's spec and calls [`Topology::update`].
//!
//! # Departures from upstream
//!
//! * Ties between equally good domains, and the domain a self-affine pod
//!   starts in, go to the first domain by name (upstream: Go map order).
//! * `namespaceSelector` is read without namespace labels: `{}` selects every
//!   namespace, any other selector only the namespaces listed in the term.
//! * A pod on a node without the key is not counted even for
//!   `kubernetes.io/hostname` (upstream falls back to the node's name, which
//!   [`PlacedPod`] does not carry).
//! * Only listed (`In`) values are domains or are recorded; upstream would
//!   also take the excluded values of a `NotIn`.
//! * Inverse anti-affinity groups know every domain (of every NodePool and
//!   existing node), so a pod they select is never refused a domain merely
//!   because the other pod's tolerations could not reach it.
//! * Domains registered with [`Topology::register`] also reach groups made
//!   later by [`Topology::update`].

// Until the scheduler calls into it, only the tests use this module.

mod base;
mod domain_counts;
mod domains;
mod error;
mod filter;
mod group;
mod selector;
mod tracker;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec, Taint};

use crate::cloudprovider::InstanceType;
use crate::scheduling::Requirements;

pub(crate) use base::TopologyBase;
#[cfg(test)]
pub(crate) use error::ConstraintKind;
pub(crate) use error::TopologyError;
pub(crate) use tracker::{NodeKeys, Topology, Verdict};

/// A pod as topology sees it: its namespace, labels and the constraints it
/// has now (after the scheduler's relaxation removed some preferred terms).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PodView<'a> {
    /// The pod's UID; it names the pod's group memberships, so it must be
    /// unique among the pods given to one [`Topology`].
    pub uid: &'a str,
    /// The pod's namespace.
    pub namespace: &'a str,
    /// The pod's labels.
    pub labels: &'a BTreeMap<String, String>,
    /// The pod's spec, as relaxed so far.
    pub spec: &'a PodSpec,
}

/// Where a pod already runs, for counting: the pod and its node's labels and
/// taints. Only pods that count belong here: bound to a node, neither
/// terminal nor terminating (see [`ignored_for_topology`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlacedPod<'a> {
    /// The caller's id of the pod's node.
    pub node_id: usize,
    /// The pod.
    pub pod: PodView<'a>,
    /// Its node's labels.
    pub node_labels: &'a BTreeMap<String, String>,
    /// Its node's taints.
    pub node_taints: &'a [Taint],
}

/// The topology domains a NodePool can create: its requirements (pool
/// requirements ∩ template labels), its instance types (whose requirements
/// narrow the pool's per type), and its taints (for `nodeTaintsPolicy:
/// Honor`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DomainSource<'a> {
    /// The NodePool's requirements, template labels included.
    pub pool_requirements: &'a Requirements,
    /// The NodePool's instance types.
    pub instance_types: &'a [InstanceType],
    /// The NodePool's taints (not its startup taints).
    pub taints: &'a [Taint],
}

/// What a node a pod is recorded on is, which decides how a spread
/// constraint's node filter reads its requirements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// A node of the cluster: its labels are all it has, so every label a
    /// filter asks for must be on it.
    Existing,
    /// A NodeClaim being planned: well-known labels it does not constrain yet
    /// are left to its instance types.
    NewClaim,
}

/// Whether a pod is left out of topology counts, after upstream's
/// `IgnoredForTopology`: not bound to a node, terminal (`Succeeded` or
/// `Failed`), or terminating.
pub(crate) fn ignored_for_topology(pod: &Pod) -> bool {
    let unbound = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_none_or(str::is_empty);
    let terminal = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|phase| phase == "Succeeded" || phase == "Failed");
    unbound || terminal || pod.metadata.deletion_timestamp.is_some()
}
