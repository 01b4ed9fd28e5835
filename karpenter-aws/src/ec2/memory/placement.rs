//! Placement groups in [`InMemoryEc2`](super::InMemoryEc2): adding them and
//! `DescribePlacementGroups` over them.

use super::filter::Filtered;
use super::{InMemoryEc2, State};
use crate::ec2::{
    DescribePlacementGroupsInput, DescribePlacementGroupsOutput, Ec2Error, Operation,
    PLACEMENT_GROUP_UNKNOWN, PlacementGroup,
};

impl InMemoryEc2 {
    /// Adds (or replaces, by ID) a placement group. An empty state is
    /// taken for `available`, the state a group reaches once created.
    pub fn add_placement_group(&self, mut group: PlacementGroup) {
        if group.state.is_empty() {
            crate::ec2::PLACEMENT_GROUP_AVAILABLE.clone_into(&mut group.state);
        }
        let mut state = self.lock();
        state.placement_groups.insert(group.group_id.clone(), group);
    }
}

impl State {
    /// `DescribePlacementGroups`: the groups named by ID or name (all when
    /// none are), in ID order, that match every filter. A name or ID that
    /// names no group fails the call, as EC2's does.
    pub(super) fn describe_placement_groups(
        &self,
        input: &DescribePlacementGroupsInput,
    ) -> Result<DescribePlacementGroupsOutput, Ec2Error> {
        let unknown = |what: &str| {
            Ec2Error::service(
                Operation::DescribePlacementGroups,
                PLACEMENT_GROUP_UNKNOWN,
                format!("The Placement Group '{what}' is unknown."),
            )
        };
        let groups = &self.placement_groups;
        if let Some(id) = input.group_ids.iter().find(|id| !groups.contains_key(*id)) {
            return Err(unknown(id));
        }
        if let Some(name) = input
            .group_names
            .iter()
            .find(|name| !groups.values().any(|g| &g.group_name == *name))
        {
            return Err(unknown(name));
        }
        let named = |group: &PlacementGroup| {
            (input.group_ids.is_empty() && input.group_names.is_empty())
                || input.group_ids.contains(&group.group_id)
                || input.group_names.contains(&group.group_name)
        };
        let placement_groups = groups
            .values()
            .filter(|group| named(group) && group.matches(&input.filters))
            .cloned()
            .collect();
        Ok(DescribePlacementGroupsOutput { placement_groups })
    }
}
