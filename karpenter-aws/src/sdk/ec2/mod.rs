//! [`SdkEc2`]: [`Ec2Api`] over `aws-sdk-ec2` (and `aws-sdk-pricing` for
//! `GetProducts`).

mod convert;
mod describe;
mod dry_run;
mod fleet;
mod instances;
mod placement;
mod template;

use async_trait::async_trait;
use aws_sdk_ec2::types as sdk;

use super::error::sdk_error;
use super::pages::every_page;
use super::pricing::get_products;
use crate::ec2::{
    CreateFleetInput, CreateFleetOutput, CreateLaunchTemplateInput, CreateTagsInput,
    DescribeCapacityReservationsInput, DescribeCapacityReservationsOutput, DescribeImagesInput,
    DescribeImagesOutput, DescribeInput, DescribeInstanceStatusInput, DescribeInstanceStatusOutput,
    DescribeInstanceTypeOfferingsInput, DescribeInstanceTypeOfferingsOutput,
    DescribeInstanceTypesInput, DescribeInstanceTypesOutput, DescribeInstancesOutput,
    DescribeLaunchTemplatesInput, DescribeLaunchTemplatesOutput, DescribePlacementGroupsInput,
    DescribePlacementGroupsOutput, DescribeSecurityGroupsInput, DescribeSecurityGroupsOutput,
    DescribeSpotPriceHistoryInput, DescribeSpotPriceHistoryOutput, DescribeSubnetsInput,
    DescribeSubnetsOutput, DryRunCall, Ec2Api, Ec2Error, GetProductsInput, GetProductsOutput,
    LaunchTemplate, Operation, TerminateInstancesInput, TerminateInstancesOutput,
};
use convert::{filters, list, tags_out, time_out};

/// The page size upstream asks `DescribeInstanceTypes` for (its maximum).
const INSTANCE_TYPES_PAGE: i32 = 100;

/// EC2 and the Pricing API through the AWS SDK: what
/// [`AwsClients::ec2`](super::AwsClients::ec2) gives.
///
/// Every call keeps the deadline and retries of the clients' limits;
/// describe calls read every page up to the limits' cap. Cheap to clone:
/// the SDK's clients share their connections.
#[derive(Clone, Debug)]
pub struct SdkEc2 {
    pub(super) ec2: aws_sdk_ec2::Client,
    pub(super) pricing: aws_sdk_pricing::Client,
    pub(super) max_pages: usize,
}

/// Every page of `$request` (a describe request waiting for its token),
/// each page's items read from `page` by `$items`: [`every_page`] for a
/// request the SDK builds as a type of its own per operation.
macro_rules! every_page_of {
    ($self:ident, $op:expr, $request:expr, |$page:ident| $items:expr) => {
        every_page($op, $self.max_pages, |token| {
            let request = $request.set_next_token(token);
            async move {
                let $page = request.send().await.map_err(|e| sdk_error($op, e))?;
                let items = $items.collect();
                Ok((items, next($page.next_token())))
            }
        })
        .await?
    };
}

#[async_trait]
impl Ec2Api for SdkEc2 {
    async fn describe_instance_types(
        &self,
        input: DescribeInstanceTypesInput,
    ) -> Result<DescribeInstanceTypesOutput, Ec2Error> {
        let op = Operation::DescribeInstanceTypes;
        let names: Vec<_> = input
            .instance_types
            .iter()
            .map(|t| sdk::InstanceType::from(t.as_str()))
            .collect();
        let instance_types = every_page_of!(
            self,
            op,
            self.ec2
                .describe_instance_types()
                .set_instance_types((!names.is_empty()).then(|| names.clone()))
                .set_filters(filters(input.filters.clone()))
                .max_results(INSTANCE_TYPES_PAGE),
            |page| page.instance_types().iter().map(describe::instance_type)
        );
        Ok(DescribeInstanceTypesOutput { instance_types })
    }

    async fn describe_instance_type_offerings(
        &self,
        input: DescribeInstanceTypeOfferingsInput,
    ) -> Result<DescribeInstanceTypeOfferingsOutput, Ec2Error> {
        let op = Operation::DescribeInstanceTypeOfferings;
        let instance_type_offerings = every_page_of!(
            self,
            op,
            self.ec2
                .describe_instance_type_offerings()
                .location_type(describe::location_type(input.location_type))
                .set_filters(filters(input.filters.clone())),
            |page| page
                .instance_type_offerings()
                .iter()
                .map(describe::offering)
        );
        Ok(DescribeInstanceTypeOfferingsOutput {
            instance_type_offerings,
        })
    }

    async fn describe_subnets(
        &self,
        input: DescribeSubnetsInput,
    ) -> Result<DescribeSubnetsOutput, Ec2Error> {
        let op = Operation::DescribeSubnets;
        let subnets = every_page_of!(
            self,
            op,
            self.ec2
                .describe_subnets()
                .set_subnet_ids(list(input.ids.clone()))
                .set_filters(filters(input.filters.clone())),
            |page| page.subnets().iter().map(describe::subnet)
        );
        Ok(DescribeSubnetsOutput { subnets })
    }

    async fn describe_security_groups(
        &self,
        input: DescribeSecurityGroupsInput,
    ) -> Result<DescribeSecurityGroupsOutput, Ec2Error> {
        let op = Operation::DescribeSecurityGroups;
        let security_groups = every_page_of!(
            self,
            op,
            self.ec2
                .describe_security_groups()
                .set_group_ids(list(input.ids.clone()))
                .set_filters(filters(input.filters.clone())),
            |page| page.security_groups().iter().map(describe::security_group)
        );
        Ok(DescribeSecurityGroupsOutput { security_groups })
    }

    async fn describe_images(
        &self,
        input: DescribeImagesInput,
    ) -> Result<DescribeImagesOutput, Ec2Error> {
        let op = Operation::DescribeImages;
        let images = every_page_of!(
            self,
            op,
            self.ec2
                .describe_images()
                .set_image_ids(list(input.image_ids.clone()))
                .set_owners(list(input.owners.clone()))
                .set_filters(filters(input.filters.clone())),
            |page| page.images().iter().map(describe::image)
        );
        Ok(DescribeImagesOutput { images })
    }

    async fn describe_capacity_reservations(
        &self,
        input: DescribeCapacityReservationsInput,
    ) -> Result<DescribeCapacityReservationsOutput, Ec2Error> {
        let op = Operation::DescribeCapacityReservations;
        let capacity_reservations = every_page_of!(
            self,
            op,
            self.ec2
                .describe_capacity_reservations()
                .set_capacity_reservation_ids(list(input.ids.clone()))
                .set_filters(filters(input.filters.clone())),
            |page| page
                .capacity_reservations()
                .iter()
                .map(describe::capacity_reservation)
        );
        Ok(DescribeCapacityReservationsOutput {
            capacity_reservations,
        })
    }

    async fn describe_placement_groups(
        &self,
        input: DescribePlacementGroupsInput,
    ) -> Result<DescribePlacementGroupsOutput, Ec2Error> {
        placement::describe_placement_groups(&self.ec2, input).await
    }

    async fn create_fleet(&self, input: CreateFleetInput) -> Result<CreateFleetOutput, Ec2Error> {
        let op = Operation::CreateFleet;
        let answer = dry_run::fleet_request(&self.ec2, input)
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        Ok(CreateFleetOutput {
            fleet_id: answer.fleet_id().unwrap_or_default().to_owned(),
            instances: answer
                .instances()
                .iter()
                .map(fleet::fleet_instance)
                .collect(),
            errors: answer.errors().iter().map(fleet::fleet_error).collect(),
        })
    }

    async fn create_launch_template(
        &self,
        input: CreateLaunchTemplateInput,
    ) -> Result<LaunchTemplate, Ec2Error> {
        let op = Operation::CreateLaunchTemplate;
        let answer = template::template_request(&self.ec2, input)
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        answer
            .launch_template()
            .map(fleet::launch_template)
            .ok_or_else(|| missing(op, "LaunchTemplate"))
    }

    async fn describe_launch_templates(
        &self,
        input: DescribeLaunchTemplatesInput,
    ) -> Result<DescribeLaunchTemplatesOutput, Ec2Error> {
        let op = Operation::DescribeLaunchTemplates;
        let launch_templates = every_page_of!(
            self,
            op,
            self.ec2
                .describe_launch_templates()
                .set_launch_template_names(list(input.launch_template_names.clone()))
                .set_filters(filters(input.filters.clone())),
            |page| page.launch_templates().iter().map(fleet::launch_template)
        );
        Ok(DescribeLaunchTemplatesOutput { launch_templates })
    }

    async fn delete_launch_template(&self, name: &str) -> Result<LaunchTemplate, Ec2Error> {
        let op = Operation::DeleteLaunchTemplate;
        let answer = self
            .ec2
            .delete_launch_template()
            .launch_template_name(name)
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        answer
            .launch_template()
            .map(fleet::launch_template)
            .ok_or_else(|| missing(op, "LaunchTemplate"))
    }

    async fn describe_instances(
        &self,
        input: DescribeInput,
    ) -> Result<DescribeInstancesOutput, Ec2Error> {
        let op = Operation::DescribeInstances;
        let instances = every_page_of!(
            self,
            op,
            self.ec2
                .describe_instances()
                .set_instance_ids(list(input.ids.clone()))
                .set_filters(filters(input.filters.clone())),
            |page| page
                .reservations()
                .iter()
                .flat_map(|r| r.instances())
                .map(instances::instance)
        );
        Ok(DescribeInstancesOutput { instances })
    }

    async fn terminate_instances(
        &self,
        input: TerminateInstancesInput,
    ) -> Result<TerminateInstancesOutput, Ec2Error> {
        let op = Operation::TerminateInstances;
        let answer = self
            .ec2
            .terminate_instances()
            .set_instance_ids(Some(input.instance_ids))
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        Ok(TerminateInstancesOutput {
            terminating_instances: answer
                .terminating_instances()
                .iter()
                .map(instances::state_change)
                .collect(),
        })
    }

    async fn create_tags(&self, input: CreateTagsInput) -> Result<(), Ec2Error> {
        let op = Operation::CreateTags;
        self.ec2
            .create_tags()
            .set_resources(Some(input.resources))
            .set_tags(Some(tags_out(input.tags)))
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        Ok(())
    }

    async fn describe_spot_price_history(
        &self,
        input: DescribeSpotPriceHistoryInput,
    ) -> Result<DescribeSpotPriceHistoryOutput, Ec2Error> {
        let op = Operation::DescribeSpotPriceHistory;
        let types: Vec<_> = input
            .instance_types
            .iter()
            .map(|t| sdk::InstanceType::from(t.as_str()))
            .collect();
        let spot_price_history = every_page_of!(
            self,
            op,
            self.ec2
                .describe_spot_price_history()
                .set_instance_types((!types.is_empty()).then(|| types.clone()))
                .set_product_descriptions(list(input.product_descriptions.clone()))
                .set_start_time(input.start_time.map(time_out)),
            |page| page
                .spot_price_history()
                .iter()
                .filter_map(describe::spot_price)
        );
        Ok(DescribeSpotPriceHistoryOutput { spot_price_history })
    }

    async fn describe_instance_status(
        &self,
        input: DescribeInstanceStatusInput,
    ) -> Result<DescribeInstanceStatusOutput, Ec2Error> {
        let op = Operation::DescribeInstanceStatus;
        let instance_statuses = every_page_of!(
            self,
            op,
            self.ec2
                .describe_instance_status()
                .set_instance_ids(list(input.instance_ids.clone()))
                .set_filters(filters(input.filters.clone()))
                .include_all_instances(input.include_all_instances),
            |page| page
                .instance_statuses()
                .iter()
                .map(instances::instance_status)
        );
        Ok(DescribeInstanceStatusOutput { instance_statuses })
    }

    async fn dry_run(&self, call: DryRunCall) -> Result<(), Ec2Error> {
        dry_run::dry_run(&self.ec2, call).await
    }

    async fn get_products(&self, input: GetProductsInput) -> Result<GetProductsOutput, Ec2Error> {
        get_products(&self.pricing, self.max_pages, input).await
    }
}

/// A page's next token, owned.
fn next(token: Option<&str>) -> Option<String> {
    token.map(str::to_owned)
}

/// An answer lacking a field the call always returns.
fn missing(operation: Operation, field: &str) -> Ec2Error {
    Ec2Error::Transport {
        operation,
        source: format!("the answer has no {field}").into(),
    }
}
