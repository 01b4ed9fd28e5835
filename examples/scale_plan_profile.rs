//! One whole disruption plan on the scale benchmarks' cluster, run entirely
//! on one rayon thread, for instruction counts of the plan alone:
//!
//! ```text
//! cargo build --release --example scale_plan_profile
//! valgrind --tool=callgrind --toggle-collect='*planner::plan_with*' \
//!     target/release/examples/scale_plan_profile 5000
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Building the cluster and planning both run inside one single-thread pool,
//! so the work rayon would hand to other threads is counted under
//! `plan_with` too (with `scale_plan_once` it lands under rayon's threads).

use karpenter::core::disruption::plan;
use karpenter::fake::generate::scale::scale_cluster;

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let nodes: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(5_000);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let now = "2026-06-01T00:00:00Z".parse()?;
    let commands = pool.install(|| plan(&scale_cluster(nodes, 42), now).commands.len());
    println!("{nodes} nodes: {commands} commands");
    Ok(())
}
