//! [`Topology`]: the groups of a scheduling run, their counts, and which pods
//! own which groups, after upstream's `topology.go`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration};

use super::base::{Removed, TopologyBase};
use super::error::{ConstraintKind, TopologyError};
use super::filter::NodeFilter;
use super::group::{
    Allowed, Group, GroupIdentity, GroupKind, affinity_identity, anti_affinity_identity,
    normalized_key, required_anti_affinity,
};
use super::inputs::{NodeKind, PodView};
use super::namespaces::Namespaces;
use crate::fast_hash::{HashMap, HashSet};
use crate::scheduling::label_selector::AnchorIndex;
use crate::scheduling::label_selector::{LabelSource, PodSelector};
use crate::scheduling::{LABEL_HOSTNAME, Requirement, Requirements, normalize_label_key};

/// How many recently seen constraint sets [`Topology::new`] remembers, so
/// that replicas of one workload resolve their groups once.
const RECENT_CONSTRAINTS: usize = 8;

/// The group memberships of one pod.
#[derive(Clone, Debug, Default)]
struct Memberships {
    /// Groups of its own constraints, in the order they are checked.
    owned: Box<[usize]>,
    /// Inverse anti-affinity groups of its required anti-affinity terms.
    inverse: Box<[usize]>,
}

/// The topology state of one scheduling run: every group with its counts,
/// which pending pod owns which group, and the domains known per key.
///
/// Everything that can influence a decision is kept in creation order or
/// sorted; hash maps only serve lookups.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
    /// What the topology is built from, shared with other topologies of the
    /// same cluster (cloned once per topology, never per pod: methods borrow
    /// it next to the fields they change).
    base: Arc<TopologyBase>,
    /// The base's nodes this topology leaves out.
    removed: Removed,
    /// Groups of pending pods' constraints, in creation order.
    groups: Vec<Group>,
    group_index: HashMap<GroupIdentity, usize>,
    /// The domains the removed nodes give the groups of each key and node
    /// filter.
    touched: HashMap<(Arc<str>, NodeFilter), Touched>,
    /// Inverse anti-affinity groups: the required anti-affinity terms of
    /// placed and pending pods, counting the pods that carry them.
    inverse: Vec<Group>,
    inverse_index: HashMap<GroupIdentity, usize>,
    /// Each pending pod's memberships, by UID.
    members: HashMap<Box<str>, Memberships>,
    /// `groups` and `inverse` by the label their selectors need.
    group_anchors: AnchorIndex,
    inverse_anchors: AnchorIndex,
    /// The base's registered hostnames of removed nodes.
    dropped: BTreeSet<Arc<str>>,
    /// Values registered per key since, for groups made later.
    added: BTreeMap<Arc<str>, BTreeSet<Arc<str>>>,
    /// The groups' keys; a group's `slot` indexes them.
    keys: Vec<Arc<str>>,
    /// Ids of the requirements met on non-hostname keys (see
    /// [`node_keys`](Self::node_keys)); ids start at 1.
    requirement_ids: HashMap<Requirement, u32>,
    /// The requirement of each id, at `id - 1`.
    id_requirements: Vec<Requirement>,
}

/// The domains the removed nodes give the groups of one key and node filter.
type Touched = Arc<[Arc<str>]>;

/// A node's requirements on the topology keys, as ids: equal ids mean equal
/// requirements, so a pod's verdict for one node holds for every node with the
/// same ids ([`PodConstraints::verdict`]).
pub(crate) type NodeKeys = Box<[u32]>;

/// The id of a key the node does not constrain.
const UNDEFINED: u32 = 0;
/// The id of a key whose requirement is not compared by id: a hostname, which
/// every claim has its own of.
const UNSHARED: u32 = u32::MAX;
/// How many distinct requirements a verdict remembers per constraint.
const MEMO: usize = 32;

impl Topology {
    /// Builds the groups for every constraint of the pending pods (spread,
    /// affinity, anti-affinity; required and preferred) and counts the placed
    /// pods each group selects. Existing nodes' labels and the pools'
    /// possible domains make the domain universe; placed pods with required
    /// anti-affinity make inverse groups. Each existing node's hostname is
    /// registered, as upstream's `NewExistingNode` does. Existing nodes and
    /// placed pods name their node by an id of the caller's.
    ///
    /// Placed pods that are also pending (being moved, matched by a
    /// non-empty UID) are not counted. Pod (anti-)affinity terms pick their
    /// namespaces from `namespaces`.
    #[cfg(test)]
    pub(crate) fn new<'p>(
        pools: &[super::inputs::DomainSource<'_>],
        existing_nodes: &[super::inputs::ExistingView<'_>],
        placed: &[super::inputs::PlacedPod<'p>],
        pending: &[PodView<'_>],
        well_known: &crate::scheduling::WellKnownLabels,
        namespaces: super::NamespaceLabels,
    ) -> Topology {
        // An empty UID identifies nothing: it never excludes a placed pod.
        let moving: HashSet<&str> = pending
            .iter()
            .map(|p| p.uid)
            .filter(|uid| !uid.is_empty())
            .collect();
        let base = TopologyBase::new(
            pools,
            existing_nodes,
            placed,
            &moving,
            well_known,
            false,
            &mut super::LabelMemo::default(),
            namespaces,
        );
        Topology::sole(base, pending)
    }

    /// The only topology of `base`, for the `pending` pods: it takes the
    /// base's inverse groups as they are.
    pub(crate) fn sole(mut base: TopologyBase, pending: &[PodView<'_>]) -> Topology {
        let inverse = std::mem::take(&mut base.inverse);
        base.inverse_index.clear();
        let mut topology = Topology::empty(Arc::new(base), Removed::default());
        for group in inverse {
            topology.push_inverse(group);
        }
        topology.add_members(pending);
        topology
    }

    /// The topology of the base's cluster without the `removed` nodes and
    /// their pods, for the `pending` pods. Of the placed pods' inverse
    /// groups, only those that select a pending pod are taken (no other pod
    /// is ever checked against the rest), in the order a topology built
    /// from the changed cluster would have them.
    pub(crate) fn without(
        base: Arc<TopologyBase>,
        removed: Removed,
        pending: &[PodView<'_>],
    ) -> Topology {
        let mut topology = Topology::empty(base, removed);
        let base = &topology.base;
        // The pending pods by label, so a group is checked against the pods
        // carrying the label its selector needs.
        let mut by_label: HashMap<(&str, &str), Vec<usize>> = HashMap::default();
        for (i, pod) in pending.iter().enumerate() {
            for (key, value) in pod.labels {
                by_label.entry((key, value)).or_default().push(i);
            }
        }
        let selects_pending = |group: &Group| match group.identity.selector.anchor() {
            Some((key, values)) => values
                .iter()
                .filter_map(|v| by_label.get(&(key, &**v)))
                .flatten()
                .any(|&i| group.selects(pending[i].namespace, pending[i].labels)),
            None => pending.iter().any(|p| group.selects(p.namespace, p.labels)),
        };
        let mut chosen: Vec<(usize, usize)> = base
            .inverse
            .iter()
            .enumerate()
            .filter(|(_, group)| selects_pending(group))
            .filter_map(|(id, _)| Some((base.first_carrier(id, &topology.removed)?, id)))
            .collect();
        chosen.sort_unstable();
        for (_, id) in chosen {
            topology.adopt_inverse(id);
        }
        topology.add_members(pending);
        topology
    }

    /// A topology of the base without `removed`, with no group yet.
    fn empty(base: Arc<TopologyBase>, removed: Removed) -> Topology {
        let dropped = base.dropped_hostnames(&removed);
        Topology {
            base,
            removed,
            groups: Vec::new(),
            group_index: HashMap::default(),
            touched: HashMap::default(),
            inverse: Vec::new(),
            inverse_index: HashMap::default(),
            members: HashMap::default(),
            group_anchors: AnchorIndex::default(),
            inverse_anchors: AnchorIndex::default(),
            dropped,
            added: BTreeMap::new(),
            keys: Vec::new(),
            requirement_ids: HashMap::default(),
            id_requirements: Vec::new(),
        }
    }

    /// Resolves the pending pods' group memberships.
    fn add_members(&mut self, pending: &[PodView<'_>]) {
        // Replicas of a workload carry equal constraints: resolve them once.
        let mut recent: Vec<(PodView<'_>, Memberships)> = Vec::new();
        let mut misses = 0_usize;
        for pod in pending {
            if !has_topology(pod.spec) {
                continue;
            }
            let known = recent
                .iter()
                .find(|(other, _)| same_constraints(other, pod));
            let memberships = match known {
                Some((_, memberships)) => memberships.clone(),
                None => {
                    let memberships = self.memberships(pod);
                    let slot = misses % RECENT_CONSTRAINTS;
                    misses += 1;
                    if recent.len() < RECENT_CONSTRAINTS {
                        recent.push((*pod, memberships.clone()));
                    } else {
                        recent[slot] = (*pod, memberships.clone());
                    }
                    memberships
                }
            };
            self.members.insert(pod.uid.into(), memberships);
        }
    }

    /// Whether `value` of `key` is registered: an existing node's hostname
    /// (of the nodes kept), or a value registered since.
    fn is_registered(&self, key: &str, value: &str) -> bool {
        let from_base = self
            .base
            .registered
            .get(key)
            .is_some_and(|values| values.contains(value))
            && !(key == LABEL_HOSTNAME && self.dropped.contains(value));
        from_base || self.added.get(key).is_some_and(|v| v.contains(value))
    }

    /// Takes base inverse group `id`, without the removed nodes.
    fn adopt_inverse(&mut self, id: usize) -> usize {
        let base = &*self.base;
        let mut group = base.inverse[id].clone();
        if !self.removed.is_empty() {
            let registered = |key: &str, value: &str| self.is_registered(key, value);
            base.remove_from_inverse(&mut group, id, &self.removed, &registered);
        }
        self.push_inverse(group)
    }

    /// Adds an inverse group (with its key's slot, its anchor and its index
    /// entry); its id.
    fn push_inverse(&mut self, mut group: Group) -> usize {
        group.slot = self.slot(&Arc::clone(group.key()));
        let id = self.inverse.len();
        self.inverse_index.insert(group.identity.clone(), id);
        self.inverse_anchors.add(id, &group.identity.selector);
        self.inverse.push(group);
        id
    }

    /// Makes domain `value` of `key` known to every group on that key (the
    /// scheduler registers each new claim's placeholder hostname under
    /// `kubernetes.io/hostname`), and to groups made later.
    pub(crate) fn register(&mut self, key: &str, value: &str) {
        let key = normalize_label_key(key);
        if self.is_registered(key, value) {
            return;
        }
        let value: Arc<str> = Arc::from(value);
        match self.added.get_mut(key) {
            Some(values) => values.insert(Arc::clone(&value)),
            None => self
                .added
                .entry(Arc::from(key))
                .or_default()
                .insert(Arc::clone(&value)),
        };
        for group in self.groups.iter_mut().chain(self.inverse.iter_mut()) {
            if &**group.key() == key {
                group.register(&value);
            }
        }
    }

    /// The requirements the pod's topology adds for a node whose
    /// requirements are `node` (an existing node's, or a new claim's so far):
    /// each group the pod owns narrows its key to the domains it allows, and
    /// so does each inverse anti-affinity group that selects the pod.
    ///
    /// `pod_strict` are the pod's strict requirements (`nodeSelector` and
    /// required node affinity, no preferred term); they bound the domains a
    /// spread constraint takes its minimum over, and the domains affinity may
    /// use. A pod without topology gets empty requirements, without
    /// allocating.
    ///
    /// The result only holds the added keys; the caller checks it against
    /// `node` and merges it in.
    pub(crate) fn add_requirements(
        &self,
        pod: &PodView<'_>,
        pod_strict: &Requirements,
        node: &Requirements,
    ) -> Result<Requirements, TopologyError> {
        let mut added = Requirements::new();
        for (group, self_selecting) in self.checks(pod) {
            narrow(&mut added, group, self_selecting, pod_strict, node)?;
        }
        Ok(added)
    }

    /// The pod's constraints resolved once, for asking of many nodes in turn
    /// whether they could take it ([`PodConstraints::verdict`]).
    pub(crate) fn constraints_of<'t>(&'t self, pod: &PodView<'_>) -> PodConstraints<'t> {
        PodConstraints {
            id_requirements: &self.id_requirements,
            checks: self
                .checks(pod)
                .map(|(group, self_selecting)| Check {
                    group,
                    self_selecting,
                    memo: Vec::new(),
                })
                .collect(),
        }
    }

    /// The slot of topology key `key`, made if new.
    fn slot(&mut self, key: &Arc<str>) -> usize {
        match self.keys.iter().position(|k| k == key) {
            Some(slot) => slot,
            None => {
                self.keys.push(Arc::clone(key));
                self.keys.len() - 1
            }
        }
    }

    /// The ids of a node's requirements on the topology keys, for
    /// [`PodConstraints::verdict`]; to be taken again whenever the node's
    /// requirements change.
    pub(crate) fn node_keys(&mut self, node: &Requirements) -> NodeKeys {
        let ids = &mut self.requirement_ids;
        let requirements = &mut self.id_requirements;
        self.keys
            .iter()
            .map(|key| {
                if &**key == LABEL_HOSTNAME {
                    return UNSHARED;
                }
                let Some(requirement) = node.get_defined(key) else {
                    return UNDEFINED;
                };
                let next = u32::try_from(ids.len() + 1).unwrap_or(UNSHARED);
                match ids.get(requirement) {
                    Some(&id) => id,
                    None if next != UNSHARED => {
                        ids.insert(requirement.clone(), next);
                        requirements.push(requirement.clone());
                        next
                    }
                    None => UNSHARED,
                }
            })
            .collect()
    }

    /// The groups a pod is checked against, in order, each with whether it
    /// selects the pod: the groups it owns, then the inverse anti-affinity
    /// groups that select it.
    fn checks<'t>(&'t self, pod: &PodView<'_>) -> impl Iterator<Item = (&'t Group, bool)> {
        let owned = self.members.get(pod.uid).map_or(&[][..], |m| &m.owned);
        let (namespace, labels) = (pod.namespace, pod.labels);
        let owned = owned.iter().map(move |&id| {
            let group = &self.groups[id];
            (group, group.selects(namespace, labels))
        });
        let inverse = self
            .inverse_anchors
            .candidates(labels)
            .into_iter()
            .map(|id| &self.inverse[id])
            .filter(move |group| group.selects(namespace, labels))
            .map(|group| (group, true));
        owned.chain(inverse)
    }

    /// Records that the pod now runs on a new claim whose final requirements
    /// are `node`, as [`record_on`](Self::record_on) with no taints.
    #[cfg(test)]
    pub(crate) fn record(&mut self, pod: &PodView<'_>, node: &Requirements) {
        self.record_on(pod, node, &[], NodeKind::NewClaim);
    }

    /// Records that the pod now runs on a node with the (final) requirements
    /// `node` and `taints`: every group that selects the pod and counts the
    /// node counts it in the node's domain, if the node has settled on one.
    /// Anti-affinity groups count it in *every* domain the node may still
    /// take (an unpinned claim blocks all its possible zones), and so do the
    /// inverse groups of the pod's own required anti-affinity.
    pub(crate) fn record_on(
        &mut self,
        pod: &PodView<'_>,
        node: &Requirements,
        taints: &[Taint],
        kind: NodeKind,
    ) {
        let base = &*self.base;
        let allow_undefined = match kind {
            NodeKind::Existing => &base.none_known,
            NodeKind::NewClaim => &base.well_known,
        };
        for id in self.group_anchors.candidates(pod.labels) {
            let group = &mut self.groups[id];
            if !group.selects(pod.namespace, pod.labels)
                || !group.identity.filter.matches(node, taints, allow_undefined)
            {
                continue;
            }
            let Some(domains) = listed(node, group.key()) else {
                continue;
            };
            let mut values = domains.values();
            if group.identity.kind == GroupKind::AntiAffinity {
                values.for_each(|domain| group.record(domain));
            } else if values.len() == 1
                && let Some(domain) = values.next()
            {
                group.record(domain);
            }
        }
        let inverse = self.members.get(pod.uid).map_or(&[][..], |m| &m.inverse);
        for &id in inverse {
            let group = &mut self.inverse[id];
            if let Some(domains) = listed(node, group.key()) {
                domains.values().for_each(|domain| group.record(domain));
            }
        }
    }

    /// Whether any group concerns the pod: it has constraints of its own
    /// (spread, affinity or anti-affinity, required or preferred), or some
    /// group selects it, so that where it runs counts for other pods. A pod
    /// no group concerns may move between new claims without changing any
    /// topology answer. (The cost mode's repacking asks.)
    #[cfg(feature = "optimise")]
    pub(crate) fn concerns(&self, pod: &PodView<'_>) -> bool {
        if has_topology(pod.spec)
            || self
                .members
                .get(pod.uid)
                .is_some_and(|m| !m.owned.is_empty() || !m.inverse.is_empty())
        {
            return true;
        }
        let (namespace, labels) = (pod.namespace, pod.labels);
        let selected = |groups: &[Group], ids: Vec<usize>| {
            ids.into_iter()
                .any(|id| groups[id].selects(namespace, labels))
        };
        selected(&self.groups, self.group_anchors.candidates(labels))
            || selected(&self.inverse, self.inverse_anchors.candidates(labels))
    }

    /// The pod's constraints changed (relaxation dropped a term): rebuilds
    /// its group memberships. Groups it no longer owns keep their counts.
    pub(crate) fn update(&mut self, pod: &PodView<'_>) {
        if has_topology(pod.spec) {
            let memberships = self.memberships(pod);
            self.members.insert(pod.uid.into(), memberships);
        } else {
            self.members.remove(pod.uid);
        }
    }

    /// How many (non-inverse) groups exist.
    #[cfg(test)]
    pub(super) fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// How many domains each (non-inverse) group on `key` knows.
    #[cfg(test)]
    pub(super) fn known_domains(&self, key: &str) -> Vec<usize> {
        self.groups
            .iter()
            .filter(|g| &**g.key() == key)
            .map(Group::known_domains)
            .collect()
    }

    /// The groups of the pod's constraints, made (and counted) as needed.
    fn memberships(&mut self, pod: &PodView<'_>) -> Memberships {
        let spec = pod.spec;
        let inverse: Vec<usize> = required_anti_affinity(spec)
            .map(|term| {
                let identity = anti_affinity_identity(pod, term, &self.base.namespaces);
                self.inverse_group(identity)
            })
            .collect();
        let mut owned = Vec::new();
        for constraint in spec.topology_spread_constraints.iter().flatten() {
            let filter = NodeFilter::for_spread(spec, constraint);
            let match_label_keys = constraint.match_label_keys.iter().flatten();
            let resolved = match_label_keys
                .filter_map(|key| Some((key.as_str(), pod.labels.get(key)?.as_str())));
            let identity = GroupIdentity {
                kind: GroupKind::Spread,
                key: normalized_key(&constraint.topology_key),
                namespaces: Namespaces::only(pod.namespace),
                selector: PodSelector::new(constraint.label_selector.as_ref(), resolved),
                max_skew: constraint.max_skew,
                min_domains: constraint.min_domains,
                filter,
            };
            owned.push(self.group(identity, PoolDomains::AsFilterHonors));
        }
        // Upstream's affinity groups see the domains of the pools whose taints
        // the (first) owner tolerates.
        let tolerations: &[Toleration] = spec.tolerations.as_deref().unwrap_or_default();
        let affinity = spec.affinity.as_ref();
        let pod_affinity = affinity.and_then(|a| a.pod_affinity.as_ref());
        let affinity_terms = pod_affinity.into_iter().flat_map(|a| {
            let required = a.required_during_scheduling_ignored_during_execution.iter();
            let preferred = a
                .preferred_during_scheduling_ignored_during_execution
                .iter();
            let preferred = preferred.flatten().map(|w| &w.pod_affinity_term);
            required.flatten().chain(preferred)
        });
        let pod_anti_affinity = affinity.and_then(|a| a.pod_anti_affinity.as_ref());
        let anti_affinity_terms = pod_anti_affinity.into_iter().flat_map(|a| {
            let required = a.required_during_scheduling_ignored_during_execution.iter();
            let preferred = a
                .preferred_during_scheduling_ignored_during_execution
                .iter();
            let preferred = preferred.flatten().map(|w| &w.pod_affinity_term);
            required.flatten().chain(preferred)
        });
        let terms = affinity_terms
            .map(|term| (GroupKind::Affinity, term))
            .chain(anti_affinity_terms.map(|term| (GroupKind::AntiAffinity, term)));
        for (kind, term) in terms {
            let identity = affinity_identity(kind, pod, term, &self.base.namespaces);
            owned.push(self.group(identity, PoolDomains::ToleratedBy(tolerations)));
        }
        // Keep the first occurrence of each group, in constraint order.
        let mut seen = HashSet::default();
        owned.retain(|id| seen.insert(*id));
        Memberships {
            owned: owned.into(),
            inverse: inverse.into(),
        }
    }

    /// The group with `identity`, made if new: it knows the pools' domains
    /// (as `pool_domains` says), the domains of existing nodes its filter
    /// counts, and the registered values, and counts the placed pods it
    /// selects on nodes it counts.
    fn group(&mut self, identity: GroupIdentity, pool_domains: PoolDomains<'_>) -> usize {
        if let Some(&id) = self.group_index.get(&identity) {
            return id;
        }
        let tolerations = match pool_domains {
            PoolDomains::AsFilterHonors => identity.filter.honored_tolerations(),
            PoolDomains::ToleratedBy(tolerations) => Some(tolerations),
        };
        let touched = (!self.removed.is_empty()).then(|| self.touched_domains(&identity));
        let base = &*self.base;
        let mut group = base.owned_group(&identity, tolerations);
        if let Some(touched) = touched {
            let registered = |key: &str, value: &str| self.is_registered(key, value);
            base.remove_from_owned(
                &mut group,
                &self.removed,
                &touched,
                tolerations,
                &registered,
            );
        }
        let key = Arc::clone(group.key());
        for domain in self.added.get(&key).into_iter().flatten() {
            group.register(domain);
        }
        group.slot = self.slot(&key);
        let id = self.groups.len();
        self.group_anchors.add(id, &group.identity.selector);
        self.groups.push(group);
        self.group_index.insert(identity, id);
        id
    }

    /// The domains the removed nodes give a group with `identity` (see
    /// [`TopologyBase::touched_domains`]): the same for every group on one
    /// key and filter, so worked out once for them.
    fn touched_domains(&mut self, identity: &GroupIdentity) -> Touched {
        let memo_key = (Arc::clone(&identity.key), identity.filter.clone());
        if let Some(touched) = self.touched.get(&memo_key) {
            return Arc::clone(touched);
        }
        let touched: Touched = self
            .base
            .touched_domains(&identity.key, &identity.filter, &self.removed)
            .into();
        self.touched.insert(memo_key, Arc::clone(&touched));
        touched
    }

    /// The inverse anti-affinity group with `identity`, made if new: the
    /// base's (without the removed nodes), else one that knows every domain
    /// of the pools and existing nodes and the registered values, with no
    /// count yet (the pods that carry the term count as they are placed).
    fn inverse_group(&mut self, identity: GroupIdentity) -> usize {
        if let Some(&id) = self.inverse_index.get(&identity) {
            return id;
        }
        if let Some(&id) = self.base.inverse_index.get(&identity) {
            return self.adopt_inverse(id);
        }
        let base = &*self.base;
        let registered = |key: &str, value: &str| self.is_registered(key, value);
        let mut group = base.new_inverse(identity, &self.removed, &registered);
        for domain in self.added.get(group.key()).into_iter().flatten() {
            group.register(domain);
        }
        self.push_inverse(group)
    }
}

/// Which of the pools' domains a new group knows.
#[derive(Clone, Copy, Debug)]
pub(super) enum PoolDomains<'t> {
    /// A spread constraint's: all, or under `nodeTaintsPolicy: Honor` those
    /// of pools whose taints the pod tolerates.
    AsFilterHonors,
    /// An (anti-)affinity term's: those of pools whose taints these
    /// tolerations tolerate, as upstream's zero-valued filter does.
    ToleratedBy(&'t [Toleration]),
}

/// The kind of constraint a group (checked for a pod) stands for.
fn constraint_kind(group: &Group) -> ConstraintKind {
    match group.identity.kind {
        GroupKind::Spread => ConstraintKind::Spread {
            max_skew: group.identity.max_skew,
        },
        GroupKind::Affinity => ConstraintKind::Affinity,
        GroupKind::AntiAffinity if group.inverse => ConstraintKind::InverseAntiAffinity,
        GroupKind::AntiAffinity => ConstraintKind::AntiAffinity,
    }
}

/// Narrows `added` to the domains `group` allows the pod on `node`, or says
/// why there is none.
fn narrow(
    added: &mut Requirements,
    group: &Group,
    self_selecting: bool,
    pod_strict: &Requirements,
    node: &Requirements,
) -> Result<(), TopologyError> {
    let key = group.key();
    let pod_domains = pod_strict.get_defined(key);
    let node_domains = node.get_defined(key);
    let domains = group.next_domains(self_selecting, Allowed(pod_domains), Allowed(node_domains));
    if domains.is_empty() {
        return Err(TopologyError::new(
            constraint_kind(group),
            key,
            pod_domains,
            node_domains,
            group.known_domains(),
        ));
    }
    added.add(Requirement::in_values(key, domains));
    Ok(())
}

/// Whether a node could take a pod, as far as its topology goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every constraint leaves the pod a domain on the node.
    Allowed,
    /// Some constraint leaves none; `for_good` when no later placement can
    /// change that for this node and the same constraints (see
    /// [`TopologyError::holds_for_good`]).
    Refused {
        /// Whether the refusal holds whatever else gets placed.
        for_good: bool,
    },
}

/// A pod's topology groups, resolved once per attempt (see
/// [`Topology::constraints_of`]), with the verdicts met so far.
#[derive(Debug)]
pub(crate) struct PodConstraints<'t> {
    checks: Vec<Check<'t>>,
    /// The requirement of each id (see [`Topology::node_keys`]), at `id - 1`.
    id_requirements: &'t [Requirement],
}

/// One group a pod is checked against.
#[derive(Debug)]
struct Check<'t> {
    group: &'t Group,
    self_selecting: bool,
    /// Whether the group leaves the pod a domain, by the id of the node's
    /// requirement on the key: the answer depends on nothing else of the node
    /// while the counts stand still, as they do for one attempt.
    memo: Vec<(u32, bool)>,
}

impl Check<'_> {
    /// Whether the group leaves the pod a domain on a node whose requirement
    /// on the key (looked up only when not remembered) has id `id`.
    #[inline]
    fn allows<'r>(
        &mut self,
        pod_strict: &Requirements,
        id: u32,
        on_node: impl FnOnce() -> Option<&'r Requirement>,
    ) -> bool {
        if id != UNSHARED
            && let Some(&(_, allowed)) = self.memo.iter().find(|(seen, _)| *seen == id)
        {
            return allowed;
        }
        let pod = Allowed(pod_strict.get_defined(self.group.key()));
        let allowed = self
            .group
            .has_next_domain(self.self_selecting, pod, Allowed(on_node()));
        if id != UNSHARED && self.memo.len() < MEMO {
            self.memo.push((id, allowed));
        }
        allowed
    }
}

impl PodConstraints<'_> {
    /// Whether the pod has no topology constraint at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// Whether every node whose requirement on the key of `slot` has `id`
    /// (see [`NodeKeys`]) is refused, whatever its other requirements: some
    /// constraint on that key leaves the pod no domain there.
    pub(crate) fn refuses_key(&mut self, pod_strict: &Requirements, slot: usize, id: u32) -> bool {
        if id == UNSHARED {
            return false;
        }
        let on_node = match id.checked_sub(1) {
            None => None,
            Some(index) => match self.id_requirements.get(index as usize) {
                Some(requirement) => Some(requirement),
                None => return false,
            },
        };
        self.checks
            .iter_mut()
            .filter(|check| check.group.slot == slot)
            .any(|check| !check.allows(pod_strict, id, || on_node))
    }

    /// Whether [`Topology::add_requirements`] would succeed for a node with
    /// requirements `node` (whose [`NodeKeys`] are `keys`), answered without
    /// building any requirement, and once per distinct requirement.
    #[inline]
    pub(crate) fn verdict(
        &mut self,
        pod_strict: &Requirements,
        node: &Requirements,
        keys: &[u32],
    ) -> Verdict {
        for check in &mut self.checks {
            let group = check.group;
            let id = keys.get(group.slot).copied().unwrap_or(UNSHARED);
            if !check.allows(pod_strict, id, || node.get_defined(group.key())) {
                return Verdict::Refused {
                    for_good: TopologyError::holds_for_good(constraint_kind(group), group.key()),
                };
            }
        }
        Verdict::Allowed
    }
}

/// The node's requirement on `key` when it lists values.
fn listed<'r>(node: &'r Requirements, key: &str) -> Option<&'r Requirement> {
    node.get_defined(key).filter(|r| !r.is_complement())
}

/// Whether the pod has any spread constraint or pod (anti-)affinity term.
fn has_topology(spec: &PodSpec) -> bool {
    let spreads = spec
        .topology_spread_constraints
        .as_ref()
        .is_some_and(|c| !c.is_empty());
    let affinity = spec.affinity.as_ref();
    let affine = affinity
        .and_then(|a| a.pod_affinity.as_ref())
        .is_some_and(|a| {
            non_empty(&a.required_during_scheduling_ignored_during_execution)
                || non_empty(&a.preferred_during_scheduling_ignored_during_execution)
        });
    let anti = affinity
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .is_some_and(|a| {
            non_empty(&a.required_during_scheduling_ignored_during_execution)
                || non_empty(&a.preferred_during_scheduling_ignored_during_execution)
        });
    spreads || affine || anti
}

fn non_empty<T>(list: &Option<Vec<T>>) -> bool {
    list.as_ref().is_some_and(|l| !l.is_empty())
}

/// Whether two pods resolve to the same groups: same namespace, same
/// constraints, same node constraints and tolerations (spread filters), and
/// the same values for the labels their `matchLabelKeys` name.
fn same_constraints(a: &PodView<'_>, b: &PodView<'_>) -> bool {
    let (x, y) = (a.spec, b.spec);
    let same_match_label_values = || {
        x.topology_spread_constraints
            .iter()
            .flatten()
            .flat_map(|c| c.match_label_keys.iter().flatten())
            .all(|key| a.labels.label(key) == b.labels.label(key))
    };
    a.namespace == b.namespace
        && x.topology_spread_constraints == y.topology_spread_constraints
        && x.affinity == y.affinity
        && x.node_selector == y.node_selector
        && x.tolerations == y.tolerations
        && same_match_label_values()
}
