//! Disruption candidates: the nodes disruption may act on, with everything
//! its methods read of them, and the nodes that would be candidates but may
//! not be disrupted now.
//!
//! This follows upstream's `NewCandidate` (`pkg/controllers/disruption/types.go`),
//! `StateNode.ValidateNodeDisruptable` and `ValidatePodsDisruptable`
//! (`pkg/controllers/state/statenode.go`) and `GetCandidates`
//! (`pkg/controllers/disruption/helpers.go`). A node is a candidate when:
//!
//! 1. it is managed (`karpenter.sh/nodepool`) and has both a Node and a
//!    NodeClaim, is initialized, and is not deleting (a deletion timestamp on
//!    either, or the claim's `InstanceTerminating=True`);
//! 2. its Node has no `karpenter.sh/do-not-disrupt: "true"` annotation;
//! 3. its NodePool exists and has instance types;
//! 4. no pod bound to it blocks: first any pod with an active
//!    `karpenter.sh/do-not-disrupt` ([`do_not_disrupt`]), then any pod its
//!    PodDisruptionBudgets keep ([`Pdbs::blocks`]), each in `namespace/name`
//!    order, as upstream checks every pod for the annotation before any
//!    budget.
//!
//! A node failing 1 is left out: it is not yet, or no longer, something
//! disruption could act on. A node failing 2, 3 or 4 goes to
//! [`Candidates::blocked`] with the reason: upstream publishes a
//! `DisruptionBlocked` event for it, and nothing will change until a person or
//! a workload does (upstream publishes the same event for case 1 too, but the
//! output's `blocked` lists nodes that would otherwise qualify). For case 3
//! upstream skips the node with "NodePool not found" whether the pool is
//! missing or has no instance types; here the two are told apart.
//!
//! A node whose instance type is not among its pool's is still a candidate,
//! as upstream: [`Candidate::instance_type`] is `None` and its price 0, and
//! consolidation then passes it over.
//!
//! Pod blockers do not bind the eventual class (drift) when the NodeClaim has
//! `spec.terminationGracePeriod`: termination will delete the blocking pods
//! when that period runs out. Such a node is in `blocked` (every other method
//! must skip it) and also, as a whole candidate carrying its
//! [`Candidate::pod_block`], in [`Candidates::pod_blocked`];
//! [`Candidates::eventual`] gives the candidates a drift method may take.
//!
//! Upstream also skips nodes in the orchestration queue and nodes nominated
//! for pending pods by a recent provisioning pass (for max(2 × batch max
//! duration, 10 s)). A snapshot has neither a queue nor nominations, so
//! neither is checked here.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::pods::PodInfo;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use rayon::prelude::*;

use super::allowances::{Standing, standing};
use super::drift_detection::{DriftInputs, DriftReason, INSTANCE_TYPE_CHECK_AGE, drift_with};
use super::plan::{Blocked, DriftCause};
use crate::api::Conditions as _;
use crate::api::{NodeClaim, NodePool, condition_types};
use crate::cloudprovider::InstanceType;
use crate::fast_hash::HashMap;
use crate::pods::{
    PER_NODE_BASE_DISRUPTION_COST, Pdbs, PodBlock, disruption_cost, do_not_disrupt,
    is_reschedulable, lifetime_remaining, reschedule_disruption_cost,
};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, DO_NOT_DISRUPT_ANNOTATION_KEY, LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE,
};
use crate::snapshot::{ClusterNode, Snapshot};

/// A node disruption may act on, with everything the methods read.
#[derive(Clone, Debug)]
pub(super) struct Candidate<'s> {
    /// Its NodeClaim (always present on a candidate).
    pub claim: &'s NodeClaim,
    /// Its name ([`ClusterNode::name`]).
    pub name: &'s str,
    /// Its NodePool.
    pub pool: &'s NodePool,
    /// The pool's instance type named by the node's
    /// `node.kubernetes.io/instance-type` label, if the pool has it.
    pub instance_type: Option<&'s InstanceType>,
    /// The node's `topology.kubernetes.io/zone` label.
    pub zone: Option<Arc<str>>,
    /// The node's `karpenter.sh/capacity-type` label.
    pub capacity_type: Option<Arc<str>>,
    /// The price per hour of the instance type's first offering in the node's
    /// zone and capacity type, available or not (upstream `OfferingPrice`); 0
    /// when unknown.
    pub price: f64,
    /// Every pod bound to it (`spec.nodeName`), finished and daemon pods
    /// included, in `namespace/name` order, as indices into the snapshot's
    /// pods.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "what upstream's candidate records; only the tests read it"
        )
    )]
    pub pods: Arc<[usize]>,
    /// The pods that need a new home when it goes ([`is_reschedulable`]),
    /// as indices into the snapshot's pods.
    pub reschedulable: Arc<[usize]>,
    /// [`reschedule_disruption_cost`] of its pods: at least 1.0.
    pub reschedule_cost: f64,
    /// The legacy [`disruption_cost`]: every pod's eviction cost, scaled by the
    /// node's remaining lifetime at `now`.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "what upstream's candidate records; only the tests read it"
        )
    )]
    pub disruption_cost: f64,
    /// When it was created: the NodeClaim's `creationTimestamp`, else the
    /// Node's, else `now` (a node of unknown age counts as new).
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "what upstream's candidate records; only the tests read it"
        )
    )]
    pub created: Timestamp,
    /// When `consolidateAfter` is met: the newest of the claim's `Initialized`
    /// condition time (else [`created`](Self::created)) and the
    /// `creationTimestamp` of every pod bound to it, plus the pool's
    /// `consolidateAfter`; `None` when that is `Never`.
    pub consolidatable_at: Option<Timestamp>,
    /// When it expires: [`created`](Self::created) plus its `expireAfter`;
    /// `None` when that is `Never`.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "what upstream's candidate records; only the tests read it"
        )
    )]
    pub expires_at: Option<Timestamp>,
    /// Why it has drifted from its pool, if it has ([`drift_with`], the provider's verdict included).
    pub drift: Option<DriftReason>,
    /// The pod that keeps it from graceful disruption: always `None` in
    /// [`Candidates::candidates`], always set in [`Candidates::pod_blocked`].
    pub pod_block: Option<PodBlock>,
}

impl Candidate<'_> {
    /// Whether no pod on it costs anything to move: its reschedule cost is the
    /// per-node base (upstream `IsEmpty`). Daemon, static and finished pods do
    /// not count, nor do pods whose eviction cost is not positive.
    pub(super) fn is_empty(&self) -> bool {
        self.reschedule_cost <= PER_NODE_BASE_DISRUPTION_COST
    }

    /// Whether its pool's `consolidateAfter` has passed at `now` (upstream's
    /// `Consolidatable` condition).
    pub(super) fn is_consolidatable(&self, now: Timestamp) -> bool {
        self.consolidatable_at.is_some_and(|at| at <= now)
    }

    /// Whether it has expired at `now`: `now` is at or past
    /// [`expires_at`](Self::expires_at).
    #[cfg(test)]
    pub(super) fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// Why it drifted, as a command reports it: one cause, or none when it
    /// has not.
    pub(super) fn drift_causes(&self) -> Vec<DriftCause> {
        self.drift
            .iter()
            .map(|reason| DriftCause {
                node: self.name.to_owned(),
                reason: reason.name().to_owned(),
                detail: reason.to_string(),
            })
            .collect()
    }

    /// Price per unit of disruption, higher first to disrupt (upstream
    /// `SavingsRatio`).
    pub(super) fn savings_ratio(&self) -> f64 {
        self.price / self.reschedule_cost
    }

    /// The NodeClaim's `spec.terminationGracePeriod`: with one, pod blockers
    /// do not bind the eventual class.
    #[cfg(test)]
    pub(super) fn termination_grace_period(&self) -> Option<Duration> {
        self.claim.spec.effective_termination_grace_period()
    }
}

/// The cluster's candidates and blocked nodes, each list in name order.
#[derive(Clone, Debug, Default)]
pub(super) struct Candidates<'s> {
    /// The nodes every method may consider.
    pub candidates: Vec<Candidate<'s>>,
    /// The nodes that would be candidates but for a blocker, with the reason.
    pub blocked: Vec<Blocked>,
    /// The nodes of `blocked` kept only by a pod, as whole candidates with
    /// [`Candidate::pod_block`] set, for the eventual class to reconsider.
    pub pod_blocked: Vec<Candidate<'s>>,
}

impl<'s> Candidates<'s> {
    /// The candidates of the eventual class (drift), in name order: every
    /// candidate, and every pod-blocked one whose NodeClaim has a
    /// `terminationGracePeriod` (upstream waives pod blockers for them).
    pub(super) fn eventual(&self) -> Vec<&Candidate<'s>> {
        let waived = self
            .pod_blocked
            .iter()
            .filter(|c| c.claim.spec.termination_grace_period.is_some());
        let mut all: Vec<&Candidate<'s>> = self.candidates.iter().collect();
        let candidates = all.len();
        all.extend(waived);
        // The candidates are in name order already.
        if all.len() > candidates {
            all.sort_by_key(|c| c.name);
        }
        all
    }
}

/// The candidates and blocked nodes of `snapshot` at `now`, in name order
/// (see the [module documentation](self) for the rules).
pub(super) fn candidates(snapshot: &Snapshot, now: Timestamp) -> Candidates<'_> {
    let pdbs = Pdbs::new(&snapshot.pod_disruption_budgets);
    candidates_carrying(snapshot, now, &pdbs, &mut CarriedCandidates::new(snapshot))
}

/// [`candidates`], taking the assessments `carried` from the passes before
/// for the nodes no command has touched since (see
/// [`carry`](super::carry)), and keeping there the ones made now.
pub(super) fn candidates_carrying<'s>(
    snapshot: &'s Snapshot,
    now: Timestamp,
    pdbs: &Pdbs<'_>,
    carried: &mut CarriedCandidates,
) -> Candidates<'s> {
    let lookup = Lookup::new(snapshot, pdbs);
    // The nodes without an assessment kept, each assessed on its own, on
    // the pool's threads.
    let unassessed = carried.unassessed(snapshot.nodes.len());
    let assessed: Vec<(Outcome, Standing)> = {
        let carried = &*carried;
        unassessed
            .par_iter()
            .map(|&i| {
                let node = &snapshot.nodes[i];
                let outcome = lookup.assess(node, snapshot, carried.pods_of(node.name()), now);
                (outcome, standing(node))
            })
            .collect()
    };
    for (i, (outcome, standing)) in unassessed.into_iter().zip(assessed) {
        carried.keep(i, outcome, standing);
    }
    // Gathered in node order.
    let mut found = Candidates {
        candidates: Vec::with_capacity(snapshot.nodes.len()),
        ..Candidates::default()
    };
    for (i, node) in snapshot.nodes.iter().enumerate() {
        match carried.outcome(i) {
            None | Some(Outcome::LeftOut) => {}
            Some(Outcome::Blocked(blocked)) => found.blocked.push(blocked.clone()),
            Some(Outcome::Assessed(assessed)) => {
                let Some(candidate) = lookup.candidate(node, assessed) else {
                    continue;
                };
                if candidate.pod_block.is_none() {
                    found.candidates.push(candidate);
                } else {
                    found.blocked.extend(assessed.pod_blocked.clone());
                    found.pod_blocked.push(candidate);
                }
            }
        }
    }
    found.candidates.sort_by_key(|c| c.name);
    found.pod_blocked.sort_by_key(|c| c.name);
    found.blocked.sort_by(|a, b| a.node.cmp(&b.node));
    found
}

/// A pool's instance types, and the index of each among them by name.
type PoolTypes<'s> = (&'s [InstanceType], HashMap<&'s str, usize>);

/// The snapshot indexed for assessing nodes.
struct Lookup<'s, 'p> {
    /// The pools by name (the first of a name), as indices into the
    /// snapshot's pools.
    pools: HashMap<&'s str, usize>,
    /// Each pool's instance types, with their indices by name, by the pool's
    /// index; `None` for a pool without any.
    pool_types: Vec<Option<PoolTypes<'s>>>,
    node_pools: &'s [NodePool],
    pdbs: &'p Pdbs<'p>,
    /// The provider's drift reasons, by NodeClaim name.
    provider_drift: &'s BTreeMap<String, String>,
}

impl<'s, 'p> Lookup<'s, 'p> {
    fn new(snapshot: &'s Snapshot, pdbs: &'p Pdbs<'p>) -> Self {
        let mut pools = HashMap::default();
        for (i, pool) in snapshot.node_pools.iter().enumerate() {
            if let Some(name) = pool.name() {
                pools.entry(name).or_insert(i);
            }
        }
        let types_of = |pool: &NodePool| {
            let types = snapshot.instance_types.get(pool.name()?)?;
            let by_name = types
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.as_str(), i))
                .collect();
            (!types.is_empty()).then_some((&**types, by_name))
        };
        let pool_types = snapshot.node_pools.iter().map(types_of).collect();
        Self {
            pools,
            pool_types,
            node_pools: &snapshot.node_pools,
            pdbs,
            provider_drift: &snapshot.provider_drift,
        }
    }

    /// The candidate `node` is, as `assessed` found it; `None` when the
    /// snapshot no longer has what the assessment pointed at (it always
    /// has: a plan never changes pools or claims of untouched nodes).
    fn candidate(&self, node: &'s ClusterNode, assessed: &Assessed) -> Option<Candidate<'s>> {
        let types = self.pool_types.get(assessed.pool)?;
        let instance_type = match assessed.instance_type {
            Some(i) => Some(types.as_ref()?.0.get(i)?),
            None => None,
        };
        let facts = &assessed.facts;
        Some(Candidate {
            claim: node.node_claim.as_ref()?,
            name: node.name(),
            pool: self.node_pools.get(assessed.pool)?,
            instance_type,
            zone: assessed.zone.clone(),
            capacity_type: assessed.capacity_type.clone(),
            price: assessed.price,
            pods: Arc::clone(&facts.pods),
            reschedulable: Arc::clone(&facts.reschedulable),
            reschedule_cost: facts.reschedule_cost,
            disruption_cost: facts.disruption_cost,
            created: facts.created,
            consolidatable_at: facts.consolidatable_at,
            expires_at: facts.expires_at,
            drift: facts.drift.clone(),
            pod_block: facts.pod_block.clone(),
        })
    }

    /// Assesses `node`, bound the `snapshot`'s pods at `bound` (in
    /// `namespace/name` order).
    fn assess(
        &self,
        node: &ClusterNode,
        snapshot: &Snapshot,
        bound: &[usize],
        now: Timestamp,
    ) -> Outcome {
        let Some(pool_name) = node.node_pool() else {
            return Outcome::LeftOut;
        };
        let (Some(kube_node), Some(claim)) = (&node.node, &node.node_claim) else {
            return Outcome::LeftOut;
        };
        if !node.is_initialized() || node.is_marked_for_deletion() {
            return Outcome::LeftOut;
        }
        let name = node.name();
        let blocked = |reason: String| {
            Outcome::Blocked(Blocked {
                node: name.to_owned(),
                reason,
            })
        };
        let annotations = kube_node.metadata.annotations.as_ref();
        if annotations
            .and_then(|a| a.get(DO_NOT_DISRUPT_ANNOTATION_KEY))
            .is_some_and(|value| value == "true")
        {
            return blocked(format!("node {name} has {DO_NOT_DISRUPT_ANNOTATION_KEY}"));
        }
        let Some(pool_index) = self.pools.get(pool_name).copied() else {
            return blocked(format!("nodepool {pool_name:?} not found"));
        };
        let Some(Some((type_list, types))) = self.pool_types.get(pool_index) else {
            return blocked(format!("nodepool {pool_name:?} has no instance types"));
        };
        let pool = &self.node_pools[pool_index];
        let label = |key: &str| node.labels()?.get(key).map(String::as_str);
        let instance_type = label(LABEL_INSTANCE_TYPE_STABLE).and_then(|t| types.get(t).copied());
        let zone = label(LABEL_TOPOLOGY_ZONE);
        let capacity_type = label(CAPACITY_TYPE_LABEL_KEY);
        let pods = pods_at(snapshot, bound);
        let reschedulable = bound
            .iter()
            .copied()
            .filter(|&i| is_reschedulable(snapshot.pods[i].as_ref()))
            .collect();
        let facts = self.facts(
            node,
            claim,
            (pool, type_list, types),
            &pods,
            bound,
            snapshot,
            reschedulable,
            now,
        );
        let pod_blocked = facts.pod_block.as_ref().map(|block| Blocked {
            node: name.to_owned(),
            reason: block.to_string(),
        });
        Outcome::Assessed(Box::new(Assessed {
            pool: pool_index,
            instance_type,
            zone: zone.map(Arc::from),
            capacity_type: capacity_type.map(Arc::from),
            price: price(instance_type.map(|i| &type_list[i]), zone, capacity_type),
            facts,
            pod_blocked,
        }))
    }

    /// What `node`'s claim, times and `pods` (the `snapshot`'s pods at
    /// `bound`, of which those at `reschedulable` need a new home when it
    /// goes) say of it as a candidate.
    #[expect(
        clippy::too_many_arguments,
        reason = "a node, its claim, pool and pods, and the moment: each read"
    )]
    fn facts(
        &self,
        node: &ClusterNode,
        claim: &NodeClaim,
        (pool, types, by_name): (&NodePool, &[InstanceType], &HashMap<&str, usize>),
        pods: &[&PodInfo],
        bound: &[usize],
        snapshot: &Snapshot,
        reschedulable: Vec<usize>,
        now: Timestamp,
    ) -> Facts {
        let pod_block = pods
            .iter()
            .find_map(|pod| do_not_disrupt(*pod, now))
            .or_else(|| pods.iter().find_map(|pod| self.pdbs.blocks(*pod)));
        let created = created(node, claim, now);
        let expire_after = expire_after(claim, Some(pool));
        let age = Duration::try_from(now.duration_since(created)).unwrap_or_default();
        let reschedule_cost =
            reschedule_disruption_cost(reschedulable.iter().map(|&i| snapshot.pods[i].as_ref()));
        Facts {
            pods: Arc::from(bound),
            reschedulable: Arc::from(reschedulable),
            reschedule_cost,
            disruption_cost: disruption_cost(
                pods.iter().copied(),
                lifetime_remaining(age, expire_after),
            ),
            consolidatable_at: pool
                .spec
                .effective_consolidate_after()
                .map(|after| plus(last_event(claim, created, pods), after)),
            expires_at: expire_after.map(|after| plus(created, after)),
            created,
            drift: drift_with(
                claim,
                pool,
                &DriftInputs {
                    instance_types: types,
                    by_name: Some(by_name),
                    age,
                    provider: provider_reason(self.provider_drift, claim),
                },
            ),
            pod_block,
        }
    }
}

/// The reason the cloud provider's drift check gave for `claim`, if any.
fn provider_reason<'a>(
    reasons: &'a BTreeMap<String, String>,
    claim: &NodeClaim,
) -> Option<&'a str> {
    reasons
        .get(claim.metadata.name.as_deref().unwrap_or_default())
        .map(String::as_str)
}

/// The price of the instance type's first offering in `zone` and
/// `capacity_type`, available or not; 0 when any is unknown (upstream
/// `resolveNodePrice`, which also reads a NaN price as 0).
pub(super) fn price(
    instance_type: Option<&InstanceType>,
    zone: Option<&str>,
    capacity: Option<&str>,
) -> f64 {
    let (Some(instance_type), Some(zone), Some(capacity)) = (instance_type, zone, capacity) else {
        return 0.0;
    };
    instance_type
        .offerings
        .iter()
        .find(|o| o.zone == zone && o.capacity_type == capacity)
        .map(|o| o.price)
        .filter(|price| !price.is_nan())
        .unwrap_or(0.0)
}

/// The event `consolidateAfter` counts from: the claim's `lastPodEventTime`
/// when it is set, as upstream's consolidatable controller reads it (the
/// last time a pod was bound to or left the node); otherwise, as the scenario
/// format defines it for snapshots that lack it, the newest of the claim's
/// `Initialized` condition time (else its creation) and the
/// `creationTimestamp` of every pod bound to the node (pod creation times
/// standing in for the bindings a snapshot cannot see).
fn last_event(claim: &NodeClaim, created: Timestamp, pods: &[&PodInfo]) -> Timestamp {
    let initialized = match event_base(claim) {
        EventBase::Recorded(recorded) => return recorded,
        EventBase::Initialized(initialized) => initialized.unwrap_or(created),
    };
    pods.iter()
        .filter_map(|pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .fold(initialized, Timestamp::max)
}

/// What [`last_event`] reads of the claim itself.
enum EventBase {
    /// `lastPodEventTime`: the last event, whatever the pods.
    Recorded(Timestamp),
    /// None recorded: the claim's `Initialized` condition time, if it is
    /// initialized and the time is known; the pods' creation may be later.
    Initialized(Option<Timestamp>),
}

fn event_base(claim: &NodeClaim) -> EventBase {
    let status = claim.status.as_ref();
    if let Some(recorded) = status.and_then(|s| s.last_pod_event_time.as_ref()) {
        return EventBase::Recorded(recorded.0);
    }
    EventBase::Initialized(
        status
            .filter(|s| s.conditions.is_true(condition_types::INITIALIZED))
            .and_then(|s| s.conditions.transition_time(condition_types::INITIALIZED)),
    )
}

/// Whether the node is still inside its pool's `consolidateAfter` window at
/// `now` (upstream's `IsUnderConsolidateAfter`, counted as the scenario format
/// counts it): a disruption simulation keeps the removed nodes' pods off such
/// nodes. Never with a zero or `Never` window, or an uninitialized claim.
pub(super) fn under_consolidate_after(
    node: &ClusterNode,
    pool: &NodePool,
    pods: &[&PodInfo],
    now: Timestamp,
) -> bool {
    let Some(after) = pool
        .spec
        .effective_consolidate_after()
        .filter(|d| !d.is_zero())
    else {
        return false;
    };
    let Some(claim) = node.node_claim.as_ref() else {
        return false;
    };
    let initialized = claim
        .status
        .as_ref()
        .is_some_and(|s| s.conditions.is_true(condition_types::INITIALIZED));
    if !initialized {
        return false;
    }
    let created = created(node, claim, now);
    now < plus(last_event(claim, created, pods), after)
}

/// When a node was created: its NodeClaim's `creationTimestamp`, else its
/// Node's, else `now` (a node of unknown age counts as new).
fn created(node: &ClusterNode, claim: &NodeClaim, now: Timestamp) -> Timestamp {
    known_creation(node, claim).unwrap_or(now)
}

/// Its NodeClaim's `creationTimestamp`, else its Node's, if either is set.
fn known_creation(node: &ClusterNode, claim: &NodeClaim) -> Option<Timestamp> {
    claim
        .metadata
        .creation_timestamp
        .as_ref()
        .or(node
            .node
            .as_ref()
            .and_then(|n| n.metadata.creation_timestamp.as_ref()))
        .map(|t| t.0)
}

/// The first moment after `now` at which some node's `consolidateAfter`
/// window may close: when [`Candidate::is_consolidatable`] turns true and
/// [`under_consolidate_after`] turns false. `None` when none will.
///
/// Every node with a claim and a pool with a window counts, candidate or
/// not (a simulation fences any node still inside its window). The window
/// closes at [`last_event`] plus the pool's `consolidateAfter`; which pods
/// that event reads depends on the caller, so each pod bound to the node
/// gives a moment too (the newest of some of them is one of them). A node
/// whose creation is unknown counts as created at every `now`: its window
/// then never closes, unless it is zero long, when it is closed once its
/// newest pod was created.
pub(super) fn next_window_end(snapshot: &Snapshot, now: Timestamp) -> Option<Timestamp> {
    let mut bound: HashMap<&str, Vec<&PodInfo>> = HashMap::default();
    for pod in &snapshot.pods {
        if let Some(node) = crate::pods::bound_node(pod.as_ref()) {
            bound.entry(node).or_default().push(pod);
        }
    }
    let mut next: Option<Timestamp> = None;
    let mut consider = |at: Timestamp| {
        if at > now && next.is_none_or(|n| at < n) {
            next = Some(at);
        }
    };
    for node in &snapshot.nodes {
        let Some(claim) = node.node_claim.as_ref() else {
            continue;
        };
        let Some(pool_name) = node.node_pool() else {
            continue;
        };
        let windows = snapshot
            .node_pools
            .iter()
            .filter(|p| p.name() == Some(pool_name))
            .filter_map(|p| p.spec.effective_consolidate_after());
        for after in windows {
            let base = match event_base(claim) {
                EventBase::Recorded(recorded) => {
                    consider(plus(recorded, after));
                    continue;
                }
                EventBase::Initialized(initialized) => {
                    initialized.or_else(|| known_creation(node, claim))
                }
            };
            if let Some(base) = base {
                consider(plus(base, after));
            }
            for pod in bound.get(node.name()).into_iter().flatten() {
                if let Some(created) = pod.metadata.creation_timestamp.as_ref() {
                    let event = base.map_or(created.0, |base| base.max(created.0));
                    consider(plus(event, after));
                }
            }
        }
    }
    next
}

/// The first moment after `now` at which some node's instance type check
/// (see [`drift_with`]) first runs and finds it drifted: a nanosecond past
/// its claim's creation plus [`INSTANCE_TYPE_CHECK_AGE`], as the check waits
/// until the claim is strictly older. Only a node whose drift that changes
/// counts. A node of unknown creation counts as new at every moment, so it
/// never comes of age. `None` when no node will.
pub(super) fn next_drift_check(snapshot: &Snapshot, now: Timestamp) -> Option<Timestamp> {
    let pool = |name: &str| snapshot.node_pools.iter().find(|p| p.name() == Some(name));
    let of_age = INSTANCE_TYPE_CHECK_AGE + Duration::from_nanos(1);
    snapshot
        .nodes
        .iter()
        .filter_map(|node| {
            let claim = node.node_claim.as_ref()?;
            let pool = pool(node.node_pool()?)?;
            let at = plus(known_creation(node, claim)?, of_age);
            if at <= now {
                return None;
            }
            let types = snapshot.instance_types.get(pool.name()?)?;
            let drift = |age| {
                let inputs = DriftInputs {
                    instance_types: types,
                    by_name: None,
                    age,
                    provider: provider_reason(&snapshot.provider_drift, claim),
                };
                drift_with(claim, pool, &inputs)
            };
            (drift(INSTANCE_TYPE_CHECK_AGE) != drift(of_age)).then_some(at)
        })
        .min()
}

/// `at + duration`, the end of time when that is past it.
fn plus(at: Timestamp, duration: Duration) -> Timestamp {
    SignedDuration::try_from(duration)
        .ok()
        .and_then(|d| at.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}

#[cfg(test)]
mod tests;

use super::carry::{Assessed, CarriedCandidates, Facts, Outcome, pods_at};

/// A claim's `expireAfter`: its own (copied from the pool at launch, defaulted
/// by the API server), else its pool's, as the scenario format says; `None`
/// for `Never`.
pub(super) fn expire_after(claim: &NodeClaim, pool: Option<&NodePool>) -> Option<Duration> {
    match (&claim.spec.expire_after, pool) {
        (Some(_), _) | (None, None) => claim.spec.effective_expire_after(),
        (None, Some(pool)) => pool.spec.template.spec.effective_expire_after(),
    }
}

/// When `claim` expires: its creation (else its Node's) plus its
/// [`expire_after`]; `None` when that is `Never` or no creation time is known.
pub(super) fn expires_at(
    node: &ClusterNode,
    claim: &NodeClaim,
    pool: Option<&NodePool>,
) -> Option<Timestamp> {
    let created = claim
        .metadata
        .creation_timestamp
        .as_ref()
        .or(node.node.as_ref()?.metadata.creation_timestamp.as_ref())
        .map(|t| t.0)?;
    let after = SignedDuration::try_from(expire_after(claim, pool)?).ok()?;
    Some(created.checked_add(after).unwrap_or(Timestamp::MAX))
}

/// The node's price: the offering of its instance type, zone and capacity
/// type labels in its pool's types (available or not), else 0.
pub(super) fn node_price(snapshot: &Snapshot, node: &ClusterNode) -> f64 {
    let label = |key: &str| node.labels()?.get(key).map(String::as_str);
    let types = node
        .node_pool()
        .and_then(|p| snapshot.instance_types.get(p));
    let instance_type =
        label(LABEL_INSTANCE_TYPE_STABLE).and_then(|name| types?.iter().find(|t| t.name == name));
    price(
        instance_type,
        label(LABEL_TOPOLOGY_ZONE),
        label(CAPACITY_TYPE_LABEL_KEY),
    )
}
