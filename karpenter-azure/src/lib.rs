//! The Azure (AKS) cloud provider for the karpenter engine, after
//! Azure/karpenter-provider-azure.
//!
//! Newcomers start with [`AzureCloudProvider`]: an
//! [`ArmClient`](arm::ArmClient) (or any [`ComputeApi`](arm::ComputeApi))
//! and an [`AzureConfig`] saying where nodes launch. It is a
//! [`CloudProvider`](karpenter_core::cloudprovider::CloudProvider): hand it
//! to [`karpenter_core::driver::Driver`], or ask it for instance types
//! directly. Without a cluster, [`instance_types`] gives the embedded
//! catalog's VM sizes under a node class's [`Settings`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use karpenter_azure::arm::{ArmClient, StaticCredential};
//! use karpenter_azure::{AzureCloudProvider, AzureConfig, NetworkOptions};
//!
//! let credential = Arc::new(StaticCredential::new("a bearer token"));
//! let arm = ArmClient::new(credential, "subscription-id", "MC_rg_cluster_eastus");
//! let provider = AzureCloudProvider::new(
//!     arm,
//!     AzureConfig {
//!         subscription: "subscription-id".into(),
//!         resource_group: "MC_rg_cluster_eastus".into(),
//!         region: "eastus".into(),
//!         cluster_name: "cluster".into(),
//!         subnet_id: "/subscriptions/.../subnets/aks-subnet".into(),
//!         ssh_public_key: "ssh-ed25519 AAAA...".into(),
//!         custom_data: None,
//!         join: None,
//!         network: NetworkOptions::default(),
//!     },
//! );
//! # drop(provider);
//! ```
//!
//! VMs launched so boot the custom data given (or none). For VMs that join
//! a self-hosted AKS cluster, set [`AzureConfig::join`]: the settings under
//! upstream's environment names ([`AksSettings::from_lookup`], which lists
//! every missing or malformed one) and what the cluster says of itself
//! ([`ClusterFacts`]). Each launch then renders the node's custom data,
//! boots the image for its size, and puts its NIC behind the cluster's load
//! balancers:
//!
//! ```
//! use std::collections::BTreeMap;
//! use karpenter_azure::{AksSettings, ClusterFacts, JoinConfig};
//!
//! let env: BTreeMap<&str, &str> = BTreeMap::from([
//!     ("CLUSTER_NAME", "cluster"),
//!     ("CLUSTER_ENDPOINT", "https://cluster-dns.hcp.eastus.azmk8s.io:443"),
//!     ("KUBELET_BOOTSTRAP_TOKEN", "abcdef.0123456789abcdef"),
//!     ("SSH_PUBLIC_KEY", "ssh-ed25519 AAAA... azureuser"),
//!     ("VNET_SUBNET_ID", "/subscriptions/sub/resourceGroups/MC_rg_cluster_eastus/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet"),
//!     ("AZURE_NODE_RESOURCE_GROUP", "MC_rg_cluster_eastus"),
//!     ("LOCATION", "eastus"),
//! ]);
//! let settings = AksSettings::from_lookup(|name| env.get(name).map(|v| v.to_string()))?;
//! let join = JoinConfig {
//!     settings,
//!     cluster: ClusterFacts {
//!         ca_bundle: "LS0tLS1CRUdJTi...".into(),
//!         kubernetes_version: "1.31.2".into(),
//!         cluster_dns: "10.0.0.10".parse()?,
//!     },
//! };
//! assert_eq!(format!("{:?}", join.settings.bootstrap_token), "***");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The rest is at the crate root: the embedded [`Catalog`] (its [`Sku`]s,
//! [`Region`]s, prices and GPUs; made from public data by the
//! `generate_catalog` example), the `karpenter.azure.com/v1beta1`
//! [`AKSNodeClass`] with its defaults and validation, [`is_drifted`] (the
//! node-class hash, Kubernetes version and image checks), the
//! [`FailureCache`] (which Azure errors mark what unavailable, and for how
//! long), the provider's [`repair_policies`] and its [`LAUNCH_RANK`].
//!
//! Three families keep their own module:
//! - [`arm`]: a small Azure Resource Manager client (retries, long-running
//!   operations, paging, bearer tokens, timeouts and limits, `tracing`
//!   spans) behind the [`arm::ComputeApi`] trait;
//! - [`bootstrap`]: the custom data a VM joins AKS with ([`custom_data`],
//!   [`render_script`] from [`CustomDataInputs`]), as upstream's
//!   `aksscriptless` mode renders it;
//! - [`instancetype`]: VM sizes as instance types under [`Settings`]: the
//!   label keys ([`instancetype::labels`]), capacity and allocatable,
//!   offerings and prices, the filters.

// One module per part; callers name the parts from the root, so that moving
// code between these files changes no caller.
mod catalog;
mod failures;
mod imagefamily;
mod nodeclass;
mod nodeclass_drift;
mod provider;
mod repair;
mod settings;

pub mod arm;
pub mod bootstrap;
pub mod instancetype;

pub use bootstrap::{BootstrapError, CustomDataInputs, custom_data, render_script};
pub use catalog::{
    Capabilities, Catalog, CatalogError, CatalogProblem, GpuSku, Placement, Region, Sku,
};
pub use failures::{Attempt, AzureError, FailureCache, FailureReason};
pub use instancetype::{Settings, instance_types};
pub use nodeclass::{
    AKSNodeClass, AKSNodeClassSpec, AKSNodeClassStatus, ImageFamily, NetworkOptions,
    NodeClassError, NodeImage,
};
pub use nodeclass_drift::{DriftReason, is_drifted};
pub use provider::{
    AdoptError, AzureCloudProvider, AzureConfig, ClusterFacts, ClusterSecurityGroup, JoinConfig,
    LAUNCH_RANK,
};
pub use repair::repair_policies;
pub use settings::{
    AksSettings, BootstrapToken, NetworkDataplane, NetworkPlugin, NetworkPluginMode,
    PROVISION_MODE_SCRIPTLESS, SETTINGS, Setting, SettingProblem, SettingsError, SubnetId,
};
