//! The in-memory cluster runs Deployments: their pods made pending from the
//! template, owned by the Deployment, scaled up and down as a ReplicaSet
//! does, names never reused, pods already there adopted.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::cluster::{Cluster, ClusterError};
use karpenter_core::pods::is_pending;
use karpenter_fake::InMemoryCluster;
use serde_json::json;

fn deployment(replicas: Option<i32>) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "shop", "uid": "d-1"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]},
            },
        },
    }))
    .expect("a Deployment")
}

/// The names of the cluster's pods, sorted.
fn names(cluster: &InMemoryCluster) -> Vec<String> {
    let mut names: Vec<String> = cluster
        .pod_list()
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    names.sort();
    names
}

#[test]
fn a_deployment_makes_its_replicas_pending_and_owned() {
    let cluster = InMemoryCluster::new();
    assert_eq!(cluster.apply_deployment(&deployment(Some(3))), (3, 0));
    assert_eq!(names(&cluster), ["web-0", "web-1", "web-2"]);
    for pod in cluster.pod_list() {
        let info = karpenter_core::pods::PodInfo::of(&pod);
        assert!(is_pending(&std::sync::Arc::new(info)), "{pod:?}");
        let owner = &pod.metadata.owner_references.as_ref().expect("owned")[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("Deployment", "web")
        );
        assert_eq!(
            pod.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("app"))
                .map(String::as_str),
            Some("web")
        );
    }
    // Replicas unset: one.
    let single = InMemoryCluster::new();
    assert_eq!(single.apply_deployment(&deployment(None)), (1, 0));
}

#[test]
fn scaling_down_takes_unbound_pods_first_then_the_newest_and_names_are_not_reused() {
    let cluster = InMemoryCluster::new();
    cluster.apply_deployment(&deployment(Some(4)));
    // web-3 runs on a node; web-0..2 wait.
    let mut bound: Pod = cluster
        .pod_list()
        .into_iter()
        .find(|p| p.metadata.name.as_deref() == Some("web-3"))
        .expect("web-3");
    bound.spec.as_mut().expect("a spec").node_name = Some("node-a".into());
    bound.status = None;
    cluster.apply_pod(bound);
    assert_eq!(
        cluster.scale_deployment("shop", "web", 2).expect("scaled"),
        (0, 2)
    );
    assert_eq!(names(&cluster), ["web-0", "web-3"]);
    assert_eq!(
        cluster.scale_deployment("shop", "web", 3).expect("scaled"),
        (1, 0)
    );
    assert_eq!(names(&cluster), ["web-0", "web-3", "web-4"]);
    // Down to none, the bound pod last; a negative count is none.
    assert_eq!(
        cluster.scale_deployment("shop", "web", -1).expect("scaled"),
        (0, 3)
    );
    assert!(cluster.pod_list().is_empty());
}

#[test]
fn pods_already_there_are_adopted() {
    let cluster = InMemoryCluster::new();
    let running: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-7", "namespace": "shop"},
        "spec": {"nodeName": "node-a", "containers": [{"name": "app"}]},
    }))
    .expect("a Pod");
    let other: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-7", "namespace": "elsewhere"},
        "spec": {"containers": [{"name": "app"}]},
    }))
    .expect("a Pod");
    cluster.apply_pod(running);
    cluster.apply_pod(other);
    assert_eq!(cluster.apply_deployment(&deployment(Some(2))), (1, 0));
    let shop: Vec<String> = cluster
        .pod_list()
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some("shop"))
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(shop, ["web-7", "web-8"]);
}

#[tokio::test]
async fn a_scaled_deployment_is_what_a_buffer_reads() {
    let cluster = InMemoryCluster::new();
    cluster.apply_deployment(&deployment(Some(2)));
    cluster.scale_deployment("shop", "web", 5).expect("scaled");
    let workloads = cluster.scalable_workloads().await.expect("workloads");
    assert_eq!(workloads.len(), 1);
    assert_eq!(workloads[0].replicas, Some(5));
    assert!(matches!(
        cluster.scale_deployment("shop", "api", 1),
        Err(ClusterError::NotFound {
            kind: "Deployment",
            ..
        })
    ));
}
