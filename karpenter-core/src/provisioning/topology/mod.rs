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
//! places ([`Topology::record`]). A pod (anti-)affinity term's namespaces
//! are its own, or those it lists united with those whose labels its
//! `namespaceSelector` selects among the cluster's Namespaces
//! ([`NamespaceLabels`]), as upstream's `buildNamespaceList` lists them.
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

mod base;
mod carry;
mod domain_counts;
mod domains;
mod error;
mod filter;
mod group;
mod inputs;
mod namespaces;
mod selector;
mod tracker;

#[cfg(test)]
mod tests;

pub(crate) use base::TopologyBase;
pub(crate) use carry::PlacedMove;
#[cfg(test)]
pub(crate) use error::ConstraintKind;
pub(crate) use error::TopologyError;
pub(crate) use inputs::{
    DomainSource, ExistingView, NodeKind, PlacedPod, PodView, ignored_for_topology,
};
pub(crate) use namespaces::NamespaceLabels;
pub(crate) use selector::LabelMemo;
pub(crate) use tracker::{NodeKeys, Topology, Verdict};
