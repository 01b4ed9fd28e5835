//! The describe calls a class's status reads (offerings, security groups,
//! images, capacity reservations), the launch template reads and deletes,
//! tags and the instance status poll: each request and its answer.

use wiremock::MockServer;
use wiremock::matchers::body_string_contains;

use super::{clients, ec2_action, ec2_error, ec2_ok, fast_limits};
use crate::ec2::{
    CreateTagsInput, DescribeImagesInput, DescribeInput, DescribeInstanceStatusInput,
    DescribeInstanceTypeOfferingsInput, DescribeLaunchTemplatesInput, DescribePlacementGroupsInput,
    Ec2Api, Ec2Error, Filter, InstanceState, LocationType, PLACEMENT_GROUP_UNKNOWN, PlacementGroup,
    Tag,
};

#[tokio::test]
async fn offerings_are_read_by_location_type() {
    let server = MockServer::start().await;
    let body = "<instanceTypeOfferingSet>\
        <item><instanceType>m5.large</instanceType><locationType>availability-zone</locationType>\
        <location>us-west-2a</location></item>\
        <item><instanceType>m5.large</instanceType><locationType>availability-zone</locationType>\
        <location>us-west-2b</location></item></instanceTypeOfferingSet>";
    ec2_action("DescribeInstanceTypeOfferings")
        .and(body_string_contains("LocationType=availability-zone"))
        .respond_with(ec2_ok("DescribeInstanceTypeOfferings", body))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let out = ec2
        .describe_instance_type_offerings(DescribeInstanceTypeOfferingsInput::default())
        .await
        .expect("offerings");
    let zones: Vec<_> = out
        .instance_type_offerings
        .iter()
        .map(|o| (o.location.as_str(), o.location_type))
        .collect();
    assert_eq!(
        zones,
        [
            ("us-west-2a", LocationType::AvailabilityZone),
            ("us-west-2b", LocationType::AvailabilityZone)
        ]
    );
}

#[tokio::test]
async fn security_groups_are_read_by_name_filter() {
    let server = MockServer::start().await;
    let body = "<securityGroupInfo><item><groupId>sg-1</groupId><groupName>nodes</groupName>\
        <vpcId>vpc-1</vpcId><tagSet><item><key>karpenter.sh/discovery</key><value>demo</value></item></tagSet>\
        </item></securityGroupInfo>";
    ec2_action("DescribeSecurityGroups")
        .and(body_string_contains("Filter.1.Name=group-name"))
        .respond_with(ec2_ok("DescribeSecurityGroups", body))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeInput {
        ids: Vec::new(),
        filters: vec![Filter::new("group-name", ["nodes"])],
    };
    let out = ec2.describe_security_groups(input).await.expect("groups");
    let group = &out.security_groups[0];
    assert_eq!(
        (group.group_id.as_str(), group.group_name.as_str()),
        ("sg-1", "nodes")
    );
    assert_eq!(group.tags, [Tag::new("karpenter.sh/discovery", "demo")]);
}

#[tokio::test]
async fn placement_groups_are_read_by_name_and_state() {
    let server = MockServer::start().await;
    let body = "<placementGroupSet><item><groupName>my-partition-pg</groupName>\
        <state>available</state><strategy>partition</strategy><partitionCount>7</partitionCount>\
        <groupId>pg-partition456</groupId><groupArn>arn:aws:ec2:us-west-2:1:placement-group/x</groupArn>\
        <tagSet><item><key>team</key><value>ml</value></item></tagSet></item></placementGroupSet>";
    ec2_action("DescribePlacementGroups")
        .and(body_string_contains("GroupName.1=my-partition-pg"))
        .and(body_string_contains("Filter.1.Name=state"))
        .and(body_string_contains("Filter.1.Value.1=available"))
        .respond_with(ec2_ok("DescribePlacementGroups", body))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribePlacementGroupsInput {
        group_names: vec!["my-partition-pg".into()],
        filters: vec![Filter::new("state", ["available"])],
        ..DescribePlacementGroupsInput::default()
    };
    let out = ec2.describe_placement_groups(input).await.expect("groups");
    let expected = PlacementGroup {
        group_id: "pg-partition456".into(),
        group_name: "my-partition-pg".into(),
        strategy: "partition".into(),
        partition_count: 7,
        spread_level: String::new(),
        state: "available".into(),
        tags: vec![Tag::new("team", "ml")],
    };
    assert_eq!(out.placement_groups, [expected]);
}

#[tokio::test]
async fn an_unknown_placement_group_is_a_service_error() {
    let server = MockServer::start().await;
    ec2_action("DescribePlacementGroups")
        .and(body_string_contains("GroupId.1=pg-0abc"))
        .respond_with(ec2_error(
            400,
            PLACEMENT_GROUP_UNKNOWN,
            "The Placement Group 'pg-0abc' is unknown.",
        ))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribePlacementGroupsInput {
        group_ids: vec!["pg-0abc".into()],
        ..DescribePlacementGroupsInput::default()
    };
    let error = ec2
        .describe_placement_groups(input)
        .await
        .expect_err("unknown");
    assert!(matches!(error, Ec2Error::Service { .. }), "{error:?}");
    assert_eq!(error.code(), Some(PLACEMENT_GROUP_UNKNOWN));
    assert!(!error.is_retryable());
}

#[tokio::test]
async fn images_carry_their_dates_and_owners_are_sent() {
    let server = MockServer::start().await;
    let body = "<imagesSet><item><imageId>ami-1</imageId><imageState>available</imageState>\
        <imageOwnerId>123456789012</imageOwnerId><creationDate>2026-10-01T12:00:00.000Z</creationDate>\
        <architecture>arm64</architecture><name>al2023-arm</name>\
        <deprecationTime>2028-10-01T12:00:00.000Z</deprecationTime></item></imagesSet>";
    ec2_action("DescribeImages")
        .and(body_string_contains("Owner.1=self"))
        .and(body_string_contains("Owner.2=amazon"))
        .respond_with(ec2_ok("DescribeImages", body))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeImagesInput {
        owners: vec!["self".into(), "amazon".into()],
        ..DescribeImagesInput::default()
    };
    let image = ec2
        .describe_images(input)
        .await
        .expect("images")
        .images
        .remove(0);
    assert_eq!(image.architecture, "arm64");
    assert_eq!(image.state, "available");
    assert_eq!(image.owner_id, "123456789012");
    let created = image.creation_date.map(|t| t.to_string());
    assert_eq!(created.as_deref(), Some("2026-10-01T12:00:00Z"));
    assert!(image.deprecation_time.is_some());
}

#[tokio::test]
async fn capacity_reservations_carry_their_counts_and_type() {
    let server = MockServer::start().await;
    let body = "<capacityReservationSet><item><capacityReservationId>cr-1</capacityReservationId>\
        <ownerId>123456789012</ownerId><instanceType>p5.48xlarge</instanceType>\
        <availabilityZone>us-west-2a</availabilityZone><availabilityZoneId>usw2-az1</availabilityZoneId>\
        <totalInstanceCount>4</totalInstanceCount><availableInstanceCount>1</availableInstanceCount>\
        <state>active</state><instanceMatchCriteria>targeted</instanceMatchCriteria>\
        <reservationType>capacity-block</reservationType><endDate>2026-12-01T00:00:00.000Z</endDate>\
        </item></capacityReservationSet>";
    ec2_action("DescribeCapacityReservations")
        .and(body_string_contains("CapacityReservationId.1=cr-1"))
        .respond_with(ec2_ok("DescribeCapacityReservations", body))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeInput {
        ids: vec!["cr-1".into()],
        filters: Vec::new(),
    };
    let out = ec2
        .describe_capacity_reservations(input)
        .await
        .expect("reservations");
    let reservation = &out.capacity_reservations[0];
    assert_eq!(
        (
            reservation.available_instance_count,
            reservation.total_instance_count
        ),
        (1, 4)
    );
    assert_eq!(reservation.reservation_type, "capacity-block");
    assert_eq!(reservation.instance_match_criteria, "targeted");
    assert!(!reservation.interruptible);
    assert!(reservation.end_date.is_some());
}

#[tokio::test]
async fn launch_templates_are_read_and_deleted_by_name() {
    let server = MockServer::start().await;
    let template = "<launchTemplateId>lt-1</launchTemplateId>\
        <launchTemplateName>karpenter.k8s.aws/1</launchTemplateName>\
        <createTime>2026-11-29T10:00:00.000Z</createTime>\
        <tagSet><item><key>karpenter.k8s.aws/cluster</key><value>demo</value></item></tagSet>";
    ec2_action("DescribeLaunchTemplates")
        .and(body_string_contains(
            "LaunchTemplateName.1=karpenter.k8s.aws%2F1",
        ))
        .respond_with(ec2_ok(
            "DescribeLaunchTemplates",
            &format!("<launchTemplates><item>{template}</item></launchTemplates>"),
        ))
        .mount(&server)
        .await;
    ec2_action("DeleteLaunchTemplate")
        .and(body_string_contains(
            "LaunchTemplateName=karpenter.k8s.aws%2F1",
        ))
        .respond_with(ec2_ok(
            "DeleteLaunchTemplate",
            &format!("<launchTemplate>{template}</launchTemplate>"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeLaunchTemplatesInput {
        launch_template_names: vec!["karpenter.k8s.aws/1".into()],
        filters: Vec::new(),
    };
    let found = ec2
        .describe_launch_templates(input)
        .await
        .expect("templates");
    assert_eq!(found.launch_templates[0].launch_template_id, "lt-1");
    assert_eq!(
        found.launch_templates[0].tags,
        [Tag::new("karpenter.k8s.aws/cluster", "demo")]
    );
    let deleted = ec2
        .delete_launch_template("karpenter.k8s.aws/1")
        .await
        .expect("deleted");
    assert_eq!(deleted.launch_template_name, "karpenter.k8s.aws/1");
}

#[tokio::test]
async fn tags_are_sent_for_every_resource() {
    let server = MockServer::start().await;
    ec2_action("CreateTags")
        .and(body_string_contains("ResourceId.1=i-1"))
        .and(body_string_contains("Tag.1.Key=Name"))
        .and(body_string_contains("Tag.1.Value=default-abc"))
        .respond_with(ec2_ok("CreateTags", "<return>true</return>"))
        .expect(1)
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = CreateTagsInput {
        resources: vec!["i-1".into()],
        tags: vec![Tag::new("Name", "default-abc")],
    };
    ec2.create_tags(input).await.expect("tagged");
}

#[tokio::test]
async fn instance_status_reads_checks_events_and_when_impairment_began() {
    let server = MockServer::start().await;
    let body = "<instanceStatusSet><item><instanceId>i-1</instanceId>\
        <availabilityZone>us-west-2a</availabilityZone>\
        <instanceState><code>16</code><name>running</name></instanceState>\
        <instanceStatus><status>impaired</status><details><item><name>reachability</name>\
        <status>failed</status><impairedSince>2026-11-29T09:58:00.000Z</impairedSince></item></details></instanceStatus>\
        <systemStatus><status>ok</status><details><item><name>reachability</name><status>passed</status></item></details></systemStatus>\
        <eventsSet><item><code>instance-retirement</code><description>retiring</description>\
        <notBefore>2026-12-02T00:00:00.000Z</notBefore></item></eventsSet></item></instanceStatusSet>";
    ec2_action("DescribeInstanceStatus")
        .and(body_string_contains("Filter.1.Name=instance-status.status"))
        .respond_with(ec2_ok("DescribeInstanceStatus", body))
        .mount(&server)
        .await;
    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeInstanceStatusInput {
        filters: vec![Filter::new("instance-status.status", ["impaired"])],
        ..DescribeInstanceStatusInput::default()
    };
    let out = ec2.describe_instance_status(input).await.expect("statuses");
    let status = &out.instance_statuses[0];
    assert_eq!(status.instance_state, InstanceState::Running);
    assert_eq!(
        (
            status.instance_status.as_str(),
            status.system_status.as_str()
        ),
        ("impaired", "ok")
    );
    let since = status.impaired_since.map(|t| t.to_string());
    assert_eq!(since.as_deref(), Some("2026-11-29T09:58:00Z"));
    assert_eq!(status.events[0].code, "instance-retirement");
    assert!(status.events[0].not_before.is_some());
}
