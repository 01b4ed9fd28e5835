//! The driver and DaemonSets: a new node makes room for what a DaemonSet's
//! pods really ask, read from its newest live pod as upstream's cluster state
//! keeps it (a mutating webhook or a VPA makes it differ from the template),
//! and from the template only while the DaemonSet has no pod.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::driver::DriverOptions;
use karpenter_core::scheduling::LABEL_INSTANCE_TYPE_STABLE;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

/// The agent DaemonSet, whose template asks 4 cpu of every node.
fn agent() -> DaemonSet {
    serde_json::from_value(json!({
        "metadata": {"name": "agent", "namespace": "kube-system", "uid": "uid-agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [
                    {"name": "agent", "resources": {"requests": {"cpu": "4", "memory": "100Mi"}}},
                ]},
            },
        },
    }))
    .expect("a DaemonSet")
}

/// A pod of the agent, made at `created`, asking `cpu`.
fn agent_pod(name: &str, created: &str, cpu: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "kube-system", "labels": {"app": "agent"},
            "creationTimestamp": created,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                 "uid": "uid-agent", "controller": true}],
        },
        "spec": {"containers": [
            {"name": "agent", "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}},
        ]},
    }))
    .expect("a Pod")
}

/// The instance types of the claims the driver launched for a 1-cpu pod in
/// a cluster with the agent and `agent_pods`.
async fn launched_with(agent_pods: Vec<Pod>) -> Vec<String> {
    // Type i has i vCPU (100m of it reserved) and 2i GiB.
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "1", json!([])));
    world.cluster.apply_daemon_set(agent());
    world.add_pods(agent_pods);
    world.add_pods([pending_pod("web-0", Shape::Plain, "1", "1Gi")]);
    world.step().await;
    world
        .cluster
        .node_claim_list()
        .iter()
        .filter_map(|claim| {
            claim
                .metadata
                .labels
                .as_ref()?
                .get(LABEL_INSTANCE_TYPE_STABLE)
        })
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_new_node_makes_room_for_the_daemon_sets_newest_pod() {
    // The newest pod asks 500m (the older one 3 cpu): 1.5 cpu beside the
    // reserved 100m fits a 2-vCPU type.
    let pods = vec![
        agent_pod("agent-new", "2026-05-02T00:00:00Z", "500m"),
        agent_pod("agent-old", "2026-05-01T00:00:00Z", "3"),
    ];
    assert_eq!(launched_with(pods).await, ["fake-it-2"]);
}

#[tokio::test]
async fn without_a_pod_the_template_is_the_overhead() {
    // 4 cpu of the agent, 1 of the pod and 100m reserved: 6 vCPU.
    assert_eq!(launched_with(Vec::new()).await, ["fake-it-6"]);
    // A pod another DaemonSet of that name controlled is not the agent's.
    let mut stale = agent_pod("agent-stale", "2026-05-02T00:00:00Z", "500m");
    if let Some(owner) = stale
        .metadata
        .owner_references
        .as_mut()
        .and_then(|o| o.first_mut())
    {
        owner.uid = "uid-earlier-agent".into();
    }
    assert_eq!(launched_with(vec![stale]).await, ["fake-it-6"]);
}
