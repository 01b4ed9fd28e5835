//! Disruption at the sizes where upstream's users see consolidation time out
//! (300 to 1,000 nodes; one rescheduling simulation takes about 0.9 s in
//! production, kubernetes-sigs/karpenter PR #3271), on generated running
//! clusters (`karpenter_fake::generate::running::running_cluster`: twenty pods per node,
//! one in five apps spread over zones, one in ten with hostname
//! anti-affinity, some PodDisruptionBudgets; node sizes 1-64 vCPU, grown
//! 10-150 % past what their pods need):
//!
//! - single-node consolidation evaluating every candidate of a 1,000-node,
//!   20,000-pod cluster (a simulation each, from one shared set-up);
//! - multi-node consolidation over 5,000 nodes and 100,000 pods (the binary
//!   search over the 100 best candidates);
//! - one whole plan on the 1,000-node cluster.
//!
//! `cargo bench --bench disruption`. Targets: each of the first two under 1 s.

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::{multi_node_command, plan_disruption, single_node_options};
use karpenter::fake::generate::running::running_cluster;

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a timestamp")
}

fn disruption(c: &mut Criterion) {
    let mut group = c.benchmark_group("disruption");
    group.sample_size(10);
    let thousand = running_cluster(1_000, 20_000, 42);
    group.bench_function("single_node_every_candidate/1000_nodes_20000_pods", |b| {
        b.iter(|| single_node_options(&thousand, now()))
    });
    group.bench_function("plan/1000_nodes_20000_pods", |b| {
        b.iter(|| plan_disruption(&thousand, now()))
    });
    drop(thousand);
    let five_thousand = running_cluster(5_000, 100_000, 42);
    group.bench_function("multi_node/5000_nodes_100000_pods", |b| {
        b.iter(|| multi_node_command(&five_thousand, now()))
    });
    group.finish();
}

criterion_group!(benches, disruption);
criterion_main!(benches);
