//! What a joining node's NIC refers to, decided as upstream decides it from
//! what ARM lists: the load balancers' backend pools
//! (`pkg/providers/loadbalancer`), the cluster's security group
//! (`pkg/providers/networksecuritygroup`), whether the subnet is the one AKS
//! made (`utils.IsAKSManagedVNET`), and the IP configurations Azure CNI
//! needs (`vminstance.go newNetworkInterfaceForVM`).

use serde_json::{Value, json};

use crate::settings::{NetworkPlugin, NetworkPluginMode, SubnetId};

/// The load balancers whose pools nodes join (public and internal); the
/// IPv6 one is left alone, as upstream does.
const CLUSTER_LOAD_BALANCERS: [&str; 2] = ["kubernetes", "kubernetes-internal"];

/// IPv6 pools, which would need a second NIC: left out.
const IPV6_POOLS: [&str; 2] = ["aksOutboundBackendPool-ipv6", "kubernetes-ipv6"];

/// Why the cluster's security group could not be told.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NetworkError {
    /// No `aks-agentpool-<8 digits>-nsg` in the node resource group.
    #[error(
        "no network security group named aks-agentpool-<8 digits>-nsg in the node resource group"
    )]
    NoClusterSecurityGroup,
    /// More than one, so which is the cluster's is unknown.
    #[error("several network security groups look like the cluster's: {}", names.join(", "))]
    SeveralClusterSecurityGroups {
        /// Their names.
        names: Vec<String>,
    },
    /// The VNet of the nodes' subnet is not there.
    #[error("the virtual network {name} of resource group {resource_group} was not found")]
    VirtualNetworkMissing {
        /// Its resource group.
        resource_group: String,
        /// Its name.
        name: String,
    },
    /// The VNet of the nodes' subnet has no `properties.resourceGuid`.
    #[error("the virtual network {name} has no resourceGuid")]
    VirtualNetworkWithoutGuid {
        /// Its name.
        name: String,
    },
    /// The cluster's security group has no `id` to refer to.
    #[error("the network security group {name} has no id")]
    SecurityGroupWithoutId {
        /// Its name.
        name: String,
    },
}

/// The IDs of the backend pools a node's NIC joins: every pool of the
/// load balancers named `kubernetes` or `kubernetes-internal` (any case),
/// except the IPv6 pools and the IP-based ones (whose members are listed by
/// address), in the order ARM lists them.
pub(crate) fn backend_pool_ids(load_balancers: &[Value]) -> Vec<String> {
    load_balancers
        .iter()
        .filter(|lb| {
            let name = lb["name"].as_str().unwrap_or_default();
            CLUSTER_LOAD_BALANCERS
                .iter()
                .any(|n| n.eq_ignore_ascii_case(name))
        })
        .filter_map(|lb| lb["properties"]["backendAddressPools"].as_array())
        .flatten()
        .filter(|pool| pool_applies(pool))
        .filter_map(|pool| pool["id"].as_str().filter(|id| !id.is_empty()))
        .map(str::to_owned)
        .collect()
}

/// Whether a node joins `pool`: it is named, has properties, is not an
/// IPv6 pool, and lists no member by IP address.
fn pool_applies(pool: &Value) -> bool {
    let Some(name) = pool["name"].as_str() else {
        return false;
    };
    if !pool["properties"].is_object() || IPV6_POOLS.iter().any(|n| n.eq_ignore_ascii_case(name)) {
        return false;
    }
    let by_address = pool["properties"]["loadBalancerBackendAddresses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|address| address["properties"]["ipAddress"].as_str())
        .any(|ip| !ip.is_empty());
    !by_address
}

/// The cluster's network security group, as the node resource group holds
/// it (`NETWORK_SECURITY_GROUP` and `ROUTE_TABLE` of a node's custom data
/// come from it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSecurityGroup {
    /// Its ARM ID.
    pub id: String,
    /// Its name (`aks-agentpool-<cluster id>-nsg`).
    pub name: String,
    /// The eight digits AKS names the cluster's resources by.
    pub cluster_id: String,
}

impl ClusterSecurityGroup {
    /// The cluster's route table: `aks-agentpool-<cluster id>-routetable`.
    pub fn route_table(&self) -> String {
        format!("aks-agentpool-{}-routetable", self.cluster_id)
    }
}

/// The eight digits of a name `aks-agentpool-<8 digits>-nsg` (the prefix
/// and suffix in any case), if it is one.
fn cluster_id_of(name: &str) -> Option<&str> {
    const PREFIX: &str = "aks-agentpool-";
    const SUFFIX: &str = "-nsg";
    let lower = name.to_ascii_lowercase();
    if name.len() != PREFIX.len() + 8 + SUFFIX.len()
        || !lower.starts_with(PREFIX)
        || !lower.ends_with(SUFFIX)
    {
        return None;
    }
    let digits = name.get(PREFIX.len()..PREFIX.len() + 8)?;
    digits.bytes().all(|b| b.is_ascii_digit()).then_some(digits)
}

/// The single security group of `groups` named `aks-agentpool-<8
/// digits>-nsg`; none or several is an error.
pub(crate) fn cluster_security_group(
    groups: &[Value],
) -> Result<ClusterSecurityGroup, NetworkError> {
    let mut found: Vec<(&str, &str)> = groups
        .iter()
        .filter_map(|group| {
            let name = group["name"].as_str()?;
            cluster_id_of(name).map(|id| (name, id))
        })
        .collect();
    let (name, cluster_id) = match found.len() {
        0 => return Err(NetworkError::NoClusterSecurityGroup),
        1 => found.remove(0),
        _ => {
            let mut names: Vec<String> = found.iter().map(|(n, _)| (*n).to_owned()).collect();
            names.sort();
            return Err(NetworkError::SeveralClusterSecurityGroups { names });
        }
    };
    let group = groups
        .iter()
        .find(|g| g["name"].as_str() == Some(name))
        .ok_or(NetworkError::NoClusterSecurityGroup)?;
    let id = group["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| NetworkError::SecurityGroupWithoutId {
            name: name.to_owned(),
        })?;
    Ok(ClusterSecurityGroup {
        id: id.to_owned(),
        name: name.to_owned(),
        cluster_id: cluster_id.to_owned(),
    })
}

/// Whether `subnet` is the one AKS made for the cluster: `aks-subnet` of a
/// VNet `aks-vnet-<8 digits>` in the node resource group (names in any
/// case). Only a NIC in another subnet (a VNet the user brought) gets the
/// cluster's security group, since AKS's subnet already has it.
pub(crate) fn is_aks_managed_subnet(node_resource_group: &str, subnet: &SubnetId) -> bool {
    const PREFIX: &str = "aks-vnet-";
    let vnet = subnet.vnet.to_ascii_lowercase();
    let managed_vnet = vnet
        .strip_prefix(PREFIX)
        .is_some_and(|digits| digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()));
    managed_vnet
        && subnet
            .resource_group
            .eq_ignore_ascii_case(node_resource_group)
        && subnet.subnet.eq_ignore_ascii_case("aks-subnet")
}

/// A VNet's `properties.resourceGuid` (Azure CNI overlay names the VNet
/// by it), if it has a non-empty one.
pub(crate) fn vnet_guid(vnet: &Value) -> Option<&str> {
    vnet["properties"]["resourceGuid"]
        .as_str()
        .filter(|guid| !guid.is_empty())
}

/// The NIC's IP configurations: the primary one named like the NIC, in
/// `subnet_id`, in every backend pool of `pools`; and for Azure CNI on the
/// node subnet (pods take addresses from it) `max_pods - 1` secondary ones,
/// `ipconfig1` onwards, outside the pools.
pub(crate) fn ip_configurations(
    nic_name: &str,
    subnet_id: &str,
    pools: &[String],
    plugin: NetworkPlugin,
    mode: NetworkPluginMode,
    max_pods: u32,
) -> Vec<Value> {
    let pools: Vec<Value> = pools.iter().map(|id| json!({"id": id})).collect();
    let mut configs = vec![json!({
        "name": nic_name,
        "properties": {
            "primary": true,
            "privateIPAllocationMethod": "Dynamic",
            "subnet": {"id": subnet_id},
            "loadBalancerBackendAddressPools": pools,
        },
    })];
    if plugin == NetworkPlugin::Azure && mode == NetworkPluginMode::NodeSubnet {
        configs.extend((1..max_pods).map(|i| {
            json!({
                "name": format!("ipconfig{i}"),
                "properties": {
                    "primary": false,
                    "privateIPAllocationMethod": "Dynamic",
                    "subnet": {"id": subnet_id},
                },
            })
        }));
    }
    configs
}

#[cfg(test)]
mod tests;
