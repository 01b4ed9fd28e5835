//! What a replay reports: the JSON `karpenter-sim replay -o json` prints,
//! field for field.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

/// Every run of a replay (one, or two with `--compare`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    /// The runs, the first with the flags as given.
    pub runs: Vec<Run>,
}

/// One replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// The flags that make this run what it is (`--packing upstream`).
    pub flags: String,
    /// When the replay started (step 0, not sampled).
    pub start: Timestamp,
    /// The time between steps, in seconds.
    pub step_seconds: u64,
    /// One entry per step, after the step.
    pub timeline: Vec<Sample>,
    /// Every launch and disruption, in order.
    pub events: Vec<ReplayEvent>,
    /// Every emptiness or consolidation command the driver held for its
    /// check and dropped there, in order (left out of the JSON when there
    /// is none): what did not happen, beside [`events`](Self::events), what
    /// did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<DroppedCommand>,
    /// The sums over the run.
    pub totals: Totals,
    /// What the trace asked that could not be done as asked (an `interrupt`
    /// of more nodes than there were, say), in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The cluster after one step.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// When the step ran.
    pub time: Timestamp,
    /// The price per hour of every running instance (what the cloud bills,
    /// registered or not).
    pub price_per_hour: f64,
    /// How many instances run.
    pub nodes: usize,
    /// How many instances run, by capacity type.
    pub nodes_by_capacity_type: BTreeMap<String, usize>,
    /// Workload pods not bound to a node (DaemonSet pods are not counted).
    pub pending_pods: usize,
    /// Workload pods bound to a node.
    pub pods_running: usize,
    /// Instances launched in this step (in the first, also those of the
    /// set-up pass at the start).
    pub launched: usize,
    /// Nodes a disruption took in this step (commands' candidates, and
    /// nodes the cloud reclaimed).
    pub disrupted: usize,
}

/// A launch or a disruption.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ReplayEvent {
    /// An instance was launched.
    #[serde(rename_all = "camelCase")]
    Launch {
        /// When.
        time: Timestamp,
        /// The NodeClaim launched.
        node_claim: String,
        /// Its NodePool.
        node_pool: String,
        /// The instance type.
        instance_type: String,
        /// The zone.
        zone: String,
        /// `on-demand`, `spot` or `reserved`.
        capacity_type: String,
        /// Its price per hour.
        price: f64,
    },
    /// Nodes were disrupted: a command of the driver, or the cloud taking
    /// an interrupted instance back before any command did.
    #[serde(rename_all = "camelCase")]
    Disrupt {
        /// When.
        time: Timestamp,
        /// Why: `Empty`, `Underutilized`, `Drifted`, `Expired`, `Unhealthy`
        /// or `Interrupted`.
        reason: String,
        /// The nodes (their NodeClaims).
        candidates: Vec<String>,
        /// How many nodes replace them.
        replacements: usize,
        /// What the plan expected to save per hour (0 for a reclaim).
        savings_per_hour: f64,
        /// `driver` for a command, `cloud` for a reclaim.
        by: String,
        /// For an emptiness or consolidation command, when it was computed
        /// and held for its check (the driver's validation delay, 15 s, as
        /// upstream's): it ran at `time`, the first step after. Absent for
        /// commands that run at once.
        #[serde(skip_serializing_if = "Option::is_none")]
        held_since: Option<Timestamp>,
    },
}

/// A held emptiness or consolidation command that failed its check and was
/// dropped: the cluster moved under it while it waited (a pod bound to an
/// empty node, a `karpenter.sh/do-not-disrupt` pod, a budget that closed, a
/// simulation that no longer holds). Its nodes were left alone.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedCommand {
    /// When it was checked and dropped.
    pub time: Timestamp,
    /// Why it was computed: `Empty` or `Underutilized`.
    pub reason: String,
    /// The nodes (their NodeClaims) it would have disrupted.
    pub candidates: Vec<String>,
    /// When it was computed and held.
    pub held_since: Timestamp,
    /// Which check failed, as upstream labels it: `budget`, `scheduling`
    /// or `churn`.
    pub failure: String,
    /// What failed, for a person.
    pub why: String,
}

/// The sums over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// The sum over steps of the price per hour times the step.
    pub cost: f64,
    /// The sum over steps of the nodes times the step, in hours.
    pub node_hours: f64,
    /// Instances launched.
    pub launches: usize,
    /// Nodes disrupted, by reason (every reason, 0 included).
    pub disruptions: BTreeMap<String, usize>,
    /// The sum over steps of the pending pods times the step, in minutes.
    pub pod_minutes_pending: f64,
    /// The longest any pod stayed pending, in whole steps, in seconds.
    pub max_pending_seconds: u64,
}
