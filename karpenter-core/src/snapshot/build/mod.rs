//! Builders for the objects of a [`Snapshot`](super::Snapshot) written in
//! code: a NodePool, an instance type, a pod, and an existing node joined to
//! its NodeClaim, each
//! filled in as a live cluster shows it, so that a test or a capacity planner
//! states only what matters to it.
//!
//! ```
//! use karpenter_core::provisioning::plan_provisioning;
//! use karpenter_core::scheduling::CapacityType;
//! use karpenter_core::snapshot::build::{
//!     InstanceTypeBuilder, NodeBuilder, NodePoolBuilder, PodBuilder,
//! };
//! use karpenter_core::Snapshot;
//!
//! let m4 = InstanceTypeBuilder::new("m-4")
//!     .cpu("4")
//!     .memory("16Gi")
//!     .offering("zone-a", CapacityType::OnDemand, 0.20)
//!     .build();
//! let snapshot = Snapshot {
//!     node_pools: vec![NodePoolBuilder::new("default").build()],
//!     nodes: vec![
//!         NodeBuilder::managed("node-a", "default", "m-4")
//!             .zone("zone-a")
//!             .allocatable("cpu", "3900m")
//!             .allocatable("memory", "15Gi")
//!             .allocatable("pods", "110")
//!             .build(),
//!     ],
//!     ..Snapshot::default()
//! }
//! .with_pods([
//!     PodBuilder::new("default", "db").requests("3", "8Gi").on_node("node-a").build(),
//!     PodBuilder::new("default", "web").requests("500m", "1Gi").build(),
//!     PodBuilder::new("default", "batch").requests("2", "4Gi").build(),
//! ])
//! .with_instance_types("default", vec![m4]);
//! let plan = plan_provisioning(&snapshot);
//! // web fits beside db; batch needs a new node.
//! assert_eq!(plan.existing_nodes[0].name, "node-a");
//! assert_eq!(plan.existing_nodes[0].pods, ["default/web"]);
//! assert_eq!(plan.node_claims.len(), 1);
//! assert_eq!(plan.node_claims[0].pods, ["default/batch"]);
//! ```

mod instance_type;
mod node;
mod pod;
mod pool;
#[cfg(test)]
mod tests;

pub use instance_type::InstanceTypeBuilder;
pub use node::NodeBuilder;
pub use pod::PodBuilder;
pub use pool::NodePoolBuilder;
