//! [`InMemoryCompute`]: Azure Resource Manager in memory, as far as the
//! provider uses it: NICs and VMs in one resource group, its load balancers
//! and security groups (an AKS node group's by default), sizes that fail to
//! allocate, spot evictions, the SKU and price lists a caller sets, and
//! community gallery image versions (a fixed pair unless set).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{ArmError, ComputeApi, PriceItem};

mod network;

pub use network::{IN_MEMORY_GROUP_ID, load_balancer, network_security_group};
use network::{missing_pool, names, pool_ids};

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

#[derive(Debug)]
struct State {
    vms: BTreeMap<String, Value>,
    nics: BTreeMap<String, Value>,
    load_balancers: Vec<Value>,
    security_groups: Vec<Value>,
    virtual_networks: Vec<Value>,
    /// How many times each listing was asked for: (load balancers,
    /// security groups).
    listings: (usize, usize),
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

impl Default for State {
    /// An AKS-like node resource group: the `kubernetes` load balancer with
    /// its inbound and outbound pools, and the cluster's security group.
    fn default() -> Self {
        State {
            vms: BTreeMap::new(),
            nics: BTreeMap::new(),
            load_balancers: vec![load_balancer(
                IN_MEMORY_GROUP_ID,
                "kubernetes",
                &["kubernetes", "aksOutboundBackendPool"],
            )],
            security_groups: vec![network_security_group(
                IN_MEMORY_GROUP_ID,
                "aks-agentpool-12345678-nsg",
            )],
            virtual_networks: Vec::new(),
            listings: (0, 0),
            sold_out: BTreeSet::new(),
            resource_skus: Vec::new(),
            retail_prices: Vec::new(),
            image_versions: BTreeMap::new(),
            image_version_lists: 0,
        }
    }
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
    /// A resource group with no VMs, holding what AKS puts in a node
    /// resource group (the `kubernetes` load balancer with pools
    /// `kubernetes` and `aksOutboundBackendPool`, the security group
    /// `aks-agentpool-12345678-nsg`, both in [`IN_MEMORY_GROUP_ID`]), with no
    /// SKUs and no prices listed.
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

    /// This ARM listing `load_balancers` in the node resource group
    /// (instead of the one `kubernetes` load balancer it starts with).
    pub fn with_load_balancers(self, load_balancers: Vec<Value>) -> Self {
        self.set_load_balancers(load_balancers);
        self
    }

    /// This ARM listing `groups` as the node resource group's network
    /// security groups (instead of the one it starts with).
    pub fn with_network_security_groups(self, groups: Vec<Value>) -> Self {
        self.lock().security_groups = groups;
        self
    }

    /// This ARM holding `networks` (each found by its `id`'s resource
    /// group and name).
    pub fn with_virtual_networks(self, networks: Vec<Value>) -> Self {
        self.lock().virtual_networks = networks;
        self
    }

    /// From now on, the node resource group's load balancers are
    /// `load_balancers`: a NIC naming a pool no longer there fails as ARM
    /// fails it.
    pub fn set_load_balancers(&self, load_balancers: Vec<Value>) {
        self.lock().load_balancers = load_balancers;
    }

    /// How many times the load balancers were listed.
    pub fn load_balancer_listings(&self) -> usize {
        self.lock().listings.0
    }

    /// How many times the network security groups were listed.
    pub fn security_group_listings(&self) -> usize {
        self.lock().listings.1
    }

    /// The NIC `name` as it was last put.
    pub fn nic(&self, name: &str) -> Option<Value> {
        self.lock().nics.get(name).cloned()
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
    /// Puts the NIC; as ARM does, a NIC naming a backend pool that no
    /// load balancer has fails (`InvalidResourceReference`, HTTP 400).
    async fn create_nic(&self, name: &str, body: &Value) -> Result<Value, ArmError> {
        let mut state = self.lock();
        if let Some(pool) = missing_pool(body, &pool_ids(&state.load_balancers)) {
            return Err(ArmError::Azure {
                status: 400,
                code: "InvalidResourceReference".to_owned(),
                message: format!(
                    "Resource {pool} referenced by resource {name} was not found. \
                     Please make sure that the referenced resource exists, and that both \
                     resources are in the same region."
                ),
            });
        }
        let mut nic = body.clone();
        if nic.is_object() {
            nic["name"] = json!(name);
        }
        state.nics.insert(name.to_owned(), nic.clone());
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

    async fn list_load_balancers(&self) -> Result<Vec<Value>, ArmError> {
        let mut state = self.lock();
        state.listings.0 += 1;
        Ok(state.load_balancers.clone())
    }

    async fn list_network_security_groups(&self) -> Result<Vec<Value>, ArmError> {
        let mut state = self.lock();
        state.listings.1 += 1;
        Ok(state.security_groups.clone())
    }

    async fn get_virtual_network(
        &self,
        resource_group: &str,
        name: &str,
    ) -> Result<Option<Value>, ArmError> {
        Ok(self
            .lock()
            .virtual_networks
            .iter()
            .find(|vnet| {
                names(
                    vnet["id"].as_str().unwrap_or_default(),
                    resource_group,
                    name,
                )
            })
            .cloned())
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
