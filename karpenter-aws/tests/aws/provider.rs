//! Launches: what `create` chooses and asks EC2 for, the template retry,
//! readiness and prices.

use karpenter_aws::ec2::{Ec2Api, Ec2Error, Operation};
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError};
use serde_json::json;

use crate::common::{
    annotations, cheapest, claim, class, ec2, is_in, label, pool, pool_of, provider, ready_status,
};

const TYPE: &str = "node.kubernetes.io/instance-type";
const ZONE: &str = "topology.kubernetes.io/zone";
const CAPACITY: &str = "karpenter.sh/capacity-type";

#[tokio::test]
async fn a_launch_takes_the_cheapest_allowed_type_and_the_roomiest_subnet() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let names = ["m5.large", "c5.large", "m5.xlarge", "r5.large"];
    let types = provider.instance_types(&pool()).await.expect("types");
    let (expected, _) = cheapest(&types, &names, "us-east-1a", "on-demand");
    let wanted = claim(
        "web-1",
        json!([
            is_in(TYPE, &names),
            is_in(ZONE, &["us-east-1a"]),
            is_in(CAPACITY, &["on-demand"]),
        ]),
    );
    let launched = provider.create(&wanted).await.expect("a launch");
    assert_eq!(label(&launched, TYPE), expected);
    assert_eq!(label(&launched, ZONE), "us-east-1a");
    assert_eq!(label(&launched, "topology.k8s.aws/zone-id"), "use1-az1");
    assert_eq!(label(&launched, CAPACITY), "on-demand");
    let status = launched.status.as_ref().expect("a status");
    let provider_id = status.provider_id.as_deref().expect("a provider ID");
    let instances = ec2.instances();
    assert_eq!(instances.len(), 1);
    assert_eq!(
        provider_id,
        format!("aws:///us-east-1a/{}", instances[0].instance_id)
    );
    assert_eq!(
        instances[0].subnet_id, "subnet-a2",
        "the subnet with most free addresses"
    );
    assert_eq!(status.image_id.as_deref(), Some("ami-amd64"));
    assert!(status.allocatable.is_some() && status.capacity.is_some());
    // The class's hash, as upstream's create annotates the claim.
    let stored = annotations(&launched);
    assert!(!stored["karpenter.k8s.aws/ec2nodeclass-hash"].is_empty());
    assert_eq!(
        stored["karpenter.k8s.aws/ec2nodeclass-hash-version"],
        "rs-v1"
    );
    // And the instance profile it launched with, which the profile
    // collector keeps while the claim lives.
    assert_eq!(
        stored["karpenter.k8s.aws/instance-profile-name"],
        "KarpenterNodeProfile"
    );
    // The launch tags reach the instance.
    let tags: Vec<(&str, &str)> = instances[0]
        .tags
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert!(tags.contains(&("kubernetes.io/cluster/demo", "owned")));
    assert!(tags.contains(&("karpenter.sh/nodepool", "default")));
}

#[tokio::test]
async fn spot_is_launched_before_on_demand() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let wanted = claim("web-1", json!([is_in(TYPE, &["m5.large"])]));
    let launched = provider.create(&wanted).await.expect("a launch");
    assert_eq!(label(&launched, CAPACITY), "spot");
    assert_eq!(
        ec2.instances()[0].instance_lifecycle.as_deref(),
        Some("spot")
    );
}

#[tokio::test]
async fn a_template_gone_missing_is_made_again_and_the_fleet_retried_once() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let wanted = || claim("web-1", json!([is_in(TYPE, &["m5.large"])]));
    provider.create(&wanted()).await.expect("a first launch");
    let gone = || {
        Ec2Error::service(
            Operation::CreateFleet,
            "InvalidLaunchTemplateName.NotFoundException",
            "The specified launch template does not exist.",
        )
    };
    // Deleted behind the provider's back: describe still answers from
    // EC2, so the fleet call is what finds out.
    let templates = ec2
        .describe_launch_templates(Default::default())
        .await
        .expect("templates");
    assert!(!templates.launch_templates.is_empty());
    ec2.fail_next(Operation::CreateFleet, gone());
    provider.create(&wanted()).await.expect("retried once");
    assert_eq!(ec2.instances().len(), 2);
    // The refused call and its retry, asking the same.
    let inputs = ec2.fleet_inputs();
    assert_eq!(inputs.len(), 3);
    assert_eq!(inputs[1], inputs[2]);
    // Twice in a row: one retry only.
    ec2.fail_next(Operation::CreateFleet, gone());
    ec2.fail_next(Operation::CreateFleet, gone());
    assert!(provider.create(&wanted()).await.is_err());
    assert_eq!(ec2.instances().len(), 2);
    assert_eq!(ec2.fleet_inputs().len(), 5);
}

#[tokio::test]
async fn a_class_not_ready_or_unknown_launches_nothing() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let mut status = ready_status();
    status["amis"] = json!([]);
    provider.apply_node_class(class(status));
    match provider.create(&claim("web-1", json!([]))).await {
        Err(CloudProviderError::NodeClassNotReady { name, message }) => {
            assert_eq!(name, "default");
            assert!(message.contains("status.amis"), "{message}");
        }
        other => panic!("expected not ready, got {other:?}"),
    }
    // Ready=False: not ready, with the condition's message.
    let mut status = ready_status();
    status["conditions"] =
        json!([{"type": "Ready", "status": "False", "message": "AMIs not found"}]);
    provider.apply_node_class(class(status));
    match provider.create(&claim("web-1", json!([]))).await {
        Err(CloudProviderError::NodeClassNotReady { message, .. }) => {
            assert_eq!(message, "AMIs not found");
        }
        other => panic!("expected not ready, got {other:?}"),
    }
    // Ready=Unknown: a create error upstream names.
    let mut status = ready_status();
    status["conditions"] = json!([{"type": "Ready", "status": "Unknown"}]);
    provider.apply_node_class(class(status));
    match provider.create(&claim("web-1", json!([]))).await {
        Err(CloudProviderError::Create { reason, .. }) => {
            assert_eq!(reason, "NodeClassReadinessUnknown");
        }
        other => panic!("expected a create error, got {other:?}"),
    }
    // An unknown class: no types for its pool, no capacity for its claim.
    let types = provider.instance_types(&pool_of("missing")).await;
    assert!(types.expect("no error").is_empty());
    let mut orphan = claim("web-2", json!([]));
    if let Some(r) = orphan.spec.node_class_ref.as_mut() {
        r.name = "missing".into();
    }
    assert!(matches!(
        provider.create(&orphan).await,
        Err(CloudProviderError::InsufficientCapacity { .. })
    ));
    assert!(ec2.instances().is_empty());
}

#[tokio::test]
async fn refreshed_prices_reach_the_offerings() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    ec2.set_spot_price("m5.large", "us-east-1a", 0.0123);
    let refreshed = provider.refresh_prices().await.expect("prices");
    assert!(
        refreshed.spot > 0 && refreshed.on_demand > 0,
        "{refreshed:?}"
    );
    let types = provider.instance_types(&pool()).await.expect("types");
    let (_, price) = cheapest(&types, &["m5.large"], "us-east-1a", "spot");
    assert!((price - 0.0123).abs() < 1e-9, "{price}");
}
