//! Tests of `ResourceList`: arithmetic, comparisons, iteration order and serde.

use super::*;
use proptest::prelude::*;

fn list(entries: &[(&str, i64)]) -> ResourceList {
    let mut list = ResourceList::new();
    for &(name, milli) in entries {
        list.set(name, milli);
    }
    list
}

#[test]
fn get_set_and_absent_is_zero() {
    let mut l = ResourceList::new();
    assert!(l.is_empty());
    assert_eq!(l.get("cpu"), 0);
    assert_eq!(l.get("nvidia.com/gpu"), 0);
    l.set("nvidia.com/gpu", 2000);
    l.set("cpu", 500);
    l.set("example.com/a", 1);
    assert_eq!(l.get("nvidia.com/gpu"), 2000);
    assert_eq!(l.get("cpu"), 500);
    l.set("nvidia.com/gpu", 3000);
    assert_eq!(l.get("nvidia.com/gpu"), 3000);
    l.set("nvidia.com/gpu", 0);
    l.set("example.com/a", 0);
    l.set("cpu", 0);
    assert!(l.is_empty());
    assert_eq!(l, ResourceList::new());
}

#[test]
fn iterates_fixed_then_sorted_extended() {
    let l = list(&[
        ("nvidia.com/gpu", 1000),
        ("ephemeral-storage", 4),
        ("amd.com/gpu", 2000),
        ("pods", 1000),
        ("memory", 3),
        ("cpu", 1),
        ("hugepages-2Mi", 5),
    ]);
    let names: Vec<_> = l.iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "cpu",
            "memory",
            "pods",
            "ephemeral-storage",
            "amd.com/gpu",
            "hugepages-2Mi",
            "nvidia.com/gpu"
        ]
    );
}

#[test]
fn from_and_to_quantities() {
    let map = BTreeMap::from([
        ("cpu".to_owned(), Quantity("1500m".into())),
        ("memory".to_owned(), Quantity("2Gi".into())),
        ("nvidia.com/gpu".to_owned(), Quantity("1".into())),
        ("pods".to_owned(), Quantity("0".into())),
    ]);
    let l = ResourceList::try_from(&map).unwrap();
    assert_eq!(
        l,
        list(&[
            ("cpu", 1500),
            ("memory", 2_147_483_648_000),
            ("nvidia.com/gpu", 1000)
        ])
    );
    let back = l.to_quantities();
    assert_eq!(back.get("cpu"), Some(&Quantity("1500m".into())));
    assert_eq!(back.get("memory"), Some(&Quantity("2147483648".into())));
    assert_eq!(back.get("pods"), None);

    let bad = BTreeMap::from([("example.com/foo".to_owned(), Quantity("1.2.3".into()))]);
    let err = ResourceList::from_quantities(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"example.com/foo: invalid quantity "1.2.3": unexpected character '.' at byte 3"#
    );
}

#[test]
fn arithmetic() {
    let a = list(&[("cpu", 1000), ("x.io/a", 5), ("x.io/b", 7)]);
    let b = list(&[("cpu", 250), ("memory", 10), ("x.io/b", 7), ("x.io/c", 1)]);
    assert_eq!(
        &a + &b,
        list(&[
            ("cpu", 1250),
            ("memory", 10),
            ("x.io/a", 5),
            ("x.io/b", 14),
            ("x.io/c", 1)
        ])
    );
    assert_eq!(
        a.checked_sub(&b),
        Some(list(&[
            ("cpu", 750),
            ("memory", -10),
            ("x.io/a", 5),
            ("x.io/c", -1)
        ]))
    );
    assert_eq!(
        a.max(&b),
        list(&[
            ("cpu", 1000),
            ("memory", 10),
            ("x.io/a", 5),
            ("x.io/b", 7),
            ("x.io/c", 1)
        ])
    );
    let mut c = a.clone();
    c += &b;
    assert_eq!(c, a.clone() + &b);
    // Clamping a remainder at zero: max with the empty list.
    assert_eq!(
        list(&[("cpu", -5), ("x.io/a", 3)]).max(&ResourceList::new()),
        list(&[("x.io/a", 3)])
    );
}

#[test]
fn overflow_is_checked_or_saturated() {
    let big = list(&[("memory", i64::MAX), ("x.io/a", i64::MIN)]);
    let one = list(&[("memory", 1), ("x.io/a", 1)]);
    assert_eq!(big.checked_add(&one), None);
    assert_eq!(
        &big + &one,
        list(&[("memory", i64::MAX), ("x.io/a", i64::MIN + 1)])
    );
    assert_eq!(big.checked_sub(&one), None);
    assert_eq!(
        big.saturating_sub(&one),
        list(&[("memory", i64::MAX - 1), ("x.io/a", i64::MIN)])
    );
}

#[test]
fn fits_and_exceeding() {
    let node = list(&[("cpu", 4000), ("memory", 8000), ("pods", 110_000)]);
    assert!(list(&[("cpu", 4000), ("memory", 1)]).fits(&node));
    assert!(ResourceList::new().fits(&node));
    let pod = list(&[("cpu", 4001), ("memory", 1), ("nvidia.com/gpu", 1000)]);
    assert!(!pod.fits(&node));
    assert_eq!(
        pod.exceeding(&node).collect::<Vec<_>>(),
        ["cpu", "nvidia.com/gpu"]
    );
    // A negative remainder fits nothing, even a resource not requested.
    let overcommitted = list(&[("cpu", 4000), ("memory", -1)]);
    assert!(!list(&[("cpu", 1)]).fits(&overcommitted));
    assert_eq!(
        list(&[("cpu", 1)])
            .exceeding(&overcommitted)
            .collect::<Vec<_>>(),
        ["memory"]
    );
    // Negative requests fit.
    assert!(list(&[("cpu", -1)]).fits(&ResourceList::new()));
}

#[test]
fn serde_round_trip_and_errors() {
    let l = list(&[
        ("cpu", 1500),
        ("memory", 2_147_483_648_000),
        ("nvidia.com/gpu", 1000),
    ]);
    let json = serde_json::to_value(&l).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"cpu": "1500m", "memory": "2147483648", "nvidia.com/gpu": "1"})
    );
    assert_eq!(serde_json::from_value::<ResourceList>(json).unwrap(), l);

    let from_ints: ResourceList =
        serde_json::from_value(serde_json::json!({"pods": 110, "cpu": "0", "memory": "1Gi"}))
            .unwrap();
    assert_eq!(
        from_ints,
        list(&[("pods", 110_000), ("memory", 1_073_741_824_000)])
    );

    let err =
        serde_json::from_value::<ResourceList>(serde_json::json!({"memory": "12Q"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"memory: invalid quantity "12Q": unknown suffix "Q""#
    );
    assert!(serde_json::from_value::<ResourceList>(serde_json::json!({"cpu": 0.5})).is_err());
    assert!(serde_json::from_value::<ResourceList>(serde_json::json!({"cpu": u64::MAX})).is_err());
}

#[test]
fn debug_is_human() {
    let l = list(&[("cpu", 500), ("memory", 2_147_483_648_000)]);
    assert_eq!(format!("{l:?}"), r#"{"cpu": 500m, "memory": 2Gi}"#);
}

fn amounts() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(0i64),
        -5i64..5,
        any::<i64>(),
        (0i64..1 << 40).prop_map(|v| v * 1000)
    ]
}

fn lists() -> impl Strategy<Value = ResourceList> {
    let names = prop_oneof![
        Just("cpu"),
        Just("memory"),
        Just("pods"),
        Just("ephemeral-storage"),
        Just("nvidia.com/gpu"),
        Just("amd.com/gpu"),
        Just("hugepages-2Mi"),
    ];
    proptest::collection::vec((names, amounts()), 0..8).prop_map(|entries| list(&entries))
}

const NAMES: [&str; 8] = [
    "cpu",
    "memory",
    "pods",
    "ephemeral-storage",
    "nvidia.com/gpu",
    "amd.com/gpu",
    "hugepages-2Mi",
    "unused.io/x",
];

proptest! {
    #[test]
    fn add_then_sub_round_trips(a in lists(), b in lists()) {
        if let Some(sum) = a.checked_add(&b) {
            prop_assert_eq!(sum.checked_sub(&b), Some(a.clone()));
            prop_assert_eq!(&a + &b, sum);
        }
    }

    #[test]
    fn operations_agree_with_per_resource_math(a in lists(), b in lists()) {
        let sum = &a + &b;
        let max = a.max(&b);
        let diff = a.saturating_sub(&b);
        for name in NAMES {
            prop_assert_eq!(sum.get(name), a.get(name).saturating_add(b.get(name)));
            prop_assert_eq!(max.get(name), a.get(name).max(b.get(name)));
            prop_assert_eq!(diff.get(name), a.get(name).saturating_sub(b.get(name)));
        }
    }

    #[test]
    fn fits_is_per_resource_comparison(req in lists(), alloc in lists()) {
        let expected = NAMES.iter().all(|&n| alloc.get(n) >= 0 && req.get(n) <= alloc.get(n));
        prop_assert_eq!(req.fits(&alloc), expected);
        let exceeding: Vec<_> = req.exceeding(&alloc).collect();
        let expected_exceeding: Vec<_> = req
            .pairs(&alloc)
            .map(|(n, _, _)| n)
            .filter(|&n| alloc.get(n) < 0 || req.get(n) > alloc.get(n))
            .collect();
        prop_assert_eq!(exceeding, expected_exceeding);
    }

    #[test]
    fn serde_round_trips(l in lists()) {
        let json = serde_json::to_string(&l).unwrap();
        prop_assert_eq!(serde_json::from_str::<ResourceList>(&json).unwrap(), l);
    }

    #[test]
    fn equal_lists_hash_equal(entries in proptest::collection::vec((0usize..NAMES.len(), amounts()), 0..8)) {
        use std::hash::{BuildHasher, RandomState};
        // Built in two different orders: same content, same hash.
        let named: Vec<_> = entries.iter().filter_map(|&(i, v)| NAMES.get(i).map(|&n| (n, v))).collect();
        let forward = list(&named);
        let mut reversed = ResourceList::new();
        for &(name, _) in named.iter().rev() {
            reversed.set(name, forward.get(name));
        }
        prop_assert_eq!(&forward, &reversed);
        let state = RandomState::new();
        prop_assert_eq!(state.hash_one(&forward), state.hash_one(&reversed));
    }
}
