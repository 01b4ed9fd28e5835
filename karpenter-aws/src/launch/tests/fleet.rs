use crate::ec2::TargetCapacityType;
use std::collections::BTreeMap;

use karpenter_core::resources::ResourceList;
use karpenter_core::scheduling::{LABEL_TOPOLOGY_ZONE, Requirement};
use serde_json::json;

use super::{capacity_types, instance_type, nodeclass, on_demand, reserved, spot};
use crate::launch::{
    AllocationStrategy, FleetInputs, InFlightIps, LaunchError, SubnetInfo, fleet_request,
    launch_tags, launch_templates, zonal_subnets,
};

fn subnets() -> BTreeMap<String, SubnetInfo> {
    let list = ["zone-a", "zone-b"].map(|zone| SubnetInfo {
        id: format!("subnet-{zone}"),
        zone: zone.to_owned(),
        zone_id: None,
        available_ips: 100,
    });
    zonal_subnets(&list, &InFlightIps::new()).expect("subnets")
}

fn status() -> serde_json::Value {
    json!({"amis": [{"id": "ami-x86", "requirements": []}]})
}

#[test]
fn overrides_are_type_by_zone_with_a_subnet_priced_as_offered() {
    let class = nodeclass(status());
    let types = vec![
        instance_type(
            "m5.large",
            vec![
                spot("zone-a", 0.03),
                spot("zone-b", 0.04),
                spot("zone-c", 0.01),
                on_demand("zone-a", 0.096),
            ],
        ),
        instance_type(
            "c5.large",
            vec![spot("zone-a", 0.05).unavailable(), spot("zone-b", 0.035)],
        ),
    ];
    let claim = capacity_types(&["spot", "on-demand"]);
    let templates =
        launch_templates(&class, &types, "spot", &ResourceList::new()).expect("templates");
    let tags = launch_tags(&class, "general", "demo");
    let subnets = subnets();
    let inputs = FleetInputs {
        nodeclass: &class,
        requirements: &claim,
        capacity_type: "spot",
        instance_types: &types,
        templates: &templates,
        subnets: &subnets,
        tags: &tags,
        min_values_relaxed: false,
    };
    let request = fleet_request(&inputs).expect("a request");
    assert_eq!(request.target_capacity_type, TargetCapacityType::Spot);
    assert_eq!(
        request.allocation_strategy,
        Some(AllocationStrategy::PriceCapacityOptimized)
    );
    let overrides: Vec<(&str, &str, Option<&str>, f64)> = request
        .overrides
        .iter()
        .map(|o| {
            (
                o.instance_type.as_str(),
                o.zone.as_str(),
                o.subnet_id.as_deref(),
                o.priority,
            )
        })
        .collect();
    assert_eq!(
        overrides,
        [
            ("m5.large", "zone-a", Some("subnet-zone-a"), 0.03),
            ("m5.large", "zone-b", Some("subnet-zone-b"), 0.04),
            ("c5.large", "zone-b", Some("subnet-zone-b"), 0.035),
        ]
    );
    assert!(request.overrides.iter().all(|o| o.image_id == "ami-x86"));
    assert_eq!(request.context.as_deref(), Some("ctx-1"));
    let relaxed = fleet_request(&FleetInputs {
        min_values_relaxed: true,
        ..inputs
    })
    .expect("request");
    assert_eq!(relaxed.context, None);

    let od =
        launch_templates(&class, &types, "on-demand", &ResourceList::new()).expect("templates");
    let request = fleet_request(&FleetInputs {
        capacity_type: "on-demand",
        templates: &od,
        ..inputs
    })
    .expect("a request");
    assert_eq!(request.target_capacity_type.as_str(), "on-demand");
    assert_eq!(
        request.allocation_strategy.map(AllocationStrategy::as_str),
        Some("lowest-price")
    );
    assert_eq!(request.overrides.len(), 1);

    let mut zone_c = claim.clone();
    zone_c.add(Requirement::in_values(LABEL_TOPOLOGY_ZONE, ["zone-c"]));
    let err = fleet_request(&FleetInputs {
        requirements: &zone_c,
        ..inputs
    })
    .expect_err("no subnet");
    assert!(
        matches!(
            err,
            LaunchError::Create {
                reason: "LaunchFailed",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn reserved_launches_target_the_reservations_kind() {
    let class = nodeclass(status());
    let claim = capacity_types(&["reserved", "on-demand"]);
    let subnets = subnets();
    let tags = BTreeMap::new();
    let cases = [
        (
            "default",
            false,
            TargetCapacityType::OnDemand,
            Some(AllocationStrategy::LowestPrice),
            false,
        ),
        (
            "capacity-block",
            false,
            TargetCapacityType::CapacityBlock,
            None,
            false,
        ),
        (
            "default",
            true,
            TargetCapacityType::ReservedCapacity,
            None,
            true,
        ),
    ];
    for (kind, interruptible, target, strategy, options) in cases {
        let types = vec![instance_type(
            "p5.48xlarge",
            vec![
                reserved("zone-a", 0.1, "cr-a", kind, interruptible),
                reserved("zone-b", 0.2, "cr-b", kind, interruptible),
                on_demand("zone-a", 98.0),
            ],
        )];
        let templates =
            launch_templates(&class, &types, "reserved", &ResourceList::new()).expect("templates");
        let inputs = FleetInputs {
            nodeclass: &class,
            requirements: &claim,
            capacity_type: "reserved",
            instance_types: &types,
            templates: &templates,
            subnets: &subnets,
            tags: &tags,
            min_values_relaxed: false,
        };
        let request = fleet_request(&inputs).expect("a request");
        assert_eq!(
            request.target_capacity_type, target,
            "{kind} {interruptible}"
        );
        assert_eq!(request.allocation_strategy, strategy);
        assert_eq!(request.interruptible_reservation, options);
        let mut overrides: Vec<(&str, Option<&str>, f64)> = request
            .overrides
            .iter()
            .map(|o| (o.zone.as_str(), o.subnet_id.as_deref(), o.priority))
            .collect();
        overrides.sort_by(|a, b| a.0.cmp(b.0));
        // A reservation's template places by zone, without a subnet.
        assert_eq!(overrides, [("zone-a", None, 0.1), ("zone-b", None, 0.2)]);
    }
}

#[test]
fn launch_tags_are_the_classes_with_upstreams_static_tags_winning() {
    let class = nodeclass(status());
    let tags = launch_tags(&class, "general", "demo");
    let expected: BTreeMap<String, String> = [
        ("eks:eks-cluster-name", "demo"),
        ("karpenter.k8s.aws/ec2nodeclass", "default"),
        ("karpenter.sh/nodepool", "general"),
        ("kubernetes.io/cluster/demo", "owned"),
        ("team", "web"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(tags, expected);
}
