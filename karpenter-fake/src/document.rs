//! The `karpenter.fake/v1alpha1` `InstanceType` document of the scenario format.
//!
//! A scenario lists the fake provider's instance types as documents beside the
//! cluster's objects. Each carries its capacity, an optional overhead (kube-reserved,
//! system-reserved and eviction threshold, summed), optional single-valued labels and
//! at least one offering.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The `apiVersion` of [`InstanceTypeDocument`].
pub const API_VERSION: &str = "karpenter.fake/v1alpha1";
/// The `kind` of [`InstanceTypeDocument`].
pub const KIND: &str = "InstanceType";

/// One instance type of the fake provider, as a scenario file writes it.
///
/// `apiVersion` and `kind` are read (and checked) by the scenario loader, so they
/// are not fields here.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceTypeDocument {
    /// `metadata.name` is the instance type's name.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Capacity; `cpu` and `memory` are required, `pods` defaults to 110.
    #[serde(default)]
    pub capacity: BTreeMap<String, Quantity>,
    /// Resources reserved for the system on every node of this type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<BTreeMap<String, Quantity>>,
    /// Single-valued labels; `kubernetes.io/arch` defaults to `amd64` and
    /// `kubernetes.io/os` to `linux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Where and how the type can be bought; at least one.
    #[serde(default)]
    pub offerings: Vec<OfferingDocument>,
}

/// A zone and capacity type an instance type can be launched in, with its price.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingDocument {
    /// The zone, the value of `topology.kubernetes.io/zone`.
    pub zone: String,
    /// `on-demand`, `spot` or `reserved`: the value of `karpenter.sh/capacity-type`.
    pub capacity_type: String,
    /// Price per hour.
    pub price: f64,
    /// Whether the offering can be launched now; absent means available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
}

impl InstanceTypeDocument {
    /// The instance type's name (`metadata.name`), empty when absent.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
}

impl OfferingDocument {
    /// Whether the offering can be launched now (absent `available` means yes).
    pub fn is_available(&self) -> bool {
        self.available.unwrap_or(true)
    }
}
