//! The `CreateFleet` request of a launch as a plain value, after upstream's
//! `CreateFleetInputBuilder` and `getLaunchTemplateConfigs`: an instant
//! fleet for one instance, one override per (instance type, zone) its
//! launch templates serve with a subnet, prioritised by price, and the tags
//! upstream puts on the instance, its volumes and the fleet.
//!
//! Not modelled yet: NodeOverlay prices (upstream then asks for the
//! `*-prioritized` strategies), tenancy and placement groups.

use std::collections::{BTreeMap, BTreeSet};

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, NODE_POOL_LABEL_KEY, Requirements,
};

use super::capacity_type::with_capacity_type;
use super::errors::LaunchError;
use super::subnets::SubnetInfo;
use super::template::LaunchTemplate;
use crate::ec2::TargetCapacityType;
use crate::nodeclass::EC2NodeClass;

/// How EC2 picks among the overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocationStrategy {
    /// Spot: `price-capacity-optimized`, the cheapest pools least likely
    /// to be interrupted.
    PriceCapacityOptimized,
    /// On-demand and plain reservations: `lowest-price`.
    LowestPrice,
}

impl AllocationStrategy {
    /// The value EC2 takes.
    pub fn as_str(self) -> &'static str {
        match self {
            AllocationStrategy::PriceCapacityOptimized => "price-capacity-optimized",
            AllocationStrategy::LowestPrice => "lowest-price",
        }
    }
}

/// One override: a place the fleet may start the instance.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetOverride {
    /// The launch template it uses.
    pub template_name: String,
    /// The instance type.
    pub instance_type: String,
    /// The zone.
    pub zone: String,
    /// The subnet; `None` for a reservation's template, which EC2 places
    /// by the reservation's zone.
    pub subnet_id: Option<String>,
    /// The AMI.
    pub image_id: String,
    /// The offering's price: EC2 prefers the lowest.
    pub priority: f64,
}

/// A `CreateFleet` request (type `instant`, one instance).
#[derive(Clone, Debug, PartialEq)]
pub struct FleetRequest {
    /// The capacity type the claim launches as.
    pub capacity_type: String,
    /// `DefaultTargetCapacityType`.
    pub target_capacity_type: TargetCapacityType,
    /// The spot or on-demand allocation strategy; `None` for capacity
    /// blocks and interruptible reservations, which take none.
    pub allocation_strategy: Option<AllocationStrategy>,
    /// Whether `ReservedCapacityOptions` asks for interruptible
    /// reservations.
    pub interruptible_reservation: bool,
    /// The overrides, by launch template, then type, then offering.
    pub overrides: Vec<FleetOverride>,
    /// The tags on the instance, its volumes and the fleet.
    pub tags: BTreeMap<String, String>,
    /// EC2 Fleet's reserved `Context`, from the NodeClass.
    pub context: Option<String>,
}

/// What a fleet request is built from.
#[derive(Clone, Copy, Debug)]
pub struct FleetInputs<'a> {
    /// The NodeClass launched from.
    pub nodeclass: &'a EC2NodeClass,
    /// The claim's requirements.
    pub requirements: &'a Requirements,
    /// The capacity type chosen ([`capacity_type`](super::capacity_type)).
    pub capacity_type: &'a str,
    /// The types left by [`filter_instance_types`](super::filter_instance_types).
    pub instance_types: &'a [InstanceType],
    /// Their launch templates ([`launch_templates`](super::launch_templates)).
    pub templates: &'a [LaunchTemplate],
    /// The subnet per zone ([`zonal_subnets`](super::zonal_subnets)).
    pub subnets: &'a BTreeMap<String, SubnetInfo>,
    /// The tags ([`launch_tags`]).
    pub tags: &'a BTreeMap<String, String>,
    /// Whether the core relaxed the claim's `minValues`; upstream then
    /// leaves out the `Context`.
    pub min_values_relaxed: bool,
}

/// The `CreateFleet` request for `inputs`.
///
/// # Errors
///
/// [`LaunchError::Create`] (`LaunchFailed`) when no launch template has an
/// override: no available offering with a subnet in its zone.
pub fn fleet_request(inputs: &FleetInputs<'_>) -> Result<FleetRequest, LaunchError> {
    let overrides: Vec<FleetOverride> = inputs
        .templates
        .iter()
        .flat_map(|template| overrides(inputs, template))
        .collect();
    if overrides.is_empty() {
        return Err(LaunchError::Create {
            reason: "LaunchFailed",
            message: "getting launch template configs, no capacity offerings are currently available given the constraints".to_owned(),
        });
    }
    let reservation = inputs.templates.iter().find_map(|t| t.reservation.as_ref());
    let capacity_block = reservation.is_some_and(|r| r.reservation_type == "capacity-block");
    let interruptible = reservation.is_some_and(|r| r.interruptible);
    let (target_capacity_type, allocation_strategy) = match inputs.capacity_type {
        CAPACITY_TYPE_SPOT => (
            TargetCapacityType::Spot,
            Some(AllocationStrategy::PriceCapacityOptimized),
        ),
        CAPACITY_TYPE_RESERVED if capacity_block => (TargetCapacityType::CapacityBlock, None),
        CAPACITY_TYPE_RESERVED if interruptible => (TargetCapacityType::ReservedCapacity, None),
        _ => (
            TargetCapacityType::OnDemand,
            Some(AllocationStrategy::LowestPrice),
        ),
    };
    let context = inputs
        .nodeclass
        .spec
        .context
        .clone()
        .filter(|_| !inputs.min_values_relaxed);
    Ok(FleetRequest {
        capacity_type: inputs.capacity_type.to_owned(),
        target_capacity_type,
        allocation_strategy,
        interruptible_reservation: inputs.capacity_type == CAPACITY_TYPE_RESERVED && interruptible,
        overrides,
        tags: inputs.tags.clone(),
        context,
    })
}

/// The overrides of `template`: each available offering of its types
/// compatible with the claim at the chosen capacity type (and, for a
/// reservation's template, in that reservation), once per (type, zone),
/// where the zone has a subnet.
fn overrides(inputs: &FleetInputs<'_>, template: &LaunchTemplate) -> Vec<FleetOverride> {
    let requirements = with_capacity_type(inputs.requirements, inputs.capacity_type);
    let reservation = template.reservation.as_ref();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut overrides = Vec::new();
    let types = inputs
        .instance_types
        .iter()
        .filter(|it| template.instance_types.contains(&it.name));
    for it in types {
        for offering in it.available_offerings(&requirements) {
            if reservation.is_some_and(|r| offering.reservation_id() != Some(r.id.as_str())) {
                continue;
            }
            if reservation.is_some_and(|r| r.zone != offering.zone) {
                continue;
            }
            let Some(subnet) = inputs.subnets.get(&offering.zone) else {
                continue;
            };
            if !seen.insert((it.name.as_str(), offering.zone.as_str())) {
                continue;
            }
            overrides.push(FleetOverride {
                template_name: template.name.clone(),
                instance_type: it.name.clone(),
                zone: subnet.zone.clone(),
                subnet_id: reservation.is_none().then(|| subnet.id.clone()),
                image_id: template.image_id.clone(),
                priority: offering.price,
            });
        }
    }
    overrides
}

/// The tag naming the EKS cluster.
pub(crate) const EKS_CLUSTER_NAME_TAG: &str = "eks:eks-cluster-name";
/// The tag naming the NodeClass.
pub(crate) const NODE_CLASS_TAG: &str = "karpenter.k8s.aws/ec2nodeclass";

/// The tags of a launch for a claim of NodePool `nodepool` in cluster
/// `cluster_name`, as upstream's `GetTags`: the NodeClass's tags, then
/// `kubernetes.io/cluster/<name>: owned`, `karpenter.sh/nodepool`,
/// `eks:eks-cluster-name` and `karpenter.k8s.aws/ec2nodeclass`, which win
/// over a NodeClass tag of the same key (validation refuses those keys).
/// `karpenter.sh/nodeclaim` and `Name` are not launch tags upstream: its
/// tagging controller adds them once the node registers.
pub fn launch_tags(
    nodeclass: &EC2NodeClass,
    nodepool: &str,
    cluster_name: &str,
) -> BTreeMap<String, String> {
    let mut tags = nodeclass.spec.tags.clone().unwrap_or_default();
    let class_name = nodeclass.metadata.name.clone().unwrap_or_default();
    for (key, value) in [
        (
            format!("kubernetes.io/cluster/{cluster_name}"),
            "owned".to_owned(),
        ),
        (NODE_POOL_LABEL_KEY.to_owned(), nodepool.to_owned()),
        (EKS_CLUSTER_NAME_TAG.to_owned(), cluster_name.to_owned()),
        (NODE_CLASS_TAG.to_owned(), class_name),
    ] {
        tags.insert(key, value);
    }
    tags
}
