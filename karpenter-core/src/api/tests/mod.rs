//! Tests of the `karpenter.sh/v1` types against realistic manifests.

mod defaults;
mod duration;
mod fixtures;
mod fuzz;
mod resource;
mod roundtrip;
