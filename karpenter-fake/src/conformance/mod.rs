//! The conformance suites: the contracts written on the [`CloudProvider`]
//! and [`Cluster`] traits, checked against a live implementation, as
//! object_store's suite checks a store. The fake runs both in its tests; the
//! Azure provider runs [`run`] against a local ARM server; a cluster over a
//! real API server runs [`run_cluster`].
//!
//! ```
//! # async fn check(provider: &dyn karpenter_core::cloudprovider::CloudProvider,
//! #                cluster: &dyn karpenter_core::cluster::Cluster,
//! #                pool: &karpenter_core::api::NodePool) {
//! let mut checks = karpenter_fake::conformance::run(provider, pool).await;
//! checks.extend(karpenter_fake::conformance::run_cluster(cluster).await);
//! let failed: Vec<_> = checks.iter().filter(|c| c.outcome.is_err()).collect();
//! assert!(failed.is_empty(), "{failed:#?}");
//! # }
//! ```
//!
//! [`CloudProvider`]: karpenter_core::cloudprovider::CloudProvider
//! [`Cluster`]: karpenter_core::cluster::Cluster

mod check;
mod cluster;
mod provider;

pub use check::{Check, CheckFailure};
pub use cluster::run_cluster;
pub use provider::run;
