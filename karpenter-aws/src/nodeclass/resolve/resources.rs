//! Subnets, security groups and capacity reservations: the describe calls
//! of their terms, merged by ID, in upstream's status order.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::filters::{capacity_reservation_inputs, security_group_filter_sets, subnet_filter_sets};
use crate::ec2::{self, DescribeInput, Ec2Api, Ec2Error};
use crate::nodeclass::{
    CapacityReservation, CapacityReservationSelectorTerm, SecurityGroup, SecurityGroupSelectorTerm,
    Subnet, SubnetSelectorTerm,
};

/// How long before its end a capacity block is `expiring`.
const CAPACITY_BLOCK_EXPIRY: SignedDuration = SignedDuration::from_mins(40);

fn by_filters(filters: Vec<ec2::Filter>) -> DescribeInput {
    DescribeInput {
        ids: Vec::new(),
        filters,
    }
}

/// The subnets `terms` select, most free addresses first, then by ID.
pub(crate) async fn subnets(
    api: &impl Ec2Api,
    terms: &[SubnetSelectorTerm],
) -> Result<Vec<Subnet>, Ec2Error> {
    let mut found = BTreeMap::new();
    for filters in subnet_filter_sets(terms) {
        for subnet in api.describe_subnets(by_filters(filters)).await?.subnets {
            found.insert(subnet.subnet_id.clone(), subnet);
        }
    }
    let mut found: Vec<ec2::Subnet> = found.into_values().collect();
    found.sort_by(|a, b| {
        b.available_ip_address_count
            .cmp(&a.available_ip_address_count)
            .then_with(|| a.subnet_id.cmp(&b.subnet_id))
    });
    Ok(found
        .into_iter()
        .map(|subnet| Subnet {
            id: subnet.subnet_id,
            zone: subnet.availability_zone,
            zone_id: Some(subnet.availability_zone_id).filter(|id| !id.is_empty()),
            ..Subnet::default()
        })
        .collect())
}

/// The security groups `terms` select, by ID.
pub(crate) async fn security_groups(
    api: &impl Ec2Api,
    terms: &[SecurityGroupSelectorTerm],
) -> Result<Vec<SecurityGroup>, Ec2Error> {
    let mut found = BTreeMap::new();
    for filters in security_group_filter_sets(terms) {
        let input = by_filters(filters);
        for group in api.describe_security_groups(input).await?.security_groups {
            found.insert(group.group_id.clone(), group);
        }
    }
    Ok(found
        .into_values()
        .map(|group| SecurityGroup {
            id: group.group_id,
            name: Some(group.group_name).filter(|name| !name.is_empty()),
            ..SecurityGroup::default()
        })
        .collect())
}

/// The active capacity reservations `terms` select, by ID. An ID EC2 does
/// not know selects nothing; a reservation of a match criteria or type
/// upstream does not know is left out, as upstream leaves it.
pub(crate) async fn capacity_reservations(
    api: &impl Ec2Api,
    terms: &[CapacityReservationSelectorTerm],
    now: Timestamp,
) -> Result<Vec<CapacityReservation>, Ec2Error> {
    let mut found = BTreeMap::new();
    for input in capacity_reservation_inputs(terms) {
        let answer = match api.describe_capacity_reservations(input).await {
            Ok(answer) => answer.capacity_reservations,
            Err(error) if error.is_not_found() => Vec::new(),
            Err(error) => return Err(error),
        };
        for reservation in answer {
            found.insert(reservation.capacity_reservation_id.clone(), reservation);
        }
    }
    Ok(found
        .into_values()
        .filter_map(|reservation| capacity_reservation(reservation, now))
        .collect())
}

/// A reservation as the status keeps it; `None` for a match criteria or
/// type upstream does not know.
pub(crate) fn capacity_reservation(
    reservation: ec2::CapacityReservation,
    now: Timestamp,
) -> Option<CapacityReservation> {
    if !matches!(
        reservation.instance_match_criteria.as_str(),
        "open" | "targeted"
    ) {
        return None;
    }
    let reservation_type = match reservation.reservation_type.as_str() {
        "" | "default" => "default",
        "capacity-block" => "capacity-block",
        _ => return None,
    };
    let expiring = reservation_type == "capacity-block"
        && reservation
            .end_date
            .is_some_and(|end| now >= end - CAPACITY_BLOCK_EXPIRY);
    Some(CapacityReservation {
        availability_zone: reservation.availability_zone,
        end_time: reservation.end_date.map(Time),
        id: reservation.capacity_reservation_id,
        instance_match_criteria: reservation.instance_match_criteria,
        instance_type: reservation.instance_type,
        owner_id: reservation.owner_id,
        reservation_type: Some(reservation_type.to_owned()),
        interruptible: Some(reservation.interruptible),
        state: Some(if expiring { "expiring" } else { "active" }.to_owned()),
        ..CapacityReservation::default()
    })
}
