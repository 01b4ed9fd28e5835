//! Whether a node launched from an `EC2NodeClass` has drifted from it, as
//! upstream's `isNodeClassDrifted` (`pkg/cloudprovider/drift.go`) decides,
//! first reason first: the static hash ([`static_drift`]), then what the
//! class's status resolved to against what the instance has
//! ([`dynamic_drift`]): image, security groups, subnet, capacity
//! reservation, placement group.
//!
//! Both are pure: the caller reads the instance (see [`LaunchedInstance`])
//! and resolves the placement group.

use std::collections::BTreeSet;
use std::fmt;

use karpenter_core::api::NodeClaim;
use karpenter_core::scheduling::{RequirementError, Requirements, WellKnownLabels};

use super::EC2NodeClass;
use super::hash::{HASH_ANNOTATION, HASH_VERSION_ANNOTATION, annotation};

/// The label with the ID of the placement group a node launched into.
pub const PLACEMENT_GROUP_ID_LABEL: &str = "karpenter.k8s.aws/placement-group-id";

/// Why a node drifted from its `EC2NodeClass`; [`name`](Self::name) is
/// upstream's reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DriftReason {
    /// The class's hashed spec changed since the node launched.
    NodeClass,
    /// The node's image is not the one the class's AMIs give its type.
    Ami,
    /// The instance's security groups are not the class's.
    SecurityGroup,
    /// The instance's subnet is not among the class's.
    Subnet,
    /// The instance's capacity reservation is not among the class's.
    CapacityReservation,
    /// The node's placement group is not the class's.
    PlacementGroup,
}

impl DriftReason {
    /// Upstream's reason string.
    pub fn name(self) -> &'static str {
        match self {
            DriftReason::NodeClass => "NodeClassDrift",
            DriftReason::Ami => "AMIDrift",
            DriftReason::SecurityGroup => "SecurityGroupDrift",
            DriftReason::Subnet => "SubnetDrift",
            DriftReason::CapacityReservation => "CapacityReservationDrift",
            DriftReason::PlacementGroup => "PlacementGroupDrift",
        }
    }
}

impl fmt::Display for DriftReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why drift could not be decided; upstream returns these as errors and
/// retries rather than calling a node drifted or not.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// `status.amis` is empty: no image to compare with.
    #[error("status.amis: no AMIs resolved for the EC2NodeClass")]
    NoAmis,
    /// The claim has no `status.imageID`.
    #[error("status.imageID: the NodeClaim has no image ID")]
    NoImageId,
    /// `status.securityGroups` is empty.
    #[error("status.securityGroups: no security groups resolved for the EC2NodeClass")]
    NoSecurityGroups,
    /// `status.subnets` is empty.
    #[error("status.subnets: no subnets resolved for the EC2NodeClass")]
    NoSubnets,
    /// An AMI's requirements do not parse.
    #[error("status.amis[{index}].requirements: {source}")]
    AmiRequirements {
        /// The AMI's position in `status.amis`.
        index: usize,
        /// What is wrong with them.
        #[source]
        source: RequirementError,
    },
}

/// What the running instance and its claim say, as the caller read them.
#[derive(Clone, Debug, Default)]
pub struct LaunchedInstance {
    /// The claim's `status.imageID`.
    pub image_id: String,
    /// The requirements of the claim's instance type, as the provider built
    /// it for the class (the AMI is matched to them).
    pub instance_type_requirements: Requirements,
    /// The instance's security group IDs.
    pub security_group_ids: Vec<String>,
    /// The instance's subnet ID.
    pub subnet_id: String,
    /// The capacity reservation the instance runs in, if any. Upstream
    /// re-reads the instance, uncached, before calling a reservation
    /// drifted; pass the up-to-date value.
    pub capacity_reservation_id: Option<String>,
    /// The claim's [`PLACEMENT_GROUP_ID_LABEL`], if set.
    pub placement_group_id: Option<String>,
}

/// Upstream's static drift (`areStaticFieldsDrifted`): drifted when the class
/// and the claim both carry the hash and version annotations, the versions
/// are equal and the hashes differ. A missing annotation or another version
/// is never drift (the hash controller re-hashes such claims).
pub fn static_drift(class: &EC2NodeClass, claim: &NodeClaim) -> Option<DriftReason> {
    let class_hash = annotation(&class.metadata, HASH_ANNOTATION)?;
    let class_version = annotation(&class.metadata, HASH_VERSION_ANNOTATION)?;
    let claim_hash = annotation(&claim.metadata, HASH_ANNOTATION)?;
    let claim_version = annotation(&claim.metadata, HASH_VERSION_ANNOTATION)?;
    (class_version == claim_version && class_hash != claim_hash).then_some(DriftReason::NodeClass)
}

/// Upstream's dynamic drift, in its order: [`DriftReason::Ami`] first (decided
/// before the instance is read), then the first of security groups, subnet,
/// capacity reservation and placement group.
///
/// `placement_group_id` is the ID of the group the class's
/// `placementGroupSelector` resolves to (`None` without one). As upstream,
/// every check after the image is made before the first reason is taken, so
/// a missing subnet list is an error even when the security groups drifted.
pub fn dynamic_drift(
    class: &EC2NodeClass,
    instance: &LaunchedInstance,
    placement_group_id: Option<&str>,
) -> Result<Option<DriftReason>, DriftError> {
    if ami_drifted(class, instance)? {
        return Ok(Some(DriftReason::Ami));
    }
    let status = class.status.as_ref();
    let wanted_groups: BTreeSet<&str> = status
        .and_then(|s| s.security_groups.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|group| group.id.as_str())
        .collect();
    if wanted_groups.is_empty() {
        return Err(DriftError::NoSecurityGroups);
    }
    let groups: BTreeSet<&str> = instance
        .security_group_ids
        .iter()
        .map(String::as_str)
        .collect();
    let subnets = status
        .and_then(|s| s.subnets.as_deref())
        .unwrap_or_default();
    if subnets.is_empty() {
        return Err(DriftError::NoSubnets);
    }
    let reservations = status
        .and_then(|s| s.capacity_reservations.as_deref())
        .unwrap_or_default();
    let reasons = [
        (groups != wanted_groups).then_some(DriftReason::SecurityGroup),
        (!subnets.iter().any(|s| s.id == instance.subnet_id)).then_some(DriftReason::Subnet),
        instance
            .capacity_reservation_id
            .as_deref()
            .filter(|id| !reservations.iter().any(|r| r.id == *id))
            .map(|_| DriftReason::CapacityReservation),
        (instance.placement_group_id.as_deref() != placement_group_id)
            .then_some(DriftReason::PlacementGroup),
    ];
    Ok(reasons.into_iter().flatten().next())
}

/// Static drift, then dynamic drift: upstream's whole decision for a claim
/// whose NodePool and class exist.
pub fn drift(
    class: &EC2NodeClass,
    claim: &NodeClaim,
    instance: &LaunchedInstance,
    placement_group_id: Option<&str>,
) -> Result<Option<DriftReason>, DriftError> {
    match static_drift(class, claim) {
        Some(reason) => Ok(Some(reason)),
        None => dynamic_drift(class, instance, placement_group_id),
    }
}

/// Whether the claim's image is not the one the class's AMIs give its
/// instance type: the first AMI, in status order, whose requirements the
/// type meets (upstream's `MapToInstanceTypes` for one type).
fn ami_drifted(class: &EC2NodeClass, instance: &LaunchedInstance) -> Result<bool, DriftError> {
    let amis = class
        .status
        .as_ref()
        .and_then(|s| s.amis.as_deref())
        .unwrap_or_default();
    if amis.is_empty() {
        return Err(DriftError::NoAmis);
    }
    if instance.image_id.is_empty() {
        return Err(DriftError::NoImageId);
    }
    let strict = WellKnownLabels::empty();
    for (index, ami) in amis.iter().enumerate() {
        let requirements = Requirements::from_node_selector_requirements(&ami.requirements)
            .map_err(|source| DriftError::AmiRequirements { index, source })?;
        if instance
            .instance_type_requirements
            .is_compatible(&requirements, &strict)
        {
            return Ok(ami.id != instance.image_id);
        }
    }
    // No AMI fits the type: none is mapped to it, so its image is not one.
    Ok(true)
}

#[cfg(test)]
mod tests;
