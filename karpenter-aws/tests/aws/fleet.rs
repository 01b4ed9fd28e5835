//! What `create` asks `CreateFleet` for, as the in-memory EC2 recorded it:
//! the Context rule, the overrides, the allocation strategies and the
//! tags.

use std::collections::BTreeSet;

use karpenter_aws::ec2::{
    CreateFleetInput, InMemoryEc2, OnDemandAllocationStrategy, SpotAllocationStrategy,
    TargetCapacityType,
};
use karpenter_aws::{AwsCloudProvider, EC2NodeClass};
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::json;

use crate::common::{claim, class, ec2, is_in, pool, provider, ready_status};

const TYPE: &str = "node.kubernetes.io/instance-type";
const CAPACITY: &str = "karpenter.sh/capacity-type";
const RELAXED: &str = "karpenter.sh/nodeclaim-min-values-relaxed";

/// The ready class with fleet Context `context`.
fn class_with_context(context: &str) -> EC2NodeClass {
    let mut class = class(ready_status());
    class.spec.context = Some(context.to_owned());
    class
}

/// `claim` annotated with minValues relaxed as `relaxed`.
fn relaxed(mut claim: NodeClaim, relaxed: &str) -> NodeClaim {
    claim
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(RELAXED.to_owned(), relaxed.to_owned());
    claim
}

/// Launches `wanted` and gives the fleet input that launched it.
async fn launched_with(
    provider: &AwsCloudProvider<InMemoryEc2>,
    ec2: &InMemoryEc2,
    wanted: &NodeClaim,
) -> CreateFleetInput {
    let before = ec2.fleet_inputs().len();
    provider.create(wanted).await.expect("a launch");
    let inputs = ec2.fleet_inputs();
    assert_eq!(inputs.len(), before + 1, "one CreateFleet call per launch");
    inputs[before].clone()
}

#[tokio::test]
async fn context_is_sent_unless_min_values_were_relaxed() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    provider.apply_node_class(class_with_context("ctx-1"));
    let wanted = || claim("web-1", json!([is_in(TYPE, &["m5.large"])]));
    let plain = launched_with(&provider, &ec2, &wanted()).await;
    assert_eq!(plain.context.as_deref(), Some("ctx-1"));
    let not_relaxed = launched_with(&provider, &ec2, &relaxed(wanted(), "false")).await;
    assert_eq!(not_relaxed.context.as_deref(), Some("ctx-1"));
    let dropped = launched_with(&provider, &ec2, &relaxed(wanted(), "true")).await;
    assert_eq!(dropped.context, None);
    // A class without Context sends none.
    provider.apply_node_class(class(ready_status()));
    let none = launched_with(&provider, &ec2, &wanted()).await;
    assert_eq!(none.context, None);
}

#[tokio::test]
async fn overrides_are_each_type_in_each_zone_priced_in_the_roomiest_subnet() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let names = ["m5.large", "c5.large"];
    let wanted = claim(
        "web-1",
        json!([is_in(TYPE, &names), is_in(CAPACITY, &["on-demand"])]),
    );
    let input = launched_with(&provider, &ec2, &wanted).await;
    let types = provider.instance_types(&pool()).await.expect("types");
    let overrides: Vec<_> = input
        .launch_template_configs
        .iter()
        .flat_map(|c| &c.overrides)
        .collect();
    let pairs: BTreeSet<(&str, &str)> = overrides
        .iter()
        .map(|o| (o.instance_type.as_str(), o.availability_zone.as_str()))
        .collect();
    // The class's subnets are in us-east-1a and us-east-1b only.
    let expected: BTreeSet<(&str, &str)> = names
        .iter()
        .flat_map(|t| [(*t, "us-east-1a"), (*t, "us-east-1b")])
        .collect();
    assert_eq!(pairs, expected);
    assert_eq!(overrides.len(), expected.len(), "no override twice");
    for o in &overrides {
        let subnet = if o.availability_zone == "us-east-1a" {
            "subnet-a2"
        } else {
            "subnet-b"
        };
        assert_eq!(o.subnet_id, subnet, "{o:?}");
        let price = types
            .iter()
            .filter(|t| t.name == o.instance_type)
            .flat_map(|t| &t.offerings)
            .find(|of| of.zone == o.availability_zone && of.capacity_type == "on-demand")
            .map(|of| of.price);
        assert_eq!(o.priority, price, "{o:?}");
        assert_eq!(o.image_id.as_deref(), Some("ami-amd64"));
    }
    assert!(
        input
            .launch_template_configs
            .iter()
            .all(|c| c.version == "$Latest")
    );
    assert_eq!(input.total_target_capacity, 1);
}

#[tokio::test]
async fn each_capacity_type_gets_its_allocation_strategy() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let as_type = |capacity: &str| {
        claim(
            "web-1",
            json!([is_in(TYPE, &["m5.large"]), is_in(CAPACITY, &[capacity])]),
        )
    };
    let spot = launched_with(&provider, &ec2, &as_type("spot")).await;
    assert_eq!(spot.default_target_capacity_type, TargetCapacityType::Spot);
    assert_eq!(
        spot.spot_allocation_strategy,
        SpotAllocationStrategy::PriceCapacityOptimized
    );
    let on_demand = launched_with(&provider, &ec2, &as_type("on-demand")).await;
    assert_eq!(
        on_demand.default_target_capacity_type,
        TargetCapacityType::OnDemand
    );
    assert_eq!(
        on_demand.on_demand_allocation_strategy,
        OnDemandAllocationStrategy::LowestPrice
    );
    assert!(!on_demand.interruptible_capacity_reservation);
}

#[tokio::test]
async fn the_instance_its_volumes_and_the_fleet_carry_the_launch_tags() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let mut tagged = class(ready_status());
    tagged.spec.tags = Some(
        [("team", "web"), ("karpenter.sh/nodepool", "spoofed")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    );
    provider.apply_node_class(tagged);
    let wanted = claim("web-1", json!([is_in(TYPE, &["m5.large"])]));
    let input = launched_with(&provider, &ec2, &wanted).await;
    let resources: Vec<&str> = input
        .tag_specifications
        .iter()
        .map(|s| s.resource_type.as_str())
        .collect();
    assert_eq!(resources, ["instance", "volume", "fleet"]);
    for spec in &input.tag_specifications {
        let tags: BTreeSet<(&str, &str)> = spec
            .tags
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_str()))
            .collect();
        let expected: BTreeSet<(&str, &str)> = [
            ("team", "web"),
            ("kubernetes.io/cluster/demo", "owned"),
            // The pool's own name wins over the class's tag.
            ("karpenter.sh/nodepool", "default"),
            ("eks:eks-cluster-name", "demo"),
            ("karpenter.k8s.aws/ec2nodeclass", "default"),
        ]
        .into_iter()
        .collect();
        assert_eq!(tags, expected, "{}", spec.resource_type);
    }
    // And the instance EC2 started has them.
    let instance_tags = &ec2.instances()[0].tags;
    assert!(
        instance_tags
            .iter()
            .any(|t| t.key == "team" && t.value == "web")
    );
}
