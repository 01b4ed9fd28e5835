//! Generated inputs for tests, benchmarks and examples: instance-type
//! catalogs, workloads, running clusters and their manifests. The same
//! arguments (and seed) always give the same output.
//!
//! - [`catalog`]: `n` sized types, upstream's assorted cross product, and
//!   three families of linearly priced sizes;
//! - [`workload`]: pending pods after upstream's scheduling benchmark, and a
//!   one-pool snapshot around them;
//! - [`running`]: clusters of managed nodes already running a workload, for
//!   disruption;
//! - [`scale`]: the large, busy running cluster of the scale benchmarks;
//! - [`manifest`]: objects written as `kubectl get -o yaml|json` prints them.

pub mod catalog;
pub mod manifest;
pub mod running;
pub mod scale;
pub mod workload;
