//! Serves a generated running cluster (`NODES` nodes, `PODS` pods; 5,000 and
//! 75,000 by default) on 127.0.0.1 through karpenter-apiserver, and writes a
//! kubeconfig for it, so that karpenter-controller can be measured against
//! a cluster that size in a process of its own:
//!
//! ```sh
//! cargo run --release -p karpenter-kube --example serve_cluster -- /tmp/big.kubeconfig &
//! /usr/bin/time -v target/release/karpenter-controller --kubeconfig /tmp/big.kubeconfig \
//!     --instance-types deploy/fake/instance-types.yaml --dry-run --once --disruption false \
//!     --metrics-addr off --health-addr off
//! ```
//!
//! ("Maximum resident set size" is the controller's memory with the cluster
//! cached.) It serves until killed.

use std::time::Duration;

use karpenter_apiserver::ApiServer;
use karpenter_fake::generate::running::running_cluster;

fn count(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: serve_cluster KUBECONFIG-TO-WRITE")?;
    let nodes = count("NODES", 5_000);
    let pods = count("PODS", 75_000);
    let server = ApiServer::start().await?;
    let cluster = running_cluster(nodes, pods, 7);
    for pool in &cluster.node_pools {
        server.put(pool)?;
    }
    for node in &cluster.nodes {
        if let Some(object) = &node.node {
            server.put(object.as_ref())?;
        }
        if let Some(claim) = &node.node_claim {
            server.put(claim)?;
        }
    }
    for pod in &cluster.pods {
        server.put(&pod.to_pod())?;
    }
    for budget in &cluster.pod_disruption_budgets {
        server.put(budget)?;
    }
    server.write_kubeconfig(&path)?;
    eprintln!(
        "serving {nodes} nodes and {pods} pods at {}; kubeconfig {path}",
        server.url()
    );
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}
