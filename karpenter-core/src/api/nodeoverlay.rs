//! `NodeOverlay` (`karpenter.sh/v1alpha1`): adjustments to instance types'
//! prices and capacity before scheduling, for the types its requirements
//! select. What the fields do is [`crate::overlay`]'s; this is the data.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::ExtraFields;
use super::condition::Condition;
use super::quantities::Quantities;

/// A `karpenter.sh/v1alpha1` NodeOverlay.
///
/// ```
/// use karpenter_core::api::NodeOverlay;
/// use serde_json::json;
///
/// let manifest = json!({
///     "apiVersion": "karpenter.sh/v1alpha1",
///     "kind": "NodeOverlay",
///     "metadata": {"name": "discount"},
///     "spec": {
///         "requirements": [
///             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
///         ],
///         "priceAdjustment": "-15%",
///         "weight": 10,
///     },
/// });
/// let overlay: NodeOverlay = serde_json::from_value(manifest.clone())?;
/// assert_eq!(overlay.spec.price_adjustment.as_deref(), Some("-15%"));
/// assert_eq!(overlay.spec.effective_weight(), 10);
/// assert_eq!(serde_json::to_value(&overlay)?, manifest);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeOverlay {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: NodeOverlaySpec,
    /// The observed state (the `ValidationSucceeded` condition).
    pub status: Option<NodeOverlayStatus>,
    /// Top-level fields this version does not know.
    pub extra: ExtraFields,
}

super::object::karpenter_object!(NodeOverlay, "NodeOverlay", "nodeoverlays", "v1alpha1");

/// `spec` of a [`NodeOverlay`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlaySpec {
    /// Which instance types (and offerings) the overlay applies to: labels
    /// of the types, `karpenter.sh/nodepool`, and the NodePool's template
    /// labels (at most 100; required by the CRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<OverlayRequirement>>,
    /// A change to the price: `+0.5`, `-0.25`, `+10%`, `-15%` (down to
    /// `-100%`). Not with `price`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_adjustment: Option<String>,
    /// A price that replaces the offering's (`"0.25"`). Not with
    /// `priceAdjustment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// Extended resources added to the capacity (never `cpu`, `memory`,
    /// `ephemeral-storage` or `pods`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Quantities>,
    /// Precedence: higher weights win; absent counts as 0 (the CRD admits 1
    /// to 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl NodeOverlaySpec {
    /// `weight`, counting an absent one as 0 like upstream.
    pub fn effective_weight(&self) -> i32 {
        self.weight.unwrap_or(0)
    }

    /// The requirements, none when absent.
    pub fn requirements(&self) -> &[OverlayRequirement] {
        self.requirements.as_deref().unwrap_or_default()
    }
}

/// A requirement of a [`NodeOverlay`]: a node selector requirement
/// (`key`, `operator`, `values`) without `minValues`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OverlayRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte` or `Lte`,
    /// as written.
    pub operator: String,
    /// The values; one non-negative integer for `Gt`, `Lt`, `Gte`, `Lte`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl OverlayRequirement {
    /// The values, none when absent.
    pub fn values(&self) -> &[String] {
        self.values.as_deref().unwrap_or_default()
    }
}

/// `status` of a [`NodeOverlay`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlayStatus {
    /// `ValidationSucceeded` (and `Ready`), as upstream's controller sets
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}
