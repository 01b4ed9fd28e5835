//! Launch templates for nodes that join a real cluster: with a join config
//! each carries the user data, volumes, metadata options, monitoring and
//! interfaces upstream's builder gives it; without one, the templates are
//! what simulations always had.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use karpenter_aws::ec2::{
    DescribeLaunchTemplatesInput, Ec2Api, InMemoryEc2, LaunchTemplateBlockDeviceMapping,
    LaunchTemplateData, LaunchTemplateEbsBlockDevice, LaunchTemplateMetadataOptions,
};
use karpenter_aws::{AwsCloudProvider, AwsConfig, InstanceTypeOptions, JoinConfig};
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError};
use serde_json::{Value, json};

use crate::common::{claim, class, ec2, is_in, provider, ready_status};

const ENDPOINT: &str = "https://ABC.gr7.us-east-1.eks.amazonaws.com";
/// `ca-bundle`, base64.
const CA: &str = "Y2EtYnVuZGxl";

fn join() -> JoinConfig {
    JoinConfig {
        cluster_endpoint: ENDPOINT.into(),
        ca_bundle: Some(CA.into()),
        cluster_cidr: Some("10.100.0.0/16".into()),
        kube_dns_ip: "10.100.0.10".parse().ok(),
    }
}

/// A provider over `ec2` joining cluster `demo` by `join`, with `spec`
/// merged into the ready class's spec.
fn joining(ec2: &InMemoryEc2, join: JoinConfig, spec: Value) -> AwsCloudProvider<InMemoryEc2> {
    let config = AwsConfig {
        region: "us-east-1".into(),
        cluster_name: "demo".into(),
        join: Some(join),
    };
    let provider = AwsCloudProvider::new(ec2.clone(), config, InstanceTypeOptions::default())
        .expect("the embedded catalog");
    let mut written = serde_json::to_value(class(ready_status())).expect("a class as JSON");
    if let (Some(into), Value::Object(extra)) = (written["spec"].as_object_mut(), spec) {
        into.extend(extra);
    }
    provider.apply_node_class(serde_json::from_value(written).expect("an EC2NodeClass"));
    provider
}

fn on_demand_m5() -> Value {
    json!([
        is_in("node.kubernetes.io/instance-type", &["m5.large"]),
        is_in("karpenter.sh/capacity-type", &["on-demand"]),
    ])
}

/// The names of the templates the last fleet launched from, with what each
/// launches.
fn launched_templates(ec2: &InMemoryEc2) -> Vec<(String, LaunchTemplateData)> {
    let input = ec2.last_fleet_input().expect("a fleet");
    input
        .launch_template_configs
        .iter()
        .map(|c| {
            let name = c.launch_template_name.clone();
            let data = ec2.launch_template_data(&name).expect("a made template");
            (name, data)
        })
        .collect()
}

#[tokio::test]
async fn an_al2023_template_carries_user_data_that_joins_the_cluster() {
    let ec2 = ec2();
    let provider = joining(&ec2, join(), json!({}));
    provider
        .create(&claim("default-j1", on_demand_m5()))
        .await
        .expect("a launch");
    let templates = launched_templates(&ec2);
    assert_eq!(templates.len(), 1);
    let data = &templates[0].1;
    let encoded = data.user_data.as_deref().expect("user data");
    let text = String::from_utf8(STANDARD.decode(encoded).expect("base64")).expect("UTF-8");
    for wanted in [
        "kind: NodeConfig",
        "name: demo",
        &format!("apiServerEndpoint: {ENDPOINT}"),
        &format!("certificateAuthority: {CA}"),
        "cidr: 10.100.0.0/16",
        "- 10.100.0.10",
        "karpenter.sh/capacity-type=on-demand",
        "karpenter.sh/nodepool=default",
        "karpenter.sh/do-not-sync-taints=true",
        "key: karpenter.sh/unregistered",
    ] {
        assert!(text.contains(wanted), "{wanted:?} missing from\n{text}");
    }
    // m5.large runs 29 pods on the VPC CNI: the template's maxPods.
    assert!(text.contains("maxPods: 29"), "{text}");
}

#[tokio::test]
async fn a_joining_template_has_upstreams_volumes_metadata_and_interface() {
    let ec2 = ec2();
    let provider = joining(&ec2, join(), json!({"associatePublicIPAddress": false}));
    provider
        .create(&claim("default-j2", on_demand_m5()))
        .await
        .expect("a launch");
    let (_, data) = &launched_templates(&ec2)[0];
    let root = LaunchTemplateBlockDeviceMapping {
        device_name: Some("/dev/xvda".into()),
        ebs: Some(LaunchTemplateEbsBlockDevice {
            encrypted: Some(true),
            volume_type: Some("gp3".into()),
            volume_size: Some(20),
            ..LaunchTemplateEbsBlockDevice::default()
        }),
    };
    assert_eq!(data.block_device_mappings, vec![root]);
    // The resolver's defaults for a class without metadata options.
    let metadata = LaunchTemplateMetadataOptions {
        http_endpoint: Some("disabled".into()),
        http_protocol_ipv6: Some("disabled".into()),
        http_put_response_hop_limit: Some(2),
        http_tokens: Some("required".into()),
        instance_metadata_tags: Some("disabled".into()),
    };
    assert_eq!(data.metadata_options, Some(metadata));
    assert_eq!(data.monitoring_enabled, Some(false));
    // The groups move onto the single primary interface.
    assert!(data.security_group_ids.is_empty());
    let [primary] = data.network_interfaces.as_slice() else {
        panic!("one interface: {:?}", data.network_interfaces);
    };
    assert_eq!(primary.device_index, Some(0));
    assert_eq!(primary.groups, vec!["sg-1".to_owned()]);
    assert_eq!(primary.associate_public_ip_address, Some(false));
    // EC2 still puts the instance in the class's group.
    assert_eq!(
        ec2.instances()[0].security_group_ids,
        vec!["sg-1".to_owned()]
    );
}

#[tokio::test]
async fn a_class_sets_its_own_volumes_metadata_and_monitoring() {
    let ec2 = ec2();
    let spec = json!({
        "blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100G", "volumeType": "io2", "iops": 3000}}],
        "metadataOptions": {"httpPutResponseHopLimit": 3},
        "detailedMonitoring": true,
    });
    let provider = joining(&ec2, join(), spec);
    provider
        .create(&claim("default-j3", on_demand_m5()))
        .await
        .expect("a launch");
    let (_, data) = &launched_templates(&ec2)[0];
    let ebs = data.block_device_mappings[0]
        .ebs
        .clone()
        .unwrap_or_default();
    // 100 GB is 93.1 GiB: rounded up.
    assert_eq!(ebs.volume_size, Some(94));
    assert_eq!(ebs.iops, Some(3000));
    assert_eq!(ebs.encrypted, None);
    let metadata = data.metadata_options.clone().unwrap_or_default();
    assert_eq!(metadata.http_put_response_hop_limit, Some(3));
    // The CRD's defaults for the fields the class left out.
    assert_eq!(metadata.http_endpoint.as_deref(), Some("enabled"));
    assert_eq!(data.monitoring_enabled, Some(true));
}

#[tokio::test]
async fn bad_user_data_fails_the_launch_before_anything_is_made() {
    let ec2 = ec2();
    // A multipart archive whose one part is never closed.
    let bad = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\n\
               Content-Type: text/plain\n\nnever closed\n";
    let spec = json!({ "userData": bad });
    let provider = joining(&ec2, join(), spec);
    let error = provider
        .create(&claim("default-j4", on_demand_m5()))
        .await
        .expect_err("user data that cannot be merged");
    let CloudProviderError::Create { message, .. } = &error else {
        panic!("a create error: {error:?}");
    };
    assert!(message.contains("spec.userData"), "{message}");
    assert!(!error.is_retryable());
    assert!(ec2.instances().is_empty());
    assert!(ec2.fleet_inputs().is_empty());
    let made = ec2
        .describe_launch_templates(DescribeLaunchTemplatesInput::default())
        .await
        .expect("templates");
    assert!(made.launch_templates.is_empty());
}

#[tokio::test]
async fn without_a_join_config_templates_are_as_before() {
    let ec2 = ec2();
    let (provider, _) = provider(&ec2);
    provider
        .create(&claim("default-s1", on_demand_m5()))
        .await
        .expect("a launch");
    let (_, data) = &launched_templates(&ec2)[0];
    let before = LaunchTemplateData {
        image_id: Some("ami-amd64".into()),
        iam_instance_profile: Some("KarpenterNodeProfile".into()),
        security_group_ids: vec!["sg-1".into()],
        capacity_reservation_preference: data.capacity_reservation_preference,
        ..LaunchTemplateData::default()
    };
    assert_eq!(data, &before);
    assert!(data.capacity_reservation_preference.is_some());
}

#[tokio::test]
async fn a_different_cluster_endpoint_makes_a_different_template() {
    let mut names = Vec::new();
    for endpoint in [ENDPOINT, "https://other.eks.amazonaws.com"] {
        let ec2 = ec2();
        let join = JoinConfig {
            cluster_endpoint: endpoint.into(),
            ..join()
        };
        let provider = joining(&ec2, join, json!({}));
        provider
            .create(&claim("default-j5", on_demand_m5()))
            .await
            .expect("a launch");
        names.push(launched_templates(&ec2)[0].0.clone());
    }
    let ec2 = ec2();
    let (provider, _) = provider(&ec2);
    provider
        .create(&claim("default-j5", on_demand_m5()))
        .await
        .expect("a launch");
    names.push(launched_templates(&ec2)[0].0.clone());
    assert!(names.iter().all(|n| n.starts_with("karpenter.k8s.aws/")));
    assert_ne!(names[0], names[1]);
    assert_ne!(names[0], names[2]);
}

#[tokio::test]
async fn a_bottlerocket_template_carries_toml_user_data() {
    let ec2 = ec2();
    // The class's own settings: one Karpenter overrides, one it keeps.
    let user_data = "[settings.kubernetes]\ncluster-name = 'not-demo'\n\n\
                     [settings.ntp]\ntime-servers = ['169.254.169.123']\n";
    let spec = json!({
        "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
        "userData": user_data,
        "instanceStorePolicy": "RAID0",
    });
    let provider = joining(&ec2, join(), spec);
    provider
        .create(&claim("default-j6", on_demand_m5()))
        .await
        .expect("a launch");
    let templates = launched_templates(&ec2);
    assert_eq!(templates.len(), 1);
    let encoded = templates[0].1.user_data.as_deref().expect("user data");
    let text = String::from_utf8(STANDARD.decode(encoded).expect("base64")).expect("UTF-8");
    let document: toml_edit::DocumentMut = text.parse().expect("TOML user data");
    let settings = &document["settings"];
    let kubernetes = &settings["kubernetes"];
    assert_eq!(kubernetes["cluster-name"].as_str(), Some("demo"), "{text}");
    assert_eq!(kubernetes["api-server"].as_str(), Some(ENDPOINT));
    assert_eq!(kubernetes["cluster-certificate"].as_str(), Some(CA));
    assert_eq!(kubernetes["cluster-dns-ip"].as_str(), Some("10.100.0.10"));
    // m5.large runs 29 pods on the VPC CNI: the template's maxPods.
    assert_eq!(kubernetes["max-pods"].as_integer(), Some(29));
    let labels = &kubernetes["node-labels"];
    assert_eq!(
        labels["karpenter.sh/capacity-type"].as_str(),
        Some("on-demand")
    );
    assert_eq!(labels["karpenter.sh/nodepool"].as_str(), Some("default"));
    let unregistered = kubernetes["node-taints"]["karpenter.sh/unregistered"]
        .as_array()
        .expect("the unregistered taint");
    assert_eq!(
        unregistered.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
        [Some(":NoExecute")]
    );
    assert!(settings["ntp"]["time-servers"].is_array(), "{text}");
    let mount = &settings["bootstrap-commands"]["000-mount-instance-storage"];
    assert_eq!(mount["mode"].as_str(), Some("always"), "{text}");
}
