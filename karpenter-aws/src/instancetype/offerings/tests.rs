use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, LABEL_TOPOLOGY_ZONE, Requirements,
};
use serde_json::{Value, json};

use super::*;
use crate::instancetype::instance_types_for;

const REGION: &str = "us-east-1";

fn catalog() -> &'static Catalog {
    Catalog::embedded().expect("embedded catalog")
}

/// A node class whose subnets reach `us-east-1a` (twice) and `us-east-1b`,
/// with `reservations` in its status.
fn nodeclass(reservations: Value) -> EC2NodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
        },
        "status": {
            "subnets": [
                {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"},
                {"id": "subnet-a1", "zone": "us-east-1a", "zoneID": "use1-az1"},
                {"id": "subnet-a2", "zone": "us-east-1a", "zoneID": "use1-az1"}
            ],
            "capacityReservations": reservations
        }
    }))
    .expect("node class")
}

fn reservation(id: &str, instance_type: &str, zone: &str) -> Value {
    json!({
        "availabilityZone": zone, "id": id, "instanceMatchCriteria": "targeted",
        "instanceType": instance_type, "ownerID": "123456789012"
    })
}

fn two_zones() -> Vec<Zone> {
    vec![
        Zone::new("us-east-1a", Some("use1-az1")),
        Zone::new("us-east-1b", Some("use1-az2")),
    ]
}

fn price_of(offerings: &[Offering], zone: &str, capacity_type: &str) -> Option<f64> {
    offerings
        .iter()
        .find(|o| o.zone == zone && o.capacity_type == capacity_type)
        .map(|o| o.price)
}

#[test]
fn zones_come_from_the_subnets_once_each_by_name() {
    assert_eq!(zones(&nodeclass(json!([]))), two_zones());
    let mut unresolved = nodeclass(json!([]));
    unresolved.status = None;
    assert!(zones(&unresolved).is_empty());
}

#[test]
fn on_demand_prices_are_the_regions_table() {
    let options = InstanceTypeOptions::default();
    for name in ["m5.large", "c5.xlarge", "t3.micro"] {
        let (table, currency) = catalog().on_demand_price(REGION, name).expect(name);
        assert_eq!(currency, "USD");
        let offered = offerings(
            name,
            on_demand_price(catalog(), REGION, name),
            &two_zones(),
            &options,
        );
        assert_eq!(offered.len(), 4, "{name}: on-demand and spot in two zones");
        for zone in ["us-east-1a", "us-east-1b"] {
            assert_eq!(price_of(&offered, zone, "on-demand"), Some(table), "{name}");
        }
    }
    // The table's own figure, so a wrong column or region would show.
    assert_eq!(on_demand_price(catalog(), REGION, "m5.large"), Some(0.096));
}

#[test]
fn a_region_without_a_table_is_priced_from_us_east_1() {
    assert!(!catalog().priced_regions().any(|r| r == "eu-west-1"));
    for name in ["m5.large", "c5.xlarge"] {
        assert_eq!(
            on_demand_price(catalog(), "eu-west-1", name),
            catalog()
                .on_demand_price(FALLBACK_PRICE_REGION, name)
                .map(|p| p.0)
        );
    }
    // A region with a table keeps to it: no per-type fallback.
    assert!(catalog().on_demand_price("us-east-1", "a1.large").is_some());
    assert_eq!(
        on_demand_price(catalog(), "us-gov-west-1", "a1.large"),
        None
    );
    assert!(
        offerings(
            "a1.large",
            on_demand_price(catalog(), "us-gov-west-1", "a1.large"),
            &two_zones(),
            &InstanceTypeOptions::default()
        )
        .is_empty()
    );
}

#[test]
fn spot_is_on_demand_until_a_spot_price_is_given() {
    let zones = two_zones();
    let unknown = offerings(
        "m5.large",
        on_demand_price(catalog(), REGION, "m5.large"),
        &zones,
        &InstanceTypeOptions::default(),
    );
    for zone in &zones {
        assert_eq!(
            price_of(&unknown, &zone.name, "spot"),
            price_of(&unknown, &zone.name, "on-demand")
        );
    }
    let options = InstanceTypeOptions {
        spot_prices: Some(
            [(("m5.large".to_owned(), "us-east-1a".to_owned()), 0.0321)]
                .into_iter()
                .collect(),
        ),
        ..InstanceTypeOptions::default()
    };
    let known = offerings(
        "m5.large",
        on_demand_price(catalog(), REGION, "m5.large"),
        &zones,
        &options,
    );
    assert_eq!(price_of(&known, "us-east-1a", "spot"), Some(0.0321));
    // Once prices are known, a zone without one has no spot offering.
    assert_eq!(price_of(&known, "us-east-1b", "spot"), None);
    assert_eq!(price_of(&known, "us-east-1b", "on-demand"), Some(0.096));
}

#[test]
fn a_type_without_a_price_has_no_offering() {
    let name = "hpc7a.96xlarge";
    assert!(catalog().contains(name));
    assert_eq!(catalog().on_demand_price(REGION, name), None);
    assert!(
        offerings(
            name,
            on_demand_price(catalog(), REGION, name),
            &two_zones(),
            &InstanceTypeOptions::default()
        )
        .is_empty()
    );
    let all = instance_types_for(
        catalog(),
        REGION,
        &nodeclass(json!([])),
        &InstanceTypeOptions::default(),
    )
    .expect("instance types");
    let hpc = all.iter().find(|t| t.name == name).expect(name);
    assert!(hpc.offerings.is_empty());
    assert!(hpc.cheapest_offering(&Requirements::new()).is_none());
}

#[test]
fn offerings_carry_zone_id_and_no_reservation() {
    let offered = offerings(
        "m5.large",
        on_demand_price(catalog(), REGION, "m5.large"),
        &two_zones(),
        &InstanceTypeOptions::default(),
    );
    for offering in &offered {
        let labels = offering.all_requirements();
        let want = if offering.zone == "us-east-1a" {
            "use1-az1"
        } else {
            "use1-az2"
        };
        assert!(labels.get(TOPOLOGY_ZONE_ID).has(want));
        assert!(labels.get(TOPOLOGY_ZONE_ID).len() == 1);
        assert!(!labels.get(CAPACITY_RESERVATION_ID).has("cr-1"));
        assert!(offering.reservation.is_none());
    }
}

fn m5_large(types: &[InstanceType]) -> &InstanceType {
    types
        .iter()
        .find(|t| t.name == "m5.large")
        .expect("m5.large")
}

#[test]
fn reserved_offerings_need_the_gate() {
    let class = nodeclass(json!([
        reservation("cr-1", "m5.large", "us-east-1a"),
        reservation("cr-2", "c5.xlarge", "us-east-1a")
    ]));
    let capacity = [("cr-1".to_owned(), 3)].into_iter().collect();
    let off = InstanceTypeOptions {
        reservation_capacity: capacity,
        ..InstanceTypeOptions::default()
    };
    let on = InstanceTypeOptions {
        reserved_capacity: true,
        ..off.clone()
    };
    let without = instance_types_for(catalog(), REGION, &class, &off).expect("types");
    assert!(
        m5_large(&without)
            .offerings
            .iter()
            .all(|o| o.reservation.is_none())
    );
    let with = instance_types_for(catalog(), REGION, &class, &on).expect("types");
    let m5 = m5_large(&with);
    let reserved: Vec<&Offering> = m5
        .offerings
        .iter()
        .filter(|o| o.reservation.is_some())
        .collect();
    assert_eq!(reserved.len(), 1, "only the m5.large reservation");
    let cr1 = reserved[0];
    assert_eq!(cr1.capacity_type, CAPACITY_TYPE_RESERVED);
    assert_eq!(cr1.zone, "us-east-1a");
    assert_eq!(cr1.reservation.as_ref().map(|r| r.capacity), Some(3));
    assert!(cr1.available);
    let on_demand = price_of(&m5.offerings, "us-east-1a", "on-demand").expect("priced");
    assert!((cr1.price - on_demand / 10_000_000.0).abs() < 1e-15);
    let labels = cr1.all_requirements();
    assert!(labels.get(CAPACITY_RESERVATION_ID).has("cr-1"));
    assert!(labels.get(CAPACITY_RESERVATION_TYPE).has("default"));
    assert!(labels.get(CAPACITY_RESERVATION_INTERRUPTIBLE).has("false"));
    assert!(labels.get(TOPOLOGY_ZONE_ID).has("use1-az1"));
    // The type admits a claim pinned to the reservation, and the cheapest
    // offering for a claim without one is the reservation.
    let pinned: Requirements = [
        Requirement::in_values(CAPACITY_RESERVATION_ID, ["cr-1"]),
        Requirement::in_values(CAPACITY_TYPE_LABEL_KEY, [CAPACITY_TYPE_RESERVED]),
    ]
    .into_iter()
    .collect();
    assert!(m5.intersects(&pinned));
    assert_eq!(
        m5.cheapest_offering(&Requirements::new())
            .and_then(Offering::reservation_id),
        Some("cr-1")
    );
}

#[test]
fn reserved_offerings_are_unavailable_when_full_expiring_or_out_of_zone() {
    let mut expiring = reservation("cr-exp", "m5.large", "us-east-1a");
    expiring["state"] = json!("expiring");
    let mut block = reservation("cr-block", "m5.large", "us-east-1b");
    block["reservationType"] = json!("capacity-block");
    block["interruptible"] = json!(true);
    let class = nodeclass(json!([
        expiring,
        block,
        reservation("cr-empty", "m5.large", "us-east-1a"),
        reservation("cr-far", "m5.large", "us-east-1c")
    ]));
    let capacity = [("cr-exp", 2), ("cr-block", 1), ("cr-far", 5)]
        .into_iter()
        .map(|(id, n)| (id.to_owned(), n))
        .collect();
    let options = InstanceTypeOptions {
        reserved_capacity: true,
        reservation_capacity: capacity,
        ..InstanceTypeOptions::default()
    };
    let types = instance_types_for(catalog(), REGION, &class, &options).expect("types");
    let m5 = m5_large(&types);
    let available = |id: &str| {
        m5.offerings
            .iter()
            .find(|o| o.reservation_id() == Some(id))
            .map(|o| o.available)
    };
    assert_eq!(available("cr-exp"), Some(false));
    assert_eq!(available("cr-empty"), Some(false));
    assert_eq!(available("cr-far"), Some(false));
    assert_eq!(available("cr-block"), Some(true));
    let block = m5
        .offerings
        .iter()
        .find(|o| o.reservation_id() == Some("cr-block"))
        .expect("block");
    assert!(
        block
            .requirements
            .get(CAPACITY_RESERVATION_TYPE)
            .has("capacity-block")
    );
    assert!(
        block
            .requirements
            .get(CAPACITY_RESERVATION_INTERRUPTIBLE)
            .has("true")
    );
    // Unavailable reservations' zones do not reach the type.
    assert!(!m5.requirements.get(LABEL_TOPOLOGY_ZONE).has("us-east-1c"));
}

#[test]
fn instance_types_for_is_deterministic_and_offers_the_subnet_zones() {
    let class = nodeclass(json!([reservation("cr-1", "m5.large", "us-east-1a")]));
    let options = InstanceTypeOptions {
        reserved_capacity: true,
        reservation_capacity: [("cr-1".to_owned(), 1)].into_iter().collect(),
        ..InstanceTypeOptions::default()
    };
    let first = instance_types_for(catalog(), REGION, &class, &options).expect("types");
    let second = instance_types_for(catalog(), REGION, &class, &options).expect("types");
    assert_eq!(first, second);
    let m5 = m5_large(&first);
    let zone = m5.requirements.get(LABEL_TOPOLOGY_ZONE);
    assert!(zone.has("us-east-1a") && zone.has("us-east-1b") && !zone.has("us-east-1c"));
    assert!(m5.requirements.get(TOPOLOGY_ZONE_ID).has("use1-az2"));
    let capacity_types = m5.requirements.get(CAPACITY_TYPE_LABEL_KEY);
    assert!(
        capacity_types.has("on-demand")
            && capacity_types.has("spot")
            && capacity_types.has("reserved")
    );
    assert!(instance_types_for(catalog(), "Not a region", &class, &options).is_err());
}
