//! Times one whole disruption plan on the scale benchmarks' cluster.
//! `cargo run --release --example scale_plan_once -- 5000`.

use std::time::Instant;

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
    let snapshot = scale_cluster(nodes, 42);
    let now = "2026-06-01T00:00:00Z".parse()?;
    let start = Instant::now();
    let plan = plan(&snapshot, now);
    println!(
        "{nodes} nodes, {} pods: {} commands in {:.3} s",
        snapshot.pods.len(),
        plan.commands.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
