//! What a message does to the cluster's NodeClaims.

use std::collections::BTreeMap;

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::OfferingKey;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE,
    NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY,
};

use super::{claim, deleting};
use crate::interruption::{
    Disposition, Event, EventReason, InstanceDetail, Kind, Message, Metadata, StateChangeDetail,
    actions, claim_actions, instance_id_of,
};
use crate::labels::CAPACITY_RESERVATION_ID;

fn notice(instance_id: &str) -> Event<InstanceDetail> {
    Event {
        metadata: Metadata::default(),
        detail: InstanceDetail {
            instance_id: instance_id.to_owned(),
            instance_action: Some("terminate".to_owned()),
        },
    }
}

/// The cluster: a spot claim on i-0spot, an on-demand claim on i-0od, a
/// reserved claim on i-0cr, and one not yet launched.
fn cluster() -> Vec<NodeClaim> {
    vec![
        claim(
            "spot-a",
            Some("aws:///us-west-2a/i-0spot"),
            &[
                (LABEL_INSTANCE_TYPE_STABLE, "m5.large"),
                (LABEL_TOPOLOGY_ZONE, "us-west-2a"),
                (CAPACITY_TYPE_LABEL_KEY, "spot"),
            ],
        ),
        claim(
            "od-b",
            Some("aws:///us-west-2b/i-0od"),
            &[
                (LABEL_INSTANCE_TYPE_STABLE, "c6g.xlarge"),
                (LABEL_TOPOLOGY_ZONE, "us-west-2b"),
            ],
        ),
        claim(
            "cr-c",
            Some("aws:///us-west-2c/i-0cr"),
            &[
                (LABEL_INSTANCE_TYPE_STABLE, "p5.48xlarge"),
                (LABEL_TOPOLOGY_ZONE, "us-west-2c"),
                (CAPACITY_TYPE_LABEL_KEY, "reserved"),
                (CAPACITY_RESERVATION_ID, "cr-0123456789abcdef0"),
            ],
        ),
        claim("pending", None, &[]),
    ]
}

#[test]
fn instance_ids_come_from_aws_provider_ids() {
    assert_eq!(instance_id_of("aws:///us-west-2a/i-0abc"), Some("i-0abc"));
    assert_eq!(instance_id_of("aws:///local-zone-1/i-9"), Some("i-9"));
    for bad in [
        "",
        "i-0abc",
        "aws:///i-0abc",
        "aws:///us-west-2a/",
        "aws://us-west-2a/i-0",
    ] {
        assert_eq!(instance_id_of(bad), None, "{bad}");
    }
}

#[test]
fn spot_interruption_deletes_the_claim_and_marks_its_spot_offering() {
    let claims = cluster();
    let found = actions(&Message::SpotInterruption(notice("i-0spot")), &claims);
    assert_eq!(found.len(), 1);
    let action = &found[0];
    assert_eq!(action.claim, "spot-a");
    assert_eq!(action.kind, Kind::SpotInterrupted);
    assert_eq!(action.disposition, Disposition::CordonAndDrain);
    assert!(action.delete);
    assert!(!action.set_termination_timestamp);
    assert_eq!(
        action.mark_unavailable,
        Some(OfferingKey::new("m5.large", "us-west-2a", "spot"))
    );
    assert_eq!(action.exhaust_reservation, None);
    assert_eq!(
        action.events,
        [
            EventReason::SpotInterrupted,
            EventReason::TerminatingOnInterruption
        ]
    );
}

#[test]
fn spot_interruption_of_a_claim_without_zone_marks_nothing() {
    let claims = vec![claim(
        "bare",
        Some("aws:///us-west-2a/i-0bare"),
        &[(LABEL_INSTANCE_TYPE_STABLE, "m5.large")],
    )];
    let found = actions(&Message::SpotInterruption(notice("i-0bare")), &claims);
    assert_eq!(found.len(), 1);
    assert!(found[0].delete);
    assert_eq!(found[0].mark_unavailable, None);
}

#[test]
fn reservation_interruption_exhausts_the_claims_reservation() {
    let claims = cluster();
    let found = actions(
        &Message::CapacityReservationInterruption(notice("i-0cr")),
        &claims,
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].claim, "cr-c");
    assert!(found[0].delete);
    assert_eq!(
        found[0].exhaust_reservation.as_deref(),
        Some("cr-0123456789abcdef0")
    );
    assert_eq!(found[0].mark_unavailable, None);
    let without = actions(
        &Message::CapacityReservationInterruption(notice("i-0od")),
        &claims,
    );
    assert_eq!(without[0].exhaust_reservation, None);
}

#[test]
fn rebalance_recommendation_only_announces() {
    let claims = cluster();
    let found = actions(
        &Message::RebalanceRecommendation(notice("i-0spot")),
        &claims,
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].disposition, Disposition::Keep);
    assert!(!found[0].delete);
    assert_eq!(found[0].mark_unavailable, None);
    assert_eq!(found[0].events, [EventReason::SpotRebalanceRecommendation]);
    assert!(!EventReason::SpotRebalanceRecommendation.is_warning());
}

#[test]
fn state_changes_delete_with_their_own_event() {
    let claims = cluster();
    let change = |state: &str| Event {
        metadata: Metadata::default(),
        detail: StateChangeDetail {
            instance_id: "i-0od".to_owned(),
            state: state.to_owned(),
        },
    };
    for (message, reason) in [
        (
            Message::InstanceStopped(change("stopped")),
            EventReason::InstanceStopping,
        ),
        (
            Message::InstanceTerminated(change("terminated")),
            EventReason::InstanceTerminating,
        ),
    ] {
        let found = actions(&message, &claims);
        assert_eq!(found.len(), 1, "{message:?}");
        assert_eq!(found[0].claim, "od-b");
        assert!(found[0].delete);
        assert_eq!(found[0].mark_unavailable, None);
        assert_eq!(found[0].events[0], reason);
    }
}

#[test]
fn claims_already_deleting_are_announced_but_not_deleted_again() {
    let claims: Vec<NodeClaim> = cluster().into_iter().map(deleting).collect();
    let found = actions(&Message::SpotInterruption(notice("i-0spot")), &claims);
    assert_eq!(found.len(), 1);
    assert!(!found[0].delete);
    assert_eq!(found[0].events, [EventReason::SpotInterrupted]);
    assert!(found[0].mark_unavailable.is_some());
}

#[test]
fn instances_without_claims_and_no_ops_do_nothing() {
    let claims = cluster();
    assert!(actions(&Message::SpotInterruption(notice("i-0gone")), &claims).is_empty());
    assert!(actions(&Message::Unknown(Metadata::default()), &claims).is_empty());
    assert!(claim_actions(Kind::NoOp, &["i-0spot"], &claims).is_empty());
}

#[test]
fn every_named_instance_is_acted_on_in_the_messages_order() {
    let claims = cluster();
    let found = claim_actions(
        Kind::ScheduledChange,
        &["i-0cr", "i-0gone", "i-0spot"],
        &claims,
    );
    let names: Vec<&str> = found.iter().map(|action| action.claim.as_str()).collect();
    assert_eq!(names, ["cr-c", "spot-a"]);
    assert!(found.iter().all(|action| action.delete));
    assert!(
        found
            .iter()
            .all(|action| action.events[0] == EventReason::InstanceUnhealthy)
    );
    // Only their own kinds mark offerings or reservations.
    assert!(found.iter().all(|action| action.mark_unavailable.is_none()));
    assert!(
        found
            .iter()
            .all(|action| action.exhaust_reservation.is_none())
    );
}

#[test]
fn failing_status_checks_terminate_forcefully_once() {
    let mut claims = cluster();
    let found = claim_actions(Kind::SystemStatus, &["i-0od"], &claims);
    assert_eq!(found[0].disposition, Disposition::ForcefulTermination);
    assert!(found[0].set_termination_timestamp);
    assert!(found[0].delete);

    claims[1].metadata.annotations = Some(BTreeMap::from([(
        NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY.to_owned(),
        "2026-11-29T07:00:00Z".to_owned(),
    )]));
    let again = claim_actions(Kind::InstanceStatus, &["i-0od"], &claims);
    assert!(!again[0].set_termination_timestamp);
    assert!(again[0].delete);
}
