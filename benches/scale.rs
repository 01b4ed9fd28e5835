//! Big running clusters, in the shape of a busy production cluster
//! (`karpenter_fake::generate::scale`: one pool with a 10 % budget, three
//! families of 4-32 vCPU nodes 40-85 % used and one in ten nearly empty,
//! ReplicaSets of 100m-1500m pods, one app in five spread over zones with
//! `ScheduleAnyway`, a PodDisruptionBudget per ten apps; about fifteen pods a
//! node):
//!
//! - `plan/<nodes>`: a whole disruption plan, at 1,000 to 10,000 nodes, how its
//!   cost grows with the cluster;
//! - `plan_one_thread/<nodes>`: the same plan on one thread, for the speed-up;
//! - `provision_nothing_pending/5000`: provisioning a 5,000-node cluster with no
//!   pending pod;
//! - `scale_read/json/5000` and `scale_read/yaml/5000`: reading the 5,000-node
//!   cluster's `kubectl get -o json` list (about 76,000 pods, 143 MB) and its
//!   `kubectl get -o yaml` list (63 MB) through `karpenter-sim`'s loader;
//!   `scale_read/json_compact/5000` the same JSON on one line (57 MB).
//!
//! `cargo bench --bench scale`; `-- plan/` for the plans alone. The README's
//! "Scale" section keeps the figures.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::plan_disruption;
use karpenter::core::provisioning::plan_provisioning;
use karpenter::fake::generate::{manifest, scale::scale_cluster};
use karpenter::scenario::{LoadOptions, Scenario};

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a timestamp")
}

fn scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    let mut five_thousand = None;
    for nodes in [1_000usize, 2_000, 5_000, 10_000] {
        let cluster = scale_cluster(nodes, 42);
        group.bench_with_input(BenchmarkId::new("plan", nodes), &cluster, |b, cluster| {
            b.iter(|| plan_disruption(cluster, now()))
        });
        if nodes == 5_000 {
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("a one-thread pool");
            group.bench_with_input(
                BenchmarkId::new("plan_one_thread", nodes),
                &cluster,
                |b, cluster| b.iter(|| one.install(|| plan_disruption(cluster, now()))),
            );
            group.bench_with_input(
                BenchmarkId::new("provision_nothing_pending", nodes),
                &cluster,
                |b, cluster| b.iter(|| plan_provisioning(cluster)),
            );
            five_thousand = Some(cluster);
        }
    }
    group.finish();

    let Some(cluster) = five_thousand else {
        return;
    };
    let items = manifest::snapshot_documents(&cluster).expect("serializes");
    drop(cluster);
    let yaml = manifest::to_kubectl_yaml(&items);
    let compact = manifest::to_compact_json(items.clone());
    let json = manifest::to_kubectl_json(items);
    let options = LoadOptions::default();
    let mut group = c.benchmark_group("scale_read");
    group.sample_size(10);
    for (format, text) in [("json", &json), ("json_compact", &compact), ("yaml", &yaml)] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new(format, 5_000), text, |b, text| {
            b.iter(|| Scenario::from_str(format, text, &options).expect("loads"))
        });
    }
    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
