//! Upstream's vectors (`aksbootstrap_test.go`, and the custom-data
//! expectations of `instancetype/suite_test.go`) plus the token's and the
//! output's properties. This file holds the inputs they render from.

mod rendering;
mod vectors;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::InstanceType;
use serde_json::{Value, json};

use super::*;
use crate::catalog::Catalog;
use crate::instancetype::{Settings, instance_types};

pub(super) const TOKEN: &str = "abcdef.0123456789abcdef";
pub(super) const MIRROR: &str = "https://acs-mirror.azureedge.net";

pub(super) fn settings(extra: &[(&str, &str)]) -> AksSettings {
    let mut map: BTreeMap<&str, String> = [
        ("CLUSTER_NAME", "test-cluster"),
        ("CLUSTER_ENDPOINT", "https://test-cluster"),
        ("KUBELET_BOOTSTRAP_TOKEN", TOKEN),
        ("SSH_PUBLIC_KEY", "ssh-ed25519 AAAA azureuser"),
        (
            "VNET_SUBNET_ID",
            "/subscriptions/12345678-1234-1234-1234-123456789012/resourceGroups/test-resourceGroup/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet",
        ),
        ("AZURE_NODE_RESOURCE_GROUP", "test-resourceGroup"),
        ("LOCATION", "westus2"),
        ("KUBELET_IDENTITY_CLIENT_ID", "61f71907-753f-4802-a901-47361c3664f2"),
        ("NETWORK_DATAPLANE", "cilium"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_owned()))
    .collect();
    for (k, v) in extra {
        map.insert(k, (*v).to_owned());
    }
    AksSettings::from_lookup(|name| map.get(name).cloned()).expect("valid settings")
}

pub(super) fn node_class(spec: Value) -> AKSNodeClass {
    serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": spec}))
        .expect("an AKSNodeClass")
}

pub(super) fn claim(spec: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": "c", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": spec,
    }))
    .expect("a NodeClaim")
}

/// One node's inputs, rendered.
pub(super) struct Case {
    pub(super) settings: AksSettings,
    pub(super) class: AKSNodeClass,
    pub(super) claim: NodeClaim,
    pub(super) size: &'static str,
    pub(super) version: &'static str,
    pub(super) dns: IpAddr,
}

impl Case {
    pub(super) fn new(size: &'static str) -> Case {
        Case {
            settings: settings(&[]),
            class: node_class(json!({})),
            claim: claim(json!({"requirements": []})),
            size,
            version: "1.31.2",
            dns: "10.0.0.10".parse().expect("an address"),
        }
    }

    fn instance_type(&self) -> InstanceType {
        let network = self.settings.network_options();
        // An invalid class still gets the region's types, so that what a
        // test sees is the renderer's own check.
        let shape = Settings::for_node_class(&self.class, &self.settings.location, &network)
            .unwrap_or_else(|_| Settings::for_region(&self.settings.location));
        instance_types(Catalog::embedded(), &shape)
            .into_iter()
            .find(|it| it.name == self.size)
            .expect("the size is offered")
    }

    pub(super) fn render(&self) -> Result<String, BootstrapError> {
        self.with_inputs(render_script)
    }

    pub(super) fn with_inputs<T>(&self, f: impl Fn(&CustomDataInputs<'_>) -> T) -> T {
        let instance_type = self.instance_type();
        let sku = Catalog::embedded().sku(self.size).expect("a catalog size");
        f(&CustomDataInputs {
            settings: &self.settings,
            kubernetes_version: self.version,
            ca_bundle: "Q0EgYnVuZGxl",
            cluster_dns: self.dns,
            node_class: &self.class,
            instance_type: &instance_type,
            sku,
            claim: &self.claim,
            network_security_group: "aks-agentpool-12345678-nsg",
            route_table: "aks-agentpool-12345678-routetable",
        })
    }

    pub(super) fn script(&self) -> String {
        self.render().expect("renders")
    }
}

/// The value of `name` on its line, without quotes.
pub(super) fn variable(script: &str, name: &str) -> String {
    let prefix = format!("{name}=");
    let line = script
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{name} is assigned"));
    line[prefix.len()..].trim_matches('"').to_owned()
}

/// The kubelet flags as a set of `--k=v`, as upstream's tests compare them.
pub(super) fn flags(script: &str) -> BTreeSet<String> {
    variable(script, "KUBELET_FLAGS")
        .split(' ')
        .map(str::to_owned)
        .collect()
}

pub(super) fn has_flag(script: &str, flag: &str, value: &str) -> bool {
    flags(script).contains(&format!("--{flag}={value}"))
}
