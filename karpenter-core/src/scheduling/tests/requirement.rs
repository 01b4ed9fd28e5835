//! Behaviour of upstream's `requirement_test.go`.

use super::{NAMES, named};
use crate::scheduling::{Operator, Requirement, RequirementError, SelectorRequirement};

type Shape = (bool, Vec<String>, Option<i64>, Option<i64>, Option<u32>);

fn shape(requirement: &Requirement) -> Shape {
    (
        requirement.is_complement(),
        requirement.values().map(str::to_owned).collect(),
        requirement.lower_bound(),
        requirement.upper_bound(),
        requirement.min_values(),
    )
}

/// The expected intersection, by name: one of [`NAMES`] or a set the tables
/// spell out (a complement with the listed exclusions and bounds).
fn expected(name: &str, min_values: Option<u32>) -> Shape {
    let complement = |values: &[&str], gte, lte| {
        let values = values.iter().map(|v| (*v).to_owned()).collect();
        (true, values, gte, lte, min_values)
    };
    match name {
        "notInA12" => complement(&["1", "2", "A"], None, None),
        "gte2NotIn2" => complement(&["2"], Some(2), None),
        "lte8NotIn12" => complement(&["1", "2"], None, Some(8)),
        "gte2Lte8" => complement(&[], Some(2), Some(8)),
        _ => shape(&named(name, min_values)),
    }
}

/// Row: existing requirement; columns: the incoming one, in [`NAMES`] order.
#[rustfmt::skip] // A table reads best one row per line.
const INTERSECTIONS: [(&str, [&str; 14]); 14] = [
    ("exists", NAMES),
    ("doesNotExist", ["doesNotExist"; 14]),
    ("inA", ["inA", "doesNotExist", "inA", "doesNotExist", "inA", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "inA", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist"]),
    ("inB", ["inB", "doesNotExist", "doesNotExist", "inB", "inB", "inB", "doesNotExist", "doesNotExist", "doesNotExist", "inB", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist"]),
    ("inAB", ["inAB", "doesNotExist", "inA", "inB", "inAB", "inB", "doesNotExist", "doesNotExist", "doesNotExist", "inAB", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist"]),
    ("notInA", ["notInA", "doesNotExist", "doesNotExist", "inB", "inB", "notInA", "in1", "in9", "in19", "notInA12", "greaterThan1", "greaterThan9", "lessThan1", "lessThan9"]),
    ("in1", ["in1", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "in1", "in1", "doesNotExist", "in1", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "in1"]),
    ("in9", ["in9", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "in9", "doesNotExist", "in9", "in9", "in9", "in9", "doesNotExist", "doesNotExist", "doesNotExist"]),
    ("in19", ["in19", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "in19", "in1", "in9", "in19", "in9", "in9", "doesNotExist", "doesNotExist", "in1"]),
    ("notIn12", ["notIn12", "doesNotExist", "inA", "inB", "inAB", "notInA12", "doesNotExist", "in9", "in9", "notIn12", "gte2NotIn2", "greaterThan9", "lessThan1", "lte8NotIn12"]),
    ("greaterThan1", ["greaterThan1", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "greaterThan1", "doesNotExist", "in9", "in9", "gte2NotIn2", "greaterThan1", "greaterThan9", "doesNotExist", "gte2Lte8"]),
    ("greaterThan9", ["greaterThan9", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "greaterThan9", "doesNotExist", "doesNotExist", "doesNotExist", "greaterThan9", "greaterThan9", "greaterThan9", "doesNotExist", "doesNotExist"]),
    ("lessThan1", ["lessThan1", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "lessThan1", "doesNotExist", "doesNotExist", "doesNotExist", "lessThan1", "doesNotExist", "doesNotExist", "lessThan1", "lessThan1"]),
    ("lessThan9", ["lessThan9", "doesNotExist", "doesNotExist", "doesNotExist", "doesNotExist", "lessThan9", "in1", "doesNotExist", "in1", "lte8NotIn12", "gte2Lte8", "doesNotExist", "lessThan1", "lessThan9"]),
];

fn check_intersections(existing_min: Option<u32>, incoming_min: Option<u32>) {
    let result_min = existing_min.max(incoming_min);
    for (row, columns) in INTERSECTIONS {
        let existing = named(row, existing_min);
        for (column, want) in NAMES.iter().zip(columns) {
            let incoming = named(column, incoming_min);
            let got = existing.intersection(&incoming);
            assert_eq!(shape(&got), expected(want, result_min), "{row} ∩ {column}");
            assert_eq!(got.key(), "key");
            assert_eq!(
                existing.has_intersection(&incoming),
                !got.is_empty(),
                "{row} ∩ {column}"
            );
        }
    }
}

#[test]
fn intersects_every_operator_pair() {
    check_intersections(None, None);
}

#[test]
fn intersection_keeps_the_larger_min_values() {
    check_intersections(Some(2), None);
    check_intersections(None, Some(1));
    check_intersections(Some(1), Some(3));
}

#[test]
fn membership() {
    // Columns: A, B, 1, 2, 9.
    let table = [
        ("exists", "TTTTT"),
        ("doesNotExist", "FFFFF"),
        ("inA", "TFFFF"),
        ("inB", "FTFFF"),
        ("inAB", "TTFFF"),
        ("notInA", "FTTTT"),
        ("in1", "FFTFF"),
        ("in9", "FFFFT"),
        ("in19", "FFTFT"),
        ("notIn12", "TTFFT"),
        ("greaterThan1", "FFFTT"),
        ("greaterThan9", "FFFFF"),
        ("lessThan1", "FFFFF"),
        ("lessThan9", "FFTTF"),
    ];
    for (name, expected) in table {
        let requirement = named(name, None);
        for (value, want) in ["A", "B", "1", "2", "9"].into_iter().zip(expected.chars()) {
            assert_eq!(requirement.has(value), want == 'T', "{name} has {value}");
        }
    }
}

#[test]
fn operator_and_len() {
    let max = usize::MAX;
    let table = [
        ("exists", Operator::Exists, max),
        ("doesNotExist", Operator::DoesNotExist, 0),
        ("inA", Operator::In, 1),
        ("inAB", Operator::In, 2),
        ("notInA", Operator::NotIn, max - 1),
        ("in19", Operator::In, 2),
        ("notIn12", Operator::NotIn, max - 2),
        ("greaterThan1", Operator::Exists, max),
        ("lessThan9", Operator::Exists, max),
    ];
    for (name, operator, len) in table {
        let requirement = named(name, None);
        assert_eq!(requirement.operator(), operator, "{name}");
        assert_eq!(requirement.len(), len, "{name}");
    }
}

#[test]
fn any_is_deterministic_and_a_member() {
    let table = [
        ("exists", Some("0")),
        ("doesNotExist", None),
        ("inA", Some("A")),
        ("inAB", Some("A")),
        ("notInA", Some("0")),
        ("in19", Some("1")),
        ("notIn12", Some("0")),
        ("greaterThan1", Some("2")),
        ("greaterThan9", Some("10")),
        ("lessThan1", Some("0")),
        ("lessThan9", Some("0")),
    ];
    for (name, want) in table {
        let requirement = named(name, None);
        assert_eq!(requirement.any().as_deref(), want, "{name}");
        if let Some(value) = requirement.any() {
            assert!(requirement.has(&value), "{name} any {value}");
        }
    }
    let skips = named("greaterThan1", None).intersection(&Requirement::not_in("key", ["2", "3"]));
    assert_eq!(skips.any().as_deref(), Some("4"));
    let negative = Requirement::new("key", Operator::Lt, ["0"], None).unwrap();
    assert_eq!(negative.any().as_deref(), Some("-1"));
    let full = Requirement::new("key", Operator::Gte, ["1"], None)
        .unwrap()
        .intersection(
            &Requirement::new("key", Operator::Lte, ["2"], None)
                .unwrap()
                .intersection(&Requirement::not_in("key", ["1", "2"])),
        );
    assert_eq!(full.any(), None);
    assert!(
        !full.is_empty(),
        "upstream counts a bounded complement as non-empty"
    );
}

#[test]
fn display() {
    let table = [
        ("exists", "key Exists"),
        ("doesNotExist", "key DoesNotExist"),
        ("inA", "key In [A]"),
        ("inAB", "key In [A, B]"),
        ("notInA", "key NotIn [A]"),
        ("in19", "key In [1, 9]"),
        ("notIn12", "key NotIn [1, 2]"),
        ("greaterThan1", "key Exists >=2"),
        ("greaterThan9", "key Exists >=10"),
        ("lessThan1", "key Exists <=0"),
        ("lessThan9", "key Exists <=8"),
    ];
    for (name, want) in table {
        assert_eq!(named(name, None).to_string(), want);
    }
    let between = named("greaterThan1", None).intersection(&named("lessThan9", None));
    assert_eq!(between.to_string(), "key Exists >=2 <=8");
    let crossed = named("greaterThan9", None).intersection(&named("lessThan1", None));
    assert_eq!(crossed.to_string(), "key DoesNotExist");
    assert_eq!(
        named("inAB", Some(2)).to_string(),
        "key In [A, B] minValues 2"
    );
    let many = Requirement::in_values("key", ["a", "b", "c", "d", "e", "f", "g"]);
    assert_eq!(many.to_string(), "key In [a, b, c, d, e, and 2 others]");
}

fn entry(operator: Operator, values: &[&str], min_values: Option<u32>) -> SelectorRequirement {
    SelectorRequirement {
        key: "key".to_owned(),
        operator,
        values: values.iter().map(|v| (*v).to_owned()).collect(),
        min_values,
    }
}

#[test]
fn converts_to_selector_requirements() {
    for min in [None, Some(1)] {
        let table = [
            ("exists", entry(Operator::Exists, &[], min)),
            ("doesNotExist", entry(Operator::DoesNotExist, &[], min)),
            ("inAB", entry(Operator::In, &["A", "B"], min)),
            ("notIn12", entry(Operator::NotIn, &["1", "2"], min)),
            ("greaterThan1", entry(Operator::Gte, &["2"], min)),
            ("greaterThan9", entry(Operator::Gte, &["10"], min)),
            ("lessThan1", entry(Operator::Lte, &["0"], min)),
            ("lessThan9", entry(Operator::Lte, &["8"], min)),
        ];
        for (name, want) in table {
            assert_eq!(
                named(name, min).to_selector_requirements(),
                vec![want],
                "{name}"
            );
        }
    }
    let between = named("greaterThan1", None).intersection(&named("lessThan9", None));
    assert_eq!(
        between.to_selector_requirements(),
        vec![
            entry(Operator::Gte, &["2"], None),
            entry(Operator::Lte, &["8"], None)
        ]
    );
    // Upstream drops the exclusion here; keeping it makes the output lossless.
    let excluded = named("greaterThan1", None).intersection(&named("notIn12", None));
    assert_eq!(
        excluded.to_selector_requirements(),
        vec![
            entry(Operator::Gte, &["2"], None),
            entry(Operator::NotIn, &["2"], None)
        ]
    );
}

#[test]
fn gte_and_lte_are_inclusive() {
    let gte = |n: &str| Requirement::new("key", Operator::Gte, [n], None).unwrap();
    let lte = |n: &str| Requirement::new("key", Operator::Lte, [n], None).unwrap();
    let gt = |n: &str| Requirement::new("key", Operator::Gt, [n], None).unwrap();
    let lt = |n: &str| Requirement::new("key", Operator::Lt, [n], None).unwrap();
    let check = |r: &Requirement, yes: &[&str], no: &[&str]| {
        yes.iter().for_each(|v| assert!(r.has(v), "{r} has {v}"));
        no.iter().for_each(|v| assert!(!r.has(v), "{r} lacks {v}"));
    };
    check(&gte("2"), &["2", "3", "100"], &["1", "0"]);
    check(&lte("8"), &["8", "7", "0"], &["9", "10"]);
    check(
        &gte("2").intersection(&lte("8")),
        &["2", "5", "8"],
        &["1", "9"],
    );
    check(&gte("0"), &["0"], &["-1"]);
    check(&lte("0"), &["0"], &["1"]);
    assert_eq!(gte("2"), gt("1"));
    assert_eq!(lte("8"), lt("9"));
    // Redundant bounds collapse to the tighter one.
    let collapse = |a: Requirement, b: Requirement, want: SelectorRequirement| {
        assert_eq!(a.intersection(&b).to_selector_requirements(), vec![want]);
    };
    collapse(gt("4"), gte("5"), entry(Operator::Gte, &["5"], None));
    collapse(gt("5"), gte("5"), entry(Operator::Gte, &["6"], None));
    collapse(gt("3"), gte("6"), entry(Operator::Gte, &["6"], None));
    collapse(lt("5"), lte("5"), entry(Operator::Lte, &["4"], None));
    collapse(lt("9"), lte("5"), entry(Operator::Lte, &["5"], None));
    let none = gt(&i64::MAX.to_string());
    assert_eq!(none.operator(), Operator::DoesNotExist);
    assert_eq!(none.len(), 0);
}

#[test]
fn validates_like_upstream_cel() {
    let new = |operator, values: &[&str], min| Requirement::new("zone", operator, values, min);
    assert!(matches!(
        new(Operator::In, &[], None),
        Err(RequirementError::MissingValues { .. })
    ));
    assert!(new(Operator::NotIn, &[], None).is_ok());
    for operator in [Operator::Exists, Operator::DoesNotExist] {
        assert!(matches!(
            new(operator, &["a"], None),
            Err(RequirementError::UnexpectedValues { count: 1, .. })
        ));
    }
    for operator in [Operator::Gt, Operator::Lt, Operator::Gte, Operator::Lte] {
        for bad in [
            &[][..],
            &["1", "2"],
            &["-1"],
            &["a"],
            &[""],
            &["1.5"],
            &["99999999999999999999"],
        ] {
            let error = new(operator, bad, None).unwrap_err();
            assert!(
                matches!(error, RequirementError::InvalidIntegerValue { .. }),
                "{operator} {bad:?}"
            );
            assert!(error.to_string().contains("zone"));
        }
        assert!(new(operator, &["0"], None).is_ok());
    }
    assert!(matches!(
        new(Operator::In, &["a"], Some(0)),
        Err(RequirementError::MinValuesOutOfRange { .. })
    ));
    assert!(matches!(
        new(Operator::In, &["a"], Some(51)),
        Err(RequirementError::MinValuesOutOfRange { .. })
    ));
    assert!(matches!(
        new(Operator::In, &["a"], Some(2)),
        Err(RequirementError::NotEnoughValues { .. })
    ));
    assert!(new(Operator::In, &["a", "b"], Some(2)).is_ok());
    assert!(
        new(Operator::Exists, &[], Some(3)).is_ok(),
        "minValues bounds only In's values"
    );
}

#[test]
fn operators_round_trip_through_strings() {
    for operator in Operator::ALL {
        assert_eq!(operator.as_str().parse::<Operator>(), Ok(operator));
        assert_eq!(operator.to_string(), operator.as_str());
    }
    assert!("in".parse::<Operator>().is_err());
}

#[test]
fn normalizes_keys_on_construction() {
    let requirement =
        Requirement::new("beta.kubernetes.io/arch", Operator::In, ["amd64"], None).unwrap();
    assert_eq!(requirement.key(), "kubernetes.io/arch");
    assert_eq!(
        Requirement::exists("failure-domain.beta.kubernetes.io/region").key(),
        "topology.kubernetes.io/region"
    );
}
