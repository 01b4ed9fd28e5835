//! VM sizes as the engine's instance types, as upstream's instance-type
//! provider builds them (`pkg/providers/instancetype/`): the labels AKS nodes
//! carry, capacity and allocatable by AKS's formulas, and on-demand and spot
//! offerings in each zone of the region and regionally (zone `0`), priced
//! from the embedded table (999 when unknown, as upstream).

mod filters;
pub mod labels;
mod offerings;
mod resources;
mod settings;

use karpenter_core::cloudprovider::InstanceType;

use crate::catalog::{Catalog, Sku};

pub use filters::{
    Exclusion, LOCAL_DNS_MIN_MIB, LOCAL_DNS_MIN_VCPUS, RESTRICTED_SIZES, node_class_exclusions,
    static_exclusions,
};
pub use offerings::{offerings, placement_scope, ultra_ssd_options, zone_label};
pub use resources::{
    DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, EVICTION_THRESHOLD_MIB, capacity, kube_reserved_cpu_millis,
    kube_reserved_memory_mib, memory_capacity_bytes, overhead,
};
pub use settings::Settings;

/// The price upstream gives a size it has no price for (or does not know).
pub const MISSING_PRICE: f64 = 999.0;

/// The region whose prices stand in for a region without a table, as upstream.
pub const FALLBACK_PRICE_REGION: &str = "eastus";

/// The instance types of `catalog` under `settings`: every size no filter
/// leaves out and that has an offering, by name.
pub fn instance_types(catalog: &Catalog, settings: &Settings) -> Vec<InstanceType> {
    catalog
        .skus()
        .iter()
        .filter(|sku| {
            let placement = catalog.placement(&settings.region, &sku.name);
            static_exclusions(catalog, sku, placement).is_empty()
                && node_class_exclusions(catalog, sku, settings).is_empty()
        })
        .filter_map(|sku| instance_type(catalog, sku, settings))
        .collect()
}

/// One size as an instance type, whatever the filters say; `None` when it
/// has no offering in the region.
pub fn instance_type(catalog: &Catalog, sku: &Sku, settings: &Settings) -> Option<InstanceType> {
    let offerings = offerings(catalog, sku, &settings.region);
    if offerings.is_empty() {
        return None;
    }
    let mut instance_type = InstanceType::new(
        sku.name.clone(),
        labels::single_valued(catalog, sku, settings),
        offerings,
        capacity(catalog, sku, settings),
        overhead(sku),
    );
    // The offerings' priorities, placement scopes and Ultra SSD values are
    // the type's too, as the core unites them (upstream does the same).
    for requirement in labels::multi_valued(sku)
        .into_iter()
        .chain(labels::absent(catalog, sku, settings))
    {
        instance_type.requirements.add(requirement);
    }
    Some(instance_type)
}

/// The size's on-demand price in `region` (the fallback region's when the
/// region has no table; 999 when unknown or not a size upstream knows).
pub fn price(catalog: &Catalog, sku: &Sku, region: &str) -> f64 {
    if !sku.known {
        return MISSING_PRICE;
    }
    let table = match catalog.region(region) {
        Some(r) if r.has_prices => region,
        _ => FALLBACK_PRICE_REGION,
    };
    catalog.price(table, &sku.name).unwrap_or(MISSING_PRICE)
}
