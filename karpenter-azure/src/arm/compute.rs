//! The ARM calls the provider makes, behind [`ComputeApi`]: NICs and VMs in
//! the node resource group, the load balancers, security groups and VNet a
//! joining node's NIC refers to, the Resource SKUs list, the Retail Prices
//! API, and the versions of AKS's community gallery images.

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use super::{ArmClient, ArmError};

/// The token scope of Azure Resource Manager.
pub const ARM_SCOPE: &str = "https://management.azure.com/.default";

/// The `api-version` of each resource provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeApiVersions {
    /// `Microsoft.Compute/virtualMachines`.
    pub compute: String,
    /// `Microsoft.Network/networkInterfaces`.
    pub network: String,
    /// `Microsoft.Compute/skus`.
    pub skus: String,
    /// `Microsoft.Compute/locations/communityGalleries` (the gallery API's
    /// own versions).
    pub galleries: String,
}

impl Default for ComputeApiVersions {
    fn default() -> Self {
        ComputeApiVersions {
            compute: "2024-07-01".to_owned(),
            network: "2024-05-01".to_owned(),
            skus: "2021-07-01".to_owned(),
            galleries: "2024-03-03".to_owned(),
        }
    }
}

/// One item of the Retail Prices API.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceItem {
    /// The VM size (`Standard_D4s_v5`).
    #[serde(default)]
    pub arm_sku_name: String,
    /// The region.
    #[serde(default)]
    pub arm_region_name: String,
    /// USD per hour.
    #[serde(default)]
    pub retail_price: f64,
    /// The meter's SKU name (`D4s v5 Spot`).
    #[serde(default)]
    pub sku_name: String,
    /// The product (`Virtual Machines Dsv5 Series Windows`).
    #[serde(default)]
    pub product_name: String,
    /// The meter (`D4s v5 Low Priority`).
    #[serde(default)]
    pub meter_name: String,
}

/// On-demand and spot prices by size, from Retail Prices items as upstream
/// reads them: Windows products and low-priority meters dropped, `Spot` SKU
/// names to the spot table.
pub fn price_tables(items: &[PriceItem]) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    let mut on_demand = BTreeMap::new();
    let mut spot = BTreeMap::new();
    for item in items {
        if item.product_name.ends_with(" Windows") || item.meter_name.ends_with(" Low Priority") {
            continue;
        }
        let table = if item.sku_name.ends_with(" Spot") {
            &mut spot
        } else {
            &mut on_demand
        };
        table.insert(item.arm_sku_name.clone(), item.retail_price);
    }
    (on_demand, spot)
}

/// What the provider asks of Azure. [`ArmClient`] implements it over REST;
/// tests may fake it.
#[async_trait]
pub trait ComputeApi: Send + Sync + fmt::Debug {
    /// Creates (or updates) the NIC `name` and waits for it.
    async fn create_nic(&self, name: &str, body: &Value) -> Result<Value, ArmError>;
    /// Creates the VM `name` and waits for it.
    async fn create_vm(&self, name: &str, body: &Value) -> Result<Value, ArmError>;
    /// The VM `name`, if it exists.
    async fn get_vm(&self, name: &str) -> Result<Option<Value>, ArmError>;
    /// Deletes the VM `name` (forced, with its disk and NIC); `false` when it
    /// was not there.
    async fn delete_vm(&self, name: &str) -> Result<bool, ArmError>;
    /// Deletes the NIC `name`; `false` when it was not there.
    async fn delete_nic(&self, name: &str) -> Result<bool, ArmError>;
    /// Every VM in the node resource group.
    async fn list_vms(&self) -> Result<Vec<Value>, ArmError>;
    /// The Resource SKUs of `region`.
    async fn resource_skus(&self, region: &str) -> Result<Vec<Value>, ArmError>;
    /// The Retail Prices items of Linux VMs in `region`.
    async fn retail_prices(&self, region: &str) -> Result<Vec<PriceItem>, ArmError>;
    /// Every load balancer in the node resource group (whose backend pools
    /// a joining node's NIC is put in).
    async fn list_load_balancers(&self) -> Result<Vec<Value>, ArmError>;
    /// Every network security group in the node resource group (the
    /// cluster's is put on a NIC in a VNet the cluster does not manage).
    async fn list_network_security_groups(&self) -> Result<Vec<Value>, ArmError>;
    /// The virtual network `name` of `resource_group` in the client's
    /// subscription (a VNet brought by the user may be in another group),
    /// if it exists.
    async fn get_virtual_network(
        &self,
        resource_group: &str,
        name: &str,
    ) -> Result<Option<Value>, ArmError>;
    /// The versions of the image definition `image` in the community
    /// gallery `gallery` (its public name), as listed in `location`: ARM's
    /// items, each with its `name` and `properties.publishedDate`.
    async fn list_community_gallery_image_versions(
        &self,
        location: &str,
        gallery: &str,
        image: &str,
    ) -> Result<Vec<Value>, ArmError>;
}

impl ArmClient {
    /// The listing URL of every `kind` of `provider` in the node resource
    /// group.
    fn group_list_url(&self, provider: &str, kind: &str, api_version: &str) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}/providers/{provider}/{kind}?api-version={api_version}",
            self.subscription, self.resource_group
        )
    }

    fn group_path(&self, provider: &str, kind: &str, name: &str) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}/providers/{provider}/{kind}/{name}",
            self.subscription, self.resource_group
        )
    }
}

#[async_trait]
impl ComputeApi for ArmClient {
    async fn create_nic(&self, name: &str, body: &Value) -> Result<Value, ArmError> {
        let path = self.group_path("Microsoft.Network", "networkInterfaces", name);
        self.put(&path, &self.versions.network, body).await
    }

    async fn create_vm(&self, name: &str, body: &Value) -> Result<Value, ArmError> {
        let path = self.group_path("Microsoft.Compute", "virtualMachines", name);
        self.put(&path, &self.versions.compute, body).await
    }

    async fn get_vm(&self, name: &str) -> Result<Option<Value>, ArmError> {
        let path = self.group_path("Microsoft.Compute", "virtualMachines", name);
        self.get(&path, &self.versions.compute).await
    }

    async fn delete_vm(&self, name: &str) -> Result<bool, ArmError> {
        let path = self.group_path("Microsoft.Compute", "virtualMachines", name);
        self.delete(&path, &self.versions.compute, "&forceDeletion=true")
            .await
    }

    async fn delete_nic(&self, name: &str) -> Result<bool, ArmError> {
        let path = self.group_path("Microsoft.Network", "networkInterfaces", name);
        self.delete(&path, &self.versions.network, "").await
    }

    async fn list_vms(&self) -> Result<Vec<Value>, ArmError> {
        let url = self.group_list_url(
            "Microsoft.Compute",
            "virtualMachines",
            &self.versions.compute,
        );
        self.list(&url).await
    }

    async fn resource_skus(&self, region: &str) -> Result<Vec<Value>, ArmError> {
        let url = format!(
            "/subscriptions/{}/providers/Microsoft.Compute/skus?api-version={}&$filter=location eq '{region}'",
            self.subscription, self.versions.skus
        );
        self.list(&url).await
    }

    async fn retail_prices(&self, region: &str) -> Result<Vec<PriceItem>, ArmError> {
        let url = format!(
            "{}?$filter=priceType eq 'Consumption' and currencyCode eq 'USD' and serviceFamily eq 'Compute' \
             and serviceName eq 'Virtual Machines' and armRegionName eq '{region}'",
            self.prices_url
        );
        self.list(&url)
            .await?
            .into_iter()
            .map(|item| {
                serde_json::from_value(item).map_err(|source| ArmError::Decode {
                    url: url.clone(),
                    status: 200,
                    source,
                })
            })
            .collect()
    }

    async fn list_load_balancers(&self) -> Result<Vec<Value>, ArmError> {
        let url = self.group_list_url("Microsoft.Network", "loadBalancers", &self.versions.network);
        self.list(&url).await
    }

    async fn list_network_security_groups(&self) -> Result<Vec<Value>, ArmError> {
        let url = self.group_list_url(
            "Microsoft.Network",
            "networkSecurityGroups",
            &self.versions.network,
        );
        self.list(&url).await
    }

    async fn get_virtual_network(
        &self,
        resource_group: &str,
        name: &str,
    ) -> Result<Option<Value>, ArmError> {
        let path = format!(
            "/subscriptions/{}/resourceGroups/{resource_group}/providers/Microsoft.Network/virtualNetworks/{name}",
            self.subscription
        );
        self.get(&path, &self.versions.network).await
    }

    async fn list_community_gallery_image_versions(
        &self,
        location: &str,
        gallery: &str,
        image: &str,
    ) -> Result<Vec<Value>, ArmError> {
        let url = format!(
            "/subscriptions/{}/providers/Microsoft.Compute/locations/{location}/communityGalleries/{gallery}/images/{image}/versions?api-version={}",
            self.subscription, self.versions.galleries
        );
        self.list(&url).await
    }
}
