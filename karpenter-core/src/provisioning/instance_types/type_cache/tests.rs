//! The cached answers against each type asked alone.

use super::*;
use crate::resources::ResourceList;
use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, LABEL_ARCH_STABLE, LABEL_TOPOLOGY_ZONE};

/// A key some offerings further require.
const PRIORITY: &str = "example.com/priority";

/// Types of two arches, offered in some zones, on-demand and spot, one
/// offering unavailable; every fourth type's offerings further require a
/// priority (`regular` on-demand, `spot` spot).
fn types() -> Vec<InstanceType> {
    (0..70)
        .map(|i| {
            let arch = if i % 2 == 0 { "amd64" } else { "arm64" };
            let zones = ["zone-a", "zone-b", "zone-c"];
            let priority = |offering: Offering, value: &str| {
                if i % 4 == 0 {
                    offering.with_requirement(Requirement::in_values(PRIORITY, [value]))
                } else {
                    offering
                }
            };
            let mut offerings: Vec<Offering> = zones
                .iter()
                .take(1 + i % 3)
                .flat_map(|zone| {
                    let price = 1.0 + (i % 7) as f64;
                    [
                        priority(Offering::new(*zone, "on-demand", price), "regular"),
                        priority(Offering::new(*zone, "spot", price / 2.0), "spot"),
                    ]
                })
                .collect();
            if i % 5 == 0 {
                offerings[1] = offerings[1].clone().unavailable();
            }
            InstanceType::new(
                format!("type-{:02}", 69 - i),
                [(LABEL_ARCH_STABLE, arch)],
                offerings,
                ResourceList::new(),
                ResourceList::new(),
            )
        })
        .collect()
}

fn requirements(items: &[(&str, &[&str])]) -> Requirements {
    items
        .iter()
        .map(|(key, values)| Requirement::in_values(key, values.iter()))
        .collect()
}

#[test]
fn full_and_empty_sets_have_exactly_their_types() {
    for len in [0, 1, 63, 64, 65, 128, 130] {
        let full = TypeSet::full(len);
        let empty = TypeSet::empty(len);
        assert!((0..len).all(|t| full.contains(t) && !empty.contains(t)));
        assert!(!full.contains(len) && !full.contains(len + 64));
    }
    let mut some = TypeSet::of(100, &[3, 64, 99]);
    some.intersect_with(&TypeSet::of(100, &[64, 99, 5]));
    assert_eq!(some, TypeSet::of(100, &[64, 99]));
}

/// The cached answers are the ones each type gives on its own, asked
/// again and again (from the cache the second time).
#[test]
fn answers_match_each_type_asked_alone() {
    let types = types();
    let cache = TypeCache::new(&types);
    let cases = [
        requirements(&[]),
        requirements(&[(LABEL_ARCH_STABLE, &["arm64"])]),
        requirements(&[(LABEL_TOPOLOGY_ZONE, &["zone-c"])]),
        requirements(&[(CAPACITY_TYPE_LABEL_KEY, &["spot"]), ("team", &["a"])]),
        requirements(&[
            (LABEL_ARCH_STABLE, &["amd64"]),
            (LABEL_TOPOLOGY_ZONE, &["zone-b", "zone-c"]),
        ]),
        // Alike on zone and capacity type, apart on the offerings' key.
        requirements(&[(PRIORITY, &["spot"])]),
        requirements(&[(PRIORITY, &["regular"])]),
        requirements(&[
            (PRIORITY, &["regular"]),
            (CAPACITY_TYPE_LABEL_KEY, &["spot"]),
        ]),
    ];
    for _ in 0..2 {
        for case in &cases {
            let compatible = cache.compatible(&types, case);
            let view = cache.offerings(&types, case);
            let filter = OfferingFilter::new(case);
            for (t, instance_type) in types.iter().enumerate() {
                assert_eq!(compatible.contains(t), instance_type.intersects(case));
                let cheapest = instance_type.cheapest_offering_with(&filter);
                // The offering each type launches, worked out from the
                // offerings' whole requirements.
                let expected = instance_type
                    .offerings
                    .iter()
                    .filter(|o| o.available && o.all_requirements().is_intersecting(case))
                    .min_by(|a, b| crate::cloudprovider::cheaper(a, b));
                assert_eq!(cheapest, expected, "{} {case}", instance_type.name);
                assert_eq!(view.available.contains(t), cheapest.is_some());
                assert_eq!(
                    view.cheapest[t].map(|i| &instance_type.offerings[i]),
                    cheapest
                );
                let mut kinds: Vec<&str> = instance_type
                    .offerings
                    .iter()
                    .filter(|o| filter.admits_available(o))
                    .map(|o| o.capacity_type.as_str())
                    .collect();
                kinds.sort_unstable();
                kinds.dedup();
                let named: Vec<&str> = cache.capacity_type_names(view.capacity_types[t]).collect();
                assert_eq!(named, kinds);
            }
            // By price, then name: a sorted walk.
            let price =
                |t: usize| view.cheapest[t].map_or(f64::INFINITY, |i| types[t].offerings[i].price);
            assert!(view.by_price.windows(2).all(|w| {
                let (a, b) = (w[0], w[1]);
                price(a) < price(b) || (price(a) == price(b) && types[a].name < types[b].name)
            }));
        }
    }
    assert!(
        cache
            .by_name
            .windows(2)
            .all(|w| types[w[0]].name < types[w[1]].name)
    );
    // A type with priorities launches spot for a claim asking for that
    // priority, and none for a spot claim asking for the regular one
    // (type 4: priorities, two zones, every offering available).
    let t = 4;
    assert!(types[t].offerings[0].requirements.contains_key(PRIORITY));
    let spot = cache.offerings(&types, &requirements(&[(PRIORITY, &["spot"])]));
    let launched = spot.cheapest[t].map(|i| types[t].offerings[i].capacity_type.as_str());
    assert_eq!(launched, Some("spot"));
    let none = requirements(&[
        (PRIORITY, &["regular"]),
        (CAPACITY_TYPE_LABEL_KEY, &["spot"]),
    ]);
    assert!(!cache.offerings(&types, &none).available.contains(t));
    assert!(cache.compatible(&types, &none).contains(t));
}
