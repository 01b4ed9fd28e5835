//! `DescribePlacementGroups` through the SDK: one request (EC2 does not
//! page this call) and its groups read into this crate's type.

use aws_sdk_ec2::types as sdk;

use super::convert::{count, filters, list, tags_in, text};
use crate::ec2::{
    DescribePlacementGroupsInput, DescribePlacementGroupsOutput, Ec2Error, Operation,
    PlacementGroup,
};
use crate::sdk::error::sdk_error;

/// `DescribePlacementGroups` by `input`'s IDs, names and filters.
pub(super) async fn describe_placement_groups(
    ec2: &aws_sdk_ec2::Client,
    input: DescribePlacementGroupsInput,
) -> Result<DescribePlacementGroupsOutput, Ec2Error> {
    let op = Operation::DescribePlacementGroups;
    let answer = ec2
        .describe_placement_groups()
        .set_group_ids(list(input.group_ids))
        .set_group_names(list(input.group_names))
        .set_filters(filters(input.filters))
        .send()
        .await
        .map_err(|error| sdk_error(op, error))?;
    let placement_groups = answer
        .placement_groups()
        .iter()
        .map(placement_group)
        .collect();
    Ok(DescribePlacementGroupsOutput { placement_groups })
}

/// One `DescribePlacementGroups` entry.
fn placement_group(group: &sdk::PlacementGroup) -> PlacementGroup {
    PlacementGroup {
        group_id: text(group.group_id()),
        group_name: text(group.group_name()),
        strategy: group
            .strategy()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default(),
        partition_count: count(group.partition_count()),
        spread_level: group
            .spread_level()
            .map(|l| l.as_str().to_owned())
            .unwrap_or_default(),
        state: group
            .state()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default(),
        tags: tags_in(group.tags()),
    }
}
