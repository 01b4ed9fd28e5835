//! [`Ec2Api`] over [`InMemoryEc2`]'s state.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::filter::select;
use super::fleet::create_fleet;
use super::{InMemoryEc2, State, Template};
use crate::ec2::{
    CreateFleetInput, CreateFleetOutput, CreateLaunchTemplateInput, CreateTagsInput,
    DescribeCapacityReservationsOutput, DescribeImagesInput, DescribeImagesOutput, DescribeInput,
    DescribeInstanceStatusInput, DescribeInstanceStatusOutput, DescribeInstanceTypeOfferingsInput,
    DescribeInstanceTypeOfferingsOutput, DescribeInstanceTypesInput, DescribeInstanceTypesOutput,
    DescribeInstancesOutput, DescribeLaunchTemplatesInput, DescribeLaunchTemplatesOutput,
    DescribePlacementGroupsInput, DescribePlacementGroupsOutput, DescribeSecurityGroupsOutput,
    DescribeSpotPriceHistoryInput, DescribeSpotPriceHistoryOutput, DescribeSubnetsOutput,
    DryRunCall, Ec2Api, Ec2Error, GetProductsInput, GetProductsOutput, InstanceState,
    InstanceStateChange, LaunchTemplate, Operation, TerminateInstancesInput,
    TerminateInstancesOutput,
};

impl InMemoryEc2 {
    /// Locks the state after taking any fault injected for `operation`.
    fn begin(&self, operation: Operation) -> Result<std::sync::MutexGuard<'_, State>, Ec2Error> {
        let mut state = self.lock();
        state.take_fault(operation)?;
        Ok(state)
    }
}

#[async_trait]
impl Ec2Api for InMemoryEc2 {
    async fn describe_instance_types(
        &self,
        input: DescribeInstanceTypesInput,
    ) -> Result<DescribeInstanceTypesOutput, Ec2Error> {
        self.begin(Operation::DescribeInstanceTypes)?
            .describe_instance_types(input)
    }

    async fn describe_instance_type_offerings(
        &self,
        input: DescribeInstanceTypeOfferingsInput,
    ) -> Result<DescribeInstanceTypeOfferingsOutput, Ec2Error> {
        self.begin(Operation::DescribeInstanceTypeOfferings)?
            .describe_instance_type_offerings(input)
    }

    async fn describe_subnets(
        &self,
        input: DescribeInput,
    ) -> Result<DescribeSubnetsOutput, Ec2Error> {
        let operation = Operation::DescribeSubnets;
        let state = self.begin(operation)?;
        let subnets = select(
            &state.subnets,
            &input,
            operation,
            "InvalidSubnetID.NotFound",
        )?;
        Ok(DescribeSubnetsOutput { subnets })
    }

    async fn describe_security_groups(
        &self,
        input: DescribeInput,
    ) -> Result<DescribeSecurityGroupsOutput, Ec2Error> {
        let operation = Operation::DescribeSecurityGroups;
        let state = self.begin(operation)?;
        let security_groups = select(
            &state.security_groups,
            &input,
            operation,
            "InvalidGroup.NotFound",
        )?;
        Ok(DescribeSecurityGroupsOutput { security_groups })
    }

    async fn describe_images(
        &self,
        input: DescribeImagesInput,
    ) -> Result<DescribeImagesOutput, Ec2Error> {
        let operation = Operation::DescribeImages;
        let state = self.begin(operation)?;
        let by_id = DescribeInput {
            ids: input.image_ids,
            filters: input.filters,
        };
        let images = select(&state.images, &by_id, operation, "InvalidAMIID.NotFound")?
            .into_iter()
            .filter(|image| input.owners.is_empty() || input.owners.iter().any(|o| owns(o, image)))
            .collect();
        Ok(DescribeImagesOutput { images })
    }

    async fn describe_capacity_reservations(
        &self,
        input: DescribeInput,
    ) -> Result<DescribeCapacityReservationsOutput, Ec2Error> {
        let operation = Operation::DescribeCapacityReservations;
        let state = self.begin(operation)?;
        let capacity_reservations = select(
            &state.reservations,
            &input,
            operation,
            "InvalidCapacityReservationId.NotFound",
        )?;
        Ok(DescribeCapacityReservationsOutput {
            capacity_reservations,
        })
    }

    async fn describe_placement_groups(
        &self,
        input: DescribePlacementGroupsInput,
    ) -> Result<DescribePlacementGroupsOutput, Ec2Error> {
        self.begin(Operation::DescribePlacementGroups)?
            .describe_placement_groups(&input)
    }

    async fn create_fleet(&self, input: CreateFleetInput) -> Result<CreateFleetOutput, Ec2Error> {
        // Recorded before any injected fault: the call was made either way.
        self.lock().fleet_inputs.push(input.clone());
        let mut state = self.begin(Operation::CreateFleet)?;
        create_fleet(&mut state, &input)
    }

    async fn create_launch_template(
        &self,
        input: CreateLaunchTemplateInput,
    ) -> Result<LaunchTemplate, Ec2Error> {
        let mut state = self.begin(Operation::CreateLaunchTemplate)?;
        let name = input.launch_template_name;
        if state.templates.contains_key(&name) {
            return Err(Ec2Error::service(
                Operation::CreateLaunchTemplate,
                "InvalidLaunchTemplateName.AlreadyExistsException",
                format!("Launch template name already in use: {name}"),
            ));
        }
        state.counters.template += 1;
        let template = LaunchTemplate {
            launch_template_id: format!("lt-{:017x}", state.counters.template),
            launch_template_name: name.clone(),
            create_time: state.now,
            tags: input
                .tag_specifications
                .into_iter()
                .filter(|s| s.resource_type == "launch-template")
                .flat_map(|s| s.tags)
                .collect(),
        };
        let data = input.launch_template_data;
        state.templates.insert(
            name,
            Template {
                template: template.clone(),
                data,
            },
        );
        Ok(template)
    }

    async fn describe_launch_templates(
        &self,
        input: DescribeLaunchTemplatesInput,
    ) -> Result<DescribeLaunchTemplatesOutput, Ec2Error> {
        let operation = Operation::DescribeLaunchTemplates;
        let state = self.begin(operation)?;
        let templates: BTreeMap<String, LaunchTemplate> = state
            .templates
            .iter()
            .map(|(k, t)| (k.clone(), t.template.clone()))
            .collect();
        let by_name = DescribeInput {
            ids: input.launch_template_names,
            filters: input.filters,
        };
        let launch_templates = select(
            &templates,
            &by_name,
            operation,
            "InvalidLaunchTemplateName.NotFoundException",
        )?;
        Ok(DescribeLaunchTemplatesOutput { launch_templates })
    }

    async fn delete_launch_template(&self, name: &str) -> Result<LaunchTemplate, Ec2Error> {
        let operation = Operation::DeleteLaunchTemplate;
        let mut state = self.begin(operation)?;
        let removed = state.templates.remove(name).ok_or_else(|| {
            Ec2Error::service(
                operation,
                "InvalidLaunchTemplateName.NotFoundException",
                format!(
                    "The specified launch template, with template name {name}, does not exist."
                ),
            )
        })?;
        Ok(removed.template)
    }

    async fn describe_instances(
        &self,
        input: DescribeInput,
    ) -> Result<DescribeInstancesOutput, Ec2Error> {
        let operation = Operation::DescribeInstances;
        let state = self.begin(operation)?;
        let instances = select(
            &state.instances,
            &input,
            operation,
            "InvalidInstanceID.NotFound",
        )?;
        Ok(DescribeInstancesOutput { instances })
    }

    async fn terminate_instances(
        &self,
        input: TerminateInstancesInput,
    ) -> Result<TerminateInstancesOutput, Ec2Error> {
        let operation = Operation::TerminateInstances;
        let mut state = self.begin(operation)?;
        // EC2 refuses the whole call when any ID is unknown.
        if let Some(id) = input
            .instance_ids
            .iter()
            .find(|id| !state.instances.contains_key(*id))
        {
            return Err(Ec2Error::service(
                operation,
                "InvalidInstanceID.NotFound",
                format!("The instance ID '{id}' does not exist"),
            ));
        }
        let terminating_instances = input
            .instance_ids
            .iter()
            .filter_map(|id| {
                let previous_state = state.terminate(id)?;
                Some(InstanceStateChange {
                    instance_id: id.clone(),
                    previous_state,
                    current_state: InstanceState::Terminated,
                })
            })
            .collect();
        Ok(TerminateInstancesOutput {
            terminating_instances,
        })
    }

    async fn create_tags(&self, input: CreateTagsInput) -> Result<(), Ec2Error> {
        let operation = Operation::CreateTags;
        let mut state = self.begin(operation)?;
        for id in &input.resources {
            let tags = match state.instances.get_mut(id) {
                Some(instance) => &mut instance.tags,
                None => {
                    return Err(Ec2Error::service(
                        operation,
                        "InvalidID",
                        format!("The ID '{id}' is not valid"),
                    ));
                }
            };
            for tag in &input.tags {
                match tags.iter_mut().find(|t| t.key == tag.key) {
                    Some(existing) => existing.value.clone_from(&tag.value),
                    None => tags.push(tag.clone()),
                }
            }
        }
        Ok(())
    }

    async fn describe_spot_price_history(
        &self,
        input: DescribeSpotPriceHistoryInput,
    ) -> Result<DescribeSpotPriceHistoryOutput, Ec2Error> {
        self.begin(Operation::DescribeSpotPriceHistory)?
            .describe_spot_price_history(input)
    }

    async fn describe_instance_status(
        &self,
        input: DescribeInstanceStatusInput,
    ) -> Result<DescribeInstanceStatusOutput, Ec2Error> {
        self.begin(Operation::DescribeInstanceStatus)?
            .describe_instance_status(input)
    }

    async fn dry_run(&self, call: DryRunCall) -> Result<(), Ec2Error> {
        // Authorized unless a fault says otherwise; nothing is made.
        drop(self.begin(call.operation())?);
        Ok(())
    }

    async fn get_products(&self, input: GetProductsInput) -> Result<GetProductsOutput, Ec2Error> {
        self.begin(Operation::GetProducts)?.get_products(input)
    }
}

/// Whether `owner`, as `DescribeImages` takes owners, names the owner of
/// `image`: its account ID, `self` for the fake's own account, or an alias
/// (`amazon`) written as the owner ID.
fn owns(owner: &str, image: &crate::ec2::Image) -> bool {
    image.owner_id == owner || (owner == "self" && image.owner_id == super::ACCOUNT)
}
