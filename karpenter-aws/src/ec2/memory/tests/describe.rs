//! The describe calls, launch templates and injected faults.

use super::*;

#[test]
fn zone_ids_follow_aws_style() {
    assert_eq!(zone_id_prefix("us-east-1"), "use1");
    assert_eq!(zone_id_prefix("eu-west-2"), "euw2");
    assert_eq!(zone_id_prefix("ap-southeast-1"), "aps1");
    let ec2 = InMemoryEc2::new("eu-west-2");
    assert_eq!(
        ec2.zones()[2],
        ("eu-west-2c".to_owned(), "euw2-az3".to_owned())
    );
}

#[tokio::test]
async fn describe_subnets_filters_by_tag_and_zone_and_fills_zone_ids() {
    let ec2 = ready(5).await;
    let filters = vec![
        Filter::new("tag:karpenter.sh/discovery", ["demo"]),
        Filter::new("availability-zone", ["us-east-1b", "us-east-1c"]),
    ];
    let subnets = ec2
        .describe_subnets(DescribeInput {
            ids: Vec::new(),
            filters,
        })
        .await
        .unwrap()
        .subnets;
    assert_eq!(subnets.len(), 1);
    assert_eq!(subnets[0].subnet_id, "subnet-b");
    assert_eq!(subnets[0].availability_zone_id, "use1-az2");
    let none = vec![Filter::new("tag:karpenter.sh/discovery", ["other*"])];
    let empty = ec2
        .describe_subnets(DescribeInput {
            ids: Vec::new(),
            filters: none,
        })
        .await;
    assert!(empty.unwrap().subnets.is_empty());
}

#[tokio::test]
async fn describing_a_missing_id_is_not_found() {
    let ec2 = ready(5).await;
    let input = DescribeInput {
        ids: vec!["subnet-z".into()],
        filters: Vec::new(),
    };
    let err = ec2.describe_subnets(input).await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidSubnetID.NotFound"));
    assert!(err.is_not_found());
}

#[tokio::test]
async fn instance_types_come_from_the_catalog_with_filters() {
    let ec2 = InMemoryEc2::new(REGION);
    let input = DescribeInstanceTypesInput {
        instance_types: vec!["m5.large".into(), "m6g.large".into(), "m5.metal".into()],
        filters: vec![Filter::new(
            "processor-info.supported-architecture",
            ["x86_64"],
        )],
    };
    let types = ec2
        .describe_instance_types(input)
        .await
        .unwrap()
        .instance_types;
    let names: Vec<&str> = types.iter().map(|t| t.instance_type.as_str()).collect();
    assert_eq!(names, ["m5.large", "m5.metal"]);
    assert_eq!((types[0].default_vcpus, types[0].memory_mib), (2, 8192));
    assert!(!types[0].bare_metal && types[1].bare_metal);
    assert_eq!(types[0].hypervisor.as_deref(), Some("nitro"));
    assert_eq!(
        (
            types[0].maximum_network_interfaces,
            types[0].ipv4_addresses_per_interface
        ),
        (3, 10)
    );
}

#[tokio::test]
async fn offerings_list_each_type_in_each_zone() {
    let ec2 = InMemoryEc2::new(REGION);
    let input = DescribeInstanceTypeOfferingsInput {
        filters: vec![Filter::new("instance-type", ["m5.large"])],
        ..DescribeInstanceTypeOfferingsInput::default()
    };
    let offerings = ec2
        .describe_instance_type_offerings(input)
        .await
        .unwrap()
        .instance_type_offerings;
    let zones: Vec<&str> = offerings.iter().map(|o| o.location.as_str()).collect();
    assert_eq!(zones, ["us-east-1a", "us-east-1b", "us-east-1c"]);
}

#[tokio::test]
async fn spot_prices_default_to_a_share_of_on_demand_and_can_be_set() {
    let ec2 = InMemoryEc2::new(REGION);
    ec2.set_spot_price("m5.large", "us-east-1b", 0.01);
    let input = DescribeSpotPriceHistoryInput {
        instance_types: vec!["m5.large".into()],
        ..DescribeSpotPriceHistoryInput::default()
    };
    let prices = ec2
        .describe_spot_price_history(input)
        .await
        .unwrap()
        .spot_price_history;
    assert_eq!(prices.len(), 3);
    let on_demand =
        crate::on_demand_price(crate::Catalog::embedded().unwrap(), REGION, "m5.large").unwrap();
    assert!((prices[0].spot_price - on_demand * 0.7).abs() < 1e-9);
    assert!((prices[1].spot_price - 0.01).abs() < 1e-12);
}

#[tokio::test]
async fn injected_faults_fail_the_next_calls_in_turn() {
    let ec2 = ready(5).await;
    let throttled = Ec2Error::Throttling {
        operation: Operation::DescribeSubnets,
        code: "RequestLimitExceeded".into(),
        message: "slow down".into(),
    };
    ec2.fail_next(Operation::DescribeSubnets, throttled);
    let first = ec2
        .describe_subnets(DescribeInput::default())
        .await
        .unwrap_err();
    assert!(first.is_retryable());
    assert_eq!(
        ec2.describe_subnets(DescribeInput::default())
            .await
            .unwrap()
            .subnets
            .len(),
        2
    );
}

#[tokio::test]
async fn launch_templates_are_created_found_and_deleted_by_name() {
    let ec2 = ready(5).await;
    let again = CreateLaunchTemplateInput {
        launch_template_name: TEMPLATE.into(),
        ..Default::default()
    };
    let err = ec2.create_launch_template(again).await.unwrap_err();
    assert_eq!(
        err.code(),
        Some("InvalidLaunchTemplateName.AlreadyExistsException")
    );
    let by_name = DescribeLaunchTemplatesInput {
        launch_template_names: vec![TEMPLATE.into()],
        ..Default::default()
    };
    assert_eq!(
        ec2.describe_launch_templates(by_name.clone())
            .await
            .unwrap()
            .launch_templates
            .len(),
        1
    );
    ec2.delete_launch_template(TEMPLATE).await.unwrap();
    let err = ec2.describe_launch_templates(by_name).await.unwrap_err();
    assert_eq!(
        err.code(),
        Some("InvalidLaunchTemplateName.NotFoundException")
    );
    assert!(
        ec2.delete_launch_template(TEMPLATE)
            .await
            .unwrap_err()
            .is_not_found()
    );
}
