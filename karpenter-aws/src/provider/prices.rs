//! `refresh_prices`: spot prices from `DescribeSpotPriceHistory` and
//! on-demand prices from the Pricing API's `GetProducts`, as upstream's
//! pricing controller reads them (at start and every 12 hours).

use std::collections::BTreeMap;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT,
};
use thiserror::Error;

use super::{AwsCloudProvider, lock};
use crate::ec2::{
    DescribeSpotPriceHistoryInput, Ec2Api, Ec2Error, GetProductsInput, PriceListError,
    PricingFilter, on_demand_prices,
};

/// Upstream prices a reservation's offering at the on-demand price divided
/// by this, so that reserved capacity is always the cheapest.
const RESERVED_PRICE_DIVISOR: f64 = 10_000_000.0;

/// The Linux product descriptions upstream asks spot prices for.
const SPOT_PRODUCTS: [&str; 2] = ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"];

/// A price refresh that failed; the prices read before it stay.
#[derive(Debug, Error)]
pub enum PriceRefreshError {
    /// An AWS call failed.
    #[error("reading prices: {0}")]
    Call(#[from] Ec2Error),
    /// A Pricing API document could not be read.
    #[error("reading on-demand prices: {0}")]
    PriceList(#[from] PriceListError),
}

/// What a refresh read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriceRefresh {
    /// Instance types with an on-demand price.
    pub on_demand: usize,
    /// (type, zone) pairs with a spot price.
    pub spot: usize,
}

/// Sets the offerings of `types` that `on_demand` prices: on-demand at its
/// price, reserved at it over [`RESERVED_PRICE_DIVISOR`], and spot at it
/// too while no spot price is known (`spot_as_on_demand`). A type it does
/// not price keeps its static price, as upstream keeps entries a refresh
/// does not replace.
pub(crate) fn apply_on_demand(
    types: &mut [InstanceType],
    on_demand: &BTreeMap<String, f64>,
    spot_as_on_demand: bool,
) {
    for instance_type in types {
        let Some(&price) = on_demand.get(&instance_type.name) else {
            continue;
        };
        for offering in &mut instance_type.offerings {
            match offering.capacity_type.as_str() {
                CAPACITY_TYPE_ON_DEMAND => offering.price = price,
                CAPACITY_TYPE_RESERVED => offering.price = price / RESERVED_PRICE_DIVISOR,
                CAPACITY_TYPE_SPOT if spot_as_on_demand => offering.price = price,
                _ => {}
            }
        }
    }
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// Reads spot and on-demand prices; every class's types are made again
    /// at them. Spot prices: the latest record per (type, zone); a (type,
    /// zone) without one then has no spot offering, as upstream's.
    /// On-demand: shared-tenancy compute and dedicated bare metal, Linux,
    /// as upstream's filters ask.
    ///
    /// # Errors
    ///
    /// [`PriceRefreshError`] when a call or a price document fails; the
    /// prices read before (spot before on-demand) are kept.
    pub async fn refresh_prices(&self) -> Result<PriceRefresh, PriceRefreshError> {
        let spot = self.refresh_spot_prices().await?;
        let on_demand = self.refresh_on_demand_prices().await?;
        Ok(PriceRefresh { on_demand, spot })
    }

    /// Reads spot prices alone (EC2's `DescribeSpotPriceHistory`): what a
    /// controller in an isolated VPC, which cannot reach the Pricing API,
    /// refreshes. Answers how many (type, zone) pairs have a price.
    ///
    /// # Errors
    ///
    /// [`PriceRefreshError::Call`]; the spot prices read before are kept.
    pub async fn refresh_spot_prices(&self) -> Result<usize, PriceRefreshError> {
        let now = (self.clock)();
        let history = self
            .api
            .describe_spot_price_history(DescribeSpotPriceHistoryInput {
                instance_types: Vec::new(),
                product_descriptions: SPOT_PRODUCTS.iter().map(|p| (*p).to_owned()).collect(),
                start_time: Some(now),
            })
            .await?;
        let mut latest: BTreeMap<(String, String), (jiff::Timestamp, f64)> = BTreeMap::new();
        for record in history.spot_price_history {
            let key = (record.instance_type, record.availability_zone);
            let newer = latest
                .get(&key)
                .is_none_or(|(at, _)| record.timestamp >= *at);
            if newer {
                latest.insert(key, (record.timestamp, record.spot_price));
            }
        }
        let spot: BTreeMap<(String, String), f64> =
            latest.into_iter().map(|(k, (_, p))| (k, p)).collect();
        let count = spot.len();
        lock(&self.options).spot_prices = Some(spot);
        lock(&self.priced_types).clear();
        Ok(count)
    }

    /// Reads on-demand prices alone (the Pricing API's `GetProducts`).
    /// Answers how many instance types have a price.
    ///
    /// # Errors
    ///
    /// [`PriceRefreshError`] when a call or a price document fails; the
    /// on-demand prices read before are kept.
    pub async fn refresh_on_demand_prices(&self) -> Result<usize, PriceRefreshError> {
        let mut on_demand = BTreeMap::new();
        for (tenancy, family) in [
            ("Shared", "Compute Instance"),
            ("Dedicated", "Compute Instance (bare metal)"),
        ] {
            let products = self
                .api
                .get_products(self.products_input(tenancy, family))
                .await?;
            on_demand.extend(on_demand_prices(&products.price_list)?);
        }
        let count = on_demand.len();
        *lock(&self.on_demand) = Some(on_demand);
        lock(&self.priced_types).clear();
        Ok(count)
    }

    /// Upstream's `GetProducts` filters for Linux on-demand prices in the
    /// region.
    fn products_input(&self, tenancy: &str, product_family: &str) -> GetProductsInput {
        let filters = [
            ("regionCode", self.config.region.as_str()),
            ("preInstalledSw", "NA"),
            ("operatingSystem", "Linux"),
            ("capacitystatus", "Used"),
            ("marketoption", "OnDemand"),
            ("tenancy", tenancy),
            ("productFamily", product_family),
        ];
        GetProductsInput {
            service_code: "AmazonEC2".to_owned(),
            filters: filters
                .iter()
                .map(|(field, value)| PricingFilter::new(field, value))
                .collect(),
        }
    }
}
