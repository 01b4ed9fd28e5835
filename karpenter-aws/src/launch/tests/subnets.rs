use super::{on_demand, resources, sized, spot};
use crate::launch::{InFlightIps, LaunchError, SubnetInfo, min_pods, zonal_subnets};

fn subnet(id: &str, zone: &str, available_ips: i64) -> SubnetInfo {
    SubnetInfo {
        id: id.to_owned(),
        zone: zone.to_owned(),
        zone_id: Some(format!("{zone}-id")),
        available_ips,
    }
}

#[test]
fn each_zone_gets_its_subnet_with_the_most_free_addresses() {
    let subnets = [
        subnet("subnet-a1", "zone-a", 10),
        subnet("subnet-a2", "zone-a", 100),
        subnet("subnet-a3", "zone-a", 100),
        subnet("subnet-b1", "zone-b", 5),
    ];
    let zonal = zonal_subnets(&subnets, &InFlightIps::new()).expect("subnets");
    let chosen: Vec<(&str, &str)> = zonal
        .iter()
        .map(|(zone, s)| (zone.as_str(), s.id.as_str()))
        .collect();
    assert_eq!(chosen, [("zone-a", "subnet-a2"), ("zone-b", "subnet-b1")]);
}

#[test]
fn launches_in_flight_take_the_smallest_candidates_pod_count() {
    let subnets = [
        subnet("subnet-a1", "zone-a", 100),
        subnet("subnet-a2", "zone-a", 90),
    ];
    let types = [
        sized("small", vec![on_demand("zone-a", 1.0)], resources(2, 4, 29)),
        sized(
            "large",
            vec![on_demand("zone-a", 2.0)],
            resources(8, 32, 110),
        ),
        sized("spot-only", vec![spot("zone-a", 0.1)], resources(1, 1, 4)),
        sized(
            "elsewhere",
            vec![on_demand("zone-b", 0.1)],
            resources(1, 1, 4),
        ),
    ];
    assert_eq!(min_pods(&types, "on-demand", "zone-a"), 29);
    assert_eq!(min_pods(&types, "spot", "zone-a"), 4);
    assert_eq!(min_pods(&types, "reserved", "zone-a"), 0);
    let mut in_flight = InFlightIps::new();
    let zonal = zonal_subnets(&subnets, &in_flight).expect("subnets");
    assert_eq!(zonal["zone-a"].id, "subnet-a1");
    in_flight.reserve(&zonal, &types, "on-demand");
    assert_eq!(in_flight.available(&subnets[0]), 71);
    // subnet-a2 now has more room than subnet-a1 is expected to have.
    let zonal = zonal_subnets(&subnets, &in_flight).expect("subnets");
    assert_eq!(zonal["zone-a"].id, "subnet-a2");
    in_flight.release(&subnets[0], &types, "on-demand");
    assert_eq!(in_flight.available(&subnets[0]), 100);
    in_flight.reserve(&zonal, &types, "on-demand");
    assert!(in_flight.tracks("subnet-a2"));
    in_flight.forget("subnet-a2");
    assert!(!in_flight.tracks("subnet-a2"));
    assert_eq!(in_flight.available(&subnets[1]), 90);
    assert!(in_flight.tracks("subnet-a1"));
    in_flight.clear();
    assert!(!in_flight.tracks("subnet-a1"));
}

#[test]
fn no_subnet_is_a_subnet_resolution_error() {
    match zonal_subnets(&[], &InFlightIps::new()) {
        Err(LaunchError::Create { reason, .. }) => assert_eq!(reason, "SubnetResolutionFailed"),
        other => panic!("expected an error, got {other:?}"),
    }
}
