use karpenter_core::resources::ResourceList;
use karpenter_core::scheduling::{LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, Requirement};

use super::{
    available, capacity_types, instance_type, names, on_demand, requirements, resources, sized,
    spot,
};
use crate::launch::filters::{compatible_available, exotic, spot_offering};
use crate::launch::{LaunchError, MAX_LAUNCH_INSTANCE_TYPES, capacity_type, filter_instance_types};

#[test]
fn compatible_available_keeps_types_matching_requirements_requests_and_offerings() {
    let types = [
        instance_type("fits", vec![on_demand("zone-1a", 1.0)]),
        sized(
            "too-small",
            vec![on_demand("zone-1a", 0.5)],
            resources(1, 2, 10),
        ),
        instance_type("elsewhere", vec![on_demand("zone-1b", 0.5)]),
        instance_type("unavailable", vec![on_demand("zone-1a", 0.5).unavailable()]),
    ];
    let claim = requirements(vec![Requirement::in_values(
        LABEL_TOPOLOGY_ZONE,
        ["zone-1a"],
    )]);
    let kept = compatible_available(&claim, &resources(2, 4, 1), &types);
    assert_eq!(names(&kept), ["fits"]);
    let by_name = requirements(vec![Requirement::not_in(
        LABEL_INSTANCE_TYPE_STABLE,
        ["fits"],
    )]);
    let kept = compatible_available(&by_name, &ResourceList::new(), &types);
    assert_eq!(names(&kept), ["too-small", "elsewhere"]);
}

#[test]
fn nothing_compatible_is_insufficient_capacity() {
    let types = [instance_type(
        "only",
        vec![on_demand("zone-1a", 1.0).unavailable()],
    )];
    let err = filter_instance_types(&requirements(vec![]), &ResourceList::new(), &types)
        .expect_err("nothing to launch");
    assert!(matches!(err, LaunchError::InsufficientCapacity(_)), "{err}");
}

fn with_capacity(name: &str, resource: &str) -> karpenter_core::cloudprovider::InstanceType {
    let mut capacity = resources(4, 16, 110);
    capacity.set(resource, 1000);
    sized(name, vec![on_demand("zone-1a", 1.0)], capacity)
}

fn with_size(name: &str, size: &str) -> karpenter_core::cloudprovider::InstanceType {
    let mut it = instance_type(name, vec![on_demand("zone-1a", 1.0)]);
    it.requirements.add(Requirement::in_values(
        "karpenter.k8s.aws/instance-size",
        [size],
    ));
    it
}

#[test]
fn exotic_types_are_dropped_unless_nothing_else_is_left() {
    let none = requirements(vec![]);
    for resource in [
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "amd.com/gpu",
        "nvidia.com/gpu",
        "habana.ai/gaudi",
    ] {
        let types = vec![
            instance_type("generic", vec![on_demand("zone-1a", 1.0)]),
            with_capacity("exotic", resource),
        ];
        assert_eq!(names(&exotic(&none, types)), ["generic"], "{resource}");
    }
    for resource in ["vpc.amazonaws.com/efa", "vpc.amazonaws.com/pod-eni", "cpu"] {
        let types = vec![
            with_capacity("plain", resource),
            with_capacity("gpu", "nvidia.com/gpu"),
        ];
        assert_eq!(names(&exotic(&none, types)), ["plain"], "{resource}");
    }
    let metal = vec![
        with_size("generic", "large"),
        with_size("c5.metal", "metal"),
    ];
    assert_eq!(names(&exotic(&none, metal)), ["generic"]);
    let metal_24xl = vec![
        with_size("generic", "large"),
        with_size("m7i.metal-24xl", "metal-24xl"),
    ];
    assert_eq!(names(&exotic(&none, metal_24xl)), ["generic"]);
    let only_exotic = vec![
        with_capacity("gpu", "nvidia.com/gpu"),
        with_size("c5.metal", "metal"),
    ];
    assert_eq!(names(&exotic(&none, only_exotic)), ["gpu", "c5.metal"]);
    let min_values = requirements(vec![
        Requirement::exists(LABEL_INSTANCE_TYPE_STABLE).with_min_values(Some(2)),
    ]);
    let types = vec![
        instance_type("generic", vec![on_demand("zone-1a", 1.0)]),
        with_capacity("gpu", "nvidia.com/gpu"),
    ];
    assert_eq!(names(&exotic(&min_values, types)), ["generic", "gpu"]);
}

#[test]
fn spot_dearer_than_the_cheapest_on_demand_is_dropped() {
    let both = capacity_types(&["spot", "on-demand"]);
    let types = vec![
        instance_type(
            "od",
            vec![on_demand("zone-1a", 5.0), on_demand("zone-1b", 10.0)],
        ),
        instance_type(
            "cheap-spot",
            vec![spot("zone-1a", 1.0), spot("zone-1b", 2.0)],
        ),
        instance_type(
            "mixed-spot",
            vec![spot("zone-1a", 1.0), spot("zone-1b", 10.0)],
        ),
        instance_type(
            "dear-spot",
            vec![spot("zone-1a", 10.0), spot("zone-1b", 15.0)],
        ),
    ];
    let kept = spot_offering(&both, types.clone());
    assert_eq!(names(&kept), ["od", "cheap-spot", "mixed-spot"]);
    assert_eq!(available(&kept[0]).len(), 2);
    assert_eq!(available(&kept[1]).len(), 2);
    assert_eq!(
        available(&kept[2]),
        [("zone-1a".to_owned(), "spot".to_owned(), None)]
    );
    // Unchanged: spot only, no on-demand offering, or minValues.
    let spot_only = capacity_types(&["spot"]);
    assert_eq!(spot_offering(&spot_only, types.clone()), types);
    let no_on_demand = types[1..].to_vec();
    assert_eq!(spot_offering(&both, no_on_demand.clone()), no_on_demand);
    let mut min_values = both.clone();
    min_values.add(Requirement::exists(LABEL_INSTANCE_TYPE_STABLE).with_min_values(Some(2)));
    assert_eq!(spot_offering(&min_values, types.clone()), types);
}

#[test]
fn the_cut_keeps_the_sixty_cheapest_in_price_then_name_order() {
    let types: Vec<_> = (0..70)
        .map(|i| {
            instance_type(
                &format!("t{i:02}"),
                vec![on_demand("zone-1a", f64::from(70 - i))],
            )
        })
        .collect();
    let kept = filter_instance_types(&requirements(vec![]), &ResourceList::new(), &types)
        .expect("launchable");
    assert_eq!(kept.len(), MAX_LAUNCH_INSTANCE_TYPES);
    assert_eq!(kept[0].name, "t69");
    assert_eq!(kept[59].name, "t10");
    let tied = vec![
        instance_type("b", vec![on_demand("zone-1a", 1.0)]),
        instance_type("a", vec![on_demand("zone-1a", 1.0)]),
    ];
    let kept = filter_instance_types(&requirements(vec![]), &ResourceList::new(), &tied)
        .expect("launchable");
    assert_eq!(names(&kept), ["a", "b"]);
}

#[test]
fn the_cut_that_breaks_min_values_is_insufficient_capacity() {
    // 61 types share one family value; the dearest has the only other one.
    let family = "karpenter.k8s.aws/instance-family";
    let mut types: Vec<_> = (0..61)
        .map(|i| {
            let mut it = instance_type(
                &format!("t{i:02}"),
                vec![on_demand("zone-1a", f64::from(i + 1))],
            );
            let value = if i == 60 { "c5" } else { "m5" };
            it.requirements.add(Requirement::in_values(family, [value]));
            it
        })
        .collect();
    let claim = requirements(vec![
        Requirement::in_values(family, ["m5", "c5"]).with_min_values(Some(2)),
    ]);
    let err = filter_instance_types(&claim, &ResourceList::new(), &types).expect_err("cut");
    assert!(matches!(err, LaunchError::InsufficientCapacity(_)), "{err}");
    types.truncate(60);
    types[0].requirements.remove(family);
    types[0]
        .requirements
        .add(Requirement::in_values(family, ["c5"]));
    let kept = filter_instance_types(&claim, &ResourceList::new(), &types).expect("met");
    assert_eq!(kept.len(), 60);
}

#[test]
fn capacity_type_prefers_reserved_then_spot_then_on_demand() {
    let types = vec![
        instance_type("a", vec![on_demand("zone-1a", 1.0), spot("zone-1a", 0.5)]),
        instance_type(
            "b",
            vec![super::reserved("zone-1a", 0.1, "cr-1", "default", false)],
        ),
    ];
    let all = capacity_types(&["reserved", "spot", "on-demand"]);
    assert_eq!(capacity_type(&all, &types), "reserved");
    assert_eq!(capacity_type(&requirements(vec![]), &types), "reserved");
    assert_eq!(
        capacity_type(&capacity_types(&["spot", "on-demand"]), &types),
        "spot"
    );
    assert_eq!(
        capacity_type(&capacity_types(&["on-demand"]), &types),
        "on-demand"
    );
    let spot_gone = vec![instance_type(
        "a",
        vec![
            on_demand("zone-1a", 1.0),
            spot("zone-1a", 0.5).unavailable(),
        ],
    )];
    assert_eq!(capacity_type(&all, &spot_gone), "on-demand");
    let mut in_zone_b = all.clone();
    in_zone_b.add(Requirement::in_values(LABEL_TOPOLOGY_ZONE, ["zone-1b"]));
    assert_eq!(capacity_type(&in_zone_b, &types), "on-demand");
}

#[test]
fn the_filters_compose_in_upstreams_order() {
    let claim = capacity_types(&["spot", "on-demand"]);
    let types = vec![
        with_capacity("p3.2xlarge", "nvidia.com/gpu"),
        instance_type(
            "m5.large",
            vec![on_demand("zone-1a", 0.096), spot("zone-1a", 0.2)],
        ),
        instance_type(
            "c5.large",
            vec![spot("zone-1a", 0.05), spot("zone-1b", 0.5)],
        ),
        instance_type("r5.large", vec![spot("zone-1a", 0.3)]),
    ];
    let kept = filter_instance_types(&claim, &ResourceList::new(), &types).expect("launchable");
    // The GPU type is exotic; r5's only spot offering costs more than m5 on
    // demand; the rest are ordered by their cheapest offering left.
    assert_eq!(names(&kept), ["c5.large", "m5.large"]);
    assert_eq!(
        available(&kept[0]),
        [("zone-1a".to_owned(), "spot".to_owned(), None)]
    );
    assert_eq!(capacity_type(&claim, &kept), "spot");
}
