//! The `karpenter.fake/v1alpha1` `InstanceType` document of the scenario format.
//!
//! A scenario lists the fake provider's instance types as documents beside the
//! cluster's objects. Each carries its capacity, an optional overhead (kube-reserved,
//! system-reserved and eviction threshold, summed), optional single-valued labels and
//! at least one offering.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_core::cloudprovider::{InstanceType, Offering, Reservation};
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

/// A zone and capacity type an instance type can be launched in, with its
/// price; a `reserved` one also names its capacity reservation and how many
/// more instances it can start. Unknown fields are refused, so a misspelt
/// `reservationId` is an error rather than a reservation silently dropped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
    /// The capacity reservation a `reserved` offering launches into (its
    /// nodes carry it as [`RESERVATION_ID_LABEL`]); required for `reserved`,
    /// refused for other capacity types.
    #[serde(
        default,
        rename = "reservationID",
        skip_serializing_if = "Option::is_none"
    )]
    pub reservation_id: Option<String>,
    /// How many more instances the reservation can start (upstream's
    /// remaining count, the nodes already on it excluded); required for
    /// `reserved`. At 0 the offering is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
}

/// The label a fake node launched into a capacity reservation carries, with
/// the reservation's id (upstream's fake provider uses
/// `testing.karpenter.sh/reservation-id`).
pub const RESERVATION_ID_LABEL: &str = "karpenter.fake/reservation-id";

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
    /// Whether the offering can be launched now (absent `available` means
    /// yes; a reservation with no capacity left means no).
    pub fn is_available(&self) -> bool {
        self.available.unwrap_or(true) && self.capacity != Some(0)
    }

    /// The engine's offering: a reserved one when the document names a
    /// reservation (its capacity 0 when left out), a plain one otherwise.
    pub fn to_offering(&self) -> Offering {
        let offering = match &self.reservation_id {
            Some(id) => Offering::reserved(
                self.zone.clone(),
                self.price,
                Reservation {
                    label: RESERVATION_ID_LABEL.to_owned(),
                    id: id.clone(),
                    capacity: self.capacity.unwrap_or(0),
                },
            ),
            None => Offering::new(self.zone.clone(), self.capacity_type.clone(), self.price),
        };
        if self.is_available() {
            offering
        } else {
            offering.unavailable()
        }
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
            .map(OfferingDocument::to_offering)
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
    fn a_reserved_offering_names_its_reservation_and_counts_down_to_unavailable() {
        let document: InstanceTypeDocument = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c-4x"},
            "capacity": {"cpu": "4", "memory": "8Gi"},
            "offerings": [
                {"zone": "zone-a", "capacityType": "reserved", "price": 0.01,
                 "reservationID": "cr-1", "capacity": 3},
                {"zone": "zone-a", "capacityType": "reserved", "price": 0.01,
                 "reservationID": "cr-2", "capacity": 0},
                {"zone": "zone-a", "capacityType": "on-demand", "price": 0.17},
            ],
        }))
        .unwrap();
        let it = document.to_instance_type().unwrap();
        let reservation = it.offerings[0].reservation.as_ref().expect("reserved");
        assert_eq!((reservation.id.as_str(), reservation.capacity), ("cr-1", 3));
        assert_eq!(reservation.label, RESERVATION_ID_LABEL);
        assert_eq!(it.offerings[0].capacity_type, "reserved");
        assert!(it.offerings[0].available);
        // No capacity left: unavailable, as upstream's fake marks it.
        assert!(!it.offerings[1].available);
        assert_eq!(it.offerings[2].reservation, None);
        // The round trip keeps the reservation's fields.
        let written = serde_json::to_value(&document).unwrap();
        assert_eq!(written["offerings"][0]["reservationID"], "cr-1");
        assert_eq!(written["offerings"][0]["capacity"], 3);
        assert!(written["offerings"][2].get("reservationID").is_none());
    }

    #[test]
    fn a_misspelt_offering_field_is_refused() {
        let misspelt = serde_json::from_value::<OfferingDocument>(serde_json::json!({
            "zone": "zone-a", "capacityType": "reserved", "price": 0.01, "reservationId": "cr-1",
        }));
        let error = misspelt.unwrap_err().to_string();
        assert!(error.contains("reservationId"), "{error}");
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
