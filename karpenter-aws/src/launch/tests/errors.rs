use crate::ec2::INSUFFICIENT_CAPACITY_CODES;
use crate::launch::{
    FleetError, LaunchError, UnavailableMark, fleet_outcome, is_insufficient_capacity,
    parse_provider_id, provider_id, reason_message, unavailable_marks,
};

fn fleet_error(code: &str, message: &str, instance_type: &str, zone: &str) -> FleetError {
    FleetError {
        code: code.to_owned(),
        message: message.to_owned(),
        instance_type: instance_type.to_owned(),
        zone: zone.to_owned(),
        subnet_id: Some(format!("subnet-{zone}")),
    }
}

#[test]
fn insufficient_capacity_codes_are_upstreams_eight() {
    for code in INSUFFICIENT_CAPACITY_CODES {
        assert!(is_insufficient_capacity(code), "{code}");
    }
    for code in [
        "UnauthorizedOperation",
        "InvalidAMIID.NotFound",
        "",
        "insufficientinstancecapacity",
    ] {
        assert!(!is_insufficient_capacity(code), "{code}");
    }
}

#[test]
fn spot_and_on_demand_errors_mark_offerings_subnets_and_spot() {
    let errors = [
        fleet_error(
            "InsufficientInstanceCapacity",
            "no capacity",
            "m5.large",
            "us-west-2a",
        ),
        fleet_error(
            "InsufficientFreeAddressesInSubnet",
            "full",
            "m5.large",
            "us-west-2b",
        ),
        fleet_error(
            "AuthFailure.ServiceLinkedRoleCreationNotPermitted",
            "no role",
            "c5.large",
            "us-west-2a",
        ),
        fleet_error("InvalidAMIID.NotFound", "gone", "c5.large", "us-west-2c"),
        fleet_error(
            "InsufficientInstanceCapacity",
            "again",
            "m5.large",
            "us-west-2a",
        ),
    ];
    let marks = unavailable_marks(&errors, "spot", |_, _| None);
    let offering = |t: &str, z: &str| UnavailableMark::Offering {
        instance_type: t.to_owned(),
        zone: z.to_owned(),
        capacity_type: "spot".to_owned(),
    };
    assert_eq!(
        marks,
        [
            offering("m5.large", "us-west-2a"),
            offering("m5.large", "us-west-2b"),
            UnavailableMark::Subnet("subnet-us-west-2b".to_owned()),
            UnavailableMark::AllSpot,
        ]
    );
    assert!(marks[0].is_spot() && marks[3].is_spot() && !marks[2].is_spot());
    let key = marks[0].offering_key().expect("an offering");
    assert_eq!(
        (
            key.instance_type.as_str(),
            key.zone.as_str(),
            key.capacity_type.as_str()
        ),
        ("m5.large", "us-west-2a", "spot")
    );
    assert_eq!(marks[2].offering_key(), None);
    let on_demand = unavailable_marks(&errors[..1], "on-demand", |_, _| None);
    assert!(!on_demand[0].is_spot());
}

#[test]
fn reserved_errors_exhaust_the_reservation_and_nothing_else() {
    let errors = [
        fleet_error(
            "ReservationCapacityExceeded",
            "full",
            "p5.48xlarge",
            "us-east-1a",
        ),
        fleet_error(
            "InsufficientInstanceCapacity",
            "limit of instances in this spread placement group",
            "p5.48xlarge",
            "us-east-1b",
        ),
        fleet_error(
            "UnauthorizedOperation",
            "denied",
            "p5.48xlarge",
            "us-east-1c",
        ),
    ];
    let marks = unavailable_marks(&errors, "reserved", |t, z| Some(format!("cr-{t}-{z}")));
    assert_eq!(
        marks,
        [UnavailableMark::Reservation(
            "cr-p5.48xlarge-us-east-1a".to_owned()
        )]
    );
}

#[test]
fn reasons_follow_upstreams_rules_in_order() {
    let cases = [
        (
            "AuthFailure.ServiceLinkedRoleCreationNotPermitted: x",
            "SpotSLRCreationFailed",
        ),
        (
            "UnauthorizedOperation: with an explicit deny in a permissions boundary",
            "Unauthorized",
        ),
        (
            "AuthFailure: Not authorized for images: [ami-1]",
            "AMIAuthorizationFailure",
        ),
        (
            "InvalidParameter: groups belong to different networks",
            "SecurityGroupSubnetVPCMismatch",
        ),
        ("InvalidAMIID.NotFound: gone", "AMINotFound"),
        ("InvalidAMIID.Malformed: bad", "InvalidAMIID"),
        ("MaxSpotInstanceCountExceeded: quota", "SpotQuotaExceeded"),
        ("VcpuLimitExceeded: quota", "VCPULimitExceeded"),
        ("MaxFleetCountExceeded: quota", "FleetQuotaExceeded"),
        (
            "InsufficientFreeAddressesInSubnet: full",
            "InsufficientFreeAddressesInSubnet",
        ),
        ("RequestLimitExceeded: slow down", "RequestLimitExceeded"),
        ("SomethingElse: odd", "LaunchFailed"),
    ];
    for (text, reason) in cases {
        assert_eq!(reason_message(text).0, reason, "{text}");
    }
}

#[test]
fn a_fleet_of_capacity_errors_is_insufficient_capacity_else_a_create_error() {
    let ice = [
        fleet_error("InsufficientInstanceCapacity", "none", "m5.large", "a"),
        fleet_error(
            "AuthFailure.ServiceLinkedRoleCreationNotPermitted",
            "role",
            "m5.large",
            "b",
        ),
    ];
    assert!(matches!(
        fleet_outcome(&ice),
        LaunchError::InsufficientCapacity(_)
    ));
    let mixed = [
        fleet_error("InsufficientInstanceCapacity", "none", "m5.large", "a"),
        fleet_error("InvalidAMIID.NotFound", "gone", "m5.large", "b"),
    ];
    match fleet_outcome(&mixed) {
        LaunchError::Create { reason, message } => {
            assert_eq!(reason, "AMINotFound");
            assert!(message.contains("InvalidAMIID.NotFound: gone"), "{message}");
        }
        other => panic!("expected a create error, got {other:?}"),
    }
    let mut reversed = mixed.clone();
    reversed.reverse();
    assert_eq!(fleet_outcome(&mixed), fleet_outcome(&reversed));
}

#[test]
fn provider_ids_round_trip_and_bad_ones_are_errors() {
    let id = provider_id("us-west-2a", "i-0123456789abcdef0");
    assert_eq!(id, "aws:///us-west-2a/i-0123456789abcdef0");
    assert_eq!(
        parse_provider_id(&id),
        Ok(("us-west-2a", "i-0123456789abcdef0"))
    );
    for bad in [
        "",
        "aws://us-west-2a/i-1",
        "azure:///sub/vm",
        "aws:///",
        "aws:///us-west-2a",
        "aws:///us-west-2a/",
        "aws:////i-1",
        "aws:///us-west-2a/i-1/extra",
    ] {
        let err = parse_provider_id(bad).expect_err(bad);
        assert_eq!(err.provider_id, bad);
    }
}
