//! The class's placement group at launch, as upstream's launch template
//! and cloud providers use it: the group (and a partition group's
//! partition) in the launch template's `Placement`, and the group's labels
//! on the launched claim.

use std::collections::BTreeMap;

use karpenter_core::cloudprovider::CloudProviderError;
use karpenter_core::scheduling::{Operator, Requirements};

use super::{AwsCloudProvider, api_error};
use crate::ec2::{Ec2Api, LaunchTemplatePlacement, PlacementGroup};
use crate::instancetype::labels::{PLACEMENT_GROUP_ID, PLACEMENT_GROUP_PARTITION};
use crate::nodeclass::EC2NodeClass;
use crate::nodeclass::resolve::find_placement_group;

/// The strategy whose instances are placed in numbered partitions.
const PARTITION: &str = "partition";

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// The `available` group `class`'s `placementGroupSelector` names;
    /// `None` without a selector or when EC2 has no such group (the
    /// class's `PlacementGroupReady` is then False and the launch already
    /// refused).
    ///
    /// # Errors
    ///
    /// `DescribePlacementGroups` failing, retryable as EC2's error says:
    /// launching outside the group the class asks for would place the
    /// node where its workloads do not expect it.
    pub(super) async fn placement_group(
        &self,
        class: &EC2NodeClass,
    ) -> Result<Option<PlacementGroup>, CloudProviderError> {
        let Some(selector) = class.spec.placement_group_selector.as_ref() else {
            return Ok(None);
        };
        find_placement_group(&self.api, selector)
            .await
            .map_err(|e| api_error("describing the placement group", e))
    }
}

/// The partition a launch into a partition group asks for: the lowest of
/// the values the claim's partition requirement allows, compared as text
/// as upstream sorts them (EC2 takes one; if it runs out of capacity the
/// next claim asks for another); `None` lets EC2 choose.
fn partition(group: &PlacementGroup, requirements: &Requirements) -> Option<String> {
    if group.strategy != PARTITION {
        return None;
    }
    let requirement = requirements.get_defined(PLACEMENT_GROUP_PARTITION)?;
    if requirement.operator() != Operator::In {
        return None;
    }
    let mut values: Vec<&str> = requirement.values().collect();
    values.sort_unstable();
    values.first().map(|value| (*value).to_owned())
}

/// The launch template `Placement` for a launch into `group`.
pub(super) fn template_placement(
    group: &PlacementGroup,
    requirements: &Requirements,
) -> LaunchTemplatePlacement {
    LaunchTemplatePlacement {
        group_id: Some(group.group_id.clone()),
        partition_number: partition(group, requirements)
            .and_then(|value| value.parse().ok())
            .filter(|number| *number != 0),
    }
}

/// The labels a claim launched into `group` carries, as upstream sets
/// them: the group's ID and, for a partition group, the partition asked
/// for, or empty for the node's registration to fill in.
pub(super) fn placement_labels(
    group: &PlacementGroup,
    requirements: &Requirements,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    labels.insert(PLACEMENT_GROUP_ID.to_owned(), group.group_id.clone());
    if group.strategy == PARTITION {
        let partition = partition(group, requirements).unwrap_or_default();
        labels.insert(PLACEMENT_GROUP_PARTITION.to_owned(), partition);
    }
    labels
}
