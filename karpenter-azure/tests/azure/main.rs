//! The Azure crate's integration tests, one binary (linking every dependency
//! once rather than per file), one module per part: the ARM client (its
//! requests, its limits, what it logs), the failure cache, instance types and
//! kube-reserved, the node class, the images a class without status images
//! boots, and the provider on a fake ARM. `common`
//! holds the fake ARM the provider tests share.
//!
//! The tests share one process: `arm_tracing` captures logs with a
//! subscriber scoped to its own thread (`set_default`), never a global one,
//! so the other modules' calls stay out of its capture.

mod common;

mod arm_client;
mod arm_limits;
mod arm_tracing;
mod failures;
mod images;
mod instance_types;
mod join;
mod kube_reserved;
mod nodeclass;
mod provider;
mod selectors;
