//! The kubelet flags Karpenter passes on AL2 (`--kubelet-extra-args`) and,
//! for node labels, on AL2023 (`kubelet.flags`), spelled as upstream spells
//! them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;

use super::duration::normalise;
use crate::nodeclass::KubeletConfiguration;

/// `s` in double quotes with Go's `%q` escapes, as upstream formats flag
/// values (the kubelet's flag parser reads them back).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let code = u32::from(c);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else {
                    out.push_str(&format!("\\u{code:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A taint as Kubernetes prints it: `key=value:effect`, the value and
/// effect parts left out when empty.
pub(crate) fn taint_string(taint: &Taint) -> String {
    let value = taint.value.as_deref().unwrap_or_default();
    match (value.is_empty(), taint.effect.is_empty()) {
        (true, true) => taint.key.clone(),
        (false, true) => format!("{}={value}:", taint.key),
        (true, false) => format!("{}:{}", taint.key, taint.effect),
        (false, false) => format!("{}={value}:{}", taint.key, taint.effect),
    }
}

/// `--node-labels="k=v,..."` in key order, or `None` without labels.
pub(crate) fn node_labels_arg(labels: &BTreeMap<String, String>) -> Option<String> {
    if labels.is_empty() {
        return None;
    }
    let joined = labels
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(",");
    Some(format!("--node-labels={}", go_quote(&joined)))
}

/// `--register-with-taints="..."`, present even without taints as upstream
/// writes it.
pub(crate) fn taints_arg(taints: &[Taint]) -> String {
    let joined = taints
        .iter()
        .map(taint_string)
        .collect::<Vec<_>>()
        .join(",");
    format!("--register-with-taints={}", go_quote(&joined))
}

/// `--name="k<sep>v,..."` in key order, or `None` for an empty map. Upstream
/// walks a Go map (random order); sorting keeps our output deterministic.
fn joined_map_arg(
    name: &str,
    map: Option<&BTreeMap<String, String>>,
    separator: &str,
) -> Option<String> {
    let map = map.filter(|map| !map.is_empty())?;
    let joined = map
        .iter()
        .map(|(key, value)| format!("{key}{separator}{value}"))
        .collect::<Vec<_>>()
        .join(",");
    Some(format!("{name}={}", go_quote(&joined)))
}

/// The kubelet's extra arguments on AL2, in upstream's order: labels,
/// taints, then the kubelet configuration's fields.
pub(crate) fn kubelet_extra_args(
    labels: &BTreeMap<String, String>,
    taints: &[Taint],
    kubelet: Option<&KubeletConfiguration>,
) -> Vec<String> {
    let mut args: Vec<String> = node_labels_arg(labels).into_iter().collect();
    args.push(taints_arg(taints));
    let Some(kubelet) = kubelet else {
        return args;
    };
    let numeric = [
        (
            "--max-pods",
            kubelet.max_pods.as_ref().and_then(|m| m.count()),
        ),
        ("--pods-per-core", kubelet.pods_per_core),
    ];
    args.extend(
        numeric
            .iter()
            .filter_map(|(name, value)| value.map(|v| format!("{name}={v}"))),
    );
    // Upstream prints the grace periods back from parsed durations.
    let grace: Option<BTreeMap<String, String>> =
        kubelet.eviction_soft_grace_period.as_ref().map(|periods| {
            periods
                .iter()
                .map(|(signal, period)| {
                    let printed = normalise(period).unwrap_or_else(|| period.clone());
                    (signal.clone(), printed)
                })
                .collect()
        });
    let maps = [
        ("--system-reserved", kubelet.system_reserved.as_ref(), "="),
        ("--kube-reserved", kubelet.kube_reserved.as_ref(), "="),
        ("--eviction-hard", kubelet.eviction_hard.as_ref(), "<"),
        ("--eviction-soft", kubelet.eviction_soft.as_ref(), "<"),
        ("--eviction-soft-grace-period", grace.as_ref(), "="),
    ];
    args.extend(
        maps.iter()
            .filter_map(|(name, map, sep)| joined_map_arg(name, *map, sep)),
    );
    let tail = [
        (
            "--eviction-max-pod-grace-period",
            kubelet.eviction_max_pod_grace_period,
        ),
        (
            "--image-gc-high-threshold",
            kubelet.image_gc_high_threshold_percent,
        ),
        (
            "--image-gc-low-threshold",
            kubelet.image_gc_low_threshold_percent,
        ),
    ];
    args.extend(
        tail.iter()
            .filter_map(|(name, value)| value.map(|v| format!("{name}={v}"))),
    );
    if let Some(quota) = kubelet.cpu_cfs_quota {
        args.push(format!("--cpu-cfs-quota={quota}"));
    }
    args
}
