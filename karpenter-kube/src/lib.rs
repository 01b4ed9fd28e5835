//! The karpenter engine on a Kubernetes cluster, over
//! [kube-rs](https://docs.rs/kube).
//!
//! Newcomers start with [`KubeCluster`]: the engine's
//! [`Cluster`](karpenter_core::cluster::Cluster) over an API server, with
//! watch-backed stores for every kind the engine reads. Hand it, with a
//! cloud provider, to [`karpenter_core::driver::Driver`], and reconcile.
//! [`EventRecorder`] turns what the driver did into Kubernetes Events.
//!
//! The `karpenter-controller` binary (the default `controller` feature) runs
//! exactly that, with leader election, metrics and health endpoints; its
//! parts are in [`controller`]. Embedders take the library alone with
//! `default-features = false` (the binary picks a Kubernetes API version for
//! `k8s-openapi`, which a library must not).

mod cluster;
mod events;

#[cfg(feature = "controller")]
pub mod controller;

pub use cluster::{FIELD_MANAGER, KubeCluster, KubeClusterOptions, SyncError};
pub use events::{
    EVENT_QUEUE, EventRecorder, Recorded, kubernetes_events, node_claim_ref, node_ref, nominated,
    pod_ref,
};

// The examples in docs/controller.md compile.
#[cfg(doctest)]
#[doc = include_str!("../../docs/controller.md")]
struct ControllerDocs;
