//! The `settings.kubernetes` keys upstream models (its
//! `BottlerocketKubernetes`), in the order its encoder writes them, with the
//! TOML kind each must have.

/// The kind of TOML value a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    String,
    Integer,
    Boolean,
    Array,
    Table,
}

impl Kind {
    /// How an error names the kind.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Integer => "an integer",
            Kind::Boolean => "a boolean",
            Kind::Array => "an array",
            Kind::Table => "a table",
        }
    }
}

/// Every key Karpenter keeps under `settings.kubernetes`; others are
/// dropped, as upstream's typed settings drop them.
pub(crate) const KUBERNETES_KEYS: &[(&str, Kind)] = &[
    ("api-server", Kind::String),
    ("cloud-provider", Kind::String),
    ("cluster-certificate", Kind::String),
    ("cluster-name", Kind::String),
    ("cluster-dns-ip", Kind::String),
    ("credential-providers", Kind::Table),
    ("node-labels", Kind::Table),
    ("node-taints", Kind::Table),
    ("max-pods", Kind::Integer),
    ("static-pods", Kind::Table),
    ("eviction-hard", Kind::Table),
    ("eviction-soft", Kind::Table),
    ("eviction-soft-grace-period", Kind::Table),
    ("eviction-max-pod-grace-period", Kind::Integer),
    ("kube-reserved", Kind::Table),
    ("system-reserved", Kind::Table),
    ("allowed-unsafe-sysctls", Kind::Array),
    ("server-tls-bootstrap", Kind::Boolean),
    ("registry-qps", Kind::Integer),
    ("registry-burst", Kind::Integer),
    ("event-qps", Kind::Integer),
    ("event-burst", Kind::Integer),
    ("kube-api-qps", Kind::Integer),
    ("kube-api-burst", Kind::Integer),
    ("container-log-max-size", Kind::String),
    ("container-log-max-files", Kind::Integer),
    ("cpu-manager-policy", Kind::String),
    ("cpu-manager-policy-options", Kind::Array),
    ("cpu-manager-reconcile-period", Kind::String),
    ("memory-manager-policy", Kind::String),
    ("memory-manager-reserved-memory", Kind::Table),
    ("topology-manager-scope", Kind::String),
    ("topology-manager-policy", Kind::String),
    ("topology-manager-policy-options", Kind::Table),
    ("image-gc-high-threshold-percent", Kind::String),
    ("image-gc-low-threshold-percent", Kind::String),
    ("ids-per-pod", Kind::Integer),
    ("cpu-cfs-quota-enforced", Kind::Boolean),
    ("shutdown-grace-period", Kind::String),
    ("shutdown-grace-period-for-critical-pods", Kind::String),
    ("cluster-domain", Kind::String),
    ("seccomp-default", Kind::Boolean),
    ("pod-pids-limit", Kind::Integer),
    ("device-ownership-from-security-context", Kind::Boolean),
    ("single-process-oom-kill", Kind::Boolean),
    ("container-log-max-workers", Kind::Integer),
    ("container-log-monitor-interval", Kind::String),
    ("hostname-override-source", Kind::String),
    ("log-level", Kind::Integer),
];
