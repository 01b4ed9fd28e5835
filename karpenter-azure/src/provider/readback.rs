//! VMs read back as claims: the provider ID, and the labels AKS nodes carry
//! that a VM shows (size, zone and placement scope, priority and capacity
//! type, Ultra SSD, the pool's tag, the size's own labels), as upstream's
//! `vmInstanceToNodeClaim` rebuilds them.

use std::collections::BTreeMap;

use karpenter_core::api::NodeClaim;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT,
    LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, NODE_POOL_LABEL_KEY,
};
use serde_json::Value;

use super::AzureCloudProvider;
use crate::arm::ComputeApi;
use crate::instancetype::labels::{
    PLACEMENT_SCOPE, PRIORITY, SCALE_SET_PRIORITY, SKU_STORAGE_ULTRA_SSD,
};
use crate::instancetype::{Settings, placement_scope, zone_label};

impl<A: ComputeApi> AzureCloudProvider<A> {
    /// The provider ID of the VM named `vm`.
    pub(super) fn provider_id(&self, vm: &str) -> String {
        format!(
            "azure:///subscriptions/{}/resourceGroups/{}/providers/Microsoft.Compute/virtualMachines/{vm}",
            self.config.subscription,
            self.config.resource_group.to_lowercase()
        )
    }

    /// A VM read back as a claim: name, labels from the VM and its tags,
    /// provider ID, capacity and image.
    pub(super) fn claim_of(&self, vm: &Value) -> NodeClaim {
        let name = vm["name"].as_str().unwrap_or_default();
        let size = vm["properties"]["hardwareProfile"]["vmSize"]
            .as_str()
            .unwrap_or_default();
        let zone = vm["zones"][0]
            .as_str()
            .and_then(|z| z.parse().ok())
            .map_or_else(|| "0".to_owned(), |z| zone_label(&self.config.region, z));
        let capacity_type = if vm["properties"]["priority"] == "Spot" {
            CAPACITY_TYPE_SPOT
        } else {
            CAPACITY_TYPE_ON_DEMAND
        };
        let mut claim = NodeClaim::default();
        claim.metadata.name = Some(name.strip_prefix("aks-").unwrap_or(name).to_owned());
        let priority = if capacity_type == CAPACITY_TYPE_SPOT {
            "spot"
        } else {
            "regular"
        };
        let ultra = vm["properties"]["additionalCapabilities"]["ultraSSDEnabled"] == true;
        let mut labels = BTreeMap::from([
            (LABEL_INSTANCE_TYPE_STABLE.to_owned(), size.to_owned()),
            (
                PLACEMENT_SCOPE.to_owned(),
                placement_scope(&zone).to_owned(),
            ),
            (LABEL_TOPOLOGY_ZONE.to_owned(), zone),
            (CAPACITY_TYPE_LABEL_KEY.to_owned(), capacity_type.to_owned()),
            (SCALE_SET_PRIORITY.to_owned(), priority.to_owned()),
            (PRIORITY.to_owned(), priority.to_owned()),
            (SKU_STORAGE_ULTRA_SSD.to_owned(), ultra.to_string()),
        ]);
        if let Some(pool) = vm["tags"]["karpenter.sh_nodepool"].as_str() {
            labels.insert(NODE_POOL_LABEL_KEY.to_owned(), pool.to_owned());
        }
        if let Some(sku) = self.catalog.sku(size) {
            let mut settings = Settings::for_region(&self.config.region);
            settings.node_resource_group = Some(self.config.resource_group.clone());
            labels.extend(crate::instancetype::labels::single_valued(
                self.catalog,
                sku,
                &settings,
            ));
        }
        claim.metadata.labels = Some(labels);
        let status = claim.status.get_or_insert_with(Default::default);
        status.provider_id = Some(self.provider_id(name));
        let image = &vm["properties"]["storageProfile"]["imageReference"];
        status.image_id = image["communityGalleryImageId"]
            .as_str()
            .or_else(|| image["id"].as_str())
            .map(str::to_owned);
        claim
    }
}
