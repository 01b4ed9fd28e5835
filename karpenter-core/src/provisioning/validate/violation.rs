//! What the validator reports: a [`Violation`] of a [`Rule`], about a
//! [`Subject`].

use std::fmt;

use crate::pods::PodKey;

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

/// The rules [`validate`](super::validate) checks.
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
    /// A pod with Dynamic Resource Allocation claims is placed (it gets no
    /// capacity, as upstream's default `ignore-dra-requests`).
    DraPodPlaced,
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
    /// Pods placed on an existing node attach more volumes of a CSI driver
    /// than its CSINode allows.
    VolumeAttachLimit,
    /// Two pods share a domain that a required anti-affinity term forbids.
    AntiAffinity,
    /// A zonal `DoNotSchedule` spread constraint is skewed beyond `maxSkew`.
    TopologySpread,
    /// A NodePool's limits are exceeded.
    NodePoolLimits,
    /// `totalPricePerHour` is not the sum of the launch prices.
    TotalPrice,
    /// A claim's listed types do not reach a `minValues` it writes, or it
    /// writes a NodePool's `minValues` other than as the pool does, lowered
    /// only on a claim that says so (`minValuesRelaxed`).
    MinValues,
    /// A capacity reservation is held by more new claims than it can start,
    /// or a claim launches into one it is not pinned to.
    ReservedCapacity,
    /// A CapacityBuffer's chunks are not all accounted for, or named
    /// where there is no such buffer.
    CapacityBuffer,
    /// A static NodePool's claim holds pods, or is not the cheapest launch
    /// its template allows.
    StaticClaim,
    /// A removal names no active claim of its static NodePool, or one twice.
    StaticRemoval,
    /// A static NodePool is not brought to its replicas (within its `nodes`
    /// limit) by the claims launched and removed.
    StaticReplicas,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::PodMissing => "pending pod missing from the plan",
            Rule::PodDuplicated => "pod planned more than once",
            Rule::UnknownPod => "not a pending pod",
            Rule::MissingReason => "unschedulable without a reason",
            Rule::DraPodPlaced => "pod with DRA claims placed",
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
            Rule::VolumeAttachLimit => "volume attach limit exceeded",
            Rule::AntiAffinity => "required anti-affinity broken",
            Rule::TopologySpread => "topology spread skew beyond maxSkew",
            Rule::NodePoolLimits => "nodepool limits exceeded",
            Rule::TotalPrice => "total price differs from the sum of launch prices",
            Rule::MinValues => "minValues not met or changed",
            Rule::ReservedCapacity => "capacity reservation overcommitted or unpinned",
            Rule::CapacityBuffer => "capacity buffer chunks unaccounted for",
            Rule::StaticClaim => "bad static NodePool claim",
            Rule::StaticRemoval => "bad static NodePool removal",
            Rule::StaticReplicas => "static NodePool not held at its replicas",
        })
    }
}

/// What a violation is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    /// The plan as a whole.
    Plan,
    /// A pod.
    Pod(PodKey),
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
