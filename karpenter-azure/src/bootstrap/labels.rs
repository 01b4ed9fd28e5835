// Replaced by the full label module.
//! The node's labels and the taints it registers with, as far as the custom
//! data needs them: the claim's labels, and its taints and startup taints
//! plus the taint that keeps pods off until Karpenter registers the node.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::UNREGISTERED_TAINT_KEY;

use crate::nodeclass::AKSNodeClass;
use crate::settings::AksSettings;

/// The labels the kubelet registers the node with (`KUBELET_NODE_LABELS`):
/// for now the claim's own labels.
pub(crate) fn kubelet_node_labels(
    _settings: &AksSettings,
    _kubernetes_version: &str,
    _class: &AKSNodeClass,
    _instance_type: &InstanceType,
    claim: &NodeClaim,
) -> BTreeMap<String, String> {
    claim.metadata.labels.clone().unwrap_or_default()
}

/// A taint as the kubelet's `--register-with-taints` reads it
/// (`key=value:Effect`, `key:Effect`).
fn taint_text(taint: &Taint) -> String {
    let value = taint.value.as_deref().unwrap_or_default();
    match (value.is_empty(), taint.effect.is_empty()) {
        (true, true) => taint.key.clone(),
        (true, false) => format!("{}:{}", taint.key, taint.effect),
        (false, true) => format!("{}={value}:", taint.key),
        (false, false) => format!("{}={value}:{}", taint.key, taint.effect),
    }
}

/// The taints the node registers with: the claim's taints and startup
/// taints, then `karpenter.sh/unregistered:NoExecute` unless already there.
pub(crate) fn register_with_taints(claim: &NodeClaim) -> Vec<String> {
    let taints: Vec<&Taint> = [&claim.spec.taints, &claim.spec.startup_taints]
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    let unregistered = taints
        .iter()
        .any(|t| t.key == UNREGISTERED_TAINT_KEY && t.effect == "NoExecute");
    let mut texts: Vec<String> = taints.into_iter().map(taint_text).collect();
    if !unregistered {
        texts.push(format!("{UNREGISTERED_TAINT_KEY}:NoExecute"));
    }
    texts
}
