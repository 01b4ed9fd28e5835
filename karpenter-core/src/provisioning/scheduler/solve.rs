//! The solve loop, as upstream's `Scheduler.Solve`: pods in queue order, each
//! tried on existing nodes, then on the plan's new claims (fewest pods first), then
//! on a new claim from each NodePool in weight order; a failure relaxes one
//! preference and tries again, and a pod that still fails goes to the back of the
//! queue until a whole cycle makes no progress.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use crate::pods::PodInfo;
use k8s_openapi::jiff::Timestamp;
use rayon::prelude::*;

use super::claim::{NewClaim, Refusal};
use super::claim_order::ClaimOrder;
use super::claim_sets::{ClaimSet, ClaimsByKey};
use super::existing::Destination;
use super::reasons::{PoolReason, PoolRefusal, SkippedPool, Unplaced};
use super::reservations::{Reservations, ReservedMode};
use super::setup::{Limits, Setup, read_pending, read_virtual};
use crate::capacity_buffers::CapacityBuffers;
use crate::cloudprovider::LaunchRank;
use crate::fast_hash::{HashMap, HashSet};
use crate::planning::{MinValuesPolicy, Packing};
use crate::pods::PodKey;
use crate::pods::is_pending;
use crate::provisioning::demand::host_ports::host_ports;
use crate::provisioning::demand::leaving::leaving_pods;
use crate::provisioning::demand::pending_pod::{PendingPod, Rejected, queue_key};
use crate::provisioning::demand::preferences::Preferences;
use crate::provisioning::instance_types::templates::{HEADROOM_RESOURCES, Template};
use crate::provisioning::instance_types::type_cache::TypeSet;
use crate::provisioning::topology::{LabelMemo, NodeKind, PodView, Topology, Verdict};
use crate::resources::ResourceList;
use crate::scheduling::{Requirements, WellKnownLabels};
use crate::snapshot::{NODES_RESOURCE, Snapshot};

/// The fewest pods one thread reads (see [`Scheduler::new`]): a pod is read
/// in microseconds, and a small cluster is read sooner on one thread.
const READ_CHUNK: usize = 256;

/// The state of one provisioning simulation.
pub(crate) struct Scheduler<'s> {
    pub(crate) well_known: &'s WellKnownLabels,
    /// The CapacityBuffers, whose virtual pods the plan counts by buffer.
    pub(crate) buffers: &'s CapacityBuffers,
    /// Whether the plan says where each buffer's virtual pods went.
    pub(crate) buffer_summary: bool,
    /// Which offering a new claim's `launch` names.
    pub(crate) launch_rank: LaunchRank,
    pub(crate) templates: Arc<[Template<'s>]>,
    /// NodePools that can launch nothing, with why.
    pub(crate) skipped_pools: Vec<SkippedPool>,
    pub(crate) limits: Vec<Option<Limits>>,
    /// The destinations, shared with other runs until a pod lands on one.
    pub(crate) existing: Vec<Destination<'s>>,
    pub(crate) claims: Vec<NewClaim>,
    /// The order tier two tries the claims in.
    claim_order: ClaimOrder,
    /// The claims by their requirement on each topology key.
    claims_by_key: ClaimsByKey,
    /// For each topology signature, the claims whose topology refused such pods
    /// for good (see `TopologyError::holds_for_good`): skipped without asking again.
    final_refusals: Vec<ClaimSet>,
    /// Topology signatures by their text (see `PendingPod::topology_signature`).
    signatures: HashMap<String, usize>,
    /// The last pod whose text was signed, and its signature.
    last_signed: Option<(usize, usize)>,
    pub(crate) pods: Vec<PendingPod<'s>>,
    pub(crate) errors: Vec<Option<Unplaced>>,
    /// Pods refused before scheduling (invalid), with why.
    pub(crate) rejected: Vec<Rejected>,
    preferences: Preferences,
    pub(crate) topology: Topology,
    /// Existing nodes some pods may not land on (see [`Fence`]).
    pub(crate) fence: Fence,
    /// How the new claims are chosen once every pod is placed.
    pub(crate) packing: Packing,
    /// Whether a claim may lower a `minValues` its types cannot meet.
    pub(crate) min_values_policy: MinValuesPolicy,
    /// The capacity reservations the claims hold, and what is left of each.
    pub(crate) reservations: Reservations,
}

/// Existing nodes that some pods may not land on: a disruption simulation keeps
/// the pods of the nodes it removes off nodes still inside their
/// `consolidateAfter` window, as upstream's consolidation simulation does.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fence {
    /// The fenced nodes, by name.
    pub nodes: std::collections::BTreeSet<String>,
    /// The pods kept off them.
    pub pods: std::collections::BTreeSet<PodKey>,
}

impl<'s> Scheduler<'s> {
    /// A scheduler for the snapshot's pending pods and the pods that leave
    /// its nodes on their way out (judged at `now`, see [`leaving_pods`]),
    /// and with `buffers` its CapacityBuffers' virtual pods, meeting
    /// `minValues` as `policy` says.
    pub(crate) fn new(
        snapshot: &'s Snapshot,
        now: Option<Timestamp>,
        policy: MinValuesPolicy,
        buffers: bool,
    ) -> Scheduler<'s> {
        let mut setup = Setup::carrying(snapshot, None, policy);
        let leaving = leaving_pods(snapshot, now);
        let mut pods = Vec::new();
        let mut rejected = Vec::new();
        // As upstream: the pending pods, then those of the nodes on their way
        // out (the order topology groups meet them in).
        let planned: Vec<&Arc<PodInfo>> = snapshot
            .pods
            .iter()
            .filter(is_pending)
            .chain(leaving.iter().map(|&i| &snapshot.pods[i]))
            .collect();
        // Each pod is read on its own: on every core, kept in this order.
        let read: Vec<_> = planned
            .par_iter()
            .with_min_len(READ_CHUNK)
            .map(|pod| read_pending(snapshot, pod))
            .collect();
        // As upstream, the virtual pods after the real ones.
        for pod in read.into_iter().chain(read_virtual(snapshot, buffers)) {
            match pod {
                Ok(pending) => pods.push(pending),
                Err(why) => rejected.push(why),
            }
        }
        let pending: Vec<PodView<'_>> = pods.iter().map(view).collect();
        // An empty UID identifies nothing: it never excludes a placed pod.
        let moving: HashSet<&str> = pending
            .iter()
            .map(|p| p.uid)
            .filter(|uid| !uid.is_empty())
            .collect();
        let leaving: HashSet<*const PodInfo> = leaving
            .iter()
            .map(|&i| Arc::as_ptr(&snapshot.pods[i]))
            .collect();
        let base = setup.topology_base(
            snapshot,
            &moving,
            &leaving,
            false,
            &mut LabelMemo::default(),
        );
        let topology = Topology::sole(base, &pending);
        drop(pending);
        // The only run of this set-up: it takes the destinations.
        let existing = std::mem::take(&mut setup.existing)
            .into_iter()
            .map(|(_, n)| Destination::Own(Box::new(Arc::unwrap_or_clone(n))))
            .collect();
        let limits = setup.limits(&BTreeSet::new());
        Scheduler::assemble(&setup, existing, limits, pods, rejected, topology)
    }

    /// A scheduler from its parts, before any pod is placed.
    pub(crate) fn assemble(
        setup: &Setup<'s>,
        existing: Vec<Destination<'s>>,
        limits: Vec<Option<Limits>>,
        pods: Vec<PendingPod<'s>>,
        rejected: Vec<Rejected>,
        topology: Topology,
    ) -> Scheduler<'s> {
        let errors = vec![None; pods.len()];
        Scheduler {
            well_known: setup.well_known,
            buffers: setup.buffers,
            buffer_summary: false,
            launch_rank: setup.launch_rank,
            templates: Arc::clone(&setup.templates),
            skipped_pools: setup.skipped_pools.clone(),
            limits,
            existing,
            claims: Vec::new(),
            claim_order: ClaimOrder::default(),
            claims_by_key: ClaimsByKey::default(),
            final_refusals: Vec::new(),
            signatures: HashMap::default(),
            last_signed: None,
            pods,
            errors,
            rejected,
            preferences: setup.preferences,
            topology,
            fence: Fence::default(),
            packing: Packing::Upstream,
            min_values_policy: setup.min_values_policy,
            // Upstream's gate is on by default, and a simulation falls back.
            reservations: Reservations::new(
                Arc::clone(&setup.reservations),
                Some(ReservedMode::Fallback),
            ),
        }
    }

    /// The `namespace/name` of the buffer at `index`.
    pub(crate) fn buffer_key(&self, index: u32) -> &'s str {
        let states: &'s [_] = self.buffers.states();
        states.get(index as usize).map_or("", |s| s.key.as_str())
    }

    /// Gives the pod the signature of its current constraints. Replicas come
    /// together: a pod whose constraints equal the last one signed takes its
    /// signature without writing its text.
    fn sign(&mut self, pod: usize) {
        if let Some((last, signature)) = self.last_signed
            && last != pod
            && self.pods[last].same_topology(&self.pods[pod])
        {
            self.pods[pod].topology_signature = signature;
            return;
        }
        let text = self.pods[pod].topology_text();
        let next = self.signatures.len();
        let signature = *self.signatures.entry(text).or_insert(next);
        self.pods[pod].topology_signature = signature;
        self.last_signed = Some((pod, signature));
    }

    /// Places every pod it can.
    pub(crate) fn solve(&mut self) {
        for pod in 0..self.pods.len() {
            self.sign(pod);
        }
        let mut order: Vec<usize> = (0..self.pods.len()).collect();
        order.sort_by_cached_key(|&p| queue_key(&self.pods[p]));
        let mut queue: VecDeque<usize> = order.into();
        let mut pushed_at = vec![None; self.pods.len()];
        while let Some(&pod) = queue.front() {
            // Popping a pod pushed when the queue was this long: a whole cycle made
            // no progress.
            if pushed_at[pod] == Some(queue.len()) {
                break;
            }
            queue.pop_front();
            match self.try_schedule(pod) {
                Ok(()) => self.errors[pod] = None,
                Err(reason) => {
                    self.errors[pod] = Some(reason);
                    let _ = self.pods[pod].reset();
                    self.sign(pod);
                    self.topology.update(&view(&self.pods[pod]));
                    queue.push_back(pod);
                    pushed_at[pod] = Some(queue.len());
                }
            }
        }
    }

    /// Tries the pod, relaxing one preference after each failure.
    pub(super) fn try_schedule(&mut self, pod: usize) -> Result<(), Unplaced> {
        // Upstream refuses a pod with DRA claims before it tries any node and
        // takes the refusal as final: no preference dropped could change it.
        if self.pods[pod].dra {
            return Err(Unplaced::Dra);
        }
        loop {
            let error = match self.add(pod) {
                Ok(()) => return Ok(()),
                Err(error) => error,
            };
            // A pod waiting for a reservation keeps its preferences: a claim
            // may give one back later in this run, or a later plan finds one
            // (upstream's "shouldn't relax preferences when a pod fails to
            // schedule due to a reserved offering error").
            if error.waits_for_reservation()
                || !self.preferences.relax(self.pods[pod].spec.to_mut())
            {
                return Err(error);
            }
            self.pods[pod].refresh().map_err(Unplaced::Requirements)?;
            self.sign(pod);
            self.topology.update(&view(&self.pods[pod]));
        }
    }

    /// The three tiers.
    fn add(&mut self, pod: usize) -> Result<(), Unplaced> {
        let ports = host_ports(&self.pods[pod].spec);
        if self.add_to_existing(pod, &ports) {
            return Ok(());
        }
        if self.add_to_claims(pod, &ports) {
            return Ok(());
        }
        self.add_to_new_claim(pod, ports)
    }

    fn add_to_existing(
        &mut self,
        pod: usize,
        ports: &[crate::provisioning::demand::host_ports::HostPort],
    ) -> bool {
        let p = &self.pods[pod];
        let fenced = self.fence.pods.contains(&p.key);
        let found = self.existing.iter().enumerate().find_map(|(i, node)| {
            if fenced && self.fence.nodes.contains(&node.name) {
                return None;
            }
            if !node.admits(p, ports) {
                return None;
            }
            let mut requirements = node.requirements.clone();
            requirements.add_all(&p.requirements);
            if !p.volume_alternatives.is_empty() {
                // A node's labels are concrete: some alternative must hold on them.
                let strict = WellKnownLabels::empty();
                let alternative = p
                    .volume_alternatives
                    .iter()
                    .find(|a| node.requirements.is_compatible(a, &strict))?;
                requirements.add_all(alternative);
            }
            let topology = self
                .topology
                .add_requirements(&view(p), &p.strict_requirements, &requirements)
                .ok()?;
            requirements.compatible(&topology, self.well_known).ok()?;
            requirements.add_all(&topology);
            Some((i, requirements))
        });
        let Some((i, requirements)) = found else {
            return false;
        };
        let taints = &self.existing[i].taints;
        self.topology.record_on(
            &view(&self.pods[pod]),
            &requirements,
            taints,
            NodeKind::Existing,
        );
        self.existing[i]
            .to_mut()
            .add(pod, &self.pods[pod], ports.to_vec());
        true
    }

    fn add_to_claims(
        &mut self,
        pod: usize,
        ports: &[crate::provisioning::demand::host_ports::HostPort],
    ) -> bool {
        // Fewest pods first; equal counts in the order the claims were made.
        let p = &self.pods[pod];
        let mut constraints = self.topology.constraints_of(&view(p));
        // The claims refused without a look: for good (remembered), or for their
        // requirement on a topology key (answered once per distinct requirement).
        let mut skip = self
            .final_refusals
            .get(p.topology_signature)
            .cloned()
            .unwrap_or_default();
        if !constraints.is_empty() {
            for (slot, id, claims) in self.claims_by_key.groups() {
                if constraints.refuses_key(&p.strict_requirements, slot, id) {
                    skip.union_with(claims);
                }
            }
        }
        let mut order = self.claim_order.except(&skip);
        let needs = HEADROOM_RESOURCES.map(|name| p.requests.get(name));
        let mut refused = Vec::new();
        let found = order.find_map(|c| {
            let claim = &self.claims[c];
            if !claim.may_fit(&needs) {
                return None;
            }
            // Topology first, on the claim's own requirements: the pod's and its
            // volumes' only narrow them, and a narrower node never meets a
            // constraint a wider one cannot, so a refusal here holds and spares
            // building the merged requirements for the many claims a spread or
            // anti-affinity pod passes over. A refusal that holds for good is
            // remembered for every pod of the same constraints.
            if let Verdict::Refused { for_good } = constraints.verdict(
                &p.strict_requirements,
                &claim.requirements,
                &claim.topology_keys,
            ) {
                if for_good {
                    refused.push(c);
                }
                return None;
            }
            let template = &self.templates[claim.template];
            let admission = self.admit(claim, template, p, ports).ok()?;
            Some((c, admission))
        });
        drop(order);
        drop(constraints);
        let signature = self.pods[pod].topology_signature;
        if !refused.is_empty() {
            if self.final_refusals.len() <= signature {
                self.final_refusals
                    .resize_with(signature + 1, ClaimSet::default);
            }
            for c in refused {
                self.final_refusals[signature].insert(c);
            }
        }
        let Some((c, admission)) = found else {
            return false;
        };
        let taints = &self.templates[self.claims[c].template].taints;
        self.topology.record_on(
            &view(&self.pods[pod]),
            &admission.requirements,
            taints,
            NodeKind::NewClaim,
        );
        let template = &self.templates[self.claims[c].template];
        self.reservations
            .exchange(&self.claims[c].reserved, &admission.reserved);
        self.claims[c].add(template, pod, &self.pods[pod], ports.to_vec(), admission);
        let keys = self.topology.node_keys(&self.claims[c].requirements);
        let old = std::mem::replace(&mut self.claims[c].topology_keys, keys);
        self.claims_by_key
            .update(c, &old, &self.claims[c].topology_keys);
        self.claim_order.bump(c);
        true
    }

    fn add_to_new_claim(
        &mut self,
        pod: usize,
        ports: Vec<crate::provisioning::demand::host_ports::HostPort>,
    ) -> Result<(), Unplaced> {
        if self.templates.is_empty() {
            return Err(self.no_pool_reason());
        }
        let mut reasons = Vec::new();
        for t in 0..self.templates.len() {
            let template = &self.templates[t];
            let mut options = template.option_set.clone();
            if let Some(limits) = &self.limits[t] {
                if limits.exhausted_nodes() {
                    reasons.push(PoolReason {
                        pool: template.pool.clone(),
                        why: PoolRefusal::NodeLimitsExhausted,
                    });
                    continue;
                }
                for i in template.options.iter().copied() {
                    if !limits.admits(&template.types[i].capacity) {
                        options.remove(i);
                    }
                }
                if options.is_empty() {
                    reasons.push(PoolReason {
                        pool: template.pool.clone(),
                        why: PoolRefusal::TypesExceedLimits,
                    });
                    continue;
                }
            }
            let claim = NewClaim::new(t, template, options, self.claims.len() + 1);
            match self.admit(&claim, template, &self.pods[pod], &ports) {
                Ok(admission) => {
                    let mut claim = claim;
                    self.topology
                        .register(crate::scheduling::LABEL_HOSTNAME, &claim.hostname);
                    let taints = &self.templates[t].taints;
                    self.topology.record_on(
                        &view(&self.pods[pod]),
                        &admission.requirements,
                        taints,
                        NodeKind::NewClaim,
                    );
                    self.reservations.exchange(&[], &admission.reserved);
                    claim.add(&self.templates[t], pod, &self.pods[pod], ports, admission);
                    claim.topology_keys = self.topology.node_keys(&claim.requirements);
                    self.claims_by_key
                        .update(self.claims.len(), &[], &claim.topology_keys);
                    if let Some(limits) = &mut self.limits[t] {
                        charge(limits, &self.templates[t], &claim.options);
                    }
                    self.claim_order.push(claim.pods.len());
                    self.claims.push(claim);
                    return Ok(());
                }
                Err(refusal) => {
                    // A pool that could launch into a reservation, had one
                    // been left, is not passed over for lighter pools.
                    let reserved = matches!(refusal, Refusal::Reserved(_));
                    reasons.push(PoolReason {
                        pool: template.pool.clone(),
                        why: PoolRefusal::Claim(refusal),
                    });
                    if reserved {
                        return Err(Unplaced::Pools(reasons));
                    }
                }
            }
        }
        reasons.extend(self.skipped_reasons());
        Err(Unplaced::Pools(reasons))
    }

    /// Whether the claim can take the pod, and what it becomes.
    fn admit(
        &self,
        claim: &NewClaim,
        template: &Template<'_>,
        pod: &PendingPod,
        ports: &[crate::provisioning::demand::host_ports::HostPort],
    ) -> Result<super::claim::Admission, Refusal> {
        let base = claim.base_requirements(template, pod, self.well_known)?;
        if pod.volume_alternatives.is_empty() {
            return self.admit_with(claim, template, pod, ports, base);
        }
        // Each volume alternative in turn (a volume's node affinity terms are ORed).
        let mut last = None;
        for alternative in &pod.volume_alternatives {
            if let Err(e) = base.compatible(alternative, self.well_known) {
                last = Some(Refusal::VolumeRequirements(e));
                continue;
            }
            let mut requirements = base.clone();
            requirements.add_all(alternative);
            match self.admit_with(claim, template, pod, ports, requirements) {
                Ok(admission) => return Ok(admission),
                Err(refusal) => last = Some(refusal),
            }
        }
        Err(last.unwrap_or(Refusal::NoVolumeAlternative))
    }

    /// The rest of [`admit`](Self::admit) once the pod's and its volumes'
    /// requirements are in: topology, then the instance types.
    fn admit_with(
        &self,
        claim: &NewClaim,
        template: &Template<'_>,
        pod: &PendingPod,
        ports: &[crate::provisioning::demand::host_ports::HostPort],
        mut requirements: Requirements,
    ) -> Result<super::claim::Admission, Refusal> {
        let topology = self
            .topology
            .add_requirements(&view(pod), &pod.strict_requirements, &requirements)
            .map_err(Refusal::Topology)?;
        requirements
            .compatible(&topology, self.well_known)
            .map_err(Refusal::TopologyRequirements)?;
        requirements.add_all(&topology);
        let mut admission =
            claim.narrow(template, pod, ports, requirements, self.min_values_policy)?;
        admission.reserved = self
            .reservations
            .to_hold(
                template,
                &admission.options,
                &admission.requirements,
                &claim.reserved,
            )
            .map_err(Refusal::Reserved)?;
        Ok(admission)
    }

    fn no_pool_reason(&self) -> Unplaced {
        if self.skipped_pools.is_empty() {
            return Unplaced::NoUsablePool;
        }
        Unplaced::Pools(self.skipped_reasons().collect())
    }

    /// Each skipped pool's reason, as every pod that needs a new claim hears it.
    fn skipped_reasons(&self) -> impl Iterator<Item = PoolReason> + '_ {
        self.skipped_pools.iter().map(|skipped| PoolReason {
            pool: skipped.pool.clone(),
            why: PoolRefusal::Skipped(skipped.why.clone()),
        })
    }
}

/// Charges a new claim against its pool's limits pessimistically: the largest
/// capacity among its instance types, as upstream; and one node.
pub(crate) fn charge(limits: &mut Limits, template: &Template<'_>, options: &TypeSet) {
    let mut largest = ResourceList::new();
    for i in options.iter() {
        largest = largest.max(&template.types[i].capacity);
    }
    limits.remaining = limits.remaining.saturating_sub(&largest);
    let nodes = limits.remaining.get(NODES_RESOURCE);
    limits
        .remaining
        .set(NODES_RESOURCE, nodes.saturating_sub(1000));
}

/// The pod as topology sees it.
pub(crate) fn view<'a>(pod: &'a PendingPod<'_>) -> PodView<'a> {
    PodView {
        uid: &pod.uid,
        namespace: pod.namespace,
        labels: pod.labels,
        spec: &pod.spec,
    }
}
