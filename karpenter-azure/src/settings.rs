//! The cluster settings a self-hosted Karpenter on AKS runs with, under
//! upstream's environment names (`pkg/operator/options/options.go`,
//! `pkg/auth/config.go`): where nodes join (`CLUSTER_ENDPOINT`,
//! `KUBELET_BOOTSTRAP_TOKEN`), where they live (`AZURE_NODE_RESOURCE_GROUP`,
//! `VNET_SUBNET_ID`, `LOCATION`), the cluster's network and identities.
//!
//! [`AksSettings::from_lookup`] reads them by name from anything (the
//! controller's flags and environment, a JSON object) and validates them
//! all at once: [`SettingsError`] lists every missing or malformed one, so
//! nothing half-starts. Upstream stops at the first problem; listing all of
//! them is a deliberate departure.
//!
//! The bootstrap token is a [`BootstrapToken`]: it prints as `***`, and no
//! error or log ever carries it.

mod parse;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use crate::nodeclass::NetworkOptions;

pub use parse::SubnetId;

/// One setting: its environment name (upstream's), its flag, the older
/// names this project accepted before, and what it is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable, as upstream names it (`CLUSTER_ENDPOINT`).
    pub variable: &'static str,
    /// The flag, as upstream names it, without dashes (`cluster-endpoint`).
    pub flag: &'static str,
    /// Other names read when the first is unset, in order (older names of
    /// this project, upstream's alternative `ARM_*` names).
    pub aliases: &'static [&'static str],
    /// Whether the controller refuses to start without it.
    pub required: bool,
    /// What it holds.
    pub help: &'static str,
}

macro_rules! setting {
    ($variable:literal, $flag:literal, [$($alias:literal),*], $required:literal, $help:literal) => {
        Setting {
            variable: $variable,
            flag: $flag,
            aliases: &[$($alias),*],
            required: $required,
            help: $help,
        }
    };
}

/// Every setting [`AksSettings::from_lookup`] reads, in the order a
/// problem list names them.
pub const SETTINGS: &[Setting] = &[
    setting!(
        "CLUSTER_NAME",
        "cluster-name",
        [],
        true,
        "The AKS cluster's name (tagged on every VM)."
    ),
    setting!(
        "CLUSTER_ENDPOINT",
        "cluster-endpoint",
        [],
        true,
        "The API server URL nodes join (`https://<fqdn>:443`)."
    ),
    setting!(
        "KUBELET_BOOTSTRAP_TOKEN",
        "kubelet-bootstrap-token",
        [],
        true,
        "The TLS bootstrap token (`<id>.<secret>`) kubelets join with."
    ),
    setting!(
        "SSH_PUBLIC_KEY",
        "ssh-public-key",
        [],
        true,
        "The SSH public key of the nodes' admin user."
    ),
    setting!(
        "VNET_SUBNET_ID",
        "vnet-subnet-id",
        ["AZURE_SUBNET_ID"],
        true,
        "The subnet nodes join (an ARM subnet ID), unless a node class names one."
    ),
    setting!(
        "AZURE_NODE_RESOURCE_GROUP",
        "node-resource-group",
        [],
        true,
        "The node resource group (`MC_...`) VMs and NICs live in."
    ),
    setting!(
        "LOCATION",
        "location",
        ["AZURE_LOCATION"],
        true,
        "The cluster's region (`eastus`)."
    ),
    setting!(
        "AZURE_SUBSCRIPTION_ID",
        "azure-subscription-id",
        ["ARM_SUBSCRIPTION_ID"],
        false,
        "The subscription of the node resource group; the subnet's when unset."
    ),
    setting!(
        "AZURE_TENANT_ID",
        "azure-tenant-id",
        ["ARM_TENANT_ID"],
        false,
        "The tenant nodes' cloud provider authenticates in."
    ),
    setting!(
        "LINUX_ADMIN_USERNAME",
        "linux-admin-username",
        [],
        false,
        "The nodes' admin user (`azureuser`)."
    ),
    setting!(
        "NETWORK_PLUGIN",
        "network-plugin",
        [],
        false,
        "`azure` (the default) or `none`."
    ),
    setting!(
        "NETWORK_PLUGIN_MODE",
        "network-plugin-mode",
        [],
        false,
        "`overlay` (the default) or empty (pods on the node subnet)."
    ),
    setting!(
        "NETWORK_POLICY",
        "network-policy",
        [],
        false,
        "The network policy engine, passed to nodes as is."
    ),
    setting!(
        "NETWORK_DATAPLANE",
        "network-dataplane",
        [],
        false,
        "`cilium` (the default), `azure`, or empty."
    ),
    setting!(
        "DNS_SERVICE_IP",
        "dns-service-ip",
        [],
        false,
        "The cluster DNS address; kube-dns's ClusterIP when unset."
    ),
    setting!(
        "VNET_GUID",
        "vnet-guid",
        [],
        false,
        "The VNet's resource GUID (Azure CNI overlay's node label); read from ARM when unset."
    ),
    setting!(
        "KUBELET_IDENTITY_CLIENT_ID",
        "kubelet-identity-client-id",
        [],
        false,
        "The client ID of the kubelet identity (image pulls)."
    ),
    setting!(
        "NODE_IDENTITIES",
        "node-identities",
        [],
        false,
        "User-assigned identity IDs attached to every VM, comma-separated."
    ),
    setting!(
        "VM_MEMORY_OVERHEAD_PERCENT",
        "vm-memory-overhead-percent",
        [],
        false,
        "The share of a size's memory the hypervisor keeps (0.075)."
    ),
    setting!(
        "PROVISION_MODE",
        "provision-mode",
        [],
        false,
        "How nodes bootstrap: `aksscriptless`, the only mode supported yet."
    ),
    setting!(
        "NODE_OSDISK_DISKENCRYPTIONSET_ID",
        "node-osdisk-diskencryptionset-id",
        [],
        false,
        "A disk encryption set for OS disks (an ARM ID)."
    ),
    setting!(
        "ADDITIONAL_TAGS",
        "additional-tags",
        [],
        false,
        "Tags on every VM and NIC, `k=v,...`."
    ),
];

/// The only provision mode supported: the custom data renders the script
/// that starts the image's own provisioning.
pub const PROVISION_MODE_SCRIPTLESS: &str = "aksscriptless";

/// The cluster's network plugin (`NETWORK_PLUGIN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkPlugin {
    /// Azure CNI.
    Azure,
    /// No CNI installed by AKS (bring your own).
    None,
}

/// The network plugin's mode (`NETWORK_PLUGIN_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkPluginMode {
    /// Pods get addresses from an overlay CIDR.
    Overlay,
    /// Pods get addresses from the node subnet (the empty mode).
    NodeSubnet,
}

/// The network dataplane (`NETWORK_DATAPLANE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkDataplane {
    /// Azure's own.
    Azure,
    /// Cilium (Azure CNI powered by Cilium).
    Cilium,
    /// None named.
    Unset,
}

/// The kubelets' TLS bootstrap token. It prints as `***`: nothing here puts
/// it in a log or an error; [`BootstrapToken::expose`] is for the custom
/// data alone.
#[derive(Clone, PartialEq, Eq)]
pub struct BootstrapToken(String);

impl BootstrapToken {
    /// A token from its text, when it has the bootstrap-token form
    /// `[a-z0-9]{6}.[a-z0-9]{16}`; the error never repeats it.
    pub fn new(text: impl Into<String>) -> Result<Self, String> {
        let text = text.into();
        if parse::is_bootstrap_token(&text) {
            Ok(BootstrapToken(text))
        } else {
            Err(format!(
                "is not a bootstrap token `<id>.<secret>` (6 and 16 characters of [a-z0-9]; \
                 {} characters given, not shown)",
                text.chars().count()
            ))
        }
    }

    /// The token's public half, which names its Secret (`bootstrap-token-<id>`).
    pub fn id(&self) -> &str {
        self.0.split('.').next().unwrap_or_default()
    }

    /// The whole token, for the custom data only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BootstrapToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The settings, validated: what the provider launches with and the custom
/// data renders.
#[derive(Clone, Debug, PartialEq)]
pub struct AksSettings {
    /// `CLUSTER_NAME`.
    pub cluster_name: String,
    /// `CLUSTER_ENDPOINT`, as given.
    pub cluster_endpoint: String,
    /// The endpoint's host (`API_SERVER_NAME` in the custom data).
    pub api_server_name: String,
    /// `KUBELET_BOOTSTRAP_TOKEN`.
    pub bootstrap_token: BootstrapToken,
    /// `SSH_PUBLIC_KEY`.
    pub ssh_public_key: String,
    /// `VNET_SUBNET_ID`, parsed.
    pub subnet: SubnetId,
    /// `AZURE_NODE_RESOURCE_GROUP`.
    pub node_resource_group: String,
    /// `LOCATION`.
    pub location: String,
    /// `AZURE_SUBSCRIPTION_ID`, else the subnet's subscription.
    pub subscription_id: String,
    /// `AZURE_TENANT_ID`, empty when unset.
    pub tenant_id: String,
    /// `LINUX_ADMIN_USERNAME` (`azureuser`).
    pub linux_admin_username: String,
    /// `NETWORK_PLUGIN` (`azure`).
    pub network_plugin: NetworkPlugin,
    /// `NETWORK_PLUGIN_MODE` (`overlay`).
    pub network_plugin_mode: NetworkPluginMode,
    /// `NETWORK_POLICY`, as given.
    pub network_policy: String,
    /// `NETWORK_DATAPLANE` (`cilium`).
    pub network_dataplane: NetworkDataplane,
    /// `DNS_SERVICE_IP`, when given.
    pub dns_service_ip: Option<IpAddr>,
    /// `VNET_GUID`, when given (lower case).
    pub vnet_guid: Option<String>,
    /// `KUBELET_IDENTITY_CLIENT_ID`, when given (lower case).
    pub kubelet_identity_client_id: Option<String>,
    /// `NODE_IDENTITIES`.
    pub node_identities: Vec<String>,
    /// `VM_MEMORY_OVERHEAD_PERCENT` (0.075).
    pub vm_memory_overhead_percent: f64,
    /// `NODE_OSDISK_DISKENCRYPTIONSET_ID`, when given.
    pub disk_encryption_set_id: Option<String>,
    /// `ADDITIONAL_TAGS`.
    pub additional_tags: BTreeMap<String, String>,
}

/// One setting that is missing or malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingProblem {
    /// The setting's environment name.
    pub variable: &'static str,
    /// Its flag, without dashes.
    pub flag: &'static str,
    /// What is wrong (never the value of a secret).
    pub message: String,
}

impl fmt::Display for SettingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (--{}) {}", self.variable, self.flag, self.message)
    }
}

/// Every problem [`AksSettings::from_lookup`] found, in [`SETTINGS`] order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} Azure setting(s) missing or malformed: {}", problems.len(), list(problems))]
pub struct SettingsError {
    /// The problems, at least one.
    pub problems: Vec<SettingProblem>,
}

fn list(problems: &[SettingProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl AksSettings {
    /// Reads and validates every setting of [`SETTINGS`] through `lookup`
    /// (by environment name; an empty value counts as unset), reporting
    /// every problem at once.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        parse::read(&lookup)
    }

    /// The network options instance types are shaped by (the default
    /// maxPods).
    pub fn network_options(&self) -> NetworkOptions {
        NetworkOptions {
            plugin: match self.network_plugin {
                NetworkPlugin::Azure => "azure",
                NetworkPlugin::None => "none",
            }
            .to_owned(),
            plugin_mode: match self.network_plugin_mode {
                NetworkPluginMode::Overlay => "overlay",
                NetworkPluginMode::NodeSubnet => "",
            }
            .to_owned(),
        }
    }
}
