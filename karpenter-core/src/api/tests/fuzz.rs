//! Arbitrary input never panics, and whatever parses writes back to itself.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::fixtures;
use crate::api::{NodeClaim, NodeOverlay, NodePool};

/// Arbitrary JSON, biased toward the strings these types care about.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop_oneof![
            Just("Never".to_owned()),
            Just("10%".to_owned()),
            Just("karpenter.sh/v1".to_owned()),
            "[0-9.]{0,4}(h|m|s|ms|%|Gi)?",
            "\\PC{0,8}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every JSON pointer into `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                pointers(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// `base` with the value at some of its pointers replaced.
fn mutated(base: Value) -> impl Strategy<Value = Value> {
    let mut all = Vec::new();
    pointers(&base, String::new(), &mut all);
    prop::collection::vec((prop::sample::select(all), json_value()), 1..4).prop_map(move |edits| {
        let mut value = base.clone();
        for (pointer, replacement) in edits {
            if let Some(slot) = value.pointer_mut(&pointer) {
                *slot = replacement;
            }
        }
        value
    })
}

/// Parses `input`; if it parses, writing it and reading that back is stable.
fn check<T>(input: Value) -> Result<(), TestCaseError>
where
    T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
{
    if let Ok(parsed) = serde_json::from_value::<T>(input) {
        let written = serde_json::to_value(&parsed).expect("a parsed object serializes");
        let reparsed: T = serde_json::from_value(written).expect("written output parses");
        prop_assert_eq!(reparsed, parsed);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_json_never_panics(value in json_value()) {
        check::<NodePool>(value.clone())?;
        check::<NodeClaim>(value)?;
    }

    #[test]
    fn mutated_nodepools_never_panic(value in mutated(fixtures::full_nodepool())) {
        check::<NodePool>(value)?;
    }

    #[test]
    fn mutated_nodeoverlays_never_panic(value in mutated(fixtures::full_nodeoverlay())) {
        check::<NodeOverlay>(value)?;
    }

    #[test]
    fn mutated_nodeclaims_never_panic(value in mutated(fixtures::full_nodeclaim())) {
        check::<NodeClaim>(value)?;
    }
}
