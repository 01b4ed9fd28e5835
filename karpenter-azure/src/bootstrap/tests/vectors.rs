//! Upstream's unit tables: download URLs by version and architecture, the
//! kubelet configuration's flags.

use std::collections::BTreeMap;
use std::time::Duration;

use super::MIRROR;
use crate::bootstrap::kubelet::{KubeletConfig, NodeClassKubelet, go_duration};
use crate::bootstrap::urls::{CpuArch, credential_provider_url, kube_binary_url};
use crate::bootstrap::version::KubeVersion;

#[test]
fn kube_binary_url_follows_upstreams_table() {
    let table = [
        ("1.24.5", true),
        ("1.25.2", true),
        ("1.26.0", true),
        ("1.27.1", true),
        ("1.33.7", true),
        ("1.34.0", false),
        ("1.35.5", false),
    ];
    for (version, has_url) in table {
        let parsed = KubeVersion::parse(version).expect("a version");
        let expected = if has_url {
            format!("{MIRROR}/kubernetes/v{version}/binaries/kubernetes-node-linux-amd64.tar.gz")
        } else {
            String::new()
        };
        assert_eq!(
            kube_binary_url(version, parsed, CpuArch::Amd64),
            expected,
            "{version}"
        );
    }
}

#[test]
fn credential_provider_url_follows_upstreams_table() {
    let url = |release: &str, arch: &str| {
        Some(format!(
            "{MIRROR}/cloud-provider-azure/v{release}/binaries/azure-acr-credential-provider-linux-{arch}-v{release}.tar.gz"
        ))
    };
    let table = [
        ("1.33.0", "amd64", url("1.33.0", "amd64")),
        ("1.32.0", "amd64", url("1.32.5", "amd64")),
        ("1.31.0", "amd64", url("1.31.6", "amd64")),
        ("1.30.2", "amd64", url("1.30.12", "amd64")),
        ("1.30.0", "amd64", url("1.30.12", "amd64")),
        ("1.30.0", "arm64", url("1.30.12", "arm64")),
        ("1.29.2", "amd64", None),
        ("1.29.0", "amd64", None),
        ("1.29.0", "arm64", None),
        ("1.28.7", "amd64", None),
    ];
    for (version, arch, expected) in table {
        let parsed = KubeVersion::parse(version).expect("a version");
        let arch = CpuArch::parse(arch).expect("an arch");
        assert_eq!(credential_provider_url(parsed, arch), expected, "{version}");
    }
}

#[test]
fn kubelet_config_renders_upstreams_seventeen_flags() {
    let map = |k: &str, v: &str| BTreeMap::from([(k.to_owned(), v.to_owned())]);
    let config = KubeletConfig {
        node_class: NodeClassKubelet {
            cpu_manager_policy: Some("static".into()),
            cpu_cfs_quota: Some(true),
            image_gc_high_threshold_percent: Some(42),
            image_gc_low_threshold_percent: Some(24),
            topology_manager_policy: Some("best-effort".into()),
            allowed_unsafe_sysctls: vec!["Allowed".into(), "Unsafe".into(), "Sysctls".into()],
            container_log_max_size: Some("42Mi".into()),
            container_log_max_files: Some(13),
            pod_pids_limit: Some(99),
        },
        max_pods: 0,
        system_reserved: map("cpu", "200m"),
        kube_reserved: map("cpu", "400m"),
        eviction_hard: map("memory.available", "100Mi"),
        eviction_soft: map("memory.available", "99Mi"),
        eviction_soft_grace_period: BTreeMap::from([(
            "memory.available".to_owned(),
            Duration::from_secs(90),
        )]),
        eviction_max_pod_grace_period: Some(11),
        cluster_dns: Some("10.20.0.10".into()),
    };
    let expected = [
        ("--allowed-unsafe-sysctls", "Allowed,Unsafe,Sysctls"),
        ("--max-pods", "0"),
        ("--cpu-cfs-quota", "true"),
        ("--image-gc-high-threshold", "42"),
        ("--image-gc-low-threshold", "24"),
        ("--cpu-manager-policy", "static"),
        ("--topology-manager-policy", "best-effort"),
        ("--container-log-max-files", "13"),
        ("--container-log-max-size", "42Mi"),
        ("--pod-max-pids", "99"),
        ("--system-reserved", "cpu=200m"),
        ("--kube-reserved", "cpu=400m"),
        ("--eviction-hard", "memory.available<100Mi"),
        ("--eviction-soft", "memory.available<99Mi"),
        ("--eviction-soft-grace-period", "memory.available=1m30s"),
        ("--eviction-max-pod-grace-period", "11"),
        ("--cluster-dns", "10.20.0.10"),
    ];
    let expected: BTreeMap<String, String> = expected
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    assert_eq!(config.flags(), expected);
}

#[test]
fn go_durations_read_as_go_writes_them() {
    assert_eq!(go_duration(Duration::from_secs(90)), "1m30s");
    assert_eq!(go_duration(Duration::from_secs(7200)), "2h0m0s");
    assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
    assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
    assert_eq!(go_duration(Duration::ZERO), "0s");
}

proptest::proptest! {
    /// Any text is a version or an error naming it, never a panic.
    #[test]
    fn any_version_text_parses_or_is_named(text in "\\PC{0,12}|1\\.[0-9]{1,3}\\.[0-9]{1,3}") {
        match KubeVersion::parse(&text) {
            Ok(version) => {
                proptest::prop_assert!(text.starts_with("1."));
                proptest::prop_assert_eq!(Some(version.minor), text.split('.').nth(1).and_then(|m| m.parse().ok()));
            }
            Err(error) => {
                let named = format!("`{}`", text);
                proptest::prop_assert!(error.to_string().contains(&named));
            }
        }
    }

    /// Any duration is written as Go writes it: whole units from hours down.
    #[test]
    fn any_whole_second_duration_reads_back(seconds in 0u64..1_000_000) {
        let text = go_duration(Duration::from_secs(seconds));
        let (hours, rest) = text.split_once('h').unwrap_or(("0", &text));
        let (minutes, rest) = rest.split_once('m').unwrap_or(("0", rest));
        let secs = rest.trim_end_matches('s');
        let parse = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX / 4);
        proptest::prop_assert_eq!(parse(hours) * 3600 + parse(minutes) * 60 + parse(secs), seconds);
    }
}
