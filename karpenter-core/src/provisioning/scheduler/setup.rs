//! What a scheduling run starts from: [`Setup`] reads what every run over a
//! snapshot needs (the NodePools as templates, with their instance-type
//! caches; their limits; the existing nodes as destinations), and
//! [`read_pending`] reads each pod to place. Many runs can start from one
//! setup (see `prepared.rs`).

use super::reservations::ReservationBook;
use crate::provisioning::demand::attach::attached;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::Taint;

use rayon::prelude::*;

use super::carry::{BoundPods, CarriedSetup, NodeNames, TopologySources};
use super::existing::{ExistingNode, is_destination};
use super::reasons::{PoolSkipped, SkippedPool};
use crate::fast_hash::HashSet;
use crate::provisioning::demand::daemons::{DaemonPod, daemon_pods};
use crate::provisioning::demand::pending_pod::{PendingPod, Rejected, Unreadable};
use crate::provisioning::demand::preferences::Preferences;

use crate::api::NodePool;
use crate::capacity_buffers::CapacityBuffers;
use crate::cloudprovider::InstanceType;
use crate::cloudprovider::LaunchRank;
use crate::planning::MinValuesPolicy;
use crate::pods::bound_node;
use crate::provisioning::demand::volumes::volume_requirements;
use crate::provisioning::instance_types::templates::{
    Template, any_prefer_no_schedule, pool_order, template_requirements,
};
use crate::provisioning::topology::{
    DomainSource, ExistingView, LabelMemo, NamespaceLabels, PlacedMove, PlacedPod, PodView,
    TopologyBase, ignored_for_topology,
};
use crate::resources::ResourceList;
use crate::scheduling::{Requirements, WellKnownLabels};
use crate::snapshot::{NODES_RESOURCE, Snapshot};

/// A NodePool's limits and what is left of them.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// The resources the pool limits (a list stores no zeros, so the keys are kept).
    pub(crate) keys: Vec<String>,
    pub(crate) remaining: ResourceList,
}

impl Limits {
    pub(crate) fn exhausted_nodes(&self) -> bool {
        self.keys.iter().any(|k| k == NODES_RESOURCE) && self.remaining.get(NODES_RESOURCE) <= 0
    }

    /// Whether a node of this capacity stays within the limits.
    pub(crate) fn admits(&self, capacity: &ResourceList) -> bool {
        self.keys
            .iter()
            .filter(|k| *k != NODES_RESOURCE)
            .all(|k| capacity.get(k) <= self.remaining.get(k))
    }
}

/// What every scheduling run over one snapshot starts from.
pub(crate) struct Setup<'s> {
    pub(crate) well_known: &'s WellKnownLabels,
    /// The CapacityBuffers, whose virtual pods the plan counts by buffer.
    pub(crate) buffers: &'s CapacityBuffers,
    /// The provider's launch rank: which offering a claim's `launch` names.
    pub(crate) launch_rank: LaunchRank,
    pub(crate) preferences: Preferences,
    /// Whether the templates, and the claims made from them, may lower a
    /// `minValues` their types cannot meet.
    pub(crate) min_values_policy: MinValuesPolicy,
    pub(crate) templates: Arc<[Template<'s>]>,
    /// Every pool with instance types, the skipped ones too: the topology
    /// domains are those they could create (as upstream's
    /// `buildDomainGroups`, which reads every pool the provider gave types
    /// for, whatever the scheduler's filter then leaves).
    domain_pools: Vec<DomainPool<'s>>,
    /// The capacity reservations every pool with instance types offers
    /// (upstream's manager reads them all, as the domains).
    pub(crate) reservations: Arc<ReservationBook>,
    /// NodePools that can launch nothing, with why.
    pub(crate) skipped_pools: Vec<SkippedPool>,
    /// Each template's pool limits, as written (`None`: unlimited).
    pub(crate) written_limits: Vec<Option<Limits>>,
    /// For each template whose pool has limits, its nodes' capacities, each
    /// with the node's index in the snapshot, in snapshot order.
    pool_capacities: Vec<Vec<(usize, ResourceList)>>,
    /// The pods bound to each node, by node name, in snapshot order.
    pub(crate) bound: BoundPods,
    /// The DaemonSet pods every node makes room for.
    daemons: Vec<DaemonPod>,
    /// The destinations, in the order pods try them, each with its index in
    /// the snapshot's nodes.
    pub(crate) existing: Vec<(usize, Arc<ExistingNode>)>,
    /// For each of the snapshot's nodes, whether its destination was taken
    /// unread from the destinations carried (so a carried topology base read
    /// it as it is).
    carried_unread: Vec<bool>,
}

/// What a pool offers the topology: its template's requirements, its
/// instance types and its taints.
#[derive(Debug)]
pub(crate) struct DomainPool<'s> {
    pub(crate) requirements: Requirements,
    pub(crate) types: &'s [InstanceType],
    pub(crate) taints: Vec<Taint>,
}

impl<'s> DomainPool<'s> {
    /// What the topology reads of this pool.
    fn source(&self) -> DomainSource<'_> {
        DomainSource {
            pool_requirements: &self.requirements,
            instance_types: self.types,
            taints: &self.taints,
        }
    }
}

/// Why a pool has no instance types to plan with: none in the snapshot under its
/// name, and which names the snapshot's instance types are under when no pool
/// has them (a snapshot keyed by something else than pool names).
fn no_instance_types(snapshot: &Snapshot) -> PoolSkipped {
    let stray = snapshot
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
    PoolSkipped::NoInstanceTypes { stray }
}

impl<'s> Setup<'s> {
    /// Reads what every run over `snapshot` needs, with `minValues` strict.
    #[cfg(test)]
    pub(crate) fn new(snapshot: &'s Snapshot) -> Setup<'s> {
        Setup::carrying(snapshot, None, MinValuesPolicy::Strict)
    }

    /// Reads what every run over `snapshot` needs, the templates keeping the
    /// types `policy` lets them, taking the destinations `carried` from an
    /// earlier set-up for the nodes that have not changed since.
    pub(crate) fn carrying(
        snapshot: &'s Snapshot,
        carried: Option<&CarriedSetup>,
        policy: MinValuesPolicy,
    ) -> Setup<'s> {
        let well_known = &snapshot.well_known_labels;
        let daemons = daemon_pods(&snapshot.daemon_sets, &snapshot.pods);
        let pools = pool_order(&snapshot.node_pools);
        let preferences = Preferences {
            tolerate_prefer_no_schedule: any_prefer_no_schedule(&pools),
        };
        let PoolsRead {
            templates,
            domain_pools,
            skipped_pools,
            written_limits,
        } = read_pools(snapshot, &pools, &daemons, policy);
        let pool_capacities = pool_capacities(snapshot, &templates, &written_limits);
        // The pods by node as a set-up over an earlier copy of the cluster
        // read them, updated for the pods moved since; else read afresh.
        let bound = carried
            .and_then(|c| {
                let bound = c.take_bound()?;
                bound.carried_over(&snapshot.pods, c.moved())
            })
            .unwrap_or_else(|| BoundPods::new(&snapshot.pods));
        // The unit tests hold every index updated so to a fresh one.
        #[cfg(test)]
        assert_eq!(
            bound,
            BoundPods::new(&snapshot.pods),
            "a carried pod index differs"
        );
        let carried = carried.and_then(|c| c.for_daemons(&daemons));
        let (existing, carried_unread) = read_destinations(snapshot, &bound, &daemons, carried);
        // The unit tests hold every destination taken so to a fresh one.
        #[cfg(test)]
        if carried.is_some() {
            assert_eq!(
                existing,
                read_destinations(snapshot, &bound, &daemons, None).0,
                "a carried destination differs"
            );
        }
        let reservations = Arc::new(ReservationBook::of(domain_pools.iter().map(|p| p.types)));
        Setup {
            well_known,
            buffers: &snapshot.capacity_buffers,
            launch_rank: snapshot.launch_rank,
            preferences,
            min_values_policy: policy,
            templates: templates.into(),
            domain_pools,
            reservations,
            skipped_pools,
            written_limits,
            pool_capacities,
            bound,
            daemons,
            existing,
            carried_unread,
        }
    }

    /// The destinations and the pods' index to carry to a set-up over a
    /// later copy of `snapshot` (this set-up's), those of `previous` this
    /// set-up took kept as they are.
    #[cfg(test)]
    pub(crate) fn carry(self, snapshot: &Snapshot, previous: CarriedSetup) -> CarriedSetup {
        self.carry_knowing(snapshot, previous, false)
    }

    /// [`carry`](Self::carry), told whether the snapshot's node names are
    /// all distinct (then the destinations taken unread need no look-up).
    pub(crate) fn carry_knowing(
        self,
        snapshot: &Snapshot,
        previous: CarriedSetup,
        names_distinct: bool,
    ) -> CarriedSetup {
        let unread = &self.carried_unread;
        let destinations = self.existing.iter().map(|(i, destination)| {
            let taken = unread.get(*i).copied().unwrap_or(false);
            (&snapshot.nodes[*i], destination, taken)
        });
        previous
            .next(&self.daemons, destinations, names_distinct)
            .with_bound(self.bound)
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
    /// topologies. The pods' labels are stored through `labels_read`.
    pub(crate) fn topology_base(
        &self,
        snapshot: &'s Snapshot,
        moving: &HashSet<&str>,
        leaving: &HashSet<*const PodInfo>,
        memoize: bool,
        labels_read: &mut LabelMemo,
    ) -> TopologyBase {
        let sources: Vec<DomainSource<'_>> =
            self.domain_pools.iter().map(DomainPool::source).collect();
        let nodes = self.existing_views();
        let node_taints: Vec<Vec<Taint>> = snapshot.nodes.iter().map(|n| n.taints()).collect();
        let mut destination_of: Vec<Option<&ExistingNode>> = vec![None; snapshot.nodes.len()];
        for (i, node) in &self.existing {
            destination_of[*i] = Some(node);
        }
        let mut placed = Vec::with_capacity(snapshot.pods.len());
        for ((i, node), taints) in snapshot.nodes.iter().enumerate().zip(&node_taints) {
            let pods_on_node = self.bound.on(node.name());
            if pods_on_node.is_empty() {
                continue;
            }
            let labels = node.labels().unwrap_or(&NO_LABELS);
            // The destination read the same labels (its hostname was there
            // already): its requirements are these labels'.
            let requirements = destination_of[i]
                .filter(|d| d.labels == *labels)
                .map(|d| &d.requirements);
            let counted = pods_on_node
                .iter()
                .map(|&p| (p, &snapshot.pods[p]))
                .filter(|(_, p)| {
                    !ignored_for_topology(p.as_ref()) && !leaving.contains(&Arc::as_ptr(p))
                });
            for (pod_id, pod) in counted {
                let (Some(spec), Some(namespace)) =
                    (pod.spec.as_ref(), pod.metadata.namespace.as_deref())
                else {
                    continue;
                };
                placed.push(PlacedPod {
                    node_id: i,
                    pod_id: Some(pod_id),
                    pod: PodView {
                        uid: pod.metadata.uid.as_deref().unwrap_or_default(),
                        namespace,
                        labels: pod.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
                        spec,
                    },
                    node_labels: labels,
                    node_requirements: requirements,
                    node_taints: taints,
                    source: Some(pod),
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
            labels_read,
            NamespaceLabels::new(&snapshot.namespaces),
        )
    }

    /// The destinations as a topology base reads them.
    fn existing_views(&self) -> Vec<ExistingView<'_>> {
        self.existing
            .iter()
            .map(|(i, n)| ExistingView {
                id: *i,
                labels: &n.labels,
                taints: &n.taints,
                requirements: Some(&n.requirements),
            })
            .collect()
    }

    /// What a topology base over this set-up reads of the pools.
    pub(crate) fn topology_sources(&self) -> TopologySources {
        let sources: Vec<DomainSource<'_>> =
            self.domain_pools.iter().map(DomainPool::source).collect();
        TopologySources::of(&sources, self.well_known)
    }

    /// [`topology_base`](Self::topology_base) (memoizing, no pod left out)
    /// by updating `base`, built over an earlier copy of the cluster from
    /// `sources`, for the snapshot's pods at `moved` (indices into its pods)
    /// that have moved since; `nodes_by_name` indexes the snapshot's nodes.
    /// `None` when the update cannot give what a fresh build gives (see
    /// [`TopologyBase::carried_over`]).
    pub(crate) fn carried_topology_base(
        &self,
        snapshot: &'s Snapshot,
        nodes_by_name: &NodeNames,
        base: TopologyBase,
        sources: &TopologySources,
        moved: &[usize],
    ) -> Option<TopologyBase> {
        // A pod names its node by name: with two nodes of one name, the
        // update could not tell which it is on.
        if *sources != self.topology_sources() || !nodes_by_name.all_distinct() {
            return None;
        }
        let mut moved = moved.to_vec();
        moved.sort_unstable();
        moved.dedup();
        let mut moves = Vec::with_capacity(moved.len());
        for &pod_id in &moved {
            let pod = snapshot.pods.get(pod_id)?;
            if ignored_for_topology(pod.as_ref())
                || pod.spec.is_none()
                || pod.metadata.namespace.is_none()
            {
                return None;
            }
            let node_id = *nodes_by_name.get(bound_node(pod)?).first()?;
            moves.push(PlacedMove { pod_id, node_id });
        }
        // A destination taken unread is the node read before, labels and
        // taints alike.
        let unchanged = |id: usize| self.carried_unread.get(id).copied().unwrap_or(false);
        let node_now = |id: usize| {
            let node = snapshot.nodes.get(id)?;
            Some((node.labels().unwrap_or(&NO_LABELS), node.taints()))
        };
        base.carried_over(&self.existing_views(), &unchanged, &node_now, &moves)
    }
}

/// The order of destinations, as upstream's `sortExistingNodes`: initialized
/// first, then by the name its cluster state gives them, then by their own.
fn destination_order(a: &ExistingNode, b: &ExistingNode) -> std::cmp::Ordering {
    (!a.initialized, &a.state_name, &a.name).cmp(&(!b.initialized, &b.state_name, &b.name))
}

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// The NodePools as the runs read them: the templates of those that can
/// launch, every pool with instance types as a source of topology domains,
/// the pools skipped with why, and each template's limits.
struct PoolsRead<'s> {
    templates: Vec<Template<'s>>,
    domain_pools: Vec<DomainPool<'s>>,
    skipped_pools: Vec<SkippedPool>,
    written_limits: Vec<Option<Limits>>,
}

/// Reads `pools` (in the order pods try them) into templates keeping the
/// types `policy` lets them; a pool without instance types, or whose types
/// all fail its template, is skipped with why.
fn read_pools<'s>(
    snapshot: &'s Snapshot,
    pools: &[&NodePool],
    daemons: &[DaemonPod],
    policy: MinValuesPolicy,
) -> PoolsRead<'s> {
    let well_known = &snapshot.well_known_labels;
    let mut templates = Vec::new();
    let mut domain_pools = Vec::new();
    let mut skipped_pools = Vec::new();
    let mut written_limits = Vec::new();
    for pool in pools {
        let name = pool.name().unwrap_or_default().to_string();
        let types: &[_] = snapshot
            .instance_types
            .get(&name)
            .map(|t| &t[..])
            .unwrap_or(&[]);
        if types.is_empty() {
            // Upstream skips such a pool ("no resolved instance types found").
            skipped_pools.push(SkippedPool {
                pool: name,
                why: no_instance_types(snapshot),
            });
            continue;
        }
        match Template::new(pool, types, daemons, well_known, policy) {
            Ok(template) => {
                domain_pools.push(DomainPool {
                    requirements: template.requirements.clone(),
                    types,
                    taints: template.taints.clone(),
                });
                templates.push(template);
                written_limits.push(written_limits_of(pool));
            }
            Err(e) => {
                domain_pools.push(DomainPool {
                    requirements: template_requirements(pool),
                    types,
                    taints: pool.spec.template.spec.taints().to_vec(),
                });
                skipped_pools.push(SkippedPool {
                    pool: name,
                    why: PoolSkipped::NoTypeLeft(e),
                });
            }
        }
    }
    PoolsRead {
        templates,
        domain_pools,
        skipped_pools,
        written_limits,
    }
}

/// For each template whose pool has limits, the capacities of its pool's
/// nodes, each with the node's index in the snapshot, in snapshot order.
fn pool_capacities(
    snapshot: &Snapshot,
    templates: &[Template<'_>],
    written_limits: &[Option<Limits>],
) -> Vec<Vec<(usize, ResourceList)>> {
    templates
        .iter()
        .zip(written_limits)
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
        .collect()
}

/// The destinations, in the order pods try them, each with its index in the
/// snapshot's nodes; and for each node, whether its destination was taken
/// unread from `carried`.
fn read_destinations(
    snapshot: &Snapshot,
    bound: &BoundPods,
    daemons: &[DaemonPod],
    carried: Option<&CarriedSetup>,
) -> (Vec<(usize, Arc<ExistingNode>)>, Vec<bool>) {
    // Each node read on its own (their pods' requests parsed, their
    // labels made requirements), on the pool's threads, in node order.
    let read: Vec<(usize, Arc<ExistingNode>, bool)> = snapshot
        .nodes
        .par_iter()
        .enumerate()
        .filter(|(_, n)| is_destination(n))
        .map(|(i, n)| match carried.and_then(|c| c.get(n)) {
            Some(node) => (i, node, true),
            None => {
                let pods: Vec<&Arc<PodInfo>> = bound
                    .on(n.name())
                    .iter()
                    .map(|&p| &snapshot.pods[p])
                    .collect();
                let node = ExistingNode::new(n, &pods, daemons, snapshot);
                (i, Arc::new(node), false)
            }
        })
        .collect();
    let mut carried_unread = vec![false; snapshot.nodes.len()];
    let mut existing: Vec<(usize, Arc<ExistingNode>)> = read
        .into_iter()
        .map(|(i, node, unread)| {
            carried_unread[i] = unread;
            (i, node)
        })
        .collect();
    // The keys were read with each destination, and the nodes come
    // mostly in order already (a plan's passes keep the snapshot's).
    existing.sort_by(|(_, a), (_, b)| destination_order(a, b));
    (existing, carried_unread)
}

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
    pod: &'s PodInfo,
) -> Result<PendingPod<'s>, Rejected> {
    let volumes = volume_requirements(snapshot, pod);
    match (PendingPod::new(pod, &snapshot.well_known_labels), volumes) {
        (Ok(mut pending), Ok(alternatives)) => {
            pending.volume_alternatives = alternatives;
            pending.attached = attached(snapshot, pod);
            Ok(pending)
        }
        (Err(rejected), _) => Err(rejected),
        (Ok(pending), Err(e)) => Err(Rejected {
            key: pending.key,
            why: Box::new(Unreadable::Volume(e)),
            buffer: None,
        }),
    }
}

/// Reads the snapshot's CapacityBuffer virtual pods, each marked with its
/// buffer, when `buffers` (the `CapacityBuffer` gate) is on; none otherwise.
/// Their volumes are gone (a chunk claims no storage), so they bring no
/// volume requirement.
pub(crate) fn read_virtual(
    snapshot: &Snapshot,
    buffers: bool,
) -> Vec<Result<PendingPod<'_>, Rejected>> {
    if !buffers {
        return Vec::new();
    }
    snapshot
        .capacity_buffers
        .virtual_pods()
        .map(
            |(pod, buffer)| match PendingPod::new(pod, &snapshot.well_known_labels) {
                Ok(mut pending) => {
                    pending.buffer = Some(buffer);
                    Ok(pending)
                }
                Err(mut rejected) => {
                    rejected.buffer = Some(buffer);
                    Err(rejected)
                }
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use crate::provisioning::plan_provisioning;
    use crate::provisioning::test_support::{instance_type, pod, snapshot};

    fn reason(snapshot: &crate::snapshot::Snapshot) -> String {
        let plan = plan_provisioning(snapshot);
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
