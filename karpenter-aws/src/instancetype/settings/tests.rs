//! The NodeClass's settings against the expectations of upstream's
//! instance-type suite (`pkg/providers/instancetype/suite_test.go`).

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::parse_milli;
use serde_json::{Value, json};

use super::*;
use crate::catalog::{Arch, Catalog};
use crate::instancetype::resources::{
    RESOURCE_PRIVATE_IPV4_ADDRESS, eni_limited_pods, eviction_threshold, kube_reserved,
};
use crate::instancetype::{InstanceTypeOptions, instance_types, instance_types_for};

const REGION: &str = "us-east-1";

fn catalog() -> &'static Catalog {
    Catalog::embedded().expect("embedded catalog")
}

/// A node class with `spec` merged over an AL2023 alias, a role and
/// selector terms.
fn nodeclass(spec: Value) -> EC2NodeClass {
    let mut base = json!({
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
    });
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), spec) {
        base.extend(extra);
    }
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": base
    }))
    .expect("node class")
}

fn kubelet(kubelet: Value) -> EC2NodeClass {
    nodeclass(json!({ "kubelet": kubelet }))
}

/// A node class of `family` through its alias (Custom through `amiFamily`).
fn family(family: &str, kubelet: Value) -> EC2NodeClass {
    let terms = match family {
        "Custom" => json!([{"id": "ami-0123456789abcdef0"}]),
        other => json!([{"alias": format!("{}@latest", other.to_ascii_lowercase())}]),
    };
    nodeclass(json!({"amiFamily": family, "amiSelectorTerms": terms, "kubelet": kubelet}))
}

fn types(class: &EC2NodeClass) -> Vec<InstanceType> {
    instance_types_for(catalog(), REGION, class, &InstanceTypeOptions::default()).expect("types")
}

fn of<'a>(types: &'a [InstanceType], name: &str) -> &'a InstanceType {
    types.iter().find(|t| t.name == name).expect("type")
}

fn settings(class: &EC2NodeClass) -> NodeSettings {
    NodeSettings::of(class).expect("settings")
}

fn q(text: &str) -> i64 {
    parse_milli(text).expect("quantity")
}

fn pods(it: &InstanceType) -> i64 {
    it.capacity.get("pods") / 1000
}

/// Kube-reserved of `name` under `class`, as upstream's `Overhead.KubeReserved`.
fn reserved_of(class: &EC2NodeClass, name: &str) -> ResourceListView {
    let record = catalog().record(name).expect("record");
    let list = kube_reserved(catalog(), record, &settings(class));
    ResourceListView {
        cpu: list.get("cpu"),
        memory: list.get("memory"),
        storage: list.get("ephemeral-storage"),
    }
}

#[derive(Debug, PartialEq)]
struct ResourceListView {
    cpu: i64,
    memory: i64,
    storage: i64,
}

#[test]
fn a_nodeclass_without_settings_matches_the_al2023_defaults() {
    let defaults = instance_types(catalog(), REGION).expect("types");
    let configured = types(&nodeclass(json!({})));
    for (a, b) in defaults.iter().zip(&configured) {
        assert_eq!(
            (a.name.as_str(), &a.capacity),
            (b.name.as_str(), &b.capacity)
        );
        assert_eq!(a.overhead, b.overhead, "{}", a.name);
    }
    assert_eq!(defaults.len(), configured.len());
}

#[test]
fn kube_reserved_defaults_and_overrides() {
    // m5.xlarge: 4 vCPUs, 58 ENI-limited pods.
    let defaults = reserved_of(&kubelet(json!({})), "m5.xlarge");
    let expected = (q("80m"), q("893Mi"), q("1Gi"));
    assert_eq!((defaults.cpu, defaults.memory, defaults.storage), expected);
    let class = kubelet(json!({
        "systemReserved": {"cpu": "1", "memory": "20Gi", "ephemeral-storage": "1Gi"},
        "kubeReserved": {"cpu": "2", "memory": "10Gi", "ephemeral-storage": "2Gi"}
    }));
    let overridden = reserved_of(&class, "m5.xlarge");
    let expected = (q("2"), q("10Gi"), q("2Gi"));
    assert_eq!(
        (overridden.cpu, overridden.memory, overridden.storage),
        expected
    );
    // The overhead adds system-reserved to kube-reserved and eviction.
    let it = of(&types(&class), "m5.xlarge").clone();
    assert_eq!(it.overhead.get("cpu"), q("3"));
    assert_eq!(it.overhead.get("memory"), q("30Gi") + q("100Mi"));
    let storage = it.capacity.get("ephemeral-storage");
    assert_eq!(storage, q("20Gi"));
    assert_eq!(it.overhead.get("ephemeral-storage"), q("3Gi") + q("2Gi"));
}

#[test]
fn a_reserved_resource_the_node_lacks_takes_nothing() {
    let class = kubelet(json!({"systemReserved": {"pid": "100"}}));
    let it = of(&types(&class), "m5.large").clone();
    assert_eq!(it.overhead.get("pid"), 0);
    assert!(it.allocatable().iter().all(|(_, milli)| milli >= 0));
}

fn memory_eviction(eviction_hard: Value) -> (i64, i64) {
    let class = kubelet(
        json!({"evictionHard": eviction_hard, "evictionSoft": {"memory.available": "50Mi"}}),
    );
    let it = of(&types(&class), "m5.xlarge").clone();
    let threshold = eviction_threshold(&it.capacity, &settings(&class));
    (threshold.get("memory"), it.capacity.get("memory"))
}

#[test]
fn eviction_hard_memory_as_quantity_percentage_or_disabled() {
    assert_eq!(
        memory_eviction(json!({"memory.available": "500Mi"})).0,
        q("500Mi")
    );
    let (threshold, capacity) = memory_eviction(json!({"memory.available": "10%"}));
    let tenth = capacity as f64 / 10.0;
    assert!(
        (threshold as f64 - tenth).abs() <= 1000.0,
        "{threshold} vs {tenth}"
    );
    assert_eq!(memory_eviction(json!({"memory.available": "100%"})).0, 0);
    // Soft thresholds never reduce allocatable.
    assert_eq!(memory_eviction(json!({})).0, q("100Mi"));
}

#[test]
fn eviction_hard_nodefs_is_taken_from_the_kubelet_volume() {
    let class = kubelet(json!({"evictionHard": {"nodefs.available": "25%"}}));
    let it = of(&types(&class), "m5.large").clone();
    let threshold = eviction_threshold(&it.capacity, &settings(&class));
    assert_eq!(threshold.get("ephemeral-storage"), q("5Gi"));
    let default = eviction_threshold(&it.capacity, &NodeSettings::default());
    assert_eq!(default.get("ephemeral-storage"), q("2Gi"));
}

#[test]
fn pods_default_to_the_eni_limit() {
    let all = types(&kubelet(json!({})));
    assert_eq!(pods(of(&all, "t3.large")), 35);
    assert_eq!(pods(of(&all, "m6idn.32xlarge")), 394);
    let zero_per_core = types(&kubelet(json!({"podsPerCore": 0})));
    assert_eq!(pods(of(&zero_per_core, "t3.large")), 35);
}

#[test]
fn max_pods_overrides_every_type() {
    assert!(
        types(&kubelet(json!({"maxPods": 10})))
            .iter()
            .all(|t| pods(t) == 10)
    );
}

#[test]
fn kube_reserved_memory_by_family_with_max_pods() {
    // t3.large: 35 ENI-limited pods. The Amazon Linux families and Custom
    // size memory by those; Bottlerocket and Windows by the node's pods.
    let cases = [
        ("AL2", "640Mi"),
        ("AL2023", "640Mi"),
        ("Bottlerocket", "365Mi"),
        ("Windows2019", "365Mi"),
        ("Windows2022", "365Mi"),
        ("Windows2025", "365Mi"),
        ("Custom", "640Mi"),
    ];
    for (name, memory) in cases {
        let class = family(name, json!({"maxPods": 10}));
        assert_eq!(pods(of(&types(&class), "t3.large")), 10, "{name}");
        assert_eq!(reserved_of(&class, "t3.large").memory, q(memory), "{name}");
    }
}

#[test]
fn windows_runs_110_pods_and_sizes_memory_by_them() {
    let class = family("Windows2022", json!({}));
    assert_eq!(pods(of(&types(&class), "t3.large")), 110);
    assert_eq!(reserved_of(&class, "t3.large").memory, q("1465Mi"));
}

#[test]
fn pods_per_core_caps_the_eni_limit_and_max_pods() {
    let per_core = types(&kubelet(json!({"podsPerCore": 1})));
    for it in &per_core {
        let record = catalog().record(&it.name).expect("record");
        let expected = i64::from(record.vcpus).min(eni_limited_pods(catalog(), record, 0));
        assert_eq!(pods(it), expected, "{}", it.name);
    }
    let both = types(&kubelet(json!({"podsPerCore": 4, "maxPods": 20})));
    for it in &both {
        let vcpus = it.capacity.get("cpu") / 1000;
        assert_eq!(pods(it), 20.min(4 * vcpus), "{}", it.name);
    }
}

#[test]
fn bottlerocket_ignores_pods_per_core() {
    let all = types(&family("Bottlerocket", json!({"podsPerCore": 1})));
    for it in &all {
        let record = catalog().record(&it.name).expect("record");
        assert_eq!(
            pods(it),
            eni_limited_pods(catalog(), record, 0),
            "{}",
            it.name
        );
    }
}

fn storage(class: &EC2NodeClass, name: &str) -> i64 {
    of(&types(class), name).capacity.get("ephemeral-storage")
}

fn with_volumes(family_name: &str, mappings: Value) -> EC2NodeClass {
    let mut class = family(family_name, json!({}));
    class.spec.block_device_mappings = serde_json::from_value(mappings).expect("mappings");
    class
}

#[test]
fn each_family_has_its_default_volume() {
    for (name, size) in [
        ("AL2", "20Gi"),
        ("AL2023", "20Gi"),
        ("Bottlerocket", "20Gi"),
        ("Windows2022", "50Gi"),
        ("Custom", "20Gi"),
    ] {
        assert_eq!(
            storage(&family(name, json!({})), "m5.large"),
            q(size),
            "{name}"
        );
    }
}

#[test]
fn block_device_mappings_size_the_kubelet_volume() {
    let root = json!([
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "30Gi"}},
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "80Gi"}, "rootVolume": true}
    ]);
    assert_eq!(
        storage(&with_volumes("AL2023", root), "m5.large"),
        q("80Gi")
    );
    // Bottlerocket's data lives on /dev/xvdb, not its 4 GiB OS volume.
    let devices = json!([
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi"}},
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "60Gi"}}
    ]);
    let bottlerocket = with_volumes("Bottlerocket", devices.clone());
    assert_eq!(storage(&bottlerocket, "m5.large"), q("60Gi"));
    assert_eq!(
        storage(&with_volumes("AL2023", devices.clone()), "m5.large"),
        q("4Gi")
    );
    // A custom image's volume is unknown: the last mapping is taken.
    assert_eq!(
        storage(&with_volumes("Custom", devices), "m5.large"),
        q("60Gi")
    );
    let no_size = json!([{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3"}}]);
    assert_eq!(
        storage(&with_volumes("Custom", no_size.clone()), "m5.large"),
        q("20Gi")
    );
    assert_eq!(
        storage(&with_volumes("AL2", no_size), "m5.large"),
        q("20Gi")
    );
}

#[test]
fn raid0_uses_the_local_nvme_disks_where_a_type_has_them() {
    let class = nodeclass(json!({"instanceStorePolicy": "RAID0"}));
    assert_eq!(storage(&class, "m5d.large"), q("75G"));
    assert_eq!(storage(&class, "m5.large"), q("20Gi"));
}

#[test]
fn windows_amd64_types_offer_private_ipv4_addresses() {
    let windows = types(&family("Windows2022", json!({})));
    let linux = types(&nodeclass(json!({})));
    for (w, l) in windows.iter().zip(&linux) {
        let record = catalog().record(&w.name).expect("record");
        let limits = catalog().vpc_limits(&w.name);
        let expected = match (record.arch, limits) {
            (Arch::Amd64, Some(limits)) => i64::from(limits.ipv4_per_interface) - 1,
            _ => 0,
        };
        assert_eq!(
            w.capacity.get(RESOURCE_PRIVATE_IPV4_ADDRESS),
            expected * 1000,
            "{}",
            w.name
        );
        assert_eq!(l.capacity.get(RESOURCE_PRIVATE_IPV4_ADDRESS), 0);
    }
    // m5.large: 10 addresses per ENI, one the ENI's own.
    assert_eq!(
        of(&windows, "m5.large")
            .capacity
            .get(RESOURCE_PRIVATE_IPV4_ADDRESS),
        9000
    );
}

#[test]
fn unreadable_settings_name_their_field() {
    let bad = kubelet(json!({"kubeReserved": {"memory": "lots"}}));
    let err = instance_types_for(catalog(), REGION, &bad, &InstanceTypeOptions::default())
        .expect_err("bad quantity");
    assert!(
        err.to_string()
            .starts_with("spec.kubelet.kubeReserved[memory]: "),
        "{err}"
    );
    let bad = kubelet(json!({"evictionHard": {"memory.available": "120%"}}));
    let err = NodeSettings::of(&bad).expect_err("bad percentage");
    assert!(
        err.to_string().contains("evictionHard[memory.available]"),
        "{err}"
    );
    let bad = with_volumes(
        "AL2023",
        json!([{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "big"}}]),
    );
    let err = NodeSettings::of(&bad).expect_err("bad size");
    assert!(
        err.to_string()
            .starts_with("spec.blockDeviceMappings[0].ebs.volumeSize"),
        "{err}"
    );
}

fn with_interfaces(interfaces: Value) -> EC2NodeClass {
    nodeclass(json!({ "networkInterfaces": interfaces }))
}

#[test]
fn efa_only_interfaces_on_card_0_take_enis_from_pods() {
    // m6idn.32xlarge: 8 ENIs on card 0, 50 addresses each.
    let elsewhere = with_interfaces(json!([
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}
    ]));
    let it = of(&types(&elsewhere), "m6idn.32xlarge").clone();
    assert_eq!(pods(&it), 394);
    assert_eq!(it.capacity.get("vpc.amazonaws.com/efa"), 1000);
    let on_card0 = with_interfaces(json!([
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}
    ]));
    let it = of(&types(&on_card0), "m6idn.32xlarge").clone();
    assert_eq!(pods(&it), 345);
    // Kube-reserved memory follows the same ENI-limited count.
    assert_eq!(reserved_of(&on_card0, "m6idn.32xlarge").memory, q("4050Mi"));
}

#[test]
fn windows_families_label_os_and_build_on_amd64_only() {
    use karpenter_core::scheduling::{LABEL_OS_STABLE, LABEL_WINDOWS_BUILD, Requirements};
    let selects = |it: &InstanceType, key: &str, value: &str| {
        let mut wanted = Requirements::new();
        wanted.add(karpenter_core::scheduling::Requirement::in_values(
            key,
            [value],
        ));
        it.requirements.intersects(&wanted).is_ok()
    };
    let windows = types(&family("Windows2022", json!({})));
    let amd64 = of(&windows, "m5.large");
    assert!(selects(amd64, LABEL_OS_STABLE, "windows"));
    assert!(!selects(amd64, LABEL_OS_STABLE, "linux"));
    assert!(selects(amd64, LABEL_WINDOWS_BUILD, "10.0.20348"));
    let arm64 = of(&windows, "m6g.large");
    assert!(!selects(arm64, LABEL_OS_STABLE, "windows"));
    assert!(!selects(arm64, LABEL_OS_STABLE, "linux"));
    let linux = types(&nodeclass(json!({})));
    assert!(selects(of(&linux, "m5.large"), LABEL_OS_STABLE, "linux"));
    assert!(!selects(
        of(&linux, "m5.large"),
        LABEL_WINDOWS_BUILD,
        "10.0.20348"
    ));
}
