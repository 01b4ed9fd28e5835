//! What a cloud provider offers the engine: instance types and their offerings.
//!
//! The `CloudProvider` trait itself (create, delete, list, ...) comes with the driver;
//! planning needs only these values, which a provider computes for each NodePool.

mod instance_type;
mod offering;
mod repair;

pub use instance_type::InstanceType;
pub(crate) use instance_type::cheaper;
pub use offering::{Offering, OfferingFilter};
pub use repair::RepairPolicy;
