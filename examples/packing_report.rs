//! The cost-packing report: for unconstrained mixes of 200, 2,000 and 20,000
//! pods (cpu 100m-4, memory 100Mi-32Gi; balanced, cpu-heavy and memory-heavy
//! shapes) on the embedded Azure eastus catalog and on a fake catalog of
//! three families (2, 4 and 8 GiB per vCPU), the price of upstream-mode
//! plans and cost-mode plans against the proven lower bound, with the time
//! each took and what the cost mode saves; then the same for the diverse
//! constrained mix (zonal spread, hostname spread, zonal affinity, hostname
//! anti-affinity and plain pods, a fifth each), where the cost mode must
//! never be dearer.
//!
//! ```text
//! cargo run --release --example packing_report
//! ```

use std::time::Instant;

use karpenter::azure::instancetype::{Settings, instance_types, labels::well_known_labels};
use karpenter::core::planning::Packing;
use karpenter::core::provisioning::{plan_provisioning, plan_provisioning_with};
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::core::snapshot::Snapshot;
use karpenter::fake::generate::catalog::three_families;
use karpenter::fake::generate::workload::{diverse_pods, one_pool_snapshot, unconstrained_mix};

fn main() {
    let azure = instance_types(
        karpenter::azure::Catalog::embedded(),
        &Settings::for_region("eastus"),
    );
    let catalogs = [
        ("azure eastus", azure, well_known_labels()),
        (
            "three families",
            three_families(),
            WellKnownLabels::core().clone(),
        ),
    ];
    println!(
        "| catalog | workload | pods | upstream $/h | cost mode $/h | lower bound $/h | upstream / bound | cost / bound | saving | upstream s | cost s | bound s |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, types, well_known) in &catalogs {
        for pods in [200usize, 2_000, 20_000] {
            let snapshot = one_pool_snapshot(types, well_known, unconstrained_mix(pods, 7));
            row(name, "unconstrained", pods, &snapshot);
        }
        for pods in [200usize, 2_000] {
            let snapshot = one_pool_snapshot(types, well_known, diverse_pods(pods, 42));
            row(name, "constrained", pods, &snapshot);
        }
    }
}

/// One line of the table.
fn row(catalog: &str, workload: &str, pods: usize, snapshot: &Snapshot) {
    let start = Instant::now();
    let mut plan = plan_provisioning(snapshot);
    let plan_time = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let cost = plan_provisioning_with(snapshot, &Packing::Cost.into());
    let cost_time = start.elapsed().as_secs_f64();
    let start = Instant::now();
    plan.add_lower_bound(snapshot);
    let bound_time = start.elapsed().as_secs_f64();
    let bound = plan.lower_bound_per_hour.unwrap_or(f64::NAN);
    let (upstream, cost) = (plan.total_price_per_hour, cost.total_price_per_hour);
    println!(
        "| {catalog} | {workload} | {pods} | {upstream:.3} | {cost:.3} | {bound:.3} | {:.3} | {:.3} | {:.1} % | {plan_time:.2} | {cost_time:.2} | {bound_time:.2} |",
        upstream / bound,
        cost / bound,
        100.0 * (1.0 - cost / upstream),
    );
}
