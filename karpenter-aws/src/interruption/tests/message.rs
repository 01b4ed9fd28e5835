//! Reading the interruption queue's EventBridge messages.

use serde_json::{Value, json};

use crate::interruption::{Kind, Message, ParseError, parse};

/// An EventBridge envelope of `source` / `detail_type` around `detail`, in
/// the shape EC2 and AWS Health send.
fn envelope(source: &str, detail_type: &str, detail: Value) -> String {
    json!({
        "version": "0",
        "id": "5d5d2a5e-5c14-4a7a-8b7e-12c0e8f1a111",
        "detail-type": detail_type,
        "source": source,
        "account": "123456789012",
        "time": "2026-11-29T06:58:12Z",
        "region": "us-west-2",
        "resources": ["arn:aws:ec2:us-west-2a:instance/i-0abc1234def567890"],
        "detail": detail,
    })
    .to_string()
}

fn spot(instance_id: &str) -> String {
    envelope(
        "aws.ec2",
        "EC2 Spot Instance Interruption Warning",
        json!({"instance-id": instance_id, "instance-action": "terminate"}),
    )
}

fn state_change(state: &str) -> String {
    envelope(
        "aws.ec2",
        "EC2 Instance State-change Notification",
        json!({"instance-id": "i-0abc1234def567890", "state": state}),
    )
}

fn health(service: &str, category: &str, entities: &[&str]) -> String {
    let entities: Vec<Value> = entities
        .iter()
        .map(|id| json!({"entityValue": id}))
        .collect();
    envelope(
        "aws.health",
        "AWS Health Event",
        json!({
            "eventArn": "arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/abc",
            "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
            "service": service,
            "eventTypeCategory": category,
            "startTime": "Sat, 05 Dec 2026 08:00:00 GMT",
            "endTime": "Sat, 05 Dec 2026 09:00:00 GMT",
            "eventDescription": [{"latestDescription": "An instance is scheduled for retirement", "language": "en_US"}],
            "affectedEntities": entities,
        }),
    )
}

fn parsed(body: &str) -> Message {
    match parse(body) {
        Ok(message) => message,
        Err(error) => panic!("{body} should parse: {error}"),
    }
}

#[test]
fn spot_interruption_reads_its_instance_action_and_envelope() {
    let message = parsed(&spot("i-0abc1234def567890"));
    let Message::SpotInterruption(event) = &message else {
        panic!("expected a spot interruption, got {message:?}");
    };
    assert_eq!(event.detail.instance_action.as_deref(), Some("terminate"));
    assert_eq!(event.metadata.region, "us-west-2");
    assert_eq!(event.metadata.account, "123456789012");
    assert_eq!(event.metadata.resources.len(), 1);
    assert_eq!(
        event.metadata.time,
        Some("2026-11-29T06:58:12Z".parse().expect("a valid timestamp"))
    );
    assert_eq!(message.kind(), Kind::SpotInterrupted);
    assert_eq!(message.kind().as_str(), "spot_interrupted");
    assert_eq!(message.instance_ids(), ["i-0abc1234def567890"]);
}

#[test]
fn rebalance_and_reservation_warnings_name_their_instance() {
    let rebalance = parsed(&envelope(
        "aws.ec2",
        "EC2 Instance Rebalance Recommendation",
        json!({"instance-id": "i-0aaa"}),
    ));
    assert_eq!(rebalance.kind(), Kind::RebalanceRecommendation);
    assert_eq!(rebalance.instance_ids(), ["i-0aaa"]);

    let reservation = parsed(&envelope(
        "aws.ec2",
        "EC2 Capacity Reservation Instance Interruption Warning",
        json!({"instance-id": "i-0bbb", "instance-action": "terminate"}),
    ));
    assert_eq!(reservation.kind(), Kind::CapacityReservationInterrupted);
    assert_eq!(reservation.instance_ids(), ["i-0bbb"]);
}

#[test]
fn ec2_scheduled_change_names_every_affected_instance() {
    let message = parsed(&health("EC2", "scheduledChange", &["i-0aaa", "i-0bbb"]));
    let Message::ScheduledChange(event) = &message else {
        panic!("expected a scheduled change, got {message:?}");
    };
    assert_eq!(
        event.detail.event_type_code,
        "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"
    );
    assert_eq!(event.detail.descriptions[0].language, "en_US");
    assert_eq!(message.kind(), Kind::ScheduledChange);
    assert_eq!(message.instance_ids(), ["i-0aaa", "i-0bbb"]);
}

#[test]
fn health_events_of_other_services_or_categories_are_ignored() {
    for (service, category) in [("RDS", "scheduledChange"), ("EC2", "issue"), ("EC2", "")] {
        let message = parsed(&health(service, category, &["i-0aaa"]));
        assert!(
            matches!(message, Message::Ignored(_)),
            "{service}/{category}: {message:?}"
        );
        assert_eq!(message.kind(), Kind::NoOp);
        assert!(message.instance_ids().is_empty());
    }
}

#[test]
fn scheduled_change_without_entities_names_no_instance() {
    let message = parsed(&health("EC2", "scheduledChange", &[]));
    assert_eq!(message.kind(), Kind::ScheduledChange);
    assert!(message.instance_ids().is_empty());
    let blank = parsed(&health("EC2", "scheduledChange", &["", "i-0ccc"]));
    assert_eq!(blank.instance_ids(), ["i-0ccc"]);
}

#[test]
fn state_changes_map_to_stopped_terminated_or_nothing() {
    for (state, kind) in [
        ("stopping", Kind::InstanceStopped),
        ("stopped", Kind::InstanceStopped),
        ("STOPPED", Kind::InstanceStopped),
        ("shutting-down", Kind::InstanceTerminated),
        ("terminated", Kind::InstanceTerminated),
        ("pending", Kind::NoOp),
        ("running", Kind::NoOp),
    ] {
        let message = parsed(&state_change(state));
        assert_eq!(message.kind(), kind, "state {state}");
        assert_eq!(
            message.instance_ids().len(),
            usize::from(kind != Kind::NoOp),
            "state {state}"
        );
    }
}

#[test]
fn unknown_kinds_and_empty_bodies_are_no_ops() {
    let unknown = parsed(&envelope(
        "aws.autoscaling",
        "EC2 Instance Launch Successful",
        json!({"EC2InstanceId": "i-0aaa"}),
    ));
    let Message::Unknown(metadata) = &unknown else {
        panic!("expected an unknown message, got {unknown:?}");
    };
    assert_eq!(metadata.source, "aws.autoscaling");
    assert!(unknown.instance_ids().is_empty());

    let other_version = spot("i-0aaa").replace(r#""version":"0""#, r#""version":"1""#);
    assert!(matches!(parsed(&other_version), Message::Unknown(_)));
    assert!(matches!(parsed(""), Message::Unknown(_)));
    assert!(matches!(parsed("{}"), Message::Unknown(_)));
}

#[test]
fn bodies_that_are_not_json_envelopes_are_errors() {
    for body in [
        "not json",
        "{\"version\": \"0\"",
        "[1, 2]",
        "\"text\"",
        "   ",
    ] {
        let error = parse(body).expect_err(body);
        assert!(
            matches!(error, ParseError::Envelope(_)),
            "{body}: {error:?}"
        );
        assert!(std::error::Error::source(&error).is_some());
    }
    let bad_time = spot("i-0aaa").replace("2026-11-29T06:58:12Z", "yesterday");
    assert!(matches!(parse(&bad_time), Err(ParseError::Envelope(_))));
    let bad_resources = envelope(
        "aws.ec2",
        "EC2 Instance Rebalance Recommendation",
        json!({}),
    )
    .replace(
        r#"["arn:aws:ec2:us-west-2a:instance/i-0abc1234def567890"]"#,
        "7",
    );
    assert!(matches!(
        parse(&bad_resources),
        Err(ParseError::Envelope(_))
    ));
}

#[test]
fn known_kinds_without_detail_are_errors() {
    for detail in [None, Some(Value::Null)] {
        let mut body: Value = serde_json::from_str(&spot("i-0aaa")).expect("valid JSON");
        match detail {
            Some(value) => body["detail"] = value,
            None => {
                body.as_object_mut().map(|object| object.remove("detail"));
            }
        }
        let error = parse(&body.to_string()).expect_err("no detail");
        let ParseError::MissingDetail { detail_type } = &error else {
            panic!("expected a missing detail, got {error:?}");
        };
        assert_eq!(detail_type, "EC2 Spot Instance Interruption Warning");
    }
}

#[test]
fn details_with_missing_or_mistyped_fields_are_errors_naming_the_field() {
    let cases = [
        (
            envelope(
                "aws.ec2",
                "EC2 Spot Instance Interruption Warning",
                json!({"instance-action": "terminate"}),
            ),
            "instance-id",
        ),
        (spot("i-0aaa").replace(r#""i-0aaa""#, "42"), "integer"),
        (
            envelope(
                "aws.ec2",
                "EC2 Instance State-change Notification",
                json!({"instance-id": "i-0aaa"}),
            ),
            "state",
        ),
        (
            envelope(
                "aws.health",
                "AWS Health Event",
                json!({"affectedEntities": "i-0aaa"}),
            ),
            "sequence",
        ),
        (
            envelope(
                "aws.ec2",
                "EC2 Instance Rebalance Recommendation",
                json!("i-0aaa"),
            ),
            "struct",
        ),
    ];
    for (body, field) in cases {
        let error = parse(&body).expect_err(&body);
        let ParseError::Detail { source, .. } = &error else {
            panic!("{body}: expected a detail error, got {error:?}");
        };
        assert!(source.to_string().contains(field), "{body}: {source}");
    }
}

#[test]
fn no_body_panics_however_cut_or_nested() {
    let bodies = [
        spot("i-0aaa"),
        state_change("stopped"),
        health("EC2", "scheduledChange", &["i-0aaa", "i-0bbb"]),
    ];
    for body in &bodies {
        for cut in (0..=body.len()).filter(|&cut| body.is_char_boundary(cut)) {
            // Every prefix reads as a message or an error, never a panic; a
            // prefix short of the whole body is never a complete object.
            let result = parse(&body[..cut]);
            assert_eq!(
                result.is_ok(),
                cut == body.len() || cut == 0,
                "{}",
                &body[..cut]
            );
        }
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(matches!(parse(&deep), Err(ParseError::Envelope(_))));
    let deep_detail = format!(
        r#"{{"version":"0","source":"aws.ec2","detail-type":"EC2 Instance Rebalance Recommendation","detail":{}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(parse(&deep_detail).is_err());
}
