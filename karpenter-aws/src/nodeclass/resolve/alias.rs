//! The SSM parameters an image alias (`family@version`) reads, and the
//! nodes each parameter's image is for. Reading the parameters is the
//! caller's (SSM `GetParameter`); [`alias_parameters`] names them.

use k8s_openapi::api::core::v1::NodeSelectorRequirement;

use crate::nodeclass::{Alias, AmiFamily};

/// The label counting an instance type's GPUs.
const GPU_COUNT: &str = "karpenter.k8s.aws/instance-gpu-count";
/// The label counting an instance type's accelerators (Neuron, ...).
const ACCELERATOR_COUNT: &str = "karpenter.k8s.aws/instance-accelerator-count";

/// What kind of node an alias's image is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ImageVariant {
    /// Neither GPUs nor accelerators.
    Standard,
    /// NVIDIA GPUs.
    Nvidia,
    /// AWS Neuron accelerators (Inferentia, Trainium).
    Neuron,
    /// Windows Server of this build (`10.0.20348`).
    Windows(&'static str),
}

impl ImageVariant {
    /// The requirements the image puts on instance types, besides its
    /// architecture, as upstream writes them.
    pub fn requirements(self) -> Vec<NodeSelectorRequirement> {
        match self {
            ImageVariant::Standard => vec![
                requirement(ACCELERATOR_COUNT, "DoesNotExist", &[]),
                requirement(GPU_COUNT, "DoesNotExist", &[]),
            ],
            ImageVariant::Nvidia => vec![requirement(GPU_COUNT, "Exists", &[])],
            ImageVariant::Neuron => vec![requirement(ACCELERATOR_COUNT, "Exists", &[])],
            ImageVariant::Windows(build) => vec![
                requirement("kubernetes.io/os", "In", &["windows"]),
                requirement("node.kubernetes.io/windows-build", "In", &[build]),
            ],
        }
    }
}

/// A node selector requirement; `values` left out when empty.
pub(crate) fn requirement(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_owned(),
        operator: operator.to_owned(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

/// One SSM parameter an alias reads, and the variants of its image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasParameter {
    /// The parameter's name, `/aws/service/...`.
    pub name: String,
    /// The kinds of node its image is for.
    pub variants: Vec<ImageVariant>,
}

/// An alias upstream refuses for the cluster's Kubernetes version.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("spec.amiSelectorTerms[].alias {alias}: {message}")]
pub struct UnsupportedAlias {
    /// The alias, as written.
    pub alias: String,
    /// Upstream's message (the `UnsupportedAlias` condition's).
    pub message: String,
}

/// The Kubernetes minor version of `version` (`1.31` → 31), if it reads.
fn minor(version: &str) -> Option<u32> {
    version.split('.').nth(1)?.parse().ok()
}

/// The SSM parameters `alias` reads on a cluster of `kubernetes_version`
/// (`1.31`), in a fixed order; AL2 aliases are refused from 1.33 and
/// Windows Server 2025 before 1.35, with upstream's messages.
pub fn alias_parameters(
    alias: &Alias,
    kubernetes_version: &str,
) -> Result<Vec<AliasParameter>, UnsupportedAlias> {
    let refuse = |message: String| UnsupportedAlias {
        alias: alias.to_string(),
        message,
    };
    let minor = minor(kubernetes_version);
    if alias.family == AmiFamily::AL2 && minor.is_some_and(|m| m >= 33) {
        return Err(refuse(
            "AL2 aliases are no longer supported on EKS 1.33+ (see https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions-standard.html#kubernetes-1-33)"
                .to_owned(),
        ));
    }
    if alias.family == AmiFamily::Windows2025 && minor.is_some_and(|m| m < 35) {
        return Err(refuse(format!(
            "Windows Server 2025 requires EKS version 1.35 or higher, current version: {kubernetes_version}"
        )));
    }
    let (k8s, version) = (kubernetes_version, alias.version.as_str());
    Ok(match alias.family {
        AmiFamily::AL2023 => al2023(k8s, version),
        AmiFamily::AL2 => al2(k8s, version),
        AmiFamily::Bottlerocket => bottlerocket(k8s, version),
        AmiFamily::Windows2019 => windows("2019", "10.0.17763", k8s),
        AmiFamily::Windows2022 => windows("2022", "10.0.20348", k8s),
        AmiFamily::Windows2025 => windows("2025", "10.0.26100", k8s),
        AmiFamily::Custom => Vec::new(),
    })
}

fn parameter(name: String, variants: &[ImageVariant]) -> AliasParameter {
    AliasParameter {
        name,
        variants: variants.to_vec(),
    }
}

/// `latest` reads the `recommended` parameter, a release its own.
fn is_latest(version: &str) -> bool {
    version == Alias::LATEST
}

fn al2023(k8s: &str, version: &str) -> Vec<AliasParameter> {
    use ImageVariant::{Neuron, Nvidia, Standard};
    let builds = [
        ("x86_64", Standard, "standard"),
        ("x86_64", Nvidia, "nvidia"),
        ("x86_64", Neuron, "neuron"),
        ("arm64", Standard, "standard"),
        ("arm64", Nvidia, "nvidia"),
    ];
    builds
        .into_iter()
        .map(|(arch, variant, variant_name)| {
            let leaf = if is_latest(version) {
                "recommended".to_owned()
            } else {
                format!("amazon-eks-node-al2023-{arch}-{variant_name}-{k8s}-{version}")
            };
            parameter(
                format!(
                    "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/{arch}/{variant_name}/{leaf}/image_id"
                ),
                &[variant],
            )
        })
        .collect()
}

fn al2(k8s: &str, version: &str) -> Vec<AliasParameter> {
    use ImageVariant::{Neuron, Nvidia, Standard};
    let builds: [(&str, &str, &[ImageVariant]); 3] = [
        ("amazon-linux-2", "node", &[Standard]),
        ("amazon-linux-2-arm64", "arm64-node", &[Standard]),
        ("amazon-linux-2-gpu", "gpu-node", &[Neuron, Nvidia]),
    ];
    builds
        .into_iter()
        .map(|(path, release, variants)| {
            let leaf = if is_latest(version) {
                "recommended".to_owned()
            } else {
                format!("amazon-eks-{release}-{k8s}-{version}")
            };
            parameter(
                format!("/aws/service/eks/optimized-ami/{k8s}/{path}/{leaf}/image_id"),
                variants,
            )
        })
        .collect()
}

fn bottlerocket(k8s: &str, version: &str) -> Vec<AliasParameter> {
    use ImageVariant::{Neuron, Nvidia, Standard};
    // Bottlerocket's parameters name releases without the leading `v`.
    let version = version.trim_start_matches('v');
    let builds: [(&str, &str, &[ImageVariant]); 4] = [
        ("", "x86_64", &[Standard, Neuron]),
        ("", "arm64", &[Standard]),
        ("-nvidia", "x86_64", &[Nvidia]),
        ("-nvidia", "arm64", &[Nvidia]),
    ];
    builds
        .into_iter()
        .map(|(flavour, arch, variants)| {
            parameter(
                format!(
                    "/aws/service/bottlerocket/aws-k8s-{k8s}{flavour}/{arch}/{version}/image_id"
                ),
                variants,
            )
        })
        .collect()
}

/// Windows aliases always read the latest image: the version is ignored.
fn windows(release: &str, build: &'static str, k8s: &str) -> Vec<AliasParameter> {
    vec![parameter(
        format!(
            "/aws/service/ami-windows-latest/Windows_Server-{release}-English-Core-EKS_Optimized-{k8s}/image_id"
        ),
        &[ImageVariant::Windows(build)],
    )]
}
