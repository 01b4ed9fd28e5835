//! The AWS provider's drift verdicts for a scenario's claims, as far as
//! manifests can show them: the EC2NodeClass hash, then the AMI. The other
//! dynamic reasons (security groups, subnet, capacity reservation, placement
//! group) need the running instance, which a manifest does not describe.

use std::collections::BTreeMap;
use std::sync::Arc;

use karpenter_aws::EC2NodeClass;
use karpenter_aws::nodeclass::{DriftReason, LaunchedInstance, dynamic_drift, static_drift};
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::LABEL_INSTANCE_TYPE_STABLE;
use karpenter_core::snapshot::Snapshot;

/// Claim name → upstream's reason, for the claims of pools in `classes`.
pub(super) fn verdicts(
    snapshot: &Snapshot,
    classes: &BTreeMap<String, EC2NodeClass>,
    per_pool: &BTreeMap<String, Arc<[InstanceType]>>,
) -> BTreeMap<String, String> {
    let mut verdicts = BTreeMap::new();
    for node in &snapshot.nodes {
        let Some(claim) = &node.node_claim else {
            continue;
        };
        let Some(pool) = node.node_pool() else {
            continue;
        };
        let Some(class) = classes.get(pool) else {
            continue;
        };
        let types = per_pool.get(pool).map_or(&[][..], |t| &t[..]);
        if let Some(reason) = verdict(class, claim, types) {
            let name = claim.metadata.name.clone().unwrap_or_default();
            verdicts.insert(name, reason.to_string());
        }
    }
    verdicts
}

/// The claim's drift from `class`: the hash first, then the image of its
/// instance type (found among `types`). Where upstream would return an error
/// and retry (no AMIs resolved, no image ID on the claim), no verdict.
fn verdict(class: &EC2NodeClass, claim: &NodeClaim, types: &[InstanceType]) -> Option<DriftReason> {
    if let Some(reason) = static_drift(class, claim) {
        return Some(reason);
    }
    let type_name = claim
        .metadata
        .labels
        .as_ref()?
        .get(LABEL_INSTANCE_TYPE_STABLE)?;
    // A type the provider no longer offers is the core's drift
    // (`instanceTypeNotFound`), not the image's.
    let instance_type = types.iter().find(|t| &t.name == type_name)?;
    let status = class.status.as_ref()?;
    // The instance is described as matching the class in everything but its
    // image, so that only the image can drift: manifests say nothing of the
    // instance's security groups, subnet or reservation.
    let instance = LaunchedInstance {
        image_id: claim.status.as_ref()?.image_id.clone()?,
        instance_type_requirements: instance_type.requirements.clone(),
        security_group_ids: (status.security_groups.iter().flatten())
            .map(|g| g.id.clone())
            .collect(),
        // Without subnets upstream errors after the image check; an empty
        // ID lets the image still decide.
        subnet_id: (status.subnets.iter().flatten().next())
            .map(|s| s.id.clone())
            .unwrap_or_default(),
        capacity_reservation_id: None,
        placement_group_id: None,
    };
    dynamic_drift(class, &instance, None).ok().flatten()
}
