//! Reads manifests the way `karpenter-sim` does and prints what a NodePool would be
//! asked for: the library calls behind `karpenter-sim summary`.
//!
//! `cargo run --example summarise -- examples/scenarios/provision-basic.yaml`

use karpenter::scenario::{LoadOptions, Scenario};
use karpenter::sim::Summary;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        files.push(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/scenarios/provision-basic.yaml"
            )
            .into(),
        );
    }
    let scenario = Scenario::load_files(&files, &LoadOptions::default())?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    let summary = Summary::of(&scenario);
    println!("{} pending pods ask for:", summary.pending_pods);
    for (resource, quantity) in &summary.pending_requests {
        println!("  {resource:<20} {quantity}");
    }
    for pool in &summary.node_pools {
        println!(
            "NodePool {} (weight {}) owns {} nodes",
            pool.name, pool.weight, pool.nodes
        );
    }
    Ok(())
}
