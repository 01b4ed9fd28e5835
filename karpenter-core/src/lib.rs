//! The pure engine behind Kubernetes node autoscaling, after upstream Karpenter.
//!
//! This crate holds no I/O: Karpenter's API types ([`api`]), exact resource
//! arithmetic ([`resources`]) and the requirement algebra ([`scheduling`]) that the
//! [`provisioning`] and [`disruption`] planners are built on; planning reads a
//! [`Snapshot`] and returns a plan. The [`cloudprovider::CloudProvider`] and
//! [`cluster::Cluster`] traits describe the outside world, and the [`driver`] runs
//! the planners against them, turning plans into launches and deletions.
//!
//! It depends on `k8s-openapi` without choosing a Kubernetes version: the final
//! binary (or a test) enables one of k8s-openapi's `v1_*` features.
//!
//! # Threads
//!
//! Every planning type is `Send` and `Sync`: snapshots, options, plans, and
//! the machinery in between ([`disruption::Simulator`], and inside the
//! disruption planner its passes, candidates and allowances). A snapshot can be
//! moved to a worker thread and planned there, and one simulator can serve
//! several threads at once, for instance to weigh disruption candidates in
//! parallel; what it works out on first use is kept in thread-safe memos, and
//! its answers are the same whichever thread asks, in whatever order. The
//! [`driver`] hands its planning to a [`driver::PlanningRunner`] the embedder
//! chooses (tokio's blocking pool with the `tokio` feature), so that planning
//! does not hold an async executor's thread.

pub mod api;
pub mod cloudprovider;
pub mod cluster;
pub mod disruption;
pub mod driver;
pub mod error;
mod memo;
mod pods;
pub mod provisioning;
pub mod resources;
pub mod scheduling;
pub mod snapshot;

/// The attribute the [`cloudprovider::CloudProvider`] and [`cluster::Cluster`]
/// traits are written with (their async methods stay dyn-compatible):
/// implement them under `#[karpenter_core::async_trait]` without depending on
/// `async-trait` yourself.
pub use async_trait::async_trait;
pub use error::Error;
pub use snapshot::Snapshot;
