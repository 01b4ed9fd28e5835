//! The AWS cloud of a replay: the AWS provider over an in-memory EC2 set up
//! from the scenario's EC2NodeClasses, and spot interruptions delivered as
//! upstream receives them, through the interruption queue.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use jiff::Timestamp;
use karpenter_aws::ec2::{
    CapacityReservation, Ec2Api, Image, InMemoryEc2, InMemoryQueue, InstanceState, SecurityGroup,
    Subnet, TerminateInstancesInput,
};
use karpenter_aws::interruption::{ClaimAction, InterruptionHandler, instance_id_of, poll_queue};
use karpenter_aws::nodeclass::{Ami, condition_types};
use karpenter_aws::{AdoptError, AwsCloudProvider, AwsConfig, EC2NodeClass, InstanceTypeOptions};
use karpenter_core::api::{Condition, ConditionStatus, NodeClaim, NodeClassReference, NodePool};
use karpenter_core::cloudprovider::BoxError;
use karpenter_scenario::default_ec2_node_class;

use super::block_on;
use crate::scenario::{LoadError, Scenario};

/// The group and kind a NodePool names its EC2NodeClass by.
const GROUP: &str = "karpenter.k8s.aws";
const KIND: &str = "EC2NodeClass";
/// The EKS cluster the replayed instances are tagged with.
const CLUSTER_NAME: &str = "replay";
/// The owner of the images and reservations the replay makes up.
const OWNER: &str = "123456789012";
/// Free addresses in each subnet the replay makes: a /20's.
const SUBNET_ADDRESSES: u32 = 4091;
/// The security group of a class whose status resolves none.
const DEFAULT_SECURITY_GROUP: &str = "sg-replay";
/// The instance profile of a class whose status names none.
const DEFAULT_INSTANCE_PROFILE: &str = "KarpenterNodeInstanceProfile-replay";
/// The field of a reservation's status entry with how many more instances
/// it can start (as `karpenter-sim provision` reads it).
const AVAILABLE_INSTANCE_COUNT: &str = "availableInstanceCount";

/// The AWS provider over an in-memory EC2, its queue and its clock.
pub(crate) struct AwsCloud {
    pub provider: Arc<AwsCloudProvider<InMemoryEc2>>,
    queue: InMemoryQueue,
    clock: Arc<Mutex<Timestamp>>,
    /// The name the default EC2NodeClass is applied under: pools naming
    /// no EC2NodeClass of the input are pointed at it.
    default_class: String,
    /// The names of the input's EC2NodeClasses.
    classes: BTreeSet<String>,
}

impl AwsCloud {
    /// EC2 in `region` holding what the scenario's EC2NodeClasses resolve
    /// to, and the provider over it with each class applied, Ready, at
    /// `start`.
    pub(super) fn build(
        scenario: &Scenario,
        region: &str,
        options: InstanceTypeOptions,
        start: Timestamp,
    ) -> Result<AwsCloud, LoadError> {
        let classes: BTreeSet<String> = (scenario.ec2_node_classes.iter())
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        // Not a name of the input's, so the input's classes keep theirs.
        let default_class = std::iter::once("default".to_owned())
            .chain((2..).map(|n| format!("default-{n}")))
            .find(|name| !classes.contains(name))
            .unwrap_or_default();
        let mut default = default_ec2_node_class();
        default.metadata.name = Some(default_class.clone());
        let ready: Vec<EC2NodeClass> = (scenario.ec2_node_classes.iter())
            .map(|c| ready_class(&c.object, region))
            .chain([ready_class(&default, region)])
            .collect();
        let ec2 = InMemoryEc2::new(region);
        let zones = zones_of(&ec2, &ready);
        let zones: Vec<(&str, &str)> = (zones.iter())
            .map(|(name, id)| (name.as_str(), id.as_str()))
            .collect();
        let ec2 = ec2.with_zones(&zones);
        ec2.set_now(start);
        let queue = InMemoryQueue::new(start);
        ec2.attach_queue(queue.clone());
        // EC2 ranks spot launches by the same prices the provider offers.
        for ((instance_type, zone), price) in options.spot_prices.iter().flatten() {
            ec2.set_spot_price(instance_type, zone, *price);
        }
        let mut options = options;
        for class in &ready {
            stock(&ec2, class, &mut options);
        }
        let clock = Arc::new(Mutex::new(start));
        let read = Arc::clone(&clock);
        let config = AwsConfig {
            region: region.to_owned(),
            cluster_name: CLUSTER_NAME.to_owned(),
            join: None,
        };
        let provider = AwsCloudProvider::new(ec2, config, options)
            .map_err(|e| LoadError::Provider {
                provider: "aws".to_owned(),
                message: format!("the embedded EC2 catalog: {e}"),
                source: Some(Box::new(e)),
            })?
            .with_clock(move || *read.lock().unwrap_or_else(PoisonError::into_inner));
        for class in ready {
            provider.apply_node_class(class);
        }
        Ok(AwsCloud {
            provider: Arc::new(provider),
            queue,
            clock,
            default_class,
            classes,
        })
    }

    /// `pool` as the provider reads it: pointed at the default EC2NodeClass
    /// when it names no EC2NodeClass of the input, as `provision` treats it.
    pub(super) fn node_pool(&self, mut pool: NodePool) -> NodePool {
        self.point(
            pool.spec
                .template
                .spec
                .node_class_ref
                .get_or_insert_default(),
        );
        pool
    }

    /// `claim` as the provider reads it: pointed at the EC2NodeClass its
    /// pool would be, so its instance is the class's.
    pub(super) fn node_claim(&self, mut claim: NodeClaim) -> NodeClaim {
        self.point(claim.spec.node_class_ref.get_or_insert_default());
        claim
    }

    /// Points `reference` at the default EC2NodeClass unless it names one
    /// of the input's.
    fn point(&self, reference: &mut NodeClassReference) {
        let known = reference.group == GROUP
            && reference.kind == KIND
            && self.classes.contains(&reference.name);
        if !known {
            reference.group = GROUP.to_owned();
            reference.kind = KIND.to_owned();
            reference.name.clone_from(&self.default_class);
        }
    }

    /// Puts the instance of a claim launched before the replay into the
    /// in-memory EC2, as the provider's launch leaves one.
    pub(super) fn adopt(&self, claim: &NodeClaim) -> Result<(), AdoptError> {
        self.provider.adopt(claim)
    }

    /// Moves the provider's and EC2's clocks to `now`.
    pub(super) fn set_time(&self, now: Timestamp) {
        *self.clock.lock().unwrap_or_else(PoisonError::into_inner) = now;
        self.provider.api().set_now(now);
    }

    /// Takes the instance `provider_id` back at the end of its notice: a
    /// spot instance is reclaimed by EC2, whose warning reaches the queue,
    /// and one pass over the queue marks its offering unavailable and says
    /// which claims go; another is terminated (the trace asked for it). The
    /// names of the claims that go, among `claims`.
    pub(super) fn reclaim(&self, provider_id: &str, claims: &[NodeClaim]) -> Vec<String> {
        let Some(instance) = instance_id_of(provider_id) else {
            return Vec::new();
        };
        let ec2 = self.provider.api();
        if ec2.reclaim_spot(instance) {
            let handler = Interrupted {
                provider: &self.provider,
                deleted: Mutex::new(Vec::new()),
            };
            // The in-memory queue never fails a receive.
            let _ = block_on(poll_queue(&self.queue, claims, &handler));
            return handler
                .deleted
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
        }
        let terminated = block_on(ec2.terminate_instances(TerminateInstancesInput {
            instance_ids: vec![instance.to_owned()],
        }));
        let live = terminated.is_ok_and(|out| {
            out.terminating_instances
                .iter()
                .any(|change| change.previous_state != InstanceState::Terminated)
        });
        if !live {
            return Vec::new();
        }
        claims
            .iter()
            .filter(|c| {
                c.status.as_ref().and_then(|s| s.provider_id.as_deref()) == Some(provider_id)
            })
            .filter_map(|c| c.metadata.name.clone())
            .collect()
    }
}

/// Carries out a spot interruption's actions as the replay can: the
/// offering (or reservation) marked on the provider, the claims to delete
/// noted for the replay to take their nodes down.
struct Interrupted<'a> {
    provider: &'a AwsCloudProvider<InMemoryEc2>,
    deleted: Mutex<Vec<String>>,
}

impl InterruptionHandler for Interrupted<'_> {
    fn handle<'s, 'a, 'f>(
        &'s self,
        action: &'a ClaimAction,
    ) -> Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send + 'f>>
    where
        's: 'f,
        'a: 'f,
        Self: 'f,
    {
        if let Some(offering) = &action.mark_unavailable {
            self.provider.mark_unavailable(offering.clone());
        }
        if let Some(reservation) = &action.exhaust_reservation {
            self.provider.mark_reservation_exhausted(reservation);
        }
        if action.delete {
            (self.deleted.lock().unwrap_or_else(PoisonError::into_inner))
                .push(action.claim.clone());
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

/// `class` with a status as upstream's status controller would leave it
/// Ready: its resolved subnets (else `<region>a`..`c`), security groups,
/// AMIs (else one AL2023 image per architecture) and instance profile,
/// and the conditions saying so.
fn ready_class(class: &EC2NodeClass, region: &str) -> EC2NodeClass {
    let mut class = class.clone();
    let name = class.metadata.name.clone().unwrap_or_default();
    let status = class.status.get_or_insert_default();
    if status.subnets.as_ref().is_none_or(Vec::is_empty) {
        status.subnets = Some(
            ["a", "b", "c"]
                .iter()
                .map(|letter| karpenter_aws::nodeclass::Subnet {
                    id: format!("subnet-{region}{letter}"),
                    zone: format!("{region}{letter}"),
                    ..Default::default()
                })
                .collect(),
        );
    }
    if status.security_groups.as_ref().is_none_or(Vec::is_empty) {
        status.security_groups = Some(vec![karpenter_aws::nodeclass::SecurityGroup {
            id: DEFAULT_SECURITY_GROUP.to_owned(),
            name: Some(format!("{name}-nodes")),
            ..Default::default()
        }]);
    }
    if status.amis.as_ref().is_none_or(Vec::is_empty) {
        status.amis = Some(
            [("amd64", "x86_64"), ("arm64", "arm64")]
                .iter()
                .map(|(arch, ec2_arch)| Ami {
                    id: format!("ami-replay-al2023-{ec2_arch}"),
                    name: Some(format!("al2023-ami-minimal-{ec2_arch}")),
                    requirements: vec![k8s_openapi::api::core::v1::NodeSelectorRequirement {
                        key: "kubernetes.io/arch".to_owned(),
                        operator: "In".to_owned(),
                        values: Some(vec![(*arch).to_owned()]),
                    }],
                    ..Ami::default()
                })
                .collect(),
        );
    }
    if status.instance_profile.is_none() {
        status.instance_profile = Some(DEFAULT_INSTANCE_PROFILE.to_owned());
    }
    let conditions = status.conditions.get_or_insert_default();
    conditions.retain(|c| c.type_ != "Ready");
    for type_ in [
        condition_types::SUBNETS_READY,
        condition_types::SECURITY_GROUPS_READY,
        condition_types::AMIS_READY,
        condition_types::INSTANCE_PROFILE_READY,
        "Ready",
    ] {
        if !conditions.iter().any(|c| c.type_ == type_) {
            let mut condition = Condition::new(type_, ConditionStatus::True);
            condition.reason = Some(type_.to_owned());
            conditions.push(condition);
        }
    }
    class
}

/// EC2's zones: `ec2`'s own, then any other a class's subnets are in (its
/// recorded zone ID, else one numbered after the others).
fn zones_of(ec2: &InMemoryEc2, classes: &[EC2NodeClass]) -> Vec<(String, String)> {
    let mut zones = ec2.zones();
    let prefix = (zones.first())
        .and_then(|(_, id)| id.rsplit_once("-az").map(|(p, _)| p.to_owned()))
        .unwrap_or_default();
    for subnet in classes
        .iter()
        .filter_map(|c| c.status.as_ref()?.subnets.as_ref())
        .flatten()
    {
        if !zones.iter().any(|(name, _)| *name == subnet.zone) {
            let id = subnet
                .zone_id
                .clone()
                .unwrap_or_else(|| format!("{prefix}-az{}", zones.len() + 1));
            zones.push((subnet.zone.clone(), id));
        }
    }
    zones
}

/// Puts what `class`'s status names into `ec2`: its subnets, security
/// groups, images and capacity reservations (their counts into
/// `options`).
fn stock(ec2: &InMemoryEc2, class: &EC2NodeClass, options: &mut InstanceTypeOptions) {
    let Some(status) = &class.status else {
        return;
    };
    for subnet in status.subnets.as_deref().unwrap_or_default() {
        ec2.add_subnet(Subnet {
            subnet_id: subnet.id.clone(),
            vpc_id: "vpc-replay".to_owned(),
            availability_zone: subnet.zone.clone(),
            availability_zone_id: subnet.zone_id.clone().unwrap_or_default(),
            available_ip_address_count: SUBNET_ADDRESSES,
            ..Subnet::default()
        });
    }
    for group in status.security_groups.as_deref().unwrap_or_default() {
        ec2.add_security_group(SecurityGroup {
            group_id: group.id.clone(),
            group_name: group.name.clone().unwrap_or_else(|| group.id.clone()),
            vpc_id: "vpc-replay".to_owned(),
            ..SecurityGroup::default()
        });
    }
    for ami in status.amis.as_deref().unwrap_or_default() {
        ec2.add_image(Image {
            image_id: ami.id.clone(),
            name: ami.name.clone().unwrap_or_else(|| ami.id.clone()),
            architecture: architecture_of(ami).to_owned(),
            owner_id: OWNER.to_owned(),
            state: "available".to_owned(),
            ..Image::default()
        });
    }
    let reservations = status.capacity_reservations.as_deref().unwrap_or_default();
    for reservation in reservations {
        let available = (reservation.other.get(AVAILABLE_INSTANCE_COUNT))
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(1);
        options
            .reservation_capacity
            .insert(reservation.id.clone(), available);
        ec2.add_capacity_reservation(CapacityReservation {
            capacity_reservation_id: reservation.id.clone(),
            owner_id: reservation.owner_id.clone(),
            instance_type: reservation.instance_type.clone(),
            availability_zone: reservation.availability_zone.clone(),
            available_instance_count: available,
            total_instance_count: available,
            state: reservation
                .state
                .clone()
                .unwrap_or_else(|| "active".to_owned()),
            reservation_type: (reservation.reservation_type.clone())
                .unwrap_or_else(|| "default".to_owned()),
            instance_match_criteria: reservation.instance_match_criteria.clone(),
            interruptible: reservation.interruptible.unwrap_or(false),
            ..CapacityReservation::default()
        });
    }
}

/// EC2's architecture of an image, from the arch its requirements name
/// (empty when they name none: EC2 then checks nothing).
fn architecture_of(ami: &Ami) -> &'static str {
    let arch = ami
        .requirements
        .iter()
        .find(|r| r.key == "kubernetes.io/arch" && r.operator == "In")
        .and_then(|r| r.values.as_deref()?.first().map(String::as_str));
    match arch {
        Some("arm64") => "arm64",
        Some("amd64") => "x86_64",
        _ => "",
    }
}
