//! `--reserved-enis` and `--vm-memory-overhead-percent`, with the values of
//! upstream's instance-type and launch-template suites.

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::parse_milli;
use serde_json::json;

use crate::catalog::Catalog;
use crate::instancetype::resources::{eni_limited_pods, kube_reserved, memory_capacity_mib};
use crate::instancetype::settings::NodeSettings;
use crate::instancetype::{
    InstanceTypeError, InstanceTypeOptions, instance_types, instance_types_for,
};
use crate::nodeclass::EC2NodeClass;

const REGION: &str = "us-west-2";

fn catalog() -> &'static Catalog {
    Catalog::embedded().expect("embedded catalog")
}

/// A node class of `family` (through its alias; Custom through an AMI ID)
/// with `kubelet` settings.
fn family(family: &str, kubelet: serde_json::Value) -> EC2NodeClass {
    let terms = match family {
        "Custom" => json!([{"id": "ami-0123456789abcdef0"}]),
        other => json!([{"alias": format!("{}@latest", other.to_ascii_lowercase())}]),
    };
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiFamily": family,
            "amiSelectorTerms": terms,
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "kubelet": kubelet
        }
    }))
    .expect("node class")
}

fn options(reserved_enis: u32, vm_memory_overhead_percent: f64) -> InstanceTypeOptions {
    InstanceTypeOptions {
        reserved_enis,
        vm_memory_overhead_percent,
        ..InstanceTypeOptions::default()
    }
}

fn type_of(class: &EC2NodeClass, options: &InstanceTypeOptions, name: &str) -> InstanceType {
    instance_types_for(catalog(), REGION, class, options)
        .expect("types")
        .into_iter()
        .find(|t| t.name == name)
        .expect("type")
}

fn q(text: &str) -> i64 {
    parse_milli(text).expect("quantity")
}

/// Kube-reserved memory of `name` under `class` and `options`.
fn kube_reserved_memory(class: &EC2NodeClass, options: &InstanceTypeOptions, name: &str) -> i64 {
    let settings = NodeSettings::of(class)
        .and_then(|s| s.with_options(options))
        .expect("settings");
    let record = catalog().record(name).expect("record");
    kube_reserved(catalog(), record, &settings).get("memory")
}

#[test]
fn a_reserved_eni_lowers_pods_but_not_amazon_linux_kube_reserved_memory() {
    // Upstream's table: t3.large has 3 ENIs of 12 addresses; with one ENI
    // reserved, 2 × 11 + 2 = 24 pods. The Amazon Linux families and Custom
    // size kube-reserved memory by the ENI limit without reserved ENIs
    // (11 × 35 + 255), the others by the node's pods.
    let cases = [
        ("AL2", 24, "640Mi"),
        ("AL2023", 24, "640Mi"),
        ("Bottlerocket", 24, "519Mi"),
        ("Windows2019", 110, "1465Mi"),
        ("Windows2022", 110, "1465Mi"),
        ("Windows2025", 110, "1465Mi"),
        ("Custom", 24, "640Mi"),
    ];
    let one = options(1, 0.075);
    for (name, pods, memory) in cases {
        let class = family(name, json!({}));
        let t3 = type_of(&class, &one, "t3.large");
        assert_eq!(t3.capacity.get("pods"), pods * 1000, "{name}");
        assert_eq!(
            kube_reserved_memory(&class, &one, "t3.large"),
            q(memory),
            "{name}"
        );
    }
}

#[test]
fn reserving_more_enis_than_the_card_has_leaves_no_pods() {
    // max(3 − 1,000,000, 0) ENIs: upstream gives 0 pods, not the 2
    // host-network pods the formula would add.
    let class = family("AL2023", json!({}));
    let t3 = type_of(&class, &options(1_000_000, 0.075), "t3.large");
    assert_eq!(t3.capacity.get("pods"), 0);
    let record = catalog().record("t3.large").expect("record");
    assert_eq!(eni_limited_pods(catalog(), record, 3), 0);
    assert_eq!(eni_limited_pods(catalog(), record, 2), 13);
    // maxPods still wins over the ENI limit.
    let pinned = family("AL2023", json!({"maxPods": 10}));
    let t3 = type_of(&pinned, &options(1_000_000, 0.075), "t3.large");
    assert_eq!(t3.capacity.get("pods"), 10_000);
}

#[test]
fn no_vm_overhead_leaves_the_whole_memory_and_eni_limited_reserved_memory() {
    // Upstream's launch-template suite, overhead 0: m5.xlarge keeps its
    // 16 GiB and its overhead is 11 × 58 + 255 MiB kube-reserved plus the
    // 100 MiB eviction threshold, on AL2 and on Bottlerocket alike.
    for name in ["AL2", "Bottlerocket"] {
        let class = family(name, json!({}));
        let m5 = type_of(&class, &options(0, 0.0), "m5.xlarge");
        assert_eq!(m5.capacity.get("memory"), q("16Gi"), "{name}");
        assert_eq!(m5.overhead.get("memory"), q("993Mi"), "{name}");
    }
    // Graviton's 64 MiB stay reserved without VM overhead.
    let class = family("AL2023", json!({}));
    let c6g = type_of(&class, &options(0, 0.0), "c6g.large");
    assert_eq!(c6g.capacity.get("memory"), q("4032Mi"));
}

#[test]
fn the_vm_overhead_is_rounded_up_to_a_whole_mib() {
    // Upstream's options suite uses 0.1: 8192 − ceil(819.2) = 7372 MiB.
    let class = family("AL2023", json!({}));
    let m5 = type_of(&class, &options(0, 0.1), "m5.large");
    assert_eq!(m5.capacity.get("memory"), q("7372Mi"));
    assert_eq!(
        memory_capacity_mib(8192, crate::catalog::Arch::Amd64, 0.1),
        7372
    );
    // All of it or more leaves nothing, never less.
    assert_eq!(
        memory_capacity_mib(8192, crate::catalog::Arch::Amd64, 1.0),
        0
    );
    assert_eq!(
        memory_capacity_mib(8192, crate::catalog::Arch::Amd64, 7.5),
        0
    );
}

#[test]
fn default_options_give_the_al2023_defaults() {
    let class = family("AL2023", json!({}));
    let configured = instance_types_for(catalog(), REGION, &class, &InstanceTypeOptions::default())
        .expect("types");
    let defaults = instance_types(catalog(), REGION).expect("types");
    assert_eq!(configured.len(), defaults.len());
    for (a, b) in configured.iter().zip(&defaults) {
        assert_eq!((&a.name, &a.capacity), (&b.name, &b.capacity));
        assert_eq!(a.overhead, b.overhead, "{}", a.name);
    }
}

#[test]
fn a_negative_or_non_finite_overhead_names_the_option() {
    let class = family("AL2023", json!({}));
    for percent in [-0.01, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let error = instance_types_for(catalog(), REGION, &class, &options(0, percent))
            .expect_err("rejected");
        assert_eq!(
            error,
            InstanceTypeError::Option {
                option: "--vm-memory-overhead-percent",
                value: percent.to_string(),
            }
        );
        assert!(
            error
                .to_string()
                .starts_with("--vm-memory-overhead-percent: ")
        );
    }
}
