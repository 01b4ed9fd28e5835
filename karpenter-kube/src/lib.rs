//! The karpenter engine on a Kubernetes cluster.

#[cfg(feature = "controller")]
pub mod controller;
