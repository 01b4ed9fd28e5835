//! The provider over [`InMemoryCompute`]: VMs of claims launched before it
//! started (a simulation's starting nodes) put into the in-memory ARM, and
//! spot evictions.

use karpenter_core::api::NodeClaim;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_SPOT, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE,
    NODE_POOL_LABEL_KEY,
};
use serde_json::{Value, json};
use thiserror::Error;

use super::{AzureCloudProvider, launch, vm_name_in};
use crate::arm::InMemoryCompute;
use crate::instancetype::labels::SKU_STORAGE_ULTRA_SSD;

/// Why a claim's VM could not be adopted.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdoptError {
    /// The claim has no `status.providerID`: it never launched.
    #[error("NodeClaim {claim} has no status.providerID: it was never launched")]
    NotLaunched {
        /// The claim's name.
        claim: String,
    },
    /// The provider ID is not a VM of this provider's resource group.
    #[error(
        "NodeClaim {claim}: status.providerID {provider_id} is not a VM of this cluster's \
         node resource group (expected {expected}<vm name>)"
    )]
    ForeignProviderId {
        /// The claim's name.
        claim: String,
        /// Its provider ID.
        provider_id: String,
        /// What this provider's VM IDs start with.
        expected: String,
    },
}

impl AzureCloudProvider<InMemoryCompute> {
    /// Puts the VM a launched claim names (by its provider ID, one of this
    /// provider's node resource group) into the in-memory ARM, as the claim
    /// describes it: its size, zone, capacity type and pool from its labels,
    /// its image from `status.imageID`. Reading it back gives the claim's
    /// provider ID and labels, so the driver finds the claim's instance
    /// running, as a controller started on a live cluster does.
    pub fn adopt(&self, claim: &NodeClaim) -> Result<(), AdoptError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let status = claim.status.as_ref();
        let Some(provider_id) = status.and_then(|s| s.provider_id.as_deref()) else {
            return Err(AdoptError::NotLaunched { claim: name });
        };
        let expected = self.provider_id("");
        // Exactly as this provider writes them (AKS writes the resource
        // group in lower case): the driver matches claims to VMs by it.
        let vm = provider_id
            .strip_prefix(expected.as_str())
            .filter(|vm| !vm.is_empty() && !vm.contains('/'))
            .ok_or_else(|| AdoptError::ForeignProviderId {
                claim: name.clone(),
                provider_id: provider_id.to_owned(),
                expected: expected.clone(),
            })?;
        let labels = claim.metadata.labels.clone().unwrap_or_default();
        let label = |key: &str| labels.get(key).map(String::as_str).unwrap_or_default();
        let spot = label(CAPACITY_TYPE_LABEL_KEY) == CAPACITY_TYPE_SPOT;
        // The tags the provider's own launch writes; a claim of no pool
        // gets no pool tag (its VM is then not the provider's to list).
        let class_name = claim.spec.node_class_ref.as_ref().map(|r| r.name.as_str());
        let class = self.node_class(class_name);
        let pool = labels.get(NODE_POOL_LABEL_KEY);
        let mut tags = launch::tags(&self.config, &class, pool.map_or("", String::as_str));
        if pool.is_none() {
            tags.remove("karpenter.sh_nodepool");
        }
        let image_reference = status
            .and_then(|s| s.image_id.as_deref())
            .map_or(Value::Null, launch::image_reference);
        let mut body = json!({
            "location": self.config.region,
            "tags": tags,
            "properties": {
                "hardwareProfile": {"vmSize": label(LABEL_INSTANCE_TYPE_STABLE)},
                "storageProfile": {"imageReference": image_reference},
                "priority": if spot { "Spot" } else { "Regular" },
            },
        });
        if spot {
            body["properties"]["evictionPolicy"] = json!("Delete");
        }
        if label(SKU_STORAGE_ULTRA_SSD) == "true" {
            body["properties"]["additionalCapabilities"] = json!({"ultraSSDEnabled": true});
        }
        // Zone labels are `<region>-<n>`; `0` (or none) is a regional VM.
        let region_prefix = format!("{}-", self.config.region);
        if let Some(zone) = label(LABEL_TOPOLOGY_ZONE).strip_prefix(&region_prefix) {
            body["zones"] = json!([zone]);
        }
        self.api.insert_vm(vm, body);
        Ok(())
    }

    /// Evicts the VM with this provider ID as Azure evicts a spot VM (it is
    /// deleted); whether there was one.
    pub fn evict(&self, provider_id: &str) -> bool {
        self.api.evict(vm_name_in(provider_id))
    }
}

#[cfg(test)]
mod tests {
    use karpenter_core::cloudprovider::CloudProvider;
    use serde_json::json;

    use super::*;
    use crate::{AzureConfig, NetworkOptions};

    fn provider() -> AzureCloudProvider<InMemoryCompute> {
        AzureCloudProvider::new(
            InMemoryCompute::new(),
            AzureConfig {
                subscription: "sub-1".into(),
                resource_group: "MC_rg_cluster_eastus".into(),
                region: "eastus".into(),
                cluster_name: "cluster".into(),
                subnet_id: "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s".into(),
                ssh_public_key: "ssh-ed25519 AAAA test".into(),
                custom_data: None,
                join: None,
                network: NetworkOptions::default(),
            },
        )
    }

    fn claim(provider_id: Option<&str>, labels: serde_json::Value) -> NodeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": "default-abc", "labels": labels},
            "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}},
            "status": {"providerID": provider_id, "imageID": "/CommunityGalleries/AKSUbuntu-38d80f77/images/2204gen2containerd/versions/202501.01.0"},
        }))
        .expect("a claim")
    }

    const ID: &str = "azure:///subscriptions/sub-1/resourceGroups/mc_rg_cluster_eastus/providers/Microsoft.Compute/virtualMachines/aks-default-abc";

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
                return value;
            }
        }
    }

    #[test]
    fn an_adopted_vm_reads_back_as_the_claim() {
        let provider = provider();
        let labels = json!({
            "karpenter.sh/nodepool": "default",
            "node.kubernetes.io/instance-type": "Standard_D4s_v5",
            "topology.kubernetes.io/zone": "eastus-2",
            "karpenter.sh/capacity-type": "spot",
        });
        provider.adopt(&claim(Some(ID), labels)).expect("adopted");
        let listed = block_on(provider.list()).expect("listed");
        assert_eq!(listed.len(), 1);
        let read = &listed[0];
        assert_eq!(read.metadata.name.as_deref(), Some("default-abc"));
        let status = read.status.as_ref().expect("status");
        assert_eq!(status.provider_id.as_deref(), Some(ID));
        assert!(
            status
                .image_id
                .as_deref()
                .is_some_and(|i| i.starts_with("/CommunityGalleries/"))
        );
        let labels = read.metadata.labels.as_ref().expect("labels");
        for (key, value) in [
            ("karpenter.sh/nodepool", "default"),
            ("node.kubernetes.io/instance-type", "Standard_D4s_v5"),
            ("topology.kubernetes.io/zone", "eastus-2"),
            ("karpenter.sh/capacity-type", "spot"),
            ("karpenter.azure.com/sku-cpu", "4"),
        ] {
            assert_eq!(labels.get(key).map(String::as_str), Some(value), "{key}");
        }
        // A spot eviction takes it away, once.
        assert!(provider.evict(ID));
        assert!(!provider.evict(ID));
        assert!(block_on(provider.list()).expect("listed").is_empty());
    }

    #[test]
    fn a_regional_on_demand_vm_has_no_zone() {
        let provider = provider();
        let labels = json!({
            "karpenter.sh/nodepool": "default",
            "node.kubernetes.io/instance-type": "Standard_D2s_v5",
            "topology.kubernetes.io/zone": "0",
            "karpenter.sh/capacity-type": "on-demand",
        });
        provider.adopt(&claim(Some(ID), labels)).expect("adopted");
        let read = block_on(provider.get(ID)).expect("found");
        let labels = read.metadata.labels.expect("labels");
        assert_eq!(labels["topology.kubernetes.io/zone"], "0");
        assert_eq!(labels["karpenter.sh/capacity-type"], "on-demand");
    }

    #[test]
    fn only_launched_claims_of_this_resource_group_are_adopted() {
        let provider = provider();
        assert_eq!(
            provider.adopt(&claim(None, json!({}))),
            Err(AdoptError::NotLaunched {
                claim: "default-abc".into()
            })
        );
        for foreign in [
            "fake:///default-abc",
            "azure:///subscriptions/sub-2/resourceGroups/mc_rg_cluster_eastus/providers/Microsoft.Compute/virtualMachines/aks-default-abc",
            "azure:///subscriptions/sub-1/resourceGroups/mc_rg_cluster_eastus/providers/Microsoft.Compute/virtualMachines/",
            "azure:///subscriptions/sub-1/resourceGroups/mc_rg_cluster_eastus/providers/Microsoft.Compute/virtualMachines/a/b",
        ] {
            let error = provider
                .adopt(&claim(Some(foreign), json!({})))
                .expect_err(foreign);
            assert!(
                matches!(error, AdoptError::ForeignProviderId { .. }),
                "{foreign}: {error}"
            );
        }
        // The resource group as AKS writes it, in lower case: another
        // case would not match the VMs read back.
        let upper = ID.replace("mc_rg_cluster_eastus", "MC_rg_cluster_eastus");
        assert!(provider.adopt(&claim(Some(&upper), json!({}))).is_err());
        provider
            .adopt(&claim(Some(ID), json!({})))
            .expect("adopted");
        assert_eq!(provider.api().vm_names(), ["aks-default-abc"]);
    }
}
