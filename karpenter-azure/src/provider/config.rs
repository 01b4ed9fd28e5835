//! What the provider is told: where VMs launch, and what a VM needs to join
//! the cluster.

use crate::nodeclass::NetworkOptions;
use crate::settings::AksSettings;

/// Where and how the provider launches.
#[derive(Clone, Debug, PartialEq)]
pub struct AzureConfig {
    /// The subscription.
    pub subscription: String,
    /// The node resource group (`MC_...`).
    pub resource_group: String,
    /// The region.
    pub region: String,
    /// The cluster's name (tagged on every VM).
    pub cluster_name: String,
    /// The subnet nodes join.
    pub subnet_id: String,
    /// The SSH key of `azureuser`.
    pub ssh_public_key: String,
    /// The bootstrap custom data (base64), when the caller renders one and
    /// `join` is unset.
    pub custom_data: Option<String>,
    /// The cluster's network (the default maxPods).
    pub network: NetworkOptions,
    /// What a VM needs to join the cluster as an AKS node. When set, the
    /// provider renders each VM's custom data from it; without it, VMs boot
    /// with `custom_data` as given (planning, simulations, tests).
    pub join: Option<JoinConfig>,
}

/// What a launched VM needs to become a Ready AKS node: the validated
/// settings and what the controller read from the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinConfig {
    /// The settings, under upstream's names.
    pub settings: AksSettings,
    /// What the cluster told the controller.
    pub cluster: ClusterFacts,
}

/// What the controller reads from the cluster it runs in, for nodes to
/// join it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterFacts {
    /// The cluster's CA bundle: base64 of the PEM certificates from the
    /// controller's own kube config (`KUBE_CA_CRT`).
    pub ca_bundle: String,
    /// The API server's Kubernetes version (`1.31.2`), used where a node
    /// class's status has none.
    pub kubernetes_version: String,
    /// The cluster DNS address: `DNS_SERVICE_IP`, else kube-dns's
    /// ClusterIP, else upstream's `10.0.0.10`.
    pub cluster_dns: std::net::IpAddr,
}
