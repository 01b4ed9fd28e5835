//! What a provider's `create` needs of a NodeClaim: its requirements and its
//! requests, with errors a caller can act on, and the offering to launch.

use std::cmp::Ordering;

use crate::api::NodeClaim;
use crate::resources::ResourceList;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_TOPOLOGY_ZONE, Requirement, Requirements, WellKnownLabels,
};

use super::{CloudProviderError, InstanceType, Offering, OfferingKey};

/// The claim's requirements, or why they cannot be read (a `Create` error,
/// reason `InvalidRequirements`).
pub fn requirements_of(claim: &NodeClaim) -> Result<Requirements, CloudProviderError> {
    let mut requirements = Requirements::new();
    for written in claim.spec.requirements() {
        let requirement = written
            .to_selector_requirement()
            .and_then(|r| Requirement::try_from(&r))
            .map_err(|e| CloudProviderError::Create {
                reason: "InvalidRequirements".to_owned(),
                message: format!("requirement on {:?} cannot be read", written.key),
                source: Some(Box::new(e)),
            })?;
        requirements.add(requirement);
    }
    Ok(requirements)
}

/// What the claim asks for (its `spec.resources.requests`; a `Create` error,
/// reason `InvalidRequests`, when a quantity does not parse).
pub fn requests_of(claim: &NodeClaim) -> Result<ResourceList, CloudProviderError> {
    let requests = claim
        .spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref());
    match requests {
        None => Ok(ResourceList::new()),
        Some(requests) => {
            ResourceList::from_quantities(requests).map_err(|e| CloudProviderError::Create {
                reason: "InvalidRequests".to_owned(),
                message: "the claim's resource requests cannot be read".to_owned(),
                source: Some(Box::new(e)),
            })
        }
    }
}

/// The offering a provider launches for a claim: among the types compatible
/// with its `requirements` (keys the types define, or `well_known`) that
/// hold its `requests`, the available offering the requirements allow that
/// `rank` puts first (least). Without one, the unavailable offerings the
/// claim could have had, for an insufficient-capacity error.
pub fn choose_offering<'t>(
    types: &'t [InstanceType],
    requirements: &Requirements,
    requests: &ResourceList,
    well_known: &WellKnownLabels,
    rank: impl Fn((&InstanceType, &Offering), (&InstanceType, &Offering)) -> Ordering,
) -> Result<(&'t InstanceType, &'t Offering), Vec<OfferingKey>> {
    let mut unavailable = Vec::new();
    let mut best: Option<(&InstanceType, &Offering)> = None;
    // Zones and capacity types are each offering's to answer, unavailable ones
    // included (a type's own requirements list only the available ones), so
    // that a claim pinned to a sold-out offering hears which.
    let mut type_level = requirements.clone();
    type_level.remove(LABEL_TOPOLOGY_ZONE);
    type_level.remove(CAPACITY_TYPE_LABEL_KEY);
    let fitting = types.iter().filter(|t| {
        type_level.is_compatible(&t.requirements, well_known) && requests.fits(&t.allocatable())
    });
    for instance_type in fitting {
        for offering in instance_type
            .offerings
            .iter()
            .filter(|o| o.is_compatible(requirements))
        {
            if !offering.available {
                unavailable.push(OfferingKey {
                    instance_type: instance_type.name.clone(),
                    zone: offering.zone.clone(),
                    capacity_type: offering.capacity_type.clone(),
                });
                continue;
            }
            if best.is_none_or(|b| rank((instance_type, offering), b).is_lt()) {
                best = Some((instance_type, offering));
            }
        }
    }
    best.ok_or(unavailable)
}
