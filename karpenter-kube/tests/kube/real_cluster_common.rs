//! What the end-to-end tests on real clusters share (`real_cluster` on a
//! kind cluster, `real_cluster_aws` on EKS): a client from a kubeconfig,
//! waiting for a condition, and three pods only the test's pool takes.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::json;

/// A client for the cluster the kubeconfig at `path` names.
pub(crate) async fn client(path: &str) -> Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).expect("a kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("a config");
    Client::try_from(config).expect("a client")
}

/// Waits until `check` holds, asking every `pause`, at most `limit`.
pub(crate) async fn eventually<F: AsyncFn() -> bool>(
    what: &str,
    limit: Duration,
    pause: Duration,
    check: F,
) {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if check().await {
            return;
        }
        tokio::time::sleep(pause).await;
    }
    panic!("{what}: not done after {limit:?}");
}

/// Creates three pods in namespace `name` that only the pool's nodes take
/// (they select and tolerate `e2e: <name>`).
pub(crate) async fn create_pods(client: &Client, name: &str) -> Api<Pod> {
    let post = PostParams::default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), name);
    for i in 0..3 {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": format!("pause-{i}")},
            "spec": {
                "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "1"}}}],
                "nodeSelector": {"e2e": name},
                "tolerations": [{"key": "e2e", "operator": "Equal", "value": name, "effect": "NoSchedule"}],
            },
        }))
        .expect("a pod");
        pods.create(&post, &pod).await.expect("a pod");
    }
    pods
}
