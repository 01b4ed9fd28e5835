//! Selector terms turned into the EC2 describe calls upstream makes: one
//! call per tag term, one for all ID terms (and one for all name terms),
//! each tag `key: "*"` a `tag-key` filter.

use crate::ec2::{DescribeImagesInput, DescribeInput, Filter};
use crate::nodeclass::{
    AmiSelectorTerm, CapacityReservationSelectorTerm, SecurityGroupSelectorTerm,
    SubnetSelectorTerm, Tags,
};

/// The owners a `name` term without an `owner` searches, as upstream's.
pub(crate) const DEFAULT_NAME_OWNERS: [&str; 2] = ["self", "amazon"];

/// One filter per tag, in key order: `tag:<key>` for a value, `tag-key`
/// for the wildcard `*` (any value, even empty).
pub(crate) fn tag_filters(tags: &Tags) -> Vec<Filter> {
    tags.iter()
        .map(|(key, value)| {
            if value == "*" {
                Filter::new("tag-key", [key.as_str()])
            } else {
                Filter::new(&format!("tag:{key}"), [value.as_str()])
            }
        })
        .collect()
}

/// A filter on `name` over `values`, or none when there are no values.
fn grouped(name: &str, values: Vec<String>) -> Option<Vec<Filter>> {
    (!values.is_empty()).then(|| vec![Filter::new(name, values)])
}

/// The `DescribeSubnets` filter sets of `terms`: each tag term's, then one
/// `subnet-id` set for every ID term.
pub(crate) fn subnet_filter_sets(terms: &[SubnetSelectorTerm]) -> Vec<Vec<Filter>> {
    let mut sets = Vec::new();
    let mut ids = Vec::new();
    for term in terms {
        match (&term.id, &term.tags) {
            (Some(id), _) if !id.is_empty() => ids.push(id.clone()),
            (_, Some(tags)) => sets.push(tag_filters(tags)),
            _ => {}
        }
    }
    sets.extend(grouped("subnet-id", ids));
    sets
}

/// The `DescribeSecurityGroups` filter sets of `terms`: each tag term's,
/// then one `group-id` set and one `group-name` set.
pub(crate) fn security_group_filter_sets(terms: &[SecurityGroupSelectorTerm]) -> Vec<Vec<Filter>> {
    let mut sets = Vec::new();
    let (mut ids, mut names) = (Vec::new(), Vec::new());
    for term in terms {
        let id = term.id.as_deref().filter(|id| !id.is_empty());
        let name = term.name.as_deref().filter(|name| !name.is_empty());
        match (id, name, &term.tags) {
            (Some(id), _, _) => ids.push(id.to_owned()),
            (None, Some(name), _) => names.push(name.to_owned()),
            (None, None, Some(tags)) => sets.push(tag_filters(tags)),
            (None, None, None) => {}
        }
    }
    sets.extend(grouped("group-id", ids));
    sets.extend(grouped("group-name", names));
    sets
}

/// The `DescribeCapacityReservations` inputs of `terms`, only active
/// reservations: one by ID per ID term; one by owner, tags and match
/// criteria per term with tags or match criteria.
pub(crate) fn capacity_reservation_inputs(
    terms: &[CapacityReservationSelectorTerm],
) -> Vec<DescribeInput> {
    let active = || Filter::new("state", ["active"]);
    let mut inputs = Vec::new();
    for term in terms {
        if let Some(id) = term.id.as_deref().filter(|id| !id.is_empty()) {
            inputs.push(DescribeInput {
                ids: vec![id.to_owned()],
                filters: vec![active()],
            });
        }
        let tags = term.tags.as_ref().filter(|tags| !tags.is_empty());
        let criteria = term
            .instance_match_criteria
            .as_deref()
            .filter(|c| !c.is_empty());
        if tags.is_none() && criteria.is_none() {
            continue;
        }
        let mut filters = vec![active()];
        if let Some(owner) = term.owner_id.as_deref().filter(|o| !o.is_empty()) {
            filters.push(Filter::new("owner-id", [owner]));
        }
        filters.extend(tags.map(tag_filters).unwrap_or_default());
        if let Some(criteria) = criteria {
            filters.push(Filter::new("instance-match-criteria", [criteria]));
        }
        inputs.push(DescribeInput {
            ids: Vec::new(),
            filters,
        });
    }
    inputs
}

/// The `DescribeImages` inputs of non-alias `terms`, every one for
/// available images only. `ssm` answers an `ssmParameter` term with the
/// image ID it holds; a parameter it does not know, or whose value is not
/// an `ami-` ID, selects nothing (upstream logs and skips it).
pub(crate) fn image_inputs(
    terms: &[AmiSelectorTerm],
    ssm: impl Fn(&str) -> Option<String>,
) -> Vec<DescribeImagesInput> {
    let mut inputs = Vec::new();
    let mut ids = Vec::new();
    for term in terms {
        let non_empty = |field: &Option<String>| field.clone().filter(|value| !value.is_empty());
        if let Some(id) = non_empty(&term.id) {
            ids.push(id);
        } else if let Some(parameter) = non_empty(&term.ssm_parameter) {
            ids.extend(ssm(&parameter).filter(|id| id.starts_with("ami-")));
        } else {
            inputs.push(image_input_for(term));
        }
    }
    if !ids.is_empty() {
        inputs.push(available(DescribeImagesInput {
            filters: vec![Filter::new("image-id", ids)],
            ..DescribeImagesInput::default()
        }));
    }
    inputs
}

/// The input of a name, owner or tag term: a name without an owner
/// searches the account's own and Amazon's images.
fn image_input_for(term: &AmiSelectorTerm) -> DescribeImagesInput {
    let owner = term.owner.clone().filter(|owner| !owner.is_empty());
    let name = term.name.clone().filter(|name| !name.is_empty());
    let owners = match (owner, &name) {
        (Some(owner), _) => vec![owner],
        (None, Some(_)) => DEFAULT_NAME_OWNERS.map(str::to_owned).to_vec(),
        (None, None) => Vec::new(),
    };
    let mut filters: Vec<Filter> = name
        .map(|name| Filter::new("name", [name]))
        .into_iter()
        .collect();
    filters.extend(term.tags.as_ref().map(tag_filters).unwrap_or_default());
    available(DescribeImagesInput {
        image_ids: Vec::new(),
        owners,
        filters,
    })
}

/// `input` restricted to images in state `available`, as every upstream
/// image query is.
pub(crate) fn available(mut input: DescribeImagesInput) -> DescribeImagesInput {
    input.filters.push(Filter::new("state", ["available"]));
    input
}
