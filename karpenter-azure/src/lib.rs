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
//!         network: NetworkOptions::default(),
//!     },
//! );
//! # drop(provider);
//! ```
//!
//! The parts:
//! - [`arm`]: a small Azure Resource Manager client (retries, long-running
//!   operations, paging, bearer tokens, timeouts and limits, `tracing`
//!   spans) behind the [`arm::ComputeApi`] trait;
//! - [`catalog`]: the embedded SKU, price, region and GPU tables (made from
//!   public data by the `generate_catalog` example);
//! - [`instancetype`]: VM sizes as instance types (labels, capacity and
//!   allocatable, offerings and prices, the filters) under [`Settings`];
//! - [`nodeclass`]: the `karpenter.azure.com/v1beta1` `AKSNodeClass`:
//!   defaults and validation;
//! - [`drift`]: the node-class hash, Kubernetes version and image checks;
//! - [`failures`]: the failure cache (which Azure errors mark what
//!   unavailable, and for how long);
//! - [`provider`]: the provider itself; [`repair`]: its repair policies.

pub mod arm;
pub mod catalog;
pub mod drift;
pub mod failures;
pub mod instancetype;
pub mod nodeclass;
pub mod provider;
pub mod repair;

pub use catalog::Catalog;
pub use instancetype::{Settings, instance_types};
pub use nodeclass::{AKSNodeClass, AKSNodeClassSpec, ImageFamily, NetworkOptions, NodeClassError};
pub use provider::{AzureCloudProvider, AzureConfig};
