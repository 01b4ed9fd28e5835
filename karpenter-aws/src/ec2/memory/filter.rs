//! EC2 filters over the resources [`InMemoryEc2`](super::InMemoryEc2)
//! holds: each resource says what values a filter field has for it.

use std::collections::BTreeMap;

use crate::ec2::{
    CapacityReservation, DescribeInput, Ec2Error, Filter, Image, Instance, InstanceStatus,
    LaunchTemplate, Operation, PlacementGroup, SecurityGroup, Subnet, Tag,
};

/// A resource EC2 filters.
pub(super) trait Filtered {
    /// The values of filter field `name` other than tags; empty when the
    /// resource has no such field.
    fn field(&self, name: &str) -> Vec<String>;

    /// Its tags.
    fn tags(&self) -> &[Tag] {
        &[]
    }

    /// Whether it matches every filter.
    fn matches(&self, filters: &[Filter]) -> bool {
        filters.iter().all(|filter| {
            let values = if let Some(key) = filter.name.strip_prefix("tag:") {
                self.tags()
                    .iter()
                    .filter(|t| t.key == key)
                    .map(|t| t.value.clone())
                    .collect()
            } else if filter.name == "tag-key" {
                self.tags().iter().map(|t| t.key.clone()).collect()
            } else {
                self.field(&filter.name)
            };
            values
                .iter()
                .any(|v| filter.values.iter().any(|pattern| glob(pattern, v)))
        })
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters, as EC2's filter values do.
pub(super) fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn one(value: &str) -> Vec<String> {
    vec![value.to_owned()]
}

impl Filtered for Subnet {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "subnet-id" => one(&self.subnet_id),
            "vpc-id" => one(&self.vpc_id),
            "availability-zone" => one(&self.availability_zone),
            "availability-zone-id" => one(&self.availability_zone_id),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for SecurityGroup {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "group-id" => one(&self.group_id),
            "group-name" => one(&self.group_name),
            "vpc-id" => one(&self.vpc_id),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for Image {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "image-id" => one(&self.image_id),
            "name" => one(&self.name),
            "architecture" => one(&self.architecture),
            "owner-id" => one(&self.owner_id),
            "state" => one(&self.state),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for CapacityReservation {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "capacity-reservation-id" => one(&self.capacity_reservation_id),
            "instance-type" => one(&self.instance_type),
            "availability-zone" => one(&self.availability_zone),
            "owner-id" => one(&self.owner_id),
            "state" => one(&self.state),
            "instance-match-criteria" => one(&self.instance_match_criteria),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for PlacementGroup {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "group-id" => one(&self.group_id),
            "group-name" => one(&self.group_name),
            "state" => one(&self.state),
            "strategy" => one(&self.strategy),
            "spread-level" => one(&self.spread_level),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for LaunchTemplate {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "launch-template-name" => one(&self.launch_template_name),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for Instance {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "instance-id" => one(&self.instance_id),
            "instance-type" => one(&self.instance_type),
            "instance-state-name" => one(self.state.as_str()),
            "availability-zone" => one(&self.availability_zone),
            "subnet-id" => one(&self.subnet_id),
            "image-id" => one(&self.image_id),
            "instance.group-id" => self.security_group_ids.clone(),
            _ => Vec::new(),
        }
    }

    fn tags(&self) -> &[Tag] {
        &self.tags
    }
}

impl Filtered for InstanceStatus {
    fn field(&self, name: &str) -> Vec<String> {
        match name {
            "instance-status.status" => one(&self.instance_status),
            "system-status.status" => one(&self.system_status),
            "instance-state-name" => one(self.instance_state.as_str()),
            "availability-zone" => one(&self.availability_zone),
            "event.code" => self.events.iter().map(|e| e.code.clone()).collect(),
            _ => Vec::new(),
        }
    }
}

/// The resources of `map` named in `ids` (all when empty) that match
/// `filters`; a named one that is missing is `not_found`.
pub(super) fn select<T: Filtered + Clone>(
    map: &BTreeMap<String, T>,
    input: &DescribeInput,
    operation: Operation,
    not_found: &str,
) -> Result<Vec<T>, Ec2Error> {
    let named: Vec<&T> = if input.ids.is_empty() {
        map.values().collect()
    } else {
        let mut named = Vec::new();
        for id in &input.ids {
            let item = map.get(id).ok_or_else(|| {
                Ec2Error::service(
                    operation,
                    not_found,
                    format!("The ID '{id}' does not exist"),
                )
            })?;
            named.push(item);
        }
        named
    };
    Ok(named
        .into_iter()
        .filter(|item| item.matches(&input.filters))
        .cloned()
        .collect())
}

/// Whether `value` passes the filter named `name` (or there is none).
pub(super) fn passes(filters: &[Filter], name: &str, value: &str) -> bool {
    filters
        .iter()
        .filter(|f| f.name == name)
        .all(|f| f.values.iter().any(|pattern| glob(pattern, value)))
}
