//! The karpenter-controller binary's infrastructure: its metrics and health
//! endpoints, its logs, and leader election.

pub mod metrics;
