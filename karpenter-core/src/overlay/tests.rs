//! The overlay store's decisions, after upstream's
//! `pkg/controllers/nodeoverlay/suite_test.go`.

use serde_json::{Value, json};

use super::*;
use crate::cloudprovider::InstanceType;
use crate::scheduling::CapacityType;
use crate::snapshot::build::{InstanceTypeBuilder, NodePoolBuilder};

/// Two pools (`a`, and `b` labelled `team: web`) sharing two types: `small`
/// (spot and on-demand in zone-1, on-demand in zone-2) and `large`.
fn snapshot() -> Snapshot {
    let types = vec![
        InstanceTypeBuilder::new("small")
            .cpu("2")
            .memory("4Gi")
            .offering("zone-1", CapacityType::Spot, 0.05)
            .offering("zone-1", CapacityType::OnDemand, 0.10)
            .offering("zone-2", CapacityType::OnDemand, 0.10)
            .build(),
        InstanceTypeBuilder::new("large")
            .cpu("8")
            .memory("16Gi")
            .offering("zone-1", CapacityType::OnDemand, 0.40)
            .build(),
    ];
    Snapshot {
        node_pools: vec![
            NodePoolBuilder::new("a").build(),
            NodePoolBuilder::new("b").label("team", "web").build(),
        ],
        ..Snapshot::default()
    }
    .with_instance_types("a", types.clone())
    .with_instance_types("b", types)
}

fn overlay(name: &str, spec: Value) -> NodeOverlay {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("an overlay")
}

fn requirement(key: &str, values: &[&str]) -> Value {
    json!({"key": key, "operator": "In", "values": values})
}

fn types<'s>(snapshot: &'s Snapshot, pool: &str) -> &'s [InstanceType] {
    &snapshot.instance_types[pool]
}

/// The prices of `pool`'s type `name`, offering by offering.
fn prices(snapshot: &Snapshot, pool: &str, name: &str) -> Vec<f64> {
    let ty = types(snapshot, pool)
        .iter()
        .find(|t| t.name == name)
        .expect("a type");
    ty.offerings
        .iter()
        .map(|o| (o.price * 1e6).round() / 1e6)
        .collect()
}

fn capacity(snapshot: &Snapshot, pool: &str, name: &str, resource: &str) -> i64 {
    let ty = types(snapshot, pool)
        .iter()
        .find(|t| t.name == name)
        .expect("a type");
    ty.capacity.get(resource)
}

fn verdicts(outcomes: &[OverlayOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| match &o.verdict {
            OverlayVerdict::Applied { instance_types } => format!("{}: {instance_types}", o.name),
            OverlayVerdict::Conflict { with } => format!("{}: conflicts with {with}", o.name),
            OverlayVerdict::Invalid(errors) => format!("{}: {} error(s)", o.name, errors.len()),
        })
        .collect()
}

#[test]
fn no_overlay_changes_nothing() {
    let mut overlaid = snapshot();
    assert!(apply(&mut overlaid, &[]).is_empty());
    assert_eq!(prices(&overlaid, "a", "small"), [0.05, 0.10, 0.10]);
}

#[test]
fn a_price_adjustment_changes_the_offerings_it_selects() {
    let mut snapshot = snapshot();
    let outcomes = apply(
        &mut snapshot,
        &[overlay(
            "on-demand-discount",
            json!({"requirements": [requirement("karpenter.sh/capacity-type", &["on-demand"])],
                   "priceAdjustment": "-10%"}),
        )],
    );
    // Both types in both pools.
    assert_eq!(verdicts(&outcomes), ["on-demand-discount: 4"]);
    assert_eq!(prices(&snapshot, "a", "small"), [0.05, 0.09, 0.09]);
    assert_eq!(prices(&snapshot, "b", "large"), [0.36]);
}

#[test]
fn a_price_override_and_a_fixed_adjustment_never_below_zero() {
    let mut snapshot = snapshot();
    apply(
        &mut snapshot,
        &[
            overlay(
                "zone-2",
                json!({"requirements": [requirement("topology.kubernetes.io/zone", &["zone-2"])],
                       "price": "0.5"}),
            ),
            overlay(
                "large",
                json!({"requirements": [requirement("node.kubernetes.io/instance-type", &["large"])],
                       "priceAdjustment": "-1"}),
            ),
        ],
    );
    assert_eq!(prices(&snapshot, "a", "small"), [0.05, 0.10, 0.5]);
    assert_eq!(prices(&snapshot, "a", "large"), [0.0]);
}

#[test]
fn the_heavier_overlay_sets_the_price() {
    // upstream: "should apply higher weight overlay when multiple overlays match the same instance type"
    let mut snapshot = snapshot();
    let all = json!([requirement("node.kubernetes.io/instance-type", &["small"])]);
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "light",
                json!({"requirements": all, "price": "1", "weight": 1}),
            ),
            overlay(
                "heavy",
                json!({"requirements": all, "price": "2", "weight": 50}),
            ),
        ],
    );
    assert_eq!(verdicts(&outcomes), ["light: 2", "heavy: 2"]);
    assert_eq!(prices(&snapshot, "b", "small"), [2.0, 2.0, 2.0]);
}

#[test]
fn equal_weights_on_one_offering_conflict_and_the_later_is_not_applied_anywhere() {
    // upstream: "should fail when requirements overlays overlap" and "should
    // that there is not a partial application for nodepools". Equal weights
    // are taken last name first: `b-first` before `a-second`.
    let mut snapshot = snapshot();
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "a-second",
                json!({"requirements": [requirement("topology.kubernetes.io/zone", &["zone-1", "zone-2"])],
                       "price": "9", "weight": 5}),
            ),
            overlay(
                "b-first",
                json!({"requirements": [requirement("team", &["web"])], "price": "1", "weight": 5}),
            ),
        ],
    );
    assert_eq!(
        verdicts(&outcomes),
        ["a-second: conflicts with b-first", "b-first: 2"]
    );
    // Not even pool `a`, where `b-first` selects nothing, took `a-second`.
    assert_eq!(prices(&snapshot, "a", "small"), [0.05, 0.10, 0.10]);
    assert_eq!(prices(&snapshot, "b", "small"), [1.0, 1.0, 1.0]);
}

#[test]
fn equal_weights_on_different_offerings_both_apply() {
    // upstream: "should succeed with requirements overlays don't overlap"
    let mut snapshot = snapshot();
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "spot",
                json!({"requirements": [requirement("karpenter.sh/capacity-type", &["spot"])],
                       "price": "0.01", "weight": 5}),
            ),
            overlay(
                "zone-2",
                json!({"requirements": [requirement("topology.kubernetes.io/zone", &["zone-2"])],
                       "price": "0.2", "weight": 5}),
            ),
        ],
    );
    assert!(
        outcomes.iter().all(|o| o.verdict.is_applied()),
        "{outcomes:?}"
    );
    assert_eq!(prices(&snapshot, "a", "small"), [0.01, 0.10, 0.2]);
}

#[test]
fn a_lower_weight_that_touched_an_offering_takes_its_place_in_conflicts() {
    // Upstream records the lowest weight to select an offering, even one that
    // did not set its price: a third overlay of that weight then conflicts.
    let mut snapshot = snapshot();
    let small = json!([requirement("node.kubernetes.io/instance-type", &["small"])]);
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "heavy",
                json!({"requirements": small, "price": "1", "weight": 9}),
            ),
            overlay(
                "z-light",
                json!({"requirements": small, "price": "2", "weight": 3}),
            ),
            overlay(
                "a-light",
                json!({"requirements": small, "price": "3", "weight": 3}),
            ),
        ],
    );
    assert_eq!(
        verdicts(&outcomes),
        ["heavy: 2", "z-light: 2", "a-light: conflicts with z-light"]
    );
    assert_eq!(prices(&snapshot, "a", "small"), [1.0, 1.0, 1.0]);
}

#[test]
fn capacity_merges_the_first_to_name_a_resource_winning_it() {
    // upstream: "should update capacity for one instance types from multiple overlays"
    let mut snapshot = snapshot();
    let small = json!([requirement("node.kubernetes.io/instance-type", &["small"])]);
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "fuse",
                json!({"requirements": small, "capacity": {"smarter-devices/fuse": "2"}, "weight": 20}),
            ),
            overlay(
                "more",
                json!({"requirements": small,
                       "capacity": {"smarter-devices/fuse": "9", "example.com/nic": 4}, "weight": 10}),
            ),
        ],
    );
    assert!(
        outcomes.iter().all(|o| o.verdict.is_applied()),
        "{outcomes:?}"
    );
    assert_eq!(
        capacity(&snapshot, "a", "small", "smarter-devices/fuse"),
        2000
    );
    assert_eq!(capacity(&snapshot, "a", "small", "example.com/nic"), 4000);
    assert_eq!(capacity(&snapshot, "a", "large", "example.com/nic"), 0);
    // Allocatable follows.
    let small = types(&snapshot, "b")
        .iter()
        .find(|t| t.name == "small")
        .unwrap();
    assert_eq!(small.allocatable().get("example.com/nic"), 4000);
}

#[test]
fn equal_weights_naming_one_resource_conflict_and_different_resources_merge() {
    // upstream: "should fail with conflicting capacity overlays with overlapping
    // requirements" and "should pass with non conflicting capacity overlays with
    // overlapping requirements"
    let all = json!([requirement("karpenter.sh/nodepool", &["a", "b"])]);
    let one = overlay(
        "one",
        json!({"requirements": all, "capacity": {"example.com/x": "1"}}),
    );
    let two = overlay(
        "two",
        json!({"requirements": all, "capacity": {"example.com/x": "2"}}),
    );
    let three = overlay(
        "three",
        json!({"requirements": all, "capacity": {"example.com/y": "3"}}),
    );
    let mut overlaid = snapshot();
    let outcomes = apply(&mut overlaid, &[one.clone(), two.clone()]);
    // Equal weights, last name first: `two`, then `one`, which names its resource.
    assert_eq!(verdicts(&outcomes), ["one: conflicts with two", "two: 4"]);
    assert_eq!(capacity(&overlaid, "a", "large", "example.com/x"), 2000);
    // Upstream judges a conflict against the last overlay to add capacity:
    // taken as two, three, one, `one` meets `three`'s resources, not `two`'s,
    // and is applied; `two` keeps the resource it named first.
    let mut overlaid = snapshot();
    let outcomes = apply(&mut overlaid, &[one, two, three]);
    assert_eq!(verdicts(&outcomes), ["one: 4", "two: 4", "three: 4"]);
    assert_eq!(capacity(&overlaid, "a", "large", "example.com/x"), 2000);
    assert_eq!(capacity(&overlaid, "a", "large", "example.com/y"), 3000);
}

#[test]
fn pools_and_their_template_labels_select_as_upstream() {
    // upstream: "should only apply override for nodepool that defined in the
    // overlay requirements" and "should only apply price adjustments for
    // nodeclaim spec labels that defined in the overlay requirements"
    let mut snapshot = snapshot();
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "pool-a",
                json!({"requirements": [requirement("karpenter.sh/nodepool", &["a"])], "price": "3"}),
            ),
            overlay(
                "web",
                json!({"requirements": [requirement("team", &["web"])],
                       "capacity": {"smarter-devices/fuse": "1"}}),
            ),
            // A label no pool or type defines selects nothing.
            overlay(
                "nobody",
                json!({"requirements": [requirement("example.com/unknown", &["x"])], "price": "7"}),
            ),
        ],
    );
    assert_eq!(verdicts(&outcomes), ["pool-a: 2", "web: 2", "nobody: 0"]);
    assert_eq!(prices(&snapshot, "a", "large"), [3.0]);
    assert_eq!(prices(&snapshot, "b", "large"), [0.40]);
    assert_eq!(capacity(&snapshot, "a", "small", "smarter-devices/fuse"), 0);
    assert_eq!(
        capacity(&snapshot, "b", "small", "smarter-devices/fuse"),
        1000
    );
}

#[test]
fn an_invalid_overlay_is_reported_with_every_problem_and_not_applied() {
    // upstream: "should fail validation for invalid requirements values",
    // "should fail validation for invalid capacity values", and the CRD's rules.
    let mut snapshot = snapshot();
    let outcomes = apply(
        &mut snapshot,
        &[
            overlay(
                "bad",
                json!({
                    "requirements": [
                        {"key": "karpenter.sh/nodepool", "operator": "NotIn"},
                        {"key": "karpenter.sh/custom", "operator": "Exists"},
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["x"]},
                        {"key": "example.com/n", "operator": "Gt", "values": ["-1"]},
                        {"key": "example.com/m", "operator": "Near", "values": ["1"]},
                    ],
                    "price": "1",
                    "priceAdjustment": "+1",
                    "capacity": {"cpu": "1", "example.com/x": "lots"},
                    "weight": 0,
                }),
            ),
            overlay("no-requirements", json!({"price": "1"})),
            overlay(
                "bad-adjustment",
                json!({"requirements": [], "priceAdjustment": "-150%"}),
            ),
        ],
    );
    let OverlayVerdict::Invalid(errors) = &outcomes[0].verdict else {
        panic!("{outcomes:?}");
    };
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    for part in [
        "spec.requirements[0]: key karpenter.sh/nodepool with operator NotIn must have a value",
        "spec.requirements[1]: label domain \"karpenter.sh\" is restricted",
        "spec.requirements[2]",
        "spec.requirements[3]",
        "spec.requirements[4]",
        "cannot set both 'price' and 'priceAdjustment'",
        "spec.capacity.cpu: invalid resource restricted",
        "spec.capacity",
        "spec.weight 0",
    ] {
        assert!(
            text.iter().any(|t| t.contains(part)),
            "{part:?} missing from {text:#?}"
        );
    }
    assert_eq!(errors.len(), 9, "{text:#?}");
    assert_eq!(
        verdicts(&outcomes[1..]),
        ["no-requirements: 1 error(s)", "bad-adjustment: 1 error(s)"]
    );
    assert_eq!(prices(&snapshot, "a", "small"), [0.05, 0.10, 0.10]);
    assert_eq!(capacity(&snapshot, "a", "small", "example.com/x"), 0);
}
