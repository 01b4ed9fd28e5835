//! `CapacityBuffer` (`autoscaling.x-k8s.io/v1beta1`): headroom, room kept
//! free for pods that have not come yet. Upstream Karpenter serves the
//! cluster-autoscaler's API for it; what the fields do is
//! [`crate::capacity_buffers`]'s, this is the data.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::ExtraFields;
use super::condition::Condition;
use super::quantities::Quantities;

/// The only provisioning strategy upstream writes (the CRD's default);
/// upstream Karpenter plans every buffer as this one, whatever it says.
pub const ACTIVE_CAPACITY_STRATEGY: &str = "buffer.x-k8s.io/active-capacity";

/// An `autoscaling.x-k8s.io/v1beta1` CapacityBuffer (namespaced).
///
/// ```
/// use karpenter_core::api::CapacityBuffer;
/// use serde_json::json;
///
/// let manifest = json!({
///     "apiVersion": "autoscaling.x-k8s.io/v1beta1",
///     "kind": "CapacityBuffer",
///     "metadata": {"name": "headroom", "namespace": "shop"},
///     "spec": {"podTemplateRef": {"name": "web-chunk"}, "replicas": 3},
/// });
/// let buffer: CapacityBuffer = serde_json::from_value(manifest.clone())?;
/// assert_eq!(buffer.spec.replicas, Some(3));
/// assert_eq!(serde_json::to_value(&buffer)?, manifest);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CapacityBuffer {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// The desired headroom.
    pub spec: CapacityBufferSpec,
    /// What the buffer controller resolved (read, never needed: the engine
    /// resolves the spec itself).
    pub status: Option<CapacityBufferStatus>,
    /// Top-level fields this version does not know.
    pub extra: ExtraFields,
}

super::object::karpenter_object!(
    CapacityBuffer,
    "CapacityBuffer",
    "capacitybuffers",
    "autoscaling.x-k8s.io",
    "v1beta1",
    k8s_openapi::NamespaceResourceScope
);

impl CapacityBuffer {
    /// `metadata.namespace`, `default` when unset (as a manifest applied
    /// without one lands).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }
}

/// `spec` of a [`CapacityBuffer`]: what the chunks look like (a PodTemplate,
/// or a workload's template) and how many there are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityBufferSpec {
    /// How the room is provided; the CRD defaults it to
    /// [`ACTIVE_CAPACITY_STRATEGY`], and upstream reads no other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioning_strategy: Option<String>,
    /// A `v1` PodTemplate in the buffer's namespace: one chunk is a pod of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template_ref: Option<LocalObjectRef>,
    /// A Deployment, StatefulSet or ReplicaSet in the buffer's namespace:
    /// one chunk is a pod of its template. Not with `podTemplateRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalable_ref: Option<ScalableRef>,
    /// How many chunks (at least 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// With `scalableRef`: chunks as a percentage of the workload's
    /// replicas, rounded up (at least 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage: Option<i32>,
    /// The most the chunks may request together: caps the count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Quantities>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// A reference by name to an object in the same namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalObjectRef {
    /// The object's name.
    #[serde(default)]
    pub name: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// A reference to a scalable workload in the same namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalableRef {
    /// The API group; empty means `apps`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// `Deployment`, `StatefulSet` or `ReplicaSet`.
    #[serde(default)]
    pub kind: String,
    /// The workload's name.
    #[serde(default)]
    pub name: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// `status` of a [`CapacityBuffer`], as upstream's buffer controller writes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityBufferStatus {
    /// The PodTemplate resolved (for a `podTemplateRef` buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template_ref: Option<LocalObjectRef>,
    /// The chunk count resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The PodTemplate's generation when resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template_generation: Option<i64>,
    /// `ReadyForProvisioning` and `Provisioning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The strategy, copied from the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioning_strategy: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}
