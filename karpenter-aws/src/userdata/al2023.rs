//! AL2023: the class's parts, then Karpenter's `NodeConfig` for `nodeadm`
//! (upstream's `bootstrap.Nodeadm`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::al2::SHELL;
use super::args::node_labels_arg;
use super::mime::{self, Part};
use super::yaml::{looks_like_mapping, to_yaml};
use super::{Resolved, UserDataError, custom_parts};

/// The content type `nodeadm` reads a `NodeConfig` part from.
pub(super) const NODE_CONFIG: &str = "application/node.eks.aws";

pub(super) fn user_data(resolved: &Resolved<'_>) -> Result<String, UserDataError> {
    // The generated config is checked first, as upstream does, so a
    // missing CIDR is reported before the class's user data.
    let node_config = node_config_yaml(resolved)?;
    let mut parts = match resolved.custom() {
        Some(data) if mime::looks_like_mime(data) => custom_parts(data)?
            .into_iter()
            // Upstream keeps only each part's content type.
            .map(|part| {
                let content_type = part.content_type().to_owned();
                Part::new(&content_type, part.content)
            })
            .collect(),
        Some(data) if looks_like_mapping(data) => vec![Part::new(NODE_CONFIG, data)],
        Some(data) => vec![Part::new(SHELL, data)],
        None => Vec::new(),
    };
    // Last, so that nodeadm's merge lets Karpenter's fields win.
    parts.push(Part::new(NODE_CONFIG, node_config));
    Ok(mime::serialize(&parts))
}

/// Karpenter's `NodeConfig`: the cluster's details, the kubelet's
/// configuration with the taints to register with, and the node labels.
fn node_config_yaml(resolved: &Resolved<'_>) -> Result<String, UserDataError> {
    let input = resolved.input;
    let cidr = input
        .cluster_cidr
        .as_deref()
        .filter(|cidr| !cidr.is_empty())
        .ok_or(UserDataError::MissingClusterCidr)?;
    let mut cluster = json!({
        "name": input.cluster_name,
        "apiServerEndpoint": input.cluster_endpoint,
        "cidr": cidr,
    });
    if let Some(ca) = input.ca_bundle.as_deref().filter(|ca| !ca.is_empty()) {
        // Decoded and re-encoded as upstream's []byte field is: a bundle
        // that is not base64 fails here rather than on the node.
        let bytes = STANDARD
            .decode(ca)
            .map_err(|source| UserDataError::InvalidCaBundle { source })?;
        cluster["certificateAuthority"] = Value::String(STANDARD.encode(bytes));
    }
    let local_storage = if resolved.raid0() {
        json!({"strategy": "RAID0"})
    } else {
        json!({})
    };
    let mut kubelet = json!({"config": kubelet_config(resolved)});
    if let Some(labels) = node_labels_arg(&input.labels) {
        kubelet["flags"] = json!([labels]);
    }
    let config = json!({
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "metadata": {},
        "spec": {
            "cluster": cluster,
            "containerd": {},
            "instance": {"localStorage": local_storage},
            "kubelet": kubelet,
        },
    });
    Ok(format!(
        "# Karpenter Generated NodeConfig\n{}",
        to_yaml(&config)
    ))
}

/// The class's kubelet configuration as written (after defaulting) plus
/// `registerWithTaints`.
fn kubelet_config(resolved: &Resolved<'_>) -> Value {
    let mut config = resolved
        .kubelet
        .as_ref()
        .and_then(|k| serde_json::to_value(k).ok())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    let taints: Vec<Value> = resolved
        .taints
        .iter()
        .map(|taint| {
            let mut t = json!({"key": taint.key, "effect": taint.effect});
            if let Some(value) = taint.value.as_deref().filter(|v| !v.is_empty()) {
                t["value"] = Value::String(value.to_owned());
            }
            if let Some(added) = &taint.time_added {
                t["timeAdded"] = serde_json::to_value(added).unwrap_or(Value::Null);
            }
            t
        })
        .collect();
    config.insert("registerWithTaints".to_owned(), Value::Array(taints));
    Value::Object(config)
}
