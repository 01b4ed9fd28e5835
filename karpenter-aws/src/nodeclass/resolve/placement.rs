//! `PlacementGroupReady`: the placement group `spec.placementGroupSelector`
//! names, looked up as upstream's placement group provider looks it up
//! (by ID when given, else by name, only groups `available`).
//!
//! Upstream keeps the group it found in memory only; the status records
//! nothing but the condition, and neither does this.

use karpenter_core::api::{Condition, ConditionStatus};

use super::conditions::{Stamp, set, set_true};
use crate::ec2::{
    DescribePlacementGroupsInput, Ec2Api, Ec2Error, Filter, PLACEMENT_GROUP_AVAILABLE,
    PLACEMENT_GROUP_UNKNOWN, PlacementGroup,
};
use crate::nodeclass::{PlacementGroupSelector, condition_types as types};

/// Why the placement group could not be looked up: the selector as the
/// condition's message names it, and EC2's failure.
#[derive(Debug)]
pub(super) struct PlacementGroupFailure {
    pub(super) selector: String,
    pub(super) source: Ec2Error,
}

/// The selector as upstream names it in messages: its name, else its ID.
fn named(selector: &PlacementGroupSelector) -> String {
    let non_empty = |field: &Option<String>| field.clone().filter(|value| !value.is_empty());
    non_empty(&selector.name)
        .or_else(|| non_empty(&selector.id))
        .unwrap_or_default()
}

/// `DescribePlacementGroups`' input for `selector`: its ID when given
/// (the ID wins over the name, as upstream queries), else its name, and
/// only groups in state `available`.
pub(crate) fn placement_group_input(
    selector: &PlacementGroupSelector,
) -> DescribePlacementGroupsInput {
    let non_empty = |field: &Option<String>| field.clone().filter(|value| !value.is_empty());
    let mut input = DescribePlacementGroupsInput {
        filters: vec![Filter::new("state", [PLACEMENT_GROUP_AVAILABLE])],
        ..DescribePlacementGroupsInput::default()
    };
    if let Some(id) = non_empty(&selector.id) {
        input.group_ids.push(id);
    } else if let Some(name) = non_empty(&selector.name) {
        input.group_names.push(name);
    }
    input
}

/// The group `selector` names, if it exists and is `available`.
///
/// EC2 fails the call for a name or ID it does not know
/// ([`PLACEMENT_GROUP_UNKNOWN`]) where upstream's fake EC2 answers with
/// no group; both are "not found" here, so a class naming a group that
/// was never made says `PlacementGroupNotFound` rather than a failure.
pub(crate) async fn find_placement_group(
    api: &impl Ec2Api,
    selector: &PlacementGroupSelector,
) -> Result<Option<PlacementGroup>, Ec2Error> {
    match api
        .describe_placement_groups(placement_group_input(selector))
        .await
    {
        Ok(output) => Ok(output.placement_groups.into_iter().next()),
        Err(error) if error.code() == Some(PLACEMENT_GROUP_UNKNOWN) || error.is_not_found() => {
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// Sets `PlacementGroupReady` for `selector`, as upstream's placement
/// group reconciler: True without a selector or with its group found;
/// False `PlacementGroupNotFound` when EC2 has no such `available` group;
/// False `PlacementGroupResolutionFailed` when the call fails, the
/// failure then returned for the caller to retry.
pub(super) async fn resolve_placement_group(
    api: &impl Ec2Api,
    selector: Option<&PlacementGroupSelector>,
    stamp: Stamp,
    conditions: &mut Vec<Condition>,
) -> Result<(), PlacementGroupFailure> {
    let Some(selector) = selector else {
        set_true(conditions, stamp, types::PLACEMENT_GROUP_READY);
        return Ok(());
    };
    let name = named(selector);
    match find_placement_group(api, selector).await {
        Ok(Some(_)) => {
            set_true(conditions, stamp, types::PLACEMENT_GROUP_READY);
            Ok(())
        }
        Ok(None) => {
            let message = format!("Placement group {name:?} not found");
            set(
                conditions,
                stamp,
                types::PLACEMENT_GROUP_READY,
                ConditionStatus::False,
                "PlacementGroupNotFound",
                &message,
            );
            Ok(())
        }
        Err(source) => {
            set(
                conditions,
                stamp,
                types::PLACEMENT_GROUP_READY,
                ConditionStatus::False,
                "PlacementGroupResolutionFailed",
                "Failed to resolve placement group",
            );
            Err(PlacementGroupFailure {
                selector: name,
                source,
            })
        }
    }
}
