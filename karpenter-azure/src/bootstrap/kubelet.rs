//! The kubelet's flags (`KUBELET_FLAGS`): a fixed base, adjusted by
//! Kubernetes version, then overridden by what the node needs (max pods,
//! reservations from the instance type's overhead, the eviction threshold,
//! cluster DNS, the node class's kubelet settings) and the taints it
//! registers with. Upstream renders them from a Go map, in random order;
//! here they are sorted by flag name.

use std::collections::BTreeMap;
use std::time::Duration;

use karpenter_core::resources::format_milli;
use serde::Deserialize;

use crate::instancetype::EVICTION_THRESHOLD_MIB;
use crate::nodeclass::AKSNodeClass;

use super::version::KubeVersion;
use super::{BootstrapError, CustomDataInputs, labels};

/// The kubelet's flags, by name (`--max-pods`), each with its value.
pub(crate) type Flags = BTreeMap<String, String>;

/// The flags every node starts from, whatever its version.
const BASE_FLAGS: [(&str, &str); 29] = [
    ("--address", "0.0.0.0"),
    ("--anonymous-auth", "false"),
    ("--authentication-token-webhook", "true"),
    ("--authorization-mode", "Webhook"),
    ("--cgroups-per-qos", "true"),
    ("--client-ca-file", "/etc/kubernetes/certs/ca.crt"),
    ("--cloud-config", "/etc/kubernetes/azure.json"),
    ("--cloud-provider", "external"),
    ("--cluster-dns", "10.0.0.10"),
    ("--cluster-domain", "cluster.local"),
    ("--enforce-node-allocatable", "pods"),
    ("--event-qps", "0"),
    (
        "--eviction-hard",
        "memory.available<750Mi,nodefs.available<10%,nodefs.inodesFree<5%",
    ),
    ("--image-gc-high-threshold", "85"),
    ("--image-gc-low-threshold", "80"),
    ("--kubeconfig", "/var/lib/kubelet/kubeconfig"),
    ("--max-pods", "110"),
    ("--node-status-update-frequency", "10s"),
    (
        "--pod-infra-container-image",
        "mcr.microsoft.com/oss/kubernetes/pause:3.6",
    ),
    ("--pod-manifest-path", "/etc/kubernetes/manifests"),
    ("--pod-max-pids", "-1"),
    ("--protect-kernel-defaults", "true"),
    ("--read-only-port", "0"),
    ("--resolv-conf", "/run/systemd/resolve/resolv.conf"),
    ("--rotate-certificates", "true"),
    ("--streaming-connection-idle-timeout", "4h"),
    ("--tls-cert-file", "/etc/kubernetes/certs/kubeletserver.crt"),
    (
        "--tls-cipher-suites",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,\
         TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,\
         TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,\
         TLS_RSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "--tls-private-key-file",
        "/etc/kubernetes/certs/kubeletserver.key",
    ),
];

/// The base flags for `version`: flags the kubelet dropped are left out,
/// and from 1.30 the out-of-tree ACR credential provider replaces the
/// in-tree one.
pub(crate) fn base_flags(version: KubeVersion) -> Flags {
    let mut flags: Flags = BASE_FLAGS
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let mut set = |k: &str, v: &str| flags.insert(k.to_owned(), v.to_owned());
    if version.minor < 31 {
        set("--keep-terminated-pod-volumes", "false");
    }
    if version.minor >= 30 {
        set(
            "--image-credential-provider-config",
            "/var/lib/kubelet/credential-provider-config.yaml",
        );
        set(
            "--image-credential-provider-bin-dir",
            "/var/lib/kubelet/credential-provider",
        );
    } else {
        set(
            "--feature-gates",
            "DisableKubeletCloudCredentialProviders=false",
        );
        set(
            "--azure-container-registry-config",
            "/etc/kubernetes/azure.json",
        );
    }
    if version.minor >= 34 {
        flags.remove("--cloud-config");
    }
    if version.minor >= 35 {
        flags.remove("--pod-infra-container-image");
    }
    flags
}

/// The node class's `spec.kubelet`, under upstream's CRD names. The fields
/// the custom data does not render (`cpuCFSQuotaPeriod`, `failSwapOn`) are
/// accepted and ignored.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeClassKubelet {
    #[serde(rename = "cpuManagerPolicy")]
    pub(crate) cpu_manager_policy: Option<String>,
    #[serde(rename = "cpuCFSQuota")]
    pub(crate) cpu_cfs_quota: Option<bool>,
    #[serde(rename = "imageGCHighThresholdPercent")]
    pub(crate) image_gc_high_threshold_percent: Option<i32>,
    #[serde(rename = "imageGCLowThresholdPercent")]
    pub(crate) image_gc_low_threshold_percent: Option<i32>,
    pub(crate) topology_manager_policy: Option<String>,
    #[serde(default)]
    pub(crate) allowed_unsafe_sysctls: Vec<String>,
    pub(crate) container_log_max_size: Option<String>,
    pub(crate) container_log_max_files: Option<i32>,
    pub(crate) pod_pids_limit: Option<i64>,
}

impl NodeClassKubelet {
    /// The node class's kubelet settings; none when it has none.
    pub(crate) fn of(class: &AKSNodeClass) -> Result<NodeClassKubelet, BootstrapError> {
        let Some(value) = class.spec.other.get("kubelet") else {
            return Ok(NodeClassKubelet::default());
        };
        NodeClassKubelet::deserialize(value).map_err(|e| BootstrapError::Kubelet {
            class: class.metadata.name.clone().unwrap_or_default(),
            message: e.to_string(),
        })
    }
}

/// What the kubelet is configured with beyond the base flags (upstream's
/// `bootstrap.KubeletConfiguration`): the node class's settings plus what
/// the provider computes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct KubeletConfig {
    pub(crate) node_class: NodeClassKubelet,
    pub(crate) max_pods: u32,
    pub(crate) system_reserved: BTreeMap<String, String>,
    pub(crate) kube_reserved: BTreeMap<String, String>,
    pub(crate) eviction_hard: BTreeMap<String, String>,
    pub(crate) eviction_soft: BTreeMap<String, String>,
    pub(crate) eviction_soft_grace_period: BTreeMap<String, Duration>,
    pub(crate) eviction_max_pod_grace_period: Option<i32>,
    pub(crate) cluster_dns: Option<String>,
}

/// `k<sep>v` pairs joined by commas, by key; `None` when there are none
/// (the flag is then left as the base has it).
fn joined<V: ToString>(map: &BTreeMap<String, V>, separator: &str) -> Option<String> {
    (!map.is_empty()).then(|| {
        map.iter()
            .map(|(k, v)| format!("{k}{separator}{}", v.to_string()))
            .collect::<Vec<_>>()
            .join(",")
    })
}

impl KubeletConfig {
    /// The flags this configuration sets, overriding the base's.
    pub(crate) fn flags(&self) -> Flags {
        let mut flags = Flags::new();
        let mut set = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                flags.insert(k.to_owned(), v);
            }
        };
        set("--max-pods", Some(self.max_pods.to_string()));
        set("--system-reserved", joined(&self.system_reserved, "="));
        set("--kube-reserved", joined(&self.kube_reserved, "="));
        set("--eviction-hard", joined(&self.eviction_hard, "<"));
        set("--eviction-soft", joined(&self.eviction_soft, "<"));
        let grace: BTreeMap<String, String> = self
            .eviction_soft_grace_period
            .iter()
            .map(|(k, d)| (k.clone(), go_duration(*d)))
            .collect();
        set("--eviction-soft-grace-period", joined(&grace, "="));
        let number = |n: Option<i32>| n.map(|n| n.to_string());
        set(
            "--eviction-max-pod-grace-period",
            number(self.eviction_max_pod_grace_period),
        );
        let class = &self.node_class;
        let text = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        set(
            "--image-gc-high-threshold",
            number(class.image_gc_high_threshold_percent),
        );
        set(
            "--image-gc-low-threshold",
            number(class.image_gc_low_threshold_percent),
        );
        set(
            "--cpu-cfs-quota",
            class.cpu_cfs_quota.map(|b| b.to_string()),
        );
        set("--cpu-manager-policy", text(&class.cpu_manager_policy));
        set(
            "--topology-manager-policy",
            text(&class.topology_manager_policy),
        );
        set(
            "--container-log-max-size",
            text(&class.container_log_max_size),
        );
        set(
            "--container-log-max-files",
            number(class.container_log_max_files),
        );
        set(
            "--pod-max-pids",
            class.pod_pids_limit.map(|n| n.to_string()),
        );
        set(
            "--allowed-unsafe-sysctls",
            (!class.allowed_unsafe_sysctls.is_empty())
                .then(|| class.allowed_unsafe_sysctls.join(",")),
        );
        set("--cluster-dns", self.cluster_dns.clone());
        flags
    }

    /// The configuration a node of `inputs` gets, as upstream prepares it:
    /// the class's `maxPods` else the network's default, kube-reserved from
    /// the instance type's overhead less the eviction threshold (AKS
    /// reserves nothing for the system), the hard eviction threshold alone.
    pub(crate) fn for_node(inputs: &CustomDataInputs<'_>) -> Result<KubeletConfig, BootstrapError> {
        // The class is validated first, so `maxPods` is within 10..=250.
        let max_pods = inputs.node_class.spec.max_pods.map_or_else(
            || inputs.settings.network_options().default_max_pods(),
            |p| u32::try_from(p).unwrap_or_default(),
        );
        let overhead = &inputs.instance_type.overhead;
        let eviction_milli = EVICTION_THRESHOLD_MIB * (1 << 20) * 1000;
        let kube_memory = (overhead.get("memory") - eviction_milli).max(0);
        let pairs = |cpu: String, memory: String| {
            BTreeMap::from([("cpu".to_owned(), cpu), ("memory".to_owned(), memory)])
        };
        Ok(KubeletConfig {
            node_class: NodeClassKubelet::of(inputs.node_class)?,
            max_pods,
            system_reserved: pairs("0".to_owned(), "0".to_owned()),
            kube_reserved: pairs(
                format_milli("cpu", overhead.get("cpu")),
                format_milli("memory", kube_memory),
            ),
            eviction_hard: BTreeMap::from([(
                "memory.available".to_owned(),
                format_milli("memory", eviction_milli),
            )]),
            cluster_dns: Some(inputs.cluster_dns.to_string()),
            ..KubeletConfig::default()
        })
    }
}

/// A duration as Go's `time.Duration.String` writes it (`1m30s`, `2h0m0s`,
/// `500ms`), as the kubelet reads it.
pub(crate) fn go_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", fraction(nanos, 1_000));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", fraction(nanos, 1_000_000));
    }
    let seconds = duration.as_secs();
    let (hours, minutes) = (seconds / 3600, (seconds / 60) % 60);
    let rest = fraction(
        u128::from(seconds % 60) * 1_000_000_000 + u128::from(duration.subsec_nanos()),
        1_000_000_000,
    );
    match (hours, minutes) {
        (0, 0) => format!("{rest}s"),
        (0, m) => format!("{m}m{rest}s"),
        (h, m) => format!("{h}h{m}m{rest}s"),
    }
}

/// `value / unit` in decimal, without trailing zeros (`1.5`, `2`).
fn fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let rest = value % unit;
    if rest == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Every flag of the node: the base for its version, the taints it
/// registers with, then the configuration's overrides.
pub(crate) fn kubelet_flags(
    inputs: &CustomDataInputs<'_>,
    version: KubeVersion,
) -> Result<Flags, BootstrapError> {
    let mut flags = base_flags(version);
    let taints = labels::register_with_taints(inputs.claim);
    if !taints.is_empty() {
        flags.insert("--register-with-taints".to_owned(), taints.join(","));
    }
    flags.extend(KubeletConfig::for_node(inputs)?.flags());
    Ok(flags)
}

/// The flags as `KUBELET_FLAGS` holds them: `--k=v`, space-separated.
pub(crate) fn render_flags(flags: &Flags) -> String {
    flags
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}
