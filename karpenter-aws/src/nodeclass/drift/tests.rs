//! Drift, after upstream's "NodeClaim Drift" tests
//! (`pkg/cloudprovider/suite_test.go`): each reason, their order, and the
//! cases that are not drift.

use karpenter_core::api::NodeClaim;
use karpenter_core::scheduling::Requirements;
use serde_json::{Value, json};

use super::*;
use crate::nodeclass::{HASH_VERSION, UPSTREAM_HASH_VERSION};

const AMD_AMI: &str = "ami-amd";
const ARM_AMI: &str = "ami-arm";
const GPU_AMI: &str = "ami-gpu";

/// A class whose status resolved two images (amd64, arm64; no GPU), two
/// security groups, two subnets and one reservation.
fn class(annotations: Value) -> EC2NodeClass {
    let no_gpu = json!({"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"});
    serde_json::from_value(json!({
        "metadata": {"name": "default", "annotations": annotations},
        "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "R"},
        "status": {
            "amis": [
                {"id": GPU_AMI, "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Exists"}]},
                {"id": AMD_AMI, "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}, no_gpu]},
                {"id": ARM_AMI, "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}, no_gpu]}
            ],
            "securityGroups": [{"id": "sg-1"}, {"id": "sg-2"}],
            "subnets": [{"id": "subnet-1", "zone": "test-zone-1a"}, {"id": "subnet-2", "zone": "test-zone-1b"}],
            "capacityReservations": [{"id": "cr-1", "availabilityZone": "test-zone-1a",
                "instanceMatchCriteria": "targeted", "instanceType": "m5.large", "ownerID": "012345678901"}]
        }
    }))
    .expect("a valid EC2NodeClass")
}

fn hashed(hash: &str, version: &str) -> Value {
    json!({HASH_ANNOTATION: hash, HASH_VERSION_ANNOTATION: version})
}

fn claim(annotations: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": "c", "annotations": annotations},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}
    }))
    .expect("a valid NodeClaim")
}

/// An amd64 instance without GPUs matching the class in every respect.
fn instance() -> LaunchedInstance {
    LaunchedInstance {
        image_id: AMD_AMI.to_owned(),
        instance_type_requirements: Requirements::from_labels([("kubernetes.io/arch", "amd64")]),
        security_group_ids: vec!["sg-2".to_owned(), "sg-1".to_owned()],
        subnet_id: "subnet-2".to_owned(),
        capacity_reservation_id: None,
        placement_group_id: None,
    }
}

fn dynamic(instance: &LaunchedInstance) -> Option<DriftReason> {
    dynamic_drift(&class(json!({})), instance, None).expect("decidable")
}

#[test]
fn reasons_carry_upstreams_names() {
    let names = [
        (DriftReason::NodeClass, "NodeClassDrift"),
        (DriftReason::Ami, "AMIDrift"),
        (DriftReason::SecurityGroup, "SecurityGroupDrift"),
        (DriftReason::Subnet, "SubnetDrift"),
        (DriftReason::CapacityReservation, "CapacityReservationDrift"),
        (DriftReason::PlacementGroup, "PlacementGroupDrift"),
    ];
    for (reason, name) in names {
        assert_eq!(reason.to_string(), name);
    }
}

#[test]
fn a_matching_instance_has_not_drifted() {
    assert_eq!(dynamic(&instance()), None);
    let reserved = LaunchedInstance {
        capacity_reservation_id: Some("cr-1".to_owned()),
        ..instance()
    };
    assert_eq!(dynamic(&reserved), None);
}

#[test]
fn an_image_not_mapped_to_the_type_drifts() {
    let old_image = LaunchedInstance {
        image_id: "ami-old".to_owned(),
        ..instance()
    };
    assert_eq!(dynamic(&old_image), Some(DriftReason::Ami));
    // The arm64 image is in the status, but not the amd64 type's.
    let wrong_arch = LaunchedInstance {
        image_id: ARM_AMI.to_owned(),
        ..instance()
    };
    assert_eq!(dynamic(&wrong_arch), Some(DriftReason::Ami));
    // A GPU type gets the first image it fits: the GPU one, not the plain one.
    let gpu_type = Requirements::from_labels([
        ("kubernetes.io/arch", "amd64"),
        ("karpenter.k8s.aws/instance-gpu-count", "1"),
    ]);
    let gpu = LaunchedInstance {
        instance_type_requirements: gpu_type,
        ..instance()
    };
    assert_eq!(dynamic(&gpu), Some(DriftReason::Ami));
    let on_gpu_image = LaunchedInstance {
        image_id: GPU_AMI.to_owned(),
        ..gpu
    };
    assert_eq!(dynamic(&on_gpu_image), None);
}

#[test]
fn security_groups_are_compared_as_sets() {
    let fewer = LaunchedInstance {
        security_group_ids: vec!["sg-1".to_owned()],
        ..instance()
    };
    assert_eq!(dynamic(&fewer), Some(DriftReason::SecurityGroup));
    let more = LaunchedInstance {
        security_group_ids: ["sg-1", "sg-2", "sg-3"].map(str::to_owned).to_vec(),
        ..instance()
    };
    assert_eq!(dynamic(&more), Some(DriftReason::SecurityGroup));
    let other = LaunchedInstance {
        security_group_ids: vec!["sg-9".to_owned(), "sg-1".to_owned()],
        ..instance()
    };
    assert_eq!(dynamic(&other), Some(DriftReason::SecurityGroup));
}

#[test]
fn a_subnet_outside_the_status_drifts() {
    let moved = LaunchedInstance {
        subnet_id: "subnet-9".to_owned(),
        ..instance()
    };
    assert_eq!(dynamic(&moved), Some(DriftReason::Subnet));
}

#[test]
fn a_reservation_outside_the_status_drifts_but_on_demand_does_not() {
    let other = LaunchedInstance {
        capacity_reservation_id: Some("cr-9".to_owned()),
        ..instance()
    };
    assert_eq!(dynamic(&other), Some(DriftReason::CapacityReservation));
    // Fallen back to on-demand: no reservation, no drift.
    assert_eq!(
        dynamic(&LaunchedInstance {
            capacity_reservation_id: None,
            ..instance()
        }),
        None
    );
}

#[test]
fn a_placement_group_other_than_the_classs_drifts() {
    let class = class(json!({}));
    let in_group = LaunchedInstance {
        placement_group_id: Some("pg-1".to_owned()),
        ..instance()
    };
    let decide = |i: &LaunchedInstance, pg| dynamic_drift(&class, i, pg).expect("decidable");
    assert_eq!(decide(&in_group, Some("pg-1")), None);
    assert_eq!(
        decide(&in_group, Some("pg-2")),
        Some(DriftReason::PlacementGroup)
    );
    assert_eq!(decide(&in_group, None), Some(DriftReason::PlacementGroup));
    assert_eq!(
        decide(&instance(), Some("pg-1")),
        Some(DriftReason::PlacementGroup)
    );
}

#[test]
fn reasons_come_in_upstreams_order() {
    let mut all = LaunchedInstance {
        image_id: "ami-old".to_owned(),
        security_group_ids: vec!["sg-9".to_owned()],
        subnet_id: "subnet-9".to_owned(),
        capacity_reservation_id: Some("cr-9".to_owned()),
        placement_group_id: Some("pg-9".to_owned()),
        ..instance()
    };
    let order = [
        DriftReason::Ami,
        DriftReason::SecurityGroup,
        DriftReason::Subnet,
        DriftReason::CapacityReservation,
        DriftReason::PlacementGroup,
    ];
    for expected in order {
        assert_eq!(dynamic(&all), Some(expected));
        match expected {
            DriftReason::Ami => all.image_id = AMD_AMI.to_owned(),
            DriftReason::SecurityGroup => {
                all.security_group_ids = vec!["sg-1".to_owned(), "sg-2".to_owned()]
            }
            DriftReason::Subnet => all.subnet_id = "subnet-1".to_owned(),
            DriftReason::CapacityReservation => all.capacity_reservation_id = None,
            _ => all.placement_group_id = None,
        }
    }
    assert_eq!(dynamic(&all), None);
    // Static drift comes before every dynamic reason.
    let class = class(hashed("1", HASH_VERSION));
    let moved = LaunchedInstance {
        subnet_id: "subnet-9".to_owned(),
        ..instance()
    };
    let stale = claim(hashed("2", HASH_VERSION));
    assert_eq!(
        drift(&class, &stale, &moved, None).ok().flatten(),
        Some(DriftReason::NodeClass)
    );
    let current = claim(hashed("1", HASH_VERSION));
    assert_eq!(
        drift(&class, &current, &moved, None).ok().flatten(),
        Some(DriftReason::Subnet)
    );
}

#[test]
fn static_drift_needs_all_four_annotations_and_equal_versions() {
    let class_ = class(hashed("1", HASH_VERSION));
    assert_eq!(
        static_drift(&class_, &claim(hashed("2", HASH_VERSION))),
        Some(DriftReason::NodeClass)
    );
    assert_eq!(
        static_drift(&class_, &claim(hashed("1", HASH_VERSION))),
        None
    );
    assert_eq!(
        static_drift(&class_, &claim(hashed("2", UPSTREAM_HASH_VERSION))),
        None
    );
    assert_eq!(
        static_drift(
            &class_,
            &claim(json!({HASH_VERSION_ANNOTATION: HASH_VERSION}))
        ),
        None
    );
    assert_eq!(
        static_drift(&class_, &claim(json!({HASH_ANNOTATION: "2"}))),
        None
    );
    let unversioned = class(json!({HASH_ANNOTATION: "1"}));
    assert_eq!(
        static_drift(&unversioned, &claim(hashed("2", HASH_VERSION))),
        None
    );
}

#[test]
fn undecidable_drift_is_an_error_naming_the_field() {
    let mut empty = class(json!({}));
    let no_image = LaunchedInstance {
        image_id: String::new(),
        ..instance()
    };
    let err = dynamic_drift(&empty, &no_image, None).expect_err("no image ID");
    assert!(err.to_string().contains("status.imageID"));
    if let Some(status) = empty.status.as_mut() {
        status.subnets = Some(Vec::new());
    }
    let err = dynamic_drift(&empty, &instance(), None).expect_err("no subnets");
    assert!(err.to_string().contains("status.subnets"));
    if let Some(status) = empty.status.as_mut() {
        status.security_groups = None;
    }
    let err = dynamic_drift(&empty, &instance(), None).expect_err("no groups");
    assert!(err.to_string().contains("status.securityGroups"));
    empty.status = None;
    let err = dynamic_drift(&empty, &instance(), None).expect_err("no AMIs");
    assert!(err.to_string().contains("status.amis"));
}
