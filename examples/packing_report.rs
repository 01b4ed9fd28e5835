//! The cost-packing report: for unconstrained mixes of 200, 2,000 and 20,000
//! pods (cpu 100m-4, memory 100Mi-32Gi; balanced, cpu-heavy and memory-heavy
//! shapes) on the embedded Azure eastus catalog and on a fake catalog of
//! three families (2, 4 and 8 GiB per vCPU), the price of upstream-mode
//! plans against the proven lower bound, with the time each took.
//!
//! ```text
//! cargo run --release --example packing_report
//! ```
//!
//! The cost-optimising mode (`--packing cost`) is not built yet; its column
//! reads `-` until it is.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use karpenter::azure::instancetype::{Settings, instance_types, labels::well_known_labels};
use karpenter::core::api::NodePool;
use karpenter::core::cloudprovider::InstanceType;
use karpenter::core::provisioning::schedule;
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::core::snapshot::Snapshot;
use karpenter::fake::catalog::three_families;
use karpenter::fake::workload::unconstrained_mix;

fn snapshot(types: &[InstanceType], well_known: &WellKnownLabels, pods: usize) -> Snapshot {
    let pool: NodePool = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"requirements": []}}},
    }))
    .expect("a NodePool");
    Snapshot {
        instance_types: BTreeMap::from([("default".to_owned(), Arc::from(types.to_vec()))]),
        node_pools: vec![pool],
        pods: unconstrained_mix(pods, 7),
        well_known_labels: well_known.clone(),
        ..Snapshot::default()
    }
}

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
        "| catalog | pods | upstream $/h | cost mode $/h | lower bound $/h | upstream / bound | cost / bound | plan s | bound s |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, types, well_known) in &catalogs {
        for pods in [200usize, 2_000, 20_000] {
            let snapshot = snapshot(types, well_known, pods);
            let start = Instant::now();
            let mut plan = schedule(&snapshot);
            let plan_time = start.elapsed().as_secs_f64();
            let start = Instant::now();
            plan.add_lower_bound(&snapshot);
            let bound_time = start.elapsed().as_secs_f64();
            let bound = plan.lower_bound_per_hour.unwrap_or(f64::NAN);
            println!(
                "| {name} | {pods} | {:.3} | - | {bound:.3} | {:.3} | - | {plan_time:.2} | {bound_time:.2} |",
                plan.total_price_per_hour,
                plan.total_price_per_hour / bound,
            );
        }
    }
}
