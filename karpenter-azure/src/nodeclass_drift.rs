//! Whether an AKS node no longer matches its node class, as upstream's
//! `IsDrifted` (`pkg/cloudprovider/drift.go`) decides, first reason first:
//! the node class's hash changed (tags aside), the node runs another
//! Kubernetes version than the class's, or its image is no longer one the
//! class lists.

use std::fmt;

use k8s_openapi::api::core::v1::Node;
use karpenter_core::api::{NodeClaim, fnv1a64};

use crate::nodeclass::AKSNodeClass;

/// The annotation with the node class's hash, on the class and its claims.
pub(crate) const NODE_CLASS_HASH_ANNOTATION: &str = "karpenter.azure.com/aksnodeclass-hash";
/// The annotation with the version of the hash's recipe.
pub(crate) const NODE_CLASS_HASH_VERSION_ANNOTATION: &str =
    "karpenter.azure.com/aksnodeclass-hash-version";
/// The recipe version this crate's hash follows.
pub(crate) const NODE_CLASS_HASH_VERSION: &str = "v3";

/// Why a node drifted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriftReason {
    /// The node class's spec changed since the node launched.
    NodeClass,
    /// The node runs another Kubernetes version than the class says.
    KubernetesVersion {
        /// The node's.
        node: String,
        /// The class's.
        class: String,
    },
    /// The node's image is not among the class's.
    Image {
        /// The node's image.
        image: String,
    },
}

impl DriftReason {
    /// Upstream's reason name (`NodeClassDrift`, `K8sVersionDrift`, `ImageDrift`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::NodeClass => "NodeClassDrift",
            Self::KubernetesVersion { .. } => "K8sVersionDrift",
            Self::Image { .. } => "ImageDrift",
        }
    }
}

impl fmt::Display for DriftReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NodeClass => f.write_str("NodeClassDrift: the AKSNodeClass changed"),
            Self::KubernetesVersion { node, class } => {
                write!(
                    f,
                    "K8sVersionDrift: the node runs {node}, the AKSNodeClass says {class}"
                )
            }
            Self::Image { image } => write!(
                f,
                "ImageDrift: image {image} is no longer the AKSNodeClass's"
            ),
        }
    }
}

/// Drops what the hash ignores: null, `false`, `0`, empty strings, lists and
/// maps (unset and zero are the same spec), and sorts lists (order does not
/// matter).
fn canonical(value: &serde_json::Value) -> Option<serde_json::Value> {
    use serde_json::Value;
    match value {
        Value::Null | Value::Bool(false) => None,
        Value::Number(n) if n.as_f64() == Some(0.0) => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let mut kept: Vec<Value> = items.iter().filter_map(canonical).collect();
            kept.sort_by_key(|v| v.to_string());
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), canonical(v)?)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

impl AKSNodeClass {
    /// The hash of the spec that drift compares: zero values and tags left
    /// out (tags are updated in place, not by replacing nodes), lists as sets.
    pub fn hash(&self) -> String {
        let mut spec = serde_json::to_value(&self.spec).unwrap_or_default();
        if let Some(map) = spec.as_object_mut() {
            map.remove("tags");
        }
        let text = canonical(&spec).map(|v| v.to_string()).unwrap_or_default();
        fnv1a64(text.as_bytes()).to_string()
    }
}

fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// The first reason `claim` (with its `node`, once registered) drifted from
/// `class`, if any, as upstream's `IsDrifted` (`pkg/cloudprovider/drift.go`)
/// decides, first reason first: the node class's hash changed (tags aside),
/// the node runs another Kubernetes version than the class's, or its image is
/// no longer one the class lists.
pub fn is_drifted(
    class: &AKSNodeClass,
    claim: &NodeClaim,
    node: Option<&Node>,
) -> Option<DriftReason> {
    let versions = (
        annotation(&class.metadata, NODE_CLASS_HASH_VERSION_ANNOTATION),
        annotation(&claim.metadata, NODE_CLASS_HASH_VERSION_ANNOTATION),
    );
    let hashes = (
        annotation(&class.metadata, NODE_CLASS_HASH_ANNOTATION),
        annotation(&claim.metadata, NODE_CLASS_HASH_ANNOTATION),
    );
    if let ((Some(a), Some(b)), (Some(class_hash), Some(claim_hash))) = (versions, hashes)
        && a == b
        && class_hash != claim_hash
    {
        return Some(DriftReason::NodeClass);
    }
    let status = class.status.as_ref();
    let wanted = status.and_then(|s| s.kubernetes_version.as_deref());
    let running = node
        .and_then(|n| n.status.as_ref()?.node_info.as_ref())
        .map(|info| info.kubelet_version.as_str());
    if let (Some(wanted), Some(running)) = (wanted, running) {
        let (wanted, running) = (
            wanted.trim_start_matches('v'),
            running.trim_start_matches('v'),
        );
        if !wanted.is_empty() && !running.is_empty() && wanted != running {
            return Some(DriftReason::KubernetesVersion {
                node: running.to_owned(),
                class: wanted.to_owned(),
            });
        }
    }
    let image = claim.status.as_ref().and_then(|s| s.image_id.as_deref());
    let images = status.and_then(|s| s.images.as_deref());
    if let (Some(image), Some(images)) = (image, images)
        && !images.is_empty()
        && !images.iter().any(|i| i.id == image)
    {
        return Some(DriftReason::Image {
            image: image.to_owned(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn class(
        spec: serde_json::Value,
        annotations: serde_json::Value,
        status: serde_json::Value,
    ) -> AKSNodeClass {
        serde_json::from_value(json!({
            "metadata": {"name": "default", "annotations": annotations},
            "spec": spec,
            "status": status,
        }))
        .expect("an AKSNodeClass")
    }

    fn claim(annotations: serde_json::Value, image: &str) -> NodeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": "c", "annotations": annotations},
            "spec": {"requirements": []},
            "status": {"imageID": image},
        }))
        .expect("a NodeClaim")
    }

    fn node(version: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": "n"},
            "status": {"nodeInfo": {
                "kubeletVersion": version, "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "",
                "kernelVersion": "", "kubeProxyVersion": "", "machineID": "", "operatingSystem": "linux",
                "osImage": "", "systemUUID": "",
            }},
        }))
        .expect("a Node")
    }

    #[test]
    fn the_hash_ignores_tags_zero_values_and_list_order() {
        let a = class(
            json!({"imageFamily": "Ubuntu", "tags": {"team": "a"}, "osDiskSizeGB": 128}),
            json!({}),
            json!({}),
        );
        let b = class(
            json!({"imageFamily": "Ubuntu", "tags": {"team": "b"}, "osDiskSizeGB": 128, "maxPods": 0}),
            json!({}),
            json!({}),
        );
        assert_eq!(a.hash(), b.hash());
        let c = class(
            json!({"imageFamily": "AzureLinux", "osDiskSizeGB": 128}),
            json!({}),
            json!({}),
        );
        assert_ne!(a.hash(), c.hash());
        let d = class(
            json!({"kubelet": {"allowedUnsafeSysctls": ["a", "b"]}}),
            json!({}),
            json!({}),
        );
        let e = class(
            json!({"kubelet": {"allowedUnsafeSysctls": ["b", "a"]}}),
            json!({}),
            json!({}),
        );
        assert_eq!(d.hash(), e.hash());
    }

    #[test]
    fn drift_reasons_come_in_upstreams_order() {
        let images =
            json!({"kubernetesVersion": "1.33.2", "images": [{"id": "/images/ubuntu/versions/2"}]});
        let hashed = |hash: &str| json!({NODE_CLASS_HASH_ANNOTATION: hash, NODE_CLASS_HASH_VERSION_ANNOTATION: "v3"});
        let current = class(json!({}), hashed("1"), images.clone());
        // Nothing changed.
        assert_eq!(
            is_drifted(
                &current,
                &claim(hashed("1"), "/images/ubuntu/versions/2"),
                Some(&node("v1.33.2"))
            ),
            None
        );
        // The class changed: first.
        let stale = claim(hashed("0"), "/images/ubuntu/versions/1");
        assert_eq!(
            is_drifted(&current, &stale, Some(&node("v1.32.0"))),
            Some(DriftReason::NodeClass)
        );
        // Another hash recipe: not compared.
        let other_recipe = claim(
            json!({NODE_CLASS_HASH_ANNOTATION: "0", NODE_CLASS_HASH_VERSION_ANNOTATION: "v2"}),
            "/images/ubuntu/versions/2",
        );
        assert_eq!(
            is_drifted(&current, &other_recipe, Some(&node("1.33.2"))),
            None
        );
        // The Kubernetes version, then the image.
        let old_image = claim(hashed("1"), "/images/ubuntu/versions/1");
        assert_eq!(
            is_drifted(&current, &old_image, Some(&node("v1.32.0"))).map(|r| r.name()),
            Some("K8sVersionDrift")
        );
        assert_eq!(
            is_drifted(&current, &old_image, Some(&node("v1.33.2"))).map(|r| r.name()),
            Some("ImageDrift")
        );
        assert_eq!(
            is_drifted(&current, &old_image, None).map(|r| r.name()),
            Some("ImageDrift")
        );
    }
}
