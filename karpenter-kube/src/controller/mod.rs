//! The karpenter-controller binary's infrastructure: its metrics and health
//! endpoints, its logs, and leader election.
//!
//! Each module stands alone: [`http`] serves what [`metrics`] renders.

pub mod http;
pub mod leader;
pub mod logging;
pub mod metrics;
