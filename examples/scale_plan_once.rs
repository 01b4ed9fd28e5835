//! Times one whole disruption plan on the scale benchmarks' cluster:
//! `cargo run --release --example scale_plan_once -- 5000`.
//!
//! With `one-thread` after the node count, the cluster is built and planned
//! inside a single-thread rayon pool, so that every instruction of the plan
//! is counted under `plan_disruption_with` (else the work handed to rayon's threads is
//! counted under them):
//!
//! ```text
//! cargo build --release --example scale_plan_once
//! valgrind --tool=callgrind --toggle-collect='*planner::plan_disruption_with*' \
//!     target/release/examples/scale_plan_once 5000 one-thread
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```

use std::time::Instant;

use karpenter::core::disruption::plan_disruption;
use karpenter::fake::generate::scale::scale_cluster;

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5_000);
    let threads = match args.next().as_deref() {
        None => 0,
        Some("one-thread") => 1,
        Some(other) => {
            return Err(format!("unknown argument {other:?}: expected one-thread").into());
        }
    };
    // 0 threads: rayon's default, one per core.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let now = "2026-06-01T00:00:00Z".parse()?;
    pool.install(|| {
        let snapshot = scale_cluster(nodes, 42);
        let start = Instant::now();
        let plan = plan_disruption(&snapshot, now);
        println!(
            "{nodes} nodes, {} pods: {} commands in {:.3} s",
            snapshot.pods.len(),
            plan.commands.len(),
            start.elapsed().as_secs_f64()
        );
    });
    Ok(())
}
