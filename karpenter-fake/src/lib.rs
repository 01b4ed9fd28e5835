//! An in-memory cloud provider and cluster for tests and benchmarks of the karpenter
//! engine.
//!
//! It holds the `karpenter.fake/v1alpha1` `InstanceType` document that scenario
//! files use to describe the fake provider's catalog ([`InstanceTypeDocument`]),
//! generated catalogs ([`catalog`]), workloads ([`workload`]) and running clusters
//! ([`cluster`]), the fake provider's repair policies ([`repair`]), and an
//! in-memory [`CloudProvider`](karpenter_core::cloudprovider::CloudProvider)
//! ([`provider::FakeCloudProvider`]). Fault injection, call recording and the
//! conformance suite follow.

pub mod catalog;
pub mod cluster;
pub mod document;
pub mod manifest;
pub mod provider;
pub mod repair;
pub mod workload;

pub use document::{InstanceTypeDocument, OfferingDocument};
