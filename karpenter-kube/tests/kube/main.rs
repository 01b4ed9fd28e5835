//! `KubeCluster` and `karpenter-controller` against a Kubernetes API served
//! on 127.0.0.1 by the test (karpenter-apiserver): the cluster's watches and
//! writes (`cluster`); with the `kwok` feature (`--provider fake`), the
//! controller in-process end to end (`controller`), the binary as a process
//! (`binary`), the manifests of `deploy/` (`deploy`) and `deploy/azure/`
//! (`deploy_azure`, with the `azure` feature), and a real cluster
//! when `KARPENTER_E2E_KUBECONFIG` names one (`real_cluster`, skipped
//! otherwise), over a shared world (`support`).
//!
//! One test binary for the crate, a module per subject: each binary links
//! every dependency, and one link is cheaper in time and disk than five.

mod cluster;

#[cfg(feature = "kwok")]
mod binary;
#[cfg(feature = "kwok")]
mod controller;
#[cfg(feature = "kwok")]
mod deploy;
#[cfg(feature = "azure")]
mod deploy_azure;
#[cfg(feature = "kwok")]
mod real_cluster;
#[cfg(feature = "aws")]
mod real_cluster_aws;
#[cfg(any(feature = "kwok", feature = "aws"))]
mod real_cluster_common;
#[cfg(feature = "kwok")]
mod support;
