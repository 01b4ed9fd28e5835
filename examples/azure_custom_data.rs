//! Renders the custom data a VM boots with to join an AKS cluster, from one
//! JSON file: the cluster settings under their environment names (as the
//! controller reads them), plus `kubernetesVersion`, `caBundle`,
//! `clusterDNS`, `instanceType` (a catalog size), `nodeClass` (an
//! AKSNodeClass), `nodeClaim` (a NodeClaim), `networkSecurityGroup` and
//! `routeTable`.
//!
//! ```text
//! cargo run --example azure_custom_data -- examples/azure/settings.json
//! ```
//!
//! Prints the base64 custom data on stdout; a bad input is one line on
//! stderr naming the file and the field, and exit status 1.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::IpAddr;
use std::process::ExitCode;

use karpenter::azure::{
    AKSNodeClass, AksSettings, Catalog, CustomDataInputs, SETTINGS, Settings, custom_data,
    instance_types,
};
use karpenter::core::api::NodeClaim;
use karpenter::core::cloudprovider::InstanceType;
use serde_json::{Map, Value};

/// The fields besides the settings, each a string unless said.
const FIELDS: [&str; 8] = [
    "kubernetesVersion",
    "caBundle",
    "clusterDNS",
    "instanceType",
    "nodeClass",
    "nodeClaim",
    "networkSecurityGroup",
    "routeTable",
];

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: azure_custom_data <settings.json>");
        return ExitCode::FAILURE;
    };
    let rendered = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read it: {e}"))
        .and_then(|text| render(&text));
    match rendered {
        // A closed pipe is a failed write, not a panic.
        Ok(data) => match writeln!(std::io::stdout(), "{data}") {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        },
        Err(message) => {
            eprintln!("{path}: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The base64 custom data the document describes, or what is wrong with it
/// (naming the field).
fn render(text: &str) -> Result<String, String> {
    let document: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(object) = document else {
        return Err("not a JSON object".to_owned());
    };
    check_keys(&object)?;
    let settings = settings(&object)?;
    let string = |field: &str| -> Result<&str, String> {
        object
            .get(field)
            .ok_or_else(|| format!("{field}: missing"))?
            .as_str()
            .ok_or_else(|| format!("{field}: not a string"))
    };
    let cluster_dns: IpAddr = string("clusterDNS")?
        .parse()
        .map_err(|e| format!("clusterDNS: {e}"))?;
    let node_class: AKSNodeClass = document_field(&object, "nodeClass")?;
    let claim: NodeClaim = document_field(&object, "nodeClaim")?;
    let size = string("instanceType")?;
    let (sku, instance_type) = instance_type(&settings, &node_class, size)?;
    let inputs = CustomDataInputs {
        settings: &settings,
        kubernetes_version: string("kubernetesVersion")?,
        ca_bundle: string("caBundle")?,
        cluster_dns,
        node_class: &node_class,
        instance_type: &instance_type,
        sku,
        claim: &claim,
        network_security_group: string("networkSecurityGroup")?,
        route_table: string("routeTable")?,
    };
    custom_data(&inputs).map_err(|e| e.to_string())
}

/// Refuses a key that is neither a setting (or one of its older names) nor
/// one of [`FIELDS`]: a misspelt name would otherwise be silently unset.
fn check_keys(object: &Map<String, Value>) -> Result<(), String> {
    let known = |key: &str| {
        FIELDS.contains(&key)
            || SETTINGS
                .iter()
                .any(|s| s.variable == key || s.aliases.contains(&key))
    };
    match object.keys().find(|key| !known(key)) {
        Some(key) => Err(format!("{key}: not a setting or a known field")),
        None => Ok(()),
    }
}

/// The settings among the keys, each a string as in the environment.
fn settings(object: &Map<String, Value>) -> Result<AksSettings, String> {
    let mut values = BTreeMap::new();
    for (key, value) in object.iter().filter(|(k, _)| !FIELDS.contains(&k.as_str())) {
        let text = value
            .as_str()
            .ok_or_else(|| format!("{key}: not a string (settings are given as text)"))?;
        values.insert(key.clone(), text.to_owned());
    }
    AksSettings::from_lookup(|name| values.get(name).cloned()).map_err(|e| e.to_string())
}

/// A Kubernetes document under `field`.
fn document_field<T: serde::de::DeserializeOwned>(
    object: &Map<String, Value>,
    field: &str,
) -> Result<T, String> {
    let value = object
        .get(field)
        .ok_or_else(|| format!("{field}: missing"))?;
    serde_json::from_value(value.clone()).map_err(|e| format!("{field}: {e}"))
}

/// The size `name` among the instance types the node class is offered in
/// the settings' region and network.
fn instance_type<'c>(
    settings: &AksSettings,
    class: &AKSNodeClass,
    name: &str,
) -> Result<(&'c karpenter::azure::Sku, InstanceType), String> {
    let catalog: &'c Catalog = Catalog::embedded();
    let sku = catalog
        .sku(name)
        .ok_or_else(|| format!("instanceType: `{name}` is not a size in the catalog"))?;
    let mut shape =
        Settings::for_node_class(class, &settings.location, &settings.network_options())
            .map_err(|e| format!("nodeClass: {e}"))?;
    // The cluster's own values, as the provider shapes its types.
    shape.node_resource_group = Some(settings.node_resource_group.clone());
    shape.vm_memory_overhead_percent = settings.vm_memory_overhead_percent;
    let instance_type = instance_types(catalog, &shape)
        .into_iter()
        .find(|it| it.name == sku.name)
        .ok_or_else(|| {
            format!(
                "instanceType: `{name}` is not offered to node class {} in {}",
                class.metadata.name.as_deref().unwrap_or_default(),
                settings.location
            )
        })?;
    Ok((sku, instance_type))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    fn sample() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/azure/settings.json");
        let text = std::fs::read_to_string(path).expect("the sample");
        serde_json::from_str(&text).expect("JSON")
    }

    fn run(document: &Value) -> Result<String, String> {
        render(&document.to_string())
    }

    #[test]
    fn the_sample_renders_a_script_for_its_arm_size() {
        let encoded = run(&sample()).expect("the sample renders");
        let script = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("base64");
        let script = String::from_utf8(script).expect("text");
        assert!(script.starts_with("#!/bin/bash\n"));
        for expected in [
            "API_SERVER_NAME=demo-dns-5f3a1c2b.hcp.eastus.azmk8s.io\n",
            "kubernetes-node-linux-arm64.tar.gz\n",
            "TLS_BOOTSTRAP_TOKEN=\"abcdef.0123456789abcdef\"\n",
            "--image-gc-high-threshold=75 ",
            "--register-with-taints=team=payments:NoSchedule,karpenter.sh/unregistered:NoExecute ",
            "team=payments",
        ] {
            assert!(script.contains(expected), "{expected}");
        }
    }

    #[test]
    fn a_bad_field_is_named() {
        let cases: [(&str, Value, &str); 5] = [
            (
                "instanceType",
                Value::from("Standard_Nope"),
                "instanceType: ",
            ),
            ("clusterDNS", Value::from("ten"), "clusterDNS: "),
            (
                "kubernetesVersion",
                Value::from(131),
                "kubernetesVersion: not a string",
            ),
            ("nodeClaim", Value::from("claim"), "nodeClaim: "),
            ("LOCATON", Value::from("eastus"), "LOCATON: not a setting"),
        ];
        for (field, value, message) in cases {
            let mut document = sample();
            document[field] = value;
            let error = run(&document).expect_err(field);
            assert!(error.starts_with(message), "{error}");
        }
        let mut document = sample();
        document
            .as_object_mut()
            .expect("an object")
            .remove("VNET_SUBNET_ID");
        let error = run(&document).expect_err("a required setting");
        assert!(error.contains("VNET_SUBNET_ID"), "{error}");
        assert!(!error.contains("0123456789abcdef"), "{error}");
    }

    #[test]
    fn a_size_not_offered_or_a_bad_class_is_refused() {
        let mut document = sample();
        // In the catalog, but too small for AKS: the filters leave it out.
        document["instanceType"] = Value::from("Standard_B1s");
        let error = run(&document).expect_err("a restricted size");
        assert!(
            error.contains("is not offered to node class default in eastus"),
            "{error}"
        );
        let mut document = sample();
        document["nodeClass"]["spec"]["maxPods"] = Value::from(5000);
        let error = run(&document).expect_err("maxPods out of range");
        assert!(error.starts_with("nodeClass: "), "{error}");
    }
}
