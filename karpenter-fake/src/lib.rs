//! An in-memory cloud provider and cluster for tests and benchmarks of the karpenter
//! engine.
//!
//! So far this crate holds the `karpenter.fake/v1alpha1` `InstanceType` document that
//! scenario files use to describe the fake provider's catalog
//! ([`InstanceTypeDocument`]) and generated workloads ([`workload`]).

pub mod catalog;
pub mod cluster;
pub mod document;
pub mod manifest;
pub mod repair;
pub mod workload;

pub use document::{InstanceTypeDocument, OfferingDocument};
