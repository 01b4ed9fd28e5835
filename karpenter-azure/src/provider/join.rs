//! A joining node's NIC and VM as upstream makes them
//! (`vminstance.go`): the NIC in the cluster's load balancer pools, with
//! the cluster's security group on a VNet the user brought and the
//! secondary addresses Azure CNI hands to pods; the VM with the node
//! identities, the admin user, the ephemeral OS disk's placement and the
//! disk encryption set. The load balancers and the security group are read
//! from ARM once and kept.

use std::sync::Mutex;

use jiff::Timestamp;
use karpenter_core::cloudprovider::{CloudProviderError, InstanceType};
use serde_json::{Map, Value, json};

use super::network::{self, ClusterSecurityGroup, NetworkError};
use super::{AzureCloudProvider, JoinConfig, api_error, launch, lock};
use crate::arm::{ArmError, ComputeApi};
use crate::catalog::Sku;
use crate::instancetype::Settings;
use crate::instancetype::labels::ephemeral_os_disk;
use crate::settings::{NetworkPluginMode, SubnetId};

/// How long the load balancers' pools are kept before being listed again
/// (upstream's `LoadBalancersCacheTTL`, two hours).
const POOLS_TTL_SECONDS: i64 = 2 * 60 * 60;

/// The backend pools a NIC is put in, and which listing they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Pools {
    /// The pool IDs.
    pub ids: Vec<String>,
    /// The listing they came from: a refresh asked for on pools already
    /// replaced reads the newer ones instead of listing again.
    generation: u64,
}

/// What the provider learnt of the node resource group's network.
#[derive(Debug, Default)]
pub(super) struct Discovery {
    /// The pools, when they were listed, and how many listings there were.
    pools: Mutex<(Option<(Pools, Timestamp)>, u64)>,
    /// The cluster's security group, kept for the process's life (AKS does
    /// not replace it).
    security_group: Mutex<Option<ClusterSecurityGroup>>,
    /// The VNet's resource GUID, once read (it does not change).
    vnet_guid: Mutex<Option<String>>,
}

impl Discovery {
    /// The pools, listed again when older than two hours.
    async fn pools(&self, api: &impl ComputeApi, now: Timestamp) -> Result<Pools, ArmError> {
        if let (Some((pools, read_at)), _) = &*lock(&self.pools)
            && now.as_second() - read_at.as_second() < POOLS_TTL_SECONDS
        {
            return Ok(pools.clone());
        }
        let ids = network::backend_pool_ids(&api.list_load_balancers().await?);
        let mut cache = lock(&self.pools);
        cache.1 += 1;
        let pools = Pools {
            ids,
            generation: cache.1,
        };
        cache.0 = Some((pools.clone(), now));
        Ok(pools)
    }

    /// The pools again after a NIC found `stale` ones gone: listed anew
    /// unless another launch has already done so since.
    async fn refresh(
        &self,
        api: &impl ComputeApi,
        stale: &Pools,
        now: Timestamp,
    ) -> Result<Pools, ArmError> {
        {
            let mut cache = lock(&self.pools);
            if cache.1 == stale.generation {
                cache.0 = None;
            }
        }
        self.pools(api, now).await
    }

    /// The cluster's security group, listed once.
    async fn security_group(
        &self,
        api: &impl ComputeApi,
    ) -> Result<ClusterSecurityGroup, CloudProviderError> {
        if let Some(group) = lock(&self.security_group).clone() {
            return Ok(group);
        }
        let groups = api.list_network_security_groups().await.map_err(|e| {
            // Retryable whatever ARM said: a missing role or a group
            // being made may be set right before the next launch.
            CloudProviderError::api(
                "listing the node resource group's network security groups",
                true,
                e,
            )
        })?;
        let group = network::cluster_security_group(&groups).map_err(|e| {
            CloudProviderError::api("finding the cluster's network security group", true, e)
        })?;
        *lock(&self.security_group) = Some(group.clone());
        Ok(group)
    }
}

/// Whether a NIC failed because ARM no longer has one of the `pools` it
/// named (`InvalidResourceReference` naming a pool ID), which a fresh
/// listing mends; other bad references (subnet, security group) do not.
fn is_stale_pool(error: &ArmError, pools: &Pools) -> bool {
    let Some(azure) = error.azure_error() else {
        return false;
    };
    let message = azure.message.to_ascii_lowercase();
    azure.code.eq_ignore_ascii_case("InvalidResourceReference")
        && pools
            .ids
            .iter()
            .any(|id| message.contains(&id.to_ascii_lowercase()))
}

/// What a joining NIC needs besides its pools.
pub(super) struct NicPlan<'a> {
    /// The join settings.
    pub join: &'a JoinConfig,
    /// The NIC's name.
    pub name: &'a str,
    /// The subnet it joins (the class's, else the cluster's).
    pub subnet: &'a str,
    /// The size launched (accelerated networking).
    pub instance_type: &'a InstanceType,
    /// The node class's settings (maxPods).
    pub settings: &'a Settings,
    /// The NIC's tags.
    pub tags: &'a std::collections::BTreeMap<String, String>,
}

impl<A: ComputeApi> AzureCloudProvider<A> {
    /// The cluster's network security group: the single
    /// `aks-agentpool-<8 digits>-nsg` of the node resource group, listed
    /// once and then kept. None or several is a (retryable) error.
    pub async fn cluster_security_group(&self) -> Result<ClusterSecurityGroup, CloudProviderError> {
        self.discovery.security_group(&self.api).await
    }

    /// The resource GUID of the nodes' VNet, which Azure CNI overlay needs
    /// (the `kubernetes.azure.com/nodenetwork-vnetguid` label): `VNET_GUID`
    /// when set; else, under overlay, read once from the VNet of
    /// `VNET_SUBNET_ID` (in its own resource group, in this client's
    /// subscription) and kept; else (no join configuration, or the node
    /// subnet mode) `None`, as upstream leaves it.
    pub async fn vnet_guid(&self) -> Result<Option<String>, CloudProviderError> {
        let Some(join) = &self.config.join else {
            return Ok(None);
        };
        let settings = &join.settings;
        if let Some(guid) = &settings.vnet_guid {
            return Ok(Some(guid.clone()));
        }
        if settings.network_plugin_mode != NetworkPluginMode::Overlay {
            return Ok(None);
        }
        if let Some(guid) = lock(&self.discovery.vnet_guid).clone() {
            return Ok(Some(guid));
        }
        let subnet = &settings.subnet;
        let vnet = self
            .api
            .get_virtual_network(&subnet.resource_group, &subnet.vnet)
            .await
            .map_err(|e| {
                CloudProviderError::api("reading the nodes' virtual network", e.is_retryable(), e)
            })?
            .ok_or_else(|| NetworkError::VirtualNetworkMissing {
                resource_group: subnet.resource_group.clone(),
                name: subnet.vnet.clone(),
            });
        let guid = vnet.and_then(|vnet| {
            network::vnet_guid(&vnet).map(str::to_owned).ok_or_else(|| {
                NetworkError::VirtualNetworkWithoutGuid {
                    name: subnet.vnet.clone(),
                }
            })
        });
        let guid = guid.map_err(|e| {
            CloudProviderError::api("reading the nodes' virtual network GUID", false, e)
        })?;
        *lock(&self.discovery.vnet_guid) = Some(guid.clone());
        Ok(Some(guid))
    }

    /// Creates a joining node's NIC: in the cluster's pools, with the
    /// cluster's security group when the subnet is not AKS's, and the
    /// secondary addresses Azure CNI needs. A NIC refused for a pool that
    /// is gone is tried once more with the pools listed anew.
    pub(super) async fn create_joining_nic(
        &self,
        plan: &NicPlan<'_>,
    ) -> Result<(), CloudProviderError> {
        let subnet =
            SubnetId::parse(plan.subnet).map_err(|message| CloudProviderError::Create {
                reason: "InvalidSubnet".to_owned(),
                message: format!("the node subnet: {message}"),
                source: None,
            })?;
        let security_group =
            if network::is_aks_managed_subnet(&plan.join.settings.node_resource_group, &subnet) {
                None
            } else {
                Some(self.cluster_security_group().await?)
            };
        let pools_error = |e: ArmError| {
            CloudProviderError::api("listing the node resource group's load balancers", true, e)
        };
        let mut pools = self
            .discovery
            .pools(&self.api, (self.clock)())
            .await
            .map_err(pools_error)?;
        let mut retried = false;
        loop {
            let body = self.joining_nic_body(plan, &pools, security_group.as_ref());
            match self.api.create_nic(plan.name, &body).await {
                Ok(_) => return Ok(()),
                Err(error) if !retried && is_stale_pool(&error, &pools) => {
                    tracing::info!(
                        nic = plan.name,
                        "a load balancer pool is gone: listing again"
                    );
                    pools = self
                        .discovery
                        .refresh(&self.api, &pools, (self.clock)())
                        .await
                        .map_err(pools_error)?;
                    retried = true;
                }
                Err(error) => return Err(api_error(error)),
            }
        }
    }

    /// The NIC body of [`create_joining_nic`](Self::create_joining_nic).
    fn joining_nic_body(
        &self,
        plan: &NicPlan<'_>,
        pools: &Pools,
        security_group: Option<&ClusterSecurityGroup>,
    ) -> Value {
        let settings = &plan.join.settings;
        let mut body = launch::nic_body(&self.config, plan.subnet, plan.instance_type, plan.tags);
        body["properties"]["ipConfigurations"] = Value::Array(network::ip_configurations(
            plan.name,
            plan.subnet,
            &pools.ids,
            settings.network_plugin,
            settings.network_plugin_mode,
            plan.settings.max_pods,
        ));
        if let Some(group) = security_group {
            body["properties"]["networkSecurityGroup"] = json!({"id": group.id});
        }
        body
    }
}

/// Makes the VM `body` a joining node's: the node identities, the admin
/// user from the settings, the ephemeral OS disk's placement, and the disk
/// encryption set.
pub(super) fn shape_vm(body: &mut Value, join: &JoinConfig, sku: &Sku, settings: &Settings) {
    let aks = &join.settings;
    if !aks.node_identities.is_empty() {
        let identities: Map<String, Value> = aks
            .node_identities
            .iter()
            .map(|id| (id.clone(), json!({})))
            .collect();
        body["identity"] = json!({"type": "UserAssigned", "userAssignedIdentities": identities});
    }
    let os_profile = &mut body["properties"]["osProfile"];
    os_profile["adminUsername"] = json!(aks.linux_admin_username);
    os_profile["linuxConfiguration"]["ssh"]["publicKeys"][0]["path"] = json!(format!(
        "/home/{}/.ssh/authorized_keys",
        aks.linux_admin_username
    ));
    let os_disk = &mut body["properties"]["storageProfile"]["osDisk"];
    if let Some((max_gb, placement)) = ephemeral_os_disk(sku)
        && u64::from(settings.os_disk_size_gb) <= max_gb
    {
        os_disk["diffDiskSettings"]["placement"] = json!(placement.as_str());
    }
    if let Some(set) = &aks.disk_encryption_set_id {
        os_disk["managedDisk"]["diskEncryptionSet"] = json!({"id": set});
    }
}

#[cfg(test)]
mod tests;
