//! What [`InMemoryEc2`](super::InMemoryEc2) knows of instance types and
//! their prices: the embedded [`Catalog`].

use crate::catalog::{Arch, TypeRecord};
use crate::ec2::pricing::price_document;
use crate::ec2::{Ec2Error, InstanceTypeInfo, Operation};
use crate::{Catalog, FALLBACK_PRICE_REGION};

/// Spot as a share of on-demand when no spot price was set: upstream's
/// fake uses the same ratio.
const SPOT_DISCOUNT: f64 = 0.7;

/// The embedded catalog, or the error `operation` fails with when the
/// crate's data is broken.
pub(super) fn catalog(operation: Operation) -> Result<&'static Catalog, Ec2Error> {
    Catalog::embedded().map_err(|source| Ec2Error::Transport {
        operation,
        source: Box::new(source),
    })
}

/// EC2's name of an architecture.
pub(super) fn architecture(arch: Arch) -> &'static str {
    match arch {
        Arch::Amd64 => "x86_64",
        Arch::Arm64 => "arm64",
    }
}

/// `record` as `DescribeInstanceTypes` describes it.
pub(super) fn type_info(catalog: &Catalog, record: &TypeRecord) -> InstanceTypeInfo {
    let limits = catalog.vpc_limits(record.name);
    let number = |column: &str| {
        record
            .label(column)
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or_default()
    };
    InstanceTypeInfo {
        instance_type: record.name.to_owned(),
        default_vcpus: record.vcpus,
        memory_mib: record.memory_mib,
        supported_architectures: vec![architecture(record.arch).to_owned()],
        bare_metal: record
            .label("instance-size")
            .is_some_and(|size| size.contains("metal")),
        hypervisor: record
            .label("instance-hypervisor")
            .filter(|h| !h.is_empty())
            .map(str::to_owned),
        maximum_network_interfaces: limits.map_or(0, |l| l.default_card_interfaces),
        ipv4_addresses_per_interface: limits.map_or(0, |l| l.ipv4_per_interface),
        maximum_efa_interfaces: record.efa,
        gpu_count: number("instance-gpu-count"),
        supported_usage_classes: vec!["on-demand".to_owned(), "spot".to_owned()],
    }
}

/// The on-demand price of `instance_type` in `region` and its currency:
/// the region's static table, or the fallback region's.
pub(super) fn on_demand(
    catalog: &Catalog,
    region: &str,
    instance_type: &str,
) -> Option<(f64, String)> {
    catalog
        .on_demand_price(region, instance_type)
        .or_else(|| catalog.on_demand_price(FALLBACK_PRICE_REGION, instance_type))
        .map(|(price, currency)| (price, currency.to_owned()))
}

/// The spot price of `instance_type` in `zone` of `region`: the one set,
/// or a share of on-demand.
pub(super) fn spot(
    state: &super::State,
    catalog: &Catalog,
    instance_type: &str,
    zone: &str,
) -> Option<f64> {
    let key = (instance_type.to_owned(), zone.to_owned());
    state.spot_prices.get(&key).copied().or_else(|| {
        on_demand(catalog, &state.region, instance_type).map(|(price, _)| price * SPOT_DISCOUNT)
    })
}

/// `GetProducts` documents for every priced type of `region`.
pub(super) fn price_list(catalog: &Catalog, region: &str) -> Vec<String> {
    catalog
        .type_names()
        .filter_map(|name| {
            let (price, currency) = on_demand(catalog, region, name)?;
            Some(price_document(region, name, price, &currency))
        })
        .collect()
}
