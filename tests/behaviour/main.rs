//! Upstream Karpenter's behaviour, as scenario files with the plans they
//! must give: `karpenter-sim` runs every provisioning scenario
//! (`tests/scenarios/`) and disruption scenario (`tests/disruption-scenarios/`),
//! and the attach-limit scenarios' plans are broken on purpose for the plan
//! validator to notice.
//!
//! One test binary for the area, a module per subject: each binary links
//! every dependency, and one link is cheaper in time and disk than three.

mod attach_limits;
mod common;
mod disruption;
mod provision;
