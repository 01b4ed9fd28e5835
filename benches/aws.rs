//! The AWS provider's two costs that scale with its catalog: building one
//! EC2NodeClass's instance types for a region (every one of the 1,382 EC2
//! types, with its labels, capacity, overhead and offerings in three zones),
//! and planning a large pending workload over the whole catalog.
//!
//! `cargo bench --bench aws`. Targets (issue 42, in `docs/performance.md`):
//! `aws/instance_types_for/us-east-1` under 20 ms, and
//! `aws/schedule/diverse_catalog/20000` (upstream's diverse pod mix, see
//! `benches/scheduling.rs`) under 250 ms.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use karpenter::aws::{
    Catalog, EC2NodeClass, InstanceTypeOptions, instance_types_for, well_known_labels,
};
use karpenter::core::cloudprovider::InstanceType;
use karpenter::core::provisioning::plan_provisioning;
use karpenter::fake::generate::workload;

/// As the binaries plan (see `karpenter-sim`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REGION: &str = "us-east-1";

/// An AL2023 NodeClass whose subnets resolved to three zones.
fn node_class() -> EC2NodeClass {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole-bench",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
        },
        "status": {
            "subnets": [
                {"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"},
                {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"},
                {"id": "subnet-c", "zone": "us-east-1c", "zoneID": "use1-az4"},
            ],
        },
    }))
    .expect("a valid EC2NodeClass")
}

fn types(class: &EC2NodeClass) -> Vec<InstanceType> {
    instance_types_for(
        Catalog::embedded().expect("the embedded catalog"),
        REGION,
        class,
        &InstanceTypeOptions::default(),
    )
    .expect("us-east-1 types")
}

fn instance_types(c: &mut Criterion) {
    let class = node_class();
    // The catalog is parsed once per process, as a provider does.
    Catalog::embedded().expect("the embedded catalog");
    let mut group = c.benchmark_group("aws");
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("instance_types_for", REGION), |b| {
        b.iter(|| types(&class))
    });
    group.finish();
}

fn schedule(c: &mut Criterion) {
    let types = types(&node_class());
    let labels = well_known_labels();
    let mut group = c.benchmark_group("aws/schedule");
    group.sample_size(10);
    let n = 20_000;
    let snapshot =
        workload::one_pool_snapshot(&types, &labels, workload::diverse_pods_lazily(n, 42));
    group.throughput(Throughput::Elements(n as u64));
    group.bench_with_input(
        BenchmarkId::new("diverse_catalog", n),
        &snapshot,
        |b, snapshot| b.iter(|| plan_provisioning(snapshot)),
    );
    group.finish();
}

criterion_group!(benches, instance_types, schedule);
criterion_main!(benches);
