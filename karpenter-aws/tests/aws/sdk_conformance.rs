//! The SDK-backed EC2 client (`SdkEc2`) over a loopback server playing EC2
//! from an in-memory EC2: the provider conformance suite through the SDK,
//! a launch's template and fleet as EC2 receives them, errors that keep
//! their classification across the wire, and requests the server refuses.

use karpenter_aws::ec2::{
    CreateFleetInput, DescribeInput, DescribeLaunchTemplatesInput, Ec2Api, Ec2Error,
    FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides, InMemoryEc2, InstanceState, Operation,
};
use karpenter_aws::sdk::SdkEc2;
use karpenter_aws::{AwsCloudProvider, AwsConfig, InstanceTypeOptions, JoinConfig};
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::{Value, json};

use crate::common::{REGION, claim, class, ec2, is_in, pool, provider_over, ready_status};
use crate::loopback::{Loopback, answer};

/// A server over `ec2` and the SDK client calling it.
pub(crate) async fn sdk_over(ec2: &InMemoryEc2) -> (Loopback, SdkEc2) {
    let server = Loopback::start(ec2).await;
    let client = server.clients(REGION).ec2();
    (server, client)
}

#[tokio::test]
async fn the_sdk_client_conforms() {
    let ec2 = ec2();
    let (server, sdk) = sdk_over(&ec2).await;
    let (provider, _clock) = provider_over(sdk, InstanceTypeOptions::default());
    let checks = karpenter_fake::conformance::run(&provider, &pool()).await;
    // The suite needs EC2 alone: the Pricing API is not called.
    assert_eq!(server.json_requests().await, 0);
    assert!(server.requests("CreateFleet").await > 0);
    let failed: Vec<_> = checks.iter().filter(|c| c.outcome.is_err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    for name in [
        "every label of the instance types is well known",
        "create, get, list, drift and delete",
    ] {
        assert!(checks.iter().any(|c| c.name == name), "{name}: {checks:#?}");
    }
    let instances = ec2.instances();
    assert!(!instances.is_empty(), "the suite launched through the SDK");
    assert!(
        instances
            .iter()
            .all(|i| i.state == InstanceState::Terminated),
        "the suite cleans up: {instances:#?}"
    );
}

#[tokio::test]
async fn templates_are_swept_and_deleted_with_their_class_through_the_sdk() {
    let ec2 = ec2();
    let (server, sdk) = sdk_over(&ec2).await;
    let (provider, clock) = provider_over(sdk, InstanceTypeOptions::default());
    let wanted = || {
        claim(
            "web-1",
            json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
        )
    };
    provider.create(&wanted()).await.expect("a launch");
    let templates = || async {
        ec2.describe_launch_templates(DescribeLaunchTemplatesInput::default())
            .await
            .expect("templates")
            .launch_templates
    };
    assert_eq!(templates().await.len(), 1);
    // Found by its cluster and class tags, through the SDK's filters.
    let deleted = provider
        .delete_class_launch_templates("default")
        .await
        .expect("deleted");
    assert_eq!(deleted.len(), 1);
    assert!(templates().await.is_empty());
    // Made again by the next launch, adopted, and swept a minute on.
    provider.create(&wanted()).await.expect("a launch");
    assert_eq!(provider.adopt_launch_templates().await.expect("adopted"), 1);
    clock.advance(jiff::SignedDuration::from_secs(60));
    assert_eq!(
        provider
            .sweep_launch_templates()
            .await
            .expect("swept")
            .len(),
        1
    );
    assert!(templates().await.is_empty());
    assert!(server.requests("DeleteLaunchTemplate").await >= 2);
}

/// A provider over `ec2` whose nodes join cluster `demo`, its class
/// setting volumes, the metadata service, monitoring and the interface:
/// a launch template with every part `SdkEc2` sends.
fn joining<E: Ec2Api>(ec2: E) -> AwsCloudProvider<E> {
    let config = AwsConfig {
        region: REGION.into(),
        cluster_name: "demo".into(),
        join: Some(JoinConfig {
            cluster_endpoint: "https://ABC.gr7.us-east-1.eks.amazonaws.com".into(),
            ca_bundle: Some("Y2EtYnVuZGxl".into()),
            cluster_cidr: Some("10.100.0.0/16".into()),
            kube_dns_ip: "10.100.0.10".parse().ok(),
        }),
    };
    let provider = AwsCloudProvider::new(ec2, config, InstanceTypeOptions::default())
        .expect("the embedded catalog");
    let mut written = serde_json::to_value(class(ready_status())).expect("a class as JSON");
    let extra = json!({
        "blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100G", "volumeType": "io2", "iops": 3000}}],
        "metadataOptions": {"httpPutResponseHopLimit": 3},
        "detailedMonitoring": true,
        "associatePublicIPAddress": false,
        "tags": {"team": "a&b <c>", "cost-center": "x=1+2 %"},
    });
    if let (Some(into), Value::Object(extra)) = (written["spec"].as_object_mut(), extra) {
        into.extend(extra);
    }
    provider.apply_node_class(serde_json::from_value(written).expect("an EC2NodeClass"));
    provider
}

#[tokio::test]
async fn a_launch_through_the_sdk_reaches_ec2_as_the_provider_built_it() {
    // The same launch straight into an in-memory EC2 and through the SDK
    // and the server into another: EC2 must receive the same template and
    // fleet either way.
    let wanted = claim(
        "web-1",
        json!([is_in(
            "node.kubernetes.io/instance-type",
            &["m5.large", "c5.large"]
        )]),
    );
    let direct = ec2();
    let expected = joining(direct.clone())
        .create(&wanted)
        .await
        .expect("a direct launch");

    let behind = ec2();
    let (_server, sdk) = sdk_over(&behind).await;
    let launched = joining(sdk)
        .create(&wanted)
        .await
        .expect("a launch through the SDK");
    assert_eq!(launched.status, expected.status);
    assert_eq!(launched.metadata.labels, expected.metadata.labels);

    let fleet = behind.last_fleet_input().expect("a fleet reached EC2");
    assert_eq!(Some(&fleet), direct.last_fleet_input().as_ref());
    assert!(!fleet.launch_template_configs.is_empty());
    assert!(fleet.tag_specifications.iter().any(|s| {
        s.tags
            .iter()
            .any(|t| t.key == "team" && t.value == "a&b <c>")
    }));
    for config in &fleet.launch_template_configs {
        let name = &config.launch_template_name;
        let data = behind
            .launch_template_data(name)
            .expect("the fleet's template exists");
        assert_eq!(
            Some(&data),
            direct.launch_template_data(name).as_ref(),
            "{name}"
        );
        // With an interface given, the groups are the interface's.
        assert_eq!(data.network_interfaces[0].groups, ["sg-1"]);
        assert_eq!(
            data.iam_instance_profile.as_deref(),
            Some("KarpenterNodeProfile")
        );
        assert!(data.image_id.is_some_and(|id| id.starts_with("ami-")));
        assert!(data.user_data.is_some(), "nodes get their join data");
        let ebs = data.block_device_mappings[0]
            .ebs
            .clone()
            .unwrap_or_default();
        assert_eq!((ebs.volume_size, ebs.iops), (Some(94), Some(3000)));
        let metadata = data.metadata_options.clone().unwrap_or_default();
        assert_eq!(metadata.http_put_response_hop_limit, Some(3));
        assert_eq!(data.monitoring_enabled, Some(true));
        assert_eq!(
            data.network_interfaces[0].associate_public_ip_address,
            Some(false)
        );
        let types: Vec<_> = config
            .overrides
            .iter()
            .map(|o| o.instance_type.as_str())
            .collect();
        assert!(
            types.iter().all(|t| ["m5.large", "c5.large"].contains(t)),
            "{types:?}"
        );
    }
}

/// A one-override fleet of `m5.large` in us-east-1a from template `name`.
pub(crate) fn fleet_of(name: &str) -> CreateFleetInput {
    CreateFleetInput {
        launch_template_configs: vec![FleetLaunchTemplateConfig {
            launch_template_name: name.into(),
            version: "$Latest".into(),
            overrides: vec![FleetLaunchTemplateOverrides {
                instance_type: "m5.large".into(),
                subnet_id: "subnet-a1".into(),
                availability_zone: "us-east-1a".into(),
                ..FleetLaunchTemplateOverrides::default()
            }],
        }],
        total_target_capacity: 1,
        ..CreateFleetInput::default()
    }
}

#[tokio::test]
async fn ec2_errors_keep_their_code_and_class_across_the_wire() {
    let ec2 = ec2();
    let (_server, sdk) = sdk_over(&ec2).await;

    let missing = sdk.create_fleet(fleet_of("no-such-template")).await;
    let error = missing.expect_err("the template does not exist");
    assert_eq!(
        error.code(),
        Some("InvalidLaunchTemplateName.NotFoundException")
    );
    assert!(error.is_not_found());
    assert_eq!(error.operation(), Operation::CreateFleet);

    let described = sdk
        .describe_launch_templates(DescribeLaunchTemplatesInput {
            launch_template_names: vec!["no-such-template".into()],
            ..DescribeLaunchTemplatesInput::default()
        })
        .await;
    assert!(described.expect_err("no such template").is_not_found());

    let op = Operation::DescribeInstances;
    ec2.fail_next(
        op,
        Ec2Error::service(op, "InsufficientInstanceCapacity", "none left"),
    );
    let error = sdk
        .describe_instances(DescribeInput::default())
        .await
        .expect_err("the injected fault");
    assert!(error.is_insufficient_capacity(), "{error:?}");
    assert!(matches!(error, Ec2Error::Service { .. }));
    assert!(!error.is_retryable());
    // The fault was one call's: the next is answered.
    assert!(
        sdk.describe_instances(DescribeInput::default())
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn throttling_is_retried_by_the_sdk_then_answered() {
    let ec2 = ec2();
    let (_server, sdk) = sdk_over(&ec2).await;
    let op = Operation::DescribeSubnets;
    ec2.fail_next(
        op,
        Ec2Error::Throttling {
            operation: op,
            code: "RequestLimitExceeded".into(),
            message: "slow down".into(),
        },
    );
    let subnets = sdk
        .describe_subnets(DescribeInput::default())
        .await
        .expect("the retry is answered");
    assert_eq!(subnets.subnets.len(), 3);

    // Throttled on every attempt: the caller sees throttling, retryable.
    for _ in 0..10 {
        ec2.fail_next(
            op,
            Ec2Error::Throttling {
                operation: op,
                code: "RequestLimitExceeded".into(),
                message: "slow down".into(),
            },
        );
    }
    let error = sdk
        .describe_subnets(DescribeInput::default())
        .await
        .expect_err("every attempt throttled");
    assert!(matches!(error, Ec2Error::Throttling { .. }), "{error:?}");
    assert_eq!(error.code(), Some("RequestLimitExceeded"));
    assert!(error.is_retryable());
}

#[test]
fn bad_requests_are_refused_naming_the_parameter() {
    let ec2 = InMemoryEc2::new(REGION);
    for (body, code, needle) in [
        (&b"Version=2016-11-15"[..], "MissingParameter", "Action"),
        (b"Action=CreateFleet&Version=2016-11-15", "MissingParameter", "TargetCapacitySpecification"),
        (
            b"Action=CreateFleet&TargetCapacitySpecification.TotalTargetCapacity=x&TargetCapacitySpecification.DefaultTargetCapacityType=spot",
            "InvalidParameterValue",
            "TargetCapacitySpecification.TotalTargetCapacity",
        ),
        (b"Action=DescribeSubnets&SubnetId.one=subnet-a", "InvalidParameterValue", "SubnetId.one"),
        (b"Action=DescribeSubnets&Filter.1.Value.1=x", "MissingParameter", "Filter.1.Name"),
        (b"Action=TerminateInstances", "MissingParameter", "InstanceId"),
        (b"Action=DescribeSubnets&SubnetId.1=%zz", "InvalidParameterValue", "SubnetId.1"),
        (b"Action=RunInstances", "InvalidAction", "RunInstances"),
        (b"\xff\xfe", "InvalidParameterValue", "body"),
    ] {
        let (status, xml) = answer(&ec2, body);
        let shown = String::from_utf8_lossy(body);
        assert_eq!(status, 400, "{shown}: {xml}");
        assert!(xml.contains(&format!("<Code>{code}</Code>")), "{shown}: {xml}");
        assert!(xml.contains(needle), "{shown}: {xml}");
    }
}

#[test]
fn an_unknown_id_is_ec2s_not_found_at_400() {
    let ec2 = InMemoryEc2::new(REGION);
    let (status, xml) = answer(&ec2, b"Action=DescribeSubnets&SubnetId.1=subnet-x");
    assert_eq!(status, 400, "{xml}");
    assert!(xml.contains("NotFound"), "{xml}");
}

#[test]
fn describe_answers_page_from_max_results() {
    let ec2 = ec2();
    let (status, first) = answer(&ec2, b"Action=DescribeSubnets&MaxResults=2");
    assert_eq!(status, 200, "{first}");
    assert_eq!(first.matches("<subnetId>").count(), 2, "{first}");
    assert!(first.contains("<nextToken>2</nextToken>"), "{first}");
    let (_, last) = answer(&ec2, b"Action=DescribeSubnets&MaxResults=2&NextToken=2");
    assert_eq!(last.matches("<subnetId>").count(), 1, "{last}");
    assert!(!last.contains("nextToken"), "{last}");
    for (body, needle) in [
        (&b"Action=DescribeSubnets&MaxResults=0"[..], "MaxResults"),
        (b"Action=DescribeSubnets&NextToken=abc", "NextToken"),
    ] {
        let (status, xml) = answer(&ec2, body);
        assert_eq!(status, 400, "{xml}");
        assert!(xml.contains(needle), "{xml}");
    }
}

proptest::proptest! {
    /// Whatever the body, the server answers with a status and XML: a
    /// refusal is a 400 in EC2's error envelope, never a panic.
    #[test]
    fn any_body_gets_an_answer(
        action in proptest::sample::select(vec![
            "CreateFleet", "CreateLaunchTemplate", "DescribeSubnets", "DescribeInstances",
            "TerminateInstances", "CreateTags", "DescribeSpotPriceHistory", "Nope",
        ]),
        rest in "[A-Za-z0-9.=&%+_-]{0,80}",
        raw in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
    ) {
        let ec2 = InMemoryEc2::new(REGION);
        for body in [format!("Action={action}&{rest}").into_bytes(), raw.clone()] {
            let (status, xml) = answer(&ec2, &body);
            proptest::prop_assert!(status == 200 || status == 400, "{status}: {xml}");
            if status == 400 {
                proptest::prop_assert!(xml.contains("<Errors><Error><Code>"), "{xml}");
            }
        }
    }
}
