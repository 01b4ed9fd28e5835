//! Rendered scripts: the suite's custom-data expectations, the token, the
//! output's determinism.

use base64::Engine as _;
use serde_json::json;

use super::*;
use crate::bootstrap::urls::{CpuArch, credential_provider_url};
use crate::bootstrap::version::KubeVersion;
use crate::bootstrap::{BootstrapError, custom_data};

#[test]
fn cluster_dns_comes_from_the_inputs() {
    let mut case = Case::new("Standard_D2s_v5");
    case.dns = "10.244.0.1".parse().expect("an address");
    assert!(has_flag(&case.script(), "cluster-dns", "10.244.0.1"));
}

/// The suite's kubelet-configuration expectations on a 2-vCPU, 8 GiB size.
#[test]
fn node_class_kubelet_settings_and_reservations_reach_the_flags() {
    let mut case = Case::new("Standard_D2s_v5");
    case.class = node_class(json!({"kubelet": {
        "cpuManagerPolicy": "static",
        "cpuCFSQuota": true,
        "imageGCHighThresholdPercent": 30,
        "imageGCLowThresholdPercent": 20,
        "topologyManagerPolicy": "best-effort",
        "allowedUnsafeSysctls": ["Allowed", "Unsafe", "Sysctls"],
        "containerLogMaxSize": "42Mi",
        "containerLogMaxFiles": 13,
        "podPidsLimit": 99,
    }}));
    let script = case.script();
    for (flag, value) in [
        ("eviction-hard", "memory.available<750Mi"),
        ("image-gc-high-threshold", "30"),
        ("image-gc-low-threshold", "20"),
        ("cpu-cfs-quota", "true"),
        ("max-pods", "250"),
        ("topology-manager-policy", "best-effort"),
        ("container-log-max-size", "42Mi"),
        ("allowed-unsafe-sysctls", "Allowed,Unsafe,Sysctls"),
        ("cpu-manager-policy", "static"),
        ("container-log-max-files", "13"),
        ("pod-max-pids", "99"),
        ("system-reserved", "cpu=0,memory=0"),
        ("kube-reserved", "cpu=100m,memory=1843Mi"),
    ] {
        assert!(has_flag(&script, flag, value), "--{flag}={value}");
    }
}

#[test]
fn max_pods_is_the_classs_else_the_networks_default() {
    let mut case = Case::new("Standard_D2s_v5");
    case.class = node_class(json!({"maxPods": 15}));
    assert!(has_flag(&case.script(), "max-pods", "15"));
    let mut case = Case::new("Standard_D2s_v5");
    case.settings = settings(&[("NETWORK_PLUGIN_MODE", ""), ("NETWORK_DATAPLANE", "")]);
    assert!(has_flag(&case.script(), "max-pods", "30"));
}

#[test]
fn a_malformed_kubelet_field_is_an_error_naming_it() {
    let mut case = Case::new("Standard_D2s_v5");
    case.class = node_class(json!({"kubelet": {"podPidsLimit": "many"}}));
    let error = case.render().expect_err("a string is not a limit");
    assert!(matches!(error, BootstrapError::Kubelet { .. }));
    assert!(error.to_string().contains("spec.kubelet"), "{error}");
}

#[test]
fn an_nvidia_size_gets_upstreams_gpu_variables() {
    let script = Case::new("Standard_NC16as_T4_v3").script();
    for expected in [
        "GPU_NODE=true",
        "SGX_NODE=false",
        "MIG_NODE=false",
        "CONFIG_GPU_DRIVER_IF_NEEDED=true",
        "ENABLE_GPU_DEVICE_PLUGIN_IF_NEEDED=false",
        "GPU_DRIVER_TYPE=\"cuda-lts\"",
        "GPU_DRIVER_VERSION=\"580.159.04\"",
        "GPU_IMAGE_SHA=\"20260629214430\"",
        "GPU_NEEDS_FABRIC_MANAGER=\"false\"",
        "GPU_INSTANCE_PROFILE=\"\"",
    ] {
        assert!(script.contains(expected), "{expected}");
    }
    let containerd = base64::engine::general_purpose::STANDARD
        .decode(variable(&script, "CONTAINERD_CONFIG_CONTENT"))
        .expect("base64");
    let containerd = String::from_utf8(containerd).expect("text");
    assert!(containerd.contains("default_runtime_name = \"nvidia-container-runtime\""));
}

#[test]
fn gpu_mode_none_leaves_the_driver_alone() {
    let mut case = Case::new("Standard_NC16as_T4_v3");
    case.class = node_class(json!({"gpu": {"mode": "None"}}));
    let script = case.script();
    assert!(script.contains("GPU_NODE=false"));
    assert!(script.contains("CONFIG_GPU_DRIVER_IF_NEEDED=false"));
    assert!(script.contains("GPU_DRIVER_TYPE=\"\""));
}

#[test]
fn a_cpu_size_runs_runc_without_gpu_variables() {
    let script = Case::new("Standard_D2s_v5").script();
    assert!(script.contains("GPU_NODE=false"));
    let containerd = base64::engine::general_purpose::STANDARD
        .decode(variable(&script, "CONTAINERD_CONFIG_CONTENT"))
        .expect("base64");
    let containerd = String::from_utf8(containerd).expect("text");
    assert!(containerd.contains("default_runtime_name = \"runc\""));
    assert!(containerd.contains("SystemdCgroup = true"));
    let sysctl = base64::engine::general_purpose::STANDARD
        .decode(variable(&script, "SYSCTL_CONTENT"))
        .expect("base64");
    assert!(
        String::from_utf8(sysctl)
            .expect("text")
            .contains("net.core.somaxconn=16384")
    );
}

#[test]
fn flags_follow_the_kubernetes_version() {
    let mut case = Case::new("Standard_D2s_v5");
    for (version, keep_volumes, oot_provider) in [
        ("1.29.4", true, false),
        ("1.30.1", true, true),
        ("1.31.2", false, true),
        ("1.34.0", false, true),
    ] {
        case.version = version;
        let script = case.script();
        let flags = variable(&script, "KUBELET_FLAGS");
        assert_eq!(
            flags.contains("--keep-terminated-pod-volumes"),
            keep_volumes,
            "{version}"
        );
        assert_eq!(
            flags.contains("--image-credential-provider-config=/var/lib/kubelet/credential-provider-config.yaml")
                && flags.contains("--image-credential-provider-bin-dir=/var/lib/kubelet/credential-provider"),
            oot_provider,
            "{version}"
        );
        assert_eq!(
            flags.contains("--azure-container-registry-config"),
            !oot_provider
        );
        let minor = KubeVersion::parse(version).expect("a version");
        let url = credential_provider_url(minor, CpuArch::Amd64).unwrap_or_default();
        assert_eq!(variable(&script, "CREDENTIAL_PROVIDER_DOWNLOAD_URL"), url);
        assert_eq!(
            flags.contains("--cloud-config"),
            minor.minor < 34,
            "{version}"
        );
    }
    case.version = "1.35.0";
    assert!(!variable(&case.script(), "KUBELET_FLAGS").contains("--pod-infra-container-image"));
}

#[test]
fn the_unregistered_taint_joins_the_claims_taints() {
    let script = Case::new("Standard_D2s_v5").script();
    assert!(has_flag(
        &script,
        "register-with-taints",
        "karpenter.sh/unregistered:NoExecute"
    ));
    let mut case = Case::new("Standard_D2s_v5");
    case.claim = claim(json!({
        "requirements": [],
        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        "startupTaints": [{"key": "warming", "effect": "NoSchedule"}],
    }));
    assert!(has_flag(
        &case.script(),
        "register-with-taints",
        "dedicated=gpu:NoSchedule,warming:NoSchedule,karpenter.sh/unregistered:NoExecute"
    ));
}

#[test]
fn network_plugin_follows_upstreams_table() {
    for (plugin, mode, dataplane, expected) in [
        ("azure", "", "", "azure"),
        ("azure", "overlay", "", "none"),
        ("azure", "", "cilium", "none"),
        ("azure", "overlay", "cilium", "none"),
        ("none", "", "", "none"),
    ] {
        let mut case = Case::new("Standard_D2s_v5");
        case.settings = settings(&[
            ("NETWORK_PLUGIN", plugin),
            ("NETWORK_PLUGIN_MODE", mode),
            ("NETWORK_DATAPLANE", dataplane),
        ]);
        let script = case.script();
        assert!(
            script.contains(&format!("\nNETWORK_PLUGIN={expected}\n")),
            "{plugin}/{mode}/{dataplane}"
        );
    }
}

#[test]
fn cluster_and_node_data_land_in_their_variables() {
    let mut case = Case::new("Standard_D2ps_v5");
    case.class = node_class(json!({
        "vnetSubnetID": "/subscriptions/s/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/vnet-b/subnets/nodes",
    }));
    let script = case.script();
    for (name, value) in [
        ("API_SERVER_NAME", "test-cluster"),
        ("RESOURCE_GROUP", "test-resourceGroup"),
        ("LOCATION", "westus2"),
        (
            "USER_ASSIGNED_IDENTITY_ID",
            "61f71907-753f-4802-a901-47361c3664f2",
        ),
        ("SUBNET", "nodes"),
        ("VIRTUAL_NETWORK", "vnet-b"),
        ("VIRTUAL_NETWORK_RESOURCE_GROUP", "net-rg"),
        ("NETWORK_SECURITY_GROUP", "aks-agentpool-12345678-nsg"),
        ("ROUTE_TABLE", "aks-agentpool-12345678-routetable"),
        ("KUBERNETES_VERSION", "1.31.2"),
        ("KUBE_CA_CRT", "Q0EgYnVuZGxl"),
        (
            "CNI_PLUGINS_URL",
            "https://acs-mirror.azureedge.net/cni-plugins/v1.1.1/binaries/cni-plugins-linux-arm64-v1.1.1.tgz",
        ),
    ] {
        assert_eq!(variable(&script, name), value, "{name}");
    }
    // The labels: the claim's, AKS's own, and the class's subnet for the CNI.
    let rendered = variable(&script, "KUBELET_NODE_LABELS");
    let labels: Vec<&str> = rendered.split(',').collect();
    for label in [
        "karpenter.sh/nodepool=default",
        "kubernetes.azure.com/role=agent",
        "kubernetes.azure.com/network-subnet=nodes",
    ] {
        assert!(labels.contains(&label), "{label} not in {labels:?}");
    }
    let keys: Vec<&str> = labels
        .iter()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    assert!(
        keys.is_sorted(),
        "labels are rendered sorted by key: {keys:?}"
    );
    assert!(script.starts_with("#!/bin/bash\n"));
    assert!(script.ends_with("/opt/azure/containers/provision_start.sh\"\n"));
}

#[test]
fn the_token_appears_only_as_tls_bootstrap_tokens_value() {
    let script = Case::new("Standard_D2s_v5").script();
    let holding: Vec<&str> = script.lines().filter(|l| l.contains(TOKEN)).collect();
    assert_eq!(
        holding,
        [format!("TLS_BOOTSTRAP_TOKEN=\"{TOKEN}\"").as_str()]
    );
    let mut case = Case::new("Standard_D2s_v5");
    case.version = "v1.31";
    let error = case.render().expect_err("not a version");
    assert!(!error.to_string().contains(TOKEN));
    assert!(!format!("{error:?}").contains(TOKEN));
    assert!(error.to_string().contains("v1.31"), "{error}");
}

#[test]
fn rendering_is_deterministic_and_custom_data_is_its_base64() {
    let case = Case::new("Standard_D4pds_v5");
    let first = case.script();
    assert_eq!(first, case.script());
    let flags = variable(&first, "KUBELET_FLAGS");
    let names: Vec<&str> = flags
        .split(' ')
        .map(|f| f.split('=').next().unwrap_or_default())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    let encoded = case.with_inputs(custom_data).expect("renders");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    assert_eq!(String::from_utf8(decoded).expect("text"), first);
}

#[test]
fn a_value_that_would_break_the_script_is_refused() {
    let mut case = Case::new("Standard_D2s_v5");
    case.settings.network_policy = "calico\"; rm -rf /".to_owned();
    assert_eq!(
        case.render(),
        Err(BootstrapError::UnsafeValue {
            variable: "NETWORK_POLICY"
        })
    );
}

#[test]
fn an_invalid_node_class_is_refused_with_its_field() {
    let mut case = Case::new("Standard_D2s_v5");
    case.class.spec.max_pods = Some(-1);
    let error = case.render().expect_err("negative maxPods");
    assert!(matches!(error, BootstrapError::NodeClass(_)));
    assert!(error.to_string().contains("spec.maxPods"), "{error}");
}
