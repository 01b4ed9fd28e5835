//! Provisioning at upstream's benchmark shape (`scheduling_benchmark_test.go`): the
//! diverse pod mix (one fifth each plain, zonal spread, hostname spread, zonal
//! self-affinity, hostname self-anti-affinity; cpu 100m-1500m, memory 100Mi-4Gi)
//! against 400 instance types of i+1 vCPU and 2(i+1) GiB, one NodePool, no nodes.
//!
//! `cargo bench --bench scheduling`. Upstream reports about 1,000 pods/s here
//! (20,000 pods in about 20 s, kubernetes-sigs/karpenter PR #2486).
//! `schedule/diverse_400_types/100000` is the same shape at 100,000 pods (the
//! target: under 1.5 s; its memory is measured on
//! `examples/schedule_benchmark_once.rs`). The `lower_bound` group times
//! `--bound` on the same clusters.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use karpenter::core::provisioning::plan_provisioning;
use karpenter::core::scheduling::WellKnownLabels;
use karpenter::core::snapshot::Snapshot;
use karpenter::fake::generate::{catalog, workload};

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How many instance types upstream's benchmark offers.
const TYPES: usize = 400;

/// The benchmark's cluster: one NodePool offered every type, and `n` pending pods.
pub fn benchmark_snapshot(n: usize) -> Snapshot {
    let types = catalog::sized_instance_types(TYPES);
    workload::one_pool_snapshot(
        &types,
        WellKnownLabels::core(),
        workload::diverse_pods_lazily(n, 42),
    )
}

fn scheduling(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    group.sample_size(10);
    for n in [1_000usize, 5_000, 20_000] {
        let snapshot = benchmark_snapshot(n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("diverse", n), &snapshot, |b, snapshot| {
            b.iter(|| plan_provisioning(snapshot))
        });
    }
    let n = 100_000;
    let snapshot = benchmark_snapshot(n);
    group.throughput(Throughput::Elements(n as u64));
    let id = BenchmarkId::new(format!("diverse_{TYPES}_types"), n);
    group.bench_with_input(id, &snapshot, |b, snapshot| {
        b.iter(|| plan_provisioning(snapshot))
    });
    group.finish();
}

/// The proven lower bound (`--bound`) on the same clusters: the pods the
/// plan sends to new claims, grouped, the LP and its certificate.
fn lower_bound(c: &mut Criterion) {
    let mut group = c.benchmark_group("lower_bound");
    group.sample_size(10);
    for n in [2_000usize, 20_000] {
        let snapshot = benchmark_snapshot(n);
        let plan = plan_provisioning(&snapshot);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("diverse", n), &snapshot, |b, snapshot| {
            b.iter(|| {
                let mut bounded = plan.clone();
                bounded.add_lower_bound(snapshot);
                bounded.lower_bound_per_hour
            })
        });
    }
    group.finish();
}

criterion_group!(benches, scheduling, lower_bound);
criterion_main!(benches);
