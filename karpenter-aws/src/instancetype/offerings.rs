//! Offerings as upstream's offering resolvers make them
//! (`pkg/providers/instancetype/offering/`): on-demand and spot in each zone
//! of the NodeClass's subnets, priced from the static on-demand tables, and
//! with the `ReservedCapacity` gate one reserved offering per capacity
//! reservation of the type.

use std::collections::BTreeMap;

use karpenter_core::cloudprovider::{Offering, Reservation};
use karpenter_core::scheduling::{CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, Requirement};

use crate::catalog::Catalog;
use crate::nodeclass::CapacityReservation;
use crate::nodeclass::EC2NodeClass;

use super::labels::{
    CAPACITY_RESERVATION_ID, CAPACITY_RESERVATION_INTERRUPTIBLE, CAPACITY_RESERVATION_TYPE,
    TOPOLOGY_ZONE_ID,
};

/// The region whose static table prices every region without one, as
/// upstream's pricing provider starts from it.
pub const FALLBACK_PRICE_REGION: &str = "us-east-1";

/// Upstream prices reserved capacity at a token fraction of on-demand, so
/// that a reservation is always the cheapest way to launch the type while
/// prices still order reservations of different types.
const RESERVED_PRICE_DIVISOR: f64 = 10_000_000.0;

/// An availability zone the NodeClass's subnets reach.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Zone {
    /// Its name, e.g. `us-east-1a`.
    pub name: String,
    /// Its ID, e.g. `use1-az1`, when a subnet in it gave one.
    pub id: Option<String>,
}

impl Zone {
    /// A zone named `name` with the ID `id`.
    pub fn new(name: impl Into<String>, id: Option<&str>) -> Self {
        Zone {
            name: name.into(),
            id: id.map(str::to_owned),
        }
    }
}

/// What decides instance types beyond the catalog and the NodeClass: the
/// provider's options and what it has learned from EC2.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceTypeOptions {
    /// Spot prices per hour by (instance type, zone). `None` before any is
    /// known: spot is then priced as on-demand in every zone, as upstream
    /// does until its first spot price refresh. `Some`: a (type, zone)
    /// without an entry has no spot offering, as upstream's after a refresh.
    pub spot_prices: Option<BTreeMap<(String, String), f64>>,
    /// The core `ReservedCapacity` feature gate: without it capacity
    /// reservations give no offerings.
    pub reserved_capacity: bool,
    /// How many more instances each capacity reservation (by ID) can start,
    /// EC2's `AvailableInstanceCount`. The NodeClass status does not record
    /// it; a reservation missing here counts 0 and its offering is
    /// unavailable, as upstream's before it has read the count.
    pub reservation_capacity: BTreeMap<String, u32>,
    /// Upstream's `--reserved-enis`: network interfaces of the default card
    /// kept back from pods on every node when pods are ENI-limited (default
    /// 0). Kube-reserved memory, which the Amazon Linux and Custom families
    /// size by ENI-limited pods, ignores it, as upstream's does.
    pub reserved_enis: u32,
    /// Upstream's `--vm-memory-overhead-percent`: the share of a type's
    /// memory the hypervisor keeps, rounded up to a whole MiB (default
    /// 0.075). A negative, NaN or infinite value is an
    /// [`InstanceTypeError::Option`](super::InstanceTypeError::Option).
    pub vm_memory_overhead_percent: f64,
}

/// Upstream's default `--vm-memory-overhead-percent`.
pub const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;

impl Default for InstanceTypeOptions {
    fn default() -> Self {
        InstanceTypeOptions {
            spot_prices: None,
            reserved_capacity: false,
            reservation_capacity: BTreeMap::new(),
            reserved_enis: 0,
            vm_memory_overhead_percent: DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        }
    }
}

/// The zones of `nodeclass`'s resolved subnets, by name, each once (a zone
/// ID from the first of its subnets that gives one). None before the
/// subnets resolve.
pub fn zones(nodeclass: &EC2NodeClass) -> Vec<Zone> {
    let mut zones: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let subnets = nodeclass.status.as_ref().and_then(|s| s.subnets.as_deref());
    for subnet in subnets.unwrap_or_default() {
        if subnet.zone.is_empty() {
            continue;
        }
        let id = zones.entry(subnet.zone.as_str()).or_default();
        if id.is_none() {
            *id = subnet.zone_id.as_deref().filter(|id| !id.is_empty());
        }
    }
    zones
        .into_iter()
        .map(|(name, id)| Zone::new(name, id))
        .collect()
}

/// The on-demand price per hour of `instance_type` in `region`: from the
/// region's static table, or us-east-1's when the region has none. A region
/// with a table that lacks the type has no price for it (upstream falls back
/// by table, not by type).
pub fn on_demand_price(catalog: &Catalog, region: &str, instance_type: &str) -> Option<f64> {
    let table = price_table(catalog, region);
    catalog
        .on_demand_price(table, instance_type)
        .map(|(price, _)| price)
}

/// The region whose static table prices `region`'s types: its own, or
/// us-east-1's when it has none.
pub(crate) fn price_table<'a>(catalog: &Catalog, region: &'a str) -> &'a str {
    if catalog.priced_regions().any(|r| r == region) {
        region
    } else {
        FALLBACK_PRICE_REGION
    }
}

/// The on-demand and spot offerings of `instance_type`, whose on-demand
/// price is `on_demand` ([`on_demand_price`]), one of each per zone in
/// `zones` that has a price. Each requires its zone's ID (when known) and,
/// not being reserved, the absence of the reservation labels. A type with no
/// price has none.
pub(crate) fn offerings(
    instance_type: &str,
    on_demand: Option<f64>,
    zones: &[Zone],
    options: &InstanceTypeOptions,
) -> Vec<Offering> {
    let mut offerings = Vec::new();
    for zone in zones {
        let spot = match &options.spot_prices {
            None => on_demand,
            Some(prices) => prices
                .get(&(instance_type.to_owned(), zone.name.clone()))
                .copied(),
        };
        let priced = [
            (CAPACITY_TYPE_ON_DEMAND, on_demand),
            (CAPACITY_TYPE_SPOT, spot),
        ];
        for (capacity_type, price) in priced {
            let Some(price) = price.filter(|p| p.is_finite() && *p >= 0.0) else {
                continue;
            };
            let offering = Offering::new(&zone.name, capacity_type, price)
                .with_requirement(Requirement::does_not_exist(CAPACITY_RESERVATION_ID))
                .with_requirement(Requirement::does_not_exist(CAPACITY_RESERVATION_TYPE))
                .with_requirement(Requirement::does_not_exist(
                    CAPACITY_RESERVATION_INTERRUPTIBLE,
                ));
            offerings.push(with_zone_id(offering, zone));
        }
    }
    offerings
}

/// With the `ReservedCapacity` gate, one reserved offering per reservation
/// in `reservations` for `instance_type`, in its zone: priced at its
/// `on_demand` price over ten million (0 without one), requiring its ID, type
/// (`default` or `capacity-block`), interruptibility and zone ID, and
/// available only while it can start instances, is not expiring and its
/// zone is one of `zones`.
pub(crate) fn reserved_offerings(
    instance_type: &str,
    on_demand: Option<f64>,
    zones: &[Zone],
    reservations: &[CapacityReservation],
    options: &InstanceTypeOptions,
) -> Vec<Offering> {
    if !options.reserved_capacity {
        return Vec::new();
    }
    let price = on_demand.map_or(0.0, |p| p / RESERVED_PRICE_DIVISOR);
    reservations
        .iter()
        .filter(|r| r.instance_type == instance_type && !r.id.is_empty())
        .map(|r| {
            let capacity = options
                .reservation_capacity
                .get(&r.id)
                .copied()
                .unwrap_or(0);
            let zone = zones.iter().find(|z| z.name == r.availability_zone);
            let reservation = Reservation {
                label: CAPACITY_RESERVATION_ID.to_owned(),
                id: r.id.clone(),
                capacity,
            };
            let reservation_type = r.reservation_type.as_deref().unwrap_or("default");
            let interruptible = if r.interruptible == Some(true) {
                "true"
            } else {
                "false"
            };
            let mut offering = Offering::reserved(&r.availability_zone, price, reservation)
                .with_requirement(Requirement::in_values(
                    CAPACITY_RESERVATION_TYPE,
                    [reservation_type],
                ))
                .with_requirement(Requirement::in_values(
                    CAPACITY_RESERVATION_INTERRUPTIBLE,
                    [interruptible],
                ));
            if let Some(zone) = zone {
                offering = with_zone_id(offering, zone);
            }
            if capacity == 0 || r.is_expiring() || zone.is_none() {
                offering = offering.unavailable();
            }
            offering
        })
        .collect()
}

fn with_zone_id(offering: Offering, zone: &Zone) -> Offering {
    match &zone.id {
        Some(id) => offering.with_requirement(Requirement::in_values(TOPOLOGY_ZONE_ID, [id])),
        None => offering,
    }
}

#[cfg(test)]
mod tests;
