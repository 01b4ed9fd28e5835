//! `karpenter-sim` as a user runs it, as a process: its commands, flags,
//! exit statuses and output (`sim`), the replay command (`replay`),
//! Azure's offerings through `--provider azure` (`azure_offerings`), and
//! the AWS provider through `--provider aws` (`aws`).
//!
//! One test binary for the area, a module per subject: each binary links
//! every dependency, and one link is cheaper in time and disk than three.

mod aws;
mod azure_offerings;
mod replay;
mod sim;
