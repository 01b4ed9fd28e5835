//! The snapshot, indexed once for the checks: pending and bound pods, nodes,
//! NodePools and their catalogs, and where the plan places each pod.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::pods::PodInfo;

use super::daemons::{Daemon, daemons};
use super::pods::{bound_node, is_pending, is_reschedulable, may_stay, pod_key};
use super::pools::pool_requirements;
use crate::api::NodePool;
use crate::cloudprovider::InstanceType;
use crate::fast_hash::HashSet;
use crate::pods::PodKey;
use crate::provisioning::plan::ProvisioningPlan;
use crate::resources::ResourceList;
use crate::scheduling::{
    LABEL_NAMESPACE_NAME, NODE_INITIALIZED_LABEL_KEY, NODE_REGISTERED_LABEL_KEY, Requirement,
    WellKnownLabels,
};
use crate::snapshot::{ClusterNode, Snapshot};

/// The snapshot's Namespaces' labels by name, the first of each name.
fn namespaces(snapshot: &Snapshot) -> BTreeMap<&str, &BTreeMap<String, String>> {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    let mut by_name = BTreeMap::new();
    for namespace in &snapshot.namespaces {
        if let Some(name) = namespace.metadata.name.as_deref() {
            let labels = namespace.metadata.labels.as_ref().unwrap_or(&NONE);
            by_name.entry(name).or_insert(labels);
        }
    }
    by_name
}

/// The daemons (indices) that land on a pool's instance type, and their requests.
pub(super) type Landing = (Vec<usize>, ResourceList);

/// Where a placed pod went.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Host {
    Claim(usize),
    Node(String),
}

/// A pending pod the plan places, at its first placement.
pub(super) struct Placed<'s> {
    pub(super) pod: &'s PodInfo,
    pub(super) key: PodKey,
    pub(super) host: Host,
    pub(super) zone: Option<String>,
}

pub(super) struct Checker<'s> {
    pub(super) snapshot: &'s Snapshot,
    pub(super) well_known: &'s WellKnownLabels,
    /// The pods the plan places: pending pods and the reschedulable pods of
    /// nodes on their way out, by key (the first of each key).
    pub(super) pending: BTreeMap<PodKey, &'s PodInfo>,
    /// How many pods the plan must list have each key.
    pub(super) expected: BTreeMap<PodKey, usize>,
    /// The pods of nodes on their way out that the plan may list or leave
    /// out (see [`may_stay`]), by key.
    pub(super) optional: BTreeSet<PodKey>,
    /// Cluster nodes by name (the first of each name).
    pub(super) nodes: BTreeMap<&'s str, &'s ClusterNode>,
    /// Pods bound to each node, finished ones included.
    pub(super) bound: BTreeMap<&'s str, Vec<&'s PodInfo>>,
    pub(super) daemons: Vec<Daemon>,
    /// Each pool's catalog by type name.
    pub(super) by_name: BTreeMap<&'s str, BTreeMap<&'s str, &'s InstanceType>>,
    /// The daemons (indices) running on each pool's type, and their requests,
    /// worked out once. A `RefCell` (and `Rc`, to hand an entry out without
    /// holding the borrow): a checker lives for one [`validate`](super::validate)
    /// call on one thread and is never shared, unlike the planners' memos.
    pub(super) overheads: RefCell<BTreeMap<(String, String), Rc<Landing>>>,
    /// The snapshot's Namespaces' labels, by name (the first of each name).
    pub(super) namespaces: BTreeMap<&'s str, &'s BTreeMap<String, String>>,
}

impl<'s> Checker<'s> {
    pub(super) fn new(snapshot: &'s Snapshot) -> Checker<'s> {
        let mut pending = BTreeMap::new();
        let mut expected = BTreeMap::new();
        let mut optional = BTreeSet::new();
        let mut bound: BTreeMap<&str, Vec<&PodInfo>> = BTreeMap::new();
        let mut nodes = BTreeMap::new();
        for node in &snapshot.nodes {
            nodes.entry(node.name()).or_insert(node);
        }
        // The nodes being deleted or disrupted: their pods need a new home.
        let leaving: BTreeSet<&str> = snapshot
            .nodes
            .iter()
            .filter(|n| n.node.is_some() && n.is_marked_for_deletion())
            .map(|n| n.name())
            .collect();
        for pod in &snapshot.pods {
            if is_pending(pod) {
                let key = pod_key(pod);
                *expected.entry(key.clone()).or_insert(0) += 1;
                pending.entry(key).or_insert(&**pod);
            } else if let Some(node) = bound_node(pod) {
                bound.entry(node).or_default().push(pod);
                if leaving.contains(node) && is_reschedulable(pod) {
                    let key = pod_key(pod);
                    if may_stay(pod, &snapshot.pod_disruption_budgets) {
                        optional.insert(key.clone());
                    } else {
                        *expected.entry(key.clone()).or_insert(0) += 1;
                    }
                    pending.entry(key).or_insert(pod);
                }
            }
        }
        let by_name = snapshot
            .instance_types
            .iter()
            .map(|(pool, types)| {
                let types = types.iter().map(|it| (it.name.as_str(), it)).collect();
                (pool.as_str(), types)
            })
            .collect();
        Checker {
            snapshot,
            well_known: &snapshot.well_known_labels,
            pending,
            expected,
            optional,
            nodes,
            bound,
            daemons: daemons(snapshot),
            by_name,
            overheads: RefCell::new(BTreeMap::new()),
            namespaces: namespaces(snapshot),
        }
    }

    /// The labels of the namespace `name` as a `namespaceSelector` reads them:
    /// the snapshot's Namespace's, or none for one it lacks, and in either
    /// case `kubernetes.io/metadata.name`, which the API server sets on every
    /// Namespace to its name.
    pub(super) fn namespace_labels(&self, name: &str) -> BTreeMap<String, String> {
        let mut labels = self
            .namespaces
            .get(name)
            .map(|l| (*l).clone())
            .unwrap_or_default();
        labels.insert(LABEL_NAMESPACE_NAME.to_owned(), name.to_owned());
        labels
    }

    /// The pods of nodes on their way out that the plan lists (placed or
    /// unschedulable), by address: as upstream leaves the pods it schedules
    /// out of the topology counts, they count where the plan puts them (if
    /// anywhere), not on the node they leave.
    pub(super) fn moved(&self, plan: &ProvisioningPlan) -> HashSet<*const PodInfo> {
        let listed = plan
            .node_claims
            .iter()
            .flat_map(|c| &c.pods)
            .chain(plan.existing_nodes.iter().flat_map(|n| &n.pods))
            .chain(plan.unschedulable.iter().map(|u| &u.pod));
        listed
            .filter_map(|key| self.pending.get(key.as_str()))
            .filter(|pod| bound_node(pod).is_some())
            .map(|pod| std::ptr::from_ref(*pod))
            .collect()
    }

    pub(super) fn pool(&self, name: &str) -> Option<&'s NodePool> {
        self.snapshot
            .node_pools
            .iter()
            .find(|p| p.name() == Some(name))
    }

    pub(super) fn catalog(&self, pool: &str) -> &'s [InstanceType] {
        self.snapshot
            .instance_types
            .get(pool)
            .map_or(&[], |t| &t[..])
    }

    /// The pods bound to node `name` that have not finished: what it runs.
    pub(super) fn running_on(&self, name: &str) -> impl Iterator<Item = &'s PodInfo> + '_ {
        self.bound
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|p| !super::pods::is_terminal(p))
    }

    /// A type of a pool's catalog, by name.
    pub(super) fn instance_type(&self, pool: &str, name: &str) -> Option<&'s InstanceType> {
        self.by_name.get(pool)?.get(name).copied()
    }
}

impl Checker<'_> {
    /// The daemons (indices into `daemons`) that run on type `it` of `pool`, with
    /// their summed requests.
    pub(super) fn daemons_on(&self, pool: &NodePool, it: &InstanceType) -> Rc<Landing> {
        let key = (pool.name().unwrap_or_default().to_string(), it.name.clone());
        if let Some(known) = self.overheads.borrow().get(&key) {
            return Rc::clone(known);
        }
        let mut template = pool_requirements(pool);
        template.add(Requirement::in_values(NODE_REGISTERED_LABEL_KEY, ["true"]));
        template.add(Requirement::in_values(NODE_INITIALIZED_LABEL_KEY, ["true"]));
        let taints = pool.spec.template.spec.taints();
        let running: Vec<usize> = (0..self.daemons.len())
            .filter(|&d| self.daemons[d].runs_on(&template, taints, it, self.well_known))
            .collect();
        let mut overhead = ResourceList::new();
        for &d in &running {
            overhead += &self.daemons[d].requests;
        }
        let computed = Rc::new((running, overhead));
        self.overheads
            .borrow_mut()
            .insert(key, Rc::clone(&computed));
        computed
    }
}
