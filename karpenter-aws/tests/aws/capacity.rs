//! What EC2's refusals and reservations do to launches: offerings
//! refused for insufficient capacity, full subnets, interruption marks,
//! capacity reservations and their counts.

use jiff::SignedDuration;
use karpenter_aws::InstanceTypeOptions;
use karpenter_aws::ec2::{CapacityReservation, TargetCapacityType};
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError, InstanceType};
use serde_json::json;

use crate::common::{
    cheapest, claim, class, ec2, is_in, label, pool, provider, provider_with, ready_status,
};

const TYPE: &str = "node.kubernetes.io/instance-type";
const ZONE: &str = "topology.kubernetes.io/zone";
const CAPACITY: &str = "karpenter.sh/capacity-type";

#[tokio::test]
async fn insufficient_capacity_marks_the_offering_for_three_minutes() {
    let ec2 = ec2();
    let (provider, clock) = provider(&ec2);
    let names = ["m5.large", "c5.large"];
    let types = provider.instance_types(&pool()).await.expect("types");
    let (sold_out, _) = cheapest(&types, &names, "us-east-1a", "on-demand");
    ec2.set_capacity(sold_out, "us-east-1a", TargetCapacityType::OnDemand, 0);
    let requirements = json!([
        is_in(TYPE, &names),
        is_in(ZONE, &["us-east-1a"]),
        is_in(CAPACITY, &["on-demand"]),
    ]);
    // EC2 refuses the cheapest and starts the next override instead.
    let launched = provider
        .create(&claim("web-1", requirements.clone()))
        .await
        .expect("another type");
    assert_ne!(label(&launched, TYPE), sold_out);
    let marked = |types: &[InstanceType]| {
        types
            .iter()
            .filter(|t| t.name == sold_out)
            .flat_map(|t| &t.offerings)
            .find(|o| o.zone == "us-east-1a" && o.capacity_type == "on-demand")
            .map(|o| !o.available)
    };
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(marked(&types), Some(true));
    // A claim pinned to it hears it is sold out, naming it.
    let pinned = claim(
        "web-2",
        json!([
            is_in(TYPE, &[sold_out]),
            is_in(ZONE, &["us-east-1a"]),
            is_in(CAPACITY, &["on-demand"]),
        ]),
    );
    match provider.create(&pinned).await {
        Err(CloudProviderError::InsufficientCapacity { offerings, .. }) => {
            assert!(
                offerings.iter().any(|o| o.instance_type == sold_out),
                "{offerings:?}"
            );
        }
        other => panic!("expected insufficient capacity, got {other:?}"),
    }
    clock.advance(SignedDuration::from_secs(179));
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(marked(&types), Some(true), "still within three minutes");
    clock.advance(SignedDuration::from_secs(1));
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(
        marked(&types),
        Some(false),
        "available again after three minutes"
    );
}

#[tokio::test]
async fn a_reservation_with_room_is_launched_into_first() {
    let ec2 = ec2();
    ec2.add_capacity_reservation(CapacityReservation {
        capacity_reservation_id: "cr-1".into(),
        owner_id: "111122223333".into(),
        instance_type: "m5.large".into(),
        availability_zone: "us-east-1b".into(),
        available_instance_count: 1,
        total_instance_count: 1,
        state: "active".into(),
        reservation_type: "default".into(),
        instance_match_criteria: "targeted".into(),
        ..CapacityReservation::default()
    });
    let options = InstanceTypeOptions {
        reserved_capacity: true,
        ..InstanceTypeOptions::default()
    };
    let (provider, clock) = provider_with(&ec2, options);
    let mut status = ready_status();
    status["capacityReservations"] = json!([{
        "id": "cr-1", "instanceType": "m5.large", "availabilityZone": "us-east-1b",
        "ownerID": "111122223333", "instanceMatchCriteria": "targeted",
        "reservationType": "default", "state": "active",
    }]);
    provider.apply_node_class(class(status));
    let reserved = |types: &[InstanceType]| {
        types
            .iter()
            .filter(|t| t.name == "m5.large")
            .flat_map(|t| &t.offerings)
            .find(|o| o.reservation_id() == Some("cr-1"))
            .map(|o| o.available)
    };
    // Before EC2's count is read the reservation has no room.
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(reserved(&types), Some(false));
    assert_eq!(
        provider
            .refresh_capacity_reservations()
            .await
            .expect("read"),
        1
    );
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(reserved(&types), Some(true));
    // An interruption naming the reservation exhausts it for three minutes.
    provider.mark_reservation_exhausted("cr-1");
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(reserved(&types), Some(false));
    clock.advance(SignedDuration::from_secs(180));
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(reserved(&types), Some(true));
    let launched = provider
        .create(&claim("web-1", json!([is_in(TYPE, &["m5.large"])])))
        .await
        .expect("a launch");
    // Its one instance counted down: no room left until the next read.
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(reserved(&types), Some(false));
    assert_eq!(label(&launched, CAPACITY), "reserved");
    assert_eq!(label(&launched, ZONE), "us-east-1b");
    assert_eq!(
        label(&launched, "karpenter.k8s.aws/capacity-reservation-id"),
        "cr-1"
    );
    assert_eq!(
        ec2.instances()[0].capacity_reservation_id.as_deref(),
        Some("cr-1")
    );
}

#[tokio::test]
async fn a_zone_whose_subnets_are_full_is_unavailable() {
    let ec2 = ec2();
    ec2.add_subnet(karpenter_aws::ec2::Subnet {
        subnet_id: "subnet-b".into(),
        vpc_id: "vpc-1".into(),
        availability_zone: "us-east-1b".into(),
        available_ip_address_count: 0,
        ..Default::default()
    });
    let (provider, _clock) = provider(&ec2);
    let pinned = claim(
        "web-1",
        json!([is_in(TYPE, &["m5.large"]), is_in(ZONE, &["us-east-1b"])]),
    );
    assert!(matches!(
        provider.create(&pinned).await,
        Err(CloudProviderError::InsufficientCapacity { .. })
    ));
    let types = provider.instance_types(&pool()).await.expect("types");
    let in_zone = |zone: &str| {
        types
            .iter()
            .flat_map(|t| &t.offerings)
            .filter(move |o| o.zone == zone)
            .any(|o| o.available)
    };
    assert!(!in_zone("us-east-1b"), "every offering in the full zone");
    assert!(in_zone("us-east-1a"));
}

#[tokio::test]
async fn interruption_marks_make_offerings_and_reservations_unavailable() {
    let ec2 = ec2();
    let (provider, clock) = provider(&ec2);
    provider.mark_unavailable(karpenter_core::cloudprovider::OfferingKey::new(
        "m5.large",
        "us-east-1a",
        "spot",
    ));
    let available = |types: &[InstanceType], zone: &str, capacity_type: &str| {
        types
            .iter()
            .filter(|t| t.name == "m5.large")
            .flat_map(|t| &t.offerings)
            .find(|o| o.zone == zone && o.capacity_type == capacity_type)
            .map(|o| o.available)
    };
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(available(&types, "us-east-1a", "spot"), Some(false));
    assert_eq!(available(&types, "us-east-1b", "spot"), Some(true));
    assert_eq!(available(&types, "us-east-1a", "on-demand"), Some(true));
    clock.advance(SignedDuration::from_secs(180));
    let types = provider.instance_types(&pool()).await.expect("types");
    assert_eq!(available(&types, "us-east-1a", "spot"), Some(true));
}
