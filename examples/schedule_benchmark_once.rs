//! Plans upstream's benchmark workload once and prints what it made, how long it
//! took and the plan's price: `cargo run --release --example schedule_benchmark_once -- 20000`,
//! or with a number of instance types (400 by default):
//! `cargo run --release --example schedule_benchmark_once -- 100000 400`. The whole
//! process's peak memory: `/usr/bin/time -v target/release/examples/schedule_benchmark_once 100000`.

use std::time::Instant;

use karpenter::core::provisioning::plan_provisioning;
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::fake::generate::{catalog, workload};

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut number = |default: usize| -> Result<usize, std::num::ParseIntError> {
        args.next().map_or(Ok(default), |a| a.parse())
    };
    let n = number(1_000)?;
    let type_count = number(400)?;
    let types = catalog::sized_instance_types(type_count);
    let snapshot = workload::one_pool_snapshot(
        &types,
        WellKnownLabels::core(),
        workload::diverse_pods_lazily(n, 42),
    );
    drop(types);
    let start = Instant::now();
    let plan = plan_provisioning(&snapshot);
    let took = start.elapsed();
    println!(
        "{n} pods, {type_count} instance types: {} new claims, {} unschedulable, {:.2}/h, planned in {:.3} s ({:.0} pods/s)",
        plan.node_claims.len(),
        plan.unschedulable.len(),
        plan.total_price_per_hour,
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    Ok(())
}
