//! [`TopologyBase`]: what a [`Topology`](super::Topology) is built from that
//! stays the same while a disruption pass tries removing different nodes: the
//! nodes, the placed pods, the pools' domains, the inverse anti-affinity
//! groups of the placed pods' terms, and the groups made so far (with every
//! placed pod counted). A topology for a cluster without some nodes
//! ([`Removed`]) starts from these and takes the removed nodes' pods and
//! domains out, instead of counting twenty thousand pods again.
//!
//! A base is shared by the simulations of a disruption pass, which may run on
//! several threads: what it works out on first use (domains, groups) is kept
//! in memos that threads share, filled by whichever thread asks first. Every
//! entry depends only on what it is looked up by, so the topologies built
//! from a base are the same whatever the threads do.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError, RwLock};

use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::domains::DomainUniverse;
use super::filter::NodeFilter;
use super::group::{Group, GroupIdentity};
use super::group::{anti_affinity_identity, required_anti_affinity};
use super::inputs::NodeInfo;
use super::inputs::{DomainSource, ExistingView, PlacedPod};
use super::namespaces::NamespaceLabels;
use super::selector::{LabelMemo, StoredLabels};
use crate::fast_hash::{HashMap, HashSet};
use crate::memo::GrowOnly;
use crate::scheduling::{LABEL_HOSTNAME, Requirements, WellKnownLabels};

/// A placed pod, kept for groups made later.
#[derive(Clone, Debug)]
pub(super) struct Placed {
    pub(super) labels: StoredLabels,
    /// Its node, an index into the base's nodes.
    pub(super) node: usize,
}

/// Which of a pool-domain choice a group was made with (see
/// [`PoolDomains`](super::tracker::PoolDomains)): groups of one identity made
/// for owners of different tolerations know different domains.
pub(super) type Tolerated = Option<Vec<Toleration>>;

/// Groups made so far, by identity and pool-domain choice.
type GroupMemo = HashMap<GroupIdentity, Vec<(Tolerated, Group)>>;

/// For a key, the positions of the existing nodes with each value.
type ValueIndex = HashMap<Arc<str>, Vec<usize>>;

/// The shared part of the topologies of one cluster.
#[derive(Debug)]
pub(crate) struct TopologyBase {
    pub(super) universe: DomainUniverse,
    /// Every node seen: existing nodes and the nodes of placed pods.
    pub(super) nodes: Vec<NodeInfo>,
    /// The caller's id of each of `nodes`.
    pub(super) node_ids: Vec<usize>,
    /// Indices into `nodes` of the existing nodes, in the order given.
    pub(super) existing: Vec<usize>,
    /// For each of the caller's ids, its positions in `existing` and its
    /// indices in `nodes`.
    pub(super) by_id: HashMap<usize, (Vec<usize>, Vec<usize>)>,
    /// For each of the caller's ids of an existing node, its index in `nodes`
    /// as a destination.
    pub(super) destination_nodes: HashMap<usize, usize>,
    /// For each of the caller's ids of a node placed pods run on, its index
    /// in `nodes` as their node.
    pub(super) placed_nodes: HashMap<usize, usize>,
    /// The placed pods that count, by namespace.
    pub(super) placed: BTreeMap<Arc<str>, Vec<Placed>>,
    /// Where each placed pod is in `placed`, by the caller's id for it; kept
    /// only by a base that memoizes (one a later copy of the cluster may
    /// take over, see [`carried_over`](Self::carried_over)).
    pub(super) pod_slots: Vec<Option<PlacedAt>>,
    /// The caller's ids of the placed pods that carry a required
    /// anti-affinity term, kept with `pod_slots`.
    pub(super) carrier_pods: HashSet<usize>,
    /// The placed pods on each node, as (namespace, index in `placed`).
    pub(super) on_node: Vec<Vec<PlacedAt>>,
    /// The existing nodes' hostnames, per key (only `kubernetes.io/hostname`).
    pub(super) registered: BTreeMap<Arc<str>, BTreeSet<Arc<str>>>,
    /// How many existing nodes have each hostname (as their labels read,
    /// [`NodeInfo::label`]): a removal drops the hostnames all of whose
    /// nodes it removes.
    pub(super) hostname_counts: HashMap<Arc<str>, usize>,
    pub(super) well_known: WellKnownLabels,
    pub(super) none_known: WellKnownLabels,
    /// Inverse anti-affinity groups of the placed pods' required terms.
    pub(super) inverse: Vec<Group>,
    pub(super) inverse_index: HashMap<GroupIdentity, usize>,
    /// For each inverse group, the placement order of the pods carrying it
    /// and their nodes.
    pub(super) carriers: Vec<Vec<(usize, usize)>>,
    /// Groups made so far, counting every placed pod, kept when the base
    /// serves many topologies. Looked up by hash (a cluster may have
    /// thousands of groups), once per group a topology makes: a lock that
    /// readers share costs little next to cloning the group.
    pub(super) memo: Option<RwLock<GroupMemo>>,
    /// For each key asked (a handful), the positions in `existing` of the
    /// nodes with each value.
    pub(super) by_label: GrowOnly<(Arc<str>, ValueIndex)>,
    /// The placed pods by label and value, as (namespace, index in
    /// `placed`): a group whose selector needs a label counts only those.
    pub(super) by_pod_label: HashMap<Arc<str>, HashMap<Arc<str>, Vec<PlacedAt>>>,
    /// Domain sets made so far, by key, pool-domain choice and node filter.
    pub(super) domain_sets: GrowOnly<DomainSet>,
    /// The cluster's Namespaces, which pod (anti-)affinity terms'
    /// `namespaceSelector`s pick from.
    pub(super) namespaces: NamespaceLabels,
}

/// A placed pod as its namespace and its index among that namespace's.
pub(super) type PlacedAt = (Arc<str>, usize);

/// A label, a value of it, and the placed pods that have it, in order.
type LabelPods = (Arc<str>, Arc<str>, Vec<PlacedAt>);

/// A domain set shared by the groups made alike.
type DomainSet = (Arc<str>, Tolerated, NodeFilter, Arc<BTreeSet<Arc<str>>>);

/// The nodes a topology leaves out of its base.
#[derive(Clone, Debug, Default)]
pub(crate) struct Removed {
    /// Positions in the base's existing nodes, sorted.
    pub(super) existing: Vec<usize>,
    /// Indices into the base's nodes, sorted.
    pub(super) nodes: Vec<usize>,
    /// How many placed pods the removed nodes run.
    pub(super) pods: usize,
}

impl Removed {
    /// Whether nothing is removed.
    pub(super) fn is_empty(&self) -> bool {
        self.existing.is_empty() && self.nodes.is_empty()
    }

    /// Whether the existing node at `position` is removed.
    pub(super) fn has_existing(&self, position: usize) -> bool {
        self.existing.binary_search(&position).is_ok()
    }

    /// Whether node `index` is removed.
    pub(super) fn has_node(&self, index: usize) -> bool {
        self.nodes.binary_search(&index).is_ok()
    }
}

impl TopologyBase {
    /// Reads the pools' domains, the existing nodes (each with the caller's
    /// id for it) and the placed pods; placed pods whose UID is in `moving`
    /// are not counted. With `memoize`, groups are kept once made, for
    /// topologies of the same cluster without some nodes. The pods' labels
    /// are stored through `labels_read`, which knows those an earlier base
    /// stored. Pod (anti-)affinity terms pick their namespaces from
    /// `namespaces`.
    #[allow(clippy::too_many_arguments)] // each is a part of the cluster, named
    pub(crate) fn new(
        pools: &[DomainSource<'_>],
        existing_nodes: &[ExistingView<'_>],
        placed: &[PlacedPod<'_>],
        moving: &HashSet<&str>,
        well_known: &WellKnownLabels,
        memoize: bool,
        labels_read: &mut LabelMemo,
        namespaces: NamespaceLabels,
    ) -> TopologyBase {
        let mut base = TopologyBase::empty(pools, well_known, memoize, namespaces);
        let mut nodes = NodeTable::default();
        base.add_existing_nodes(&mut nodes, existing_nodes);
        labels_read.start();
        base.add_placed_pods(&mut nodes, placed, moving, memoize, labels_read);
        labels_read.finish();
        base
    }

    /// A base with the pools' domains and nothing placed yet.
    fn empty(
        pools: &[DomainSource<'_>],
        well_known: &WellKnownLabels,
        memoize: bool,
        namespaces: NamespaceLabels,
    ) -> TopologyBase {
        TopologyBase {
            universe: DomainUniverse::new(pools),
            nodes: Vec::new(),
            node_ids: Vec::new(),
            existing: Vec::new(),
            by_id: HashMap::default(),
            destination_nodes: HashMap::default(),
            placed_nodes: HashMap::default(),
            placed: BTreeMap::new(),
            pod_slots: Vec::new(),
            carrier_pods: HashSet::default(),
            on_node: Vec::new(),
            registered: BTreeMap::new(),
            hostname_counts: HashMap::default(),
            well_known: well_known.clone(),
            none_known: WellKnownLabels::empty(),
            inverse: Vec::new(),
            inverse_index: HashMap::default(),
            carriers: Vec::new(),
            memo: memoize.then(|| RwLock::new(HashMap::default())),
            by_label: GrowOnly::new(),
            by_pod_label: HashMap::default(),
            domain_sets: GrowOnly::new(),
            namespaces,
        }
    }

    /// Adds the existing nodes, in the order pods try them, and registers
    /// their hostnames.
    fn add_existing_nodes(&mut self, nodes: &mut NodeTable, existing_nodes: &[ExistingView<'_>]) {
        for node in existing_nodes {
            let (index, _) =
                self.node_index(nodes, node.id, node.labels, node.requirements, node.taints);
            self.destination_nodes.insert(node.id, index);
            self.add_existing(node.id, index);
            self.count_hostname(index, 1);
            if let Some(hostname) = node.labels.get(LABEL_HOSTNAME) {
                self.register_hostname(hostname);
            }
        }
    }

    /// Counts the placed pods (those whose UID is in `moving` left out) on
    /// their nodes: each pod's labels where it runs, indexed by label and
    /// value, and the required anti-affinity groups it carries. With
    /// `memoize`, each pod's slot is kept for topologies without some nodes.
    fn add_placed_pods(
        &mut self,
        nodes: &mut NodeTable,
        placed: &[PlacedPod<'_>],
        moving: &HashSet<&str>,
        memoize: bool,
        labels_read: &mut LabelMemo,
    ) {
        // The pods by label and value, gathered by the interned strings'
        // addresses (equal strings share one), and keyed by the strings once
        // each pair is complete: a pair's pods are hashed by two words each,
        // not by two strings.
        let mut by_pair: HashMap<(*const u8, *const u8), LabelPods> = HashMap::default();
        let mut ordinal = 0;
        let mut last_placed = None;
        for placed_pod in placed {
            let pod = &placed_pod.pod;
            if moving.contains(pod.uid) {
                continue;
            }
            let (node, _) = self.node_index(
                nodes,
                placed_pod.node_id,
                placed_pod.node_labels,
                placed_pod.node_requirements,
                placed_pod.node_taints,
            );
            // Pods come node by node: a node is noted once per run of them.
            if last_placed != Some(placed_pod.node_id) {
                self.placed_nodes.entry(placed_pod.node_id).or_insert(node);
                last_placed = Some(placed_pod.node_id);
            }
            let (namespace, labels) =
                labels_read.read(placed_pod.source, pod.namespace, pod.labels);
            for term in required_anti_affinity(pod.spec) {
                let identity = anti_affinity_identity(pod, term, &self.namespaces);
                let id = self.inverse_group(identity);
                let key = Arc::clone(self.inverse[id].key());
                if let Some(domain) = self.nodes[node].label(&key) {
                    self.inverse[id].record(domain);
                }
                self.carriers[id].push((ordinal, node));
                if memoize && let Some(id) = placed_pod.pod_id {
                    self.carrier_pods.insert(id);
                }
            }
            ordinal += 1;
            let list = self.placed.entry(Arc::clone(&namespace)).or_default();
            for (label, value) in labels.iter() {
                by_pair
                    .entry((label.as_ptr(), value.as_ptr()))
                    .or_insert_with(|| (Arc::clone(label), Arc::clone(value), Vec::new()))
                    .2
                    .push((Arc::clone(&namespace), list.len()));
            }
            if memoize && let Some(id) = placed_pod.pod_id {
                if self.pod_slots.len() <= id {
                    self.pod_slots.resize(id + 1, None);
                }
                self.pod_slots[id] = Some((Arc::clone(&namespace), list.len()));
            }
            self.on_node[node].push((namespace, list.len()));
            list.push(Placed { labels, node });
        }
        for (label, value, pods) in by_pair.into_values() {
            self.by_pod_label
                .entry(label)
                .or_default()
                .insert(value, pods);
        }
    }

    /// The index of the node the caller calls `id`, with these labels,
    /// requirements and taints, and whether it is new.
    fn node_index(
        &mut self,
        table: &mut NodeTable,
        id: usize,
        labels: &BTreeMap<String, String>,
        read: Option<&Requirements>,
        taints: &[Taint],
    ) -> (usize, bool) {
        let (index, new) = table.index(&mut self.nodes, id, labels, read, taints);
        if new {
            self.by_id.entry(id).or_default().1.push(index);
            self.on_node.push(Vec::new());
            self.node_ids.push(id);
        }
        (index, new)
    }

    /// Adds the node the caller calls `id`, at `index` in `nodes`, as the
    /// next existing node.
    pub(super) fn add_existing(&mut self, id: usize, index: usize) {
        self.by_id
            .entry(id)
            .or_default()
            .0
            .push(self.existing.len());
        self.existing.push(index);
    }

    /// Counts node `index`'s hostname once more (`by` 1) or once less (`by`
    /// -1) among the existing nodes'.
    pub(super) fn count_hostname(&mut self, index: usize, by: isize) {
        let Some(hostname) = self.nodes[index].label(LABEL_HOSTNAME) else {
            return;
        };
        if by > 0 {
            match self.hostname_counts.get_mut(hostname) {
                Some(count) => *count += 1,
                None => {
                    self.hostname_counts.insert(Arc::from(hostname), 1);
                }
            }
        } else if let Some(count) = self.hostname_counts.get_mut(hostname) {
            *count -= 1;
            if *count == 0 {
                self.hostname_counts.remove(hostname);
            }
        }
    }

    /// Registers an existing node's hostname.
    pub(super) fn register_hostname(&mut self, hostname: &str) {
        let hostnames = self
            .registered
            .entry(Arc::from(LABEL_HOSTNAME))
            .or_default();
        if !hostnames.contains(hostname) {
            hostnames.insert(Arc::from(hostname));
        }
    }

    /// The nodes with the caller's ids `ids`, as a removal from this base.
    pub(crate) fn removed(&self, ids: &BTreeSet<usize>) -> Removed {
        if ids.is_empty() {
            return Removed::default();
        }
        let mut existing = Vec::new();
        let mut nodes = Vec::new();
        for (positions, indices) in ids.iter().filter_map(|id| self.by_id.get(id)) {
            existing.extend_from_slice(positions);
            nodes.extend_from_slice(indices);
        }
        existing.sort_unstable();
        nodes.sort_unstable();
        // An id's node read as existing and as the node of its placed pods
        // may be one (when the caller lends the same labels for both).
        nodes.dedup();
        let pods = nodes.iter().map(|&n| self.on_node[n].len()).sum();
        Removed {
            existing,
            nodes,
            pods,
        }
    }

    /// The inverse anti-affinity group with `identity`, made if new (while
    /// reading placed pods): it knows every domain of the pools and existing
    /// nodes and the registered values; its counts come from the pods that
    /// carry the term.
    fn inverse_group(&mut self, identity: GroupIdentity) -> usize {
        if let Some(&id) = self.inverse_index.get(&identity) {
            return id;
        }
        let group = self.new_inverse(identity.clone(), &Removed::default(), &|_, _| false);
        let id = self.inverse.len();
        self.inverse.push(group);
        self.carriers.push(Vec::new());
        self.inverse_index.insert(identity, id);
        id
    }

    /// A new inverse group, with no count, for a topology without `removed`:
    /// it knows every domain of the pools and of the existing nodes kept, and
    /// the registered values (`registered` tells which a removed node's
    /// domain still is).
    pub(super) fn new_inverse(
        &self,
        identity: GroupIdentity,
        removed: &Removed,
        registered: &dyn Fn(&str, &str) -> bool,
    ) -> Group {
        let key = Arc::clone(&identity.key);
        let shared = self.domain_set(&key, None, &NodeFilter::everything());
        let mut group = Group::over(identity, shared);
        group.inverse = true;
        let touched = removed
            .nodes
            .iter()
            .filter_map(|&index| self.nodes[index].label(&key));
        self.forget_lost(
            &mut group,
            touched.collect(),
            removed,
            None,
            registered,
            &|_| true,
        );
        group
    }

    /// The first placement (in the order pods were given) of a pod carrying
    /// inverse group `id` on a node `removed` keeps, if any.
    pub(super) fn first_carrier(&self, id: usize, removed: &Removed) -> Option<usize> {
        self.carriers[id]
            .iter()
            .find(|(_, node)| !removed.has_node(*node))
            .map(|(ordinal, _)| *ordinal)
    }

    /// The group with `identity` over every placed pod, knowing the pools'
    /// domains (for `tolerations`, see [`DomainUniverse::domains`]), the
    /// existing nodes' and the registered ones: from the memo when kept.
    pub(super) fn owned_group(
        &self,
        identity: &GroupIdentity,
        tolerations: Option<&[Toleration]>,
    ) -> Group {
        let Some(memo) = &self.memo else {
            return self.count_group(identity.clone(), tolerations);
        };
        let find = |memo: &GroupMemo| {
            memo.get(identity).and_then(|made| {
                made.iter()
                    .find(|(t, _)| t.as_deref() == tolerations)
                    .map(|(_, group)| group.clone())
            })
        };
        // A poisoned memo is still whole: entries go in complete, or not at all.
        if let Some(group) = find(&memo.read().unwrap_or_else(PoisonError::into_inner)) {
            return group;
        }
        // Counted without the lock; a thread that counted the same group
        // meanwhile added one equal to it.
        let group = self.count_group(identity.clone(), tolerations);
        let mut memo = memo.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(group) = find(&memo) {
            return group;
        }
        memo.entry(identity.clone())
            .or_default()
            .push((tolerations.map(<[Toleration]>::to_vec), group.clone()));
        group
    }

    /// Makes an owned group: domains, then the placed pods it counts.
    fn count_group(&self, identity: GroupIdentity, tolerations: Option<&[Toleration]>) -> Group {
        let key = Arc::clone(&identity.key);
        let shared = self.domain_set(&key, tolerations, &identity.filter);
        let mut group = Group::over(identity, shared);
        let filter = group.identity.filter.clone();
        let counted = |node: &NodeInfo| self.counts(&filter, node);
        // Whether each node counts, worked out once per node.
        let mut node_counts: Vec<Option<bool>> = vec![None; self.nodes.len()];
        let mut count = |placed: &Placed, group: &mut Group| {
            let node = &self.nodes[placed.node];
            let Some(domain) = node.label(&key) else {
                return;
            };
            if group.identity.selector.matches(&placed.labels)
                && *node_counts[placed.node].get_or_insert_with(|| counted(node))
            {
                group.record(domain);
            }
        };
        let namespaces = group.identity.namespaces.clone();
        let anchor = group
            .identity
            .selector
            .anchor()
            .map(|(key, values)| (Box::<str>::from(key), values.to_vec()));
        if let Some((label, values)) = anchor {
            // Only pods carrying the anchor label can be selected.
            let Some(by_value) = self.by_pod_label.get(&*label) else {
                return group;
            };
            for value in &values {
                for (namespace, at) in by_value.get(&**value).into_iter().flatten() {
                    if namespaces.contains(namespace) {
                        count(&self.placed[namespace][*at], &mut group);
                    }
                }
            }
            return group;
        }
        match namespaces.listed() {
            None => {
                for (namespace, pods) in &self.placed {
                    if namespaces.contains(namespace) {
                        pods.iter().for_each(|p| count(p, &mut group));
                    }
                }
            }
            Some(names) => {
                for name in names {
                    if let Some(pods) = self.placed.get(&**name) {
                        pods.iter().for_each(|p| count(p, &mut group));
                    }
                }
            }
        }
        group
    }

    /// The domains a group on `key` knows from the start: the pools' (for
    /// `tolerations`), those of the existing nodes `filter` counts, and the
    /// registered ones. Groups alike share one set.
    pub(super) fn domain_set(
        &self,
        key: &Arc<str>,
        tolerations: Option<&[Toleration]>,
        filter: &NodeFilter,
    ) -> Arc<BTreeSet<Arc<str>>> {
        let (_, _, _, set) = self.domain_sets.find_or_add(
            |(k, t, f, _)| k == key && t.as_deref() == tolerations && f == filter,
            || {
                let mut domains = self.universe.domains(key, tolerations);
                for (value, positions) in self.existing_values(key) {
                    let counted = positions.iter().any(|&at| {
                        let node = &self.nodes[self.existing[at]];
                        filter.matches(&node.labels, &node.taints, &self.none_known)
                    });
                    if counted {
                        domains.push(Arc::clone(value));
                    }
                }
                domains.extend(self.registered.get(key).into_iter().flatten().cloned());
                domains.sort_unstable();
                domains.dedup();
                (
                    Arc::clone(key),
                    tolerations.map(<[Toleration]>::to_vec),
                    filter.clone(),
                    Arc::new(domains.into_iter().collect()),
                )
            },
        );
        Arc::clone(set)
    }

    /// The values the existing nodes have for `key`, each with the positions
    /// (in `existing`) of the nodes that have it.
    fn existing_values(&self, key: &Arc<str>) -> &ValueIndex {
        let (_, values) = self.by_label.find_or_add(
            |(k, _)| k == key,
            || {
                let mut values: ValueIndex = HashMap::default();
                for (at, &index) in self.existing.iter().enumerate() {
                    let Some(value) = self.nodes[index].label(key) else {
                        continue;
                    };
                    // A value is copied once, not once per node (a zone has
                    // thousands).
                    match values.get_mut(value) {
                        Some(positions) => positions.push(at),
                        None => {
                            values.insert(Arc::from(value), vec![at]);
                        }
                    }
                }
                (Arc::clone(key), values)
            },
        );
        values
    }

    /// Takes the removed nodes out of an owned group made over every placed
    /// pod: their selected pods uncounted, and the domains only they gave
    /// forgotten (of the `touched` ones, as [`touched_domains`] gives them
    /// for the group's key and filter). `tolerations` are the group's
    /// pool-domain choice, `registered` the values the topology registers.
    ///
    /// [`touched_domains`]: Self::touched_domains
    pub(super) fn remove_from_owned(
        &self,
        group: &mut Group,
        removed: &Removed,
        touched: &[Arc<str>],
        tolerations: Option<&[Toleration]>,
        registered: &dyn Fn(&str, &str) -> bool,
    ) {
        let key = Arc::clone(group.key());
        let filter = group.identity.filter.clone();
        let counted = |node: &NodeInfo| self.counts(&filter, node);
        let uncount = |namespace: &str, placed: &Placed, group: &mut Group| {
            let node = &self.nodes[placed.node];
            if let Some(domain) = node.label(&key)
                && counted(node)
                && group.selects(namespace, &placed.labels)
            {
                group.unrecord(domain);
            }
        };
        // The selected pods on removed nodes: looked up by the selector's
        // anchor label when that names fewer pods than the removed nodes run
        // (counted first: the lists may be long).
        let anchored: Option<Vec<&Vec<PlacedAt>>> =
            group
                .identity
                .selector
                .anchor()
                .and_then(|(label, values)| {
                    let by_value = self.by_pod_label.get(label);
                    let lists: Vec<&Vec<PlacedAt>> =
                        values.iter().filter_map(|v| by_value?.get(&**v)).collect();
                    let pods: usize = lists.iter().map(|list| list.len()).sum();
                    (pods < removed.pods).then_some(lists)
                });
        match anchored {
            Some(lists) => {
                for (namespace, at) in lists.into_iter().flatten() {
                    let placed = &self.placed[namespace][*at];
                    if removed.has_node(placed.node) {
                        uncount(namespace, placed, group);
                    }
                }
            }
            None => {
                for &index in &removed.nodes {
                    for (namespace, at) in &self.on_node[index] {
                        uncount(namespace, &self.placed[namespace][*at], group);
                    }
                }
            }
        }
        self.forget_lost(
            group,
            touched.iter().map(|domain| &**domain).collect(),
            removed,
            tolerations,
            registered,
            &counted,
        );
    }

    /// Whether a group with node `filter` counts the pods on `node`.
    fn counts(&self, filter: &NodeFilter, node: &NodeInfo) -> bool {
        filter.matches(&node.labels, &node.taints, &self.none_known)
    }

    /// The values of `key` on the removed nodes that `filter` counts, sorted
    /// and unique: the domains a group on `key` with `filter` may lose with
    /// them (what [`remove_from_owned`](Self::remove_from_owned) takes).
    pub(super) fn touched_domains(
        &self,
        key: &str,
        filter: &NodeFilter,
        removed: &Removed,
    ) -> Vec<Arc<str>> {
        let mut touched: Vec<&str> = removed
            .nodes
            .iter()
            .filter_map(|&index| {
                let node = &self.nodes[index];
                node.label(key).filter(|_| self.counts(filter, node))
            })
            .collect();
        touched.sort_unstable();
        touched.dedup();
        touched.into_iter().map(Arc::from).collect()
    }

    /// Takes the removed nodes out of base inverse group `id` (cloned into
    /// `group`): the terms of their pods uncounted, and the domains only they
    /// gave forgotten.
    pub(super) fn remove_from_inverse(
        &self,
        group: &mut Group,
        id: usize,
        removed: &Removed,
        registered: &dyn Fn(&str, &str) -> bool,
    ) {
        let key = Arc::clone(group.key());
        for &(_, node) in &self.carriers[id] {
            if removed.has_node(node)
                && let Some(domain) = self.nodes[node].label(&key)
            {
                group.unrecord(domain);
            }
        }
        let touched = removed
            .nodes
            .iter()
            .filter_map(|&index| self.nodes[index].label(&key));
        self.forget_lost(group, touched.collect(), removed, None, registered, &|_| {
            true
        });
    }

    /// Forgets each of the `touched` domains that nothing but the removed
    /// nodes gave the group: no selected pod left in it, not a domain of the
    /// pools (for `tolerations`), not registered, and no existing node kept
    /// (that the group `counted`) has it.
    fn forget_lost(
        &self,
        group: &mut Group,
        mut touched: Vec<&str>,
        removed: &Removed,
        tolerations: Option<&[Toleration]>,
        registered: &dyn Fn(&str, &str) -> bool,
        counted: &dyn Fn(&NodeInfo) -> bool,
    ) {
        if touched.is_empty() {
            return;
        }
        touched.sort_unstable();
        touched.dedup();
        let key = Arc::clone(group.key());
        let pool_domains = self.universe.domains(&key, tolerations);
        for domain in touched {
            if group.count_of(domain) > 0
                || pool_domains.binary_search_by(|d| (**d).cmp(domain)).is_ok()
                || registered(&key, domain)
                || self.kept_existing_with(&key, domain, removed, counted)
            {
                continue;
            }
            group.forget(domain);
        }
    }

    /// Whether an existing node that is not removed has `value` for `key`
    /// and passes `counted`.
    fn kept_existing_with(
        &self,
        key: &Arc<str>,
        value: &str,
        removed: &Removed,
        counted: &dyn Fn(&NodeInfo) -> bool,
    ) -> bool {
        self.existing_values(key)
            .get(value)
            .is_some_and(|positions| {
                positions
                    .iter()
                    .any(|&at| !removed.has_existing(at) && counted(&self.nodes[self.existing[at]]))
            })
    }

    /// The existing nodes' hostnames that removing `removed` drops: those no
    /// remaining existing node also has.
    pub(super) fn dropped_hostnames(&self, removed: &Removed) -> BTreeSet<Arc<str>> {
        // How many of the removed nodes have each hostname.
        let mut removed_with: HashMap<&str, usize> = HashMap::default();
        for &at in &removed.existing {
            if let Some(hostname) = self.nodes[self.existing[at]].label(LABEL_HOSTNAME) {
                *removed_with.entry(hostname).or_default() += 1;
            }
        }
        removed_with
            .into_iter()
            .filter(|(hostname, removed)| {
                self.hostname_counts.get(*hostname).copied().unwrap_or(0) <= *removed
            })
            .map(|(hostname, _)| Arc::from(hostname))
            .collect()
    }
}

/// Gives each distinct node one index in the node list. Nodes are told apart
/// by the caller's id and the address of their labels and taints, which the
/// caller lends for the whole construction: an existing node is read apart
/// from the node its pods are placed on (its labels as a destination may
/// differ), and two nodes never share an index, whatever their labels.
#[derive(Default)]
struct NodeTable {
    by_address: HashMap<NodeAddress, usize>,
    /// The node asked last: placed pods come node by node.
    last: Option<(NodeAddress, usize)>,
}

/// The caller's id of a node, and the addresses of its labels and taints.
type NodeAddress = (usize, usize, usize, usize);

impl NodeTable {
    /// The node's index, and whether it is new.
    fn index(
        &mut self,
        nodes: &mut Vec<NodeInfo>,
        id: usize,
        labels: &BTreeMap<String, String>,
        read: Option<&Requirements>,
        taints: &[Taint],
    ) -> (usize, bool) {
        let address = (
            id,
            std::ptr::from_ref(labels) as usize,
            taints.as_ptr() as usize,
            taints.len(),
        );
        if let Some((last, index)) = self.last
            && last == address
        {
            return (index, false);
        }
        let mut new = false;
        let index = *self.by_address.entry(address).or_insert_with(|| {
            nodes.push(NodeInfo::new(labels, read, taints));
            new = true;
            nodes.len() - 1
        });
        self.last = Some((address, index));
        (index, new)
    }
}
