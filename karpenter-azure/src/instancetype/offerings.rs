//! Offerings, as upstream's `createOfferings` makes them: on-demand and spot
//! in each zone a size is offered in and regionally (zone `0`), each with the
//! labels that differ between offerings as its own requirements (priority,
//! placement scope, Ultra SSD), so that a claim selecting one of them
//! launches an offering that has it.

use karpenter_core::cloudprovider::Offering;
use karpenter_core::scheduling::{CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, Requirement};

use crate::catalog::{Catalog, Sku};

use super::labels::{PLACEMENT_SCOPE, PRIORITY, SCALE_SET_PRIORITY, SKU_STORAGE_ULTRA_SSD};
use super::price;

/// The zone label of logical zone `zone` in `region`: `eastus-1`; `0` is
/// regional placement.
pub fn zone_label(region: &str, zone: u32) -> String {
    if zone == 0 {
        "0".to_owned()
    } else {
        format!("{region}-{zone}")
    }
}

/// `regional` for the zone label `0`, else `zonal`.
pub fn placement_scope(zone: &str) -> &'static str {
    if zone == "0" { "regional" } else { "zonal" }
}

/// The `sku-storage-ultra-ssd` values of the size's offering in logical zone
/// `zone` (0: regional): `true` and `false` where Ultra SSD can be attached
/// there, else `false`. The regional offering follows the size's own
/// `UltraSSDAvailable`; a zonal one follows the zone's details in the
/// Resource SKUs answer, which the catalog does not record, so it is `false`
/// (upstream's answer on the same data: its regional capability does not
/// enable a zonal offering).
pub fn ultra_ssd_options(sku: &Sku, zone: u32) -> &'static [&'static str] {
    if zone == 0 && sku.capabilities.ultra_ssd_available == Some(true) {
        &["true", "false"]
    } else {
        &["false"]
    }
}

/// On-demand and (when the size can run at low priority) spot offerings in
/// each zone it is offered in and regionally. Each requires its priority
/// (`kubernetes.azure.com/scalesetpriority` and `kubernetes.azure.com/priority`:
/// `regular` or `spot`), its placement scope and its Ultra SSD values. Spot
/// is priced as on-demand: the public tables have no spot prices, and
/// upstream does the same until its live price refresh.
pub fn offerings(catalog: &Catalog, sku: &Sku, region: &str) -> Vec<Offering> {
    let zones: Vec<u32> = match catalog.placement(region, &sku.name) {
        Some(placement) => placement.zones.clone(),
        None => (1..=catalog.region(region).map_or(0, |r| r.zone_count)).collect(),
    };
    let price = price(catalog, sku, region);
    let spot = sku.capabilities.low_priority_capable != Some(false);
    let mut offerings = Vec::new();
    for zone in zones.into_iter().chain([0]) {
        let label = zone_label(region, zone);
        let offering = |capacity_type: &str, priority: &str| {
            Offering::new(label.clone(), capacity_type, price)
                .with_requirement(Requirement::in_values(SCALE_SET_PRIORITY, [priority]))
                .with_requirement(Requirement::in_values(PRIORITY, [priority]))
                .with_requirement(Requirement::in_values(
                    PLACEMENT_SCOPE,
                    [placement_scope(&label)],
                ))
                .with_requirement(Requirement::in_values(
                    SKU_STORAGE_ULTRA_SSD,
                    ultra_ssd_options(sku, zone),
                ))
        };
        offerings.push(offering(CAPACITY_TYPE_ON_DEMAND, "regular"));
        if spot {
            offerings.push(offering(CAPACITY_TYPE_SPOT, "spot"));
        }
    }
    offerings
}
