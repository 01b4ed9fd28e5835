//! The `karpenter.fake/v1alpha1` `InstanceType` document of the scenario format.
//!
//! A scenario lists the fake provider's instance types as documents beside the
//! cluster's objects. Each carries its capacity, an optional overhead (kube-reserved,
//! system-reserved and eviction threshold, summed), optional single-valued labels and
//! at least one offering.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_core::cloudprovider::{InstanceType, Offering};
use karpenter_core::resources::{self, QuantityError, ResourceList};
use karpenter_core::scheduling::{ARCHITECTURE_AMD64, LABEL_ARCH_STABLE, LABEL_OS_STABLE};
use serde::{Deserialize, Serialize};

/// One instance type of the fake provider, as a scenario file writes it
/// (`apiVersion: karpenter.fake/v1alpha1`, `kind: InstanceType`): its
/// capacity, an optional overhead (kube-reserved, system-reserved and eviction
/// threshold, summed), optional single-valued labels and at least one
/// offering.
///
/// `apiVersion` and `kind` are read (and checked) by the scenario loader, so they
/// are not fields here.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceTypeDocument {
    /// `metadata.name` is the instance type's name.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Capacity; `cpu` and `memory` are required, `pods` defaults to 110.
    #[serde(default)]
    pub capacity: BTreeMap<String, Quantity>,
    /// Resources reserved for the system on every node of this type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<BTreeMap<String, Quantity>>,
    /// Single-valued labels; `kubernetes.io/arch` defaults to `amd64` and
    /// `kubernetes.io/os` to `linux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Where and how the type can be bought; at least one.
    #[serde(default)]
    pub offerings: Vec<OfferingDocument>,
}

/// A zone and capacity type an instance type can be launched in, with its price.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingDocument {
    /// The zone, the value of `topology.kubernetes.io/zone`.
    pub zone: String,
    /// `on-demand`, `spot` or `reserved`: the value of `karpenter.sh/capacity-type`.
    pub capacity_type: String,
    /// Price per hour.
    pub price: f64,
    /// Whether the offering can be launched now; absent means available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
}

impl InstanceTypeDocument {
    /// The document's `apiVersion`.
    pub const API_VERSION: &str = "karpenter.fake/v1alpha1";
    /// The document's `kind`.
    pub const KIND: &str = "InstanceType";

    /// The instance type's name (`metadata.name`), empty when absent.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
}

impl OfferingDocument {
    /// Whether the offering can be launched now (absent `available` means yes).
    pub fn is_available(&self) -> bool {
        self.available.unwrap_or(true)
    }
}

impl InstanceTypeDocument {
    /// The engine's instance type: capacity (`pods` 110 unless given), overhead,
    /// labels (`kubernetes.io/arch` amd64 and `kubernetes.io/os` linux unless given)
    /// and offerings. A quantity that does not parse is an error naming it.
    pub fn to_instance_type(&self) -> Result<InstanceType, QuantityError> {
        let mut capacity =
            ResourceList::from_quantities(&self.capacity).map_err(|e| e.within("capacity"))?;
        if !self.capacity.contains_key(resources::PODS) {
            capacity.set(resources::PODS, DEFAULT_PODS * 1000);
        }
        let overhead = match &self.overhead {
            Some(overhead) => {
                ResourceList::from_quantities(overhead).map_err(|e| e.within("overhead"))?
            }
            None => ResourceList::new(),
        };
        let mut labels = self.labels.clone().unwrap_or_default();
        labels
            .entry(LABEL_ARCH_STABLE.to_string())
            .or_insert_with(|| ARCHITECTURE_AMD64.to_string());
        labels
            .entry(LABEL_OS_STABLE.to_string())
            .or_insert_with(|| "linux".to_string());
        let offerings = self
            .offerings
            .iter()
            .map(|o| {
                let offering = Offering::new(o.zone.clone(), o.capacity_type.clone(), o.price);
                if o.is_available() {
                    offering
                } else {
                    offering.unavailable()
                }
            })
            .collect();
        Ok(InstanceType::new(
            self.name(),
            labels,
            offerings,
            capacity,
            overhead,
        ))
    }
}

/// `capacity.pods` when a document leaves it out.
const DEFAULT_PODS: i64 = 110;

#[cfg(test)]
mod tests {
    use super::*;
    use karpenter_core::scheduling::LABEL_TOPOLOGY_ZONE;

    #[test]
    fn a_document_becomes_an_instance_type_with_defaults() {
        let document: InstanceTypeDocument = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c-4x"},
            "capacity": {"cpu": "4", "memory": "8Gi"},
            "overhead": {"cpu": "100m"},
            "offerings": [
                {"zone": "zone-a", "capacityType": "spot", "price": 0.05},
                {"zone": "zone-b", "capacityType": "on-demand", "price": 0.17, "available": false},
            ],
        }))
        .unwrap();
        let it = document.to_instance_type().unwrap();
        assert_eq!(it.name, "c-4x");
        assert_eq!(it.capacity.get(resources::PODS), 110_000);
        assert_eq!(it.allocatable().get(resources::CPU), 3_900);
        assert!(it.requirements.get(LABEL_ARCH_STABLE).has("amd64"));
        assert!(it.requirements.get(LABEL_OS_STABLE).has("linux"));
        // The zones are those of the available offerings, as the format says.
        let zones = it.requirements.get(LABEL_TOPOLOGY_ZONE);
        assert!(zones.has("zone-a") && !zones.has("zone-b"));
        assert!(!it.offerings[1].available);
    }

    #[test]
    fn a_bad_quantity_names_its_field() {
        let document = InstanceTypeDocument {
            capacity: [("cpu".to_string(), Quantity("four".into()))].into(),
            ..InstanceTypeDocument::default()
        };
        let error = document.to_instance_type().unwrap_err();
        assert_eq!(error.path(), Some("capacity.cpu"));
    }
}
