//! Where and how an instance type can be bought, and at what price.

use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, LABEL_TOPOLOGY_ZONE, Requirement, Requirements};

/// One way to buy an instance type: a zone and a capacity type, with a price per
/// hour and whether it can be launched now.
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
}

impl Offering {
    /// An available offering.
    pub fn new(zone: impl Into<String>, capacity_type: impl Into<String>, price: f64) -> Self {
        Offering {
            zone: zone.into(),
            capacity_type: capacity_type.into(),
            price,
            available: true,
        }
    }

    /// The same offering, unavailable.
    #[must_use]
    pub fn unavailable(mut self) -> Self {
        self.available = false;
        self
    }

    /// Whether the offering's zone and capacity type satisfy `requirements` (keys
    /// they leave unconstrained match anything).
    pub fn is_compatible(&self, requirements: &Requirements) -> bool {
        let fits = |key: &str, value: &str| {
            requirements
                .get_defined(key)
                .is_none_or(|requirement| requirement.has(value))
        };
        fits(LABEL_TOPOLOGY_ZONE, &self.zone) && fits(CAPACITY_TYPE_LABEL_KEY, &self.capacity_type)
    }

    /// The offering as requirements: its zone and capacity type.
    pub fn requirements(&self) -> Requirements {
        [
            Requirement::in_values(LABEL_TOPOLOGY_ZONE, [&self.zone]),
            Requirement::in_values(CAPACITY_TYPE_LABEL_KEY, [&self.capacity_type]),
        ]
        .into_iter()
        .collect()
    }
}

/// What requirements say of offerings (their zone and capacity type), looked up
/// once so that many offerings can be checked without searching the requirements
/// again.
#[derive(Clone, Copy, Debug)]
pub struct OfferingFilter<'r> {
    zone: Option<&'r Requirement>,
    capacity_type: Option<&'r Requirement>,
}

impl<'r> OfferingFilter<'r> {
    /// The filter of `requirements`.
    pub fn new(requirements: &'r Requirements) -> Self {
        OfferingFilter {
            zone: requirements.get_defined(LABEL_TOPOLOGY_ZONE),
            capacity_type: requirements.get_defined(CAPACITY_TYPE_LABEL_KEY),
        }
    }

    /// Whether the requirements allow the offering's zone and capacity type.
    pub fn admits(&self, offering: &Offering) -> bool {
        self.zone.is_none_or(|r| r.has(&offering.zone))
            && self
                .capacity_type
                .is_none_or(|r| r.has(&offering.capacity_type))
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
