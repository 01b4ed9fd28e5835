//! An independent check of a [`ProvisioningPlan`] against the [`Snapshot`] it was
//! made from: [`validate`] and the [`Violation`]s it reports.
//!
//! The validator re-derives everything from the snapshot's public data (the pods,
//! the NodePools, the instance-type catalog, the nodes, the DaemonSets) and never
//! calls into the scheduler, so it can judge any plan: the scheduler's, a
//! hand-written one, or one from another packing strategy.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;

use k8s_openapi::api::core::v1::{
    NodeSelectorRequirement, NodeSelectorTerm, Pod, PodAffinityTerm, PodSpec, Taint, Toleration,
    TopologySpreadConstraint, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::MAX_INSTANCE_TYPES;
use super::plan::{Launch, PlannedClaim, ProvisioningPlan, RequirementOutput};
use crate::api::{NodePool, condition_types};
use crate::cloudprovider::InstanceType;
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, DISRUPTED_TAINT_KEY, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE, NODE_INITIALIZED_LABEL_KEY, NODE_POOL_LABEL_KEY,
    NODE_REGISTERED_LABEL_KEY, Requirement, Requirements, TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE, WellKnownLabels, normalize_label_key, tolerates, tolerates_all,
    uninitialized_node_taints,
};
use crate::snapshot::{ClusterNode, NODES_RESOURCE, Snapshot};

/// How far `totalPricePerHour` may be from the sum of the launch prices.
const TOTAL_PRICE_TOLERANCE: f64 = 1e-6;

/// How far a launch price may be from the catalog's (prices are copied, so this
/// only forgives a round trip through decimal text).
const PRICE_TOLERANCE: f64 = 1e-9;

/// A rule of the plan that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which rule.
    pub rule: Rule,
    /// What it is about.
    pub subject: Subject,
    /// What was found, with the numbers.
    pub detail: String,
}

/// The rules [`validate`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// A pending pod appears nowhere in the plan.
    PodMissing,
    /// A pending pod appears more than once.
    PodDuplicated,
    /// The plan names a pod that is not pending.
    UnknownPod,
    /// An unschedulable pod has no reason.
    MissingReason,
    /// A placed pod's spec cannot be read (its requests or node requirements).
    UnreadablePod,
    /// A claim's NodePool does not exist or may not launch.
    NodePool,
    /// A claim's instance-type list is empty, too long, repeats or names an unknown
    /// type, or lacks the launch type.
    InstanceTypeList,
    /// A claim's requirements cannot be read back.
    UnreadableRequirements,
    /// A claim has no launch.
    NoLaunch,
    /// The launch is not an available catalog offering that meets the claim's
    /// requirements.
    LaunchOffering,
    /// The launch price differs from the catalog's.
    LaunchPrice,
    /// A cheaper allowed offering exists over the listed types.
    LaunchNotCheapest,
    /// The instance types are not sorted by their cheapest allowed offering.
    InstanceTypeOrder,
    /// A listed instance type does not meet the claim's requirements or has no
    /// available offering they allow.
    InstanceTypeIncompatible,
    /// A listed instance type cannot hold the pods with its daemons.
    InstanceTypeTooSmall,
    /// A compatible instance type that holds the pods was left out.
    InstanceTypesIncomplete,
    /// The pods (and daemons) need more than a node's allocatable.
    OverCommitted,
    /// The launched node does not meet the claim's or the NodePool's requirements.
    LaunchedNodeRequirements,
    /// A pod does not tolerate a taint of its node.
    Taint,
    /// A pod's node requirements are not met.
    NodeRequirements,
    /// A pod is placed on a node that is not in the snapshot.
    UnknownNode,
    /// A pod is placed on a node being deleted or disrupted.
    NotADestination,
    /// Two pods (or a pod and a daemon) bind the same host port on one node.
    HostPort,
    /// Two pods share a domain that a required anti-affinity term forbids.
    AntiAffinity,
    /// A zonal `DoNotSchedule` spread constraint is skewed beyond `maxSkew`.
    TopologySpread,
    /// A NodePool's limits are exceeded.
    NodePoolLimits,
    /// `totalPricePerHour` is not the sum of the launch prices.
    TotalPrice,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::PodMissing => "pending pod missing from the plan",
            Rule::PodDuplicated => "pod planned more than once",
            Rule::UnknownPod => "not a pending pod",
            Rule::MissingReason => "unschedulable without a reason",
            Rule::UnreadablePod => "placed pod cannot be read",
            Rule::NodePool => "nodepool cannot launch",
            Rule::InstanceTypeList => "bad instance-type list",
            Rule::UnreadableRequirements => "unreadable requirements",
            Rule::NoLaunch => "no launch",
            Rule::LaunchOffering => "launch is not an allowed available offering",
            Rule::LaunchPrice => "launch price differs from the catalog",
            Rule::LaunchNotCheapest => "launch is not the cheapest allowed offering",
            Rule::InstanceTypeOrder => "instance types not sorted by price",
            Rule::InstanceTypeIncompatible => "incompatible instance type listed",
            Rule::InstanceTypeTooSmall => "listed instance type too small",
            Rule::InstanceTypesIncomplete => "compatible instance type left out",
            Rule::OverCommitted => "over-committed",
            Rule::LaunchedNodeRequirements => "launched node breaks requirements",
            Rule::Taint => "untolerated taint",
            Rule::NodeRequirements => "node requirements not met",
            Rule::UnknownNode => "unknown node",
            Rule::NotADestination => "node cannot take pods",
            Rule::HostPort => "host port conflict",
            Rule::AntiAffinity => "required anti-affinity broken",
            Rule::TopologySpread => "topology spread skew beyond maxSkew",
            Rule::NodePoolLimits => "nodepool limits exceeded",
            Rule::TotalPrice => "total price differs from the sum of launch prices",
        })
    }
}

/// What a violation is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    /// The plan as a whole.
    Plan,
    /// A pod, as `namespace/name`.
    Pod(String),
    /// A new claim: its index in `nodeClaims` and its NodePool.
    Claim {
        /// Index in the plan's `nodeClaims`.
        index: usize,
        /// The claim's NodePool.
        node_pool: String,
    },
    /// An existing node (or in-flight claim), by name.
    Node(String),
    /// A NodePool, by name.
    NodePool(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Plan => f.write_str("plan"),
            Subject::Pod(key) => write!(f, "pod {key}"),
            Subject::Claim { index, node_pool } => {
                write!(f, "claim #{index} (nodepool {node_pool:?})")
            }
            Subject::Node(name) => write!(f, "node {name:?}"),
            Subject::NodePool(name) => write!(f, "nodepool {name:?}"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.subject, self.rule, self.detail)
    }
}

impl std::error::Error for Violation {}

/// Checks `plan` against `snapshot` and returns every violation found, in a
/// deterministic order; empty when the plan keeps every rule below.
///
/// # Rules
///
/// Accounting
/// - every pending pod (no `nodeName`, not `Succeeded`/`Failed`, not being
///   deleted, not owned by a DaemonSet) appears exactly once: in one claim, on one
///   existing node, or in `unschedulable` (with a reason); nothing else appears.
///
/// New claims
/// - the claim's NodePool exists and may launch (not static, not being deleted,
///   `Ready` not false); every listed instance type is in the pool's catalog, once;
///   the list is not empty, holds at most [`MAX_INSTANCE_TYPES`] and the launch type;
/// - the launch is an offering of the catalog (same zone and capacity type), is
///   available, has the catalog's price, and satisfies the claim's requirements;
/// - the launch is the cheapest available offering, over the listed types, that the
///   claim's requirements allow; the list is sorted by each type's cheapest such
///   offering (ties by name), and every listed type has one and meets the claim's
///   requirements;
/// - when the pool has no limits, no pod of the claim binds a host port, and neither
///   the pool nor the pods constrain the instance type (the written requirements
///   replace that constraint with the list itself), the list is complete: no type
///   of the catalog that meets the claim's requirements, has such an offering and
///   holds the claim's pods with its daemons is left out (the claim's types only
///   narrow as pods join, so a type that fits all of them at the end fitted at
///   every step);
/// - no over-commitment: the launch type's allocatable (capacity − overhead) holds
///   the pods' requests plus those of the daemons that would run on it, and so does
///   every listed type (with its own daemons). A daemon runs on a type of a pool when
///   it tolerates the pool's taints (`PreferNoSchedule` ignored) and, for one of its
///   required node-affinity terms tried in order (or none), its `nodeSelector` with
///   the term's `matchExpressions` is compatible with the pool's requirements and
///   intersects the type's; the daemon's spec is that of its newest live pod when
///   one exists, else the template's, with the template's required node affinity
///   (the DaemonSet controller rewrites live pods' affinity to `matchFields`, which
///   upstream does not read);
/// - the launched node (the type's labels, the launch's zone and capacity type, the
///   template labels, the pool's label, and for any other key of the claim's
///   requirements a value they allow) meets the claim's requirements and the
///   NodePool's;
/// - each pod on the claim tolerates the pool's `NoSchedule`/`NoExecute` taints
///   (`PreferNoSchedule` is a preference, and startup taints need no toleration), and
///   its strict node requirements are met (see below) by the claim's requirements
///   (where a well-known label left undefined is the instance types' to set) and by
///   the launched node's labels.
///
/// Existing nodes (and in-flight claims)
/// - the node exists, is not being deleted and is not tainted
///   `karpenter.sh/disrupted`;
/// - allocatable − the requests of its bound pods that have not finished − those of
///   the pods the plan adds stays ≥ 0 for every resource;
/// - each added pod tolerates its `NoSchedule`/`NoExecute` taints (on a managed node
///   that is not initialized yet, not its startup taints nor the known ephemeral
///   ones, which will be removed) and its labels meet the pod's strict node
///   requirements.
///
/// Strict node requirements: a pod's `nodeSelector` and at least **one** of its
/// required node-affinity terms (its `matchExpressions`), as Kubernetes reads them.
/// The scheduler starts from the first term and relaxation drops earlier terms, so
/// any one term may be the one in force; preferred terms are preferences and never
/// required. A pod without required terms needs its `nodeSelector` only.
///
/// Whole plan
/// - no two pods on one node (a claim, or an existing node with its running pods)
///   bind conflicting host ports, nor a pod and a daemon on a claim's launch type;
/// - required pod anti-affinity on `kubernetes.io/hostname` (one claim or node) and
///   on `topology.kubernetes.io/zone` (the launch's zone, the node's zone label): no
///   pod the plan places shares the domain with a pod that either one's term selects
///   (running pods count, unless finished or terminating: upstream's
///   `IgnoredForTopology`). Required terms are never relaxed. A
///   `namespaceSelector` other than `{}` is read as selecting only the namespaces
///   the term lists, since the snapshot has no namespace labels;
/// - zonal `DoNotSchedule` topology spread keeps within `maxSkew` (see "Zonal
///   spread" below for the exact rule and when it applies);
/// - NodePool limits: for each limited resource a pool's new claims add, the
///   capacity of its existing nodes plus the launch types' capacity (and one node
///   per claim for `nodes`) stays within the limit;
/// - `totalPricePerHour` is the sum of the launch prices, within 1e-6.
///
/// Not checked: required pod affinity, anti-affinity or spread on other keys,
/// preferred terms and `ScheduleAnyway` constraints (relaxable), volume topology,
/// `minValues`, and whether a pod listed as unschedulable could have been placed.
///
/// # Zonal spread
///
/// Kubernetes admits a pod into domain `d` of a constraint when, at that moment,
/// `count(d) + 1 − min ≤ maxSkew`, the minimum taken over the domains eligible for
/// the pod. Counts only grow, so for the **last** selected pod placed into `d`:
/// `final(d) ≤ maxSkew + min_then ≤ maxSkew + min_final`. The plan does not say
/// which pod came last, so each zone takes the most lenient bound among the new pods
/// in it: `final(d) ≤ maxSkew + max over new pods q in d of (min over V(q) of
/// final)`.
///
/// That holds when every counted pod that arrived in `d` was constrained the same
/// way, so a constraint is checked only when:
/// - it is on `topology.kubernetes.io/zone`, `DoNotSchedule`, with a label
///   selector, no `matchLabelKeys`, and the default `nodeAffinityPolicy` (Honor)
///   and `nodeTaintsPolicy` (Ignore);
/// - every pending pod the plan places that the selector picks (in the pod's
///   namespace) carries the identical constraint and the identical `nodeSelector`
///   and required node affinity: they make one upstream `TopologyGroup` with one
///   node filter;
/// - those pods have at most one required node-affinity term: relaxation never
///   removes a `DoNotSchedule` constraint, but dropping a term would change the
///   zones a pod is eligible for.
///
/// Counts: the group's placed pods (a claim's launch zone, a node's zone label) and
/// the running pods (neither finished nor terminating) the selector picks on nodes
/// whose labels meet the group's node requirements. `V(q)` is a *subset* of the
/// zones upstream takes the minimum over: the zones where a usable NodePool whose
/// taints `q` tolerates and whose requirements are compatible with `q`'s has an
/// instance type that meets both, holds `q` alone, and has an available offering
/// there that both allow. A smaller set can only raise the minimum, so the check
/// never blames a placement upstream would make; `minDomains` (which can only
/// lower upstream's minimum to 0) is ignored for the same reason.
pub fn validate(snapshot: &Snapshot, plan: &ProvisioningPlan) -> Vec<Violation> {
    let checker = Checker::new(snapshot);
    let mut out = Vec::new();
    let placed = checker.check_accounting(plan, &mut out);
    for (index, claim) in plan.node_claims.iter().enumerate() {
        checker.check_claim(index, claim, &mut out);
    }
    checker.check_existing(plan, &mut out);
    checker.check_host_ports(plan, &placed, &mut out);
    checker.check_anti_affinity(&placed, &mut out);
    checker.check_spread(&placed, &mut out);
    checker.check_limits(plan, &mut out);
    let sum: f64 = plan
        .node_claims
        .iter()
        .filter_map(|c| c.launch.as_ref())
        .map(|l| l.price)
        .sum();
    if (sum - plan.total_price_per_hour).abs() > TOTAL_PRICE_TOLERANCE {
        out.push(Violation {
            rule: Rule::TotalPrice,
            subject: Subject::Plan,
            detail: format!(
                "totalPricePerHour is {} but the launches sum to {sum}",
                plan.total_price_per_hour
            ),
        });
    }
    out
}

// ---------------------------------------------------------------------------
// Reading the snapshot

/// `namespace/name`, the namespace defaulting to `default`.
fn pod_key(pod: &Pod) -> String {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    format!(
        "{namespace}/{}",
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

fn pod_namespace(pod: &Pod) -> &str {
    pod.metadata.namespace.as_deref().unwrap_or("default")
}

fn bound_node(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()?
        .node_name
        .as_deref()
        .filter(|n| !n.is_empty())
}

fn is_terminal(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    matches!(phase, Some("Succeeded" | "Failed"))
}

fn is_daemon_pod(pod: &Pod) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "DaemonSet")
}

/// No node yet, not finished, not being deleted, not a DaemonSet's.
fn is_pending(pod: &Pod) -> bool {
    bound_node(pod).is_none()
        && !is_terminal(pod)
        && pod.metadata.deletion_timestamp.is_none()
        && !is_daemon_pod(pod)
}

/// Upstream's `IgnoredForTopology`, negated: a pod that counts for topology.
fn counts_for_topology(pod: &Pod) -> bool {
    bound_node(pod).is_some() && !is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}

fn empty_spec() -> &'static PodSpec {
    static EMPTY: std::sync::OnceLock<PodSpec> = std::sync::OnceLock::new();
    EMPTY.get_or_init(PodSpec::default)
}

fn spec_of(pod: &Pod) -> &PodSpec {
    pod.spec.as_ref().unwrap_or_else(|| empty_spec())
}

/// The alternatives a pod's node must meet one of: its `nodeSelector` with each
/// required node-affinity term's `matchExpressions` (`matchFields` is not read, as
/// upstream), or the `nodeSelector` alone without required terms. `Err` when an
/// expression cannot be read.
fn strict_alternatives(spec: &PodSpec) -> Result<Vec<Requirements>, String> {
    let selector = Requirements::from_labels(spec.node_selector.iter().flatten());
    let terms = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|s| s.node_selector_terms.as_slice())
        .unwrap_or_default();
    if terms.is_empty() {
        return Ok(vec![selector]);
    }
    terms
        .iter()
        .map(|term| {
            let expressions = Requirements::from_node_selector_requirements(
                term.match_expressions.iter().flatten(),
            )
            .map_err(|e| e.to_string())?;
            let mut combined = selector.clone();
            combined.add_all(&expressions);
            Ok(combined)
        })
        .collect()
}

fn required_term_count(spec: &PodSpec) -> usize {
    spec.affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map_or(0, |s| s.node_selector_terms.len())
}

/// Whether a label selector selects `labels`: `None` selects nothing, `{}`
/// everything.
fn selects(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    let Some(selector) = selector else {
        return false;
    };
    let match_labels = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    match_labels
        && selector.match_expressions.iter().flatten().all(|e| {
            let value = labels.get(&e.key);
            let listed = |v: &String| e.values.iter().flatten().any(|x| x == v);
            match e.operator.as_str() {
                "In" => value.is_some_and(listed),
                "NotIn" => !value.is_some_and(listed),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

fn pod_labels(pod: &Pod) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    pod.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

/// Whether a pod (anti-)affinity term of a pod in `own_namespace` looks for pods in
/// `namespace`.
fn term_covers_namespace(term: &PodAffinityTerm, own_namespace: &str, namespace: &str) -> bool {
    let listed = term.namespaces.as_deref().unwrap_or_default();
    let everywhere = term.namespace_selector.as_ref().is_some_and(|s| {
        s.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
            && s.match_expressions.as_ref().is_none_or(Vec::is_empty)
    });
    if everywhere {
        return true;
    }
    if listed.is_empty() && term.namespace_selector.is_none() {
        return namespace == own_namespace;
    }
    listed.iter().any(|n| n == namespace)
}

fn required_anti_affinity(spec: &PodSpec) -> &[PodAffinityTerm] {
    spec.affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or_default()
}

/// Whether the taint keeps pods that do not tolerate it away.
fn is_hard(taint: &Taint) -> bool {
    taint.effect == TAINT_EFFECT_NO_SCHEDULE || taint.effect == TAINT_EFFECT_NO_EXECUTE
}

fn first_untolerated<'t>(taints: &'t [Taint], tolerations: &[Toleration]) -> Option<&'t Taint> {
    taints
        .iter()
        .filter(|t| is_hard(t))
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

fn describe_taint(taint: &Taint) -> String {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(value) => format!("{}={}:{}", taint.key, value, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}

/// `cpu=1500m, memory=2Gi, pods=1`.
fn describe(list: &ResourceList) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|(name, milli)| format!("{name}={}", resources::format_milli(name, milli)))
        .collect();
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join(", ")
    }
}

/// The resources `needed` exceeds `available` in, with both amounts.
fn shortfall(needed: &ResourceList, available: &ResourceList) -> String {
    let parts: Vec<String> = needed
        .exceeding(available)
        .map(|name| {
            format!(
                "{name} needs {} of {}",
                resources::format_milli(name, needed.get(name)),
                resources::format_milli(name, available.get(name))
            )
        })
        .collect();
    parts.join(", ")
}

/// Whether a NodePool may launch capacity: not static, not being deleted, `Ready`
/// absent or true (upstream's filter before scheduling).
fn pool_usable(pool: &NodePool) -> bool {
    !pool.spec.is_static()
        && pool.metadata.deletion_timestamp.is_none()
        && pool
            .condition(condition_types::READY)
            .is_none_or(|c| c.is_true())
}

/// A pool's requirements: its written requirements, its template labels, its own
/// label and its node class label.
fn pool_requirements(pool: &NodePool) -> Requirements {
    let mut requirements = Requirements::new();
    for written in pool.spec.template.spec.requirements() {
        if let Some(r) = written
            .to_selector_requirement()
            .ok()
            .and_then(|r| Requirement::try_from(&r).ok())
        {
            requirements.add(r);
        }
    }
    requirements.add_all(&Requirements::from_labels(pool_labels(pool)));
    requirements
}

/// The labels every node of the pool carries: template labels, the pool's label and
/// the node class label.
fn pool_labels(pool: &NodePool) -> BTreeMap<String, String> {
    let mut labels = pool
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(
        NODE_POOL_LABEL_KEY.to_string(),
        pool.name().unwrap_or_default().to_string(),
    );
    if let Some(class) = &pool.spec.template.spec.node_class_ref {
        labels.insert(
            format!("{}/{}", class.group, class.kind.to_lowercase()),
            class.name.clone(),
        );
    }
    labels
}

/// Reads a claim's written requirements back, with Kubernetes' integer rules (a
/// pod's `Gt` may carry a negative operand into a claim).
fn read_requirements(written: &[RequirementOutput]) -> Result<Requirements, String> {
    let expressions: Vec<NodeSelectorRequirement> = written
        .iter()
        .map(|r| NodeSelectorRequirement {
            key: r.key.clone(),
            operator: r.operator.clone(),
            values: (!r.values.is_empty()).then(|| r.values.clone()),
        })
        .collect();
    Requirements::from_node_selector_requirements(&expressions).map_err(|e| e.to_string())
}

/// The cheapest available offering price of a type that the requirements allow.
fn cheapest_price(it: &InstanceType, requirements: &Requirements) -> Option<f64> {
    it.offerings
        .iter()
        .filter(|o| o.available && o.is_compatible(requirements))
        .map(|o| o.price)
        .min_by(f64::total_cmp)
}

/// A host port a pod binds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct HostPort {
    protocol: String,
    ip: String,
    port: i32,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.port, self.protocol)
    }
}

fn host_ports(spec: &PodSpec) -> Vec<HostPort> {
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let mut ports: Vec<HostPort> = containers
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            Some(HostPort {
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_string()),
                ip: p.host_ip.clone().unwrap_or_default(),
                port: p.host_port.filter(|&port| port > 0)?,
            })
        })
        .collect();
    ports.sort();
    ports.dedup();
    ports
}

fn ports_conflict(a: &HostPort, b: &HostPort) -> bool {
    let any = |ip: &str| ip.is_empty() || ip == "0.0.0.0";
    a.port == b.port && a.protocol == b.protocol && (any(&a.ip) || any(&b.ip) || a.ip == b.ip)
}

/// A DaemonSet's pod, as it counts on new nodes.
struct Daemon {
    name: String,
    spec: PodSpec,
    requests: ResourceList,
    host_ports: Vec<HostPort>,
}

/// The DaemonSets' pods: the newest live pod's spec (first listed among equals),
/// else the template's; the template's required node affinity always.
fn daemons(snapshot: &Snapshot) -> Vec<Daemon> {
    snapshot
        .daemon_sets
        .iter()
        .filter_map(|ds| {
            let template = ds.spec.template.spec.clone().unwrap_or_default();
            let mut live: Option<&Pod> = None;
            for pod in &snapshot.pods {
                let owned = pod.metadata.namespace == ds.metadata.namespace
                    && pod.metadata.owner_references.iter().flatten().any(|o| {
                        o.kind == "DaemonSet" && Some(&o.name) == ds.metadata.name.as_ref()
                    });
                let newer = live.is_none_or(|l| {
                    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
                        > l.metadata.creation_timestamp.as_ref().map(|t| t.0)
                });
                if owned && newer {
                    live = Some(pod);
                }
            }
            let mut spec = live
                .and_then(|p| p.spec.clone())
                .unwrap_or_else(|| template.clone());
            let required = template
                .affinity
                .as_ref()
                .and_then(|a| a.node_affinity.as_ref())
                .and_then(|n| {
                    n.required_during_scheduling_ignored_during_execution
                        .clone()
                });
            if let Some(required) = required {
                let affinity = spec.affinity.get_or_insert_with(Default::default);
                affinity
                    .node_affinity
                    .get_or_insert_with(Default::default)
                    .required_during_scheduling_ignored_during_execution = Some(required);
            }
            let requests = resources::pod_requests(&spec).ok()?;
            Some(Daemon {
                name: format!(
                    "{}/{}",
                    ds.metadata.namespace.as_deref().unwrap_or("default"),
                    ds.metadata.name.as_deref().unwrap_or_default()
                ),
                host_ports: host_ports(&spec),
                spec,
                requests,
            })
        })
        .collect()
}

impl Daemon {
    /// Whether it runs on a new node of type `it` from a pool with these
    /// requirements (`registered`/`initialized` included) and taints.
    fn runs_on(
        &self,
        template: &Requirements,
        taints: &[Taint],
        it: &InstanceType,
        well_known: &WellKnownLabels,
    ) -> bool {
        let tolerations = self.spec.tolerations.as_deref().unwrap_or_default();
        if first_untolerated(taints, tolerations).is_some() {
            return false;
        }
        let Ok(alternatives) = strict_alternatives(&self.spec) else {
            return false;
        };
        alternatives
            .iter()
            .any(|r| template.is_compatible(r, well_known) && it.requirements.is_intersecting(r))
    }
}

// ---------------------------------------------------------------------------
// The checks

/// The daemons (indices) that land on a pool's instance type, and their requests.
type Landing = (Vec<usize>, ResourceList);

/// Where a placed pod went.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Host {
    Claim(usize),
    Node(String),
}

/// A pending pod the plan places, at its first placement.
struct Placed<'s> {
    pod: &'s Pod,
    key: String,
    host: Host,
    zone: Option<String>,
}

struct Checker<'s> {
    snapshot: &'s Snapshot,
    well_known: &'s WellKnownLabels,
    /// Pending pods by key (the first of each key).
    pending: BTreeMap<String, &'s Pod>,
    /// How many pending pods have each key.
    expected: BTreeMap<String, usize>,
    /// Cluster nodes by name (the first of each name).
    nodes: BTreeMap<&'s str, &'s ClusterNode>,
    /// Pods bound to each node, finished ones included.
    bound: BTreeMap<&'s str, Vec<&'s Pod>>,
    daemons: Vec<Daemon>,
    /// Each pool's catalog by type name.
    by_name: BTreeMap<&'s str, BTreeMap<&'s str, &'s InstanceType>>,
    /// The daemons (indices) running on each pool's type, and their requests,
    /// worked out once.
    overheads: RefCell<BTreeMap<(String, String), Rc<Landing>>>,
}

impl<'s> Checker<'s> {
    fn new(snapshot: &'s Snapshot) -> Checker<'s> {
        let mut pending = BTreeMap::new();
        let mut expected = BTreeMap::new();
        let mut bound: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
        for pod in &snapshot.pods {
            if is_pending(pod) {
                let key = pod_key(pod);
                *expected.entry(key.clone()).or_insert(0) += 1;
                pending.entry(key).or_insert(pod);
            } else if let Some(node) = bound_node(pod) {
                bound.entry(node).or_default().push(pod);
            }
        }
        let mut nodes = BTreeMap::new();
        for node in &snapshot.nodes {
            nodes.entry(node.name()).or_insert(node);
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
            nodes,
            bound,
            daemons: daemons(snapshot),
            by_name,
            overheads: RefCell::new(BTreeMap::new()),
        }
    }

    fn pool(&self, name: &str) -> Option<&'s NodePool> {
        self.snapshot
            .node_pools
            .iter()
            .find(|p| p.name() == Some(name))
    }

    fn catalog(&self, pool: &str) -> &'s [InstanceType] {
        self.snapshot
            .instance_types
            .get(pool)
            .map_or(&[], |t| &t[..])
    }

    /// A type of a pool's catalog, by name.
    fn instance_type(&self, pool: &str, name: &str) -> Option<&'s InstanceType> {
        self.by_name.get(pool)?.get(name).copied()
    }

    /// The daemons (indices into `daemons`) that run on type `it` of `pool`, with
    /// their summed requests.
    fn daemons_on(&self, pool: &NodePool, it: &InstanceType) -> Rc<Landing> {
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

    /// Every pending pod exactly once, nothing else; returns the placed pods.
    fn check_accounting(
        &self,
        plan: &ProvisioningPlan,
        out: &mut Vec<Violation>,
    ) -> Vec<Placed<'s>> {
        let mut seen: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut placed = Vec::new();
        let mut first: BTreeSet<&str> = BTreeSet::new();
        for (index, claim) in plan.node_claims.iter().enumerate() {
            for key in &claim.pods {
                seen.entry(key.as_str())
                    .or_default()
                    .push(format!("claim #{index}"));
                if let Some(pod) = self.pending.get(key.as_str())
                    && first.insert(key.as_str())
                {
                    let zone = claim.launch.as_ref().map(|l| l.zone.clone());
                    placed.push(Placed {
                        pod,
                        key: key.clone(),
                        host: Host::Claim(index),
                        zone,
                    });
                }
            }
        }
        for placement in &plan.existing_nodes {
            let zone = self
                .nodes
                .get(placement.name.as_str())
                .and_then(|n| n.labels())
                .and_then(|l| l.get(LABEL_TOPOLOGY_ZONE))
                .cloned();
            for key in &placement.pods {
                seen.entry(key.as_str())
                    .or_default()
                    .push(format!("node {:?}", placement.name));
                if let Some(pod) = self.pending.get(key.as_str())
                    && first.insert(key.as_str())
                {
                    placed.push(Placed {
                        pod,
                        key: key.clone(),
                        host: Host::Node(placement.name.clone()),
                        zone: zone.clone(),
                    });
                }
            }
        }
        for entry in &plan.unschedulable {
            seen.entry(entry.pod.as_str())
                .or_default()
                .push("unschedulable".to_string());
            if entry.reason.trim().is_empty() {
                out.push(Violation {
                    rule: Rule::MissingReason,
                    subject: Subject::Pod(entry.pod.clone()),
                    detail: "the reason is empty".to_string(),
                });
            }
        }
        for (key, &count) in &self.expected {
            let places = seen.get(key.as_str()).map_or(&[][..], |v| &v[..]);
            if places.is_empty() {
                out.push(Violation {
                    rule: Rule::PodMissing,
                    subject: Subject::Pod(key.clone()),
                    detail: "in no claim, on no node and not unschedulable".to_string(),
                });
            } else if places.len() > count {
                out.push(Violation {
                    rule: Rule::PodDuplicated,
                    subject: Subject::Pod(key.clone()),
                    detail: format!("{} times: {}", places.len(), places.join(", ")),
                });
            }
        }
        for (key, places) in &seen {
            if !self.expected.contains_key(*key) {
                out.push(Violation {
                    rule: Rule::UnknownPod,
                    subject: Subject::Pod((*key).to_string()),
                    detail: format!(
                        "listed in {} but no pending pod has this name",
                        places.join(", ")
                    ),
                });
            }
        }
        placed
    }

    fn check_claim(&self, index: usize, claim: &PlannedClaim, out: &mut Vec<Violation>) {
        let subject = Subject::Claim {
            index,
            node_pool: claim.node_pool.clone(),
        };
        let mut flag = |rule: Rule, detail: String| {
            out.push(Violation {
                rule,
                subject: subject.clone(),
                detail,
            })
        };
        let Some(pool) = self.pool(&claim.node_pool) else {
            flag(Rule::NodePool, "no NodePool has this name".to_string());
            return;
        };
        if !pool_usable(pool) {
            flag(
                Rule::NodePool,
                "the NodePool is static, being deleted or not ready".to_string(),
            );
        }
        let catalog = self.catalog(&claim.node_pool);
        let requirements = match read_requirements(&claim.requirements) {
            Ok(r) => r,
            Err(e) => {
                flag(Rule::UnreadableRequirements, e);
                return;
            }
        };

        // The list itself.
        if claim.instance_types.is_empty() {
            flag(
                Rule::InstanceTypeList,
                "no instance type is listed".to_string(),
            );
        }
        if claim.instance_types.len() > MAX_INSTANCE_TYPES {
            flag(
                Rule::InstanceTypeList,
                format!(
                    "{} instance types listed, at most {MAX_INSTANCE_TYPES} allowed",
                    claim.instance_types.len()
                ),
            );
        }
        let mut names = BTreeSet::new();
        let mut listed: Vec<&InstanceType> = Vec::new();
        for name in &claim.instance_types {
            if !names.insert(name.as_str()) {
                flag(Rule::InstanceTypeList, format!("{name} is listed twice"));
                continue;
            }
            match self.instance_type(&claim.node_pool, name) {
                Some(it) => listed.push(it),
                None => flag(
                    Rule::InstanceTypeList,
                    format!("{name} is not in the nodepool's catalog"),
                ),
            }
        }

        // Prices and order.
        let prices: Vec<Option<f64>> = listed
            .iter()
            .map(|it| cheapest_price(it, &requirements))
            .collect();
        for (it, price) in listed.iter().zip(&prices) {
            if !it.requirements.is_intersecting(&requirements) {
                let conflict = it
                    .requirements
                    .intersects(&requirements)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                flag(
                    Rule::InstanceTypeIncompatible,
                    format!(
                        "{} does not meet the claim's requirements ({conflict})",
                        it.name
                    ),
                );
            }
            if price.is_none() {
                flag(
                    Rule::InstanceTypeIncompatible,
                    format!(
                        "{} has no available offering the claim's requirements allow",
                        it.name
                    ),
                );
            }
        }
        let order_key = |i: usize| (prices[i].unwrap_or(f64::INFINITY), listed[i].name.as_str());
        for i in 1..listed.len() {
            let (a, b) = (order_key(i - 1), order_key(i));
            if a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)).is_gt() {
                flag(
                    Rule::InstanceTypeOrder,
                    format!(
                        "{} (cheapest {}) is listed before {} (cheapest {})",
                        a.1, a.0, b.1, b.0
                    ),
                );
                break;
            }
        }

        // The pods.
        let mut requests = ResourceList::new();
        let mut pods: Vec<&Pod> = Vec::new();
        let mut pod_ports: Vec<HostPort> = Vec::new();
        for key in &claim.pods {
            let Some(pod) = self.pending.get(key.as_str()) else {
                continue;
            };
            match resources::pod_requests(spec_of(pod)) {
                Ok(r) => requests += &r,
                Err(e) => out.push(Violation {
                    rule: Rule::UnreadablePod,
                    subject: Subject::Pod(key.clone()),
                    detail: e.to_string(),
                }),
            }
            pod_ports.extend(host_ports(spec_of(pod)));
            pods.push(pod);
        }
        let mut flag = |rule: Rule, detail: String| {
            out.push(Violation {
                rule,
                subject: subject.clone(),
                detail,
            })
        };

        // Every listed type holds the pods with its daemons.
        for it in &listed {
            let overhead = &self.daemons_on(pool, it).1;
            let total = &requests + overhead;
            let allocatable = it.allocatable();
            if !total.fits(&allocatable) {
                let is_launch = claim
                    .launch
                    .as_ref()
                    .is_some_and(|l| l.instance_type == it.name);
                let rule = if is_launch {
                    Rule::OverCommitted
                } else {
                    Rule::InstanceTypeTooSmall
                };
                flag(
                    rule,
                    format!(
                        "{} cannot hold the pods ({}) with its daemons ({}): {}",
                        it.name,
                        describe(&requests),
                        describe(overhead),
                        shortfall(&total, &allocatable)
                    ),
                );
            }
        }

        // Completeness, when nothing but the requirements and the requests narrows
        // the list. The written requirements replace what was required of the
        // instance type with the list itself, so a claim whose pool or pods constrain
        // the instance type is not checked.
        let unlimited = pool
            .spec
            .limits
            .as_ref()
            .is_none_or(|l| l.as_map().is_empty());
        let type_constrained = pool_requirements(pool).contains_key(LABEL_INSTANCE_TYPE_STABLE)
            || pods.iter().any(|p| mentions_instance_type(spec_of(p)));
        if unlimited
            && !type_constrained
            && pod_ports.is_empty()
            && claim.instance_types.len() < MAX_INSTANCE_TYPES
            && !claim.instance_types.is_empty()
        {
            let mut loose = requirements.clone();
            loose.remove(LABEL_INSTANCE_TYPE_STABLE);
            for it in catalog
                .iter()
                .filter(|it| !names.contains(it.name.as_str()))
            {
                if !it.requirements.is_intersecting(&loose) || cheapest_price(it, &loose).is_none()
                {
                    continue;
                }
                let overhead = &self.daemons_on(pool, it).1;
                if (&requests + overhead).fits(&it.allocatable()) {
                    flag(
                        Rule::InstanceTypesIncomplete,
                        format!(
                            "{} meets the requirements, has an allowed offering and holds the pods ({}) with its daemons ({})",
                            it.name,
                            describe(&requests),
                            describe(overhead)
                        ),
                    );
                }
            }
        }

        // The launch.
        let Some(launch) = &claim.launch else {
            flag(Rule::NoLaunch, "the claim has no launch".to_string());
            return;
        };
        let cheapest = listed
            .iter()
            .flat_map(|it| {
                it.offerings
                    .iter()
                    .filter(|o| o.available && o.is_compatible(&requirements))
                    .map(move |o| (it, o))
            })
            .min_by(|a, b| a.1.price.total_cmp(&b.1.price));
        if let Some((it, o)) = cheapest
            && o.price < launch.price - PRICE_TOLERANCE
        {
            flag(
                Rule::LaunchNotCheapest,
                format!(
                    "launches {} {} {} at {} but {} {} {} costs {}",
                    launch.instance_type,
                    launch.zone,
                    launch.capacity_type,
                    launch.price,
                    it.name,
                    o.zone,
                    o.capacity_type,
                    o.price
                ),
            );
        }
        if !names.contains(launch.instance_type.as_str()) {
            flag(
                Rule::InstanceTypeList,
                format!("the launch type {} is not listed", launch.instance_type),
            );
        }
        let Some(it) = self.instance_type(&claim.node_pool, &launch.instance_type) else {
            flag(
                Rule::LaunchOffering,
                format!("{} is not in the nodepool's catalog", launch.instance_type),
            );
            return;
        };
        let offering = it
            .offerings
            .iter()
            .find(|o| o.zone == launch.zone && o.capacity_type == launch.capacity_type);
        match offering {
            None => flag(
                Rule::LaunchOffering,
                format!(
                    "{} has no offering in {} as {}",
                    it.name, launch.zone, launch.capacity_type
                ),
            ),
            Some(o) => {
                if !o.available {
                    flag(
                        Rule::LaunchOffering,
                        format!(
                            "{} {} {} is not available",
                            it.name, o.zone, o.capacity_type
                        ),
                    );
                }
                if !o.is_compatible(&requirements) {
                    flag(
                        Rule::LaunchOffering,
                        format!(
                            "{} {} {} is not allowed by the claim's requirements",
                            it.name, o.zone, o.capacity_type
                        ),
                    );
                }
                if (o.price - launch.price).abs() > PRICE_TOLERANCE {
                    flag(
                        Rule::LaunchPrice,
                        format!(
                            "{} {} {} launches at {} but the catalog says {}",
                            it.name, o.zone, o.capacity_type, launch.price, o.price
                        ),
                    );
                }
            }
        }

        // The launched node.
        let labels = launched_labels(pool, it, launch, &requirements);
        let node = Requirements::from_labels(&labels);
        if let Err(e) = node.compatible(&requirements, &WellKnownLabels::empty()) {
            flag(
                Rule::LaunchedNodeRequirements,
                format!(
                    "the launched {} does not meet the claim's requirements: {e}",
                    it.name
                ),
            );
        }
        if let Err(e) = node.compatible(&pool_requirements(pool), &WellKnownLabels::empty()) {
            flag(
                Rule::LaunchedNodeRequirements,
                format!(
                    "the launched {} does not meet the nodepool's requirements: {e}",
                    it.name
                ),
            );
        }
        let running = self.daemons_on(pool, it);
        for daemon in running.0.iter().map(|&d| &self.daemons[d]) {
            for port in &daemon.host_ports {
                if let Some(p) = pod_ports.iter().find(|p| ports_conflict(p, port)) {
                    flag(
                        Rule::HostPort,
                        format!(
                            "a pod binds host port {p}, which daemon {} binds on {}",
                            daemon.name, it.name
                        ),
                    );
                }
            }
        }

        // Each pod's constraints.
        let taints = pool.spec.template.spec.taints();
        for pod in pods {
            let key = pod_key(pod);
            let spec = spec_of(pod);
            let tolerations = spec.tolerations.as_deref().unwrap_or_default();
            if let Some(taint) = first_untolerated(taints, tolerations) {
                out.push(Violation {
                    rule: Rule::Taint,
                    subject: Subject::Pod(key.clone()),
                    detail: format!(
                        "on claim #{index}: does not tolerate the nodepool's taint {}",
                        describe_taint(taint)
                    ),
                });
            }
            let alternatives = match strict_alternatives(spec) {
                Ok(a) => a,
                Err(e) => {
                    out.push(Violation {
                        rule: Rule::UnreadablePod,
                        subject: Subject::Pod(key),
                        detail: e,
                    });
                    continue;
                }
            };
            let met = alternatives.iter().any(|r| {
                requirements.is_compatible(r, self.well_known)
                    && node.is_compatible(r, &WellKnownLabels::empty())
            });
            if !met {
                let why = alternatives
                    .first()
                    .and_then(|r| {
                        requirements
                            .compatible(r, self.well_known)
                            .and_then(|()| node.compatible(r, &WellKnownLabels::empty()))
                            .err()
                    })
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                out.push(Violation {
                    rule: Rule::NodeRequirements,
                    subject: Subject::Pod(key),
                    detail: format!("on claim #{index} ({} in {} as {}): no node selector alternative is met ({why})", it.name, launch.zone, launch.capacity_type),
                });
            }
        }
    }

    fn check_existing(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let mut by_node: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for placement in &plan.existing_nodes {
            by_node
                .entry(placement.name.as_str())
                .or_default()
                .extend(placement.pods.iter().map(String::as_str));
        }
        for (name, keys) in by_node {
            let subject = Subject::Node(name.to_string());
            let Some(node) = self.nodes.get(name) else {
                out.push(Violation {
                    rule: Rule::UnknownNode,
                    subject,
                    detail: format!("{} pod(s) placed on it", keys.len()),
                });
                continue;
            };
            let taints = node.taints();
            if node.is_deleting() || taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY) {
                out.push(Violation {
                    rule: Rule::NotADestination,
                    subject: subject.clone(),
                    detail: "it is being deleted or disrupted".to_string(),
                });
            }
            let mut used = ResourceList::new();
            for pod in self
                .bound
                .get(name)
                .into_iter()
                .flatten()
                .filter(|p| !is_terminal(p))
            {
                if let Ok(r) = resources::pod_requests(spec_of(pod)) {
                    used += &r;
                }
            }
            let mut added = ResourceList::new();
            let mut labels = node.labels().cloned().unwrap_or_default();
            labels
                .entry(LABEL_HOSTNAME.to_string())
                .or_insert_with(|| name.to_string());
            let node_requirements = Requirements::from_labels(&labels);
            let taints: Vec<Taint> = if node.is_managed() && !node.is_initialized() {
                let startup = node
                    .node_claim
                    .as_ref()
                    .map(|c| c.spec.startup_taints().to_vec())
                    .unwrap_or_default();
                uninitialized_node_taints(&taints, &startup)
                    .cloned()
                    .collect()
            } else {
                taints
            };
            for key in keys {
                let Some(pod) = self.pending.get(key) else {
                    continue;
                };
                let spec = spec_of(pod);
                match resources::pod_requests(spec) {
                    Ok(r) => added += &r,
                    Err(e) => out.push(Violation {
                        rule: Rule::UnreadablePod,
                        subject: Subject::Pod(key.to_string()),
                        detail: e.to_string(),
                    }),
                }
                let tolerations = spec.tolerations.as_deref().unwrap_or_default();
                if let Some(taint) = first_untolerated(&taints, tolerations) {
                    out.push(Violation {
                        rule: Rule::Taint,
                        subject: Subject::Pod(key.to_string()),
                        detail: format!(
                            "on node {name:?}: does not tolerate {}",
                            describe_taint(taint)
                        ),
                    });
                }
                match strict_alternatives(spec) {
                    Ok(alternatives) => {
                        if !alternatives
                            .iter()
                            .any(|r| node_requirements.is_compatible(r, &WellKnownLabels::empty()))
                        {
                            let why = alternatives
                                .first()
                                .and_then(|r| {
                                    node_requirements
                                        .compatible(r, &WellKnownLabels::empty())
                                        .err()
                                })
                                .map(|e| e.to_string())
                                .unwrap_or_default();
                            out.push(Violation {
                                rule: Rule::NodeRequirements,
                                subject: Subject::Pod(key.to_string()),
                                detail: format!("on node {name:?}: its labels meet no node selector alternative ({why})"),
                            });
                        }
                    }
                    Err(e) => out.push(Violation {
                        rule: Rule::UnreadablePod,
                        subject: Subject::Pod(key.to_string()),
                        detail: e,
                    }),
                }
            }
            let allocatable = node.allocatable();
            let left = allocatable.saturating_sub(&used).saturating_sub(&added);
            let negative: Vec<String> = left
                .iter()
                .filter(|&(_, milli)| milli < 0)
                .map(|(resource, _)| {
                    format!(
                        "{resource}: allocatable {} − running {} − added {}",
                        resources::format_milli(resource, allocatable.get(resource)),
                        resources::format_milli(resource, used.get(resource)),
                        resources::format_milli(resource, added.get(resource))
                    )
                })
                .collect();
            if !negative.is_empty() {
                out.push(Violation {
                    rule: Rule::OverCommitted,
                    subject,
                    detail: negative.join("; "),
                });
            }
        }
    }

    /// Host ports of the pods on each claim, and on each existing node with the
    /// pods running there.
    fn check_host_ports(
        &self,
        plan: &ProvisioningPlan,
        placed: &[Placed<'s>],
        out: &mut Vec<Violation>,
    ) {
        let mut by_host: BTreeMap<&Host, Vec<&Placed<'s>>> = BTreeMap::new();
        for p in placed {
            by_host.entry(&p.host).or_default().push(p);
        }
        for (host, pods) in by_host {
            let mut used: Vec<(String, HostPort)> = Vec::new();
            if let Host::Node(name) = host {
                for pod in self
                    .bound
                    .get(name.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|p| !is_terminal(p))
                {
                    used.extend(
                        host_ports(spec_of(pod))
                            .into_iter()
                            .map(|port| (pod_key(pod), port)),
                    );
                }
            }
            for p in pods {
                for port in host_ports(spec_of(p.pod)) {
                    if let Some((other, _)) = used.iter().find(|(_, u)| ports_conflict(u, &port)) {
                        let place = match host {
                            Host::Claim(i) => {
                                format!("claim #{i} ({})", plan.node_claims[*i].node_pool)
                            }
                            Host::Node(name) => format!("node {name:?}"),
                        };
                        out.push(Violation {
                            rule: Rule::HostPort,
                            subject: Subject::Pod(p.key.clone()),
                            detail: format!("binds host port {port} on {place}, as {other} does"),
                        });
                    }
                    used.push((p.key.clone(), port));
                }
            }
        }
    }

    /// Required anti-affinity on hostname and zone.
    fn check_anti_affinity(&self, placed: &[Placed<'s>], out: &mut Vec<Violation>) {
        // Every pod in a domain: (pod, key, is new).
        struct Member<'p> {
            pod: &'p Pod,
            key: String,
            new: bool,
        }
        for topology_key in [LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE] {
            let mut domains: BTreeMap<String, Vec<Member<'s>>> = BTreeMap::new();
            for p in placed {
                let domain = match (topology_key, &p.host) {
                    (LABEL_HOSTNAME, Host::Claim(i)) => Some(format!("claim #{i}")),
                    (LABEL_HOSTNAME, Host::Node(name)) => Some(format!("node {name:?}")),
                    _ => p.zone.as_ref().map(|z| format!("zone {z:?}")),
                };
                if let Some(domain) = domain {
                    domains.entry(domain).or_default().push(Member {
                        pod: p.pod,
                        key: p.key.clone(),
                        new: true,
                    });
                }
            }
            for (name, pods) in &self.bound {
                let domain = match topology_key {
                    LABEL_HOSTNAME => Some(format!("node {name:?}")),
                    _ => self
                        .nodes
                        .get(name)
                        .and_then(|n| n.labels())
                        .and_then(|l| l.get(LABEL_TOPOLOGY_ZONE))
                        .map(|z| format!("zone {z:?}")),
                };
                let Some(domain) = domain else { continue };
                for pod in pods.iter().filter(|p| counts_for_topology(p)) {
                    domains.entry(domain.clone()).or_default().push(Member {
                        pod,
                        key: pod_key(pod),
                        new: false,
                    });
                }
            }
            for (domain, members) in &domains {
                for a in members {
                    let terms = required_anti_affinity(spec_of(a.pod));
                    for term in terms
                        .iter()
                        .filter(|t| normalize_label_key(&t.topology_key) == topology_key)
                    {
                        for b in members {
                            if std::ptr::eq(a.pod, b.pod) || !(a.new || b.new) {
                                continue;
                            }
                            if term_covers_namespace(
                                term,
                                pod_namespace(a.pod),
                                pod_namespace(b.pod),
                            ) && selects(term.label_selector.as_ref(), pod_labels(b.pod))
                            {
                                let subject = if a.new { a.key.clone() } else { b.key.clone() };
                                out.push(Violation {
                                    rule: Rule::AntiAffinity,
                                    subject: Subject::Pod(subject),
                                    detail: format!("{} and {} share {domain}, but {}'s required anti-affinity on {topology_key} selects {}", a.key, b.key, a.key, b.key),
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    /// Zonal `DoNotSchedule` topology spread: see [`validate`], "Zonal spread".
    fn check_spread(&self, placed: &[Placed<'s>], out: &mut Vec<Violation>) {
        type GroupKey = (String, String, String);
        let mut groups: BTreeMap<GroupKey, (TopologySpreadConstraint, Vec<usize>)> =
            BTreeMap::new();
        for (i, p) in placed.iter().enumerate() {
            let spec = spec_of(p.pod);
            for c in spec.topology_spread_constraints.iter().flatten() {
                let checkable = normalize_label_key(&c.topology_key) == LABEL_TOPOLOGY_ZONE
                    && c.when_unsatisfiable == "DoNotSchedule"
                    && c.label_selector.is_some()
                    && c.match_label_keys.as_ref().is_none_or(Vec::is_empty)
                    && c.node_affinity_policy
                        .as_deref()
                        .is_none_or(|p| p == "Honor")
                    && c.node_taints_policy
                        .as_deref()
                        .is_none_or(|p| p == "Ignore");
                if !checkable {
                    continue;
                }
                let key = (
                    pod_namespace(p.pod).to_string(),
                    constraint_identity(c),
                    node_identity(spec),
                );
                groups
                    .entry(key)
                    .or_insert_with(|| (c.clone(), Vec::new()))
                    .1
                    .push(i);
            }
        }
        for ((namespace, _, _), (constraint, members)) in &groups {
            let selector = constraint.label_selector.as_ref();
            let member_set: BTreeSet<usize> = members.iter().copied().collect();
            let outsider = placed.iter().enumerate().find(|(i, p)| {
                pod_namespace(p.pod) == namespace
                    && selects(selector, pod_labels(p.pod))
                    && !member_set.contains(i)
            });
            let first = spec_of(placed[members[0]].pod);
            if outsider.is_some() || required_term_count(first) > 1 {
                continue;
            }
            let Ok(filter) = strict_alternatives(first) else {
                continue;
            };
            let mut counts: BTreeMap<String, i64> = BTreeMap::new();
            for (name, pods) in &self.bound {
                let Some(labels) = self.nodes.get(name).and_then(|n| n.labels()) else {
                    continue;
                };
                let Some(zone) = labels.get(LABEL_TOPOLOGY_ZONE) else {
                    continue;
                };
                let node_requirements = Requirements::from_labels(labels);
                if !filter
                    .iter()
                    .any(|r| node_requirements.is_compatible(r, &WellKnownLabels::empty()))
                {
                    continue;
                }
                let n = pods
                    .iter()
                    .filter(|p| {
                        counts_for_topology(p)
                            && pod_namespace(p) == namespace
                            && selects(selector, pod_labels(p))
                    })
                    .count();
                *counts.entry(zone.clone()).or_insert(0) += i64::try_from(n).unwrap_or(i64::MAX);
            }
            for &m in members {
                if let Some(zone) = &placed[m].zone
                    && selects(selector, pod_labels(placed[m].pod))
                {
                    *counts.entry(zone.clone()).or_insert(0) += 1;
                }
            }
            // For each zone with new pods, the most lenient bound among them.
            let mut bounds: BTreeMap<&str, (i64, &str)> = BTreeMap::new();
            for &m in members {
                let q = &placed[m];
                let Some(zone) = q.zone.as_deref() else {
                    continue;
                };
                if !selects(selector, pod_labels(q.pod)) {
                    continue;
                }
                let eligible = self.eligible_zones(q.pod, &filter);
                let Some(min) = eligible
                    .iter()
                    .map(|z| counts.get(z).copied().unwrap_or(0))
                    .min()
                else {
                    continue;
                };
                let entry = bounds.entry(zone).or_insert((min, q.key.as_str()));
                if min > entry.0 {
                    *entry = (min, q.key.as_str());
                }
            }
            for (zone, (min, pod)) in bounds {
                let count = counts.get(zone).copied().unwrap_or(0);
                if count > i64::from(constraint.max_skew) + min {
                    let eligible = self.eligible_zones(
                        placed
                            .iter()
                            .find(|p| p.key == pod)
                            .map_or(placed[members[0]].pod, |p| p.pod),
                        &filter,
                    );
                    let all: Vec<String> = eligible
                        .iter()
                        .map(|z| format!("{z}={}", counts.get(z).copied().unwrap_or(0)))
                        .collect();
                    out.push(Violation {
                        rule: Rule::TopologySpread,
                        subject: Subject::Pod(pod.to_string()),
                        detail: format!(
                            "zone spread (maxSkew {}, selector {}): {count} selected pods in {zone} but the eligible zones hold [{}], minimum {min}",
                            constraint.max_skew,
                            serde_json::to_string(&constraint.label_selector).unwrap_or_default(),
                            all.join(", ")
                        ),
                    });
                }
            }
        }
    }

    /// Zones a pod could surely go to (a subset of upstream's eligible domains):
    /// `V(q)` of [`validate`]'s "Zonal spread".
    fn eligible_zones(&self, pod: &Pod, alternatives: &[Requirements]) -> BTreeSet<String> {
        let spec = spec_of(pod);
        let tolerations = spec.tolerations.as_deref().unwrap_or_default();
        let requests = resources::pod_requests(spec).unwrap_or_default();
        let mut zones = BTreeSet::new();
        let Some(strict) = alternatives.first() else {
            return zones;
        };
        for pool in self.snapshot.node_pools.iter().filter(|p| pool_usable(p)) {
            if tolerates_all(pool.spec.template.spec.taints(), tolerations).is_err() {
                continue;
            }
            let mut combined = pool_requirements(pool);
            if !combined.is_compatible(strict, self.well_known) {
                continue;
            }
            combined.add_all(strict);
            for it in self.catalog(pool.name().unwrap_or_default()) {
                if !it.requirements.is_intersecting(&combined) || !requests.fits(&it.allocatable())
                {
                    continue;
                }
                for o in it
                    .offerings
                    .iter()
                    .filter(|o| o.available && o.is_compatible(&combined))
                {
                    zones.insert(o.zone.clone());
                }
            }
        }
        zones
    }

    /// NodePool limits: existing capacity plus the launches stays within them.
    fn check_limits(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let mut planned: BTreeMap<&str, (usize, ResourceList)> = BTreeMap::new();
        for claim in &plan.node_claims {
            let Some(launch) = &claim.launch else {
                continue;
            };
            let Some(it) = self.instance_type(&claim.node_pool, &launch.instance_type) else {
                continue;
            };
            let entry = planned.entry(claim.node_pool.as_str()).or_default();
            entry.0 += 1;
            entry.1 += &it.capacity;
            let nodes = entry.1.get(NODES_RESOURCE);
            entry.1.set(NODES_RESOURCE, nodes.saturating_add(1000));
        }
        for (name, (claims, added)) in planned {
            let Some(pool) = self.pool(name) else {
                continue;
            };
            let Some(limits) = pool.spec.limits.as_ref() else {
                continue;
            };
            let Ok(limit) = ResourceList::from_quantities(limits.as_map()) else {
                continue;
            };
            let mut existing = ResourceList::new();
            for node in self
                .snapshot
                .nodes
                .iter()
                .filter(|n| n.node_pool() == Some(name))
            {
                existing += &node.capacity();
            }
            for resource in limits.as_map().keys() {
                let (have, add, max) = (
                    existing.get(resource),
                    added.get(resource),
                    limit.get(resource),
                );
                if add > 0 && have.saturating_add(add) > max {
                    out.push(Violation {
                        rule: Rule::NodePoolLimits,
                        subject: Subject::NodePool(name.to_string()),
                        detail: format!(
                            "{resource}: existing nodes {} + {claims} new claim(s) {} exceed the limit {}",
                            resources::format_milli(resource, have),
                            resources::format_milli(resource, add),
                            resources::format_milli(resource, max)
                        ),
                    });
                }
            }
        }
    }
}

/// The launched node's labels: the type's single-valued labels, the launch's
/// instance type, zone and capacity type, the pool's labels, then for any other
/// key of the claim's requirements a value they allow.
fn launched_labels(
    pool: &NodePool,
    it: &InstanceType,
    launch: &Launch,
    requirements: &Requirements,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    for r in it.requirements.iter() {
        if !r.is_complement()
            && r.values().len() == 1
            && let Some(value) = r.values().next()
        {
            labels.insert(r.key().to_string(), value.to_string());
        }
    }
    labels.insert(LABEL_INSTANCE_TYPE_STABLE.to_string(), it.name.clone());
    labels.insert(LABEL_TOPOLOGY_ZONE.to_string(), launch.zone.clone());
    labels.insert(
        CAPACITY_TYPE_LABEL_KEY.to_string(),
        launch.capacity_type.clone(),
    );
    for (key, value) in pool_labels(pool) {
        labels.entry(key).or_insert(value);
    }
    for r in requirements.iter() {
        if !labels.contains_key(r.key())
            && let Some(value) = r.any()
        {
            labels.insert(r.key().to_string(), value);
        }
    }
    labels
}

/// Whether a pod constrains the instance type: in its node selector or node
/// affinity (required or preferred), or as the topology key of a spread
/// constraint or pod (anti-)affinity term.
fn mentions_instance_type(spec: &PodSpec) -> bool {
    let is_type = |key: &str| normalize_label_key(key) == LABEL_INSTANCE_TYPE_STABLE;
    let in_term = |term: &NodeSelectorTerm| {
        let expressions = term.match_expressions.iter().flatten();
        expressions.map(|e| e.key.as_str()).any(is_type)
    };
    let selector = spec.node_selector.iter().flatten().any(|(k, _)| is_type(k));
    let affinity = spec.affinity.as_ref();
    let node = affinity
        .and_then(|a| a.node_affinity.as_ref())
        .is_some_and(|n| {
            let required = n.required_during_scheduling_ignored_during_execution.iter();
            let preferred = n
                .preferred_during_scheduling_ignored_during_execution
                .iter();
            required.flat_map(|r| &r.node_selector_terms).any(in_term)
                || preferred.flatten().any(|p| in_term(&p.preference))
        });
    let spread = spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .any(|c| is_type(&c.topology_key));
    let pod_terms = |required: Option<&Vec<PodAffinityTerm>>,
                     preferred: Option<&Vec<WeightedPodAffinityTerm>>| {
        required
            .into_iter()
            .flatten()
            .any(|t| is_type(&t.topology_key))
            || preferred
                .into_iter()
                .flatten()
                .any(|w| is_type(&w.pod_affinity_term.topology_key))
    };
    let pod_affinity = affinity
        .and_then(|a| a.pod_affinity.as_ref())
        .is_some_and(|a| {
            pod_terms(
                a.required_during_scheduling_ignored_during_execution
                    .as_ref(),
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref(),
            )
        });
    let pod_anti_affinity = affinity
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .is_some_and(|a| {
            pod_terms(
                a.required_during_scheduling_ignored_during_execution
                    .as_ref(),
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref(),
            )
        });
    selector || node || spread || pod_affinity || pod_anti_affinity
}

/// A spread constraint, as a group identity.
fn constraint_identity(c: &TopologySpreadConstraint) -> String {
    serde_json::to_string(c).unwrap_or_default()
}

/// A pod's `nodeSelector` and required node affinity, as a group identity.
fn node_identity(spec: &PodSpec) -> String {
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    format!(
        "{}|{}",
        serde_json::to_string(&spec.node_selector).unwrap_or_default(),
        serde_json::to_string(&required).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{
        NodeClaimTemplate, NodeClaimTemplateSpec, NodePoolSpec, Quantities, TemplateMetadata,
    };
    use crate::cloudprovider::Offering;
    use crate::provisioning::{ExistingPlacement, Unschedulable, schedule};
    use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
    use k8s_openapi::api::core::v1::{
        Affinity, Container, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement,
        NodeSelectorTerm, NodeStatus, PodAntiAffinity, PodStatus, PodTemplateSpec,
        ResourceRequirements,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
    use std::sync::Arc;

    const GI: i64 = 1 << 30;

    fn resource_list(cpu_m: i64, memory_gi: i64, pods: i64) -> ResourceList {
        let mut list = ResourceList::new();
        list.set("cpu", cpu_m);
        list.set("memory", memory_gi * GI * 1000);
        list.set("pods", pods * 1000);
        list
    }

    /// `small`: 2 cpu, spot 0.05 / on-demand 0.10 in zone-a, on-demand 0.12 in
    /// zone-b. `large`: 8 cpu, spot 0.20 / on-demand 0.40 in zone-a.
    fn catalog() -> Arc<[InstanceType]> {
        let labels = [
            ("kubernetes.io/arch", "amd64"),
            ("kubernetes.io/os", "linux"),
        ];
        Arc::from(vec![
            InstanceType::new(
                "small",
                labels,
                vec![
                    Offering::new("zone-a", "spot", 0.05),
                    Offering::new("zone-a", "on-demand", 0.10),
                    Offering::new("zone-b", "on-demand", 0.12),
                ],
                resource_list(2000, 8, 110),
                ResourceList::new(),
            ),
            InstanceType::new(
                "large",
                labels,
                vec![
                    Offering::new("zone-a", "spot", 0.20),
                    Offering::new("zone-a", "on-demand", 0.40),
                ],
                resource_list(8000, 32, 110),
                ResourceList::new(),
            ),
        ])
    }

    fn pool(name: &str) -> NodePool {
        NodePool {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                ..Default::default()
            },
            spec: NodePoolSpec {
                template: NodeClaimTemplate {
                    metadata: Some(TemplateMetadata::default()),
                    spec: NodeClaimTemplateSpec::default(),
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn container(cpu_m: i64) -> Container {
        Container {
            name: "main".to_string(),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".to_string(), Quantity(format!("{cpu_m}m"))),
                    ("memory".to_string(), Quantity("1Gi".to_string())),
                ])),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn pod(name: &str, app: &str, cpu_m: i64) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("default".to_string()),
                uid: Some(format!("uid-{name}")),
                labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![container(cpu_m)],
                ..Default::default()
            }),
            status: Some(PodStatus {
                phase: Some("Pending".to_string()),
                ..Default::default()
            }),
        }
    }

    fn app_selector(app: &str) -> LabelSelector {
        LabelSelector {
            match_labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..Default::default()
        }
    }

    fn anti_affine(mut pod: Pod, app: &str) -> Pod {
        pod.spec.as_mut().unwrap().affinity = Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                    label_selector: Some(app_selector(app)),
                    topology_key: LABEL_HOSTNAME.to_string(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
        pod
    }

    fn spread(mut pod: Pod, app: &str) -> Pod {
        pod.spec.as_mut().unwrap().topology_spread_constraints =
            Some(vec![TopologySpreadConstraint {
                max_skew: 1,
                topology_key: LABEL_TOPOLOGY_ZONE.to_string(),
                when_unsatisfiable: "DoNotSchedule".to_string(),
                label_selector: Some(app_selector(app)),
                ..Default::default()
            }]);
        pod
    }

    /// One pool `default` over [`catalog`], with these pods.
    fn snapshot(pods: Vec<Pod>) -> Snapshot {
        Snapshot {
            node_pools: vec![pool("default")],
            instance_types: BTreeMap::from([("default".to_string(), catalog())]),
            pods,
            ..Default::default()
        }
    }

    fn two_pods() -> Snapshot {
        snapshot(vec![pod("web-0", "web", 1000), pod("web-1", "web", 1000)])
    }

    fn launch(instance_type: &str, zone: &str, capacity_type: &str, price: f64) -> Option<Launch> {
        Some(Launch {
            instance_type: instance_type.to_string(),
            zone: zone.to_string(),
            capacity_type: capacity_type.to_string(),
            price,
        })
    }

    /// A claim of `default` listing `types`, launching `launch`, with `pods`.
    fn claim(types: &[&str], launch: Option<Launch>, pods: &[&str]) -> PlannedClaim {
        PlannedClaim {
            node_pool: "default".to_string(),
            instance_types: types.iter().map(ToString::to_string).collect(),
            requirements: vec![RequirementOutput {
                key: NODE_POOL_LABEL_KEY.to_string(),
                operator: "In".to_string(),
                values: vec!["default".to_string()],
                min_values: None,
            }],
            launch,
            pods: pods.iter().map(|p| format!("default/{p}")).collect(),
        }
    }

    fn plan(claims: Vec<PlannedClaim>) -> ProvisioningPlan {
        let total = claims
            .iter()
            .filter_map(|c| c.launch.as_ref())
            .map(|l| l.price)
            .sum();
        ProvisioningPlan {
            node_claims: claims,
            total_price_per_hour: total,
            ..Default::default()
        }
    }

    fn rules(violations: &[Violation]) -> BTreeSet<Rule> {
        violations.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn the_schedulers_plan_and_a_hand_made_good_plan_pass() {
        let snapshot = two_pods();
        assert_eq!(validate(&snapshot, &schedule(&snapshot)), vec![]);
        let good = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        assert_eq!(validate(&snapshot, &good), vec![]);
    }

    #[test]
    fn catches_an_over_committed_claim() {
        let snapshot = snapshot(vec![
            pod("web-0", "web", 1000),
            pod("web-1", "web", 1000),
            pod("web-2", "web", 1000),
        ]);
        let bad = plan(vec![claim(
            &["small"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1", "web-2"],
        )]);
        let violations = validate(&snapshot, &bad);
        let over: Vec<String> = violations
            .iter()
            .filter(|v| v.rule == Rule::OverCommitted)
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            over,
            [
                "claim #0 (nodepool \"default\"): over-committed: small cannot hold the pods \
                 (cpu=3, memory=3Gi, pods=3) with its daemons (nothing): cpu needs 3 of 2"
            ]
        );
        // Listing a type too small for the pods is as wrong as launching it.
        let listed = plan(vec![claim(
            &["small", "large"],
            launch("large", "zone-a", "spot", 0.20),
            &["web-0", "web-1", "web-2"],
        )]);
        let violations = validate(&snapshot, &listed);
        assert!(
            rules(&violations).contains(&Rule::InstanceTypeTooSmall),
            "{violations:?}"
        );
        assert!(
            !rules(&violations).contains(&Rule::OverCommitted),
            "{violations:?}"
        );
    }

    #[test]
    fn catches_a_pod_listed_twice() {
        let snapshot = two_pods();
        let mut bad = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        bad.unschedulable.push(Unschedulable {
            pod: "default/web-1".to_string(),
            reason: "no room".to_string(),
        });
        let violations = validate(&snapshot, &bad);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::PodDuplicated]));
        assert_eq!(
            violations[0].to_string(),
            "pod default/web-1: pod planned more than once: 2 times: claim #0, unschedulable"
        );
    }

    #[test]
    fn catches_a_missing_pod_and_an_unknown_one() {
        let snapshot = two_pods();
        let bad = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "ghost"],
        )]);
        let violations = validate(&snapshot, &bad);
        assert_eq!(
            rules(&violations),
            BTreeSet::from([Rule::PodMissing, Rule::UnknownPod])
        );
        assert!(
            violations
                .iter()
                .any(|v| v.subject == Subject::Pod("default/web-1".into()))
        );
        assert!(
            violations
                .iter()
                .any(|v| v.subject == Subject::Pod("default/ghost".into()))
        );
    }

    #[test]
    fn catches_wrong_and_not_cheapest_prices() {
        let snapshot = two_pods();
        let wrong = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.04),
            &["web-0", "web-1"],
        )]);
        assert_eq!(
            rules(&validate(&snapshot, &wrong)),
            BTreeSet::from([Rule::LaunchPrice])
        );
        let dear = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "on-demand", 0.10),
            &["web-0", "web-1"],
        )]);
        let violations = validate(&snapshot, &dear);
        assert_eq!(
            rules(&violations),
            BTreeSet::from([Rule::LaunchNotCheapest])
        );
        assert!(
            violations[0]
                .detail
                .contains("small zone-a spot costs 0.05"),
            "{}",
            violations[0]
        );
        let mut total = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        total.total_price_per_hour = 0.06;
        assert_eq!(
            rules(&validate(&snapshot, &total)),
            BTreeSet::from([Rule::TotalPrice])
        );
    }

    #[test]
    fn catches_unsorted_incomplete_and_unknown_instance_types() {
        let snapshot = two_pods();
        let unsorted = plan(vec![claim(
            &["large", "small"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        let violations = validate(&snapshot, &unsorted);
        assert_eq!(
            rules(&violations),
            BTreeSet::from([Rule::InstanceTypeOrder])
        );
        assert!(
            violations[0]
                .detail
                .contains("large (cheapest 0.2) is listed before small (cheapest 0.05)")
        );
        let incomplete = plan(vec![claim(
            &["small"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        assert_eq!(
            rules(&validate(&snapshot, &incomplete)),
            BTreeSet::from([Rule::InstanceTypesIncomplete])
        );
        let unknown = plan(vec![claim(
            &["small", "large", "huge"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        assert_eq!(
            rules(&validate(&snapshot, &unknown)),
            BTreeSet::from([Rule::InstanceTypeList])
        );
    }

    #[test]
    fn catches_an_anti_affinity_pair_on_one_claim() {
        let snapshot = snapshot(vec![
            anti_affine(pod("web-0", "web", 500), "web"),
            anti_affine(pod("web-1", "web", 500), "web"),
        ]);
        let bad = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        let violations = validate(&snapshot, &bad);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::AntiAffinity]));
        let apart = plan(vec![
            claim(
                &["small", "large"],
                launch("small", "zone-a", "spot", 0.05),
                &["web-0"],
            ),
            claim(
                &["small", "large"],
                launch("small", "zone-a", "spot", 0.05),
                &["web-1"],
            ),
        ]);
        assert_eq!(validate(&snapshot, &apart), vec![]);
    }

    #[test]
    fn catches_a_zonal_spread_skew() {
        let pods = (0..3)
            .map(|i| spread(pod(&format!("web-{i}"), "web", 500), "web"))
            .collect();
        let snapshot = snapshot(pods);
        // zone-b is eligible (small on-demand), so 3 pods in zone-a alone skew by 3.
        let one = |p: &str| {
            claim(
                &["small", "large"],
                launch("small", "zone-a", "spot", 0.05),
                &[p],
            )
        };
        let bad = plan(vec![one("web-0"), one("web-1"), one("web-2")]);
        let violations = validate(&snapshot, &bad);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::TopologySpread]));
        assert!(
            violations[0].detail.contains("3 selected pods in zone-a"),
            "{}",
            violations[0]
        );
        let mut zone_b = claim(
            &["small"],
            launch("small", "zone-b", "on-demand", 0.12),
            &["web-2"],
        );
        zone_b.requirements.push(RequirementOutput {
            key: LABEL_TOPOLOGY_ZONE.to_string(),
            operator: "In".to_string(),
            values: vec!["zone-b".to_string()],
            min_values: None,
        });
        let zone_a = |p: &str| {
            let mut c = one(p);
            c.requirements.push(RequirementOutput {
                key: LABEL_TOPOLOGY_ZONE.to_string(),
                operator: "In".to_string(),
                values: vec!["zone-a".to_string()],
                min_values: None,
            });
            c
        };
        // Two in zone-a and one in zone-b is within maxSkew 1.
        let good = plan(vec![zone_a("web-0"), zone_a("web-1"), zone_b]);
        assert_eq!(validate(&snapshot, &good), vec![]);
    }

    #[test]
    fn catches_untolerated_taints_and_unmet_selectors() {
        let mut tainted = pool("default");
        tainted.spec.template.spec.taints = Some(vec![Taint {
            key: "dedicated".to_string(),
            value: Some("gpu".to_string()),
            effect: "NoSchedule".to_string(),
            ..Default::default()
        }]);
        let mut tainted_pool = two_pods();
        tainted_pool.node_pools = vec![tainted];
        let good_shape = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0", "web-1"],
        )]);
        let violations = validate(&tainted_pool, &good_shape);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::Taint]));
        assert_eq!(violations.len(), 2);

        let mut picky = pod("web-0", "web", 500);
        picky.spec.as_mut().unwrap().node_selector = Some(BTreeMap::from([(
            LABEL_TOPOLOGY_ZONE.to_string(),
            "zone-b".to_string(),
        )]));
        let snapshot = snapshot(vec![picky]);
        let bad = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0"],
        )]);
        assert_eq!(
            rules(&validate(&snapshot, &bad)),
            BTreeSet::from([Rule::NodeRequirements])
        );
    }

    #[test]
    fn a_pod_may_meet_any_one_of_its_required_terms() {
        let term = |zone: &str| NodeSelectorTerm {
            match_expressions: Some(vec![NodeSelectorRequirement {
                key: LABEL_TOPOLOGY_ZONE.to_string(),
                operator: "In".to_string(),
                values: Some(vec![zone.to_string()]),
            }]),
            ..Default::default()
        };
        let mut relaxed = pod("web-0", "web", 500);
        relaxed.spec.as_mut().unwrap().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![term("zone-c"), term("zone-a")],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        let snapshot = snapshot(vec![relaxed]);
        let mut on_a = claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0"],
        );
        on_a.requirements.push(RequirementOutput {
            key: LABEL_TOPOLOGY_ZONE.to_string(),
            operator: "In".to_string(),
            values: vec!["zone-a".to_string()],
            min_values: None,
        });
        assert_eq!(validate(&snapshot, &plan(vec![on_a])), vec![]);
    }

    #[test]
    fn counts_daemons_whose_live_pod_has_match_fields_affinity() {
        // A DaemonSet of 1500m with a live pod, whose affinity the DaemonSet
        // controller rewrote to `matchFields`; upstream reads no matchFields, so the
        // daemon lands on every new node.
        let daemon_spec = PodSpec {
            containers: vec![container(1500)],
            ..Default::default()
        };
        let mut live_spec = daemon_spec.clone();
        live_spec.node_name = Some("node-0".to_string());
        live_spec.affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_fields: Some(vec![NodeSelectorRequirement {
                            key: "metadata.name".to_string(),
                            operator: "In".to_string(),
                            values: Some(vec!["node-0".to_string()]),
                        }]),
                        ..Default::default()
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        let mut live = pod("agent-x", "agent", 0);
        live.metadata.namespace = Some("kube-system".to_string());
        live.spec = Some(live_spec);
        live.metadata.owner_references = Some(vec![OwnerReference {
            kind: "DaemonSet".to_string(),
            name: "agent".to_string(),
            ..Default::default()
        }]);
        let mut snapshot = snapshot(vec![pod("web-0", "web", 1000), live]);
        snapshot.daemon_sets = vec![DaemonSet {
            metadata: ObjectMeta {
                name: Some("agent".to_string()),
                namespace: Some("kube-system".to_string()),
                ..Default::default()
            },
            spec: DaemonSetSpec {
                template: PodTemplateSpec {
                    metadata: None,
                    spec: Some(daemon_spec),
                },
                ..Default::default()
            },
            ..Default::default()
        }];
        let bad = plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0"],
        )]);
        let violations = validate(&snapshot, &bad);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::OverCommitted]));
        assert!(
            violations[0].detail.contains("with its daemons (cpu=1500m"),
            "{}",
            violations[0]
        );
        let good = plan(vec![claim(
            &["large"],
            launch("large", "zone-a", "spot", 0.20),
            &["web-0"],
        )]);
        assert_eq!(validate(&snapshot, &good), vec![]);
    }

    #[test]
    fn catches_an_over_committed_node_and_a_bad_destination() {
        let mut node = Node {
            metadata: ObjectMeta {
                name: Some("node-0".to_string()),
                labels: Some(BTreeMap::from([(
                    LABEL_TOPOLOGY_ZONE.to_string(),
                    "zone-a".to_string(),
                )])),
                ..Default::default()
            },
            status: Some(NodeStatus {
                allocatable: Some(BTreeMap::from([
                    ("cpu".to_string(), Quantity("2".to_string())),
                    ("memory".to_string(), Quantity("8Gi".to_string())),
                    ("pods".to_string(), Quantity("10".to_string())),
                ])),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut running = pod("db-0", "db", 1500);
        running.spec.as_mut().unwrap().node_name = Some("node-0".to_string());
        let mut snapshot = snapshot(vec![pod("web-0", "web", 1000), running]);
        snapshot.nodes = vec![ClusterNode {
            node: Some(node.clone()),
            node_claim: None,
        }];
        let mut bad = plan(vec![]);
        bad.existing_nodes.push(ExistingPlacement {
            name: "node-0".to_string(),
            pods: vec!["default/web-0".to_string()],
        });
        let violations = validate(&snapshot, &bad);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::OverCommitted]));
        assert_eq!(
            violations[0].to_string(),
            "node \"node-0\": over-committed: cpu: allocatable 2 − running 1500m − added 1"
        );
        node.spec = Some(k8s_openapi::api::core::v1::NodeSpec {
            taints: Some(vec![Taint {
                key: DISRUPTED_TAINT_KEY.to_string(),
                effect: "NoSchedule".to_string(),
                ..Default::default()
            }]),
            ..Default::default()
        });
        snapshot.nodes[0].node = Some(node);
        assert!(
            rules(&validate(&snapshot, &bad))
                .is_superset(&BTreeSet::from([Rule::NotADestination, Rule::Taint]))
        );
    }

    #[test]
    fn catches_exceeded_limits() {
        let mut limited = pool("default");
        limited.spec.limits = Some(Quantities::from(BTreeMap::from([(
            "cpu".to_string(),
            Quantity("3".to_string()),
        )])));
        let mut snapshot = two_pods();
        snapshot.node_pools = vec![limited];
        let two = plan(vec![
            claim(
                &["small"],
                launch("small", "zone-a", "spot", 0.05),
                &["web-0"],
            ),
            claim(
                &["small"],
                launch("small", "zone-a", "spot", 0.05),
                &["web-1"],
            ),
        ]);
        let violations = validate(&snapshot, &two);
        assert_eq!(rules(&violations), BTreeSet::from([Rule::NodePoolLimits]));
        assert_eq!(
            violations[0].to_string(),
            "nodepool \"default\": nodepool limits exceeded: cpu: existing nodes 0 + 2 new claim(s) 4 exceed the limit 3"
        );
    }
}
