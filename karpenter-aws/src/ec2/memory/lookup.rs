//! The read-only calls of [`InMemoryEc2`](super::InMemoryEc2) that work
//! from the catalog and the clock rather than stored resources.

use super::State;
use super::catalog::{catalog, price_list, spot, type_info};
use super::filter::Filtered;
use super::filter::{passes, select};
use crate::ec2::{
    DescribeInput, DescribeInstanceStatusInput, DescribeInstanceStatusOutput,
    DescribeInstanceTypeOfferingsInput, DescribeInstanceTypeOfferingsOutput,
    DescribeInstanceTypesInput, DescribeInstanceTypesOutput, DescribeSpotPriceHistoryInput,
    DescribeSpotPriceHistoryOutput, Ec2Error, GetProductsInput, GetProductsOutput, InstanceState,
    InstanceStatus, InstanceTypeOffering, LocationType, Operation, SpotPrice,
};

impl State {
    /// `DescribeInstanceTypes`.
    pub(super) fn describe_instance_types(
        &self,
        input: DescribeInstanceTypesInput,
    ) -> Result<DescribeInstanceTypesOutput, Ec2Error> {
        let operation = Operation::DescribeInstanceTypes;
        let catalog = catalog(operation)?;
        let instance_types = catalog
            .records()
            .filter(|r| {
                input.instance_types.is_empty() || input.instance_types.iter().any(|n| n == r.name)
            })
            .map(|r| type_info(catalog, r))
            .filter(|info| {
                let f = &input.filters;
                passes(f, "instance-type", &info.instance_type)
                    && info
                        .supported_architectures
                        .iter()
                        .any(|a| passes(f, "processor-info.supported-architecture", a))
                    && passes(
                        f,
                        "bare-metal",
                        if info.bare_metal { "true" } else { "false" },
                    )
            })
            .collect();
        Ok(DescribeInstanceTypesOutput { instance_types })
    }

    /// `DescribeInstanceTypeOfferings`.
    pub(super) fn describe_instance_type_offerings(
        &self,
        input: DescribeInstanceTypeOfferingsInput,
    ) -> Result<DescribeInstanceTypeOfferingsOutput, Ec2Error> {
        let operation = Operation::DescribeInstanceTypeOfferings;
        let locations: Vec<String> = match input.location_type {
            LocationType::Region => vec![self.region.clone()],
            LocationType::AvailabilityZone => {
                self.zones.iter().map(|(name, _)| name.clone()).collect()
            }
            LocationType::AvailabilityZoneId => {
                self.zones.iter().map(|(_, id)| id.clone()).collect()
            }
        };
        let mut offerings = Vec::new();
        for name in catalog(operation)?.type_names() {
            for location in &locations {
                if passes(&input.filters, "instance-type", name)
                    && passes(&input.filters, "location", location)
                {
                    offerings.push(InstanceTypeOffering {
                        instance_type: name.to_owned(),
                        location_type: input.location_type,
                        location: location.clone(),
                    });
                }
            }
        }
        Ok(DescribeInstanceTypeOfferingsOutput {
            instance_type_offerings: offerings,
        })
    }

    /// `DescribeSpotPriceHistory`.
    pub(super) fn describe_spot_price_history(
        &self,
        input: DescribeSpotPriceHistoryInput,
    ) -> Result<DescribeSpotPriceHistoryOutput, Ec2Error> {
        let operation = Operation::DescribeSpotPriceHistory;
        let catalog = catalog(operation)?;
        let mut spot_price_history = Vec::new();
        for name in catalog.type_names() {
            if !input.instance_types.is_empty() && !input.instance_types.iter().any(|t| t == name) {
                continue;
            }
            for (zone, _) in &self.zones {
                if let Some(price) = spot(self, catalog, name, zone) {
                    spot_price_history.push(SpotPrice {
                        instance_type: name.to_owned(),
                        availability_zone: zone.clone(),
                        product_description: "Linux/UNIX".to_owned(),
                        spot_price: price,
                        timestamp: self.now,
                    });
                }
            }
        }
        Ok(DescribeSpotPriceHistoryOutput { spot_price_history })
    }

    /// `DescribeInstanceStatus`.
    pub(super) fn describe_instance_status(
        &self,
        input: DescribeInstanceStatusInput,
    ) -> Result<DescribeInstanceStatusOutput, Ec2Error> {
        let operation = Operation::DescribeInstanceStatus;
        let by_id = DescribeInput {
            ids: input.instance_ids,
            filters: Vec::new(),
        };
        let instances = select(
            &self.instances,
            &by_id,
            operation,
            "InvalidInstanceID.NotFound",
        )?;
        let instance_statuses = instances
            .into_iter()
            .filter(|i| input.include_all_instances || i.state == InstanceState::Running)
            .map(|i| {
                let mut status = self
                    .statuses
                    .get(&i.instance_id)
                    .cloned()
                    .unwrap_or_else(|| InstanceStatus {
                        instance_status: "ok".to_owned(),
                        system_status: "ok".to_owned(),
                        ..InstanceStatus::default()
                    });
                status.instance_id = i.instance_id;
                status.availability_zone = i.availability_zone;
                status.instance_state = i.state;
                status
            })
            .filter(|status| status.matches(&input.filters))
            .collect();
        Ok(DescribeInstanceStatusOutput { instance_statuses })
    }

    /// `GetProducts`.
    pub(super) fn get_products(
        &self,
        input: GetProductsInput,
    ) -> Result<GetProductsOutput, Ec2Error> {
        let operation = Operation::GetProducts;
        let region = input
            .filters
            .iter()
            .find(|f| f.field == "regionCode")
            .map_or_else(|| self.region.clone(), |f| f.value.clone());
        let catalog = catalog(operation)?;
        // Only a region the catalog prices itself gets documents, the
        // fallback table being the provider's choice, not the API's.
        let priced = catalog.priced_regions().any(|r| r == region);
        let price_list = if priced {
            price_list(catalog, &region)
        } else {
            Vec::new()
        };
        Ok(GetProductsOutput { price_list })
    }
}
