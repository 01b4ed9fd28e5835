//! The AWS crate's integration tests, one binary: the provider over the
//! in-memory EC2 (`common` sets it up), the conformance suite among them;
//! with feature `sdk`, the same suite and each EC2 call over the SDK-backed
//! client, against a loopback server playing EC2 (`loopback`).

mod common;

mod adopt;
mod capacity;
mod deploy;
mod drift;
mod fleet;
mod join;
#[cfg(feature = "sdk")]
mod loopback;
mod placement;
mod properties;
mod provider;
mod readback;
#[cfg(feature = "sdk")]
mod sdk_calls;
#[cfg(feature = "sdk")]
mod sdk_conformance;
mod subnets;
mod templates;
#[cfg(feature = "sdk")]
mod validation;
