//! `PlacementGroupReady` over `InMemoryEc2`, with upstream's placement
//! group reconciler's cases: a cluster, a partition, a spread and a
//! pending group.

use karpenter_core::api::{ConditionStatus, Conditions};
use serde_json::{Value, json};

use super::{class, context};
use crate::ec2::{
    self, Ec2Error, Image, InMemoryEc2, Operation, PlacementGroup, SecurityGroup, Tag,
};
use crate::nodeclass::EC2NodeClassStatus;
use crate::nodeclass::resolve::{ResolveError, resolve_status};

/// One subnet, group and image, and upstream's four placement groups.
fn ec2() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new("us-west-2");
    ec2.add_subnet(ec2::Subnet {
        subnet_id: "subnet-1".into(),
        availability_zone: "us-west-2a".into(),
        available_ip_address_count: 10,
        tags: vec![Tag::new("Name", "subnet-1")],
        ..ec2::Subnet::default()
    });
    ec2.add_security_group(SecurityGroup {
        group_id: "sg-1".into(),
        tags: vec![Tag::new("Name", "sg-1")],
        ..SecurityGroup::default()
    });
    ec2.add_image(Image {
        image_id: "ami-1".into(),
        architecture: "x86_64".into(),
        state: "available".into(),
        tags: vec![Tag::new("Name", "ami-1")],
        ..Image::default()
    });
    let groups = [
        (
            "pg-cluster123",
            "my-cluster-pg",
            "cluster",
            0,
            "",
            "available",
        ),
        (
            "pg-partition456",
            "my-partition-pg",
            "partition",
            7,
            "",
            "available",
        ),
        (
            "pg-spread789",
            "my-spread-pg",
            "spread",
            0,
            "rack",
            "available",
        ),
        (
            "pg-pending000",
            "my-pending-pg",
            "cluster",
            0,
            "",
            "pending",
        ),
    ];
    for (id, name, strategy, partitions, spread, state) in groups {
        ec2.add_placement_group(PlacementGroup {
            group_id: id.into(),
            group_name: name.into(),
            strategy: strategy.into(),
            partition_count: partitions,
            spread_level: spread.into(),
            state: state.into(),
            tags: Vec::new(),
        });
    }
    ec2
}

fn placement(status: &EC2NodeClassStatus) -> Option<(ConditionStatus, String, String)> {
    let condition = status.conditions.find("PlacementGroupReady")?;
    Some((
        condition.status,
        condition.reason.clone().unwrap_or_default(),
        condition.message.clone().unwrap_or_default(),
    ))
}

async fn resolve(ec2: &InMemoryEc2, selector: Value) -> Result<EC2NodeClassStatus, ResolveError> {
    let spec = if selector.is_null() {
        json!({})
    } else {
        json!({"placementGroupSelector": selector})
    };
    resolve_status(ec2, &class(spec), &context()).await
}

fn ready() -> Option<(ConditionStatus, String, String)> {
    Some((
        ConditionStatus::True,
        "PlacementGroupReady".into(),
        String::new(),
    ))
}

#[tokio::test]
async fn no_selector_is_ready_without_a_call() {
    let ec2 = ec2();
    // A call would fail: none is made.
    let error = Ec2Error::service(Operation::DescribePlacementGroups, "Unauthorized", "no");
    ec2.fail_next(Operation::DescribePlacementGroups, error);
    let status = resolve(&ec2, Value::Null).await.expect("resolved");
    assert_eq!(placement(&status), ready());
}

#[tokio::test]
async fn groups_of_every_strategy_are_found_by_name_or_id() {
    let ec2 = ec2();
    for selector in [
        json!({"name": "my-cluster-pg"}),
        json!({"id": "pg-cluster123"}),
        json!({"name": "my-partition-pg"}),
        json!({"name": "my-spread-pg"}),
    ] {
        let status = resolve(&ec2, selector.clone()).await.expect("resolved");
        assert_eq!(placement(&status), ready(), "{selector}");
    }
}

#[tokio::test]
async fn a_missing_or_pending_group_is_not_found() {
    let ec2 = ec2();
    for (selector, named) in [
        (json!({"name": "nonexistent-pg"}), "nonexistent-pg"),
        (json!({"name": "my-pending-pg"}), "my-pending-pg"),
        (json!({"id": "pg-0000000000"}), "pg-0000000000"),
        (json!({"id": "pg-pending000"}), "pg-pending000"),
    ] {
        let status = resolve(&ec2, selector).await.expect("resolved");
        let expected = (
            ConditionStatus::False,
            "PlacementGroupNotFound".to_owned(),
            format!("Placement group \"{named}\" not found"),
        );
        assert_eq!(placement(&status), Some(expected));
        let root = status.conditions.find("Ready").map(|c| c.status);
        assert_eq!(root, Some(ConditionStatus::False), "{named}");
    }
}

#[tokio::test]
async fn a_failed_lookup_is_returned_with_the_status_it_leaves() {
    let ec2 = ec2();
    let throttled = Ec2Error::Throttling {
        operation: Operation::DescribePlacementGroups,
        code: "RequestLimitExceeded".into(),
        message: "slow down".into(),
    };
    ec2.fail_next(Operation::DescribePlacementGroups, throttled);
    let error = resolve(&ec2, json!({"name": "my-cluster-pg"}))
        .await
        .expect_err("the call failed");
    let message = error.to_string();
    assert!(message.contains("spec.placementGroupSelector"), "{message}");
    assert!(message.contains("my-cluster-pg"), "{message}");
    let ResolveError::PlacementGroup { source, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(source.is_retryable());
    let status = error.status().expect("a status to write");
    let expected = (
        ConditionStatus::False,
        "PlacementGroupResolutionFailed".to_owned(),
        "Failed to resolve placement group".to_owned(),
    );
    assert_eq!(placement(status), Some(expected));
    // Everything else was resolved first.
    assert_eq!(status.subnets.as_ref().map(Vec::len), Some(1));
    let root = status.conditions.find("Ready").map(|c| c.status);
    assert_eq!(root, Some(ConditionStatus::False));

    // The next lookup succeeds: True again.
    let status = resolve(&ec2, json!({"name": "my-cluster-pg"}))
        .await
        .expect("resolved");
    assert_eq!(placement(&status), ready());
}

#[tokio::test]
async fn removing_or_changing_the_selector_follows_the_spec() {
    let ec2 = ec2();
    let mut class = class(json!({"placementGroupSelector": {"name": "nonexistent-pg"}}));
    let status = resolve_status(&ec2, &class, &context())
        .await
        .expect("resolved");
    assert_eq!(
        placement(&status).map(|(s, _, _)| s),
        Some(ConditionStatus::False)
    );
    class.status = Some(status);
    class.spec.placement_group_selector = None;
    let status = resolve_status(&ec2, &class, &context())
        .await
        .expect("resolved");
    assert_eq!(placement(&status), ready());
}
