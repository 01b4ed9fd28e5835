//! karpenter-core's integration tests, as one test binary: each former
//! test file is a module here, so the crate and its dependencies are linked
//! once rather than once per file.
//!
//! - [`disruption`]: disruption plans over random clusters;
//! - [`overlay`]: NodeOverlays over random clusters;
//! - [`provisioning`]: provisioning plans over random clusters, checked by
//!   the plan validator, and the validator checked against broken plans;
//! - [`requirement_laws`]: the requirement algebra against a brute-force
//!   model;
//! - [`send_sync`]: every public planning type is `Send` and `Sync` (checked
//!   when this builds);
//! - [`static_pools`]: static NodePools over random clusters.
//!
//! Run one area with a filter on its module, e.g.
//! `cargo test -p karpenter-core --test properties provisioning::`.

mod disruption;
mod overlay;
mod provisioning;
mod requirement_laws;
mod send_sync;
mod static_pools;
