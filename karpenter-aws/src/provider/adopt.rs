//! The provider over [`InMemoryEc2`]: instances of claims launched before
//! it started (a simulation's starting nodes) put into the in-memory EC2
//! as the provider's own launch would have left them.

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT,
    LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, NODE_POOL_LABEL_KEY, Requirements,
    WellKnownLabels,
};
use thiserror::Error;

use super::AwsCloudProvider;
use crate::ec2::{InMemoryEc2, Instance, Tag};
use crate::instancetype::labels::CAPACITY_RESERVATION_ID;
use crate::launch::{ProviderIdError, launch_tags, parse_provider_id};
use crate::nodeclass::EC2NodeClass;

/// The tag upstream's tagging controller puts on a registered claim's
/// instance, which `list` reads the claim's name from.
const NODE_CLAIM_TAG: &str = "karpenter.sh/nodeclaim";

/// Why a claim's instance could not be adopted. Each names the claim and,
/// by [`AdoptError::field`], the field at fault.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdoptError {
    /// The claim has no `status.providerID`: it never launched.
    #[error("NodeClaim {claim} has no status.providerID: it was never launched")]
    NotLaunched {
        /// The claim's name.
        claim: String,
    },
    /// The provider ID is not `aws:///<zone>/<instance-id>`.
    #[error("NodeClaim {claim}: status.providerID: {source}")]
    ProviderId {
        /// The claim's name.
        claim: String,
        /// What is wrong with it.
        source: ProviderIdError,
    },
    /// Another claim already names the same instance.
    #[error(
        "NodeClaim {claim}: status.providerID names instance {instance}, which is already running for another claim"
    )]
    AlreadyRunning {
        /// The claim's name.
        claim: String,
        /// The instance ID.
        instance: String,
    },
    /// The claim's EC2NodeClass is not one the provider has.
    #[error(
        "NodeClaim {claim}: spec.nodeClassRef names EC2NodeClass {class:?}, which is not applied"
    )]
    UnknownNodeClass {
        /// The claim's name.
        claim: String,
        /// The class it names.
        class: String,
    },
    /// A label the instance is described by is missing.
    #[error("NodeClaim {claim}: metadata.labels has no {label}")]
    MissingLabel {
        /// The claim's name.
        claim: String,
        /// The label's key.
        label: &'static str,
    },
    /// The claim's instance type is not one its class offers.
    #[error("NodeClaim {claim}: instance type {instance_type:?} is not one of its EC2NodeClass's")]
    UnknownInstanceType {
        /// The claim's name.
        claim: String,
        /// The type its label names.
        instance_type: String,
    },
    /// The zone label and the provider ID's zone disagree, or the class
    /// has no subnet in that zone for the instance to be in.
    #[error("NodeClaim {claim}: zone {zone:?}: {problem}")]
    Zone {
        /// The claim's name.
        claim: String,
        /// The zone its label names.
        zone: String,
        /// What is wrong.
        problem: String,
    },
}

impl AdoptError {
    /// The claim's field at fault, as a reader finds it in the manifest.
    pub fn field(&self) -> String {
        match self {
            AdoptError::NotLaunched { .. }
            | AdoptError::ProviderId { .. }
            | AdoptError::AlreadyRunning { .. } => "status.providerID".to_owned(),
            AdoptError::UnknownNodeClass { .. } => "spec.nodeClassRef.name".to_owned(),
            AdoptError::MissingLabel { label, .. } => format!("metadata.labels[{label}]"),
            AdoptError::UnknownInstanceType { .. } => {
                format!("metadata.labels[{LABEL_INSTANCE_TYPE_STABLE}]")
            }
            AdoptError::Zone { .. } => format!("metadata.labels[{LABEL_TOPOLOGY_ZONE}]"),
        }
    }
}

impl AwsCloudProvider<InMemoryEc2> {
    /// Puts the running instance a launched claim names (by its provider
    /// ID, `aws:///<zone>/<instance-id>`) into the in-memory EC2 as this
    /// provider's launch leaves one: its type, zone and capacity type (and
    /// reservation) from the claim's labels, in the class's subnet of that
    /// zone with the most free addresses, in the class's security groups,
    /// on the claim's `status.imageID` (else the class's image for its
    /// type), tagged with the cluster, its pool, its class and its claim.
    /// Reading it back gives the claim's provider ID, so the driver finds
    /// the claim's instance running, as a controller started on a live
    /// cluster does; a reserved one counts against its reservation.
    ///
    /// # Errors
    ///
    /// [`AdoptError`] naming the claim and the field at fault.
    pub fn adopt(&self, claim: &NodeClaim) -> Result<(), AdoptError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let status = claim.status.as_ref();
        let Some(provider_id) = status.and_then(|s| s.provider_id.as_deref()) else {
            return Err(AdoptError::NotLaunched { claim: name });
        };
        let (id_zone, instance_id) =
            parse_provider_id(provider_id).map_err(|source| AdoptError::ProviderId {
                claim: name.clone(),
                source,
            })?;
        let class_name = claim.spec.node_class_ref.as_ref().map(|r| r.name.as_str());
        let class = self
            .node_class(class_name)
            .ok_or_else(|| AdoptError::UnknownNodeClass {
                claim: name.clone(),
                class: class_name.unwrap_or_default().to_owned(),
            })?;
        let labels = claim.metadata.labels.clone().unwrap_or_default();
        let label = |key: &'static str| {
            labels
                .get(key)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| AdoptError::MissingLabel {
                    claim: name.clone(),
                    label: key,
                })
        };
        let type_name = label(LABEL_INSTANCE_TYPE_STABLE)?;
        let instance_type =
            self.type_of(class_name, type_name)
                .ok_or_else(|| AdoptError::UnknownInstanceType {
                    claim: name.clone(),
                    instance_type: type_name.clone(),
                })?;
        let zone = labels
            .get(LABEL_TOPOLOGY_ZONE)
            .map_or(id_zone, String::as_str);
        let zone_error = |problem: String| AdoptError::Zone {
            claim: name.clone(),
            zone: zone.to_owned(),
            problem,
        };
        if zone != id_zone {
            return Err(zone_error(format!(
                "status.providerID {provider_id} is in zone {id_zone}"
            )));
        }
        let subnet_id = self
            .roomiest_subnet(&class, zone)
            .ok_or_else(|| zone_error("the EC2NodeClass has no subnet in this zone".to_owned()))?;
        let capacity_type = labels.get(CAPACITY_TYPE_LABEL_KEY).map(String::as_str);
        let reservation = match capacity_type {
            Some(CAPACITY_TYPE_RESERVED) => Some(label(CAPACITY_RESERVATION_ID)?.clone()),
            _ => None,
        };
        let pool = labels.get(NODE_POOL_LABEL_KEY);
        let mut tags = launch_tags(
            &class,
            pool.map_or("", String::as_str),
            &self.config.cluster_name,
        );
        // A claim of no pool gets no pool tag: its instance is then not the
        // provider's to list, as with a launch of no pool.
        if pool.is_none() {
            tags.remove(NODE_POOL_LABEL_KEY);
        }
        tags.insert(NODE_CLAIM_TAG.to_owned(), name.clone());
        let image_id = (status.and_then(|s| s.image_id.clone()))
            .or_else(|| image_for(&class, &instance_type))
            .unwrap_or_default();
        let instance = Instance {
            instance_id: instance_id.to_owned(),
            instance_type: type_name.clone(),
            image_id,
            state: crate::ec2::InstanceState::Running,
            launch_time: (claim.metadata.creation_timestamp.as_ref())
                .map_or_else(|| (self.clock)(), |t| t.0),
            availability_zone: zone.to_owned(),
            subnet_id,
            security_group_ids: security_groups(&class),
            instance_lifecycle: (capacity_type == Some(CAPACITY_TYPE_SPOT))
                .then(|| "spot".to_owned()),
            capacity_reservation_id: reservation.clone(),
            tags: tags.into_iter().map(|(k, v)| Tag::new(&k, &v)).collect(),
        };
        if !self.api.insert_instance(instance) {
            return Err(AdoptError::AlreadyRunning {
                claim: name,
                instance: instance_id.to_owned(),
            });
        }
        if let Some(reservation) = reservation {
            self.count_reserved_launch(&reservation);
        }
        Ok(())
    }

    /// The class's subnet in `zone` with the most free addresses in EC2
    /// (the first in status order on a tie), as a launch picks one.
    fn roomiest_subnet(&self, class: &EC2NodeClass, zone: &str) -> Option<String> {
        let subnets = class.status.as_ref().and_then(|s| s.subnets.as_deref());
        let mut best: Option<(u32, &str)> = None;
        for subnet in subnets
            .unwrap_or_default()
            .iter()
            .filter(|s| s.zone == zone)
        {
            let free = (self.api.subnet(&subnet.id)).map_or(0, |s| s.available_ip_address_count);
            if best.is_none_or(|(most, _)| free > most) {
                best = Some((free, subnet.id.as_str()));
            }
        }
        best.map(|(_, id)| id.to_owned())
    }
}

/// The class's security groups, as its status resolves them.
fn security_groups(class: &EC2NodeClass) -> Vec<String> {
    let groups = class
        .status
        .as_ref()
        .and_then(|s| s.security_groups.as_deref());
    groups
        .unwrap_or_default()
        .iter()
        .map(|g| g.id.clone())
        .collect()
}

/// The first of the class's AMIs, in status order, whose requirements the
/// type meets: the image a launch of it gets, and the one drift expects.
fn image_for(class: &EC2NodeClass, instance_type: &InstanceType) -> Option<String> {
    let amis = class.status.as_ref().and_then(|s| s.amis.as_deref());
    let strict = WellKnownLabels::empty();
    amis.unwrap_or_default()
        .iter()
        .find(|ami| {
            Requirements::from_node_selector_requirements(&ami.requirements)
                .is_ok_and(|r| instance_type.requirements.is_compatible(&r, &strict))
        })
        .map(|ami| ami.id.clone())
}
