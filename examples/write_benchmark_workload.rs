//! Writes upstream's scheduling-benchmark workload as `karpenter-sim` input: the 400
//! sized instance types as `InstanceType` documents, one NodePool, and `n` pods of
//! the diverse mix as a `kubectl get -o yaml|json` list.
//!
//! ```sh
//! cargo run --release --example write_benchmark_workload -- 20000 /tmp/bench.yaml
//! cargo run --release --example write_benchmark_workload -- 20000 /tmp/bench.json
//! cargo run --release -- provision -f /tmp/bench.yaml --timings -o json > /dev/null
//! ```

use karpenter::fake::generate::{catalog, manifest, workload};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(20_000);
    let path = args
        .next()
        .unwrap_or_else(|| "benchmark-workload.yaml".to_string());
    let mut items: Vec<Value> = catalog::sized_instance_types(400)
        .iter()
        .map(manifest::instance_type_document)
        .collect();
    items.push(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            "requirements": [],
        }}},
    }));
    for pod in workload::diverse_pods(n, 42) {
        items.push(serde_json::to_value(pod)?);
    }
    let text = if path.ends_with(".json") {
        manifest::to_kubectl_json(items)
    } else {
        manifest::to_kubectl_yaml(&items)
    };
    std::fs::write(&path, text)?;
    eprintln!("wrote {n} pods, 400 instance types and a NodePool to {path}");
    Ok(())
}
