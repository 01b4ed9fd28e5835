//! `DescribePlacementGroups` over the groups a caller added.

use super::REGION;
use crate::ec2::{
    DescribePlacementGroupsInput, Ec2Api, Filter, InMemoryEc2, PLACEMENT_GROUP_UNKNOWN,
    PlacementGroup,
};

fn groups() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new(REGION);
    for (id, name, strategy, state) in [
        ("pg-cluster123", "my-cluster-pg", "cluster", ""),
        ("pg-spread789", "my-spread-pg", "spread", "available"),
        ("pg-pending000", "my-pending-pg", "cluster", "pending"),
    ] {
        ec2.add_placement_group(PlacementGroup {
            group_id: id.into(),
            group_name: name.into(),
            strategy: strategy.into(),
            state: state.into(),
            ..PlacementGroup::default()
        });
    }
    ec2
}

fn ids(groups: &[PlacementGroup]) -> Vec<&str> {
    groups.iter().map(|g| g.group_id.as_str()).collect()
}

#[tokio::test]
async fn groups_are_named_by_id_or_name_and_filtered() {
    let ec2 = groups();
    let all = ec2
        .describe_placement_groups(DescribePlacementGroupsInput::default())
        .await
        .expect("all");
    assert_eq!(
        ids(&all.placement_groups),
        ["pg-cluster123", "pg-pending000", "pg-spread789"]
    );
    assert_eq!(all.placement_groups[0].state, "available", "defaulted");
    let available = || vec![Filter::new("state", ["available"])];
    let by_name = DescribePlacementGroupsInput {
        group_names: vec!["my-spread-pg".into(), "my-pending-pg".into()],
        filters: available(),
        ..DescribePlacementGroupsInput::default()
    };
    let out = ec2.describe_placement_groups(by_name).await.expect("named");
    assert_eq!(ids(&out.placement_groups), ["pg-spread789"]);
    let by_id = DescribePlacementGroupsInput {
        group_ids: vec!["pg-cluster123".into()],
        filters: available(),
        ..DescribePlacementGroupsInput::default()
    };
    let out = ec2.describe_placement_groups(by_id).await.expect("by ID");
    assert_eq!(ids(&out.placement_groups), ["pg-cluster123"]);
}

#[tokio::test]
async fn an_unknown_name_or_id_fails_the_call() {
    let ec2 = groups();
    for input in [
        DescribePlacementGroupsInput {
            group_names: vec!["my-cluster-pg".into(), "nonexistent-pg".into()],
            ..DescribePlacementGroupsInput::default()
        },
        DescribePlacementGroupsInput {
            group_ids: vec!["pg-0nope".into()],
            ..DescribePlacementGroupsInput::default()
        },
    ] {
        let error = ec2
            .describe_placement_groups(input.clone())
            .await
            .expect_err("unknown");
        assert_eq!(error.code(), Some(PLACEMENT_GROUP_UNKNOWN), "{input:?}");
    }
}
