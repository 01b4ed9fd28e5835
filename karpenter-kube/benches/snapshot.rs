//! Snapshot assembly from the watch stores: a synced `KubeCluster` over a
//! cluster of 5,000 nodes and 75,000 pods (served on 127.0.0.1 by
//! karpenter-apiserver), read into the engine's `Snapshot` as each reconcile
//! does. The README's figure comes from here:
//!
//! ```sh
//! cargo bench -p karpenter-kube --bench snapshot
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use karpenter_apiserver::ApiServer;
use karpenter_core::cluster::read_snapshot;
use karpenter_fake::generate::running::running_cluster;
use karpenter_kube::KubeCluster;

/// A synced cluster of `nodes` nodes and `pods` pods, with the server it
/// watches.
fn cluster(
    runtime: &tokio::runtime::Runtime,
    nodes: usize,
    pods: usize,
) -> (ApiServer, KubeCluster) {
    runtime.block_on(async {
        let server = ApiServer::start().await.expect("the server starts");
        let generated = running_cluster(nodes, pods, 7);
        for pool in &generated.node_pools {
            server.put(pool).expect("a NodePool");
        }
        for node in &generated.nodes {
            if let Some(object) = &node.node {
                server.put(&**object).expect("a Node");
            }
            if let Some(claim) = &node.node_claim {
                server.put(claim).expect("a NodeClaim");
            }
        }
        for pod in &generated.pods {
            server.put(&pod.to_pod()).expect("a Pod");
        }
        for budget in &generated.pod_disruption_budgets {
            server.put(budget).expect("a PodDisruptionBudget");
        }
        let cluster = KubeCluster::new(server.client());
        cluster
            .wait_until_synced(Duration::from_secs(600))
            .await
            .expect("the watches sync");
        (server, cluster)
    })
}

fn snapshot_assembly(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("snapshot");
    group.sample_size(20);
    for (nodes, pods) in [(500, 7_500), (5_000, 75_000)] {
        let (_server, cluster) = cluster(&runtime, nodes, pods);
        group.bench_function(format!("{nodes}_nodes_{pods}_pods"), |b| {
            b.iter(|| {
                let snapshot = runtime
                    .block_on(read_snapshot(&cluster))
                    .expect("a snapshot");
                black_box(snapshot.pods.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, snapshot_assembly);
criterion_main!(benches);
