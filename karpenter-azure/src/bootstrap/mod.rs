//! The custom data a VM boots with to join an AKS cluster, as upstream's
//! `aksscriptless` provision mode renders it
//! (`pkg/providers/imagefamily/bootstrap/`): a shell script that waits for
//! the node image's own provisioning scripts, assigns the variables they read
//! (cluster endpoint and CA, bootstrap token, kubelet flags and labels,
//! download URLs, containerd and sysctl configuration, GPU driver) and starts
//! `provision_start.sh`.
//!
//! [`render_script`] gives the script as text, [`custom_data`] base64-encoded
//! as ARM's `osProfile.customData` takes it. Upstream builds the kubelet
//! flags and labels from Go maps, in random order; here they are sorted by
//! name, so the same inputs always give the same bytes.

mod config;
mod gpu;
mod kubelet;
mod labels;
mod script;
mod urls;
mod variables;
mod version;

#[cfg(test)]
mod tests;

use std::net::IpAddr;

use base64::Engine as _;
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::InstanceType;

use crate::catalog::Sku;
use crate::nodeclass::{AKSNodeClass, NodeClassError};
use crate::settings::AksSettings;

/// Everything the custom data is rendered from.
#[derive(Clone, Copy, Debug)]
pub struct CustomDataInputs<'a> {
    /// The cluster's settings (endpoint, token, identities, network).
    pub settings: &'a AksSettings,
    /// The nodes' Kubernetes version, `1.31.2` (the node class's
    /// `status.kubernetesVersion`).
    pub kubernetes_version: &'a str,
    /// The cluster CA bundle, base64 PEM (rendered as `KUBE_CA_CRT` as is).
    pub ca_bundle: &'a str,
    /// The cluster DNS service's address (`--cluster-dns`).
    pub cluster_dns: IpAddr,
    /// The node class the node is launched from.
    pub node_class: &'a AKSNodeClass,
    /// The instance type chosen (its overhead gives the reservations).
    pub instance_type: &'a InstanceType,
    /// The catalog's size of that instance type (architecture, GPU).
    pub sku: &'a Sku,
    /// The node claim the VM is launched for (labels, taints).
    pub claim: &'a NodeClaim,
    /// The cluster's network security group in the node resource group.
    pub network_security_group: &'a str,
    /// The cluster's route table in the node resource group.
    pub route_table: &'a str,
}

/// Why the custom data could not be rendered. No variant carries the
/// bootstrap token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BootstrapError {
    /// The Kubernetes version is not `MAJOR.MINOR.PATCH` with major 1.
    #[error("kubernetesVersion `{value}` is not a Kubernetes version MAJOR.MINOR.PATCH (1.x.y)")]
    KubernetesVersion {
        /// The version given.
        value: String,
    },
    /// The size's CPU architecture has no node binaries to download.
    #[error("size {size}: architecture `{arch}` has no Kubernetes node binaries (amd64, arm64)")]
    Architecture {
        /// The size.
        size: String,
        /// Its architecture.
        arch: String,
    },
    /// The node class is not valid (its own checks).
    #[error(transparent)]
    NodeClass(#[from] NodeClassError),
    /// The node class's `vnetSubnetID` is not a subnet ID.
    #[error("node class {class}: spec.vnetSubnetID: {message}")]
    Subnet {
        /// The node class.
        class: String,
        /// What is wrong with it.
        message: String,
    },
    /// A field of the node class's `spec.kubelet` is malformed.
    #[error("node class {class}: spec.kubelet: {message}")]
    Kubelet {
        /// The node class.
        class: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A value would break out of its shell assignment (a quote, `$`,
    /// backquote, backslash or newline; whitespace where unquoted).
    #[error("{variable}: the value holds characters a shell assignment cannot carry as is")]
    UnsafeValue {
        /// The script variable.
        variable: &'static str,
    },
}

/// The script upstream's aksscriptless mode renders (plain text).
pub fn render_script(inputs: &CustomDataInputs<'_>) -> Result<String, BootstrapError> {
    script::render(inputs)
}

/// That script base64-encoded, as ARM's `osProfile.customData` takes it.
pub fn custom_data(inputs: &CustomDataInputs<'_>) -> Result<String, BootstrapError> {
    let script = render_script(inputs)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(script))
}
