//! Upstream's compatibility table (`compatibility/suite_test.go`), for the
//! cases the catalog can express: the ENA case has no data here, and the
//! placement group and nested virtualization cases no NodeClass input yet.

use serde_json::{Value, json};

use super::*;
use crate::instancetype::{InstanceTypeOptions, instance_types_for};

fn catalog() -> &'static Catalog {
    Catalog::embedded().expect("embedded catalog")
}

/// A node class of `family` with `extra` merged into its spec, whose
/// subnets reach two zones.
fn class(family: &str, extra: Value) -> EC2NodeClass {
    let terms = match family {
        "Custom" => json!([{"id": "ami-0123456789abcdef0"}]),
        other => json!([{"alias": format!("{}@latest", other.to_ascii_lowercase())}]),
    };
    let mut spec = json!({
        "amiFamily": family,
        "amiSelectorTerms": terms,
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
    });
    if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), extra) {
        spec.extend(extra);
    }
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": spec,
        "status": {"subnets": [
            {"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"},
            {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"}
        ]}
    }))
    .expect("node class")
}

fn catalog_facts(name: &str) -> TypeFacts<'static> {
    TypeFacts::of(catalog(), catalog().record(name).expect("record"))
}

#[test]
fn ami_family_compatibility() {
    let cases = [
        ("a1.medium", "Custom", true),
        ("a1.large", "Custom", true),
        ("t3.medium", "Custom", true),
        ("a1.medium", "AL2023", false),
        ("t3.medium", "AL2023", true),
        ("a1.large", "Bottlerocket", true),
    ];
    for (name, family, expected) in cases {
        let nodeclass = class(family, json!({}));
        let allowed = Compatibility::of(&nodeclass).allows(&catalog_facts(name));
        assert_eq!(allowed, expected, "{name} with {family}");
    }
}

fn interface(card: i64, device: i64, kind: &str) -> Value {
    json!({"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind})
}

#[test]
fn network_interface_compatibility() {
    // Upstream's `makeNetworkInfo(cards, devices, efa)`: `cards` cards of
    // `devices` ENIs each, and at most `efa` EFA interfaces (0: no EFA).
    let primary = interface(0, 0, "interface");
    let cases = [
        (
            "one EFA interface where one is allowed",
            vec![primary.clone(), interface(0, 1, "efa-only")],
            (1, 2, 1),
            true,
        ),
        (
            "two EFA interfaces over two cards",
            vec![
                primary.clone(),
                interface(0, 1, "efa-only"),
                interface(1, 0, "efa-only"),
            ],
            (2, 2, 2),
            true,
        ),
        (
            "EFA interfaces over the maximum",
            vec![
                primary.clone(),
                interface(0, 1, "efa-only"),
                interface(1, 0, "efa-only"),
            ],
            (2, 2, 1),
            false,
        ),
        (
            "an EFA interface on a type without EFA",
            vec![primary.clone(), interface(0, 1, "efa-only")],
            (1, 4, 0),
            false,
        ),
        (
            "a card index beyond the type's cards",
            vec![interface(1, 0, "interface")],
            (1, 4, 0),
            false,
        ),
        (
            "a device index beyond the card's ENIs",
            vec![interface(0, 5, "interface")],
            (1, 4, 0),
            false,
        ),
    ];
    for (case, interfaces, (cards, devices, efa), expected) in cases {
        let nodeclass = class("AL2023", json!({"networkInterfaces": interfaces}));
        let cards: Vec<(u32, u32)> = (0..cards).map(|index| (index, devices)).collect();
        let facts = TypeFacts {
            name: "m5.large",
            hypervisor: Some("nitro"),
            network_cards: Some(&cards),
            max_efa_interfaces: efa,
        };
        assert_eq!(
            Compatibility::of(&nodeclass).allows(&facts),
            expected,
            "{case}"
        );
    }
}

#[test]
fn interfaces_need_known_network_cards_and_no_interfaces_need_nothing() {
    let facts = TypeFacts {
        name: "m5.large",
        hypervisor: Some("nitro"),
        network_cards: None,
        max_efa_interfaces: 0,
    };
    let plain = class("AL2023", json!({}));
    assert!(Compatibility::of(&plain).allows(&facts));
    let configured = class(
        "AL2023",
        json!({"networkInterfaces": [interface(0, 0, "interface")]}),
    );
    assert!(!Compatibility::of(&configured).allows(&facts));
}

#[test]
fn connection_tracking_compatibility() {
    let tracking = json!({"connectionTracking": {"tcpEstablishedTimeout": 300}});
    let cases = [
        ("nitro", true, true),
        ("xen", true, false),
        ("xen", false, true),
        ("nitro", false, true),
    ];
    for (hypervisor, tracked, expected) in cases {
        let extra = if tracked { tracking.clone() } else { json!({}) };
        let nodeclass = class("AL2023", extra);
        let facts = TypeFacts {
            name: "m5.large",
            hypervisor: Some(hypervisor),
            network_cards: None,
            max_efa_interfaces: 0,
        };
        let allowed = Compatibility::of(&nodeclass).allows(&facts);
        assert_eq!(allowed, expected, "{hypervisor}, tracking {tracked}");
    }
    // From the catalog: bare metal has an empty hypervisor, m4 is Xen.
    let nodeclass = class("AL2023", tracking);
    let check = Compatibility::of(&nodeclass);
    assert!(check.allows(&catalog_facts("m5.large")));
    assert!(!check.allows(&catalog_facts("m4.large")));
    assert!(!check.allows(&catalog_facts("c5.metal")));
}

/// Whether `name` has offerings and whether any is available, for `nodeclass`.
fn offered(nodeclass: &EC2NodeClass, name: &str) -> (usize, bool) {
    let types = instance_types_for(
        catalog(),
        "us-east-1",
        nodeclass,
        &InstanceTypeOptions::default(),
    )
    .expect("types");
    let it = types.iter().find(|t| t.name == name).expect("type kept");
    (it.offerings.len(), it.offerings.iter().any(|o| o.available))
}

#[test]
fn an_incompatible_type_keeps_its_offerings_all_unavailable() {
    let al2023 = class("AL2023", json!({}));
    assert_eq!(offered(&al2023, "a1.large"), (4, false));
    assert_eq!(offered(&al2023, "m5.large"), (4, true));
    let bottlerocket = class("Bottlerocket", json!({}));
    assert_eq!(offered(&bottlerocket, "a1.large"), (4, true));

    // Two efa-only interfaces: p5.48xlarge (32 EFA interfaces, 32 cards)
    // hosts them, m5.large (no EFA, one card) does not.
    let efa = class(
        "AL2023",
        json!({"networkInterfaces": [
            interface(0, 0, "interface"),
            interface(0, 1, "efa-only"),
            interface(1, 0, "efa-only")
        ]}),
    );
    assert_eq!(offered(&efa, "p5.48xlarge"), (4, true));
    assert_eq!(offered(&efa, "m5.large"), (4, false));
}
