//! What EC2's answers mean for a launch, after upstream's `pkg/errors` and
//! the fleet-error handling of its instance provider: which error codes are
//! insufficient capacity, what each marks unavailable, the `CreateError`
//! reason a failure carries.

use karpenter_core::cloudprovider::OfferingKey;
use karpenter_core::scheduling::{CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, RequirementError};
use thiserror::Error;

use crate::ec2::INSUFFICIENT_CAPACITY_CODES;

const INSUFFICIENT_FREE_ADDRESSES: &str = "InsufficientFreeAddressesInSubnet";
const SPOT_ROLE_NOT_PERMITTED: &str = "AuthFailure.ServiceLinkedRoleCreationNotPermitted";
/// Upstream recognises the spread placement group limit by its message only.
const SPREAD_PLACEMENT_GROUP_LIMIT: &str = "limit of instances in this spread placement group";

/// Whether `code` is one of the codes upstream reads as insufficient
/// capacity ([`INSUFFICIENT_CAPACITY_CODES`]).
pub fn is_insufficient_capacity(code: &str) -> bool {
    INSUFFICIENT_CAPACITY_CODES.contains(&code)
}

/// One error of a `CreateFleet` answer: the code and message EC2 gave and
/// the override (type, zone, subnet) it was about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetError {
    /// The EC2 error code, e.g. `InsufficientInstanceCapacity`.
    pub code: String,
    /// EC2's message.
    pub message: String,
    /// The override's instance type.
    pub instance_type: String,
    /// The override's zone.
    pub zone: String,
    /// The override's subnet, when the override named one.
    pub subnet_id: Option<String>,
}

/// What a fleet error makes unavailable for a while (upstream: 3 minutes,
/// [`DEFAULT_UNAVAILABLE_TTL`](karpenter_core::cloudprovider::DEFAULT_UNAVAILABLE_TTL)).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnavailableMark {
    /// One (instance type, zone, capacity type) offering.
    Offering {
        /// The instance type.
        instance_type: String,
        /// The zone.
        zone: String,
        /// `spot` or `on-demand`.
        capacity_type: String,
    },
    /// A subnet out of addresses (a zone is unavailable once all its
    /// subnets are).
    Subnet(String),
    /// Every spot offering: the account may not create the spot service
    /// role.
    AllSpot,
    /// A capacity reservation, now exhausted.
    Reservation(String),
}

/// What `errors` of a launch as `capacity_type` mark unavailable, after
/// upstream: a subnet out of addresses is marked whatever the capacity
/// type; for spot and on-demand each insufficient-capacity error marks its
/// offering and a spot-role error marks all spot; for a reserved launch each
/// insufficient-capacity error exhausts the reservation `reservation_of`
/// gives for its (type, zone). Spread placement group errors mark nothing:
/// placement groups are not modelled yet. Sorted and without repeats.
pub fn unavailable_marks(
    errors: &[FleetError],
    capacity_type: &str,
    reservation_of: impl Fn(&str, &str) -> Option<String>,
) -> Vec<UnavailableMark> {
    let mut marks = Vec::new();
    for error in errors {
        if error.code == INSUFFICIENT_FREE_ADDRESSES
            && let Some(subnet) = error.subnet_id.as_ref().filter(|s| !s.is_empty())
        {
            marks.push(UnavailableMark::Subnet(subnet.clone()));
        }
        let placement_group = error.message.contains(SPREAD_PLACEMENT_GROUP_LIMIT);
        if capacity_type == CAPACITY_TYPE_RESERVED {
            if is_insufficient_capacity(&error.code)
                && !placement_group
                && let Some(id) = reservation_of(&error.instance_type, &error.zone)
            {
                marks.push(UnavailableMark::Reservation(id));
            }
            continue;
        }
        if is_insufficient_capacity(&error.code) && !placement_group {
            marks.push(UnavailableMark::Offering {
                instance_type: error.instance_type.clone(),
                zone: error.zone.clone(),
                capacity_type: capacity_type.to_owned(),
            });
        }
        if error.code == SPOT_ROLE_NOT_PERMITTED {
            marks.push(UnavailableMark::AllSpot);
        }
    }
    marks.sort();
    marks.dedup();
    marks
}

/// Why a launch failed, as the core hears it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LaunchError {
    /// No offering could take the claim now; the core retries it with
    /// others (upstream's `InsufficientCapacityError`).
    #[error("insufficient capacity: {0}")]
    InsufficientCapacity(String),
    /// The launch failed for a reason the core reports on the claim
    /// (upstream's `CreateError`).
    #[error("{reason}: {message}")]
    Create {
        /// The condition reason, e.g. `LaunchFailed`, `Unauthorized`.
        reason: &'static str,
        /// What happened.
        message: String,
    },
    /// An AMI of the NodeClass's status has requirements that cannot be
    /// read, so no type can be matched to it.
    #[error("status.amis[{index}].requirements of {id}: {source}")]
    AmiRequirements {
        /// Its position in `status.amis`.
        index: usize,
        /// The AMI ID.
        id: String,
        /// What is wrong with them.
        #[source]
        source: RequirementError,
    },
}

impl LaunchError {
    /// The reason the core writes on the claim: `InsufficientCapacity`, a
    /// `CreateError` reason, or `LaunchFailed` for unreadable AMI
    /// requirements (upstream's reason for template resolution failures).
    pub fn reason(&self) -> &'static str {
        match self {
            LaunchError::InsufficientCapacity(_) => "InsufficientCapacity",
            LaunchError::Create { reason, .. } => reason,
            LaunchError::AmiRequirements { .. } => "LaunchFailed",
        }
    }
}

/// Upstream's (reason, message) for an EC2 error's text (`code: message`,
/// or several joined), the first rule that matches winning; `LaunchFailed`
/// when none does.
pub fn reason_message(text: &str) -> (&'static str, &'static str) {
    let has = |needle: &str| text.contains(needle);
    if has(SPOT_ROLE_NOT_PERMITTED) {
        return (
            "SpotSLRCreationFailed",
            "User does not have sufficient permission to create the Spot ServiceLinkedRole to launch spot instances",
        );
    }
    if has("UnauthorizedOperation") || has("AccessDenied") || has("AuthFailure") {
        return unauthorized(text);
    }
    if has("InvalidParameter") && has("belong to different networks") {
        return (
            "SecurityGroupSubnetVPCMismatch",
            "Security groups and subnets must be in the same VPC.",
        );
    }
    REASONS
        .iter()
        .find(|(needle, _, _)| has(needle))
        .map_or(("LaunchFailed", "Instance launch failed"), |(_, r, m)| {
            (r, m)
        })
}

/// The `Unauthorized` family: which policy denied, or the AMI.
fn unauthorized(text: &str) -> (&'static str, &'static str) {
    if text.contains("with an explicit deny in a permissions boundary") {
        (
            "Unauthorized",
            "User is not authorized to perform this operation due to a permission boundary",
        )
    } else if text.contains("with an explicit deny in a service control policy") {
        (
            "Unauthorized",
            "User is not authorized to perform this operation due to a service control policy",
        )
    } else if text.contains("Not authorized for images") {
        (
            "AMIAuthorizationFailure",
            "User is not authorized for AMI used in instance launch",
        )
    } else {
        (
            "Unauthorized",
            "User is not authorized to perform this operation because no identity-based policy allows it",
        )
    }
}

/// The remaining rules in upstream's order: (text to find, reason, message).
const REASONS: [(&str, &str, &str); 13] = [
    (
        "iamInstanceProfile.name is invalid",
        "InstanceProfileNameInvalid",
        "Instance profile name used from EC2NodeClass status does not exist",
    ),
    (
        "InvalidLaunchTemplateId.NotFound",
        "LaunchTemplateNotFound",
        "Launch template used for instance launch wasn't found",
    ),
    (
        "User data is limited to",
        "UserDataSizeLimitExceeded",
        "Rendered user data exceeds the EC2 user data size limit",
    ),
    (
        "InvalidAMIID.Malformed",
        "InvalidAMIID",
        "AMI used for instance launch is invalid",
    ),
    (
        "InvalidAMIID.NotFound",
        "AMINotFound",
        "AMI used for instance launch either does not exist or you don't have permissions to use it",
    ),
    (
        "RequestLimitExceeded",
        "RequestLimitExceeded",
        "Request limit exceeded",
    ),
    (
        "InternalError",
        "InternalError",
        "An internal error has occurred",
    ),
    (
        "not eligible for Free Tier",
        "FreeTierIneligible",
        "The specified instance type is not eligible for Free Tier",
    ),
    (
        "MaxFleetCountExceeded",
        "FleetQuotaExceeded",
        "A fleet launch was requested but this would exceed your fleet request quota",
    ),
    (
        "PendingVerification",
        "AccountPendingVerification",
        "An instance launch was requested but the request for launching resources in this region is still being verified",
    ),
    (
        "MaxSpotInstanceCountExceeded",
        "SpotQuotaExceeded",
        "A spot instance launch was requested but this would exceed your spot instance quota",
    ),
    (
        "VcpuLimitExceeded",
        "VCPULimitExceeded",
        "An instance was requested that would exceed your VCPU quota",
    ),
    (
        "InsufficientFreeAddressesInSubnet",
        "InsufficientFreeAddressesInSubnet",
        "There are not enough free IP addresses to launch an instance in this subnet",
    ),
];

/// The error of a fleet that started no instance, after upstream: when
/// every error is insufficient capacity (or the spot role), insufficient
/// capacity; otherwise a `CreateError` with the reason of their combined
/// text. The distinct `code: message` texts are joined in sorted order so
/// the message does not depend on EC2's order.
pub fn fleet_outcome(errors: &[FleetError]) -> LaunchError {
    let mut texts: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.code, e.message))
        .collect();
    texts.sort();
    texts.dedup();
    let combined = texts.join("; ");
    let all_capacity = errors
        .iter()
        .all(|e| is_insufficient_capacity(&e.code) || e.code == SPOT_ROLE_NOT_PERMITTED);
    if all_capacity {
        return LaunchError::InsufficientCapacity(format!("with fleet error(s), {combined}"));
    }
    let (reason, message) = reason_message(&combined);
    LaunchError::Create {
        reason,
        message: format!("{message}: {combined}"),
    }
}

impl UnavailableMark {
    /// The engine's key of the offering an [`UnavailableMark::Offering`]
    /// names, to record in
    /// [`UnavailableOfferings`](karpenter_core::cloudprovider::UnavailableOfferings);
    /// `None` for the other marks.
    pub fn offering_key(&self) -> Option<OfferingKey> {
        match self {
            UnavailableMark::Offering {
                instance_type,
                zone,
                capacity_type,
            } => Some(OfferingKey::new(instance_type, zone, capacity_type)),
            _ => None,
        }
    }

    /// Whether this mark is about spot capacity.
    pub fn is_spot(&self) -> bool {
        match self {
            UnavailableMark::AllSpot => true,
            UnavailableMark::Offering { capacity_type, .. } => capacity_type == CAPACITY_TYPE_SPOT,
            UnavailableMark::Subnet(_) | UnavailableMark::Reservation(_) => false,
        }
    }
}
