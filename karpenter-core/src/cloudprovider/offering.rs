//! Where and how an instance type can be bought, and at what price.

use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, LABEL_TOPOLOGY_ZONE, Requirement, Requirements,
};

/// A capacity reservation an offering launches into: instances bought ahead,
/// of which only so many more can start (upstream's reserved offerings, with
/// their `ReservationCapacity`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// The label that names the reservation on its nodes (the provider's
    /// reservation-id label, `karpenter.fake/reservation-id` on the fake
    /// cloud): a reserved offering requires it, and a claim holding
    /// reservations is pinned to them by it.
    pub label: String,
    /// The reservation's id, the label's value.
    pub id: String,
    /// How many more instances the reservation can start: a plan takes no
    /// more, however many pools or types offer it.
    pub capacity: u32,
}

/// One way to buy an instance type: a zone and a capacity type, with a price per
/// hour and whether it can be launched now, and any further labels its nodes
/// carry that differ between offerings (upstream's `Offering.Requirements`).
///
/// A provider gives at most one offering per zone, capacity type and
/// reservation: those name the offering (a launch, an unavailable offering,
/// see [`OfferingKey`](super::OfferingKey)). Several reserved offerings may
/// share a zone, each of its own reservation.
#[derive(Clone, Debug, PartialEq)]
pub struct Offering {
    /// The zone (`topology.kubernetes.io/zone`).
    pub zone: String,
    /// `on-demand`, `spot` or `reserved` (`karpenter.sh/capacity-type`; see
    /// [`crate::scheduling::CAPACITY_TYPE_SPOT`] and its siblings).
    pub capacity_type: String,
    /// Price per hour.
    pub price: f64,
    /// Whether the offering can be launched now (false while the provider has seen
    /// it fail for lack of capacity, for instance).
    pub available: bool,
    /// What else the offering's nodes carry, on keys other than the zone and
    /// capacity type (Azure's `kubernetes.azure.com/scalesetpriority`, say):
    /// the offering is compatible with requirements only when these intersect
    /// them too. Empty for most providers. [`InstanceType::new`](super::InstanceType::new)
    /// gives the type, on each of these keys, every value its offerings allow.
    pub requirements: Requirements,
    /// The capacity reservation it launches into, for a `reserved` offering
    /// made by [`Offering::reserved`]; `None` for every other offering.
    pub reservation: Option<Reservation>,
}

impl Offering {
    /// An available offering.
    pub fn new(zone: impl Into<String>, capacity_type: impl Into<String>, price: f64) -> Self {
        Offering {
            zone: zone.into(),
            capacity_type: capacity_type.into(),
            price,
            available: true,
            requirements: Requirements::new(),
            reservation: None,
        }
    }

    /// An available `reserved` offering launching into `reservation`: its
    /// further requirements name the reservation on its label, as upstream's
    /// reserved offerings carry the reservation id.
    ///
    /// ```
    /// use karpenter_core::cloudprovider::{Offering, Reservation};
    ///
    /// let reserved = Offering::reserved(
    ///     "zone-a",
    ///     0.01,
    ///     Reservation { label: "example.com/reservation-id".into(), id: "cr-1".into(), capacity: 3 },
    /// );
    /// assert_eq!(reserved.capacity_type, "reserved");
    /// assert_eq!(reserved.reservation_id(), Some("cr-1"));
    /// assert_eq!(reserved.requirements.labels()["example.com/reservation-id"], "cr-1");
    /// ```
    pub fn reserved(zone: impl Into<String>, price: f64, reservation: Reservation) -> Self {
        let requirement = Requirement::in_values(&reservation.label, [&reservation.id]);
        let mut offering = Offering::new(zone, CAPACITY_TYPE_RESERVED, price);
        offering.requirements.add(requirement);
        offering.reservation = Some(reservation);
        offering
    }

    /// The id of the reservation it launches into, if any.
    pub fn reservation_id(&self) -> Option<&str> {
        self.reservation.as_ref().map(|r| r.id.as_str())
    }

    /// The same offering with `requirement` among its further requirements
    /// (intersected with one already on its key).
    #[must_use]
    pub fn with_requirement(mut self, requirement: Requirement) -> Self {
        self.requirements.add(requirement);
        self
    }

    /// The same offering, unavailable.
    #[must_use]
    pub fn unavailable(mut self) -> Self {
        self.available = false;
        self
    }

    /// Whether the offering's zone, capacity type and further requirements
    /// satisfy `requirements` (keys they leave unconstrained match anything).
    pub fn is_compatible(&self, requirements: &Requirements) -> bool {
        OfferingFilter::new(requirements).admits(self)
    }

    /// The offering as requirements: its zone, its capacity type and its
    /// further requirements.
    pub fn all_requirements(&self) -> Requirements {
        let mut all = self.requirements.clone();
        all.add(Requirement::in_values(LABEL_TOPOLOGY_ZONE, [&self.zone]));
        all.add(Requirement::in_values(
            CAPACITY_TYPE_LABEL_KEY,
            [&self.capacity_type],
        ));
        all
    }
}

/// What requirements say of offerings (their zone and capacity type), looked up
/// once so that many offerings can be checked without searching the requirements
/// again; an offering with further requirements is checked against the whole
/// requirements.
#[derive(Clone, Copy, Debug)]
pub struct OfferingFilter<'r> {
    zone: Option<&'r Requirement>,
    capacity_type: Option<&'r Requirement>,
    all: &'r Requirements,
}

impl<'r> OfferingFilter<'r> {
    /// The filter of `requirements`.
    pub fn new(requirements: &'r Requirements) -> Self {
        OfferingFilter {
            zone: requirements.get_defined(LABEL_TOPOLOGY_ZONE),
            capacity_type: requirements.get_defined(CAPACITY_TYPE_LABEL_KEY),
            all: requirements,
        }
    }

    /// Whether the requirements allow the offering's zone and capacity type,
    /// and intersect its further requirements on every key both define.
    pub fn admits(&self, offering: &Offering) -> bool {
        self.zone.is_none_or(|r| r.has(&offering.zone))
            && self
                .capacity_type
                .is_none_or(|r| r.has(&offering.capacity_type))
            && (offering.requirements.is_empty() || offering.requirements.is_intersecting(self.all))
    }

    /// The zone requirement offerings are matched against, if any.
    pub fn zone(&self) -> Option<&'r Requirement> {
        self.zone
    }

    /// The capacity-type requirement offerings are matched against, if any.
    pub fn capacity_type(&self) -> Option<&'r Requirement> {
        self.capacity_type
    }

    /// Whether the offering can be launched now and the requirements allow it.
    pub fn admits_available(&self, offering: &Offering) -> bool {
        offering.available && self.admits(offering)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRIORITY: &str = "example.com/priority";

    fn requirements(items: &[Requirement]) -> Requirements {
        items.iter().cloned().collect()
    }

    #[test]
    fn further_requirements_must_intersect_the_claims_too() {
        let spot = Offering::new("zone-a", "spot", 0.1)
            .with_requirement(Requirement::in_values(PRIORITY, ["spot"]));
        let plain = Offering::new("zone-a", "spot", 0.1);
        let cases = [
            (requirements(&[]), true),
            (
                requirements(&[Requirement::in_values(PRIORITY, ["spot"])]),
                true,
            ),
            (
                requirements(&[Requirement::in_values(PRIORITY, ["regular"])]),
                false,
            ),
            (
                requirements(&[Requirement::not_in(PRIORITY, ["spot"])]),
                false,
            ),
            (
                requirements(&[Requirement::does_not_exist(PRIORITY)]),
                false,
            ),
            (
                requirements(&[
                    Requirement::in_values(PRIORITY, ["spot", "regular"]),
                    Requirement::in_values(LABEL_TOPOLOGY_ZONE, ["zone-b"]),
                ]),
                false,
            ),
        ];
        for (claim, compatible) in &cases {
            assert_eq!(spot.is_compatible(claim), *compatible, "{claim}");
            assert_eq!(
                OfferingFilter::new(claim).admits(&spot),
                *compatible,
                "{claim}"
            );
            // Without further requirements only the zone and capacity type count.
            let zone_ok = claim
                .get_defined(LABEL_TOPOLOGY_ZONE)
                .is_none_or(|r| r.has("zone-a"));
            assert_eq!(plain.is_compatible(claim), zone_ok, "{claim}");
        }
        let all = spot.all_requirements();
        assert_eq!(all.len(), 3);
        assert_eq!(all.labels()[PRIORITY], "spot");
        assert_eq!(all.labels()[CAPACITY_TYPE_LABEL_KEY], "spot");
    }
}
