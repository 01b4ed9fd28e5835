//! Upstream's label and taint tables (`labels_test.go`, the instance-type
//! suite's custom-data tables) as expected values. `KUBELET_NODE_LABELS`
//! is built from a Go map upstream, so everything is compared as sets.

use std::collections::{BTreeMap, BTreeSet};

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::InstanceType;
use serde_json::{Value, json};

use super::*;
use crate::catalog::Catalog;
use crate::instancetype::{Settings, instance_types};
use crate::nodeclass::NetworkOptions;

mod tables;

/// Upstream's test region (`fake.Region`) and its first zone's label.
const REGION: &str = "southcentralus";
const ZONE_1: &str = "southcentralus-1";
const VNET_GUID: &str = "a519e60a-cac0-40b2-b883-084477fe6f5c";
const KUBELET_IDENTITY: &str = "61f71907-753f-4802-a901-47361c3664f2";

/// Upstream's test options (`pkg/test/options.go`) with the network's
/// plugin, mode and dataplane as given (`None`: the default).
fn settings_with(network: [Option<&str>; 3]) -> AksSettings {
    let mut env: BTreeMap<&str, &str> = BTreeMap::from([
        ("CLUSTER_NAME", "test-cluster"),
        ("CLUSTER_ENDPOINT", "https://test-cluster"),
        ("KUBELET_BOOTSTRAP_TOKEN", "abcdef.0123456789abcdef"),
        ("SSH_PUBLIC_KEY", "test-ssh-public-key"),
        (
            "VNET_SUBNET_ID",
            "/subscriptions/12345678-1234-1234-1234-123456789012/resourceGroups/test-resourceGroup/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet",
        ),
        ("AZURE_NODE_RESOURCE_GROUP", "test-resourceGroup"),
        ("LOCATION", REGION),
        ("VNET_GUID", VNET_GUID),
        ("KUBELET_IDENTITY_CLIENT_ID", KUBELET_IDENTITY),
    ]);
    let names = ["NETWORK_PLUGIN", "NETWORK_PLUGIN_MODE", "NETWORK_DATAPLANE"];
    for (name, value) in names.into_iter().zip(network) {
        if let Some(value) = value {
            env.insert(name, value);
        }
    }
    AksSettings::from_lookup(|name| env.get(name).map(|v| (*v).to_owned()))
        .expect("upstream's test options are valid")
}

/// Upstream's default test network: Azure CNI overlay with Cilium.
fn settings() -> AksSettings {
    settings_with([None, None, None])
}

fn class(spec: Value, status: Value) -> AKSNodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": spec,
        "status": status,
    }))
    .expect("an AKSNodeClass")
}

fn default_class() -> AKSNodeClass {
    class(json!({}), json!({}))
}

/// The embedded catalog's sizes in upstream's test region under `class`.
fn sizes(class: &AKSNodeClass) -> Vec<InstanceType> {
    let mut settings = Settings::for_node_class(class, REGION, &NetworkOptions::default())
        .expect("the class's settings");
    settings.node_resource_group = Some("test-resourceGroup".to_owned());
    instance_types(Catalog::embedded(), &settings)
}

/// The size `name` as `class` shapes it (its OS SKU, FIPS label).
fn size_of(class: &AKSNodeClass, name: &str) -> InstanceType {
    sizes(class)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} in {REGION}"))
}

fn size(name: &str) -> InstanceType {
    size_of(&default_class(), name)
}

/// A claim with `requirements` (`[key, operator, values]`), labels and
/// taints, as the API server would hand it over.
fn claim(requirements: Value, labels: Value, taints: Value, startup: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": "default-abcde", "labels": labels},
        "spec": {
            "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
            "requirements": requirements,
            "taints": taints,
            "startupTaints": startup,
        },
    }))
    .expect("a NodeClaim")
}

fn requiring(key: &str, values: &[&str]) -> NodeClaim {
    claim(
        json!([{"key": key, "operator": "In", "values": values}]),
        json!({}),
        json!([]),
        json!([]),
    )
}

fn empty_claim() -> NodeClaim {
    claim(json!([]), json!({}), json!([]), json!([]))
}

/// The labels as `KUBELET_NODE_LABELS` items, `key=value`.
fn items(labels: &BTreeMap<String, String>) -> BTreeSet<String> {
    labels.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

fn labels_for(version: &str, class: &AKSNodeClass, size_name: &str) -> BTreeMap<String, String> {
    let size = size_of(class, size_name);
    kubelet_node_labels(&settings(), version, class, &size, &empty_claim())
}

#[test]
fn every_node_carries_the_non_schedulable_labels() {
    let labels = labels_for("1.31.2", &default_class(), "Standard_D2s_v3");
    let expected = [
        "kubernetes.azure.com/role=agent",
        "kubernetes.azure.com/kubelet-identity-client-id=61f71907-753f-4802-a901-47361c3664f2",
        "kubernetes.azure.com/mode=user",
        "kubernetes.azure.com/network-subnet=aks-subnet",
        "kubernetes.azure.com/nodenetwork-vnetguid=a519e60a-cac0-40b2-b883-084477fe6f5c",
        "kubernetes.azure.com/azure-cni-overlay=true",
        "kubernetes.azure.com/podnetwork-type=overlay",
        "karpenter.sh/do-not-sync-taints=true",
        "kubernetes.azure.com/cluster=test-resourceGroup",
        "kubernetes.azure.com/scalesetpriority=regular",
        "kubernetes.azure.com/priority=regular",
    ];
    let got = items(&labels);
    let missing: Vec<_> = expected.iter().filter(|e| !got.contains(**e)).collect();
    assert!(missing.is_empty(), "missing {missing:?} in {got:?}");
}

#[test]
fn the_network_decides_the_cni_labels() {
    // Upstream's "Azure CNI node labels" table: plugin, mode, dataplane and
    // the network labels the node gets (on 1.31, stateless CNI is off).
    let overlay = [
        "kubernetes.azure.com/azure-cni-overlay=true",
        "kubernetes.azure.com/network-subnet=aks-subnet",
        "kubernetes.azure.com/nodenetwork-vnetguid=a519e60a-cac0-40b2-b883-084477fe6f5c",
        "kubernetes.azure.com/podnetwork-type=overlay",
        "kubernetes.azure.com/network-stateless-cni=false",
    ];
    let cilium = "kubernetes.azure.com/ebpf-dataplane=cilium";
    let with_cilium: Vec<&str> = overlay.iter().copied().chain([cilium]).collect();
    let cases: [([&str; 3], &[&str]); 5] = [
        (["azure", "", ""], &[]),
        (["azure", "overlay", ""], &overlay),
        (["none", "", ""], &[]),
        (["azure", "overlay", "cilium"], &with_cilium),
        (["azure", "", "cilium"], &[cilium]),
    ];
    let network_keys = [
        AZURE_CNI_OVERLAY,
        NETWORK_SUBNET,
        NODE_NETWORK_VNET_GUID,
        POD_NETWORK_TYPE,
        NETWORK_STATELESS_CNI,
        EBPF_DATAPLANE,
    ];
    for (network, expected) in cases {
        let settings = settings_with(network.map(Some));
        let labels = kubelet_node_labels(
            &settings,
            "1.31.2",
            &default_class(),
            &size("Standard_D2s_v3"),
            &empty_claim(),
        );
        let got: BTreeSet<String> = items(&labels)
            .into_iter()
            .filter(|item| {
                network_keys
                    .iter()
                    .any(|k| item.starts_with(&format!("{k}=")))
            })
            .collect();
        let expected: BTreeSet<String> = expected.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(got, expected, "network {network:?}");
    }
}

#[test]
fn a_class_subnet_names_the_network_subnet() {
    let class = class(
        json!({"vnetSubnetID": "/subscriptions/12345678-1234-1234-1234-123456789012/resourceGroups/sillygeese/providers/Microsoft.Network/virtualNetworks/karpenter/subnets/nodeclassSubnet"}),
        json!({}),
    );
    let labels = labels_for("1.31.2", &class, "Standard_D2s_v3");
    assert_eq!(labels[NETWORK_SUBNET], "nodeclassSubnet");
}

#[test]
fn stateless_cni_comes_with_kubernetes_1_34() {
    for (version, expected) in [("1.34.0", "true"), ("1.33.0", "false"), ("1.35.1", "true")] {
        let labels = labels_for(version, &default_class(), "Standard_D2s_v3");
        assert_eq!(labels[NETWORK_STATELESS_CNI], expected, "{version}");
    }
}

#[test]
fn register_with_taints_adds_unregistered_when_absent() {
    let bare = empty_claim();
    assert_eq!(
        register_with_taints(&bare),
        ["karpenter.sh/unregistered:NoExecute"]
    );
    let tainted = claim(
        json!([]),
        json!({}),
        json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        json!([{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}]),
    );
    assert_eq!(
        register_with_taints(&tainted),
        [
            "dedicated=gpu:NoSchedule",
            "node.cilium.io/agent-not-ready=true:NoExecute",
            "karpenter.sh/unregistered:NoExecute",
        ]
    );
}

#[test]
fn register_with_taints_keeps_a_claims_own_unregistered_taint() {
    // Matched on key and effect, whatever the value, as MatchTaint does.
    let own = claim(
        json!([]),
        json!({}),
        json!([{"key": "karpenter.sh/unregistered", "value": "x", "effect": "NoExecute"}]),
        json!([]),
    );
    assert_eq!(
        register_with_taints(&own),
        ["karpenter.sh/unregistered=x:NoExecute"]
    );
    // Another effect is another taint: the NoExecute one still comes.
    let other_effect = claim(
        json!([]),
        json!({}),
        json!([]),
        json!([{"key": "karpenter.sh/unregistered", "effect": "NoSchedule"}]),
    );
    assert_eq!(
        register_with_taints(&other_effect),
        [
            "karpenter.sh/unregistered:NoSchedule",
            "karpenter.sh/unregistered:NoExecute",
        ]
    );
}
