//! The engine through the umbrella crate's library: disruption plans on the
//! bundled example (`plan`) and on a real cluster's dump (`dump`), the
//! reference simulation (`simulate`) and the simulator that must agree with
//! it (`simulator`), and planning on any number of threads (`threads`).
//!
//! One test binary for the area, a module per subject: each binary links
//! every dependency, and one link is cheaper in time and disk than five.

mod dump;
mod plan;
mod simulate;
mod simulator;
mod threads;
