//! Launches of a class naming a placement group: the group (and a
//! partition group's partition) in the launch template's `Placement`, and
//! the group's labels on the claim, as upstream launches them.

use karpenter_aws::ec2::{
    Ec2Error, InMemoryEc2, LaunchTemplateData, LaunchTemplatePlacement, Operation, PlacementGroup,
};
use karpenter_aws::{AwsCloudProvider, EC2NodeClass};
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::{Value, json};

use crate::common::{claim, class, ec2, is_in, label, provider, ready_status};

const GROUP_ID: &str = "karpenter.k8s.aws/placement-group-id";
const PARTITION: &str = "karpenter.k8s.aws/placement-group-partition";

/// EC2 as `common::ec2` makes it, with a partition and a spread group.
fn with_groups() -> InMemoryEc2 {
    let ec2 = ec2();
    ec2.add_placement_group(PlacementGroup {
        group_id: "pg-partition456".into(),
        group_name: "my-partition-pg".into(),
        strategy: "partition".into(),
        partition_count: 7,
        ..PlacementGroup::default()
    });
    ec2.add_placement_group(PlacementGroup {
        group_id: "pg-spread789".into(),
        group_name: "my-spread-pg".into(),
        strategy: "spread".into(),
        spread_level: "rack".into(),
        ..PlacementGroup::default()
    });
    ec2
}

/// The ready class `default` with `selector` as its placement group
/// selector.
fn class_in(selector: Value) -> EC2NodeClass {
    let mut class = class(ready_status());
    class.spec.placement_group_selector =
        Some(serde_json::from_value(selector).expect("a selector"));
    class
}

/// The template data the last launch named.
fn launched_template(ec2: &InMemoryEc2) -> LaunchTemplateData {
    let input = ec2.last_fleet_input().expect("a fleet");
    let name = &input.launch_template_configs[0].launch_template_name;
    ec2.launch_template_data(name).expect("a made template")
}

async fn launch(
    provider: &AwsCloudProvider<InMemoryEc2>,
    requirements: Value,
) -> karpenter_core::api::NodeClaim {
    provider
        .create(&claim("web-1", requirements))
        .await
        .expect("a launch")
}

#[tokio::test]
async fn a_partition_group_launches_into_the_lowest_partition_asked_for() {
    let ec2 = with_groups();
    let (provider, _clock) = provider(&ec2);
    provider.apply_node_class(class_in(json!({"name": "my-partition-pg"})));
    let launched = launch(
        &provider,
        json!([
            is_in("node.kubernetes.io/instance-type", &["m5.large"]),
            is_in(PARTITION, &["3", "2"]),
        ]),
    )
    .await;
    let placement = launched_template(&ec2).placement;
    let expected = LaunchTemplatePlacement {
        group_id: Some("pg-partition456".into()),
        partition_number: Some(2),
    };
    assert_eq!(placement, Some(expected));
    assert_eq!(label(&launched, GROUP_ID), "pg-partition456");
    assert_eq!(label(&launched, PARTITION), "2");
}

#[tokio::test]
async fn a_partition_left_open_is_ec2s_to_choose_and_labelled_empty() {
    let ec2 = with_groups();
    let (provider, _clock) = provider(&ec2);
    provider.apply_node_class(class_in(json!({"id": "pg-partition456"})));
    let launched = launch(
        &provider,
        json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    )
    .await;
    let expected = LaunchTemplatePlacement {
        group_id: Some("pg-partition456".into()),
        partition_number: None,
    };
    assert_eq!(launched_template(&ec2).placement, Some(expected));
    let labels = launched.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get(PARTITION).map(String::as_str), Some(""));
}

#[tokio::test]
async fn a_spread_group_carries_no_partition() {
    let ec2 = with_groups();
    let (provider, _clock) = provider(&ec2);
    provider.apply_node_class(class_in(json!({"name": "my-spread-pg"})));
    let launched = launch(
        &provider,
        json!([
            is_in("node.kubernetes.io/instance-type", &["m5.large"]),
            is_in(PARTITION, &["1"]),
        ]),
    )
    .await;
    let expected = LaunchTemplatePlacement {
        group_id: Some("pg-spread789".into()),
        partition_number: None,
    };
    assert_eq!(launched_template(&ec2).placement, Some(expected));
    assert_eq!(label(&launched, GROUP_ID), "pg-spread789");
    let labels = launched.metadata.labels.clone().unwrap_or_default();
    assert!(!labels.contains_key(PARTITION), "{labels:?}");
}

#[tokio::test]
async fn a_node_drifts_when_its_classs_group_is_another() {
    let ec2 = with_groups();
    let (provider, _clock) = provider(&ec2);
    provider.apply_node_class(class_in(json!({"name": "my-partition-pg"})));
    let launched = launch(
        &provider,
        json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    )
    .await;
    let drifted = provider.is_drifted(&launched).await.expect("decided");
    assert_eq!(drifted, None, "still the class's group");
    // The group made again under the same name: a new ID, the spec as
    // it was.
    ec2.add_placement_group(PlacementGroup {
        group_id: "pg-0remade".into(),
        group_name: "my-partition-pg".into(),
        strategy: "partition".into(),
        partition_count: 7,
        ..PlacementGroup::default()
    });
    let drifted = provider.is_drifted(&launched).await.expect("decided");
    assert_eq!(drifted.as_deref(), Some("PlacementGroupDrift"));
}

#[tokio::test]
async fn without_a_selector_nothing_is_looked_up_or_placed() {
    let ec2 = with_groups();
    let (provider, _clock) = provider(&ec2);
    let refused = Ec2Error::service(Operation::DescribePlacementGroups, "Unauthorized", "no");
    ec2.fail_next(Operation::DescribePlacementGroups, refused);
    let launched = launch(
        &provider,
        json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    )
    .await;
    assert_eq!(launched_template(&ec2).placement, None);
    let labels = launched.metadata.labels.clone().unwrap_or_default();
    assert!(!labels.contains_key(GROUP_ID), "{labels:?}");
}

#[tokio::test]
async fn a_failed_lookup_fails_the_launch_rather_than_place_it_elsewhere() {
    let ec2 = with_groups();
    let (provider, _clock) = provider(&ec2);
    provider.apply_node_class(class_in(json!({"name": "my-spread-pg"})));
    let throttled = Ec2Error::Throttling {
        operation: Operation::DescribePlacementGroups,
        code: "RequestLimitExceeded".into(),
        message: "slow down".into(),
    };
    ec2.fail_next(Operation::DescribePlacementGroups, throttled);
    let wanted = claim(
        "web-1",
        json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    );
    assert!(provider.create(&wanted).await.is_err());
    assert!(ec2.instances().is_empty(), "nothing launched");
}
