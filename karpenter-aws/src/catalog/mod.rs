//! The embedded catalog: the EC2 instance types upstream's generated
//! reference page lists (with every `karpenter.k8s.aws/*` label), the VPC
//! and ENI limits, the network bandwidth table and the static on-demand
//! price tables, as described in `data/SOURCES.md`. Built once, on first
//! use; no network is needed.

mod error;
mod records;
pub(crate) mod table;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::OnceLock;

pub use error::{CatalogError, CatalogProblem};
pub(crate) use records::{Arch, LABEL_COLUMNS, TypeRecord, VpcLimits};

use table::Table;

pub(crate) const INSTANCE_TYPES: &str = include_str!("../../data/instance-types.csv");
const VPC_LIMITS: &str = include_str!("../../data/vpc-limits.csv");
const BANDWIDTH: &str = include_str!("../../data/network-bandwidth.csv");
const PRICES: &str = include_str!("../../data/prices-on-demand.csv");

/// An on-demand price per hour in one region's table.
#[derive(Clone, Debug, PartialEq)]
struct Price {
    per_hour: f64,
    currency: &'static str,
}

/// The EC2 facts the provider plans with: instance types by name, their VPC
/// limits and network bandwidth, and on-demand prices by region.
#[derive(Debug)]
pub struct Catalog {
    types: BTreeMap<&'static str, TypeRecord>,
    vpc_limits: BTreeMap<&'static str, VpcLimits>,
    bandwidth_mbps: BTreeMap<&'static str, u64>,
    prices: BTreeMap<&'static str, BTreeMap<&'static str, Price>>,
}

impl Catalog {
    /// The catalog built from the data embedded in the crate, parsed on the
    /// first call and shared afterwards. An error means the embedded data is
    /// broken (a bad copy of a data file), and names the file, line and
    /// column.
    pub fn embedded() -> Result<&'static Catalog, CatalogError> {
        static CATALOG: OnceLock<Result<Catalog, CatalogError>> = OnceLock::new();
        CATALOG
            .get_or_init(Catalog::parse)
            .as_ref()
            .map_err(Clone::clone)
    }

    fn parse() -> Result<Catalog, CatalogError> {
        let vpc_limits = records::vpc_limits(&Table::new("vpc-limits.csv", VPC_LIMITS)?)?;
        let types = records::instance_types(
            &Table::new("instance-types.csv", INSTANCE_TYPES)?,
            &vpc_limits,
        )?;
        Ok(Catalog {
            types,
            vpc_limits,
            bandwidth_mbps: records::bandwidth(&Table::new("network-bandwidth.csv", BANDWIDTH)?)?,
            prices: prices(&Table::new("prices-on-demand.csv", PRICES)?)?,
        })
    }

    /// How many instance types the catalog holds.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether the catalog holds no instance type.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The instance types' names, in name order.
    pub fn type_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.types.keys().copied()
    }

    /// Whether the catalog knows the instance type `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }

    /// The on-demand price per hour of `instance_type` in `region`'s static
    /// table, and its currency (`USD`, or `CNY` in `cn-north-1`); `None` when
    /// the region has no table or the table no price for the type. Upstream
    /// starts a region without a table from us-east-1's: that choice belongs
    /// to the offerings, not to this lookup.
    pub fn on_demand_price(&self, region: &str, instance_type: &str) -> Option<(f64, &str)> {
        self.prices
            .get(region)?
            .get(instance_type)
            .map(|p| (p.per_hour, p.currency))
    }

    /// The regions with a static on-demand price table, in name order.
    pub fn priced_regions(&self) -> impl Iterator<Item = &str> + '_ {
        self.prices.keys().copied()
    }

    pub(crate) fn record(&self, name: &str) -> Option<&TypeRecord> {
        self.types.get(name)
    }

    pub(crate) fn records(&self) -> impl Iterator<Item = &TypeRecord> + '_ {
        self.types.values()
    }

    pub(crate) fn vpc_limits(&self, name: &str) -> Option<&VpcLimits> {
        self.vpc_limits.get(name)
    }

    pub(crate) fn bandwidth_mbps(&self, name: &str) -> Option<u64> {
        self.bandwidth_mbps.get(name).copied()
    }
}

/// `prices-on-demand.csv`: region → type → price.
fn prices(
    table: &Table,
) -> Result<BTreeMap<&'static str, BTreeMap<&'static str, Price>>, CatalogError> {
    let region = table.column("region")?;
    let name = table.column("instance_type")?;
    let per_hour = table.column("price_per_hour")?;
    let currency = table.column("currency")?;
    let mut prices: BTreeMap<&str, BTreeMap<&str, Price>> = BTreeMap::new();
    for row in table.rows() {
        let row = row?;
        let price: f64 = row.required_number(per_hour)?;
        if !price.is_finite() || price < 0.0 {
            return Err(row.error(per_hour, CatalogProblem::NotANumber(price.to_string())));
        }
        let previous = prices.entry(row.required(region)?).or_default().insert(
            row.required(name)?,
            Price {
                per_hour: price,
                currency: row.required(currency)?,
            },
        );
        if previous.is_some() {
            let duplicate = row.text(name).to_owned();
            return Err(row.error(name, CatalogProblem::Duplicate(duplicate)));
        }
    }
    Ok(prices)
}
