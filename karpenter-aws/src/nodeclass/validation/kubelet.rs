//! `spec.kubelet`: the semantic rules upstream's validation controller
//! checks on the open kubelet map (main), reported there as
//! `ValidationSucceeded=False`. The check of every other field against the
//! kubelet's own configuration type (unknown fields, wrong types) is not
//! made here.

use std::collections::BTreeMap;

use karpenter_core::api::GoDuration;
use karpenter_core::resources::parse_milli;

use super::super::kubelet::{KubeletConfiguration, MaxPods};
use super::Problems;

/// The signals an eviction map may be keyed by.
const EVICTION_SIGNALS: &[&str] = &[
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
];

/// The resources the kubelet can reserve.
const RESERVABLE: &[&str] = &["cpu", "memory", "ephemeral-storage", "pid"];

type StringMap = BTreeMap<String, String>;

pub(super) fn kubelet(problems: &mut Problems, kubelet: &KubeletConfiguration) {
    if kubelet.other.contains_key("registerWithTaints") {
        problems.rule(
            "kubelet.registerWithTaints",
            "can't be set, Karpenter sets it from the NodeClaim's taints so the node registers unschedulable until it's ready",
        );
    }
    // evictionMinimumReclaim is not typed (Karpenter does not read it), but
    // is checked as the other eviction maps are.
    let minimum_reclaim: Option<StringMap> = kubelet
        .other
        .get("evictionMinimumReclaim")
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    let maps = [
        ("evictionHard", kubelet.eviction_hard.as_ref()),
        ("evictionSoft", kubelet.eviction_soft.as_ref()),
        (
            "evictionSoftGracePeriod",
            kubelet.eviction_soft_grace_period.as_ref(),
        ),
        ("evictionMinimumReclaim", minimum_reclaim.as_ref()),
    ];
    for (name, map) in maps {
        if let Some(map) = map {
            eviction_map(problems, name, map);
        }
    }
    soft_pairs(problems, kubelet);
    for (name, map) in [
        ("kubeReserved", kubelet.kube_reserved.as_ref()),
        ("systemReserved", kubelet.system_reserved.as_ref()),
    ] {
        for (key, value) in map.into_iter().flatten() {
            if !RESERVABLE.contains(&key.as_str()) {
                problems.rule(
                    format!("kubelet.{name}"),
                    format!(
                        "{key:?} isn't a reservable resource, must be one of {}",
                        RESERVABLE.join(", ")
                    ),
                );
            }
            // A value may be a CEL expression (upstream main), so only a
            // negative sign is refused, not a value that is no quantity.
            if value.starts_with('-') {
                problems.rule(
                    format!("kubelet.{name}[{key}]"),
                    format!("{value:?} can't be a negative resource quantity"),
                );
            }
        }
    }
    numbers(problems, kubelet);
}

/// An eviction map's keys are signals; its values thresholds (a percentage
/// or a quantity), or for grace periods Go durations.
fn eviction_map(problems: &mut Problems, name: &str, map: &StringMap) {
    for (key, value) in map {
        if !EVICTION_SIGNALS.contains(&key.as_str()) {
            problems.rule(
                format!("kubelet.{name}"),
                format!(
                    "{key:?} isn't a valid eviction signal, must be one of {}",
                    EVICTION_SIGNALS.join(", ")
                ),
            );
        }
        let field = format!("kubelet.{name}[{key}]");
        if name == "evictionSoftGracePeriod" {
            if GoDuration::parse(value).is_err() {
                problems.rule(field, format!("{value:?} must be a non-negative duration"));
            }
            continue;
        }
        if let Some(percent) = value.strip_suffix('%') {
            let valid = percent
                .parse::<f64>()
                .is_ok_and(|p| (0.0..=100.0).contains(&p));
            if !valid {
                problems.rule(
                    field,
                    format!("{value:?} must be a percentage or a resource quantity"),
                );
            }
            continue;
        }
        match parse_milli(value) {
            Err(_) => problems.rule(
                field,
                format!("{value:?} must be a percentage or a resource quantity"),
            ),
            Ok(milli) if milli < 0 => {
                problems.rule(
                    field,
                    format!("{value:?} can't be a negative resource quantity"),
                );
            }
            Ok(_) => {}
        }
    }
}

/// Every soft threshold needs a grace period, and every grace period a soft
/// threshold (an absent map counts as empty).
fn soft_pairs(problems: &mut Problems, kubelet: &KubeletConfiguration) {
    let empty = StringMap::new();
    let soft = kubelet.eviction_soft.as_ref().unwrap_or(&empty);
    let grace = kubelet
        .eviction_soft_grace_period
        .as_ref()
        .unwrap_or(&empty);
    for signal in soft.keys().filter(|s| !grace.contains_key(*s)) {
        problems.rule(
            format!("kubelet.evictionSoft[{signal}]"),
            "has no matching evictionSoftGracePeriod",
        );
    }
    for signal in grace.keys().filter(|s| !soft.contains_key(*s)) {
        problems.rule(
            format!("kubelet.evictionSoftGracePeriod[{signal}]"),
            "has no matching evictionSoft",
        );
    }
}

/// Percentages within 0 to 100 with high above low; counts not negative.
fn numbers(problems: &mut Problems, kubelet: &KubeletConfiguration) {
    let high = kubelet.image_gc_high_threshold_percent;
    let low = kubelet.image_gc_low_threshold_percent;
    for (name, value) in [
        ("imageGCHighThresholdPercent", high),
        ("imageGCLowThresholdPercent", low),
    ] {
        if let Some(value) = value {
            problems.within(format!("kubelet.{name}"), value, 0, 100);
        }
    }
    let max_pods = kubelet.max_pods.as_ref().and_then(MaxPods::count);
    for (name, value) in [
        ("podsPerCore", kubelet.pods_per_core),
        (
            "evictionMaxPodGracePeriod",
            kubelet.eviction_max_pod_grace_period,
        ),
        ("maxPods", max_pods),
    ] {
        if let Some(value) = value.filter(|v| *v < 0) {
            problems.rule(
                format!("kubelet.{name}"),
                format!("{value} can't be negative"),
            );
        }
    }
    if let (Some(high), Some(low)) = (high, low)
        && high <= low
    {
        problems.rule(
            "kubelet",
            format!("imageGCHighThresholdPercent ({high}) must be greater than imageGCLowThresholdPercent ({low})"),
        );
    }
}
