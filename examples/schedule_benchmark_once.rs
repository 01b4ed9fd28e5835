//! Plans upstream's benchmark workload once and prints what it made, how long it
//! took and the plan's price: `cargo run --release --example schedule_benchmark_once -- 20000`,
//! or with a number of instance types (400 by default):
//! `cargo run --release --example schedule_benchmark_once -- 100000 400`, or over the
//! AWS provider's whole catalog (1,382 EC2 types for an AL2023 EC2NodeClass in three
//! zones of us-east-1, as `benches/aws.rs` plans):
//! `cargo run --release --example schedule_benchmark_once -- 20000 aws`. The whole
//! process's peak memory: `/usr/bin/time -v target/release/examples/schedule_benchmark_once 100000`.

use std::time::Instant;

use karpenter::aws::EC2NodeClass;
use karpenter::core::cloudprovider::InstanceType;
use karpenter::core::provisioning::plan_provisioning;
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::fake::generate::{catalog, workload};

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(1_000), |a| a.parse())?;
    let (types, labels) = match args.next().as_deref() {
        Some("aws") => (aws_types()?, karpenter::aws::well_known_labels()),
        count => {
            let count: usize = count.map_or(Ok(400), str::parse)?;
            let types = catalog::sized_instance_types(count);
            (types, WellKnownLabels::core().clone())
        }
    };
    let type_count = types.len();
    let snapshot =
        workload::one_pool_snapshot(&types, &labels, workload::diverse_pods_lazily(n, 42));
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

/// The AWS catalog's types for an AL2023 EC2NodeClass whose subnets are in
/// three zones of us-east-1.
fn aws_types() -> Result<Vec<InstanceType>, Box<dyn std::error::Error>> {
    let class: EC2NodeClass = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole-bench",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
        },
        "status": {"subnets": [
            {"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"},
            {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"},
            {"id": "subnet-c", "zone": "us-east-1c", "zoneID": "use1-az4"},
        ]},
    }))?;
    let catalog = karpenter::aws::Catalog::embedded()?;
    let options = karpenter::aws::InstanceTypeOptions::default();
    Ok(karpenter::aws::instance_types_for(
        catalog,
        "us-east-1",
        &class,
        &options,
    )?)
}
