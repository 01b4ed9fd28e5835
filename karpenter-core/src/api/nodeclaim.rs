//! `NodeClaim`: a request for one node, and what came of it.

use std::time::Duration;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use super::ExtraFields;
use super::condition::Condition;
use super::duration::{GoDuration, NillableDuration};

use super::quantities::Quantities;
use super::requirement::NodeSelectorRequirementWithMinValues;

/// `expireAfter` when the field is absent (the CRD default).
pub const DEFAULT_EXPIRE_AFTER: Duration = Duration::from_secs(720 * 3600);

/// `expireAfter` with its default applied; `None` means `Never`.
pub(super) fn expire_after_or_default(field: Option<&NillableDuration>) -> Option<Duration> {
    field.map_or(Some(DEFAULT_EXPIRE_AFTER), NillableDuration::as_std)
}

/// A `karpenter.sh/v1` NodeClaim.
///
/// Like [`NodePool`](super::NodePool): `apiVersion`/`kind` are checked when
/// present, tolerated when absent and always written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeClaim {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// The desired node (immutable upstream).
    pub spec: NodeClaimSpec,
    /// What was launched, absent until the NodeClaim is reconciled.
    pub status: Option<NodeClaimStatus>,
    /// Top-level fields this version does not know.
    pub extra: ExtraFields,
}

super::object::karpenter_object!(NodeClaim, "NodeClaim", "nodeclaims");

/// `spec` of a [`NodeClaim`]. `requirements` and `nodeClassRef` are required
/// by the CRD but optional here, for hand-written scenarios.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimSpec {
    /// Taints applied to the Node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
    /// Taints present at startup that something else removes later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_taints: Option<Vec<Taint>>,
    /// Constraints on the launched capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<NodeSelectorRequirementWithMinValues>>,
    /// The resources the node must offer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// The provider-specific NodeClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_ref: Option<NodeClassReference>,
    /// The longest the Node's draining may take before pods are deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period: Option<GoDuration>,
    /// How long after creation the Node expires, or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<NillableDuration>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl NodeClaimSpec {
    /// The requirements, empty when absent.
    pub fn requirements(&self) -> &[NodeSelectorRequirementWithMinValues] {
        self.requirements.as_deref().unwrap_or_default()
    }

    /// The taints, empty when absent.
    pub fn taints(&self) -> &[Taint] {
        self.taints.as_deref().unwrap_or_default()
    }

    /// The startup taints, empty when absent.
    pub fn startup_taints(&self) -> &[Taint] {
        self.startup_taints.as_deref().unwrap_or_default()
    }

    /// `resources.requests`, if any.
    pub fn requests(&self) -> Option<&Quantities> {
        self.resources.as_ref()?.requests.as_ref()
    }

    /// `expireAfter` with the CRD default (`720h`) applied; `None` means
    /// `Never`.
    pub fn effective_expire_after(&self) -> Option<Duration> {
        expire_after_or_default(self.expire_after.as_ref())
    }

    /// `terminationGracePeriod`; `None` (no default) means pods may take as
    /// long as they need to drain.
    pub fn effective_termination_grace_period(&self) -> Option<Duration> {
        self.termination_grace_period
            .as_ref()
            .map(GoDuration::as_std)
    }
}

/// `spec.resources` of a [`NodeClaim`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceRequirements {
    /// The minimum resources the node must offer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Quantities>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// A reference to the provider-specific NodeClass (e.g. an `EC2NodeClass`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeClassReference {
    /// The API group, without a version (e.g. `karpenter.k8s.aws`).
    pub group: String,
    /// The kind (e.g. `EC2NodeClass`).
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// `status` of a [`NodeClaim`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimStatus {
    /// The name of the Node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The cloud provider's ID for the instance.
    #[serde(
        rename = "providerID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_id: Option<String>,
    /// The image the node runs.
    #[serde(rename = "imageID", default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// The node's estimated full capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Quantities>,
    /// The node's estimated allocatable capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<Quantities>,
    /// Health and readiness signals (`Launched`, `Registered`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// When a pod was last scheduled to or removed from the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pod_event_time: Option<Time>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}
