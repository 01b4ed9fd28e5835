//! Capacity reservations as the status keeps them, against upstream's
//! capacity reservation controller tests.

use jiff::SignedDuration;

use super::now;
use crate::ec2::{self, InMemoryEc2, Tag};
use crate::nodeclass::resolve::resources::{capacity_reservation, capacity_reservations};

fn reservation(kind: &str, minutes_left: i64) -> ec2::CapacityReservation {
    ec2::CapacityReservation {
        capacity_reservation_id: "cr-p5.48xlarge-1a".into(),
        owner_id: "012345678901".into(),
        instance_type: "p5.48xlarge".into(),
        availability_zone: "test-zone-1a".into(),
        state: "active".into(),
        reservation_type: kind.into(),
        instance_match_criteria: "targeted".into(),
        end_date: Some(now() + SignedDuration::from_mins(minutes_left)),
        tags: vec![Tag::new("discovery", "a")],
        ..ec2::CapacityReservation::default()
    }
}

fn state(kind: &str, minutes_left: i64) -> Option<String> {
    capacity_reservation(reservation(kind, minutes_left), now()).and_then(|r| r.state)
}

#[test]
fn capacity_blocks_expire_40_minutes_before_their_end() {
    assert_eq!(state("capacity-block", 40).as_deref(), Some("expiring"));
    assert_eq!(state("capacity-block", 41).as_deref(), Some("active"));
    // Upstream's vector: a default reservation ending in 40 minutes stays
    // active.
    assert_eq!(state("default", 40).as_deref(), Some("active"));
}

#[test]
fn the_status_keeps_the_reservations_fields() {
    let kept = capacity_reservation(reservation("", 60), now());
    let kept = kept.unwrap_or_else(|| panic!("a default reservation is kept"));
    assert_eq!(kept.id, "cr-p5.48xlarge-1a");
    assert_eq!(kept.instance_type, "p5.48xlarge");
    assert_eq!(kept.availability_zone, "test-zone-1a");
    assert_eq!(kept.owner_id, "012345678901");
    assert_eq!(kept.instance_match_criteria, "targeted");
    assert_eq!(kept.reservation_type.as_deref(), Some("default"));
    assert_eq!(kept.interruptible, Some(false));
    assert_eq!(
        kept.end_time.map(|t| t.0),
        Some(now() + SignedDuration::from_hours(1))
    );
    let unknown_type = capacity_reservation(reservation("future-type", 60), now());
    assert_eq!(unknown_type, None);
}

#[tokio::test]
async fn only_active_reservations_are_selected() {
    let ec2 = InMemoryEc2::new("us-west-2");
    for (id, state) in [("cr-1", "active"), ("cr-2", "expired"), ("cr-3", "pending")] {
        let mut reservation = reservation("", 60);
        reservation.capacity_reservation_id = id.into();
        reservation.state = state.into();
        ec2.add_capacity_reservation(reservation);
    }
    let terms: Vec<_> = serde_json::from_value(serde_json::json!([
        {"tags": {"discovery": "a"}},
        {"id": "cr-2"},
    ]))
    .unwrap_or_default();
    let found = capacity_reservations(&ec2, &terms, now()).await;
    let ids: Vec<String> = found
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["cr-1"]);
}
