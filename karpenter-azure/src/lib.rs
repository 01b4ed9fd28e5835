//! The Azure (AKS) cloud provider for the karpenter engine.
//!
//! So far this crate holds the `karpenter.azure.com/v1beta1` `AKSNodeClass` type
//! ([`AKSNodeClass`]) that scenarios and clusters carry; the SKU catalog, prices,
//! offerings and the ARM client follow.

pub mod nodeclass;

pub use nodeclass::{AKSNodeClass, AKSNodeClassSpec};
