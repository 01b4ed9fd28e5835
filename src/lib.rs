//! Karpenter's scheduling and disruption engine as a library.
//!
//! This umbrella crate re-exports the workspace's crates and adds what the
//! `karpenter-sim` command line is made of, so that a library user can do
//! everything the command does:
//!
//! - [`core`]: the pure engine (API types, resources, the requirement algebra);
//! - [`azure`]: the Azure provider;
//! - [`fake`]: the in-memory provider for tests and benchmarks;
//! - [`scenario`]: reading Kubernetes manifests (`kubectl get -o yaml|json` dumps and
//!   scenario files) into typed objects;
//! - [`sim`]: what `karpenter-sim` prints (summaries, timings).
//!
//! Embedding the engine: depend on `karpenter` with `default-features = false` (the
//! default `cli` feature picks a Kubernetes version for `k8s-openapi`, which only a
//! final binary should do), enable one `k8s-openapi` version feature yourself, and take
//! only the parts you use: `azure` (the Azure provider and its HTTP client), `fake` (the
//! in-memory provider and cluster), `scenario` (the manifest reader and `sim`, with
//! both providers), `tokio` (the driver's planning on tokio's blocking pool). Without
//! any, the crate is [`core`] alone.

#[cfg(feature = "azure")]
pub use karpenter_azure as azure;
pub use karpenter_core as core;
#[cfg(feature = "fake")]
pub use karpenter_fake as fake;

#[cfg(feature = "scenario")]
pub mod scenario;
#[cfg(feature = "scenario")]
pub mod sim;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
