//! EC2 instance types as the engine's instance types, as upstream's
//! instance-type provider builds them (`pkg/providers/instancetype/`), for
//! now at AL2023 defaults: an `EC2NodeClass` with `amiFamily: AL2023`, no
//! kubelet settings, no block device mappings, reserved ENIs 0 and a VM
//! memory overhead of 7.5 %. [`instance_types`] gives no offerings, so no
//! zone or capacity type is available; [`instance_types_for`] gives each type
//! the offerings of an `EC2NodeClass`'s zones and capacity reservations.

pub(crate) mod compatibility;
pub mod labels;
pub(crate) mod offerings;
pub(crate) mod resources;
pub(crate) mod settings;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use karpenter_core::cloudprovider::{InstanceType, Offering};
use karpenter_core::resources::QuantityError;
use thiserror::Error;

use crate::catalog::{Catalog, TypeRecord};
use crate::nodeclass::EC2NodeClass;

use self::compatibility::{Compatibility, TypeFacts};
use self::settings::NodeSettings;

pub use offerings::{
    DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, FALLBACK_PRICE_REGION, InstanceTypeOptions, Zone,
    on_demand_price, zones,
};

/// A request for instance types the catalog cannot answer.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum InstanceTypeError {
    /// The region is not an AWS region name (`us-east-1`, `us-gov-west-1`).
    #[error(
        "region {0:?} is not an AWS region name: a partition's prefix ({prefixes}), \
         words, and a number, as `us-east-1` or `us-gov-west-1`",
        prefixes = REGION_PREFIXES.join(", ")
    )]
    Region(String),
    /// The catalog has no instance type of that name.
    #[error("unknown instance type {0:?}")]
    UnknownType(String),
    /// A NodeClass field holding a quantity does not hold one.
    #[error("{field}: {source}")]
    Setting {
        /// The field, e.g. `spec.kubelet.kubeReserved[memory]`.
        field: String,
        /// Why the quantity was rejected.
        #[source]
        source: QuantityError,
    },
    /// An eviction threshold ending in `%` is not a percentage from 0 to 100.
    #[error("{field}: {value:?} is not a percentage from 0% to 100%")]
    Percentage {
        /// The field, e.g. `spec.kubelet.evictionHard[memory.available]`.
        field: String,
        /// The value as written.
        value: String,
    },
    /// A provider option holds a value no instance type follows from.
    #[error("{option}: {value} is not a finite number of 0 or more")]
    Option {
        /// The option, e.g. `--vm-memory-overhead-percent`.
        option: &'static str,
        /// The value given.
        value: String,
    },
}

/// Every instance type of `catalog` in `region`, by name, at AL2023
/// defaults.
pub fn instance_types(
    catalog: &Catalog,
    region: &str,
) -> Result<Vec<InstanceType>, InstanceTypeError> {
    check_region(region)?;
    let settings = NodeSettings::default();
    Ok(catalog
        .records()
        .map(|record| build(catalog, record, region, &settings, Vec::new()))
        .collect())
}

/// Every instance type of `catalog` in `region`, by name, with the capacity
/// and overhead `nodeclass` gives it (AMI family, kubelet `maxPods`,
/// `podsPerCore`, `kubeReserved`, `systemReserved`, `evictionHard`, block
/// device mappings and `instanceStorePolicy`) and its offerings: on-demand and spot in each
/// zone of the NodeClass's resolved subnets, and (with
/// `options.reserved_capacity`) one reserved offering per capacity
/// reservation of the type in its status. A type with no price has no
/// on-demand or spot offering. A type the NodeClass cannot run (`a1.*` with
/// AL2023, `networkInterfaces` it cannot host, `connectionTracking` off
/// Nitro) keeps its offerings, all unavailable. `options.reserved_enis` and
/// `options.vm_memory_overhead_percent` shape pods and memory as upstream's
/// flags of those names. A kubelet or volume size value that is not a
/// quantity (or percentage) is an error naming its field, and an overhead
/// percentage that is negative or not finite one naming the option.
pub fn instance_types_for(
    catalog: &Catalog,
    region: &str,
    nodeclass: &EC2NodeClass,
    options: &InstanceTypeOptions,
) -> Result<Vec<InstanceType>, InstanceTypeError> {
    check_region(region)?;
    let settings = NodeSettings::of(nodeclass)?.with_options(options)?;
    let zones = offerings::zones(nodeclass);
    let compatibility = Compatibility::of(nodeclass);
    // One price table for every type, and one price for both kinds of
    // offering of a type.
    let table = offerings::price_table(catalog, region);
    let reservations = nodeclass
        .status
        .as_ref()
        .and_then(|s| s.capacity_reservations.as_deref())
        .unwrap_or_default();
    Ok(catalog
        .records()
        .map(|record| {
            let on_demand = catalog
                .on_demand_price(table, record.name)
                .map(|(price, _)| price);
            let mut offered = offerings::offerings(record.name, on_demand, &zones, options);
            offered.extend(offerings::reserved_offerings(
                record.name,
                on_demand,
                &zones,
                reservations,
                options,
            ));
            // Upstream keeps a type the NodeClass cannot run, with every
            // offering unavailable.
            if !compatibility.allows(&TypeFacts::of(catalog, record)) {
                offered = offered.into_iter().map(Offering::unavailable).collect();
            }
            build(catalog, record, region, &settings, offered)
        })
        .collect())
}

/// The instance type `name` of `catalog` in `region`, at AL2023 defaults.
pub fn instance_type(
    catalog: &Catalog,
    name: &str,
    region: &str,
) -> Result<InstanceType, InstanceTypeError> {
    check_region(region)?;
    let record = catalog
        .record(name)
        .ok_or_else(|| InstanceTypeError::UnknownType(name.to_owned()))?;
    Ok(build(
        catalog,
        record,
        region,
        &NodeSettings::default(),
        Vec::new(),
    ))
}

fn build(
    catalog: &Catalog,
    record: &TypeRecord,
    region: &str,
    settings: &NodeSettings,
    offerings: Vec<Offering>,
) -> InstanceType {
    let capacity = resources::capacity(catalog, record, settings);
    let overhead = resources::overhead(catalog, record, settings, &capacity);
    let mut instance_type = InstanceType::new(
        record.name,
        std::iter::empty::<(&str, &str)>(),
        offerings,
        capacity,
        overhead,
    );
    // The engine derived the keys the offerings carry (the reservation
    // labels among them) from the available offerings; the type's own
    // `DoesNotExist` on those keys would hide a reserved offering.
    let offered: BTreeSet<String> = instance_type
        .offerings
        .iter()
        .flat_map(|o| o.requirements.keys().map(str::to_owned))
        .collect();
    for requirement in labels::requirements(catalog, record, region, settings.family) {
        if !offered.contains(requirement.key()) {
            instance_type.requirements.add(requirement);
        }
    }
    instance_type
}

/// The first word of every AWS region name, by the AWS SDKs' partition
/// rules (`aws`: us, eu, ap, sa, ca, me, af, il, mx; `aws-cn`: cn;
/// `aws-us-gov` and the isolated partitions: us, eu; `aws-eusc`: eusc).
const REGION_PREFIXES: [&str; 11] = [
    "us", "eu", "ap", "sa", "ca", "me", "af", "il", "mx", "cn", "eusc",
];

/// Checks that `region` reads as an AWS region name as the AWS SDKs'
/// partitions match them: a partition's prefix, lowercase words, and a
/// number, joined by `-` (`us-east-1`, `ap-southeast-5`, `us-gov-west-1`).
/// A region AWS has not opened yet passes if it is named so; upstream, too,
/// takes any region its clients can reach. Every function here that takes a
/// region checks it so.
pub fn check_region(region: &str) -> Result<(), InstanceTypeError> {
    let parts: Vec<&str> = region.split('-').collect();
    let well_formed = parts.len() >= 3
        && REGION_PREFIXES.contains(&parts[0])
        && parts
            .last()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && parts[..parts.len() - 1]
            .iter()
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()));
    if well_formed {
        Ok(())
    } else {
        Err(InstanceTypeError::Region(region.to_owned()))
    }
}
