//! The whole status over `InMemoryEc2`: subnets, security groups,
//! capacity reservations, the instance profile and the conditions.

use jiff::SignedDuration;
use karpenter_core::api::{ConditionStatus, Conditions};
use serde_json::json;

use super::{class, context, now};
use crate::ec2::{self, Ec2Error, Image, InMemoryEc2, Operation, SecurityGroup, Tag};
use crate::nodeclass::resolve::{ResolveError, resolve_status};
use crate::nodeclass::{EC2NodeClassStatus, Subnet};

fn subnet(id: &str, zone: &str, zone_id: &str, free: u32) -> ec2::Subnet {
    ec2::Subnet {
        subnet_id: id.into(),
        availability_zone: zone.into(),
        availability_zone_id: zone_id.into(),
        available_ip_address_count: free,
        tags: vec![Tag::new("Name", id)],
        ..ec2::Subnet::default()
    }
}

/// Upstream's ordering vector (20, 100 and 50 free addresses), a group and
/// an image.
fn ec2() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new("us-west-2");
    ec2.add_subnet(subnet("subnet-test1", "test-zone-1a", "tstz1-1a", 20));
    ec2.add_subnet(subnet("subnet-test2", "test-zone-1b", "tstz1-1b", 100));
    ec2.add_subnet(subnet("subnet-test3", "test-zone-1c", "tstz1-1c", 50));
    for id in ["sg-test2", "sg-test1"] {
        ec2.add_security_group(SecurityGroup {
            group_id: id.into(),
            group_name: format!("securityGroup-{id}"),
            tags: vec![Tag::new("Name", id)],
            ..SecurityGroup::default()
        });
    }
    ec2.add_image(Image {
        image_id: "ami-1".into(),
        architecture: "x86_64".into(),
        state: "available".into(),
        tags: vec![Tag::new("Name", "ami-1")],
        ..Image::default()
    });
    ec2
}

async fn resolve(ec2: &InMemoryEc2, spec: serde_json::Value) -> EC2NodeClassStatus {
    resolve_status(ec2, &class(spec), &context())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn reason(status: &EC2NodeClassStatus, type_: &str) -> Option<(ConditionStatus, String, String)> {
    let condition = status.conditions.find(type_)?;
    Some((
        condition.status,
        condition.reason.clone().unwrap_or_default(),
        condition.message.clone().unwrap_or_default(),
    ))
}

#[tokio::test]
async fn subnets_most_free_addresses_first() {
    let status = resolve(&ec2(), json!({})).await;
    let expected = [
        ("subnet-test2", "test-zone-1b", "tstz1-1b"),
        ("subnet-test3", "test-zone-1c", "tstz1-1c"),
        ("subnet-test1", "test-zone-1a", "tstz1-1a"),
    ]
    .map(|(id, zone, zone_id)| Subnet {
        id: id.into(),
        zone: zone.into(),
        zone_id: Some(zone_id.into()),
        ..Subnet::default()
    });
    assert_eq!(status.subnets.as_deref(), Some(&expected[..]));
    assert!(status.conditions.is_true("SubnetsReady"));
    let groups: Vec<(String, Option<String>)> = status
        .security_groups
        .unwrap_or_default()
        .into_iter()
        .map(|g| (g.id, g.name))
        .collect();
    assert_eq!(
        groups,
        [
            ("sg-test1".into(), Some("securityGroup-sg-test1".into())),
            ("sg-test2".into(), Some("securityGroup-sg-test2".into()))
        ]
    );
}

#[tokio::test]
async fn terms_matching_nothing_clear_the_list_with_upstreams_reasons() {
    let ec2 = ec2();
    let mut class = class(json!({
        "subnetSelectorTerms": [{"tags": {"Name": "nope"}}],
        "securityGroupSelectorTerms": [{"id": "sg-nope"}],
        "amiSelectorTerms": [{"tags": {"Name": "nope"}}],
    }));
    class.status = Some(resolve(&ec2, json!({})).await);
    let status = resolve_status(&ec2, &class, &context())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            status.subnets.clone(),
            status.security_groups.clone(),
            status.amis.clone()
        ),
        (None, None, None)
    );
    let expected = [
        (
            "SubnetsReady",
            "SubnetsNotFound",
            "SubnetSelector did not match any Subnets",
        ),
        (
            "SecurityGroupsReady",
            "SecurityGroupsNotFound",
            "SecurityGroupSelector did not match any SecurityGroups",
        ),
        (
            "AMIsReady",
            "AMINotFound",
            "AMISelector did not match any AMIs",
        ),
    ];
    for (type_, why, message) in expected {
        assert_eq!(
            reason(&status, type_),
            Some((ConditionStatus::False, why.into(), message.into()))
        );
    }
    let ready = reason(&status, "Ready").map(|(s, r, _)| (s, r));
    assert_eq!(
        ready,
        Some((ConditionStatus::False, "UnhealthyDependents".into()))
    );
}

#[tokio::test]
async fn ready_waits_for_the_conditions_it_does_not_resolve() {
    let status = resolve(&ec2(), json!({})).await;
    let ready = reason(&status, "Ready");
    assert_eq!(
        ready,
        Some((
            ConditionStatus::Unknown,
            "ReconcilingDependents".into(),
            "InstanceProfileReady=Unknown, ValidationSucceeded=Unknown".into()
        ))
    );
    // Once the other reconcilers have set theirs, Ready follows.
    let mut class = class(json!({}));
    let mut done = status.clone();
    let conditions = done.conditions.get_or_insert_with(Vec::new);
    for condition in conditions.iter_mut().filter(|c| c.type_ != "Ready") {
        condition.status = ConditionStatus::True;
    }
    class.status = Some(done);
    let status = resolve_status(&ec2(), &class, &context())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        reason(&status, "Ready"),
        Some((ConditionStatus::True, "Ready".into(), String::new()))
    );
    let stamped = status
        .conditions
        .find("SubnetsReady")
        .and_then(|c| c.observed_generation);
    assert_eq!(stamped, Some(3));
    let types: Vec<&str> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(types.last(), Some(&"Ready"), "Ready is stored last");

    // A new generation: the conditions other reconcilers wrote for the
    // old one no longer count, so Ready is reconciling again.
    class.status = Some(status);
    class.metadata.generation = Some(4);
    let status = resolve_status(&ec2(), &class, &context())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ready = reason(&status, "Ready").map(|(s, r, _)| (s, r));
    assert_eq!(
        ready,
        Some((ConditionStatus::Unknown, "ReconcilingDependents".into()))
    );
    let message = reason(&status, "Ready")
        .map(|(_, _, m)| m)
        .unwrap_or_default();
    assert!(message.contains("InstanceProfileReady=True"), "{message}");
    assert!(!message.contains("SubnetsReady"), "{message}");
}

#[tokio::test]
async fn conditions_awaiting_reconciliation_date_from_the_objects_creation() {
    let status = resolve(&ec2(), json!({})).await;
    let awaiting = status.conditions.find("ValidationSucceeded");
    let time = awaiting
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0.to_string());
    assert_eq!(time.as_deref(), Some("2024-05-01T00:00:00Z"));
    let subnets = status.conditions.find("SubnetsReady");
    let time = subnets
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0);
    assert_eq!(time, Some(now()), "a status written now moves its time");
}

#[tokio::test]
async fn a_failed_describe_call_names_the_selector() {
    let ec2 = ec2();
    ec2.fail_next(
        Operation::DescribeSubnets,
        Ec2Error::service(Operation::DescribeSubnets, "UnauthorizedOperation", "no"),
    );
    let result = resolve_status(&ec2, &class(json!({})), &context()).await;
    assert!(matches!(result, Err(ResolveError::Subnets(_))));
    let message = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("spec.subnetSelectorTerms"), "{message}");
}

fn reservation(
    id: &str,
    kind: &str,
    criteria: &str,
    end: Option<jiff::Timestamp>,
) -> ec2::CapacityReservation {
    ec2::CapacityReservation {
        capacity_reservation_id: id.into(),
        owner_id: "012345678901".into(),
        instance_type: "m5.large".into(),
        availability_zone: "test-zone-1a".into(),
        state: "active".into(),
        reservation_type: kind.into(),
        instance_match_criteria: criteria.into(),
        end_date: end,
        tags: vec![Tag::new("team", "a")],
        ..ec2::CapacityReservation::default()
    }
}

#[tokio::test]
async fn capacity_reservations_with_the_gate() {
    let ec2 = ec2();
    let soon = now() + SignedDuration::from_mins(30);
    let later = now() + SignedDuration::from_hours(2);
    ec2.add_capacity_reservation(reservation(
        "cr-3",
        "capacity-block",
        "targeted",
        Some(soon),
    ));
    ec2.add_capacity_reservation(reservation(
        "cr-2",
        "capacity-block",
        "targeted",
        Some(later),
    ));
    ec2.add_capacity_reservation(reservation("cr-1", "", "open", None));
    ec2.add_capacity_reservation(reservation("cr-4", "", "future-criteria", None));
    let spec = json!({"capacityReservationSelectorTerms": [{"tags": {"team": "a"}}, {"id": "cr-unknown"}]});
    let mut gated = context();
    gated.reserved_capacity = true;
    let status = resolve_status(&ec2, &class(spec.clone()), &gated)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let found: Vec<(String, Option<String>, Option<String>)> = status
        .capacity_reservations
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.id, r.reservation_type, r.state))
        .collect();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        found,
        [
            ("cr-1".into(), some("default"), some("active")),
            ("cr-2".into(), some("capacity-block"), some("active")),
            ("cr-3".into(), some("capacity-block"), some("expiring")),
        ]
    );
    assert!(status.conditions.is_true("CapacityReservationsReady"));
    let ready = reason(&status, "Ready")
        .map(|(_, _, message)| message)
        .unwrap_or_default();
    assert!(!ready.contains("CapacityReservationsReady"), "{ready}");

    // Without the gate they are neither read nor waited for.
    let status = resolve(&ec2, spec).await;
    assert_eq!(status.capacity_reservations, None);
    assert!(
        status
            .conditions
            .find("CapacityReservationsReady")
            .is_none()
    );
}

#[tokio::test]
async fn the_instance_profile_is_named_without_iam() {
    let given = resolve(
        &ec2(),
        json!({"role": null, "instanceProfile": "my-profile"}),
    )
    .await;
    assert_eq!(given.instance_profile.as_deref(), Some("my-profile"));
    let generated = resolve(&ec2(), json!({}))
        .await
        .instance_profile
        .unwrap_or_default();
    let number = generated.strip_prefix("test-cluster_").unwrap_or_default();
    assert!(number.parse::<u64>().is_ok(), "{generated}");
    // A profile already made is kept.
    let mut class = class(json!({}));
    class.status = Some(EC2NodeClassStatus {
        instance_profile: Some("test-cluster_42".into()),
        ..EC2NodeClassStatus::default()
    });
    let kept = resolve_status(&ec2(), &class, &context())
        .await
        .ok()
        .and_then(|s| s.instance_profile);
    assert_eq!(kept.as_deref(), Some("test-cluster_42"));
}

#[tokio::test]
async fn the_same_inputs_give_the_same_status() {
    let first = resolve(&ec2(), json!({})).await;
    let second = resolve(&ec2(), json!({})).await;
    assert_eq!(first, second);
    let mut class = class(json!({}));
    class.status = Some(first.clone());
    let mut later = context();
    later.now = now() + SignedDuration::from_hours(1);
    let again = resolve_status(&ec2(), &class, &later)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        again, first,
        "unchanged conditions keep their transition times"
    );
}

#[tokio::test]
async fn an_alias_refused_for_the_version_sets_unsupported_alias() {
    let class = class(json!({"amiFamily": null, "amiSelectorTerms": [{"alias": "al2@latest"}]}));
    let mut context = context();
    context.kubernetes_version = "1.33".into();
    let status = resolve_status(&ec2(), &class, &context)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let condition = reason(&status, "AMIsReady").map(|(s, r, _)| (s, r));
    assert_eq!(
        condition,
        Some((ConditionStatus::False, "UnsupportedAlias".into()))
    );
}
