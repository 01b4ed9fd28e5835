//! `create`: a claim launched as upstream's instance provider launches it,
//! each step one of [`crate::launch`]'s decisions: the launch filters, the
//! capacity type, a subnet per zone, the launch templates (made when
//! missing), the `CreateFleet` request; EC2's errors marked unavailable
//! and the claim hydrated from what started.

use std::collections::BTreeMap;

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::{
    CloudProviderError, DEFAULT_UNAVAILABLE_TTL, InstanceType, OfferingKey, choose_offering,
    hydrate, requests_of, requirements_of,
};
use karpenter_core::resources::ResourceList;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, LABEL_TOPOLOGY_ZONE,
    NODE_CLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY, Requirement, Requirements,
};

use super::placement::{placement_labels, template_placement};
use super::ready::not_ready;
use super::{AwsCloudProvider, api_error, create_fleet_input, lock, node_pool_of};
use crate::ec2::{
    CreateFleetInput, CreateFleetInstance, CreateFleetOutput, CreateLaunchTemplateInput, Ec2Api,
    Ec2Error, PlacementGroup,
};
use crate::iam::INSTANCE_PROFILE_ANNOTATION;
use crate::launch::{
    FleetError, FleetInputs, LaunchError, SubnetInfo, UnavailableMark, capacity_type,
    filter_instance_types, fleet_outcome, fleet_request, launch_tags, launch_templates,
    provider_id, unavailable_marks,
};
use crate::nodeclass::{EC2NodeClass, HASH_ANNOTATION, HASH_VERSION_ANNOTATION};

/// The code `CreateFleet` answers when a launch template it names is gone.
const TEMPLATE_NOT_FOUND: &str = "InvalidLaunchTemplateName.NotFoundException";

/// A launch error as the core hears it; `offerings` are the ones an
/// insufficient-capacity error names.
pub(super) fn launch_error(error: LaunchError, offerings: Vec<OfferingKey>) -> CloudProviderError {
    match error {
        LaunchError::InsufficientCapacity(message) => {
            CloudProviderError::InsufficientCapacity { offerings, message }
        }
        other => CloudProviderError::Create {
            reason: other.reason().to_owned(),
            message: other.to_string(),
            source: Some(Box::new(other)),
        },
    }
}

/// A `CreateFleet` error in the launch decisions' terms.
fn fleet_error(error: &crate::ec2::CreateFleetError) -> FleetError {
    let o = &error.launch_template_and_overrides;
    FleetError {
        code: error.error_code.clone(),
        message: error.error_message.clone(),
        instance_type: o.instance_type.clone(),
        zone: o.availability_zone.clone(),
        subnet_id: Some(o.subnet_id.clone()).filter(|s| !s.is_empty()),
    }
}

/// The reservation the reserved offering of `instance_type` in `zone`
/// among `types` launches into.
fn reservation_of(types: &[InstanceType], instance_type: &str, zone: &str) -> Option<String> {
    types
        .iter()
        .filter(|t| t.name == instance_type)
        .flat_map(|t| &t.offerings)
        .find(|o| o.zone == zone && o.capacity_type == CAPACITY_TYPE_RESERVED)
        .and_then(|o| o.reservation_id().map(str::to_owned))
}

/// What a launch decided before calling EC2.
struct Plan {
    types: Vec<InstanceType>,
    capacity_type: &'static str,
    /// What EC2 is asked to make for the launch templates.
    template_inputs: Vec<CreateLaunchTemplateInput>,
    /// The subnet per zone, as chosen with the in-flight estimates.
    subnets: BTreeMap<String, SubnetInfo>,
    input: CreateFleetInput,
    /// The class's placement group, when it names one.
    placement_group: Option<PlacementGroup>,
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// [`CloudProvider::create`](karpenter_core::cloudprovider::CloudProvider::create).
    pub(super) async fn launch(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        let name = claim.spec.node_class_ref.as_ref().map(|r| r.name.as_str());
        // Upstream: a class that cannot be found means no capacity for the
        // claim at all.
        let class =
            self.node_class(name)
                .ok_or_else(|| CloudProviderError::InsufficientCapacity {
                    offerings: Vec::new(),
                    message: format!(
                        "resolving nodeclass {:?}: not found",
                        name.unwrap_or_default()
                    ),
                })?;
        if let Some(error) = not_ready(&class) {
            return Err(error);
        }
        let requirements = requirements_of(claim)?;
        let requests = requests_of(claim)?;
        let plan = self.plan(&class, claim, &requirements, &requests).await?;
        let output = self.fleet(&plan).await;
        self.settle_subnets(
            &plan.subnets,
            &plan.input,
            output.as_ref().ok(),
            &plan.types,
            plan.capacity_type,
        );
        let output = output?;
        let errors: Vec<FleetError> = output.errors.iter().map(fleet_error).collect();
        let marks = unavailable_marks(&errors, plan.capacity_type, |ty, zone| {
            reservation_of(&plan.types, ty, zone)
        });
        lock(&self.unavailable).mark(&marks, (self.clock)(), DEFAULT_UNAVAILABLE_TTL);
        let Some((started, id)) = output
            .instances
            .iter()
            .find_map(|i| i.instance_ids.first().map(|id| (i, id)))
        else {
            let offerings = marked_offerings(&marks);
            return Err(launch_error(fleet_outcome(&errors), offerings));
        };
        self.hydrated(claim, &class, &plan, started, id)
    }

    /// The launch decisions up to the `CreateFleet` input.
    async fn plan(
        &self,
        class: &EC2NodeClass,
        claim: &NodeClaim,
        requirements: &Requirements,
        requests: &ResourceList,
    ) -> Result<Plan, CloudProviderError> {
        let all = self.types_for(class)?;
        let types = filter_instance_types(requirements, requests, &all).map_err(|e| {
            // Name what the claim could have had, as the contract asks.
            let wanted = choose_offering(
                &all,
                requirements,
                requests,
                &crate::well_known_labels(),
                |a, b| crate::LAUNCH_RANK.compare(a, b),
            );
            launch_error(e, wanted.err().unwrap_or_default())
        })?;
        let capacity_type = capacity_type(requirements, &types);
        let subnets = self.zonal_subnets(class, &types, capacity_type).await?;
        let mut templates = launch_templates(class, &types, capacity_type, requests)
            .map_err(|e| launch_error(e, Vec::new()))?;
        let placement_group = self.placement_group(class).await?;
        let placement = placement_group
            .as_ref()
            .map(|group| template_placement(group, requirements));
        let template_inputs = self.template_inputs(class, claim, &mut templates, placement)?;
        self.ensure_templates(&template_inputs, false).await?;
        let tags = launch_tags(class, node_pool_of(claim), &self.config.cluster_name);
        let request = fleet_request(&FleetInputs {
            nodeclass: class,
            requirements,
            capacity_type,
            instance_types: &types,
            templates: &templates,
            subnets: &subnets,
            tags: &tags,
            min_values_relaxed: claim
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(NODE_CLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY))
                .is_some_and(|v| v == "true"),
        })
        .map_err(|e| launch_error(e, Vec::new()))?;
        let input = create_fleet_input(&request, &subnets);
        Ok(Plan {
            types,
            capacity_type,
            template_inputs,
            subnets,
            input,
            placement_group,
        })
    }

    /// `CreateFleet`, making the templates again and retrying once when
    /// EC2 says one is gone (deleted behind the provider's back).
    async fn fleet(&self, plan: &Plan) -> Result<CreateFleetOutput, CloudProviderError> {
        let first = self.api.create_fleet(plan.input.clone()).await;
        let output = match first {
            Err(error) if error.code() == Some(TEMPLATE_NOT_FOUND) => {
                self.ensure_templates(&plan.template_inputs, true).await?;
                self.api.create_fleet(plan.input.clone()).await
            }
            other => other,
        };
        output.map_err(|e| fleet_call_error(e, &plan.input, plan.capacity_type))
    }

    /// The claim once `started` launched as instance `id`: the contract's
    /// labels, capacity and allocatable, the offering's labels (zone ID,
    /// reservation), the image, the class's hash annotations and its
    /// instance profile's.
    fn hydrated(
        &self,
        claim: &NodeClaim,
        class: &EC2NodeClass,
        plan: &Plan,
        started: &CreateFleetInstance,
        id: &str,
    ) -> Result<NodeClaim, CloudProviderError> {
        let o = &started.launch_template_and_overrides;
        let wanted: Requirements = [
            Requirement::in_values(LABEL_TOPOLOGY_ZONE, [o.availability_zone.as_str()]),
            Requirement::in_values(CAPACITY_TYPE_LABEL_KEY, [plan.capacity_type]),
        ]
        .into_iter()
        .collect();
        let found = plan
            .types
            .iter()
            .filter(|t| t.name == started.instance_type)
            .find_map(|t| {
                t.available_offerings(&wanted)
                    .next()
                    .map(|offering| (t, offering))
            });
        let Some((instance_type, offering)) = found else {
            return Err(CloudProviderError::Create {
                reason: "LaunchFailed".to_owned(),
                message: format!(
                    "EC2 started {id} as {} in {}, which no offering of the launch names",
                    started.instance_type, o.availability_zone
                ),
                source: None,
            });
        };
        if let Some(id) = offering.reservation_id() {
            self.count_reserved_launch(id);
        }
        let mut launched = hydrate(
            claim,
            instance_type,
            offering,
            provider_id(&o.availability_zone, id),
        );
        if let Some(group) = &plan.placement_group {
            let requirements = requirements_of(claim)?;
            let labels = launched.metadata.labels.get_or_insert_with(BTreeMap::new);
            labels.extend(placement_labels(group, &requirements));
        }
        let status = launched.status.get_or_insert_with(Default::default);
        status.image_id.clone_from(&o.image_id);
        let annotations = launched
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new);
        for key in [HASH_ANNOTATION, HASH_VERSION_ANNOTATION] {
            let value = class.metadata.annotations.as_ref().and_then(|a| a.get(key));
            if let Some(value) = value {
                annotations.insert(key.to_owned(), value.clone());
            }
        }
        // As upstream: the profile the node launched with, which the
        // profile collector keeps while the claim lives.
        let profile = class
            .status
            .as_ref()
            .and_then(|s| s.instance_profile.as_ref());
        if let Some(profile) = profile {
            annotations.insert(INSTANCE_PROFILE_ANNOTATION.to_owned(), profile.clone());
        }
        Ok(launched)
    }
}

/// The offerings an insufficient-capacity outcome names: those marked.
fn marked_offerings(marks: &[UnavailableMark]) -> Vec<OfferingKey> {
    marks
        .iter()
        .filter_map(UnavailableMark::offering_key)
        .collect()
}

/// A `CreateFleet` call that failed as a whole: capacity codes are
/// insufficient capacity for every override, the rest an API error.
fn fleet_call_error(
    error: Ec2Error,
    input: &CreateFleetInput,
    capacity_type: &str,
) -> CloudProviderError {
    if error.is_insufficient_capacity() {
        let offerings = input
            .launch_template_configs
            .iter()
            .flat_map(|c| &c.overrides)
            .map(|o| OfferingKey::new(&o.instance_type, &o.availability_zone, capacity_type))
            .collect();
        return CloudProviderError::InsufficientCapacity {
            offerings,
            message: error.to_string(),
        };
    }
    api_error("creating the fleet", error)
}
