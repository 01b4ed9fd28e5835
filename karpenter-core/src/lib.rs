//! The pure engine behind Kubernetes node autoscaling, after upstream Karpenter.
//!
//! Newcomers start with a [`Snapshot`]: the cluster as planning reads it
//! (NodePools, nodes joined with their NodeClaims, pods, DaemonSets,
//! PodDisruptionBudgets, volumes) and the cloud's instance types per NodePool.
//! Build one from objects you already have, or in code with the builders of
//! [`snapshot::build`]. Then ask:
//!
//! - [`plan_provisioning`] (or [`plan_provisioning_with`] and [`ProvisioningOptions`]) which
//!   pending pods go to capacity that exists and which NodeClaims to launch,
//!   with which instance types: a [`ProvisioningPlan`];
//! - [`plan_disruption`] (or [`plan_disruption_with`] and [`DisruptionOptions`]) which nodes to
//!   delete or replace at a moment, and why: a [`DisruptionPlan`].
//!
//! ```
//! use karpenter_core::snapshot::build::{InstanceTypeBuilder, NodePoolBuilder, PodBuilder};
//! use karpenter_core::scheduling::CapacityType;
//! use karpenter_core::{Snapshot, plan_disruption, plan_provisioning};
//!
//! let snapshot = Snapshot {
//!     node_pools: vec![NodePoolBuilder::new("default").build()],
//!     ..Snapshot::default()
//! }
//! .with_pods([PodBuilder::new("default", "web").requests("1", "2Gi").build()])
//! .with_instance_types(
//!     "default",
//!     vec![
//!         InstanceTypeBuilder::new("m-2")
//!             .cpu("2")
//!             .memory("8Gi")
//!             .offering("zone-a", CapacityType::OnDemand, 0.1)
//!             .build(),
//!     ],
//! );
//! let launches = plan_provisioning(&snapshot);
//! assert_eq!(launches.node_claims.len(), 1);
//! assert_eq!(launches.node_claims[0].pods[0].to_string(), "default/web");
//!
//! let disruptions = plan_disruption(&snapshot, "2026-06-01T00:00:00Z".parse()?);
//! assert!(disruptions.commands.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Both planners are pure: the same snapshot gives the same plan, byte for
//! byte once serialized. To act on plans, implement [`CloudProvider`] (the
//! cloud: instance types, launching and deleting instances) and [`Cluster`]
//! (the Kubernetes side) and hand them to a [`Driver`], which reads the
//! cluster, plans and carries the plans out, one reconcile at a time.
//!
//! The modules, from the ground up: [`api`] (`karpenter.sh/v1` NodePool and
//! NodeClaim, and the CapacityBuffer), [`resources`] (exact quantities),
//! [`scheduling`] (the requirement algebra, labels, taints),
//! [`cloudprovider`] and [`cluster`] (the traits), [`snapshot`] (with the
//! [`capacity_buffers`] it carries, and the NodeOverlays [`overlay`] applies
//! to it), the planners [`provisioning`] and [`disruption`], and the
//! [`driver`].
//!
//! It depends on `k8s-openapi` without choosing a Kubernetes version: the final
//! binary (or a test) enables one of k8s-openapi's `v1_*` features. Its
//! default `optimise` feature adds what goes beyond upstream's decisions: a
//! proven lower bound on a plan's price and the cost packing mode.
//!
//! # Threads
//!
//! Every planning type is `Send` and `Sync`: snapshots, options, plans, and
//! the machinery in between ([`disruption::Simulator`] and the passes,
//! candidates and allowances inside the planner). A snapshot can be moved to
//! a worker thread and planned there, and one simulator can serve several
//! threads at once, for instance to weigh disruption candidates in parallel;
//! what it works out on first use is kept in thread-safe memos, and its
//! answers are the same whichever thread asks, in whatever order. The
//! [`driver`] hands its planning to a [`driver::PlanningRunner`] the embedder
//! chooses (tokio's blocking pool with the `tokio` feature), so that planning
//! does not hold an async executor's thread.

pub mod api;
pub mod capacity_buffers;
pub mod cloudprovider;
pub mod cluster;
pub mod disruption;
pub mod driver;
pub mod error;
mod fast_hash;
pub mod features;
mod memo;
pub mod overlay;
pub mod planning;
pub mod pods;
pub mod provisioning;
pub mod resources;
pub mod scheduling;
pub mod snapshot;

/// The attribute the [`CloudProvider`] and [`Cluster`] traits are written
/// with (their async methods stay dyn-compatible): implement them under
/// `#[karpenter_core::async_trait]` without depending on `async-trait`
/// yourself.
pub use async_trait::async_trait;
pub use cloudprovider::{CloudProvider, CloudProviderError};
pub use cluster::{Cluster, ClusterError};
pub use disruption::{DisruptionOptions, DisruptionPlan, plan_disruption, plan_disruption_with};
pub use driver::{Driver, DriverOptions};
pub use error::Error;
pub use features::{FeatureGate, FeatureGates};
pub use planning::PlanningOptions;
pub use provisioning::{
    ProvisioningOptions, ProvisioningPlan, plan_provisioning, plan_provisioning_with,
};
pub use snapshot::Snapshot;
