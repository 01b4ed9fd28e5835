//! Karpenter's scheduling and disruption engine as a library.
//!
//! This umbrella crate re-exports the workspace's crates and adds what the
//! `karpenter-sim` command line is made of, so that a library user can do
//! everything the command does.
//!
//! Newcomers start with the engine, [`core`]: build a
//! [`Snapshot`](core::Snapshot) of the cluster (pods, nodes, NodePools and the
//! provider's instance types), then ask
//! [`core::provisioning::plan_provisioning`] which NodeClaims to launch for the pending
//! pods, and [`core::disruption::plan_disruption`] which nodes to delete or
//! replace at a moment. A controller hands a
//! [`CloudProvider`](core::cloudprovider::CloudProvider) and a
//! [`Cluster`](core::cluster::Cluster) to [`core::driver::Driver`], which plans
//! and carries the plans out.
//!
//! ```
//! use karpenter::core::{Snapshot, disruption, provisioning};
//!
//! let snapshot = Snapshot::default();
//! let launches = provisioning::plan_provisioning(&snapshot);
//! assert!(launches.node_claims.is_empty());
//! let disruptions = disruption::plan_disruption(&snapshot, jiff::Timestamp::UNIX_EPOCH);
//! assert!(disruptions.commands.is_empty());
//! ```
//!
//! Each feature brings a part:
//!
//! - no feature: [`core`] alone, the pure engine (API types, resources, the
//!   requirement algebra, the planners, the provider and cluster traits, the
//!   driver);
//! - `azure`: [`azure`], the Azure provider and its HTTP client;
//! - `aws`: `aws` (the `karpenter-aws` crate), the AWS provider as far as it
//!   is built: the embedded EC2 catalog, instance types at AL2023 defaults,
//!   the `EC2NodeClass`;
//! - `fake`: [`fake`], the in-memory provider and cluster for tests and
//!   benchmarks, with the conformance suite and workload generators;
//! - `scenario` (with `azure` and `fake`): [`scenario`] (the `karpenter-scenario`
//!   crate), reading Kubernetes manifests (`kubectl get -o yaml|json` dumps and
//!   scenario files) into typed objects, and [`sim`], what `karpenter-sim` prints
//!   (summaries, plan tables, timings);
//! - `optimise`: the engine's lower bound on a plan's price and its cost
//!   packing mode (`Packing::Cost`), with their LP solver;
//! - `cli` (the default, with `scenario` and `optimise`): the `karpenter-sim` binary;
//! - `tokio`: the driver's planning on tokio's blocking pool
//!   (`core::driver::SpawnBlocking`, present with this feature only);
//! - `kube`: `kube` (the `karpenter-kube` crate), the engine's `Cluster` over a Kubernetes API server
//!   (`KubeCluster`, the Kubernetes events), without the controller binary
//!   or a cloud.
//!
//! Embedding the engine: depend on `karpenter` with `default-features = false` (the
//! default `cli` feature picks a Kubernetes version for `k8s-openapi`, which only a
//! final binary should do), enable one `k8s-openapi` version feature yourself, and take
//! only the parts you use.

#[cfg(feature = "aws")]
pub use karpenter_aws as aws;
#[cfg(feature = "azure")]
pub use karpenter_azure as azure;
pub use karpenter_core as core;
#[cfg(feature = "fake")]
pub use karpenter_fake as fake;
#[cfg(feature = "kube")]
pub use karpenter_kube as kube;
#[cfg(feature = "scenario")]
pub use karpenter_scenario as scenario;

#[cfg(feature = "scenario")]
pub mod replay;
#[cfg(feature = "scenario")]
pub mod sim;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// `docs/library.md`'s examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDoctests;
