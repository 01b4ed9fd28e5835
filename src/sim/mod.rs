//! What `karpenter-sim` prints: a scenario's summary, plans and replays as
//! tables, and the time each phase took.
//!
//! The command line is a thin shell over these and [`crate::scenario`]: a library
//! user gets the same summary and timings with the same calls.

mod charts;
mod disrupt;
mod provision;
mod replay;
mod report;
mod summary;
mod timings;

pub use charts::{Chart, ChartError, replay_charts};
pub use disrupt::disruption_table;
pub use provision::plan_table;
pub use replay::{replay_csv, replay_table};
pub use report::replay_html;
pub use summary::{NodePoolSummary, Summary};
pub use timings::Timings;
