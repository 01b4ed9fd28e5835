//! Reading manifests through the public API: YAML aliases judged by what
//! they expand to (`aliases`), the EKS documents (`aws`), a clear error for
//! every kind of bad input (`errors`), and a real cluster dump read without
//! loss (`dump_lossless`).
//!
//! One test binary for the crate, a module per subject: each binary links
//! every dependency, and one link is cheaper in time and disk than three.

mod aliases;
mod aws;
mod dump_lossless;
mod errors;
