//! What `karpenter-sim` prints: a scenario's summary, plans and replays as
//! tables, and the time each phase took.
//!
//! The command line is a thin shell over these and [`crate::scenario`]: a library
//! user gets the same summary and timings with the same calls.

mod disrupt;
mod provision;
mod replay;
mod summary;
mod timings;

pub use disrupt::disruption_table;
pub use provision::plan_table;
pub use replay::{replay_csv, replay_table};
pub use summary::{NodePoolSummary, Summary};
pub use timings::Timings;
