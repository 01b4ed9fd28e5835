//! Where the pods of nodes about to be disrupted would go: the cluster without
//! those nodes, their pods pending, through the provisioning scheduler, as
//! upstream's `SimulateScheduling` (`pkg/controllers/disruption/helpers.go`)
//! does.
//!
//! [`simulate`] is the reference: it builds the changed cluster and plans it
//! from scratch, which is simple enough to trust. A [`Simulator`] answers the
//! same question many times over one cluster: it builds the scheduling set-up
//! once (templates, destinations, topology counts over every placed pod) and
//! each simulation takes the removed nodes out of it, so a pass that tries a
//! thousand candidates does not rebuild the cluster a thousand times.
//! Property tests hold the two to the same answers.
//!
//! As upstream, the simulated pods are the pending pods and the removed nodes'
//! pods that are *currently reschedulable* (reschedulable, not protected by
//! `karpenter.sh/do-not-disrupt`, not fully blocked by a PodDisruptionBudget);
//! the nodes on their way out (being deleted, or taken by a command) count as
//! removed in every simulation, so their pods must find a home too;
//! the other pods of those nodes go with them, but for the DaemonSets' pods:
//! upstream's cluster state keeps the pod that stands for a DaemonSet
//! whatever becomes of its node (`GetDaemonSetPod`), so a simulation sizes
//! new nodes' daemon overhead from the pod the whole cluster's newest is,
//! even when its node is one of those removed. Pods that were pending before
//! may stay pending without failing the simulation; a moved pod must land, and
//! not on a node that is not initialized yet (upstream's
//! `UninitializedNodeError`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

use k8s_openapi::jiff::Timestamp;

use super::candidates::under_consolidate_after;
use crate::features::FeatureGate;
use crate::planning::PlanningOptions;
use crate::pods::{Pdbs, PodInfo, PodKey};
use crate::pods::{as_unschedulable, bound_node, pod_key};
use crate::provisioning::{
    CarriedSetup, Fence, Prepared, ProvisioningPlan, ReservedMode, is_pod_of_any, schedule_fenced,
    solve,
};
use crate::snapshot::Snapshot;

/// What happened to the pods of the removed nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulation {
    /// The plan for the changed cluster: new claims, placements on the
    /// remaining nodes, and what cannot be placed.
    pub plan: ProvisioningPlan,
    /// The removed nodes' pods that were rescheduled, sorted.
    pub moved: Vec<PodKey>,
    /// Moved pods that found no home, each with why, by pod.
    pub stranded: Vec<Stranded>,
}

/// A moved pod that found no home.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stranded {
    /// The pod.
    pub pod: PodKey,
    /// Why it has no home.
    pub reason: StrandedReason,
}

/// Why a moved pod has no home.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrandedReason {
    /// The scheduler found no place for it, for the reason it gives
    /// (the provisioning plan's [`Unschedulable::reason`]).
    ///
    /// [`Unschedulable::reason`]: crate::provisioning::Unschedulable::reason
    Unschedulable(String),
    /// The scheduler placed it on a node that is not initialized yet, which
    /// the simulation refuses (upstream's `UninitializedNodeError`).
    Uninitialized {
        /// The node it would land on.
        node: String,
    },
}

impl fmt::Display for StrandedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrandedReason::Unschedulable(reason) => f.write_str(reason),
            StrandedReason::Uninitialized { node } => {
                write!(f, "would land on node {node}, which is not initialized")
            }
        }
    }
}

impl Simulation {
    /// Whether every moved pod found a home.
    pub fn all_moved(&self) -> bool {
        self.stranded.is_empty()
    }

    /// How many new claims the moved (and pending) pods need.
    pub fn new_claims(&self) -> usize {
        self.plan.node_claims.len()
    }
}

/// Simulations over one cluster at one moment, sharing one scheduling set-up
/// (see the module documentation). Each answers exactly as [`simulate`]
/// on the same cluster would.
///
/// A simulator is `Send` and `Sync`: several threads may simulate through
/// one (`&Simulator`) at once, say to weigh a pass's candidates in parallel.
/// What the simulations share is built up front or kept in memos that
/// threads fill without locking readers out, each simulation's own state is
/// its own, and every answer is the same whichever thread asks, in whatever
/// order.
///
/// ```
/// use std::collections::BTreeSet;
///
/// use karpenter_core::disruption::Simulator;
/// use karpenter_core::snapshot::Snapshot;
///
/// let snapshot = Snapshot::default();
/// let simulator = Simulator::new(&snapshot, "2026-06-01T00:00:00Z".parse().unwrap());
/// let simulations: Vec<_> = std::thread::scope(|scope| {
///     let workers: Vec<_> = ["node-a", "node-b"]
///         .into_iter()
///         .map(|name| {
///             let simulator = &simulator;
///             scope.spawn(move || simulator.simulate(&BTreeSet::from([name]), &BTreeSet::new()))
///         })
///         .collect();
///     workers.into_iter().map(|w| w.join().unwrap()).collect()
/// });
/// assert!(simulations.iter().all(|s| s.all_moved()));
/// ```
pub struct Simulator<'s> {
    snapshot: &'s Snapshot,
    now: Timestamp,
    prepared: Prepared<'s>,
    pdbs: Arc<Pdbs<'s>>,
    /// Whether each pod is currently reschedulable, worked out when first
    /// asked; each answer set once, so threads simulating at once share them
    /// without a lock.
    reschedulable: Vec<OnceLock<bool>>,
    /// The nodes on their way out (being deleted), which every simulation
    /// removes.
    leaving: BTreeSet<&'s str>,
    /// The indices of the nodes named in `leaving`, sorted.
    leaving_nodes: Vec<usize>,
    /// The currently reschedulable pods of the nodes in `leaving`, as
    /// indices into the snapshot's pods: every simulation moves them.
    leaving_moved: Vec<usize>,
    /// The nodes inside their `consolidateAfter` window.
    consolidating: BTreeSet<String>,
    /// How new claims are chosen.
    options: PlanningOptions,
}

impl std::fmt::Debug for Simulator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("now", &self.now)
            .field("nodes", &self.snapshot.nodes.len())
            .field("pods", &self.snapshot.pods.len())
            .finish_non_exhaustive()
    }
}

impl<'s> Simulator<'s> {
    /// Builds the set-up the simulations of `snapshot` at `now` share.
    pub fn new(snapshot: &'s Snapshot, now: Timestamp) -> Simulator<'s> {
        let pdbs = Arc::new(Pdbs::new(&snapshot.pod_disruption_budgets));
        Simulator::carrying(snapshot, now, None, pdbs, PlanningOptions::default())
    }

    /// [`Simulator::new`], taking what a simulator of an earlier copy of the
    /// cluster `carried` where nothing changed since (see
    /// [`CarriedSetup`]), and the snapshot's PodDisruptionBudgets as `pdbs`
    /// read them.
    pub(crate) fn carrying(
        snapshot: &'s Snapshot,
        now: Timestamp,
        carried: Option<&CarriedSetup>,
        pdbs: Arc<Pdbs<'s>>,
        options: PlanningOptions,
    ) -> Simulator<'s> {
        // The set-up reads the cluster on the pool's threads; the nodes on
        // their way out are found meanwhile.
        let policy = options.min_values_policy;
        let (prepared, leaving) = rayon::join(
            || Prepared::carrying(snapshot, carried, policy, plans_capacity_buffers(&options)),
            || leaving(snapshot),
        );
        let pods_of = |name: &str| prepared.bound_to(name).map(Arc::as_ref).collect();
        let consolidating = consolidating(snapshot, &snapshot.nodes, pods_of, now);
        let mut leaving_nodes: Vec<usize> = leaving
            .iter()
            .flat_map(|name| prepared.nodes_named(name).iter().copied())
            .collect();
        leaving_nodes.sort_unstable();
        let mut simulator = Simulator {
            snapshot,
            now,
            prepared,
            pdbs,
            reschedulable: snapshot.pods.iter().map(|_| OnceLock::new()).collect(),
            leaving,
            leaving_nodes,
            leaving_moved: Vec::new(),
            consolidating,
            options,
        };
        simulator.leaving_moved = simulator
            .leaving
            .iter()
            .flat_map(|name| simulator.prepared.bound_indices(name))
            .filter(|&i| simulator.is_currently_reschedulable(i))
            .collect();
        simulator
    }

    /// What this simulator's set-up read, to carry to a simulator of a later
    /// copy of this cluster, those of `previous` this one took kept as they
    /// are.
    pub(crate) fn carry(self, previous: CarriedSetup) -> CarriedSetup {
        self.prepared.carry(previous)
    }

    /// This simulator, its simulations made as `options` say. A new
    /// `minValues` policy reads the pools again (which types each template
    /// keeps depends on it), as do CapacityBuffers turned on or off.
    pub fn with_options(mut self, options: PlanningOptions) -> Self {
        if options.min_values_policy != self.options.min_values_policy
            || plans_capacity_buffers(&options) != plans_capacity_buffers(&self.options)
        {
            self.prepared = Prepared::carrying(
                self.snapshot,
                None,
                options.min_values_policy,
                plans_capacity_buffers(&options),
            );
        }
        self.options = options;
        self
    }

    /// The moment simulated.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The nodes on their way out, which every simulation removes.
    pub(crate) fn leaving(&self) -> &BTreeSet<&'s str> {
        &self.leaving
    }

    /// Whether the snapshot's pod at `index` is currently reschedulable.
    fn is_currently_reschedulable(&self, index: usize) -> bool {
        *self.reschedulable[index].get_or_init(|| {
            self.pdbs
                .is_currently_reschedulable(&self.snapshot.pods[index], self.now)
        })
    }

    /// [`simulate`] for this simulator's cluster, moment and options.
    ///
    /// The nodes on their way out are removed (and deleting) in every
    /// simulation: what they take is worked out once, and the sets given
    /// need not name them.
    pub fn simulate(&self, removed: &BTreeSet<&str>, deleting: &BTreeSet<&str>) -> Simulation {
        let is_removed = |name: &str| removed.contains(name) || self.leaving.contains(name);
        // The nodes removed beyond those on their way out.
        let beyond: Vec<&str> = removed
            .iter()
            .copied()
            .filter(|name| !self.leaving.contains(name))
            .collect();
        let mut node_indices: BTreeSet<usize> = self.leaving_nodes.iter().copied().collect();
        for name in &beyond {
            node_indices.extend(self.prepared.nodes_named(name).iter().copied());
        }
        let mut moved_pods = self.leaving_moved.clone();
        let mut fenced = BTreeSet::new();
        for name in &beyond {
            let fence_these = !deleting.contains(name);
            for i in self.prepared.bound_indices(name) {
                let pod = &self.snapshot.pods[i];
                if self.is_currently_reschedulable(i) {
                    moved_pods.push(i);
                }
                if fence_these {
                    fenced.insert(pod_key(pod));
                }
            }
        }
        moved_pods.sort_unstable();
        let fence = Fence {
            nodes: self.consolidating.clone(),
            pods: fenced,
        };
        let mut scheduler = self.prepared.scheduler(&node_indices, &moved_pods, fence);
        scheduler.packing = self.options.packing;
        scheduler.reservations = scheduler
            .reservations
            .with_mode(reserved_mode(&self.options));
        let plan = solve(scheduler);
        let mut moved: Vec<PodKey> = moved_pods
            .iter()
            .map(|&i| pod_key(&self.snapshot.pods[i]))
            .collect();
        moved.sort();
        // Nodes sharing a name are removed together, or kept together.
        let initialized = |name: &str| {
            is_removed(name)
                || self
                    .prepared
                    .nodes_named(name)
                    .first()
                    .is_none_or(|&i| self.snapshot.nodes[i].is_initialized())
        };
        let stranded = stranded_by(&plan, &moved, initialized);
        Simulation {
            plan,
            moved,
            stranded,
        }
    }
}

/// How a simulation's claims take capacity reservations: with upstream's
/// `ReservedCapacity` gate on (the default), as upstream's disruption does,
/// falling back to other capacity when none is left.
fn reserved_mode(options: &PlanningOptions) -> Option<ReservedMode> {
    options
        .feature_gates
        .is_on(FeatureGate::ReservedCapacity)
        .then_some(ReservedMode::Fallback)
}

/// Whether the CapacityBuffers' virtual pods are planned with the pending
/// pods (upstream's `CapacityBuffer` gate, off by default): the room they
/// need counts in every simulation, as in upstream's.
fn plans_capacity_buffers(options: &PlanningOptions) -> bool {
    options.feature_gates.is_on(FeatureGate::CapacityBuffer)
}

/// Reschedules the pods of the nodes named in `removed` on the rest of the
/// cluster at `now`, the new claims chosen as `options` say. As upstream's
/// consolidation simulation, the pods of the removed nodes that are not
/// already being deleted (`deleting`) stay off nodes still inside their
/// `consolidateAfter` window.
///
/// This is the reference: it plans the changed cluster from scratch. A
/// [`Simulator`] gives the same answers faster when there are many.
pub fn simulate(
    snapshot: &Snapshot,
    removed: &BTreeSet<&str>,
    deleting: &BTreeSet<&str>,
    now: Timestamp,
    options: PlanningOptions,
) -> Simulation {
    let (removed, deleting) = with_nodes_on_their_way_out(snapshot, removed, deleting);
    let (removed, deleting) = (&removed, &deleting);
    let (changed, moved) = without_nodes(snapshot, removed, now);
    let fence = fence(snapshot, &changed, removed, deleting, now);
    let plan = schedule_fenced(
        &changed,
        fence,
        options.packing,
        options.min_values_policy,
        reserved_mode(&options),
        plans_capacity_buffers(&options),
    );
    let stranded = stranded(&changed, &plan, &moved);
    Simulation {
        plan,
        moved,
        stranded,
    }
}

/// `removed` and `deleting` with the snapshot's nodes that are on their way
/// out ([`ClusterNode::is_marked_for_deletion`]): as upstream's
/// `SimulateScheduling`, every simulation also reschedules the pods of the
/// nodes being deleted, and fails when it cannot place them.
///
/// [`ClusterNode::is_marked_for_deletion`]: crate::snapshot::ClusterNode::is_marked_for_deletion
fn with_nodes_on_their_way_out<'a>(
    snapshot: &'a Snapshot,
    removed: &BTreeSet<&'a str>,
    deleting: &BTreeSet<&'a str>,
) -> (BTreeSet<&'a str>, BTreeSet<&'a str>) {
    with_leaving(&leaving(snapshot), removed, deleting)
}

/// The names of the snapshot's nodes on their way out.
fn leaving(snapshot: &Snapshot) -> BTreeSet<&str> {
    snapshot
        .nodes
        .iter()
        .filter(|n| n.is_marked_for_deletion())
        .map(|n| n.name())
        .collect()
}

/// `removed` and `deleting`, each with the `leaving` nodes: the set of those
/// copied (a plan's later passes have hundreds) rather than each added.
fn with_leaving<'a>(
    leaving: &BTreeSet<&'a str>,
    removed: &BTreeSet<&'a str>,
    deleting: &BTreeSet<&'a str>,
) -> (BTreeSet<&'a str>, BTreeSet<&'a str>) {
    let (mut with_removed, mut with_deleting) = (leaving.clone(), leaving.clone());
    with_removed.extend(removed.iter().copied());
    with_deleting.extend(deleting.iter().copied());
    (with_removed, with_deleting)
}

/// The remaining nodes inside their `consolidateAfter` window, and the pods of
/// removed nodes not being deleted, which may not land on them.
fn fence(
    snapshot: &Snapshot,
    changed: &Snapshot,
    removed: &BTreeSet<&str>,
    deleting: &BTreeSet<&str>,
    now: Timestamp,
) -> Fence {
    let mut bound: BTreeMap<&str, Vec<&PodInfo>> = BTreeMap::new();
    for pod in &snapshot.pods {
        if let Some(node) = bound_node(pod) {
            bound.entry(node).or_default().push(pod);
        }
    }
    let pods_of = |name: &str| bound.get(name).cloned().unwrap_or_default();
    let nodes = consolidating(snapshot, &changed.nodes, pods_of, now);
    let pods = removed
        .iter()
        .filter(|node| !deleting.contains(*node))
        .flat_map(|node| bound.get(node).into_iter().flatten())
        .map(pod_key)
        .collect();
    Fence { nodes, pods }
}

/// The names of `nodes` inside their pool's `consolidateAfter` window at
/// `now`, given the pods bound to each node (by `bound`, from its name).
fn consolidating<'a>(
    snapshot: &Snapshot,
    nodes: &[crate::snapshot::ClusterNode],
    bound: impl Fn(&str) -> Vec<&'a PodInfo>,
    now: Timestamp,
) -> BTreeSet<String> {
    let pool = |name: &str| snapshot.node_pools.iter().find(|p| p.name() == Some(name));
    // A pool that consolidates at once has no window: with no pool that
    // has one, no node need be looked at.
    let has_window = |pool: &crate::api::NodePool| {
        let window = pool.spec.effective_consolidate_after();
        window.is_some_and(|after| !after.is_zero())
    };
    if !snapshot.node_pools.iter().any(has_window) {
        return BTreeSet::new();
    }
    nodes
        .iter()
        .filter(|node| {
            let Some(pool) = node.node_pool().and_then(pool) else {
                return false;
            };
            // Nor need the pods of its nodes be gathered.
            has_window(pool) && under_consolidate_after(node, pool, &bound(node.name()), now)
        })
        .map(|node| node.name().to_owned())
        .collect()
}

/// The cluster a simulation plans: the nodes of `removed` gone, their
/// currently reschedulable pods pending (unbound and marked unschedulable;
/// their DaemonSets' pods stay, bound to a node the copy no longer has, as
/// upstream's cluster state keeps the pod that stands for a DaemonSet when
/// its node goes; their other pods go with them); and the moved pods' keys,
/// sorted.
pub fn without_nodes(
    snapshot: &Snapshot,
    removed: &BTreeSet<&str>,
    now: Timestamp,
) -> (Snapshot, Vec<PodKey>) {
    let pdbs = Pdbs::new(&snapshot.pod_disruption_budgets);
    let mut changed = Snapshot {
        node_pools: snapshot.node_pools.clone(),
        instance_types: snapshot.instance_types.clone(),
        nodes: snapshot
            .nodes
            .iter()
            .filter(|n| !removed.contains(n.name()))
            .cloned()
            .collect(),
        pods: Vec::with_capacity(snapshot.pods.len()),
        daemon_sets: snapshot.daemon_sets.clone(),
        pod_disruption_budgets: snapshot.pod_disruption_budgets.clone(),
        persistent_volume_claims: snapshot.persistent_volume_claims.clone(),
        persistent_volumes: snapshot.persistent_volumes.clone(),
        storage_classes: snapshot.storage_classes.clone(),
        csi_nodes: snapshot.csi_nodes.clone(),
        namespaces: snapshot.namespaces.clone(),
        capacity_buffers: snapshot.capacity_buffers.clone(),
        well_known_labels: snapshot.well_known_labels.clone(),
        launch_rank: snapshot.launch_rank,
        provider_drift: snapshot.provider_drift.clone(),
    };
    let mut moved = Vec::new();
    for pod in &snapshot.pods {
        match bound_node(pod) {
            Some(node) if removed.contains(node) => {
                if pdbs.is_currently_reschedulable(pod, now) {
                    // Unbound and marked unschedulable, as the kube-scheduler
                    // leaves a pod it has no room for: provisioning plans it.
                    moved.push(pod_key(pod));
                    changed.pods.push(Arc::new(as_unschedulable(pod)));
                } else if is_pod_of_any(&snapshot.daemon_sets, pod) {
                    // No node of the copy holds it: it counts for no node and
                    // no topology, only for what new nodes' daemons ask.
                    changed.pods.push(pod.clone());
                }
            }
            _ => changed.pods.push(pod.clone()),
        }
    }
    moved.sort();
    (changed, moved)
}

/// Whether [`simulate`] with `removed` would move any pod: whether a pod
/// bound to those nodes, or to the nodes on their way out, is currently
/// reschedulable. Without one, the simulation's placements hold none of the
/// removed nodes' pods, which is all a command applied to the cluster needs
/// of it.
pub(super) fn moves_any(snapshot: &Snapshot, removed: &BTreeSet<&str>, now: Timestamp) -> bool {
    let (removed, _) = with_nodes_on_their_way_out(snapshot, removed, &BTreeSet::new());
    let pdbs = Pdbs::new(&snapshot.pod_disruption_budgets);
    snapshot.pods.iter().any(|pod| {
        bound_node(pod).is_some_and(|node| removed.contains(node))
            && pdbs.is_currently_reschedulable(pod, now)
    })
}

/// The moved pods the plan leaves unplaced, or places on a node that is not
/// initialized.
fn stranded(changed: &Snapshot, plan: &ProvisioningPlan, moved: &[PodKey]) -> Vec<Stranded> {
    let initialized = |name: &str| {
        changed
            .nodes
            .iter()
            .find(|n| n.name() == name)
            .is_none_or(|n| n.is_initialized())
    };
    stranded_by(plan, moved, initialized)
}

/// [`stranded`], telling initialized destinations by `initialized`.
fn stranded_by(
    plan: &ProvisioningPlan,
    moved: &[PodKey],
    initialized: impl Fn(&str) -> bool,
) -> Vec<Stranded> {
    let is_moved = |pod: &PodKey| moved.binary_search(pod).is_ok();
    let mut stranded: Vec<Stranded> = plan
        .unschedulable
        .iter()
        .filter(|u| is_moved(&u.pod))
        .map(|u| Stranded {
            pod: u.pod.clone(),
            reason: StrandedReason::Unschedulable(u.reason.clone()),
        })
        .collect();
    for placement in &plan.existing_nodes {
        if initialized(&placement.name) {
            continue;
        }
        for pod in placement.pods.iter().filter(|p| is_moved(p)) {
            stranded.push(Stranded {
                pod: pod.clone(),
                reason: StrandedReason::Uninitialized {
                    node: placement.name.clone(),
                },
            });
        }
    }
    // By pod, then by the reason as worded, as the (pod, reason) pairs this
    // list once was sorted.
    stranded.sort_by_cached_key(|s| (s.pod.clone(), s.reason.to_string()));
    stranded
}
