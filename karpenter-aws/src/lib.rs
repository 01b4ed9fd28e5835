//! The AWS (EKS) cloud provider for the karpenter engine, after
//! aws/karpenter-provider-aws (main at 1d92708, core v1.14).
//!
//! Being built: the embedded catalog of EC2 instance types (made from public
//! data, sources in `data/SOURCES.md`), instance types as upstream builds
//! them for an `EC2NodeClass`, and the `karpenter.k8s.aws/v1` `EC2NodeClass`
//! itself.

pub mod nodeclass;

pub use nodeclass::{EC2NodeClass, EC2NodeClassSpec, EC2NodeClassStatus, InvalidNodeClass};
