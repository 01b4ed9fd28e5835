//! Reading scenarios: typed deserialization of `kubectl get pods -o yaml|json`
//! dumps of the diverse pod mix, through the same loader `karpenter-sim` uses.
//!
//! `cargo bench --bench load`. The 20,000-pod YAML file is about 14 MB. `pyyaml` is
//! the same pods a document each, with an anchor on each pod's labels and an alias
//! wherever a selector repeats them, as PyYAML writes shared objects: what judging
//! aliases costs.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use karpenter::fake::generate::{manifest, workload};
use karpenter::scenario::{LoadOptions, Scenario};

fn inputs(n: usize) -> [(&'static str, String); 3] {
    let items: Vec<serde_json::Value> = workload::diverse_pods(n, 42)
        .iter()
        .map(|pod| serde_json::to_value(pod).expect("a Pod serializes"))
        .collect();
    [
        ("yaml", manifest::to_kubectl_yaml(&items)),
        ("pyyaml", manifest::to_pyyaml_documents(&items)),
        ("json", manifest::to_kubectl_json(items)),
    ]
}

fn load(c: &mut Criterion) {
    let options = LoadOptions::default();
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    for n in [1_000usize, 20_000] {
        for (format, text) in &inputs(n) {
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::new(*format, n), text, |b, text| {
                b.iter(|| {
                    let scenario = Scenario::from_str("pods", text, &options).expect("loads");
                    assert_eq!(scenario.pods.len(), n);
                    scenario
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
