//! Status conditions, shaped like `metav1.Condition` but tolerant of the
//! fields hand-written scenario files leave out.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Serialize};

/// Condition types Karpenter sets on NodePools and NodeClaims.
pub mod types {
    /// The root condition: every other readiness condition is True.
    pub const READY: &str = "Ready";
    /// NodePool: its runtime configuration is valid.
    pub const VALIDATION_SUCCEEDED: &str = "ValidationSucceeded";
    /// NodePool: its NodeClass was resolved and is Ready.
    pub const NODE_CLASS_READY: &str = "NodeClassReady";
    /// NodePool: nothing is preventing its nodes from launching and registering.
    pub const NODE_REGISTRATION_HEALTHY: &str = "NodeRegistrationHealthy";
    /// NodeClaim: the cloud provider created the instance.
    pub const LAUNCHED: &str = "Launched";
    /// NodeClaim: its Node joined the cluster.
    pub const REGISTERED: &str = "Registered";
    /// NodeClaim: its Node is ready and its startup taints are gone.
    pub const INITIALIZED: &str = "Initialized";
    /// NodeClaim: it may be considered for consolidation.
    pub const CONSOLIDATABLE: &str = "Consolidatable";
    /// NodeClaim: it no longer matches its NodePool.
    pub const DRIFTED: &str = "Drifted";
    /// NodeClaim: its Node has been drained.
    pub const DRAINED: &str = "Drained";
    /// NodeClaim: its volumes are detached.
    pub const VOLUMES_DETACHED: &str = "VolumesDetached";
    /// NodeClaim: its instance is shutting down.
    pub const INSTANCE_TERMINATING: &str = "InstanceTerminating";
    /// NodeClaim: its Node and instance agree.
    pub const CONSISTENT_STATE_FOUND: &str = "ConsistentStateFound";
    /// NodeClaim: why it is being disrupted.
    pub const DISRUPTION_REASON: &str = "DisruptionReason";
}

/// A condition's status: `True`, `False` or `Unknown`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Not yet determined.
    #[default]
    Unknown,
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        })
    }
}

/// One status condition. Only `type` and `status` are required; absent
/// optional fields stay absent when written back.
///
/// ```
/// use karpenter_core::api::{Condition, ConditionStatus, Conditions};
/// use serde_json::json;
///
/// let conditions: Vec<Condition> = serde_json::from_value(json!([
///     {"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T12:00:00Z"},
///     {"type": "Drifted", "status": "False"},
/// ]))?;
/// assert!(conditions.is_true("Ready"));
/// assert!(!conditions.is_true("Drifted"));
/// assert_eq!(conditions.find("Drifted").map(|c| c.status), Some(ConditionStatus::False));
/// assert_eq!(conditions.transition_time("Ready").map(|t| t.as_second()), Some(1_714_564_800));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition type, e.g. `Ready` (see [`types`]).
    #[serde(rename = "type")]
    pub type_: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// The `.metadata.generation` the condition was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// A CamelCase reason for the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A human-readable message about the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Fields this version does not know, kept for writing back.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl Condition {
    /// A condition with only its type and status.
    pub fn new(type_: impl Into<String>, status: ConditionStatus) -> Self {
        Self {
            type_: type_.into(),
            status,
            ..Self::default()
        }
    }

    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }
}

/// Look-ups over a list of conditions, keyed by type as upstream's
/// `+listMapKey=type` makes them.
pub trait Conditions {
    /// The condition of this type, if present.
    fn find(&self, type_: &str) -> Option<&Condition>;

    /// Whether the condition of this type is present and `True`.
    fn is_true(&self, type_: &str) -> bool {
        self.find(type_).is_some_and(Condition::is_true)
    }

    /// When the condition of this type last changed, if present and recorded.
    fn transition_time(&self, type_: &str) -> Option<jiff::Timestamp> {
        self.find(type_)?.last_transition_time.as_ref().map(|t| t.0)
    }
}

impl Conditions for [Condition] {
    fn find(&self, type_: &str) -> Option<&Condition> {
        self.iter().find(|c| c.type_ == type_)
    }
}

impl Conditions for Vec<Condition> {
    fn find(&self, type_: &str) -> Option<&Condition> {
        self.as_slice().find(type_)
    }
}

impl Conditions for Option<Vec<Condition>> {
    fn find(&self, type_: &str) -> Option<&Condition> {
        self.as_deref()?.find(type_)
    }
}
