//! karpenter-controller against a real cluster, when
//! `KARPENTER_E2E_KUBECONFIG` names a kubeconfig (a throwaway kind cluster
//! with upstream's CRDs, as the README sets up; the controller acts on the
//! whole cluster). Skipped otherwise.
//!
//! A NodePool of its own (tainted, so nothing else lands there) and three
//! pods that tolerate it: the controller launches nodes for them; once the
//! pods are gone, it removes the nodes again.

use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::{Namespace, Node};
use karpenter_core::api::{ConditionStatus, NodeClaim, NodePool, condition_types};
use karpenter_kube::controller::{Args, RunError, run_until};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use serde_json::json;
use tokio::sync::watch;

use crate::real_cluster_common::{client, create_pods, eventually};
use tokio::task::JoinHandle;

/// How often a wait asks again.
const PAUSE: Duration = Duration::from_secs(1);

const VARIABLE: &str = "KARPENTER_E2E_KUBECONFIG";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_launches_and_removes_nodes_on_a_real_cluster() {
    let Ok(kubeconfig) = std::env::var(VARIABLE) else {
        eprintln!("skipped: set {VARIABLE} to run against a real cluster");
        return;
    };
    let suffix = std::process::id();
    let name = format!("e2e-{suffix}");
    let client = client(&kubeconfig).await;

    create_namespace_and_pool(&client, &name).await;
    let (stop, controller) = start_controller(&kubeconfig);
    let pods = create_pods(&client, &name).await;
    let claims: Api<NodeClaim> = Api::all(client.clone());
    let ours = ListParams::default().labels(&format!("karpenter.sh/nodepool={name}"));
    wait_until_initialized(&claims, &ours).await;
    let nodes: Api<Node> = Api::all(client.clone());
    let launched = nodes
        .list(&ListParams::default().labels(&format!("e2e={name}")))
        .await
        .expect("nodes");
    assert!(!launched.items.is_empty());

    pods.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("the pods go");
    eventually(
        "the empty nodes removed",
        Duration::from_secs(300),
        PAUSE,
        async || claims.list(&ours).await.is_ok_and(|l| l.items.is_empty()),
    )
    .await;

    let _ = stop.send(true);
    controller.await.expect("the task").expect("a clean stop");
    delete_pool_and_namespace(&client, &name).await;
}

/// Creates the namespace `name` and a NodePool `name` whose nodes carry the
/// label and taint `e2e=name`, consolidated as soon as they are empty.
async fn create_namespace_and_pool(client: &Client, name: &str) {
    let post = PostParams::default();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("a namespace");
    namespaces
        .create(&post, &namespace)
        .await
        .expect("the namespace");
    let pools: Api<NodePool> = Api::all(client.clone());
    let pool: NodePool = serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"e2e": name}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                    "requirements": [],
                    "taints": [{"key": "e2e", "value": name, "effect": "NoSchedule"}],
                },
            },
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"},
        },
    }))
    .expect("a NodePool");
    pools.create(&post, &pool).await.expect("the NodePool");
}

/// Starts the controller on the kubeconfig's cluster with the fake
/// provider's instance types; the sender that stops it, and its task.
fn start_controller(kubeconfig: &str) -> (watch::Sender<bool>, JoinHandle<Result<(), RunError>>) {
    let types =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/fake/instance-types.yaml");
    let args = Args::try_parse_from([
        "karpenter-controller",
        "--kubeconfig",
        kubeconfig,
        "--instance-types",
        types.to_str().expect("utf-8"),
        "--metrics-addr",
        "off",
        "--health-addr",
        "off",
        "--interval",
        "1s",
    ])
    .expect("flags");
    let (stop, stopping) = watch::channel(false);
    let controller = tokio::spawn(run_until(args, stopping));
    (stop, controller)
}

/// Waits (at most three minutes) until the pool has claims, all initialized.
async fn wait_until_initialized(claims: &Api<NodeClaim>, ours: &ListParams) {
    eventually(
        "nodes launched and initialized",
        Duration::from_secs(180),
        PAUSE,
        async || {
            let listed = claims.list(ours).await.map(|l| l.items).unwrap_or_default();
            !listed.is_empty()
                && listed.iter().all(|c| {
                    c.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| {
                            c.iter().any(|c| {
                                c.type_ == condition_types::INITIALIZED
                                    && c.status == ConditionStatus::True
                            })
                        })
                })
        },
    )
    .await;
}

/// Deletes the NodePool and the namespace `create_namespace_and_pool` made.
async fn delete_pool_and_namespace(client: &Client, name: &str) {
    let pools: Api<NodePool> = Api::all(client.clone());
    pools
        .delete(name, &DeleteParams::default())
        .await
        .expect("the NodePool goes");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete(name, &DeleteParams::default())
        .await
        .expect("the namespace goes");
}
