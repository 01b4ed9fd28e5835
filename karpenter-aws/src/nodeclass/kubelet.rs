//! The kubelet configuration of an `EC2NodeClass` (`spec.kubelet`).
//!
//! Upstream's main branch made this an open map of any kubelet configuration
//! field; the fields Karpenter reads for scheduling and bootstrap are typed
//! here, and the rest are kept as written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::other_fields::OtherFields;

/// The kubelet's configuration on an EC2NodeClass's nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfiguration {
    /// DNS servers pods use, instead of the cluster's.
    #[serde(
        default,
        rename = "clusterDNS",
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_dns: Option<Vec<String>>,
    /// Pods per node: a count, or a CEL expression evaluated per instance
    /// type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<MaxPods>,
    /// Pods per vCPU (0 or more; 0 means no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods_per_core: Option<i64>,
    /// Resources reserved for the OS (`cpu`, `memory`,
    /// `ephemeral-storage`, `pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_reserved: Option<BTreeMap<String, String>>,
    /// Resources reserved for Kubernetes daemons (same keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_reserved: Option<BTreeMap<String, String>>,
    /// Hard eviction thresholds, by eviction signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_hard: Option<BTreeMap<String, String>>,
    /// Soft eviction thresholds, by eviction signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft: Option<BTreeMap<String, String>>,
    /// Grace periods of the soft thresholds (Go durations), by signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft_grace_period: Option<BTreeMap<String, String>>,
    /// The longest grace period, in seconds, given to a pod evicted on a soft
    /// threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_max_pod_grace_period: Option<i64>,
    /// Disk usage, in percent, above which image garbage collection always
    /// runs.
    #[serde(
        default,
        rename = "imageGCHighThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_high_threshold_percent: Option<i64>,
    /// Disk usage, in percent, below which image garbage collection never
    /// runs.
    #[serde(
        default,
        rename = "imageGCLowThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_low_threshold_percent: Option<i64>,
    /// Whether CPU CFS quotas enforce container CPU limits.
    #[serde(
        default,
        rename = "cpuCFSQuota",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_cfs_quota: Option<bool>,
    /// Every other kubelet configuration field, passed through as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// `spec.kubelet.maxPods`: a number, or (upstream main) a CEL expression over
/// the instance type (`vcpus`, `memory_mib`, `default_enis`, `ips_per_eni`,
/// `max_pods`, `instance_type`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MaxPods {
    /// A fixed count.
    Count(i64),
    /// An expression evaluated per instance type.
    Expression(String),
}

impl MaxPods {
    /// The count, when this is not an expression.
    pub fn count(&self) -> Option<i64> {
        match self {
            MaxPods::Count(count) => Some(*count),
            MaxPods::Expression(_) => None,
        }
    }
}
