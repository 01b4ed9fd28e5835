//! The instance-status poll over the in-memory EC2, and how its answers
//! read.

use jiff::{SignedDuration, Timestamp};

use super::live::{claim_of, ec2, launch, start};
use crate::ec2::{
    DescribeInstanceStatusOutput, Ec2Error, InstanceStatus, InstanceStatusEvent, Operation,
    TargetCapacityType,
};
use crate::interruption::{
    Disposition, InstanceHealth, Kind, UNHEALTHY_THRESHOLD, instance_health, poll_instance_status,
    status_filters,
};

fn at(seconds: i64) -> Timestamp {
    start() + SignedDuration::from_secs(seconds)
}

#[tokio::test]
async fn a_failed_check_counts_from_two_minutes_on_the_ec2_clock() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::OnDemand).await;
    let healthy = launch(&ec2, TargetCapacityType::OnDemand).await;
    let claims = [claim_of("healthy", &healthy), claim_of("broken", &id)];
    ec2.advance(SignedDuration::from_secs(30));
    ec2.impair(&id, false);

    let young = UNHEALTHY_THRESHOLD - SignedDuration::from_secs(1);
    ec2.advance(young);
    let early = poll_instance_status(&ec2, &claims, at(30) + young)
        .await
        .expect("a poll");
    assert!(early.unhealthy.is_empty() && early.actions.is_empty());

    ec2.advance(SignedDuration::from_secs(1));
    let poll = poll_instance_status(&ec2, &claims, at(30) + UNHEALTHY_THRESHOLD)
        .await
        .expect("a poll");
    assert_eq!(poll.unhealthy.len(), 1);
    assert_eq!(poll.unhealthy[0].instance_id, id);
    assert_eq!(poll.unhealthy[0].impaired_since, at(30));
    assert_eq!(poll.actions.len(), 1);
    let action = &poll.actions[0];
    assert_eq!(action.claim, "broken");
    assert_eq!(action.kind, Kind::InstanceStatus);
    assert_eq!(action.disposition, Disposition::ForcefulTermination);
    assert!(action.set_termination_timestamp && action.delete);
}

#[tokio::test]
async fn a_failed_system_check_is_its_own_kind() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::OnDemand).await;
    ec2.impair(&id, true);
    let poll = poll_instance_status(&ec2, &[claim_of("c", &id)], at(600))
        .await
        .expect("a poll");
    assert_eq!(poll.unhealthy[0].categories, [Kind::SystemStatus]);
    assert_eq!(poll.actions[0].kind, Kind::SystemStatus);
}

#[tokio::test]
async fn a_scheduled_event_counts_at_once_and_drains() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::OnDemand).await;
    ec2.schedule_event(&id, "system-maintenance");
    let poll = poll_instance_status(&ec2, &[claim_of("c", &id)], start())
        .await
        .expect("a poll");
    let action = &poll.actions[0];
    assert_eq!(action.kind, Kind::EventStatus);
    assert_eq!(action.disposition, Disposition::CordonAndDrain);
    assert!(action.delete && !action.set_termination_timestamp);
}

#[tokio::test]
async fn an_instance_two_calls_show_counts_once() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::OnDemand).await;
    ec2.impair(&id, false);
    ec2.impair(&id, true);
    ec2.schedule_event(&id, "instance-retirement");
    let poll = poll_instance_status(&ec2, &[claim_of("c", &id)], at(300))
        .await
        .expect("a poll");
    assert_eq!(poll.unhealthy.len(), 1);
    assert_eq!(
        poll.unhealthy[0].categories,
        [Kind::InstanceStatus, Kind::SystemStatus, Kind::EventStatus]
    );
    assert_eq!(poll.actions.len(), 1, "one action: the forceful one");
    assert_eq!(poll.actions[0].kind, Kind::InstanceStatus);
}

#[tokio::test]
async fn an_unhealthy_instance_without_a_claim_does_nothing() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::OnDemand).await;
    let other = launch(&ec2, TargetCapacityType::OnDemand).await;
    ec2.schedule_event(&id, "instance-stop");
    let poll = poll_instance_status(&ec2, &[claim_of("other", &other)], start())
        .await
        .expect("a poll");
    assert_eq!(poll.unhealthy.len(), 1);
    assert!(poll.actions.is_empty());
}

#[tokio::test]
async fn a_failed_call_fails_the_poll() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::OnDemand).await;
    ec2.schedule_event(&id, "instance-stop");
    ec2.fail_next(
        Operation::DescribeInstanceStatus,
        Ec2Error::service(
            Operation::DescribeInstanceStatus,
            "UnauthorizedOperation",
            "no",
        ),
    );
    let error = poll_instance_status(&ec2, &[claim_of("c", &id)], start())
        .await
        .expect_err("the first call fails");
    assert_eq!(error.code(), Some("UnauthorizedOperation"));
}

#[test]
fn the_filters_are_upstreams_one_call_each() {
    let calls = status_filters();
    let names: Vec<&str> = calls.iter().map(|f| f[0].name.as_str()).collect();
    assert_eq!(
        names,
        [
            "instance-status.status",
            "system-status.status",
            "event.code"
        ]
    );
    assert!(calls.iter().all(|filters| filters.len() == 1));
    assert_eq!(calls[0][0].values, ["impaired"]);
    assert_eq!(calls[1][0].values, ["impaired"]);
    assert_eq!(
        calls[2][0].values,
        [
            "instance-reboot",
            "system-reboot",
            "system-maintenance",
            "instance-retirement",
            "instance-stop"
        ]
    );
}

#[test]
fn statuses_read_as_health() {
    let since = at(-60);
    let output = DescribeInstanceStatusOutput {
        instance_statuses: vec![
            InstanceStatus {
                instance_id: "i-system".into(),
                instance_status: "ok".into(),
                system_status: "impaired".into(),
                impaired_since: Some(since),
                ..InstanceStatus::default()
            },
            InstanceStatus {
                instance_id: "i-untimed".into(),
                instance_status: "impaired".into(),
                system_status: "initializing".into(),
                events: vec![InstanceStatusEvent {
                    code: "instance-reboot".into(),
                    ..InstanceStatusEvent::default()
                }],
                ..InstanceStatus::default()
            },
        ],
    };
    assert_eq!(
        instance_health(&output),
        [
            InstanceHealth {
                instance_id: "i-system".into(),
                system_status_failed_since: Some(since),
                ..InstanceHealth::default()
            },
            InstanceHealth {
                instance_id: "i-untimed".into(),
                instance_status_failed_since: Some(Timestamp::UNIX_EPOCH),
                scheduled_events: vec!["instance-reboot".into()],
                ..InstanceHealth::default()
            },
        ]
    );
}
