use karpenter_core::scheduling::{LABEL_TOPOLOGY_ZONE, Requirement};

use super::{
    available, capacity_types, instance_type, names, on_demand, requirements, reserved,
    reserved_with, spot,
};
use crate::launch::filters::reserved::{
    capacity_block, capacity_reservation_type, reserved_offering,
};

const KINDS: [(&str, bool); 3] = [
    ("default", false),
    ("capacity-block", false),
    ("default", true),
];

#[test]
fn the_kind_with_the_cheapest_reservation_is_kept_alone() {
    let claim = capacity_types(&["reserved", "on-demand"]);
    for (kind, interruptible) in KINDS {
        for (other, other_interruptible) in KINDS
            .iter()
            .copied()
            .filter(|k| *k != (kind, interruptible))
        {
            let types = vec![
                instance_type(
                    "selected",
                    vec![
                        reserved("zone-1a", 5.0, "cr-a", kind, interruptible),
                        on_demand("zone-1a", 50.0),
                    ],
                ),
                instance_type(
                    "also-selected",
                    vec![reserved("zone-1a", 10.0, "cr-b", kind, interruptible)],
                ),
                instance_type(
                    "rejected",
                    vec![
                        reserved("zone-1a", 10.0, "cr-c", other, other_interruptible),
                        reserved("zone-1a", 1.0, "cr-d", other, other_interruptible).unavailable(),
                    ],
                ),
            ];
            let kept = capacity_reservation_type(&claim, types);
            assert_eq!(
                names(&kept),
                ["selected", "also-selected"],
                "{kind} {interruptible}"
            );
            // Only the reserved offerings of that kind remain.
            assert_eq!(
                available(&kept[0]),
                [(
                    "zone-1a".to_owned(),
                    "reserved".to_owned(),
                    Some("cr-a".to_owned())
                )]
            );
        }
    }
}

#[test]
fn equal_prices_prefer_default_then_blocks_then_interruptible() {
    let claim = capacity_types(&["reserved"]);
    for (i, (kind, interruptible)) in KINDS.iter().copied().enumerate() {
        for (other, other_interruptible) in KINDS[i + 1..].iter().copied() {
            let types = vec![
                instance_type(
                    "later",
                    vec![reserved("zone-1a", 5.0, "cr-b", other, other_interruptible)],
                ),
                instance_type(
                    "preferred",
                    vec![reserved("zone-1a", 5.0, "cr-a", kind, interruptible)],
                ),
            ];
            assert_eq!(
                names(&capacity_reservation_type(&claim, types)),
                ["preferred"]
            );
        }
    }
}

#[test]
fn reservation_kind_filter_leaves_claims_without_reserved_alone() {
    let types = vec![
        instance_type(
            "a",
            vec![
                reserved("zone-1a", 1.0, "cr-a", "default", false),
                on_demand("zone-1a", 2.0),
            ],
        ),
        instance_type(
            "b",
            vec![reserved("zone-1a", 1.0, "cr-b", "capacity-block", false)],
        ),
    ];
    let on_demand_only = capacity_types(&["on-demand"]);
    assert_eq!(
        capacity_reservation_type(&on_demand_only, types.clone()),
        types
    );
    let no_reservations = vec![instance_type("c", vec![on_demand("zone-1a", 1.0)])];
    let claim = capacity_types(&["reserved", "on-demand"]);
    assert_eq!(
        capacity_reservation_type(&claim, no_reservations.clone()),
        no_reservations
    );
}

#[test]
fn a_capacity_block_launch_keeps_the_cheapest_available_compatible_block() {
    let claim = requirements(vec![
        Requirement::in_values("karpenter.sh/capacity-type", ["reserved"]),
        Requirement::not_in(LABEL_TOPOLOGY_ZONE, ["forbidden-zone"]),
    ]);
    let block = |zone, price, id| reserved(zone, price, id, "capacity-block", false);
    let cases = [
        (
            vec![
                block("zone-1a", 1.0, "cheapest"),
                block("zone-1a", 2.0, "expensive"),
            ],
            "cheapest",
        ),
        (
            vec![
                block("zone-1a", 1.0, "cheapest").unavailable(),
                block("zone-1a", 1.5, "cheapest-available"),
                block("zone-1a", 2.0, "expensive"),
            ],
            "cheapest-available",
        ),
        (
            vec![
                block("forbidden-zone", 1.0, "cheapest"),
                block("zone-1a", 1.5, "cheapest-compatible"),
                block("zone-1a", 2.0, "expensive"),
            ],
            "cheapest-compatible",
        ),
    ];
    for (offerings, expected) in cases {
        let types = vec![
            instance_type("dearer", vec![block("zone-1a", 3.0, "other")]),
            instance_type("chosen", offerings),
        ];
        let kept = capacity_block(&claim, types);
        assert_eq!(names(&kept), ["chosen"]);
        let left = available(&kept[0]);
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].2.as_deref(), Some(expected));
    }
}

#[test]
fn non_block_reservations_and_non_reserved_claims_skip_the_block_filter() {
    let default_types = vec![
        instance_type(
            "a",
            vec![reserved("zone-1a", 1.0, "cr-a", "default", false)],
        ),
        instance_type(
            "b",
            vec![reserved("zone-1a", 2.0, "cr-b", "default", false)],
        ),
    ];
    let claim = capacity_types(&["reserved"]);
    assert_eq!(capacity_block(&claim, default_types.clone()), default_types);
    let blocks = vec![
        instance_type(
            "a",
            vec![
                reserved("zone-1a", 1.0, "cr-a", "capacity-block", false),
                on_demand("zone-1a", 1.0),
            ],
        ),
        instance_type(
            "b",
            vec![reserved("zone-1a", 2.0, "cr-b", "capacity-block", false)],
        ),
    ];
    let on_demand_only = capacity_types(&["on-demand"]);
    assert_eq!(capacity_block(&on_demand_only, blocks.clone()), blocks);
}

#[test]
fn one_reservation_per_zone_the_one_with_most_room() {
    let claim = capacity_types(&["reserved", "on-demand", "spot"]);
    let types = vec![
        instance_type("non-reserved", vec![on_demand("1", 1.0), spot("1", 0.5)]),
        instance_type(
            "reserved-a",
            vec![
                on_demand("1", 1.0),
                spot("1", 0.5),
                reserved_with("1", 0.1, "kept", "default", false, 5),
                reserved_with("2", 0.1, "kept", "default", false, 6),
                reserved_with("2", 0.1, "rejected", "default", false, 5),
            ],
        ),
        instance_type(
            "reserved-b",
            vec![
                on_demand("1", 1.0),
                reserved_with("1", 0.1, "kept", "default", false, 1),
                reserved_with("1", 0.1, "rejected", "default", false, 2).unavailable(),
            ],
        ),
    ];
    let kept = reserved_offering(&claim, types);
    assert_eq!(names(&kept), ["reserved-a", "reserved-b"]);
    assert_eq!(available(&kept[0]).len(), 2);
    for it in &kept {
        for (_, capacity_type, id) in available(it) {
            assert_eq!(
                (capacity_type.as_str(), id.as_deref()),
                ("reserved", Some("kept"))
            );
        }
    }
    let none_reserved = vec![instance_type("plain", vec![on_demand("1", 1.0)])];
    assert_eq!(
        reserved_offering(&claim, none_reserved.clone()),
        none_reserved
    );
}
