//! An in-memory cloud provider and cluster for tests and benchmarks of the karpenter
//! engine.
//!
//! So far this crate holds the `karpenter.fake/v1alpha1` `InstanceType` document that
//! scenario files use to describe the fake provider's catalog
//! ([`InstanceTypeDocument`]).

pub mod document;

pub use document::{InstanceTypeDocument, OfferingDocument};
