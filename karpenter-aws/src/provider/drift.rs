//! `is_drifted`: the crate's [`drift`](crate::nodeclass::drift) decision
//! over the claim, its class and the instance as EC2 describes it now.

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::CloudProviderError;
use karpenter_core::scheduling::{LABEL_INSTANCE_TYPE_STABLE, Requirements};

use super::AwsCloudProvider;
use crate::ec2::Ec2Api;
use crate::launch::parse_provider_id;
use crate::nodeclass::{LaunchedInstance, PLACEMENT_GROUP_ID_LABEL, drift};

/// The claim's label `key`.
fn label<'a>(claim: &'a NodeClaim, key: &str) -> Option<&'a str> {
    claim
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// [`CloudProvider::is_drifted`](karpenter_core::cloudprovider::CloudProvider::is_drifted).
    /// A claim whose class is unknown, or with no instance yet, has not
    /// drifted (upstream ignores a class it cannot find).
    pub(super) async fn drift_of(
        &self,
        claim: &NodeClaim,
    ) -> Result<Option<String>, CloudProviderError> {
        let name = claim.spec.node_class_ref.as_ref().map(|r| r.name.as_str());
        let Some(class) = self.node_class(name) else {
            return Ok(None);
        };
        let provider_id = claim.status.as_ref().and_then(|s| s.provider_id.as_deref());
        let Some(Ok((_, id))) = provider_id.map(parse_provider_id) else {
            return Ok(None);
        };
        let Some(instance) = self.live_instance(id).await? else {
            return Ok(None);
        };
        let type_name = label(claim, LABEL_INSTANCE_TYPE_STABLE).unwrap_or(&instance.instance_type);
        let requirements = self
            .type_of(
                Some(class.metadata.name.as_deref().unwrap_or_default()),
                type_name,
            )
            .map_or_else(Requirements::new, |t| t.requirements);
        let launched = LaunchedInstance {
            image_id: claim
                .status
                .as_ref()
                .and_then(|s| s.image_id.clone())
                .unwrap_or_else(|| instance.image_id.clone()),
            instance_type_requirements: requirements,
            // EC2's answer, not the class's: a group the class dropped or
            // gained since launch shows as a difference here.
            security_group_ids: instance.security_group_ids.clone(),
            subnet_id: instance.subnet_id.clone(),
            capacity_reservation_id: instance.capacity_reservation_id.clone(),
            placement_group_id: label(claim, PLACEMENT_GROUP_ID_LABEL).map(str::to_owned),
        };
        // The class's group now, against the one the claim was labelled
        // with at launch.
        let group = self.placement_group(&class).await?;
        let group_id = group.as_ref().map(|g| g.group_id.as_str());
        drift(&class, claim, &launched, group_id)
            .map(|reason| reason.map(|r| r.name().to_owned()))
            .map_err(|e| CloudProviderError::api("deciding drift", true, e))
    }
}
