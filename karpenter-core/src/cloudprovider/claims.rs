//! Reading a NodeClaim as a provider's `create` needs it: its requirements
//! and its requests, with errors a caller can act on.

use crate::api::NodeClaim;
use crate::resources::ResourceList;
use crate::scheduling::{Requirement, Requirements};

use super::CloudProviderError;

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
                message: e.to_string(),
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
                message: e.to_string(),
            })
        }
    }
}
