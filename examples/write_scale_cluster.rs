//! Writes the scale benchmarks' running cluster (`karpenter_fake::generate::scale`)
//! as `karpenter-sim` input: a `kubectl get -o json|yaml` list of its NodePool,
//! instance types, Nodes, NodeClaims, Pods and PodDisruptionBudgets. JSON is
//! indented as `kubectl` prints it, or on one line after `--compact`.
//!
//! ```sh
//! cargo run --release --example write_scale_cluster -- 5000 /tmp/scale-5000.json
//! cargo run --release --example write_scale_cluster -- 5000 /tmp/compact.json --compact
//! cargo run --release -- disrupt -f /tmp/scale-5000.json --timings -o json > /dev/null
//! ```

use karpenter::fake::generate::{manifest, scale};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5_000);
    let path = args.next().unwrap_or_else(|| format!("scale-{nodes}.json"));
    let compact = match args.next().as_deref() {
        None => false,
        Some("--compact") => true,
        Some(other) => return Err(format!("unknown argument {other:?} (only --compact)").into()),
    };
    let cluster = scale::scale_cluster(nodes, 42);
    let pods = cluster.pods.len();
    let items = manifest::snapshot_documents(&cluster)?;
    drop(cluster);
    let text = if path.ends_with(".json") && compact {
        manifest::to_compact_json(items)
    } else if path.ends_with(".json") {
        manifest::to_kubectl_json(items)
    } else {
        manifest::to_kubectl_yaml(&items)
    };
    std::fs::write(&path, &text)?;
    eprintln!(
        "wrote {nodes} nodes and {pods} pods ({:.1} MB) to {path}",
        text.len() as f64 / 1e6
    );
    Ok(())
}
