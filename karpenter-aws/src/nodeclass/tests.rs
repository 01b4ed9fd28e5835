use serde_json::{Value, json};

use super::*;

/// A seed-style EKS node class: AL2023 by alias, subnets and security
/// groups by discovery tag, a node role.
fn seed() -> Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
        }
    })
}

/// Every spec field upstream's CRD has, a full status, and fields no
/// version knows at each level.
fn full() -> Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "full", "annotations": {"karpenter.k8s.aws/ec2nodeclass-hash": "123"}},
        "spec": {
            "subnetSelectorTerms": [{"id": "subnet-0abc"}, {"tags": {"Name": "*"}, "future": 1}],
            "securityGroupSelectorTerms": [{"name": "nodes"}, {"id": "sg-0123"}],
            "capacityReservationSelectorTerms": [
                {"id": "cr-0a1b"},
                {"tags": {"team": "ml"}, "ownerID": "123456789012", "instanceMatchCriteria": "targeted"}
            ],
            "placementGroupSelector": {"name": "cluster-pg"},
            "associatePublicIPAddress": false,
            "ipPrefixCount": 2,
            "amiSelectorTerms": [
                {"tags": {"team": "ml"}, "name": "my-ami-*", "owner": "self"},
                {"id": "ami-0abc"},
                {"ssmParameter": "/my/ami"}
            ],
            "amiFamily": "Bottlerocket",
            "userData": "[settings.kubernetes]\nmax-pods = 50\n",
            "instanceProfile": "KarpenterNodeInstanceProfile",
            "tags": {"team": "ml", "cost-center": "42"},
            "kubelet": {
                "clusterDNS": ["10.0.0.10"],
                "maxPods": 58,
                "podsPerCore": 4,
                "systemReserved": {"cpu": "100m", "memory": "100Mi"},
                "kubeReserved": {"cpu": "vcpus * 10", "ephemeral-storage": "1Gi"},
                "evictionHard": {"memory.available": "5%"},
                "evictionSoft": {"nodefs.available": "10%"},
                "evictionSoftGracePeriod": {"nodefs.available": "1m30s"},
                "evictionMaxPodGracePeriod": 60,
                "imageGCHighThresholdPercent": 85,
                "imageGCLowThresholdPercent": 80,
                "cpuCFSQuota": true,
                "serializeImagePulls": false
            },
            "blockDeviceMappings": [{
                "deviceName": "/dev/xvda",
                "rootVolume": true,
                "ebs": {
                    "deleteOnTermination": true, "encrypted": true, "iops": 3000,
                    "kmsKeyID": "arn:aws:kms:us-west-2:111122223333:key/abc",
                    "snapshotID": "snap-0abc", "throughput": 125,
                    "volumeInitializationRate": 200, "volumeSize": "100Gi", "volumeType": "gp3"
                }
            }],
            "instanceStorePolicy": "RAID0",
            "networkInterfaces": [
                {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}
            ],
            "detailedMonitoring": true,
            "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                "httpPutResponseHopLimit": 2, "httpTokens": "required"},
            "connectionTracking": {"tcpEstablishedTimeout": 3600, "udpTimeout": 30},
            "context": "ctx-1",
            "cpuOptions": {"nestedVirtualization": "enabled"},
            "someNewField": {"x": [1, 2]}
        },
        "status": {
            "subnets": [{"id": "subnet-0abc", "zone": "us-west-2a", "zoneID": "usw2-az1"}],
            "securityGroups": [{"id": "sg-0123", "name": "nodes"}],
            "capacityReservations": [{
                "availabilityZone": "us-west-2a", "endTime": "2026-12-01T00:00:00Z", "id": "cr-0a1b",
                "instanceMatchCriteria": "targeted", "instanceType": "p5.48xlarge",
                "ownerID": "123456789012", "reservationType": "capacity-block",
                "interruptible": false, "state": "expiring"
            }],
            "amis": [{
                "id": "ami-0abc", "name": "bottlerocket-aws-k8s-1.33", "deprecated": true,
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]
            }],
            "instanceProfile": "KarpenterNodeInstanceProfile",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                            "lastTransitionTime": "2026-11-01T00:00:00Z"}],
            "statusFromTheFuture": true
        },
        "topLevelExtra": "kept"
    })
}

fn read(value: Value) -> EC2NodeClass {
    match serde_json::from_value(value) {
        Ok(class) => class,
        Err(err) => panic!("reading the manifest: {err}"),
    }
}

#[test]
fn every_field_round_trips_without_loss() {
    for manifest in [seed(), full()] {
        let class = read(manifest.clone());
        let written = serde_json::to_value(&class).expect("writing");
        assert_eq!(written, manifest);
        assert_eq!(read(written), class);
    }
}

#[test]
fn the_full_manifest_reads_into_typed_fields() {
    let class = read(full());
    let spec = &class.spec;
    assert_eq!(
        spec.subnet_selector_terms[0].id.as_deref(),
        Some("subnet-0abc")
    );
    assert!(spec.subnet_selector_terms[1].other.contains_key("future"));
    assert_eq!(
        spec.instance_profile.as_deref(),
        Some("KarpenterNodeInstanceProfile")
    );
    let kubelet = spec.kubelet.as_ref().expect("kubelet");
    assert_eq!(kubelet.max_pods, Some(MaxPods::Count(58)));
    assert_eq!(
        kubelet.kube_reserved.as_ref().map(|m| m["cpu"].as_str()),
        Some("vcpus * 10")
    );
    // Only fields no version types are left in `other`.
    assert_eq!(
        kubelet.other.keys().collect::<Vec<_>>(),
        ["serializeImagePulls"]
    );
    assert_eq!(kubelet.image_gc_high_threshold_percent, Some(85));
    assert_eq!(kubelet.image_gc_low_threshold_percent, Some(80));
    assert_eq!(kubelet.cpu_cfs_quota, Some(true));
    for (name, other) in [
        ("spec", &spec.other),
        (
            "ebs",
            &spec.block_device_mappings.as_ref().expect("mappings")[0]
                .ebs
                .as_ref()
                .expect("ebs")
                .other,
        ),
        (
            "metadataOptions",
            &spec.metadata_options.as_ref().expect("options").other,
        ),
        (
            "connectionTracking",
            &spec.connection_tracking.as_ref().expect("tracking").other,
        ),
    ] {
        assert!(
            other.keys().all(|k| k == "someNewField"),
            "{name}: {other:?}"
        );
    }
    let mapping = &spec.block_device_mappings.as_ref().expect("mappings")[0];
    assert!(mapping.is_root_volume());
    let ebs = mapping.ebs.as_ref().expect("ebs");
    assert_eq!(
        ebs.volume_size.as_ref().map(|q| q.0.as_str()),
        Some("100Gi")
    );
    assert_eq!(
        ebs.kms_key_id.as_deref().map(|k| k.ends_with("key/abc")),
        Some(true)
    );
    assert_eq!(spec.network_interfaces.as_ref().map(Vec::len), Some(2));
    assert!(spec.other.contains_key("someNewField"));
    let status = class.status.as_ref().expect("status");
    let reservation = &status.capacity_reservations.as_ref().expect("reservations")[0];
    assert!(reservation.is_capacity_block() && reservation.is_expiring());
    assert_eq!(
        status.other.keys().collect::<Vec<_>>(),
        ["statusFromTheFuture"]
    );
    assert!(reservation.other.is_empty(), "{:?}", reservation.other);
    assert!(
        status.subnets.as_ref().expect("subnets")[0]
            .other
            .is_empty()
    );
    let ami = &status.amis.as_ref().expect("amis")[0];
    assert!(ami.other.is_empty(), "{:?}", ami.other);
    assert_eq!(ami.requirements[0].key, "kubernetes.io/arch");
    assert_eq!(class.extra.get("topLevelExtra"), Some(&json!("kept")));
    assert_eq!(class.validate(), Ok(()));
}

#[test]
fn the_seed_manifest_is_valid_and_resolves_its_family_from_the_alias() {
    let mut class = read(seed());
    assert_eq!(class.validate(), Ok(()));
    class.spec.ami_family = None;
    assert_eq!(class.validate(), Ok(()));
    assert_eq!(
        class.alias(),
        Some(Alias {
            family: AmiFamily::AL2023,
            version: "latest".into()
        })
    );
    assert_eq!(class.ami_family(), Some(AmiFamily::AL2023));
    class.spec.ami_family = Some("Custom".into());
    assert_eq!(class.ami_family(), Some(AmiFamily::Custom));
}

#[test]
fn aliases_parse_only_known_families_with_a_version() {
    let parsed = Alias::parse("windows2022@latest").expect("an alias");
    assert_eq!(parsed.family, AmiFamily::Windows2022);
    assert_eq!(parsed.to_string(), "windows2022@latest");
    assert_eq!(
        Alias::parse("bottlerocket@v1.20.3").map(|a| a.version),
        Some("v1.20.3".into())
    );
    for bad in [
        "al2023",
        "al2023@",
        "custom@latest",
        "AL2023@latest",
        "ubuntu@latest",
    ] {
        assert_eq!(Alias::parse(bad), None, "{bad}");
    }
    for family in AmiFamily::ALL {
        assert_eq!(AmiFamily::parse(family.as_str()), Some(family));
    }
}

#[test]
fn metadata_options_take_the_crd_defaults() {
    let mut class = read(seed());
    let defaults = class.metadata_options();
    assert_eq!(
        (
            defaults.http_endpoint.as_str(),
            defaults.http_protocol_ipv6.as_str(),
            defaults.http_put_response_hop_limit,
            defaults.http_tokens.as_str()
        ),
        ("enabled", "disabled", 1, "required")
    );
    class.spec.metadata_options = Some(MetadataOptions {
        http_tokens: Some("optional".into()),
        ..MetadataOptions::default()
    });
    let resolved = class.metadata_options();
    assert_eq!(resolved.http_tokens, "optional");
    assert_eq!(resolved.http_put_response_hop_limit, 1);
    // Defaults are not written back into the spec.
    let written = serde_json::to_value(&class).expect("writing");
    assert_eq!(
        written["spec"]["metadataOptions"],
        json!({"httpTokens": "optional"})
    );
}

#[test]
fn a_kubernetes_client_sees_a_cluster_scoped_karpenter_k8s_aws_v1_resource() {
    use k8s_openapi::{ListableResource, Metadata, Resource};
    fn cluster_scoped<R: Resource<Scope = k8s_openapi::ClusterResourceScope>>() {}
    cluster_scoped::<EC2NodeClass>();
    assert_eq!(
        <EC2NodeClass as Resource>::API_VERSION,
        "karpenter.k8s.aws/v1"
    );
    assert_eq!(<EC2NodeClass as Resource>::GROUP, "karpenter.k8s.aws");
    assert_eq!(<EC2NodeClass as Resource>::VERSION, "v1");
    assert_eq!(<EC2NodeClass as Resource>::KIND, "EC2NodeClass");
    assert_eq!(
        <EC2NodeClass as Resource>::URL_PATH_SEGMENT,
        "ec2nodeclasses"
    );
    assert_eq!(
        <EC2NodeClass as ListableResource>::LIST_KIND,
        "EC2NodeClassList"
    );
    let mut class = read(seed());
    class.metadata_mut().name = Some("renamed".into());
    assert_eq!(class.metadata().name.as_deref(), Some("renamed"));
}

#[test]
fn another_kind_or_version_is_refused_and_an_absent_one_tolerated() {
    let mut wrong_version = seed();
    wrong_version["apiVersion"] = json!("karpenter.k8s.aws/v1beta1");
    let err = serde_json::from_value::<EC2NodeClass>(wrong_version).expect_err("v1beta1");
    assert!(err.to_string().contains("v1beta1"), "{err}");
    let mut wrong_kind = seed();
    wrong_kind["kind"] = json!("AKSNodeClass");
    assert!(serde_json::from_value::<EC2NodeClass>(wrong_kind).is_err());
    let mut bare = seed();
    let object = bare.as_object_mut().expect("an object");
    object.remove("apiVersion");
    object.remove("kind");
    assert_eq!(read(bare), read(seed()));
}

#[test]
fn max_pods_may_be_an_expression() {
    let mut manifest = seed();
    manifest["spec"]["kubelet"] = json!({"maxPods": "min(max_pods, 110)"});
    let class = read(manifest.clone());
    let max_pods = class.spec.kubelet.as_ref().and_then(|k| k.max_pods.clone());
    assert_eq!(
        max_pods,
        Some(MaxPods::Expression("min(max_pods, 110)".into()))
    );
    assert_eq!(max_pods.and_then(|m| m.count()), None);
    assert_eq!(serde_json::to_value(&class).expect("writing"), manifest);
}
