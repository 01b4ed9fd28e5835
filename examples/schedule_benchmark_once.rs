//! Plans upstream's benchmark workload once and prints what it made, how long it
//! took and the plan's price: `cargo run --release --example schedule_benchmark_once -- 20000`.

use std::sync::Arc;
use std::time::Instant;

use karpenter::core::api::NodePool;
use karpenter::core::provisioning::schedule;
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::core::snapshot::Snapshot;
use karpenter::fake::generate::{catalog, workload};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1_000);
    let pool: NodePool = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"requirements": []}}},
    }))?;
    let types: Arc<[_]> = catalog::sized_instance_types(400).into();
    let snapshot = Snapshot {
        instance_types: [("default".to_string(), types)].into(),
        node_pools: vec![pool],
        well_known_labels: WellKnownLabels::core().clone(),
        ..Snapshot::default()
    }
    .with_pods(workload::diverse_pods(n, 42));
    let start = Instant::now();
    let plan = schedule(&snapshot);
    let took = start.elapsed();
    println!(
        "{n} pods: {} new claims, {} unschedulable, {:.2}/h, planned in {:.3} s ({:.0} pods/s)",
        plan.node_claims.len(),
        plan.unschedulable.len(),
        plan.total_price_per_hour,
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    Ok(())
}
