//! The EC2NodeClass controller against the loopback API server: the
//! finalizer added, a deleted class held while its NodeClaims remain, then
//! its launch templates deleted and the class let go.

use std::time::Duration;

use karpenter_apiserver::ApiServer;
use karpenter_aws::ec2::{
    CreateLaunchTemplateInput, DescribeLaunchTemplatesInput, InMemoryEc2, InMemoryParameters,
    LaunchTemplateData, Tag, TagSpecification,
};
use karpenter_aws::iam::{
    INSTANCE_PROFILE_ANNOTATION, InMemoryIam, InstanceProfile, instance_profile_path,
};
use karpenter_aws::{AwsConfig, InstanceTypeOptions};
use karpenter_core::api::NodeClaim;
use kube::api::DeleteParams;
use serde_json::json;

use super::*;

fn node_class(name: &str) -> EC2NodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiSelectorTerms": [{"id": "ami-1"}],
            "role": "KarpenterNodeRole",
            "subnetSelectorTerms": [{"id": "subnet-1"}],
            "securityGroupSelectorTerms": [{"id": "sg-1"}],
        },
    }))
    .expect("an EC2NodeClass")
}

fn node_claim(name: &str, class: &str) -> NodeClaim {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": name},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class}, "requirements": []},
    }))
    .expect("a claim")
}

/// A template of class `class` in cluster `demo`, as the provider tags it.
async fn add_template(ec2: &InMemoryEc2, name: &str, class: &str) {
    let tags = vec![
        Tag::new("eks:eks-cluster-name", "demo"),
        Tag::new("karpenter.k8s.aws/ec2nodeclass", class),
    ];
    ec2.create_launch_template(CreateLaunchTemplateInput {
        launch_template_name: name.into(),
        launch_template_data: LaunchTemplateData::default(),
        tag_specifications: vec![TagSpecification {
            resource_type: "launch-template".into(),
            tags,
        }],
    })
    .await
    .expect("a template");
}

async fn template_names(ec2: &InMemoryEc2) -> Vec<String> {
    ec2.describe_launch_templates(DescribeLaunchTemplatesInput::default())
        .await
        .expect("templates")
        .launch_templates
        .into_iter()
        .map(|t| t.launch_template_name)
        .collect()
}

async fn controller(
    server: &ApiServer,
    ec2: &InMemoryEc2,
    iam: &InMemoryIam,
) -> ClassController<InMemoryEc2, InMemoryParameters> {
    let cluster = KubeCluster::new(kube::Client::try_from(server.config()).expect("a client"));
    cluster
        .wait_until_synced(Duration::from_secs(10))
        .await
        .expect("the watches sync");
    let config = AwsConfig {
        region: "us-west-2".into(),
        cluster_name: "demo".into(),
        join: None,
    };
    let provider = AwsCloudProvider::new(ec2.clone(), config, InstanceTypeOptions::default())
        .expect("the catalog");
    let context = ClassContext {
        cluster_name: "demo".into(),
        region: "us-west-2".into(),
        kubernetes_version: "1.34".into(),
        reserved_capacity: false,
        isolated_vpc: false,
        dry_run_disabled: false,
        cluster_cidr_known: true,
        node_class_cel: false,
    };
    ClassController::new(
        Arc::new(provider),
        cluster,
        InMemoryParameters::new(),
        Arc::new(iam.clone()),
        context,
    )
}

/// The class `name` as the server has it.
fn stored(server: &ApiServer, name: &str) -> Option<EC2NodeClass> {
    server.get(None, name)
}

/// Deletes `name` through the API, as `kubectl delete` does.
async fn delete(server: &ApiServer, name: &str) -> EC2NodeClass {
    let api: Api<EC2NodeClass> = Api::all(server.client());
    api.delete(name, &DeleteParams::default())
        .await
        .expect("deleted");
    stored(server, name).expect("held by its finalizer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_class_gets_the_finalizer_once() {
    let server = ApiServer::start().await.expect("the server starts");
    let ec2 = InMemoryEc2::new("us-west-2");
    server.put(&node_class("default")).expect("put");
    let mut controller = controller(&server, &ec2, &InMemoryIam::new()).await;
    controller
        .reconcile(&stored(&server, "default").expect("the class"))
        .await;
    let class = stored(&server, "default").expect("the class");
    assert_eq!(class.finalizers(), [TERMINATION_FINALIZER]);
    controller.reconcile(&class).await;
    let again = stored(&server, "default").expect("the class");
    assert_eq!(again.finalizers(), [TERMINATION_FINALIZER]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_class_waits_for_its_claims_then_its_templates_go() {
    let server = ApiServer::start().await.expect("the server starts");
    let ec2 = InMemoryEc2::new("us-west-2");
    add_template(&ec2, "karpenter.k8s.aws/1", "default").await;
    add_template(&ec2, "karpenter.k8s.aws/2", "other").await;
    server.put(&node_class("default")).expect("put");
    server
        .put(&node_claim("default-abc", "default"))
        .expect("a claim");
    server
        .put(&node_claim("other-abc", "other"))
        .expect("a claim");
    let mut controller = controller(&server, &ec2, &InMemoryIam::new()).await;
    controller
        .reconcile(&stored(&server, "default").expect("the class"))
        .await;
    let deleted = delete(&server, "default").await;
    assert!(deleted.metadata.deletion_timestamp.is_some());

    // A claim of the class remains: nothing is deleted.
    controller.reconcile(&deleted).await;
    assert!(stored(&server, "default").is_some());
    assert_eq!(template_names(&ec2).await.len(), 2);
    assert!(controller.waiting_said.contains_key("default"));

    // Once it is gone, the class's templates go, then the class.
    server.remove::<NodeClaim>(None, "default-abc");
    tokio::time::timeout(Duration::from_secs(10), async {
        while controller
            .cluster
            .node_claims()
            .await
            .expect("claims")
            .len()
            > 1
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the claim's deletion is seen");
    controller.reconcile(&deleted).await;
    assert_eq!(template_names(&ec2).await, ["karpenter.k8s.aws/2"]);
    assert!(
        stored(&server, "default").is_none(),
        "the finalizer released"
    );
    assert!(!controller.waiting_said.contains_key("default"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_role_class_takes_its_instance_profile_with_it() {
    let server = ApiServer::start().await.expect("the server starts");
    let ec2 = InMemoryEc2::new("us-west-2");
    let iam = InMemoryIam::new();
    server.put(&node_class("default")).expect("put");
    let class = stored(&server, "default").expect("the class");
    let uid = class.metadata.uid.clone().expect("a uid");
    let profile = |name: &str, uid: &str| InstanceProfile {
        instance_profile_name: name.into(),
        path: instance_profile_path("us-west-2", "demo", Some(uid)),
        roles: Vec::new(),
        tags: Vec::new(),
    };
    iam.insert_profile(profile("demo_1", &uid));
    iam.insert_profile(profile("demo_2", "another-class-uid"));
    let mut controller = controller(&server, &ec2, &iam).await;
    controller.reconcile(&class).await;
    let deleted = delete(&server, "default").await;
    controller.reconcile(&deleted).await;
    assert!(
        stored(&server, "default").is_none(),
        "the finalizer released"
    );
    let left: Vec<String> = iam
        .profiles()
        .into_iter()
        .map(|p| p.instance_profile_name)
        .collect();
    assert_eq!(left, ["demo_2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collector_keeps_profiles_a_class_or_a_claim_names() {
    let server = ApiServer::start().await.expect("the server starts");
    let ec2 = InMemoryEc2::new("us-west-2");
    let iam = InMemoryIam::new();
    for name in ["demo_class", "demo_claim", "demo_orphan"] {
        iam.insert_profile(InstanceProfile {
            instance_profile_name: name.into(),
            path: instance_profile_path("us-west-2", "demo", Some("some-uid")),
            roles: Vec::new(),
            tags: Vec::new(),
        });
    }
    let mut claim = node_claim("default-abc", "default");
    claim.metadata.annotations = Some(
        [(
            INSTANCE_PROFILE_ANNOTATION.to_owned(),
            "demo_claim".to_owned(),
        )]
        .into(),
    );
    server.put(&claim).expect("a claim");
    let mut class = node_class("default");
    class.status =
        Some(serde_json::from_value(json!({"instanceProfile": "demo_class"})).expect("a status"));
    let mut controller = controller(&server, &ec2, &iam).await;
    controller
        .collect_profiles(&[Arc::new(class)])
        .await
        .expect("collected");
    let left: Vec<String> = iam
        .profiles()
        .into_iter()
        .map(|p| p.instance_profile_name)
        .collect();
    assert_eq!(left, ["demo_claim", "demo_class"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_placement_group_lookup_still_writes_the_status() {
    use karpenter_aws::ec2::{Ec2Error, Operation};
    use karpenter_aws::ec2::{Image, SecurityGroup, Subnet};
    let server = ApiServer::start().await.expect("the server starts");
    // What the class selects exists, so only the group's lookup fails.
    let ec2 = InMemoryEc2::new("us-west-2");
    ec2.add_subnet(Subnet {
        subnet_id: "subnet-1".into(),
        availability_zone: "us-west-2a".into(),
        available_ip_address_count: 100,
        ..Subnet::default()
    });
    ec2.add_security_group(SecurityGroup {
        group_id: "sg-1".into(),
        group_name: "nodes".into(),
        ..SecurityGroup::default()
    });
    ec2.add_image(Image {
        image_id: "ami-1".into(),
        name: "al2023".into(),
        architecture: "x86_64".into(),
        state: "available".into(),
        ..Image::default()
    });
    let iam = InMemoryIam::new();
    iam.add_role("KarpenterNodeRole");
    let mut class = node_class("default");
    class.spec.placement_group_selector =
        Some(serde_json::from_value(json!({"name": "pg"})).expect("a selector"));
    server.put(&class).expect("put");
    let mut controller = controller(&server, &ec2, &iam).await;
    ec2.fail_next(
        Operation::DescribePlacementGroups,
        Ec2Error::Throttling {
            operation: Operation::DescribePlacementGroups,
            code: "RequestLimitExceeded".into(),
            message: "slow down".into(),
        },
    );
    controller
        .reconcile(&stored(&server, "default").expect("the class"))
        .await;
    let written = stored(&server, "default").expect("the class");
    let conditions = written
        .status
        .and_then(|s| s.conditions)
        .expect("a status written");
    let placement = conditions
        .iter()
        .find(|c| c.type_ == "PlacementGroupReady")
        .expect("the condition");
    assert_eq!(
        placement.reason.as_deref(),
        Some("PlacementGroupResolutionFailed")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalizer_list_changed_meanwhile_is_not_overwritten() {
    let server = ApiServer::start().await.expect("the server starts");
    let ec2 = InMemoryEc2::new("us-west-2");
    server.put(&node_class("default")).expect("put");
    let controller = controller(&server, &ec2, &InMemoryIam::new()).await;
    let read = stored(&server, "default").expect("the class");
    let mut changed = read.clone();
    changed.metadata.finalizers = Some(vec!["example.com/keep".into()]);
    server.put(&changed).expect("another writer");
    assert!(controller.set_finalizers(&read, true).await.is_err());
    let class = stored(&server, "default").expect("the class");
    assert_eq!(class.finalizers(), ["example.com/keep"]);
    // Read again, the finalizer joins the other.
    controller
        .set_finalizers(&class, true)
        .await
        .expect("patched");
    let class = stored(&server, "default").expect("the class");
    assert_eq!(
        class.finalizers(),
        ["example.com/keep", TERMINATION_FINALIZER]
    );
}

#[test]
fn waiting_events_name_five_claims_then_count() {
    let names: Vec<String> = (1..=7).map(|i| format!("c{i}")).collect();
    assert_eq!(pretty_list(&names[..2], 5), "c1, c2");
    assert_eq!(pretty_list(&names[..5], 5), "c1, c2, c3, c4, c5");
    assert_eq!(pretty_list(&names, 5), "c1, c2, c3, c4, c5 and 2 other(s)");
}
