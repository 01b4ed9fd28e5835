//! The instance-status poll's decision.

use jiff::{SignedDuration, Timestamp};

use super::claim;
use crate::interruption::{
    Disposition, InstanceHealth, Kind, UNHEALTHY_THRESHOLD, status_actions, unhealthy,
};

fn now() -> Timestamp {
    "2026-11-29T07:00:00Z".parse().expect("a valid timestamp")
}

fn ago(seconds: i64) -> Option<Timestamp> {
    Some(now() - SignedDuration::from_secs(seconds))
}

fn health(instance_id: &str) -> InstanceHealth {
    InstanceHealth {
        instance_id: instance_id.to_owned(),
        ..InstanceHealth::default()
    }
}

#[test]
fn failed_checks_count_from_two_minutes() {
    assert_eq!(UNHEALTHY_THRESHOLD, SignedDuration::from_secs(120));
    let statuses = [
        InstanceHealth {
            instance_status_failed_since: ago(119),
            ..health("i-young")
        },
        InstanceHealth {
            instance_status_failed_since: ago(120),
            ..health("i-instance")
        },
        InstanceHealth {
            system_status_failed_since: ago(600),
            ..health("i-system")
        },
        InstanceHealth {
            system_status_failed_since: ago(-300),
            ..health("i-future")
        },
        health("i-fine"),
    ];
    let found = unhealthy(&statuses, now());
    let ids: Vec<&str> = found.iter().map(|u| u.instance_id.as_str()).collect();
    assert_eq!(ids, ["i-instance", "i-system"]);
    assert_eq!(found[0].kind(), Kind::InstanceStatus);
    assert_eq!(found[0].impaired_since, ago(120).expect("a time"));
    assert_eq!(found[1].kind(), Kind::SystemStatus);
    assert!(
        found
            .iter()
            .all(|u| u.disposition() == Disposition::ForcefulTermination)
    );
}

#[test]
fn scheduled_events_count_at_once_and_delete() {
    let statuses = [
        InstanceHealth {
            scheduled_events: vec!["system-maintenance".to_owned()],
            ..health("i-maint")
        },
        InstanceHealth {
            scheduled_events: vec!["instance-retirement".to_owned()],
            instance_status_failed_since: ago(30),
            ..health("i-retire")
        },
        InstanceHealth {
            scheduled_events: vec!["unheard-of".to_owned()],
            ..health("i-other")
        },
    ];
    let found = unhealthy(&statuses, now());
    assert_eq!(found.len(), 2);
    for instance in &found {
        assert_eq!(instance.categories, [Kind::EventStatus]);
        assert_eq!(instance.impaired_since, now());
        assert_eq!(instance.disposition(), Disposition::CordonAndDrain);
    }
}

#[test]
fn a_failed_check_wins_over_a_scheduled_event() {
    let statuses = [InstanceHealth {
        scheduled_events: vec!["instance-stop".to_owned()],
        system_status_failed_since: ago(900),
        instance_status_failed_since: ago(300),
        ..health("i-both")
    }];
    let found = unhealthy(&statuses, now());
    assert_eq!(
        found[0].categories,
        [Kind::InstanceStatus, Kind::SystemStatus, Kind::EventStatus]
    );
    assert_eq!(found[0].impaired_since, ago(900).expect("a time"));
    assert_eq!(found[0].disposition(), Disposition::ForcefulTermination);
}

#[test]
fn a_repeated_instance_counts_once() {
    let statuses = [
        InstanceHealth {
            system_status_failed_since: ago(300),
            ..health("i-dup")
        },
        InstanceHealth {
            scheduled_events: vec!["system-reboot".to_owned()],
            ..health("i-dup")
        },
    ];
    let found = unhealthy(&statuses, now());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind(), Kind::SystemStatus);
}

#[test]
fn status_actions_reach_only_the_instances_claims() {
    let claims = [
        claim("broken", Some("aws:///us-east-1a/i-broken"), &[]),
        claim("maint", Some("aws:///us-east-1b/i-maint"), &[]),
        claim("fine", Some("aws:///us-east-1c/i-fine"), &[]),
    ];
    let statuses = [
        InstanceHealth {
            instance_status_failed_since: ago(200),
            ..health("i-broken")
        },
        InstanceHealth {
            scheduled_events: vec!["instance-reboot".to_owned()],
            ..health("i-maint")
        },
        InstanceHealth {
            instance_status_failed_since: ago(200),
            ..health("i-no-claim")
        },
    ];
    let found = status_actions(&unhealthy(&statuses, now()), &claims);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].claim, "broken");
    assert!(found[0].set_termination_timestamp);
    assert_eq!(found[1].claim, "maint");
    assert_eq!(found[1].kind, Kind::EventStatus);
    assert!(!found[1].set_termination_timestamp);
    assert!(found.iter().all(|action| action.delete));
}
