//! What a provider's `create` needs of a NodeClaim: its requirements and its
//! requests, with errors a caller can act on, the offering to launch, and
//! the claim hydrated as the contract of `create` says.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::api::{NodeClaim, Quantities};
use crate::resources::ResourceList;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, Requirement,
    Requirements, WellKnownLabels,
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
                unavailable.push(OfferingKey::of(instance_type, offering));
                continue;
            }
            if best.is_none_or(|b| rank((instance_type, offering), b).is_lt()) {
                best = Some((instance_type, offering));
            }
        }
    }
    best.ok_or(unavailable)
}

/// `claim` as [`CloudProvider::create`](super::CloudProvider::create)
/// returns it once `instance_type` launched as `offering` under
/// `provider_id`: the labels the type carries (each single-valued
/// requirement), then the offering's own, then
/// `node.kubernetes.io/instance-type`, `topology.kubernetes.io/zone` and
/// `karpenter.sh/capacity-type`; `status.providerID`; and `status.capacity`
/// and `status.allocatable` (capacity less overhead) in the resource forms
/// the API uses. The claim's own labels stay unless one of these replaces
/// them. A provider adds what is its own (annotations, an image) after.
///
/// ```
/// use karpenter_core::api::NodeClaim;
/// use karpenter_core::cloudprovider::{InstanceType, Offering, hydrate};
/// use karpenter_core::resources::ResourceList;
///
/// let mut capacity = ResourceList::new();
/// capacity.set("cpu", 4_000); // millicores
/// let small = InstanceType::new(
///     "small",
///     [("kubernetes.io/arch", "amd64")],
///     vec![Offering::new("zone-a", "spot", 0.05)],
///     capacity,
///     ResourceList::new(),
/// );
/// let launched = hydrate(&NodeClaim::default(), &small, &small.offerings[0], "fake:///i-1");
/// let labels = launched.metadata.labels.as_ref().expect("labels");
/// assert_eq!(labels["node.kubernetes.io/instance-type"], "small");
/// assert_eq!(labels["topology.kubernetes.io/zone"], "zone-a");
/// assert_eq!(labels["kubernetes.io/arch"], "amd64");
/// let status = launched.status.as_ref().expect("a status");
/// assert_eq!(status.provider_id.as_deref(), Some("fake:///i-1"));
/// assert!(status.allocatable.is_some());
/// ```
pub fn hydrate(
    claim: &NodeClaim,
    instance_type: &InstanceType,
    offering: &Offering,
    provider_id: impl Into<String>,
) -> NodeClaim {
    let mut hydrated = claim.clone();
    let labels = hydrated.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.extend(instance_type.requirements.labels());
    labels.extend(offering.requirements.labels());
    for (key, value) in [
        (LABEL_INSTANCE_TYPE_STABLE, instance_type.name.as_str()),
        (LABEL_TOPOLOGY_ZONE, offering.zone.as_str()),
        (CAPACITY_TYPE_LABEL_KEY, offering.capacity_type.as_str()),
    ] {
        labels.insert(key.to_owned(), value.to_owned());
    }
    let status = hydrated.status.get_or_insert_with(Default::default);
    status.provider_id = Some(provider_id.into());
    status.capacity = Some(Quantities::from(instance_type.capacity.to_quantities()));
    status.allocatable = Some(Quantities::from(
        instance_type.allocatable().to_quantities(),
    ));
    hydrated
}
