//! karpenter-controller `--provider aws` against a real EKS cluster, when
//! `KARPENTER_E2E_AWS` names its kubeconfig. Skipped otherwise. It launches
//! real EC2 instances, so it runs only where someone asked for it.
//!
//! What it needs besides the kubeconfig: upstream's CRDs (NodePool,
//! NodeClaim, EC2NodeClass) installed; `CLUSTER_NAME` (and the other
//! settings the controller reads, as in `deploy/aws/`); AWS credentials
//! the credential chain finds, allowed what `deploy/aws/iam-policy.json`
//! allows; `KARPENTER_E2E_AWS_INSTANCE_PROFILE`, the instance profile
//! holding the role nodes run as; and
//! subnets and security groups tagged `karpenter.sh/discovery:
//! <CLUSTER_NAME>`.
//!
//! An EC2NodeClass and a tainted NodePool of its own, three pods that
//! tolerate it: the class's status turns Ready, instances launch and join,
//! and once the pods are gone the nodes are removed again.

use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::Namespace;
use karpenter_aws::EC2NodeClass;
use karpenter_core::api::{ConditionStatus, NodeClaim, NodePool, condition_types};
use karpenter_kube::controller::{Args, run_until};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use serde_json::json;
use tokio::sync::watch;

use crate::real_cluster_common::{client, create_pods, eventually};

/// How often a wait asks again.
const PAUSE: Duration = Duration::from_secs(5);

const VARIABLE: &str = "KARPENTER_E2E_AWS";
const INSTANCE_PROFILE: &str = "KARPENTER_E2E_AWS_INSTANCE_PROFILE";

fn has_true(conditions: Option<&Vec<serde_json::Value>>, kind: &str) -> bool {
    conditions.is_some_and(|all| {
        all.iter()
            .any(|c| c["type"] == kind && c["status"] == "True")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_aws_controller_launches_joining_instances_and_removes_them() {
    let Ok(kubeconfig) = std::env::var(VARIABLE) else {
        eprintln!("skipped: set {VARIABLE} to an EKS cluster's kubeconfig to run");
        return;
    };
    let cluster_name = std::env::var("CLUSTER_NAME").expect("CLUSTER_NAME names the cluster");
    let profile =
        std::env::var(INSTANCE_PROFILE).expect("KARPENTER_E2E_AWS_INSTANCE_PROFILE names it");
    let name = format!("e2e-aws-{}", std::process::id());
    let client = client(&kubeconfig).await;

    let (classes, pools) = create_class_and_pool(&client, &name, &cluster_name, &profile).await;

    let args = Args::try_parse_from([
        "karpenter-controller",
        "--provider",
        "aws",
        "--kubeconfig",
        kubeconfig.as_str(),
        "--metrics-addr",
        "off",
        "--health-addr",
        "off",
    ])
    .expect("flags");
    let (stop, stopping) = watch::channel(false);
    let controller = tokio::spawn(run_until(args, stopping));

    eventually(
        "the class's status Ready",
        Duration::from_secs(180),
        PAUSE,
        async || {
            let Ok(class) = classes.get(&name).await else {
                return false;
            };
            let status = serde_json::to_value(&class.status).unwrap_or_default();
            has_true(status["conditions"].as_array(), "Ready")
        },
    )
    .await;

    let pods = create_pods(&client, &name).await;
    let claims: Api<NodeClaim> = Api::all(client.clone());
    let ours = ListParams::default().labels(&format!("karpenter.sh/nodepool={name}"));
    eventually(
        "instances launched and joined",
        Duration::from_secs(600),
        PAUSE,
        async || {
            let listed = claims
                .list(&ours)
                .await
                .map(|l| l.items)
                .unwrap_or_default();
            !listed.is_empty()
                && listed.iter().all(|c| {
                    c.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|all| {
                            all.iter().any(|c| {
                                c.type_ == condition_types::INITIALIZED
                                    && c.status == ConditionStatus::True
                            })
                        })
                })
        },
    )
    .await;

    pods.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("the pods go");
    eventually(
        "the empty nodes removed",
        Duration::from_secs(600),
        PAUSE,
        async || claims.list(&ours).await.is_ok_and(|l| l.items.is_empty()),
    )
    .await;

    let _ = stop.send(true);
    controller.await.expect("the task").expect("a clean stop");
    let delete = DeleteParams::default();
    pools
        .delete(&name, &delete)
        .await
        .expect("the NodePool goes");
    classes
        .delete(&name, &delete)
        .await
        .expect("the class goes");
    Api::<Namespace>::all(client)
        .delete(&name, &delete)
        .await
        .expect("the namespace goes");
}

/// Creates the namespace `name`, an EC2NodeClass `name` finding the
/// cluster's tagged subnets and security groups, and a NodePool `name`
/// whose on-demand nodes carry the label and taint `e2e=name`.
async fn create_class_and_pool(
    client: &Client,
    name: &str,
    cluster_name: &str,
    instance_profile: &str,
) -> (Api<EC2NodeClass>, Api<NodePool>) {
    let post = PostParams::default();
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("a namespace");
    Api::<Namespace>::all(client.clone())
        .create(&post, &namespace)
        .await
        .expect("the namespace");
    let discovery = json!([{"tags": {"karpenter.sh/discovery": cluster_name}}]);
    let class: EC2NodeClass = serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "instanceProfile": instance_profile,
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": discovery,
            "securityGroupSelectorTerms": discovery,
        },
    }))
    .expect("an EC2NodeClass");
    let classes: Api<EC2NodeClass> = Api::all(client.clone());
    classes.create(&post, &class).await.expect("the class");
    let pool: NodePool = serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"e2e": name}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
                    "taints": [{"key": "e2e", "value": name, "effect": "NoSchedule"}],
                },
            },
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"},
        },
    }))
    .expect("a NodePool");
    let pools: Api<NodePool> = Api::all(client.clone());
    pools.create(&post, &pool).await.expect("the NodePool");

    (classes, pools)
}
