//! Replays through the library (`karpenter::replay`): one test per trace
//! event kind and disruption (`events`), terminationGracePeriod
//! (`grace_period`), the driver's quiet skip (`quiet_skip`), the Azure
//! provider (`azure`) and the AWS provider (`aws`), its starting nodes (`aws_start`) and options
//! (`aws_options`), over the shared cluster and trace builders
//! (`support`).
//!
//! One test binary for the area, a module per subject: each binary links
//! every dependency, and one link is cheaper in time and disk than four.

mod aws;
mod aws_options;
mod aws_start;
mod azure;
mod events;
mod grace_period;
mod quiet_skip;
mod support;
