//! Unit tests: upstream's test tables (`pkg/scheduling/*_test.go`) ported as
//! expected behaviour, plus checks of this port's own choices.

mod requirement;
mod requirements;
mod taints;
mod validation;

use super::{Operator, Requirement};

/// The named requirements of upstream's tables, on key `key`, optionally with
/// `minValues`.
pub(super) fn named(name: &str, min_values: Option<u32>) -> Requirement {
    let (operator, values): (Operator, &[&str]) = match name {
        "exists" => (Operator::Exists, &[]),
        "doesNotExist" => (Operator::DoesNotExist, &[]),
        "inA" => (Operator::In, &["A"]),
        "inB" => (Operator::In, &["B"]),
        "inAB" => (Operator::In, &["A", "B"]),
        "notInA" => (Operator::NotIn, &["A"]),
        "in1" => (Operator::In, &["1"]),
        "in9" => (Operator::In, &["9"]),
        "in19" => (Operator::In, &["1", "9"]),
        "notIn12" => (Operator::NotIn, &["1", "2"]),
        "greaterThan1" => (Operator::Gt, &["1"]),
        "greaterThan9" => (Operator::Gt, &["9"]),
        "lessThan1" => (Operator::Lt, &["1"]),
        "lessThan9" => (Operator::Lt, &["9"]),
        other => panic!("unknown requirement {other}"),
    };
    // minValues may exceed the values of an `In` here, as in upstream's
    // tables; attach it after validation.
    Requirement::new("key", operator, values, None)
        .expect("valid")
        .with_min_values(min_values)
}

/// The table order of upstream's requirement tests.
pub(super) const NAMES: [&str; 14] = [
    "exists",
    "doesNotExist",
    "inA",
    "inB",
    "inAB",
    "notInA",
    "in1",
    "in9",
    "in19",
    "notIn12",
    "greaterThan1",
    "greaterThan9",
    "lessThan1",
    "lessThan9",
];
