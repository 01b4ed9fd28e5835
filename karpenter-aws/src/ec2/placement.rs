//! Placement groups, in the AWS SDK's names: what
//! `DescribePlacementGroups` takes and answers.

use super::filter::{Filter, Tag};

/// The state of a placement group nodes may launch into.
pub const PLACEMENT_GROUP_AVAILABLE: &str = "available";

/// The code EC2 answers with when a group named by name or ID does not
/// exist.
pub const PLACEMENT_GROUP_UNKNOWN: &str = "InvalidPlacementGroup.Unknown";

/// `DescribePlacementGroups`' input: the groups named by ID or by name
/// (all when neither is given) that match every filter (`group-name`,
/// `group-id`, `state`, `strategy`, `spread-level`, `tag:<key>`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribePlacementGroupsInput {
    /// `pg-…` IDs.
    pub group_ids: Vec<String>,
    /// Names.
    pub group_names: Vec<String>,
    /// Filters.
    pub filters: Vec<Filter>,
}

/// A placement group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacementGroup {
    /// `pg-…`.
    pub group_id: String,
    /// Its name, unique in the region.
    pub group_name: String,
    /// `cluster`, `partition` or `spread`.
    pub strategy: String,
    /// Partitions of a `partition` group; 0 for the other strategies.
    pub partition_count: u32,
    /// `rack` or `host` for a `spread` group; empty otherwise.
    pub spread_level: String,
    /// `pending`, `available`, `deleting` or `deleted`.
    pub state: String,
    /// Tags.
    pub tags: Vec<Tag>,
}

/// `DescribePlacementGroupsOutput` (the call has a single page).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribePlacementGroupsOutput {
    /// The groups.
    pub placement_groups: Vec<PlacementGroup>,
}
