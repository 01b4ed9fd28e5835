//! The labels AWS types carry and the well-known set that names them.

use karpenter_core::scheduling::Operator;
use serde_json::json;

use crate::catalog::Catalog;
use crate::instancetype::labels::{self, well_known_labels};
use crate::instancetype::{InstanceTypeOptions, instance_types, instance_types_for};
use crate::nodeclass::EC2NodeClass;

fn catalog() -> &'static Catalog {
    Catalog::embedded().expect("embedded catalog")
}

/// A Windows 2022 node class with subnets and a capacity reservation, so
/// that its types and offerings carry every label they can.
fn windows_with_reservation() -> EC2NodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": "windows2022@latest"}],
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
        },
        "status": {
            "subnets": [{"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"}],
            "capacityReservations": [{
                "availabilityZone": "us-east-1a", "id": "cr-0123", "instanceMatchCriteria": "targeted",
                "instanceType": "m5.large", "ownerID": "123456789012"
            }]
        }
    }))
    .expect("node class")
}

#[test]
fn every_label_a_type_or_offering_carries_is_well_known() {
    let known = well_known_labels();
    let options = InstanceTypeOptions {
        reserved_capacity: true,
        ..InstanceTypeOptions::default()
    };
    let types = instance_types_for(
        catalog(),
        "us-east-1",
        &windows_with_reservation(),
        &options,
    )
    .expect("types");
    let mut keys: Vec<String> = Vec::new();
    for it in &types {
        keys.extend(it.requirements.keys().map(str::to_owned));
        for offering in &it.offerings {
            keys.extend(offering.requirements.keys().map(str::to_owned));
        }
    }
    keys.sort();
    keys.dedup();
    // The reservation and zone ID labels come from offerings, the Windows
    // build from the family: all of them were seen.
    for key in [
        labels::CAPACITY_RESERVATION_ID,
        labels::TOPOLOGY_ZONE_ID,
        "node.kubernetes.io/windows-build",
        "karpenter.k8s.aws/instance-gpu-name",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} not seen");
    }
    let unknown: Vec<&String> = keys.iter().filter(|k| !known.contains(k)).collect();
    assert!(unknown.is_empty(), "{unknown:?}");
}

#[test]
fn upstreams_other_registered_labels_and_tenancies_are_known() {
    let known = well_known_labels();
    for key in [
        labels::NITRO_SANDBOX,
        labels::PLACEMENT_GROUP_ID,
        labels::PLACEMENT_GROUP_PARTITION,
        "karpenter.k8s.aws/instance-encryption-in-transit-supported",
        "karpenter.sh/capacity-type",
    ] {
        assert!(known.contains(key), "{key}");
    }
    assert!(!known.contains("karpenter.k8s.aws/instance-colour"));
    let tenancies = known
        .known_values(labels::INSTANCE_TENANCY)
        .expect("tenancies");
    assert_eq!(tenancies, ["dedicated", "default"]);
    // The core's own known values survive.
    assert!(known.known_values("karpenter.sh/capacity-type").is_some());
}

#[test]
fn every_type_says_whether_it_is_flex_from_its_family_name() {
    // The oldest pages left the label out of 12 types (p2, g3, u-*tb1,
    // i3.metal); upstream sets it on every type.
    let types = instance_types(catalog(), "us-east-1").expect("types");
    for it in &types {
        let flex = it
            .requirements
            .get("karpenter.k8s.aws/instance-capability-flex");
        assert_eq!(flex.operator(), Operator::In, "{}", it.name);
        let family = it.name.split('.').next().unwrap_or_default();
        let expected = if family.contains("-flex") {
            "true"
        } else {
            "false"
        };
        assert!(flex.has(expected) && flex.len() == 1, "{}", it.name);
    }
    let flex_types = types
        .iter()
        .filter(|t| {
            t.requirements
                .get("karpenter.k8s.aws/instance-capability-flex")
                .has("true")
        })
        .count();
    assert_eq!(flex_types, 35);
}
