//! The cost mode (`--packing cost`) against the upstream mode on two
//! catalogs: unconstrained mixes (`karpenter_fake::generate::workload::unconstrained_mix`)
//! of 2,000 and 20,000 pods on the embedded Azure eastus catalog and on the
//! three-families fake catalog, and the diverse constrained mix of the
//! `scheduling` bench on three families. The target: 20,000 pods in cost
//! mode in under 2 s. The prices and the bound each plan reaches are printed
//! by `cargo run --release --example packing_report`.
//!
//! `cargo bench --bench cost_packing`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use karpenter::azure::instancetype::{Settings, instance_types, labels::well_known_labels};
use karpenter::core::planning::Packing;
use karpenter::core::provisioning::plan_provisioning_with;
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::fake::generate::catalog::three_families;
use karpenter::fake::generate::workload::{diverse_pods, one_pool_snapshot, unconstrained_mix};

fn cost_packing(c: &mut Criterion) {
    let azure = instance_types(
        karpenter::azure::Catalog::embedded(),
        &Settings::for_region("eastus"),
    );
    let families = three_families();
    let core = WellKnownLabels::core().clone();
    let azure_labels = well_known_labels();
    let mut group = c.benchmark_group("cost_packing");
    group.sample_size(10);
    for n in [2_000usize, 20_000] {
        let workloads = [
            (
                "azure-unconstrained",
                one_pool_snapshot(&azure, &azure_labels, unconstrained_mix(n, 7)),
            ),
            (
                "families-unconstrained",
                one_pool_snapshot(&families, &core, unconstrained_mix(n, 7)),
            ),
            (
                "families-constrained",
                one_pool_snapshot(&families, &core, diverse_pods(n, 42)),
            ),
        ];
        group.throughput(Throughput::Elements(n as u64));
        for (name, snapshot) in &workloads {
            for (mode, packing) in [("upstream", Packing::Upstream), ("cost", Packing::Cost)] {
                let id = BenchmarkId::new(format!("{name}/{mode}"), n);
                group.bench_with_input(id, snapshot, |b, snapshot| {
                    b.iter(|| {
                        plan_provisioning_with(snapshot, &packing.into()).total_price_per_hour
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, cost_packing);
criterion_main!(benches);
