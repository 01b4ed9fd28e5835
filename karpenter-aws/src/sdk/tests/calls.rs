//! Each EC2 call: what it sends, and its answer read back.

use wiremock::MockServer;
use wiremock::matchers::body_string_contains;

use super::{clients, ec2_action, ec2_ok, fast_limits, received};
use crate::ec2::{
    CreateFleetInput, DescribeInput, DescribeInstanceTypesInput, DescribeSpotPriceHistoryInput,
    Ec2Api, Filter, FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides, InstanceState, Tag,
    TargetCapacityType, TerminateInstancesInput,
};

const SUBNET_A: &str = "<item><subnetId>subnet-a</subnetId><vpcId>vpc-1</vpcId>\
    <availabilityZone>us-west-2a</availabilityZone><availabilityZoneId>usw2-az1</availabilityZoneId>\
    <availableIpAddressCount>250</availableIpAddressCount>\
    <tagSet><item><key>karpenter.sh/discovery</key><value>demo</value></item>\
    <item><key>Name</key><value>a</value></item></tagSet></item>";

const SUBNET_B: &str = "<item><subnetId>subnet-b</subnetId><vpcId>vpc-1</vpcId>\
    <availabilityZone>us-west-2b</availabilityZone><availabilityZoneId>usw2-az2</availabilityZoneId>\
    <availableIpAddressCount>12</availableIpAddressCount></item>";

#[tokio::test]
async fn describe_subnets_reads_every_page_with_the_filters_sent() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .and(body_string_contains("NextToken=page-2"))
        .respond_with(ec2_ok(
            "DescribeSubnets",
            &format!("<subnetSet>{SUBNET_B}</subnetSet>"),
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    ec2_action("DescribeSubnets")
        .and(body_string_contains(
            "Filter.1.Name=tag%3Akarpenter.sh%2Fdiscovery",
        ))
        .and(body_string_contains("Filter.1.Value.1=demo"))
        .respond_with(ec2_ok(
            "DescribeSubnets",
            &format!("<subnetSet>{SUBNET_A}</subnetSet><nextToken>page-2</nextToken>"),
        ))
        .with_priority(2)
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeInput {
        ids: Vec::new(),
        filters: vec![Filter::new("tag:karpenter.sh/discovery", ["demo"])],
    };
    let out = ec2.describe_subnets(input).await.expect("two pages");

    let ids: Vec<_> = out.subnets.iter().map(|s| s.subnet_id.as_str()).collect();
    assert_eq!(ids, ["subnet-a", "subnet-b"]);
    let a = &out.subnets[0];
    assert_eq!(a.availability_zone_id, "usw2-az1");
    assert_eq!(a.available_ip_address_count, 250);
    // Tags come back sorted by key, whatever order EC2 lists them in.
    assert_eq!(
        a.tags,
        [
            Tag::new("Name", "a"),
            Tag::new("karpenter.sh/discovery", "demo")
        ]
    );
    assert_eq!(received(&server, "DescribeSubnets").await, 2);
}

#[tokio::test]
async fn describe_instance_types_reads_the_default_cards_interfaces() {
    let server = MockServer::start().await;
    let body = "<instanceTypeSet><item><instanceType>m5.large</instanceType>\
        <supportedUsageClasses><item>on-demand</item><item>spot</item></supportedUsageClasses>\
        <bareMetal>false</bareMetal><hypervisor>nitro</hypervisor>\
        <processorInfo><supportedArchitectures><item>x86_64</item></supportedArchitectures></processorInfo>\
        <vCpuInfo><defaultVCpus>2</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>8192</sizeInMiB></memoryInfo>\
        <networkInfo><maximumNetworkInterfaces>5</maximumNetworkInterfaces>\
        <defaultNetworkCardIndex>0</defaultNetworkCardIndex>\
        <networkCards><item><networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>3</maximumNetworkInterfaces></item>\
        <item><networkCardIndex>1</networkCardIndex><maximumNetworkInterfaces>2</maximumNetworkInterfaces></item></networkCards>\
        <ipv4AddressesPerInterface>10</ipv4AddressesPerInterface>\
        <efaInfo><maximumEfaInterfaces>1</maximumEfaInterfaces></efaInfo></networkInfo>\
        <gpuInfo><gpus><item><count>2</count></item><item><count>1</count></item></gpus></gpuInfo>\
        </item></instanceTypeSet>";
    ec2_action("DescribeInstanceTypes")
        .and(body_string_contains("MaxResults=100"))
        .respond_with(ec2_ok("DescribeInstanceTypes", body))
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let out = ec2
        .describe_instance_types(DescribeInstanceTypesInput::default())
        .await
        .expect("one page");
    let m5 = &out.instance_types[0];
    assert_eq!(m5.instance_type, "m5.large");
    assert_eq!((m5.default_vcpus, m5.memory_mib), (2, 8192));
    assert_eq!(m5.supported_architectures, ["x86_64"]);
    assert_eq!(m5.hypervisor.as_deref(), Some("nitro"));
    // The default card's interfaces, not the type's total.
    assert_eq!(m5.maximum_network_interfaces, 3);
    assert_eq!(m5.ipv4_addresses_per_interface, 10);
    assert_eq!(m5.maximum_efa_interfaces, 1);
    assert_eq!(m5.gpu_count, 3);
    assert_eq!(m5.supported_usage_classes, ["on-demand", "spot"]);
}

fn fleet_input() -> CreateFleetInput {
    CreateFleetInput {
        launch_template_configs: vec![FleetLaunchTemplateConfig {
            launch_template_name: "karpenter.k8s.aws/123".into(),
            version: "$Latest".into(),
            overrides: vec![FleetLaunchTemplateOverrides {
                instance_type: "m5.large".into(),
                subnet_id: "subnet-a".into(),
                availability_zone: "us-west-2a".into(),
                image_id: Some("ami-1".into()),
                priority: Some(0.096),
            }],
        }],
        total_target_capacity: 1,
        default_target_capacity_type: TargetCapacityType::Spot,
        context: Some("ctx-1".into()),
        ..CreateFleetInput::default()
    }
}

#[tokio::test]
async fn create_fleet_sends_an_instant_fleet_and_reads_instances_and_errors() {
    let server = MockServer::start().await;
    let overrides = "<launchTemplateAndOverrides><overrides><instanceType>m5.large</instanceType>\
        <subnetId>subnet-a</subnetId><availabilityZone>us-west-2a</availabilityZone>\
        <imageId>ami-1</imageId></overrides></launchTemplateAndOverrides>";
    let body = format!(
        "<fleetId>fleet-1</fleetId>\
         <errorSet><item>{overrides}<lifecycle>spot</lifecycle>\
         <errorCode>InsufficientInstanceCapacity</errorCode><errorMessage>none left</errorMessage></item></errorSet>\
         <fleetInstanceSet><item>{overrides}<lifecycle>spot</lifecycle>\
         <instanceIds><item>i-0abc</item></instanceIds><instanceType>m5.large</instanceType></item></fleetInstanceSet>"
    );
    ec2_action("CreateFleet")
        .and(body_string_contains("Type=instant"))
        .and(body_string_contains(
            "TargetCapacitySpecification.TotalTargetCapacity=1",
        ))
        .and(body_string_contains(
            "TargetCapacitySpecification.DefaultTargetCapacityType=spot",
        ))
        .and(body_string_contains(
            "SpotOptions.AllocationStrategy=price-capacity-optimized",
        ))
        .and(body_string_contains(
            "LaunchTemplateConfigs.1.Overrides.1.InstanceType=m5.large",
        ))
        .and(body_string_contains(
            "LaunchTemplateConfigs.1.Overrides.1.Priority=0.096",
        ))
        .and(body_string_contains("Context=ctx-1"))
        .respond_with(ec2_ok("CreateFleet", &body))
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let out = ec2.create_fleet(fleet_input()).await.expect("the fleet");
    assert_eq!(out.fleet_id, "fleet-1");
    assert_eq!(out.instances[0].instance_ids, ["i-0abc"]);
    assert_eq!(out.instances[0].lifecycle, "spot");
    let error = &out.errors[0];
    assert_eq!(error.error_code, "InsufficientInstanceCapacity");
    assert_eq!(error.launch_template_and_overrides.subnet_id, "subnet-a");
    assert_eq!(
        error.launch_template_and_overrides.image_id.as_deref(),
        Some("ami-1")
    );
}

#[tokio::test]
async fn instances_are_read_from_every_reservation_and_terminated() {
    let server = MockServer::start().await;
    let instance = |id: &str, state: &str| {
        format!(
            "<item><instanceId>{id}</instanceId><imageId>ami-1</imageId>\
             <instanceState><code>16</code><name>{state}</name></instanceState>\
             <instanceType>c5.large</instanceType><launchTime>2026-11-29T10:00:00.000Z</launchTime>\
             <placement><availabilityZone>us-west-2a</availabilityZone></placement>\
             <subnetId>subnet-a</subnetId><groupSet><item><groupId>sg-1</groupId></item></groupSet>\
             <instanceLifecycle>spot</instanceLifecycle></item>"
        )
    };
    let body = format!(
        "<reservationSet><item><instancesSet>{}</instancesSet></item>\
         <item><instancesSet>{}</instancesSet></item></reservationSet>",
        instance("i-1", "running"),
        instance("i-2", "shutting-down")
    );
    ec2_action("DescribeInstances")
        .respond_with(ec2_ok("DescribeInstances", &body))
        .mount(&server)
        .await;
    let terminated = "<instancesSet><item><instanceId>i-1</instanceId>\
        <currentState><name>shutting-down</name></currentState>\
        <previousState><name>running</name></previousState></item></instancesSet>";
    ec2_action("TerminateInstances")
        .and(body_string_contains("InstanceId.1=i-1"))
        .respond_with(ec2_ok("TerminateInstances", terminated))
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let found = ec2
        .describe_instances(DescribeInput::default())
        .await
        .expect("instances");
    let states: Vec<_> = found.instances.iter().map(|i| i.state).collect();
    assert_eq!(
        states,
        [InstanceState::Running, InstanceState::ShuttingDown]
    );
    let first = &found.instances[0];
    assert_eq!(first.availability_zone, "us-west-2a");
    assert_eq!(first.security_group_ids, ["sg-1"]);
    assert_eq!(first.instance_lifecycle.as_deref(), Some("spot"));
    assert_eq!(first.launch_time.to_string(), "2026-11-29T10:00:00Z");

    let input = TerminateInstancesInput {
        instance_ids: vec!["i-1".into()],
    };
    let out = ec2.terminate_instances(input).await.expect("terminated");
    assert_eq!(
        out.terminating_instances[0].current_state,
        InstanceState::ShuttingDown
    );
    assert_eq!(
        out.terminating_instances[0].previous_state,
        InstanceState::Running
    );
}

#[tokio::test]
async fn spot_prices_that_are_not_numbers_are_skipped() {
    let server = MockServer::start().await;
    let body = "<spotPriceHistorySet>\
        <item><instanceType>m5.large</instanceType><productDescription>Linux/UNIX</productDescription>\
        <spotPrice>0.034500</spotPrice><timestamp>2026-11-29T09:00:00.000Z</timestamp>\
        <availabilityZone>us-west-2a</availabilityZone></item>\
        <item><instanceType>m5.large</instanceType><productDescription>Linux/UNIX</productDescription>\
        <spotPrice>n/a</spotPrice><timestamp>2026-11-29T09:00:00.000Z</timestamp>\
        <availabilityZone>us-west-2b</availabilityZone></item></spotPriceHistorySet>";
    ec2_action("DescribeSpotPriceHistory")
        .and(body_string_contains("ProductDescription.1=Linux%2FUNIX"))
        .respond_with(ec2_ok("DescribeSpotPriceHistory", body))
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeSpotPriceHistoryInput {
        product_descriptions: vec!["Linux/UNIX".into()],
        ..DescribeSpotPriceHistoryInput::default()
    };
    let out = ec2
        .describe_spot_price_history(input)
        .await
        .expect("prices");
    assert_eq!(out.spot_price_history.len(), 1);
    assert_eq!(out.spot_price_history[0].availability_zone, "us-west-2a");
    assert!((out.spot_price_history[0].spot_price - 0.0345).abs() < 1e-12);
}

#[tokio::test]
async fn a_launch_template_carries_every_part_of_its_data() {
    use crate::ec2::{
        CreateLaunchTemplateInput, LaunchTemplateBlockDeviceMapping, LaunchTemplateData,
        LaunchTemplateEbsBlockDevice, LaunchTemplateMetadataOptions,
        LaunchTemplateNetworkInterface, TagSpecification,
    };

    let server = MockServer::start().await;
    let made = "<launchTemplate><launchTemplateId>lt-1</launchTemplateId>\
        <launchTemplateName>karpenter.k8s.aws/1</launchTemplateName>\
        <createTime>2026-11-29T10:00:00.000Z</createTime></launchTemplate>";
    let mut expected = ec2_action("CreateLaunchTemplate");
    for part in [
        "LaunchTemplateName=karpenter.k8s.aws%2F1",
        "LaunchTemplateData.ImageId=ami-1",
        "LaunchTemplateData.UserData=dXNlci1kYXRh",
        "LaunchTemplateData.IamInstanceProfile.Name=profile-1",
        "LaunchTemplateData.BlockDeviceMapping.1.DeviceName=%2Fdev%2Fxvda",
        "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize=20",
        "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeType=gp3",
        "LaunchTemplateData.BlockDeviceMapping.1.Ebs.Encrypted=true",
        "LaunchTemplateData.MetadataOptions.HttpTokens=required",
        "LaunchTemplateData.MetadataOptions.HttpPutResponseHopLimit=2",
        "LaunchTemplateData.Monitoring.Enabled=false",
        "LaunchTemplateData.NetworkInterface.1.DeviceIndex=0",
        "LaunchTemplateData.NetworkInterface.1.SecurityGroupId.1=sg-1",
        "LaunchTemplateData.TagSpecification.1.ResourceType=instance",
        "TagSpecification.1.ResourceType=launch-template",
    ] {
        expected = expected.and(body_string_contains(part));
    }
    expected
        .respond_with(ec2_ok("CreateLaunchTemplate", made))
        .mount(&server)
        .await;

    let tags = |resource: &str| TagSpecification {
        resource_type: resource.into(),
        tags: vec![Tag::new("karpenter.sh/nodepool", "default")],
    };
    let input = CreateLaunchTemplateInput {
        launch_template_name: "karpenter.k8s.aws/1".into(),
        launch_template_data: LaunchTemplateData {
            image_id: Some("ami-1".into()),
            iam_instance_profile: Some("profile-1".into()),
            user_data: Some("dXNlci1kYXRh".into()),
            tag_specifications: vec![tags("instance")],
            block_device_mappings: vec![LaunchTemplateBlockDeviceMapping {
                device_name: Some("/dev/xvda".into()),
                ebs: Some(LaunchTemplateEbsBlockDevice {
                    encrypted: Some(true),
                    volume_type: Some("gp3".into()),
                    volume_size: Some(20),
                    ..LaunchTemplateEbsBlockDevice::default()
                }),
            }],
            metadata_options: Some(LaunchTemplateMetadataOptions {
                http_tokens: Some("required".into()),
                http_put_response_hop_limit: Some(2),
                ..LaunchTemplateMetadataOptions::default()
            }),
            monitoring_enabled: Some(false),
            network_interfaces: vec![LaunchTemplateNetworkInterface {
                device_index: Some(0),
                groups: vec!["sg-1".into()],
                ..LaunchTemplateNetworkInterface::default()
            }],
            ..LaunchTemplateData::default()
        },
        tag_specifications: vec![tags("launch-template")],
    };
    let ec2 = clients(&server, fast_limits()).ec2();
    let made = ec2.create_launch_template(input).await;
    if made.is_err() {
        let requests = server.received_requests().await.unwrap_or_default();
        let body = requests
            .first()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned());
        panic!("{made:?}: the request sent was {body:?}");
    }
    let made = made.expect("checked above");
    assert_eq!(made.launch_template_id, "lt-1");
    assert_eq!(made.create_time.to_string(), "2026-11-29T10:00:00Z");
}
