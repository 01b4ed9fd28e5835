//! The Azure (AKS) cloud provider for the karpenter engine.
//!
//! - [`arm`]: a small Azure Resource Manager client (retries, long-running
//!   operations, paging, bearer tokens, timeouts and limits) behind the
//!   [`arm::ComputeApi`] trait;
//! - [`catalog`]: the embedded SKU, price, region and GPU tables (made from
//!   public data by the `generate_catalog` example);
//! - [`instancetype`]: VM sizes as instance types (labels, capacity and
//!   allocatable, offerings and prices, the filters);
//! - [`drift`]: the node-class hash, Kubernetes version and image checks;
//! - [`failures`]: the failure cache (which Azure errors mark what unavailable, and for how long);
//! - [`provider`]: the [`CloudProvider`](karpenter_core::cloudprovider::CloudProvider) itself;
//! - [`repair`]: the repair policies;
//! - [`nodeclass`]: the `karpenter.azure.com/v1beta1` `AKSNodeClass`: defaults,
//!   validation, and the settings it gives instance types.

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
