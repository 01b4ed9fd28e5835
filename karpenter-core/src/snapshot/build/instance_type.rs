//! An instance type written in code.

use crate::cloudprovider::{InstanceType, Offering};
use crate::resources::{CPU, MEMORY, PODS, ResourceList, parse_milli};
use crate::scheduling::{ARCHITECTURE_AMD64, CapacityType, LABEL_ARCH_STABLE, LABEL_OS_STABLE};

/// An instance type: amd64 Linux, 110 pods, no overhead, no offerings until
/// given. Quantities are written as in a manifest (`"4"`, `"16Gi"`,
/// `"500m"`).
///
/// ```
/// use karpenter_core::snapshot::build::InstanceTypeBuilder;
/// use karpenter_core::scheduling::CapacityType;
///
/// let m4 = InstanceTypeBuilder::new("m-4")
///     .cpu("4")
///     .memory("16Gi")
///     .offering("zone-a", CapacityType::OnDemand, 0.20)
///     .offering("zone-a", CapacityType::Spot, 0.06)
///     .build();
/// assert_eq!(m4.capacity.get("cpu"), 4_000);
/// assert_eq!(m4.offerings.len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct InstanceTypeBuilder {
    name: String,
    labels: Vec<(String, String)>,
    capacity: ResourceList,
    overhead: ResourceList,
    offerings: Vec<Offering>,
}

impl InstanceTypeBuilder {
    /// A type named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let mut capacity = ResourceList::new();
        capacity.set(PODS, 110_000);
        Self {
            name: name.into(),
            labels: vec![
                (LABEL_ARCH_STABLE.to_owned(), ARCHITECTURE_AMD64.to_owned()),
                (LABEL_OS_STABLE.to_owned(), "linux".to_owned()),
            ],
            capacity,
            overhead: ResourceList::new(),
            offerings: Vec::new(),
        }
    }

    /// Its cpu (`"4"`, `"3500m"`).
    ///
    /// # Panics
    ///
    /// When `quantity` is not a Kubernetes quantity.
    pub fn cpu(self, quantity: &str) -> Self {
        self.capacity(CPU, quantity)
    }

    /// Its memory (`"16Gi"`).
    ///
    /// # Panics
    ///
    /// When `quantity` is not a Kubernetes quantity.
    pub fn memory(self, quantity: &str) -> Self {
        self.capacity(MEMORY, quantity)
    }

    /// How many pods its nodes take (110 unless given).
    pub fn pods(mut self, pods: i64) -> Self {
        self.capacity.set(PODS, pods * 1000);
        self
    }

    /// Its capacity of `resource` (`nvidia.com/gpu`, `ephemeral-storage`...).
    ///
    /// # Panics
    ///
    /// When `quantity` is not a Kubernetes quantity.
    pub fn capacity(mut self, resource: &str, quantity: &str) -> Self {
        self.capacity.set(resource, milli(resource, quantity));
        self
    }

    /// What the kubelet, the system and eviction keep of `resource` (summed
    /// into the type's overhead): allocatable is capacity minus overhead.
    ///
    /// # Panics
    ///
    /// When `quantity` is not a Kubernetes quantity.
    pub fn overhead(mut self, resource: &str, quantity: &str) -> Self {
        self.overhead.set(resource, milli(resource, quantity));
        self
    }

    /// A single-valued label its nodes carry (replacing the architecture or
    /// OS when the key is theirs).
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.labels.retain(|(k, _)| *k != key);
        self.labels.push((key, value.into()));
        self
    }

    /// An available offering in `zone` at `price` per hour.
    pub fn offering(mut self, zone: &str, capacity_type: CapacityType, price: f64) -> Self {
        self.offerings
            .push(Offering::new(zone, capacity_type.as_str(), price));
        self
    }

    /// The instance type, its requirements read from its labels and
    /// offerings as [`InstanceType::new`] reads them.
    pub fn build(self) -> InstanceType {
        InstanceType::new(
            self.name,
            self.labels,
            self.offerings,
            self.capacity,
            self.overhead,
        )
    }
}

/// A quantity in milli-units.
fn milli(resource: &str, quantity: &str) -> i64 {
    parse_milli(quantity)
        .unwrap_or_else(|e| panic!("{resource}: {quantity:?} is not a quantity: {e}"))
}
