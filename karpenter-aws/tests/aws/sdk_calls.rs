//! Each EC2 call of `SdkEc2` through the loopback server: what the SDK
//! reads back is what the in-memory EC2 behind the server answers, and what
//! the SDK sends is what the in-memory EC2 receives.

use jiff::Timestamp;
use karpenter_aws::ec2::{
    CapacityReservation, CreateLaunchTemplateInput, CreateTagsInput, DescribeImagesInput,
    DescribeInput, DescribeInstanceStatusInput, DescribeInstanceTypeOfferingsInput,
    DescribeInstanceTypesInput, DescribeLaunchTemplatesInput, DescribePlacementGroupsInput,
    DescribeSpotPriceHistoryInput, DryRunCall, Ec2Api, Ec2Error, Filter, Image, InMemoryEc2,
    InstanceState, LaunchTemplateData, LaunchTemplatePlacement, LocationType,
    PLACEMENT_GROUP_UNKNOWN, PlacementGroup, RunInstancesInput, Tag, TagSpecification,
    TerminateInstancesInput, UNAUTHORIZED_OPERATION,
};
use karpenter_aws::sdk::SdkEc2;

use crate::common::ec2;
use crate::sdk_conformance::{fleet_of, sdk_over};

/// The same describe call through the SDK and straight to the in-memory
/// EC2 answers the same.
macro_rules! same {
    ($sdk:expr, $ec2:expr, $call:ident, $input:expr) => {{
        let input = $input;
        let through = $sdk.$call(input.clone()).await.expect(stringify!($call));
        let direct = $ec2.$call(input).await.expect(stringify!($call));
        assert_eq!(through, direct, stringify!($call));
        through
    }};
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

/// EC2 as `common::ec2` makes it, with an image carrying dates and tags,
/// a capacity reservation, a spot price and its clock past the epoch.
fn seeded() -> InMemoryEc2 {
    let ec2 = ec2();
    ec2.set_now(at("2026-03-01T12:00:00Z"));
    ec2.add_image(Image {
        image_id: "ami-dated".into(),
        name: "al2023 <dated> & tagged".into(),
        architecture: "arm64".into(),
        owner_id: "amazon".into(),
        creation_date: Some(at("2025-12-01T00:00:00Z")),
        deprecation_time: Some(at("2027-12-01T00:00:00Z")),
        state: "available".into(),
        tags: vec![Tag::new("a", "1"), Tag::new("b", "x y")],
    });
    ec2.add_capacity_reservation(CapacityReservation {
        capacity_reservation_id: "cr-1".into(),
        owner_id: "123456789012".into(),
        instance_type: "m5.large".into(),
        availability_zone: "us-east-1a".into(),
        available_instance_count: 2,
        total_instance_count: 3,
        state: "active".into(),
        reservation_type: "default".into(),
        instance_match_criteria: "targeted".into(),
        interruptible: true,
        end_date: Some(at("2026-06-01T00:00:00Z")),
        tags: vec![Tag::new("karpenter.sh/discovery", "demo")],
        ..CapacityReservation::default()
    });
    ec2.set_spot_price("m5.large", "us-east-1a", 0.0321);
    ec2
}

#[tokio::test]
async fn every_describe_call_reads_back_what_ec2_holds() {
    let ec2 = seeded();
    let (server, sdk) = sdk_over(&ec2).await;
    let all = DescribeInstanceTypesInput::default();
    let types = same!(sdk, ec2, describe_instance_types, all);
    // SdkEc2 asks for 100 types a page; the server pages as EC2 does.
    let pages = types.instance_types.len().div_ceil(100);
    assert!(pages > 1, "the whole catalog, in pages");
    assert_eq!(server.requests("DescribeInstanceTypes").await, pages);
    let named = DescribeInstanceTypesInput {
        instance_types: vec!["m5.large".into(), "p3.2xlarge".into()],
        filters: vec![],
    };
    same!(sdk, ec2, describe_instance_types, named);
    for location_type in [
        LocationType::Region,
        LocationType::AvailabilityZone,
        LocationType::AvailabilityZoneId,
    ] {
        let input = DescribeInstanceTypeOfferingsInput {
            location_type,
            filters: vec![Filter::new("instance-type", ["m5.large", "c5.large"])],
        };
        let out = same!(sdk, ec2, describe_instance_type_offerings, input);
        assert!(!out.instance_type_offerings.is_empty());
    }
    let in_a = DescribeInput {
        filters: vec![Filter::new("availability-zone", ["us-east-1a"])],
        ..DescribeInput::default()
    };
    assert_eq!(same!(sdk, ec2, describe_subnets, in_a).subnets.len(), 2);
    same!(sdk, ec2, describe_security_groups, DescribeInput::default());
    let images = DescribeImagesInput {
        owners: vec!["amazon".into()],
        ..DescribeImagesInput::default()
    };
    assert_eq!(same!(sdk, ec2, describe_images, images).images.len(), 4);
    let reservations = same!(
        sdk,
        ec2,
        describe_capacity_reservations,
        DescribeInput::default()
    );
    assert_eq!(reservations.capacity_reservations.len(), 1);
    let spot = DescribeSpotPriceHistoryInput {
        instance_types: vec!["m5.large".into()],
        product_descriptions: vec!["Linux/UNIX".into()],
        start_time: Some(at("2026-03-01T11:00:00Z")),
    };
    let prices = same!(sdk, ec2, describe_spot_price_history, spot);
    assert!(
        prices
            .spot_price_history
            .iter()
            .any(|p| p.spot_price == 0.0321)
    );
}

#[tokio::test]
async fn placement_groups_read_back_by_id_name_and_state() {
    let ec2 = seeded();
    ec2.add_placement_group(PlacementGroup {
        group_id: "pg-partition".into(),
        group_name: "my-partition-pg".into(),
        strategy: "partition".into(),
        partition_count: 7,
        tags: vec![Tag::new("team", "ml")],
        ..PlacementGroup::default()
    });
    ec2.add_placement_group(PlacementGroup {
        group_id: "pg-spread".into(),
        group_name: "my-spread-pg".into(),
        strategy: "spread".into(),
        spread_level: "rack".into(),
        ..PlacementGroup::default()
    });
    ec2.add_placement_group(PlacementGroup {
        group_id: "pg-pending".into(),
        group_name: "my-pending-pg".into(),
        strategy: "cluster".into(),
        state: "pending".into(),
        ..PlacementGroup::default()
    });
    let (server, sdk) = sdk_over(&ec2).await;
    let all = same!(
        sdk,
        ec2,
        describe_placement_groups,
        DescribePlacementGroupsInput::default()
    );
    assert_eq!(all.placement_groups.len(), 3);
    let by_id = DescribePlacementGroupsInput {
        group_ids: vec!["pg-partition".into()],
        ..DescribePlacementGroupsInput::default()
    };
    let partition = same!(sdk, ec2, describe_placement_groups, by_id);
    assert_eq!(partition.placement_groups[0].partition_count, 7);
    let available_by_name = |name: &str| DescribePlacementGroupsInput {
        group_names: vec![name.into()],
        filters: vec![Filter::new("state", ["available"])],
        ..DescribePlacementGroupsInput::default()
    };
    let spread = same!(
        sdk,
        ec2,
        describe_placement_groups,
        available_by_name("my-spread-pg")
    );
    assert_eq!(spread.placement_groups[0].spread_level, "rack");
    let pending = same!(
        sdk,
        ec2,
        describe_placement_groups,
        available_by_name("my-pending-pg")
    );
    assert!(pending.placement_groups.is_empty(), "filtered out by state");
    let unknown = sdk
        .describe_placement_groups(available_by_name("no-such-pg"))
        .await
        .expect_err("an unknown name fails the call");
    assert_eq!(unknown.code(), Some(PLACEMENT_GROUP_UNKNOWN));
    assert_eq!(server.requests("DescribePlacementGroups").await, 5);
}

/// Template `lt-calls` made through `sdk`, checked against what EC2 holds.
async fn make_template(sdk: &SdkEc2, ec2: &InMemoryEc2) -> String {
    let name = "lt-calls".to_owned();
    let data = LaunchTemplateData {
        image_id: Some("ami-amd64".into()),
        security_group_ids: vec!["sg-1".into()],
        user_data: Some("I2Nsb3VkLWNvbmZpZw+/=".into()),
        placement: Some(LaunchTemplatePlacement {
            group_id: Some("pg-partition".into()),
            partition_number: Some(3),
        }),
        ..LaunchTemplateData::default()
    };
    let input = CreateLaunchTemplateInput {
        launch_template_name: name.clone(),
        launch_template_data: data.clone(),
        tag_specifications: vec![TagSpecification {
            resource_type: "launch-template".into(),
            tags: vec![Tag::new("karpenter.sh/cluster", "demo")],
        }],
    };
    let made = sdk.create_launch_template(input).await.expect("made");
    assert_eq!(made.launch_template_name, name);
    assert_eq!(made.create_time, at("2026-03-01T12:00:00Z"));
    assert_eq!(ec2.launch_template_data(&name), Some(data));
    let by_name = DescribeLaunchTemplatesInput {
        launch_template_names: vec![name.clone()],
        ..DescribeLaunchTemplatesInput::default()
    };
    let described = same!(sdk, ec2, describe_launch_templates, by_name);
    assert_eq!(described.launch_templates, [made]);
    name
}

#[tokio::test]
async fn templates_fleets_tags_status_and_termination_go_through() {
    let ec2 = seeded();
    let (_server, sdk) = sdk_over(&ec2).await;
    let name = make_template(&sdk, &ec2).await;

    let fleet = fleet_of(&name);
    let launched = sdk.create_fleet(fleet.clone()).await.expect("a fleet");
    assert_eq!(ec2.last_fleet_input(), Some(fleet));
    assert!(launched.errors.is_empty(), "{launched:?}");
    let id = launched.instances[0].instance_ids[0].clone();

    let tag = Tag::new("karpenter.sh/nodeclaim", "web-1");
    let tagging = CreateTagsInput {
        resources: vec![id.clone()],
        tags: vec![tag.clone()],
    };
    sdk.create_tags(tagging).await.expect("tagged");
    let by_id = DescribeInput {
        ids: vec![id.clone()],
        ..DescribeInput::default()
    };
    let described = same!(sdk, ec2, describe_instances, by_id.clone());
    assert!(described.instances[0].tags.contains(&tag));

    ec2.impair(&id, false);
    ec2.schedule_event(&id, "instance-retirement");
    let status = DescribeInstanceStatusInput {
        instance_ids: vec![id.clone()],
        include_all_instances: true,
        ..DescribeInstanceStatusInput::default()
    };
    let statuses = same!(sdk, ec2, describe_instance_status, status);
    assert_eq!(statuses.instance_statuses[0].instance_status, "impaired");

    let ended = sdk
        .terminate_instances(TerminateInstancesInput {
            instance_ids: vec![id.clone()],
        })
        .await
        .expect("terminated");
    assert_eq!(ended.terminating_instances[0].instance_id, id);
    assert_eq!(
        ended.terminating_instances[0].previous_state,
        InstanceState::Running
    );
    let after = same!(sdk, ec2, describe_instances, by_id);
    assert_ne!(after.instances[0].state, InstanceState::Running);

    let deleted = sdk.delete_launch_template(&name).await.expect("deleted");
    assert_eq!(deleted.launch_template_name, name);
    assert_eq!(ec2.launch_template_data(&name), None);
}

#[tokio::test]
async fn dry_runs_are_allowed_or_refused_and_make_nothing() {
    let ec2 = seeded();
    let (_server, sdk) = sdk_over(&ec2).await;
    let name = "karpenter.k8s.aws/dry".to_owned();
    let tags = vec![TagSpecification {
        resource_type: "instance".into(),
        tags: vec![Tag::new("team", "a")],
    }];
    let run = RunInstancesInput {
        image_id: Some("ami-dated".into()),
        instance_type: "m5.large".into(),
        iam_instance_profile: Some("profile".into()),
        subnet_id: "subnet-a".into(),
        security_group_ids: vec!["sg-1".into()],
        tag_specifications: tags,
    };
    let calls = [
        DryRunCall::CreateFleet(Box::new(fleet_of(&name))),
        DryRunCall::RunInstances(run),
    ];
    for call in calls.iter().cloned() {
        sdk.dry_run(call).await.expect("allowed");
    }
    assert_eq!(ec2.launch_template_data(&name), None);
    assert!(ec2.instances().is_empty());

    for call in calls {
        let operation = call.operation();
        ec2.fail_next(
            operation,
            Ec2Error::service(operation, UNAUTHORIZED_OPERATION, "not authorized"),
        );
        let error = sdk.dry_run(call).await.expect_err("refused");
        assert!(error.is_unauthorized(), "{operation}: {error}");
    }
    assert!(ec2.instances().is_empty());
}
