use serde_json::{Value, json};

use super::super::EC2NodeClass;
use super::Problem;

/// The seed-style spec, with `changes` merged over it (a `null` removes).
fn class_with(changes: Value) -> EC2NodeClass {
    let mut spec = json!({
        "amiFamily": "AL2023",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
    });
    for (key, value) in changes.as_object().expect("an object of changes") {
        if value.is_null() {
            spec.as_object_mut().expect("spec").remove(key);
        } else {
            spec[key] = value.clone();
        }
    }
    let manifest = json!({"metadata": {"name": "bad"}, "spec": spec});
    serde_json::from_value(manifest).expect("a readable manifest")
}

/// The problems of the seed spec with `changes`.
fn problems(changes: Value) -> Vec<Problem> {
    match class_with(changes).validate() {
        Ok(()) => Vec::new(),
        Err(err) => {
            assert_eq!(err.name, "bad");
            assert!(!err.problems.is_empty());
            err.problems
        }
    }
}

/// Asserts that `changes` is refused with a problem on `field` whose
/// message holds `text`.
fn refused(changes: Value, field: &str, text: &str) {
    let found = problems(changes.clone());
    assert!(
        found
            .iter()
            .any(|p| p.field() == field && p.to_string().contains(text)),
        "{changes} should break {field:?} ({text:?}); got {found:?}"
    );
}

fn accepted(changes: Value) {
    assert_eq!(problems(changes.clone()), Vec::new(), "{changes}");
}

#[test]
fn required_selector_terms() {
    refused(
        json!({"subnetSelectorTerms": []}),
        "subnetSelectorTerms",
        "cannot be empty",
    );
    refused(
        json!({"securityGroupSelectorTerms": null}),
        "securityGroupSelectorTerms",
        "cannot be empty",
    );
    refused(
        json!({"amiSelectorTerms": []}),
        "amiSelectorTerms",
        "at least one",
    );
}

#[test]
fn subnet_terms() {
    refused(
        json!({"subnetSelectorTerms": [{}]}),
        "subnetSelectorTerms",
        "['tags', 'id']",
    );
    refused(
        json!({"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}),
        "subnetSelectorTerms",
        "'id' is mutually exclusive",
    );
    // The CRD's rule is `!self.all(...)`: one plain term lets a mixed one pass.
    accepted(
        json!({"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}, {"id": "subnet-2"}]}),
    );
    refused(
        json!({"subnetSelectorTerms": [{"id": "vpc-1"}]}),
        "subnetSelectorTerms[0].id",
        "subnet-[0-9a-z]+",
    );
    refused(
        json!({"subnetSelectorTerms": [{"tags": {"": "x"}}]}),
        "subnetSelectorTerms[0].tags",
        "empty tag",
    );
    refused(
        json!({"subnetSelectorTerms": [{"tags": {"k": ""}}]}),
        "subnetSelectorTerms[0].tags",
        "empty tag",
    );
    let many: serde_json::Map<String, Value> =
        (0..21).map(|i| (format!("k{i}"), json!("v"))).collect();
    refused(
        json!({"subnetSelectorTerms": [{"tags": many}]}),
        "subnetSelectorTerms[0].tags",
        "at most 20",
    );
    let terms: Vec<Value> = (0..31)
        .map(|i| json!({"id": format!("subnet-{i}")}))
        .collect();
    refused(
        json!({"subnetSelectorTerms": terms}),
        "subnetSelectorTerms",
        "at most 30",
    );
}

#[test]
fn security_group_terms() {
    let field = "securityGroupSelectorTerms";
    refused(json!({field: [{}]}), field, "['tags', 'id', 'name']");
    refused(
        json!({field: [{"id": "sg-1", "name": "n"}]}),
        field,
        "'id' is mutually exclusive",
    );
    refused(
        json!({field: [{"name": "n", "tags": {"a": "b"}}]}),
        field,
        "'name' is mutually exclusive",
    );
    refused(
        json!({field: [{"id": "subnet-1"}]}),
        "securityGroupSelectorTerms[0].id",
        "sg-[0-9a-z]+",
    );
    accepted(json!({field: [{"id": "sg-0abc"}, {"name": "nodes"}]}));
}

#[test]
fn capacity_reservation_terms() {
    let field = "capacityReservationSelectorTerms";
    refused(
        json!({field: [{"ownerID": "123456789012"}]}),
        field,
        "['tags', 'id', 'instanceMatchCriteria']",
    );
    refused(
        json!({field: [{"id": "cr-1", "instanceMatchCriteria": "open"}]}),
        field,
        "'id' is mutually exclusive",
    );
    refused(
        json!({field: [{"id": "cr-1x!"}]}),
        "capacityReservationSelectorTerms[0].id",
        "^cr-",
    );
    refused(
        json!({field: [{"tags": {"a": "b"}, "ownerID": "12345"}]}),
        "capacityReservationSelectorTerms[0].ownerID",
        "{12}",
    );
    refused(
        json!({field: [{"instanceMatchCriteria": "any"}]}),
        "capacityReservationSelectorTerms[0].instanceMatchCriteria",
        "open, targeted",
    );
    accepted(json!({field: [{"id": "cr-0abc"}, {"tags": {"a": "b"}, "ownerID": "123456789012"}]}));
}

#[test]
fn ami_terms_and_aliases() {
    let terms = "amiSelectorTerms";
    refused(
        json!({terms: [{"owner": "self"}]}),
        terms,
        "expected at least one",
    );
    refused(
        json!({terms: [{"alias": "al2023@latest"}, {"id": "ami-1"}]}),
        terms,
        "combination of other amiSelectorTerms",
    );
    refused(
        json!({terms: [{"alias": "al2023@latest", "owner": "self"}]}),
        "amiSelectorTerms[0]",
        "'alias' is mutually exclusive",
    );
    refused(
        json!({"amiFamily": "AL2023", terms: [{"id": "ami-1", "name": "x"}]}),
        "amiSelectorTerms[0]",
        "'id' is mutually exclusive",
    );
    refused(
        json!({"amiFamily": "AL2023", terms: [{"id": "img-1"}]}),
        "amiSelectorTerms[0].id",
        "ami-[0-9a-z]+",
    );
    refused(
        json!({"amiFamily": null, terms: [{"alias": "al2023"}]}),
        "amiSelectorTerms[0].alias",
        "family@version",
    );
    refused(
        json!({"amiFamily": null, terms: [{"alias": "ubuntu@latest"}]}),
        "amiSelectorTerms[0].alias",
        "family is not supported",
    );
    refused(
        json!({"amiFamily": null, terms: [{"alias": "windows2022@v1"}]}),
        "amiSelectorTerms[0].alias",
        "only specify version 'latest'",
    );
    refused(
        json!({"amiFamily": null, terms: [{"alias": "al2023@v20240807-and-a-longer-tail"}]}),
        "amiSelectorTerms[0].alias",
        "30 characters",
    );
    accepted(json!({"amiFamily": null, terms: [{"alias": "bottlerocket@v1.20.3"}]}));
    accepted(json!({"amiFamily": "AL2", terms: [{"name": "my-ami-*"}, {"ssmParameter": "/x"}]}));
}

#[test]
fn ami_family() {
    refused(json!({"amiFamily": "Ubuntu"}), "amiFamily", "AL2, AL2023");
    refused(
        json!({"amiFamily": null, "amiSelectorTerms": [{"id": "ami-1"}]}),
        "amiFamily",
        "must specify amiFamily",
    );
    refused(
        json!({"amiFamily": "AL2"}),
        "amiFamily",
        "must be 'AL2023' or 'Custom' when using an AL2023 alias",
    );
    refused(
        json!({"amiFamily": "AL2023", "amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}),
        "amiFamily",
        "must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias",
    );
    accepted(json!({"amiFamily": "Custom"}));
}

#[test]
fn role_xor_instance_profile() {
    refused(
        json!({"instanceProfile": "p"}),
        "role",
        "exactly one of ['role', 'instanceProfile']",
    );
    refused(json!({"role": null}), "role", "exactly one of");
    refused(json!({"role": ""}), "role", "role cannot be empty");
    refused(
        json!({"role": null, "instanceProfile": ""}),
        "instanceProfile",
        "instanceProfile cannot be empty",
    );
    accepted(json!({"role": null, "instanceProfile": "p"}));
}

#[test]
fn restricted_tags() {
    refused(json!({"tags": {"": "x"}}), "tags", "empty tag keys");
    for key in [
        "eks:eks-cluster-name",
        "karpenter.sh/nodepool",
        "karpenter.sh/nodeclaim",
        "karpenter.k8s.aws/ec2nodeclass",
    ] {
        refused(
            json!({"tags": {key: "x"}}),
            &format!("tags[{key}]"),
            &format!("matching {key}"),
        );
    }
    refused(
        json!({"tags": {"kubernetes.io/cluster/demo": "owned"}}),
        "tags[kubernetes.io/cluster/demo]",
        "kubernetes.io/cluster/",
    );
    refused(
        json!({"tags": {"kubernetes.io/clusterx": "1"}}),
        "tags[kubernetes.io/clusterx]",
        "restricted",
    );
    accepted(json!({"tags": {"karpenter.sh/discovery": "demo", "team": ""}}));
}

#[test]
fn block_device_mappings() {
    let field = "blockDeviceMappings";
    let root = json!({"rootVolume": true, "ebs": {"volumeSize": "20Gi"}});
    refused(
        json!({field: [root, root]}),
        field,
        "only one blockDeviceMappings with rootVolume",
    );
    refused(
        json!({field: [{"ebs": {"volumeType": "gp3"}}]}),
        "blockDeviceMappings[0].ebs",
        "snapshotID or volumeSize",
    );
    refused(
        json!({field: [{"ebs": {"volumeSize": "20Gi", "volumeInitializationRate": 150}}]}),
        "blockDeviceMappings[0].ebs",
        "snapshotID must be set",
    );
    refused(
        json!({field: [{"ebs": {"snapshotID": "snap-1", "volumeInitializationRate": 50}}]}),
        "blockDeviceMappings[0].ebs.volumeInitializationRate",
        "100 to 300",
    );
    refused(
        json!({field: [{"ebs": {"volumeSize": "20Gi", "volumeType": "gp4"}}]}),
        "blockDeviceMappings[0].ebs.volumeType",
        "gp3",
    );
    for size in [
        "0Gi", "59001Gi", "64001G", "18Ti", "65T", "20Mi", "020Gi", "Gi",
    ] {
        refused(
            json!({field: [{"ebs": {"volumeSize": size}}]}),
            "blockDeviceMappings[0].ebs.volumeSize",
            "pattern",
        );
    }
    for size in [
        "1Gi", "59000Gi", "64000G", "58Ti", "57Ti", "9Ti", "64T", "100G",
    ] {
        accepted(json!({field: [{"ebs": {"volumeSize": size}}]}));
    }
    let many: Vec<Value> = (0..51)
        .map(|_| json!({"ebs": {"volumeSize": "1Gi"}}))
        .collect();
    refused(json!({field: many}), field, "at most 50");
}

#[test]
fn metadata_options_and_scalars() {
    let options = |v: Value| json!({"metadataOptions": v});
    refused(
        options(json!({"httpEndpoint": "on"})),
        "metadataOptions.httpEndpoint",
        "enabled, disabled",
    );
    refused(
        options(json!({"httpProtocolIPv6": "yes"})),
        "metadataOptions.httpProtocolIPv6",
        "enabled, disabled",
    );
    refused(
        options(json!({"httpPutResponseHopLimit": 65})),
        "metadataOptions.httpPutResponseHopLimit",
        "1 to 64",
    );
    refused(
        options(json!({"httpTokens": "sometimes"})),
        "metadataOptions.httpTokens",
        "required, optional",
    );
    refused(
        json!({"instanceStorePolicy": "RAID1"}),
        "instanceStorePolicy",
        "RAID0",
    );
    refused(json!({"ipPrefixCount": -1}), "ipPrefixCount", "0 to");
    refused(
        json!({"cpuOptions": {"nestedVirtualization": "yes"}}),
        "cpuOptions.nestedVirtualization",
        "enabled",
    );
    accepted(options(
        json!({"httpTokens": "optional", "httpPutResponseHopLimit": 2}),
    ));
}

#[test]
fn networking() {
    let nic = |card: i64, device: i64, kind: &str| json!({"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind});
    let field = "networkInterfaces";
    refused(
        json!({field: [nic(1, 0, "interface")]}),
        field,
        "primary interface",
    );
    refused(
        json!({field: [nic(0, 0, "interface"), nic(0, 0, "interface")]}),
        field,
        "duplicate",
    );
    refused(
        json!({field: [nic(0, 0, "interface"), nic(1, 0, "efa-only"), nic(1, 1, "efa-only")]}),
        field,
        "at most one efa",
    );
    refused(
        json!({field: [nic(0, 0, "interface"), nic(1, 0, "ena")]}),
        "networkInterfaces[1].interfaceType",
        "efa-only",
    );
    refused(
        json!({field: [nic(0, 0, "interface"), nic(-1, 0, "interface")]}),
        "networkInterfaces[1].networkCardIndex",
        "0 to",
    );
    accepted(
        json!({field: [nic(0, 0, "interface"), nic(1, 0, "efa-only"), nic(2, 0, "efa-only")]}),
    );
    refused(
        json!({"connectionTracking": {}}),
        "connectionTracking",
        "at least one of",
    );
    refused(
        json!({"connectionTracking": {"udpTimeout": 61}}),
        "connectionTracking.udpTimeout",
        "30 to 60",
    );
    refused(
        json!({"connectionTracking": {"tcpEstablishedTimeout": 59}}),
        "connectionTracking.tcpEstablishedTimeout",
        "60 to 432000",
    );
    refused(
        json!({"connectionTracking": {"udpStreamTimeout": 181}}),
        "connectionTracking.udpStreamTimeout",
        "60 to 180",
    );
    refused(
        json!({"placementGroupSelector": {}}),
        "placementGroupSelector",
        "['name', 'id']",
    );
    refused(
        json!({"placementGroupSelector": {"name": "a", "id": "pg-1"}}),
        "placementGroupSelector",
        "mutually exclusive",
    );
    refused(
        json!({"placementGroupSelector": {"id": "pg-"}}),
        "placementGroupSelector.id",
        "^pg-",
    );
    refused(
        json!({"placementGroupSelector": {"name": ""}}),
        "placementGroupSelector.name",
        "empty",
    );
}

#[test]
fn kubelet_rules() {
    let kubelet = |v: Value| json!({"kubelet": v});
    refused(
        kubelet(json!({"evictionHard": {"memory.free": "5%"}})),
        "kubelet.evictionHard",
        "valid eviction signal",
    );
    refused(
        kubelet(json!({"evictionHard": {"memory.available": "105%"}})),
        "kubelet.evictionHard[memory.available]",
        "percentage or a resource quantity",
    );
    refused(
        kubelet(json!({"evictionHard": {"memory.available": "lots"}})),
        "kubelet.evictionHard[memory.available]",
        "percentage or a resource quantity",
    );
    refused(
        kubelet(json!({"evictionHard": {"memory.available": "-1Gi"}})),
        "kubelet.evictionHard[memory.available]",
        "negative",
    );
    refused(
        kubelet(json!({"evictionSoft": {"memory.available": "1Gi"}})),
        "kubelet.evictionSoft[memory.available]",
        "no matching evictionSoftGracePeriod",
    );
    refused(
        kubelet(json!({"evictionSoftGracePeriod": {"memory.available": "1m"}})),
        "kubelet.evictionSoftGracePeriod[memory.available]",
        "no matching evictionSoft",
    );
    refused(
        kubelet(
            json!({"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "soon"}}),
        ),
        "kubelet.evictionSoftGracePeriod[memory.available]",
        "duration",
    );
    refused(
        kubelet(json!({"evictionMinimumReclaim": {"pid": "1"}})),
        "kubelet.evictionMinimumReclaim",
        "valid eviction signal",
    );
    refused(
        kubelet(json!({"kubeReserved": {"gpu": "1"}})),
        "kubelet.kubeReserved",
        "reservable resource",
    );
    refused(
        kubelet(json!({"systemReserved": {"memory": "-1Gi"}})),
        "kubelet.systemReserved[memory]",
        "negative",
    );
    refused(
        kubelet(json!({"imageGCHighThresholdPercent": 101})),
        "kubelet.imageGCHighThresholdPercent",
        "0 to 100",
    );
    refused(
        kubelet(json!({"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 60})),
        "kubelet",
        "must be greater than",
    );
    refused(
        kubelet(json!({"podsPerCore": -1})),
        "kubelet.podsPerCore",
        "can't be negative",
    );
    refused(
        kubelet(json!({"evictionMaxPodGracePeriod": -1})),
        "kubelet.evictionMaxPodGracePeriod",
        "can't be negative",
    );
    refused(
        kubelet(json!({"maxPods": -1})),
        "kubelet.maxPods",
        "can't be negative",
    );
    refused(
        kubelet(json!({"registerWithTaints": []})),
        "kubelet.registerWithTaints",
        "can't be set",
    );
    accepted(kubelet(json!({
        "maxPods": "max_pods - 2",
        "kubeReserved": {"cpu": "vcpus * 10"},
        "evictionHard": {"memory.available": "500Mi", "nodefs.available": "10%"},
        "evictionSoft": {"memory.available": "1Gi"},
        "evictionSoftGracePeriod": {"memory.available": "1m30s"}
    })));
}

#[test]
fn every_problem_is_listed_with_the_class_name() {
    let class = class_with(json!({
        "role": null,
        "subnetSelectorTerms": [],
        "tags": {"karpenter.sh/nodepool": "x"},
        "metadataOptions": {"httpTokens": "no"}
    }));
    let err = class.validate().expect_err("four problems");
    let fields: Vec<&str> = err.problems.iter().map(Problem::field).collect();
    assert_eq!(
        fields,
        [
            "subnetSelectorTerms",
            "role",
            "tags[karpenter.sh/nodepool]",
            "metadataOptions.httpTokens"
        ]
    );
    let message = err.to_string();
    assert!(
        message.starts_with("EC2NodeClass \"bad\" is invalid: spec.subnetSelectorTerms"),
        "{message}"
    );
    assert!(
        message.contains("; spec.metadataOptions.httpTokens"),
        "{message}"
    );
}
