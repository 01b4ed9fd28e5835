//! The driver: runs the engine against a [`CloudProvider`] and a [`Cluster`],
//! turning plans into launches and deletions.
//!
//! Each [`Driver::reconcile`] reads the cluster afresh and:
//!
//! 1. looks after NodeClaims: launches those without an
//!    instance, marks them registered and initialized as their Nodes come,
//!    terminates those being deleted (their node tainted and drained first,
//!    pod by pod through the Eviction API in upstream's priority order; a
//!    PodDisruptionBudget that allows no disruption holds the node, reported
//!    as [`Event::EvictionBlocked`], until it allows one or the claim's
//!    `terminationGracePeriod` runs out; a pod with an active
//!    `karpenter.sh/do-not-disrupt` is never evicted and holds it the same
//!    way, reported as [`Event::EvictionWaiting`]), and deletes instances no claim
//!    accounts for (and claims whose instance is gone);
//! 2. moves disruption commands on: once a command's
//!    replacements are initialized its candidates are deleted; when a
//!    replacement fails or times out the command is aborted and its
//!    candidates untainted;
//! 3. provisions: plans the pending pods, nominates them to
//!    capacity that exists, creates and launches claims for the rest; when
//!    the cloud has no capacity for an offering it is marked unavailable for
//!    a while ([`UnavailableOfferings`]) and the pods are planned again. A
//!    nominated pod is not pending (upstream's `IsPreempting`): it is held on
//!    the node or claim it was nominated to while that can take it, and
//!    planned again once the nomination is void (its target gone or being
//!    deleted);
//! 4. when all is quiet (no pod waiting for capacity or for the node it was
//!    nominated to, no claim in flight, no command under way) plans disruption and starts its first command:
//!    candidates tainted `karpenter.sh/disrupted:NoSchedule`, replacements
//!    created and launched. An emptiness or consolidation command first
//!    waits [`DriverOptions::validation_delay`] (15 s, as upstream) and is
//!    checked against the cluster as it is then: it starts, or is dropped
//!    when the cluster moved under it ([`Event::CommandHeld`],
//!    [`Event::CommandDropped`]; nothing else is planned meanwhile). A plan
//!    that would read just what the last one
//!    read, which found no command, is skipped until a moment it depends on
//!    comes (see [`DriverOptions::with_quiet_skip`]).
//!
//! Pods no plan can place are reported ([`Event::PodUnschedulable`]) once
//! per pod and reason. So are, when it plans disruption, the nodes that may
//! not be disrupted now ([`Event::DisruptionBlocked`]) and the candidates
//! single-node consolidation evaluated and could not consolidate
//! ([`Event::Unconsolidatable`]), once per node and reason, from the same
//! evaluation that looks for the command (no extra simulation).
//!
//! The driver keeps nothing a restart would lose but the unavailable
//! offerings, a command waiting for its check (a new driver plans again, as
//! upstream's controller restarted in its wait computes anew), and which
//! unplaceable pods, blocked and unconsolidatable nodes it reported: a
//! command in progress is written on the cluster (annotations
//! on its claims, [`COMMAND_ANNOTATION`] and [`REPLACES_ANNOTATION`]), so a
//! new driver picks it up where the old one stopped. One command runs at a
//! time (upstream overlaps them within the budgets): every plan starts from
//! a settled cluster, which keeps budgets and capacity easy to reason about.
//!
//! Time is passed in: the same cluster, cloud and `now` give the same
//! actions.
//!
//! Planning is CPU-bound: the driver hands it to the embedder's
//! [`PlanningRunner`] (see [`DriverOptions::with_planning_runner`]), which by
//! default runs it inline.

mod annotations;
mod disrupt;
mod drain;
mod lifecycle;
mod manifest;
mod planning;
mod provision;
mod report;
mod validate;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::pods::PodInfo;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{Condition, ConditionStatus, NodeClaim};
use crate::capacity_buffers::CapacityBuffers;
use crate::cloudprovider::{
    CloudProvider, CloudProviderError, DEFAULT_UNAVAILABLE_TTL, RepairPolicy, UnavailableOfferings,
};
use crate::cluster::{Cluster, read_snapshot};
use crate::disruption::DisruptionOptions;
use crate::error::Error;
use crate::features::FeatureGate;
use crate::planning::PlanningOptions;
use crate::pods::PodKey;
use crate::provisioning::PlannedClaim;
use crate::snapshot::Snapshot;

pub use annotations::{
    COMMAND_ANNOTATION, COMMAND_REPLACEMENTS_ANNOTATION, COMMAND_STARTED_ANNOTATION,
    REPLACES_ANNOTATION,
};
#[cfg(feature = "tokio")]
pub use planning::SpawnBlocking;
pub use planning::{Inline, PlanningJob, PlanningRunner};
pub use report::{Event, Report, Step, Timing};

pub use crate::disruption::ValidationFailure;

/// How the driver behaves.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DriverOptions {
    /// How new claims are chosen, provisioned or replacing disrupted nodes,
    /// and upstream's feature gates (`NodeRepair` decides whether the
    /// provider's repair policies are applied; `NodeOverlay` whether the
    /// cluster's NodeOverlays are).
    pub planning: PlanningOptions,
    /// Whether multi-node consolidation may replace its candidates with
    /// several nodes (see [`DisruptionOptions::m_to_n`]).
    pub m_to_n: bool,
    /// Whether the driver disrupts at all (provisioning always runs).
    pub disrupt: bool,
    /// How long an offering the cloud had no capacity for stays unavailable.
    pub unavailable_ttl: Duration,
    /// How long a command waits for its replacements to initialize before it
    /// is aborted (upstream: at least ten minutes).
    pub replacement_timeout: Duration,
    /// How many times one reconcile plans again after launches failed for
    /// lack of capacity.
    pub max_replans: usize,
    /// Where planning runs: [`Inline`] by default; `SpawnBlocking` (with the
    /// `tokio` feature) or the embedder's own runner keep it off the async
    /// executor (see [`PlanningRunner`]).
    pub planning_runner: Arc<dyn PlanningRunner>,
    /// Whether a disruption plan that would be the same as the last one,
    /// which found no command, is skipped (see
    /// [`with_quiet_skip`](Self::with_quiet_skip)); on by default.
    pub quiet_skip: bool,
    /// How long an emptiness or consolidation command waits, once computed,
    /// before it is checked against the cluster and started or dropped
    /// (upstream's `commandValidationDelay`, 15 s; see
    /// [`with_validation_delay`](Self::with_validation_delay)).
    pub validation_delay: Duration,
}

/// Upstream's `commandValidationDelay`: how long a computed emptiness or
/// consolidation command waits before it is checked and run.
pub const DEFAULT_VALIDATION_DELAY: Duration = Duration::from_secs(15);

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            planning: PlanningOptions::default(),
            m_to_n: false,
            disrupt: true,
            unavailable_ttl: DEFAULT_UNAVAILABLE_TTL,
            replacement_timeout: Duration::from_secs(600),
            max_replans: 3,
            planning_runner: Arc::new(Inline),
            quiet_skip: true,
            validation_delay: DEFAULT_VALIDATION_DELAY,
        }
    }
}

impl DriverOptions {
    /// What the driver's disruption plans read of these options, with the
    /// provider's repair `policies`: a dry run plans with these.
    pub fn disruption(&self, policies: Vec<RepairPolicy>) -> DisruptionOptions {
        DisruptionOptions::default()
            .with_planning(self.planning)
            .with_m_to_n(self.m_to_n)
            .with_repair_policies(policies)
    }

    /// These options with new claims, provisioned and replacing disrupted
    /// nodes, chosen (and gates set) as `planning` says.
    #[must_use]
    pub fn with_planning(mut self, planning: PlanningOptions) -> Self {
        self.planning = planning;
        self
    }

    /// These options with M-to-N consolidation on or off.
    #[must_use]
    pub fn with_m_to_n(mut self, on: bool) -> Self {
        self.m_to_n = on;
        self
    }

    /// These options with disruption on or off.
    pub fn with_disrupt(mut self, on: bool) -> Self {
        self.disrupt = on;
        self
    }

    /// These options with this time-to-live for unavailable offerings.
    pub fn with_unavailable_ttl(mut self, ttl: Duration) -> Self {
        self.unavailable_ttl = ttl;
        self
    }

    /// These options with this many plans again per reconcile after launches
    /// failed for lack of capacity.
    pub fn with_max_replans(mut self, replans: usize) -> Self {
        self.max_replans = replans;
        self
    }

    /// These options with this wait for replacements.
    pub fn with_replacement_timeout(mut self, timeout: Duration) -> Self {
        self.replacement_timeout = timeout;
        self
    }

    /// These options with planning run by `runner`: a tokio embedder passes
    /// `SpawnBlocking` (the `tokio` feature), so that a plan over a large
    /// cluster does not hold a runtime worker.
    pub fn with_planning_runner(mut self, runner: impl PlanningRunner + 'static) -> Self {
        self.planning_runner = Arc::new(runner);
        self
    }

    /// These options with the quiet skip on or off. On (the default), a
    /// disruption plan that found no command is not made again while
    /// nothing it read has changed: the cluster's
    /// [`revision`](Cluster::revision) is the same (a cluster that has none
    /// is planned for at every pass), so are the provider's instance types,
    /// labels and drift verdicts, the driver's options and its unavailable
    /// offerings, and no moment the plan depends on has come
    /// ([`disruption::next_change`](crate::disruption::next_change)). The
    /// skipped plan would have found the same nothing, and the events it
    /// reports are the same. Off, every settled pass plans.
    pub fn with_quiet_skip(mut self, on: bool) -> Self {
        self.quiet_skip = on;
        self
    }

    /// These options with emptiness and consolidation commands waiting
    /// `delay` before they run. A computed command is held (in the driver's
    /// memory: a restarted driver plans again); the first settled reconcile
    /// at or after its time plus `delay` checks it against the cluster as
    /// it is then, as upstream's validation does (its candidates still
    /// candidates and within budgets, its simulation still holding), and
    /// starts it or drops it. Nothing else is planned meanwhile, as
    /// upstream's disruption controller waits in the method; provisioning
    /// goes on. A `delay` of zero starts a command at once, unchecked (the
    /// check would read the cluster the plan read). Drift, expiration and
    /// repair never wait.
    pub fn with_validation_delay(mut self, delay: Duration) -> Self {
        self.validation_delay = delay;
        self
    }
}

/// Runs the engine against a cloud and a cluster. See the [module
/// documentation](self).
///
/// ```
/// # async fn run(
/// #     provider: std::sync::Arc<dyn karpenter_core::cloudprovider::CloudProvider>,
/// #     cluster: std::sync::Arc<dyn karpenter_core::cluster::Cluster>,
/// # ) -> Result<(), karpenter_core::Error> {
/// use karpenter_core::driver::Driver;
///
/// let mut driver = Driver::new(provider, cluster);
/// let report = driver.reconcile(jiff::Timestamp::now()).await?;
/// for event in &report.events {
///     println!("{event}");
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Driver {
    provider: Arc<dyn CloudProvider>,
    cluster: Arc<dyn Cluster>,
    options: DriverOptions,
    unavailable: UnavailableOfferings,
    /// The highest claim number handed out (claims are `<pool>-<number>`).
    sequence: u64,
    /// The pods reported unschedulable, with the reason reported: each is
    /// reported once per reason, not once per reconcile.
    unschedulable: BTreeMap<PodKey, String>,
    /// The nodes reported blocked from disruption, by name, with the reason
    /// reported (the same once-per-reason rule).
    blocked: BTreeMap<String, String>,
    /// The nodes reported unconsolidatable, by name, with the reason
    /// reported (the same rule).
    unconsolidatable: BTreeMap<String, String>,
    /// The labels the provider's reserved offerings name their reservations
    /// by (from the last snapshot): what a launch's reservation is read from.
    reservation_labels: BTreeSet<String>,
    /// The cluster's revision just before the last snapshot was read: the
    /// snapshot is of that revision when the cluster still has it.
    snapshot_revision: Option<u64>,
    /// The last disruption plan, when it found no command and the cluster
    /// has revisions: what lets the next plan be skipped (see
    /// [`DriverOptions::with_quiet_skip`]).
    quiet: Option<disrupt::Quiet>,
    /// The emptiness or consolidation command waiting for its check, if any
    /// (see [`DriverOptions::with_validation_delay`]).
    held: Option<validate::Held>,
}

impl Driver {
    /// A driver with the default options.
    pub fn new(provider: Arc<dyn CloudProvider>, cluster: Arc<dyn Cluster>) -> Self {
        Driver {
            provider,
            cluster,
            options: DriverOptions::default(),
            unavailable: UnavailableOfferings::new(),
            sequence: 0,
            unschedulable: BTreeMap::new(),
            blocked: BTreeMap::new(),
            unconsolidatable: BTreeMap::new(),
            reservation_labels: BTreeSet::new(),
            snapshot_revision: None,
            quiet: None,
            held: None,
        }
    }

    /// Remembers the reservation labels of the snapshot's offerings.
    fn note_reservation_labels(&mut self, snapshot: &Snapshot) {
        let labels = snapshot
            .instance_types
            .values()
            .flat_map(|types| types.iter())
            .flat_map(|t| &t.offerings)
            .filter_map(|o| o.reservation.as_ref())
            .map(|r| r.label.clone());
        self.reservation_labels.extend(labels);
    }

    /// This driver with these options.
    pub fn with_options(mut self, options: DriverOptions) -> Self {
        self.options = options;
        // A plan made under other options says nothing about these.
        self.quiet = None;
        self.held = None;
        self
    }

    /// The offerings marked unavailable so far.
    pub fn unavailable_offerings(&self) -> &UnavailableOfferings {
        &self.unavailable
    }

    /// When the command held for its check may be checked, if one is held
    /// (see [`DriverOptions::with_validation_delay`]): a moment the driver
    /// waits for, at which an embedder reconciling on events alone should
    /// reconcile.
    pub fn held_until(&self) -> Option<Timestamp> {
        self.held.as_ref().map(validate::Held::due)
    }

    /// One pass: claims' lifecycle, commands under way, provisioning, and a
    /// new disruption command when all is quiet. Errors from the cluster stop
    /// the pass (the next one starts over); the cloud's failures on single
    /// claims are reported as events.
    #[tracing::instrument(name = "reconcile", skip_all, fields(%now), err(Display))]
    pub async fn reconcile(&mut self, now: Timestamp) -> Result<Report, Error> {
        let mut report = Report::default();
        self.unavailable.expire(now);
        lifecycle::run(self, now, &mut report).await?;
        let commands_under_way = disrupt::progress(self, now, &mut report).await?;
        let settled = provision::run(self, now, &mut report).await?;
        match settled {
            Some(snapshot) if !commands_under_way && self.options.disrupt => {
                disrupt::start(self, snapshot, now, &mut report).await?;
            }
            // Why no new command is looked for, for an operator reading why
            // nodes are not consolidated.
            settled => tracing::debug!(
                settled = settled.is_some(),
                commands_under_way,
                disrupt = self.options.disrupt,
                "no new disruption command this pass"
            ),
        }
        Ok(report)
    }

    /// The cluster as planning sees it: its objects, the provider's
    /// well-known labels, and each pool's instance types with the offerings
    /// marked unavailable. A pool the provider
    /// cannot evaluate yet gets no instance types (nothing launches from it).
    ///
    /// A dry run plans on it what a reconcile would do, and writes nothing.
    pub async fn snapshot(&self, now: Timestamp) -> Result<Snapshot, Error> {
        let mut snapshot = read_snapshot(self.cluster.as_ref()).await?;
        // A pod may select the provider's own labels, as it may in upstream.
        snapshot.well_known_labels = self.provider.well_known_labels();
        // The plan names what the provider's create would launch.
        snapshot.launch_rank = self.provider.launch_rank();
        for pool in &snapshot.node_pools {
            let Some(name) = pool.metadata.name.clone() else {
                continue;
            };
            let mut types = match self.provider.shared_instance_types(pool).await {
                Ok(types) => types,
                Err(CloudProviderError::UnevaluatedNodePool { .. }) => continue,
                Err(error) => return Err(error.into()),
            };
            // Copied only when some offering is marked: most passes share
            // the provider's list as it is.
            if !self.unavailable.is_empty() {
                self.unavailable.apply(Arc::make_mut(&mut types), now);
            }
            snapshot.instance_types.insert(name, types);
        }
        // Upstream's providers list reserved offerings only with the gate on.
        if !self
            .options
            .planning
            .feature_gates
            .is_on(FeatureGate::ReservedCapacity)
        {
            snapshot.withhold_reservations();
        }
        if self
            .options
            .planning
            .feature_gates
            .is_on(FeatureGate::NodeOverlay)
        {
            let overlays = self.cluster.node_overlays().await?;
            for outcome in crate::overlay::apply(&mut snapshot, &overlays) {
                if !outcome.verdict.is_applied() {
                    tracing::warn!(overlay = %outcome.name, "NodeOverlay {}", outcome.verdict);
                }
            }
        }
        if self
            .options
            .planning
            .feature_gates
            .is_on(FeatureGate::CapacityBuffer)
        {
            let buffers = self.cluster.capacity_buffers().await?;
            if !buffers.is_empty() {
                let templates = self.cluster.pod_templates().await?;
                let workloads = self.cluster.scalable_workloads().await?;
                snapshot.capacity_buffers = CapacityBuffers::new(buffers, templates, workloads);
                for state in snapshot.capacity_buffers.states() {
                    if !state.is_resolved() {
                        tracing::warn!(buffer = %state.key, "CapacityBuffer {}", state.readiness);
                    }
                }
            }
        }
        Ok(snapshot)
    }

    /// Creates the NodeClaim for `planned`, named after every claim in
    /// `claims` (to which it is added) and, for a replacement, marked with
    /// the command it `replaces`. `None` when its pool is not in the
    /// snapshot.
    async fn create_claim(
        &mut self,
        planned: &PlannedClaim,
        snapshot: &Snapshot,
        pods: &BTreeMap<PodKey, &PodInfo>,
        claims: &mut Vec<NodeClaim>,
        replaces: Option<&str>,
        now: Timestamp,
    ) -> Result<Option<NodeClaim>, Error> {
        let Some(pool) = snapshot
            .node_pools
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(planned.node_pool.as_str()))
        else {
            return Ok(None);
        };
        let name = self.next_claim_name(&planned.node_pool, claims);
        let well_known = &snapshot.well_known_labels;
        let mut claim = manifest::node_claim(planned, pool, &name, pods, well_known, now);
        if let Some(command) = replaces {
            annotate(&mut claim, REPLACES_ANNOTATION, Some(command.to_owned()));
        }
        self.cluster.create_node_claim(claim.clone()).await?;
        claims.push(claim.clone());
        Ok(Some(claim))
    }

    /// A name for a new claim of `pool`, after every claim number in use.
    fn next_claim_name(&mut self, pool: &str, claims: &[NodeClaim]) -> String {
        let in_use = claims
            .iter()
            .filter_map(|c| c.metadata.name.as_deref()?.rsplit_once('-'))
            .filter_map(|(_, n)| n.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        self.sequence = self.sequence.max(in_use) + 1;
        format!("{pool}-{:05}", self.sequence)
    }
}

/// Sets the condition `type_` to `True` at `now` unless it is already.
fn set_true(claim: &mut NodeClaim, type_: &str, now: Timestamp) {
    let conditions = claim
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(condition) if condition.is_true() => {}
        Some(condition) => {
            condition.status = ConditionStatus::True;
            condition.last_transition_time = Some(Time(now));
        }
        None => conditions.push(Condition {
            last_transition_time: Some(Time(now)),
            ..Condition::new(type_, ConditionStatus::True)
        }),
    }
}

/// Whether the claim's condition `type_` is `True`.
fn is_true(claim: &NodeClaim, type_: &str) -> bool {
    claim.condition(type_).is_some_and(Condition::is_true)
}

/// The claim's annotation `key`, if set.
fn annotation<'c>(claim: &'c NodeClaim, key: &str) -> Option<&'c str> {
    claim
        .metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// Sets (or with `None` removes) the claim's annotation `key`.
fn annotate(claim: &mut NodeClaim, key: &str, value: Option<String>) {
    let annotations = claim.metadata.annotations.get_or_insert_with(BTreeMap::new);
    match value {
        Some(value) => {
            annotations.insert(key.to_owned(), value);
        }
        None => {
            annotations.remove(key);
        }
    }
}

/// The claims of `command`'s candidates in `snapshot`, in the command's
/// order.
fn candidate_claims(snapshot: &Snapshot, command: &crate::disruption::Command) -> Vec<NodeClaim> {
    command
        .candidates
        .iter()
        .filter_map(|name| {
            let node = snapshot.nodes.iter().find(|n| n.name() == name)?;
            node.node_claim.clone()
        })
        .collect()
}

/// The claim's name.
fn name_of(claim: &NodeClaim) -> &str {
    claim.metadata.name.as_deref().unwrap_or_default()
}

/// The name of the claim's Node, once registered.
fn node_name_of(claim: &NodeClaim) -> Option<&str> {
    claim.status.as_ref()?.node_name.as_deref()
}

/// The claim's provider ID, once launched.
fn provider_id_of(claim: &NodeClaim) -> Option<&str> {
    claim.status.as_ref()?.provider_id.as_deref()
}
