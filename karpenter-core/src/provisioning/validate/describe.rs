//! How violations describe taints and resource amounts.

use k8s_openapi::api::core::v1::Taint;

use crate::resources::{self, ResourceList};

pub(super) fn describe_taint(taint: &Taint) -> String {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(value) => format!("{}={}:{}", taint.key, value, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}

/// `cpu=1500m, memory=2Gi, pods=1`.
pub(super) fn describe(list: &ResourceList) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|(name, milli)| format!("{name}={}", resources::format_milli(name, milli)))
        .collect();
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join(", ")
    }
}

/// The resources `needed` exceeds `available` in, with both amounts.
pub(super) fn shortfall(needed: &ResourceList, available: &ResourceList) -> String {
    let parts: Vec<String> = needed
        .exceeding(available)
        .map(|name| {
            format!(
                "{name} needs {} of {}",
                resources::format_milli(name, needed.get(name)),
                resources::format_milli(name, available.get(name))
            )
        })
        .collect();
    parts.join(", ")
}
