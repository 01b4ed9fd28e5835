//! What a launch sends: the offering chosen as upstream ranks them, and the
//! NIC and VM bodies (tags, zones, spot priority with eviction policy Delete
//! and no price cap, OS disk, image, network).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use karpenter_core::cloudprovider::{InstanceType, LaunchRank, Offering};
use karpenter_core::scheduling::{CAPACITY_TYPE_SPOT, Requirements};
use serde_json::{Value, json};

use super::AzureConfig;
use crate::catalog::Sku;
use crate::instancetype::Settings;
use crate::instancetype::labels::{
    SKU_NETWORKING_ACCELERATED, SKU_STORAGE_ULTRA_SSD, ephemeral_os_max_size_gb,
};
use crate::nodeclass::AKSNodeClass;

/// The Azure provider's launch rank (upstream's: price, then spot before
/// on-demand, zonal before regional, then name and zone), which its `create`
/// follows and a plan on Azure names its launch by.
pub const LAUNCH_RANK: LaunchRank = LaunchRank::new("azure", rank);

/// Upstream's ranking of offerings (for [`choose_offering`](karpenter_core::cloudprovider::choose_offering)): price, then
/// on equal prices spot before on-demand, zonal before
/// regional; then by name and zone so that the choice is the same every run.
pub(super) fn rank(a: (&InstanceType, &Offering), b: (&InstanceType, &Offering)) -> Ordering {
    let spot = |o: &Offering| o.capacity_type != CAPACITY_TYPE_SPOT;
    let regional = |o: &Offering| o.zone == "0";
    a.1.price
        .total_cmp(&b.1.price)
        .then_with(|| spot(a.1).cmp(&spot(b.1)))
        .then_with(|| regional(a.1).cmp(&regional(b.1)))
        .then_with(|| a.0.name.cmp(&b.0.name))
        .then_with(|| a.1.zone.cmp(&b.1.zone))
}

/// Whether the claim asks for Ultra SSD explicitly: its requirement on
/// `karpenter.azure.com/sku-storage-ultra-ssd` allows `true` and not `false`,
/// as upstream's `resolveUltraSSDRequested` reads it. Only then is the VM
/// created with the capability (an unspecified or open request gets none).
pub(super) fn ultra_ssd_requested(requirements: &Requirements) -> bool {
    requirements
        .get_defined(SKU_STORAGE_ULTRA_SSD)
        .is_some_and(|r| r.has("true") && !r.has("false"))
}

/// Enables Ultra SSD on the VM `body` (`additionalCapabilities`), as
/// upstream's `setVMPropertiesAdditionalCapabilities` does when asked.
pub(super) fn enable_ultra_ssd(body: &mut Value) {
    body["properties"]["additionalCapabilities"] = json!({"ultraSSDEnabled": true});
}

/// Tags on the VM and NIC: the cluster, billing, the pool, the node
/// class's, and for a joining node the settings' `ADDITIONAL_TAGS` (`/` in
/// keys becomes `_`; the class's win over the additional ones and the
/// provider's own over both, as upstream's `launchtemplate.Tags` orders
/// them).
pub(super) fn tags(
    config: &AzureConfig,
    class: &AKSNodeClass,
    pool: &str,
) -> BTreeMap<String, String> {
    let additional = config
        .join
        .iter()
        .flat_map(|join| &join.settings.additional_tags);
    let mut tags: BTreeMap<String, String> = additional
        .chain(class.spec.tags.iter().flatten())
        .map(|(k, v)| (k.replace('/', "_"), v.clone()))
        .collect();
    tags.insert(
        "karpenter.azure.com_cluster".to_owned(),
        config.cluster_name.clone(),
    );
    tags.insert("compute.aks.billing".to_owned(), "linux".to_owned());
    tags.insert("karpenter.sh_nodepool".to_owned(), pool.to_owned());
    tags
}

/// The NIC's ARM ID.
pub(super) fn nic_id(config: &AzureConfig, name: &str) -> String {
    format!(
        "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Network/networkInterfaces/{name}",
        config.subscription, config.resource_group
    )
}

/// The NIC: one dynamic IPv4 configuration in the subnet, accelerated
/// networking where the size has it.
pub(super) fn nic_body(
    config: &AzureConfig,
    subnet_id: &str,
    instance_type: &InstanceType,
    tags: &BTreeMap<String, String>,
) -> Value {
    let accelerated = instance_type
        .requirements
        .labels()
        .get(SKU_NETWORKING_ACCELERATED)
        .is_some_and(|v| v == "true");
    json!({
        "location": config.region,
        "tags": tags,
        "properties": {
            "ipConfigurations": [{
                "name": "ipconfig1",
                "properties": {
                    "primary": true,
                    "privateIPAllocationMethod": "Dynamic",
                    "subnet": {"id": subnet_id},
                },
            }],
            "enableAcceleratedNetworking": accelerated,
            "enableIPForwarding": false,
        },
    })
}

/// The subnet a node of `class` joins: the class's `vnetSubnetID`, else
/// the cluster's, as upstream picks it (the custom data names the same).
pub(super) fn nic_subnet<'a>(config: &'a AzureConfig, class: &'a AKSNodeClass) -> &'a str {
    class
        .spec
        .vnet_subnet_id
        .as_deref()
        .filter(|id| !id.trim().is_empty())
        .unwrap_or(&config.subnet_id)
}

/// A VM's `imageReference` for an image ID: a community gallery's by its
/// own key, any other by `id`.
pub(super) fn image_reference(image: &str) -> Value {
    if image.starts_with("/CommunityGalleries/") {
        json!({"communityGalleryImageId": image})
    } else {
        json!({"id": image})
    }
}

/// The VM.
pub(super) fn vm_body(
    config: &AzureConfig,
    name: &str,
    sku: &Sku,
    offering: &Offering,
    settings: &Settings,
    image: &str,
    tags: &BTreeMap<String, String>,
) -> Value {
    let image_reference = image_reference(image);
    let mut os_disk = json!({
        "name": name,
        "createOption": "FromImage",
        "deleteOption": "Delete",
        "diskSizeGB": settings.os_disk_size_gb,
    });
    if u64::from(settings.os_disk_size_gb) <= ephemeral_os_max_size_gb(sku) {
        os_disk["caching"] = json!("ReadOnly");
        os_disk["diffDiskSettings"] = json!({"option": "Local"});
    }
    let mut properties = json!({
        "hardwareProfile": {"vmSize": sku.name},
        "storageProfile": {"osDisk": os_disk, "imageReference": image_reference},
        "osProfile": {
            "computerName": name,
            "adminUsername": "azureuser",
            "linuxConfiguration": {
                "disablePasswordAuthentication": true,
                "ssh": {"publicKeys": [{
                    "path": "/home/azureuser/.ssh/authorized_keys",
                    "keyData": config.ssh_public_key,
                }]},
            },
        },
        "networkProfile": {"networkInterfaces": [{
            "id": nic_id(config, name),
            "properties": {"primary": true, "deleteOption": "Delete"},
        }]},
        "priority": if offering.capacity_type == CAPACITY_TYPE_SPOT { "Spot" } else { "Regular" },
    });
    if offering.capacity_type == CAPACITY_TYPE_SPOT {
        properties["evictionPolicy"] = json!("Delete");
        properties["billingProfile"] = json!({"maxPrice": -1});
    }
    if let Some(data) = &config.custom_data {
        properties["osProfile"]["customData"] = json!(data);
    }
    let mut body = json!({"location": config.region, "tags": tags, "properties": properties});
    if let Some(zone) = offering.zone.rsplit_once('-').map(|(_, n)| n) {
        body["zones"] = json!([zone]);
    }
    body
}
