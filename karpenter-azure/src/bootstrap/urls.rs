//! Where the node downloads what its image may lack: the Kubernetes node
//! binaries, the ACR credential provider and the CNI plugins, all from AKS's
//! public mirror, by CPU architecture and Kubernetes version.

use super::version::KubeVersion;

/// AKS's public download mirror.
const MIRROR: &str = "https://acs-mirror.azureedge.net";

/// The Azure CNI release the nodes install.
const AZURE_CNI_VERSION: &str = "1.4.32";

/// The reference CNI plugins release the nodes install.
const CNI_PLUGINS_VERSION: &str = "1.1.1";

/// A CPU architecture with node binaries on the mirror.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuArch {
    /// x86-64.
    Amd64,
    /// 64-bit Arm.
    Arm64,
}

impl CpuArch {
    /// The architecture named as Kubernetes names it (`amd64`, `arm64`).
    pub(crate) fn parse(name: &str) -> Option<CpuArch> {
        match name {
            "amd64" => Some(CpuArch::Amd64),
            "arm64" => Some(CpuArch::Arm64),
            _ => None,
        }
    }

    /// The name in the mirror's file names.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CpuArch::Amd64 => "amd64",
            CpuArch::Arm64 => "arm64",
        }
    }
}

/// `KUBE_BINARY_URL`: the node binaries of `version`; empty from 1.34,
/// whose images carry them at a path the provisioning scripts know.
pub(crate) fn kube_binary_url(version: &str, minor: KubeVersion, arch: CpuArch) -> String {
    if minor.minor >= 34 {
        return String::new();
    }
    format!(
        "{MIRROR}/kubernetes/v{version}/binaries/kubernetes-node-linux-{}.tar.gz",
        arch.as_str()
    )
}

/// The out-of-tree ACR credential provider's release for a Kubernetes
/// minor version; `None` before 1.30, where the kubelet's in-tree provider
/// is used. It follows cloud-provider-azure's releases, not Kubernetes'.
fn credential_provider_release(minor: u64) -> Option<&'static str> {
    match minor {
        0..=29 => None,
        30 => Some("1.30.12"),
        31 => Some("1.31.6"),
        32 => Some("1.32.5"),
        _ => Some("1.33.0"),
    }
}

/// `CREDENTIAL_PROVIDER_DOWNLOAD_URL`: the ACR credential provider, `None`
/// before 1.30.
pub(crate) fn credential_provider_url(version: KubeVersion, arch: CpuArch) -> Option<String> {
    credential_provider_release(version.minor).map(|release| {
        format!(
            "{MIRROR}/cloud-provider-azure/v{release}/binaries/azure-acr-credential-provider-linux-{}-v{release}.tar.gz",
            arch.as_str()
        )
    })
}

/// `VNET_CNI_PLUGINS_URL`: Azure CNI.
pub(crate) fn vnet_cni_plugins_url(arch: CpuArch) -> String {
    format!(
        "{MIRROR}/azure-cni/v{AZURE_CNI_VERSION}/binaries/azure-vnet-cni-linux-{}-v{AZURE_CNI_VERSION}.tgz",
        arch.as_str()
    )
}

/// `CNI_PLUGINS_URL`: the reference CNI plugins.
pub(crate) fn cni_plugins_url(arch: CpuArch) -> String {
    format!(
        "{MIRROR}/cni-plugins/v{CNI_PLUGINS_VERSION}/binaries/cni-plugins-linux-{}-v{CNI_PLUGINS_VERSION}.tgz",
        arch.as_str()
    )
}
