//! What a scheduling run starts from, and how to start many runs from one
//! cluster.
//!
//! [`Setup`] reads what every run over a snapshot needs: the NodePools as
//! templates (with their instance-type caches), their limits, the existing
//! nodes as destinations. [`Prepared`] keeps a setup, the topology base and
//! the pending pods of a cluster, so that a disruption pass can ask "what if
//! these nodes were gone?" many times: each run takes the nodes out of what is
//! already built (sharing templates, destinations and counted pods) instead of
//! rebuilding the cluster without them. The runs decide exactly as a
//! scheduler over the changed snapshot would.
//!
//! A [`Prepared`] is `Sync`, so runs may start from it on several threads:
//! what the runs share is read-only or behind thread-safe memos (the
//! templates' type caches, the topology base), and each run's own state (the
//! destinations it fills, its claims, its topology counts) is in its
//! [`Scheduler`], which borrows the destinations until a pod lands on one.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Taint};

use super::daemons::{daemon_pod, daemon_pods, is_pod_of, newest};
use super::existing::{Destination, ExistingNode, is_destination};
use super::pending::is_pending;
use super::pods::PendingPod;
use super::preferences::Preferences;
use super::scheduler::{Fence, Limits, Scheduler};
use super::templates::{Template, any_prefer_no_schedule, pool_order};
use super::topology::{
    DomainSource, PlacedPod, PodView, Topology, TopologyBase, ignored_for_topology,
};
use super::volumes::volume_requirements;
use crate::cloudprovider::LaunchRank;
use crate::pods::bound_node;
use crate::resources::ResourceList;
use crate::scheduling::{Requirements, WellKnownLabels};
use crate::snapshot::Snapshot;

/// A pod that cannot be considered, with why.
pub(crate) type RejectedPod = (String, String);

/// What every scheduling run over one snapshot starts from.
pub(crate) struct Setup<'s> {
    pub(crate) well_known: &'s WellKnownLabels,
    /// The provider's launch rank: which offering a claim's `launch` names.
    pub(crate) launch_rank: LaunchRank,
    pub(crate) preferences: Preferences,
    pub(crate) templates: Arc<[Template<'s>]>,
    /// NodePools that can launch nothing, with why.
    pub(crate) skipped_pools: Vec<(String, String)>,
    /// Each template's pool limits, as written (`None`: unlimited).
    pub(crate) written_limits: Vec<Option<Limits>>,
    /// For each template whose pool has limits, its nodes' capacities, each
    /// with the node's index in the snapshot, in snapshot order.
    pool_capacities: Vec<Vec<(usize, ResourceList)>>,
    /// The pods bound to each node, by node name, in snapshot order.
    pub(crate) bound: BTreeMap<&'s str, Vec<&'s Pod>>,
    /// The destinations, in the order pods try them, each with its index in
    /// the snapshot's nodes.
    pub(crate) existing: Vec<(usize, ExistingNode)>,
}

/// Why a pool has no instance types to plan with: none in the snapshot under its
/// name, and which names the snapshot's instance types are under when no pool
/// has them (a snapshot keyed by something else than pool names).
fn no_instance_types(snapshot: &Snapshot) -> String {
    let stray: Vec<String> = snapshot
        .instance_types
        .iter()
        .filter(|(key, types)| {
            !types.is_empty()
                && !snapshot
                    .node_pools
                    .iter()
                    .any(|p| p.name() == Some(key.as_str()))
        })
        .map(|(key, _)| format!("{key:?}"))
        .collect();
    if stray.is_empty() {
        "the pool has no instance types".to_owned()
    } else {
        format!(
            "the pool has no instance types (the snapshot's instance types are keyed by pool \
             name, and it has some only under {}, which no pool is named)",
            stray.join(", ")
        )
    }
}

impl<'s> Setup<'s> {
    pub(crate) fn new(snapshot: &'s Snapshot) -> Setup<'s> {
        let well_known = &snapshot.well_known_labels;
        let daemons = daemon_pods(&snapshot.daemon_sets, &snapshot.pods);
        let pools = pool_order(&snapshot.node_pools);
        let preferences = Preferences {
            tolerate_prefer_no_schedule: any_prefer_no_schedule(&pools),
        };
        let mut templates = Vec::new();
        let mut skipped_pools = Vec::new();
        let mut written_limits = Vec::new();
        for pool in &pools {
            let name = pool.name().unwrap_or_default().to_string();
            let types: &[_] = snapshot
                .instance_types
                .get(&name)
                .map(|t| &t[..])
                .unwrap_or(&[]);
            if types.is_empty() {
                // Upstream skips such a pool ("no resolved instance types found").
                skipped_pools.push((name, no_instance_types(snapshot)));
                continue;
            }
            match Template::new(pool, types, &daemons, well_known) {
                Ok(template) => {
                    templates.push(template);
                    written_limits.push(written_limits_of(pool));
                }
                Err(e) => skipped_pools.push((
                    name,
                    format!("requirements filtered out all instance types ({e})"),
                )),
            }
        }
        let pool_capacities = templates
            .iter()
            .zip(&written_limits)
            .map(|(template, written)| match written {
                None => Vec::new(),
                Some(_) => snapshot
                    .nodes
                    .iter()
                    .enumerate()
                    // A node on its way out counts against no limit (upstream
                    // charges its pool nothing for it).
                    .filter(|(_, n)| {
                        n.node_pool() == Some(&template.pool) && !n.is_marked_for_deletion()
                    })
                    .map(|(i, n)| (i, n.capacity()))
                    .collect(),
            })
            .collect();
        let mut bound: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
        for pod in &snapshot.pods {
            if let Some(node) = bound_node(pod) {
                bound.entry(node).or_default().push(pod);
            }
        }
        let mut existing: Vec<(usize, ExistingNode)> = snapshot
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| is_destination(n))
            .map(|(i, n)| {
                let pods = bound.get(n.name()).map_or(&[][..], |v| &v[..]);
                (i, ExistingNode::new(n, pods, &daemons))
            })
            .collect();
        // As upstream's `sortExistingNodes`: initialized first, then by the
        // name its cluster state gives them; the node's own name last.
        existing.sort_by(|(i, a), (j, b)| {
            let state_name = |k: &usize| snapshot.nodes[*k].state_name();
            b.initialized
                .cmp(&a.initialized)
                .then_with(|| state_name(i).cmp(state_name(j)))
                .then_with(|| a.name.cmp(&b.name))
        });
        Setup {
            well_known,
            launch_rank: snapshot.launch_rank,
            preferences,
            templates: templates.into(),
            skipped_pools,
            written_limits,
            pool_capacities,
            bound,
            existing,
        }
    }

    /// The pools' limits less what their nodes use, leaving out the nodes of
    /// the snapshot at `removed` (indices into its nodes).
    pub(crate) fn limits(&self, removed: &BTreeSet<usize>) -> Vec<Option<Limits>> {
        self.written_limits
            .iter()
            .zip(&self.pool_capacities)
            .map(|(written, capacities)| {
                let mut limits = written.clone()?;
                for (_, capacity) in capacities.iter().filter(|(i, _)| !removed.contains(i)) {
                    limits.remaining = limits.remaining.saturating_sub(capacity);
                }
                Some(limits)
            })
            .collect()
    }

    /// The topology's base for the cluster: the pools' domains, the
    /// existing nodes and the pods placed on the snapshot's nodes (those
    /// whose UID is in `moving`, and the `leaving` pods themselves, left
    /// out: they are counted where they land); with `memoize`, for many
    /// topologies.
    pub(crate) fn topology_base(
        &self,
        snapshot: &'s Snapshot,
        moving: &HashSet<&str>,
        leaving: &HashSet<*const Pod>,
        memoize: bool,
    ) -> TopologyBase {
        let pool_requirements: Vec<Requirements> = self
            .templates
            .iter()
            .map(|t| t.requirements.clone())
            .collect();
        let sources: Vec<DomainSource<'_>> = self
            .templates
            .iter()
            .zip(&pool_requirements)
            .map(|(t, r)| DomainSource {
                pool_requirements: r,
                instance_types: t.types,
                taints: &t.taints,
            })
            .collect();
        let nodes: Vec<_> = self
            .existing
            .iter()
            .map(|(i, n)| (*i, &n.labels, &n.taints[..]))
            .collect();
        let node_taints: Vec<Vec<Taint>> = snapshot.nodes.iter().map(|n| n.taints()).collect();
        let mut placed = Vec::new();
        for ((i, node), taints) in snapshot.nodes.iter().enumerate().zip(&node_taints) {
            let Some(pods_on_node) = self.bound.get(node.name()) else {
                continue;
            };
            let labels = node.labels().unwrap_or(&NO_LABELS);
            let counted = pods_on_node.iter().filter(|p| {
                !ignored_for_topology(p) && !leaving.contains(&std::ptr::from_ref(**p))
            });
            for pod in counted {
                let (Some(spec), Some(namespace)) =
                    (pod.spec.as_ref(), pod.metadata.namespace.as_deref())
                else {
                    continue;
                };
                placed.push(PlacedPod {
                    node_id: i,
                    pod: PodView {
                        uid: pod.metadata.uid.as_deref().unwrap_or_default(),
                        namespace,
                        labels: pod.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
                        spec,
                    },
                    node_labels: labels,
                    node_taints: taints,
                });
            }
        }
        TopologyBase::new(
            &sources,
            &nodes,
            &placed,
            moving,
            &snapshot.well_known_labels,
            memoize,
        )
    }
}

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// A pool's limits as written, none used yet.
fn written_limits_of(pool: &crate::api::NodePool) -> Option<Limits> {
    let written = pool.spec.limits.as_ref()?;
    let remaining = ResourceList::from_quantities(written.as_map()).unwrap_or_default();
    Some(Limits {
        keys: written.as_map().keys().cloned().collect(),
        remaining,
    })
}

/// Reads the pods to schedule, in the order given, with their volumes'
/// requirements; those that cannot be read are rejected with why.
pub(crate) fn read_pending<'s>(
    snapshot: &'s Snapshot,
    pod: &'s Pod,
) -> Result<PendingPod<'s>, RejectedPod> {
    let volumes = volume_requirements(snapshot, pod);
    match (PendingPod::new(pod, &snapshot.well_known_labels), volumes) {
        (Ok(mut pending), Ok(alternatives)) => {
            pending.volume_alternatives = alternatives;
            Ok(pending)
        }
        (Err(r), _) => Err((r.key, r.reason)),
        (Ok(pending), Err(reason)) => Err((pending.key, reason)),
    }
}

/// A cluster ready for many scheduling runs that each take some of its nodes
/// away (see the module documentation).
pub(crate) struct Prepared<'s> {
    snapshot: &'s Snapshot,
    setup: Setup<'s>,
    topology: Arc<TopologyBase>,
    /// The cluster's pending pods, with their index in the snapshot's pods.
    pending: Vec<(usize, Result<PendingPod<'s>, RejectedPod>)>,
    /// For each DaemonSet, its live pods, each with its node's index, among
    /// which [`daemon_pods`] picks the one that stands for them.
    daemon_candidates: Vec<Vec<(Option<usize>, &'s Pod)>>,
}

impl<'s> Prepared<'s> {
    /// Builds what every run shares.
    pub(crate) fn new(snapshot: &'s Snapshot) -> Prepared<'s> {
        let setup = Setup::new(snapshot);
        let topology =
            Arc::new(setup.topology_base(snapshot, &HashSet::new(), &HashSet::new(), true));
        let pending = snapshot
            .pods
            .iter()
            .enumerate()
            .filter(|(_, p)| is_pending(p))
            .map(|(i, p)| (i, read_pending(snapshot, p)))
            .collect();
        let node_index: HashMap<&str, usize> = snapshot
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name(), i))
            .collect();
        let daemon_candidates = snapshot
            .daemon_sets
            .iter()
            .map(|ds| {
                snapshot
                    .pods
                    .iter()
                    .filter(|p| is_pod_of(ds, p))
                    .map(|p| (bound_node(p).and_then(|n| node_index.get(n).copied()), p))
                    .collect()
            })
            .collect();
        Prepared {
            snapshot,
            setup,
            topology,
            pending,
            daemon_candidates,
        }
    }

    /// A scheduler for the cluster without the nodes at `removed` (indices
    /// into the snapshot's nodes) and every pod bound to them, with `moved`
    /// (indices into the snapshot's pods, bound to removed nodes) pending
    /// again, fenced by `fence`. `None` when taking the nodes away changes
    /// what a DaemonSet's pods ask of new nodes (its newest live pod ran on
    /// a removed node and differs from the next): then only a fresh build
    /// of the changed cluster gives the same answer.
    pub(crate) fn scheduler(
        &self,
        removed: &BTreeSet<usize>,
        moved: &[usize],
        fence: Fence,
    ) -> Option<Scheduler<'_>> {
        if !self.daemons_unchanged(removed) {
            return None;
        }
        let snapshot = self.snapshot;
        let existing: Vec<Destination<'_>> = self
            .setup
            .existing
            .iter()
            .filter(|(i, _)| !removed.contains(i))
            .map(|(_, n)| Destination::Shared(n))
            .collect();
        // Pending pods in snapshot order, the moved ones among them.
        let mut pods = Vec::with_capacity(self.pending.len() + moved.len());
        let mut rejected = Vec::new();
        let mut cluster = self.pending.iter().peekable();
        let mut moved = moved.iter().copied().peekable();
        loop {
            let next_moved = moved.peek().copied();
            let next_pending = cluster.peek().map(|(i, _)| *i);
            let result = match (next_pending, next_moved) {
                (Some(p), Some(m)) if p < m => cluster.next().map(|(_, r)| r.clone()),
                (Some(_), None) => cluster.next().map(|(_, r)| r.clone()),
                (_, Some(m)) => {
                    moved.next();
                    Some(read_pending(snapshot, &snapshot.pods[m]))
                }
                (None, None) => None,
            };
            match result {
                Some(Ok(pod)) => pods.push(pod),
                Some(Err(why)) => rejected.push(why),
                None => break,
            }
        }
        let views: Vec<PodView<'_>> = pods.iter().map(super::scheduler::view).collect();
        let removal = self.topology.removed(removed);
        let topology = Topology::without(Arc::clone(&self.topology), removal, &views);
        drop(views);
        let limits = self.setup.limits(removed);
        let mut scheduler =
            Scheduler::assemble(&self.setup, existing, limits, pods, rejected, topology);
        scheduler.fence = fence;
        Some(scheduler)
    }

    /// Whether every DaemonSet's pods still ask the same of new nodes once
    /// the nodes at `removed` are gone: its newest live pod (as
    /// [`daemon_pods`] picks it) is the same, or reads the same.
    fn daemons_unchanged(&self, removed: &BTreeSet<usize>) -> bool {
        let daemon_sets = &self.snapshot.daemon_sets;
        self.daemon_candidates
            .iter()
            .zip(daemon_sets)
            .all(|(pods, daemon_set)| {
                let live = |skip_removed: bool| {
                    newest(
                        pods.iter()
                            .filter(move |(node, _)| {
                                !skip_removed || node.is_none_or(|n| !removed.contains(&n))
                            })
                            .map(|(_, pod)| *pod),
                    )
                };
                let (before, after) = (live(false), live(true));
                if before.zip(after).is_some_and(|(a, b)| std::ptr::eq(a, b)) {
                    return true;
                }
                let read = |pod: Option<&Pod>| daemon_pod(daemon_set, pod).map(|d| d.spec);
                read(before) == read(after)
            })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use crate::provisioning::schedule;
    use crate::provisioning::test_support::{instance_type, pod, snapshot};

    fn reason(snapshot: &crate::snapshot::Snapshot) -> String {
        let plan = schedule(snapshot);
        assert!(plan.node_claims.is_empty());
        plan.unschedulable[0].reason.clone()
    }

    #[test]
    fn a_pool_without_instance_types_says_so() {
        let mut cluster = snapshot(vec![], vec![pod("web", "1", "1Gi")]);
        assert_eq!(
            reason(&cluster),
            "nodepool \"default\": the pool has no instance types"
        );
        cluster.instance_types.clear();
        assert_eq!(
            reason(&cluster),
            "nodepool \"default\": the pool has no instance types"
        );
    }

    #[test]
    fn instance_types_under_another_name_are_named() {
        let mut cluster = snapshot(vec![], vec![pod("web", "1", "1Gi")]);
        cluster.instance_types = BTreeMap::from([(
            "general".to_owned(),
            Arc::from(vec![instance_type("m-4", 4, 16, 1.0)]),
        )]);
        let reason = reason(&cluster);
        assert!(
            reason.starts_with("nodepool \"default\": the pool has no instance types (")
                && reason.contains("only under \"general\""),
            "{reason}"
        );
    }
}
