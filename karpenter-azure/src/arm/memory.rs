//! [`InMemoryCompute`]: Azure Resource Manager in memory, as far as the
//! provider uses it: NICs and VMs in one resource group, sizes that fail to
//! allocate, spot evictions, the SKU and price lists a caller sets, and
//! community gallery image versions (a fixed pair unless set).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{ArmError, ComputeApi, PriceItem};

/// ARM in memory: what [`ComputeApi`] reads and writes, kept in this
/// process, every call answered at once.
///
/// Clones share the same resources, so a caller can keep one to look at
/// the VMs, sell sizes out or evict spot VMs while an
/// [`AzureCloudProvider`](crate::AzureCloudProvider) works on another:
///
/// ```
/// use karpenter_azure::arm::{ComputeApi, InMemoryCompute};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), karpenter_azure::arm::ArmError> {
/// let arm = InMemoryCompute::new();
/// let vm = |size: &str| json!({"properties": {"hardwareProfile": {"vmSize": size}}, "zones": ["1"]});
/// let created = arm.create_vm("aks-default-00001", &vm("Standard_D2s_v5")).await?;
/// assert_eq!(created["properties"]["provisioningState"], "Succeeded");
/// // Sold out: ARM's allocation failure, which the provider's failure
/// // cache reads as no capacity for the size in the zone.
/// arm.sell_out("Standard_D4s_v5", "1");
/// assert!(arm.create_vm("aks-default-00002", &vm("Standard_D4s_v5")).await.is_err());
/// assert_eq!(arm.vm_names(), ["aks-default-00001"]);
/// // A spot eviction takes the VM away.
/// assert!(arm.evict("aks-default-00001"));
/// assert!(arm.list_vms().await?.is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct InMemoryCompute {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    vms: BTreeMap<String, Value>,
    nics: BTreeMap<String, Value>,
    /// `(vmSize, zone)` pairs with no capacity (zone `""` for a VM
    /// without a zone).
    sold_out: BTreeSet<(String, String)>,
    resource_skus: Vec<Value>,
    retail_prices: Vec<PriceItem>,
    /// Versions listed for `(gallery, image)`; others get
    /// [`default_image_versions`].
    image_versions: BTreeMap<(String, String), Vec<Value>>,
    /// How many times the image versions were listed.
    image_version_lists: usize,
}

/// The versions every community gallery image has unless set: two builds,
/// the newer (`202505.27.0`) listed first so that picking by position
/// rather than by `publishedDate` shows.
pub(crate) fn default_image_versions(location: &str) -> Vec<Value> {
    let version = |name: &str, published: &str| json!({"name": name, "location": location, "properties": {"publishedDate": published}});
    vec![
        version("202505.27.0", "2025-05-27T17:40:04.2453383+00:00"),
        version("202505.20.0", "2025-05-20T11:02:51.5102318+00:00"),
    ]
}

impl State {
    /// Deletes the VM `name` and, as ARM does, the NICs it names with
    /// `deleteOption: Delete`; whether it was there.
    fn delete_vm(&mut self, name: &str) -> bool {
        let Some(vm) = self.vms.remove(name) else {
            return false;
        };
        let nics = vm["properties"]["networkProfile"]["networkInterfaces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|nic| nic["properties"]["deleteOption"] == "Delete")
            .filter_map(|nic| nic["id"].as_str()?.rsplit('/').next());
        for nic in nics {
            self.nics.remove(nic);
        }
        true
    }
}

/// The zone a VM body asks for (`""` for none).
fn zone_of(body: &Value) -> &str {
    body["zones"][0].as_str().unwrap_or_default()
}

impl InMemoryCompute {
    /// An empty resource group, with no SKUs and no prices listed.
    pub fn new() -> Self {
        Self::default()
    }

    /// This ARM listing `skus` as the Resource SKUs of every region.
    pub fn with_resource_skus(self, skus: Vec<Value>) -> Self {
        self.lock().resource_skus = skus;
        self
    }

    /// This ARM listing `items` as the Retail Prices of every region.
    pub fn with_retail_prices(self, items: Vec<PriceItem>) -> Self {
        self.lock().retail_prices = items;
        self
    }

    /// This ARM listing `versions` as the versions of the image definition
    /// `image` of the community gallery `gallery`, in every location (an
    /// empty list: the image has none).
    pub fn set_image_versions(&self, gallery: &str, image: &str, versions: Vec<Value>) {
        self.lock()
            .image_versions
            .insert((gallery.to_owned(), image.to_owned()), versions);
    }

    /// How many times community gallery image versions were listed.
    pub fn image_version_lists(&self) -> usize {
        self.lock().image_version_lists
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on, creating a VM of `size` in `zone` (`"1"`, or `""` for
    /// no zone) fails as Azure does when it has no capacity there
    /// (`ZonalAllocationFailed`, HTTP 409).
    pub fn sell_out(&self, size: &str, zone: &str) {
        self.lock()
            .sold_out
            .insert((size.to_owned(), zone.to_owned()));
    }

    /// Gives back the capacity [`sell_out`](Self::sell_out) took.
    pub fn restock(&self, size: &str, zone: &str) {
        self.lock()
            .sold_out
            .remove(&(size.to_owned(), zone.to_owned()));
    }

    /// Puts a VM as ARM holds it (`name` set, provisioned) into the
    /// resource group, as if it had been created earlier: a cluster's
    /// starting nodes.
    pub fn insert_vm(&self, name: &str, body: Value) {
        let vm = provisioned(name, body);
        self.lock().vms.insert(name.to_owned(), vm);
    }

    /// Evicts the VM `name` as Azure evicts a spot VM whose eviction
    /// policy is `Delete`: it is deleted, with the NICs a deletion takes.
    /// Whether it was there.
    pub fn evict(&self, name: &str) -> bool {
        self.lock().delete_vm(name)
    }

    /// The names of the VMs, in order.
    pub fn vm_names(&self) -> Vec<String> {
        self.lock().vms.keys().cloned().collect()
    }

    /// The names of the NICs, in order.
    pub fn nic_names(&self) -> Vec<String> {
        self.lock().nics.keys().cloned().collect()
    }
}

/// `body` as ARM answers for the VM `name`: named, provisioned.
fn provisioned(name: &str, mut body: Value) -> Value {
    if !body.is_object() {
        body = json!({});
    }
    body["name"] = json!(name);
    body["type"] = json!("Microsoft.Compute/virtualMachines");
    if !body["properties"].is_object() {
        body["properties"] = json!({});
    }
    body["properties"]["provisioningState"] = json!("Succeeded");
    body
}

#[async_trait]
impl ComputeApi for InMemoryCompute {
    async fn create_nic(&self, name: &str, body: &Value) -> Result<Value, ArmError> {
        let mut nic = body.clone();
        if nic.is_object() {
            nic["name"] = json!(name);
        }
        self.lock().nics.insert(name.to_owned(), nic.clone());
        Ok(nic)
    }

    async fn create_vm(&self, name: &str, body: &Value) -> Result<Value, ArmError> {
        let mut state = self.lock();
        let size = body["properties"]["hardwareProfile"]["vmSize"]
            .as_str()
            .unwrap_or_default();
        let zone = zone_of(body);
        if state.sold_out.contains(&(size.to_owned(), zone.to_owned())) {
            return Err(ArmError::Azure {
                status: 409,
                code: "ZonalAllocationFailed".to_owned(),
                message: format!(
                    "Allocation failed. We do not have sufficient capacity for the requested VM size {size} in zone {zone}."
                ),
            });
        }
        let vm = provisioned(name, body.clone());
        state.vms.insert(name.to_owned(), vm.clone());
        Ok(vm)
    }

    async fn get_vm(&self, name: &str) -> Result<Option<Value>, ArmError> {
        Ok(self.lock().vms.get(name).cloned())
    }

    /// Deletes the VM and, as ARM does, the NICs it names with
    /// `deleteOption: Delete`.
    async fn delete_vm(&self, name: &str) -> Result<bool, ArmError> {
        Ok(self.lock().delete_vm(name))
    }

    async fn delete_nic(&self, name: &str) -> Result<bool, ArmError> {
        Ok(self.lock().nics.remove(name).is_some())
    }

    async fn list_vms(&self) -> Result<Vec<Value>, ArmError> {
        Ok(self.lock().vms.values().cloned().collect())
    }

    async fn resource_skus(&self, _region: &str) -> Result<Vec<Value>, ArmError> {
        Ok(self.lock().resource_skus.clone())
    }

    async fn retail_prices(&self, _region: &str) -> Result<Vec<PriceItem>, ArmError> {
        Ok(self.lock().retail_prices.clone())
    }

    async fn list_community_gallery_image_versions(
        &self,
        location: &str,
        gallery: &str,
        image: &str,
    ) -> Result<Vec<Value>, ArmError> {
        let mut state = self.lock();
        state.image_version_lists += 1;
        let key = (gallery.to_owned(), image.to_owned());
        Ok(state
            .image_versions
            .get(&key)
            .cloned()
            .unwrap_or_else(|| default_image_versions(location)))
    }
}
