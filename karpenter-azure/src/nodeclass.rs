//! `AKSNodeClass` (`karpenter.azure.com/v1beta1`): how AKS nodes are built.
//!
//! The fields the engine reads are typed; everything else in the spec and the whole
//! status are kept as JSON so that a manifest reads and writes back without loss.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The `apiVersion` of [`AKSNodeClass`].
pub const API_VERSION: &str = "karpenter.azure.com/v1beta1";
/// The `kind` of [`AKSNodeClass`].
pub const KIND: &str = "AKSNodeClass";

/// An AKS node class. `apiVersion` and `kind` are read by the scenario loader.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AKSNodeClass {
    /// Standard object metadata; `metadata.name` is what a NodePool's `nodeClassRef` names.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired node configuration.
    #[serde(default)]
    pub spec: AKSNodeClassSpec,
    /// The observed state (images, Kubernetes version, conditions), kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

/// The spec of an [`AKSNodeClass`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AKSNodeClassSpec {
    /// `Ubuntu` (the default), `Ubuntu2204`, `Ubuntu2404` or `AzureLinux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_family: Option<String>,
    /// OS disk size in GB (default 128, 30 to 2048).
    #[serde(
        default,
        rename = "osDiskSizeGB",
        skip_serializing_if = "Option::is_none"
    )]
    pub os_disk_size_gb: Option<i64>,
    /// The ARM ID of the subnet nodes join.
    #[serde(
        default,
        rename = "vnetSubnetID",
        skip_serializing_if = "Option::is_none"
    )]
    pub vnet_subnet_id: Option<String>,
    /// Maximum pods per node (10 to 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<i64>,
    /// `FIPS` or `Disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fips_mode: Option<String>,
    /// Azure tags applied to the VM and its resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    /// Every other spec field (kubelet, security, localDNS, ...), kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}
