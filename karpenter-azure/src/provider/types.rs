//! The instance types the provider offers: each node class's sizes made
//! once per settings and prices, at the Retail Prices API's prices once
//! refreshed, with the failure cache's marks applied.

use std::collections::BTreeMap;
use std::sync::Arc;

use karpenter_core::cloudprovider::{CloudProviderError, InstanceType};
use karpenter_core::scheduling::CAPACITY_TYPE_SPOT;

use super::{AzureCloudProvider, lock};
use crate::arm::{ArmError, ComputeApi};
use crate::instancetype::{Settings, instance_types};
use crate::nodeclass::AKSNodeClass;

/// A node class's instance types at the current prices, before the failure
/// cache, and the settings they were made under.
pub(super) type PricedTypes = (Settings, Arc<[InstanceType]>);

/// Prices read from the Retail Prices API, by size.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct LivePrices {
    on_demand: BTreeMap<String, f64>,
    spot: BTreeMap<String, f64>,
}

impl<A: ComputeApi> AzureCloudProvider<A> {
    /// Reads the region's prices from the Retail Prices API (upstream does at
    /// start and every 12 hours): on-demand prices replace the embedded
    /// table's, and spot offerings get their own prices where the API has
    /// them (else the on-demand price, as before). A failed refresh keeps
    /// the prices as they were. Returns how many sizes have a spot price.
    pub async fn refresh_prices(&self) -> Result<usize, ArmError> {
        let items = self.api.retail_prices(&self.config.region).await?;
        let (on_demand, spot) = crate::arm::price_tables(&items);
        let spot_count = spot.len();
        *lock(&self.live_prices) = Some(LivePrices { on_demand, spot });
        lock(&self.priced_types).clear();
        Ok(spot_count)
    }

    /// The instance types of `class`, with the failure cache applied.
    pub(super) fn types_for(
        &self,
        class: &AKSNodeClass,
    ) -> Result<(Settings, Arc<[InstanceType]>), CloudProviderError> {
        let settings = self.settings(class)?;
        let name = class.metadata.name.clone().unwrap_or_default();
        let priced = {
            // Made while the cache is held: a price refresh clears it only
            // after, so nothing made at the old prices stays.
            let mut cache = lock(&self.priced_types);
            match cache.get(&name) {
                Some((made_under, types)) if *made_under == settings => Arc::clone(types),
                _ => {
                    let types: Arc<[InstanceType]> = self.priced(&settings).into();
                    cache.insert(name, (settings.clone(), Arc::clone(&types)));
                    types
                }
            }
        };
        let now = (self.clock)();
        let mut failures = lock(&self.failures);
        // Marks that ran out mark nothing; forgetting them lets callers
        // share the priced list again as soon as the last one does.
        failures.expire(now);
        if failures.is_empty() {
            // Nothing to mark: every caller shares the priced list.
            return Ok((settings, priced));
        }
        let mut types = priced.to_vec();
        failures.apply(self.catalog, &mut types, now);
        Ok((settings, types.into()))
    }

    /// The catalog's instance types under `settings`, at the live prices
    /// once refreshed.
    fn priced(&self, settings: &Settings) -> Vec<InstanceType> {
        let mut types = instance_types(self.catalog, settings);
        if let Some(live) = lock(&self.live_prices).as_ref() {
            for instance_type in &mut types {
                // Sizes upstream does not know keep the price that keeps
                // them from being chosen.
                let known = self
                    .catalog
                    .sku(&instance_type.name)
                    .is_some_and(|s| s.known);
                let on_demand = live
                    .on_demand
                    .get(&instance_type.name)
                    .copied()
                    .filter(|_| known);
                let spot = live
                    .spot
                    .get(&instance_type.name)
                    .copied()
                    .filter(|_| known);
                for offering in &mut instance_type.offerings {
                    let base = on_demand.unwrap_or(offering.price);
                    offering.price = if offering.capacity_type == CAPACITY_TYPE_SPOT {
                        spot.unwrap_or(base)
                    } else {
                        base
                    };
                }
            }
        }
        types
    }
}
