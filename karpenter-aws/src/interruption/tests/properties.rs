//! `parse` over arbitrary input: it never panics, whatever a body holds,
//! and what it reads names only instances the body names, none empty.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::interruption::parse;

/// The kinds the provider reads, and one it does not.
const KINDS: [(&str, &str); 7] = [
    ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("aws.ec2", "EC2 Instance State-change Notification"),
    (
        "aws.ec2",
        "EC2 Capacity Reservation Instance Interruption Warning",
    ),
    ("aws.health", "AWS Health Event"),
    ("aws.ec2", "EC2 Fast Launch State-change Notification"),
    ("aws.s3", "Object Created"),
];

/// The `detail` keys the kinds read, so that random details often hit them.
const KEYS: [&str; 10] = [
    "instance-id",
    "instance-action",
    "state",
    "service",
    "eventTypeCategory",
    "affectedEntities",
    "entityValue",
    "eventArn",
    "startTime",
    "other",
];

/// A string leaf, biased toward the values the kinds act on.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("EC2".to_owned()),
        Just("scheduledChange".to_owned()),
        Just("stopping".to_owned()),
        Just("TERMINATED".to_owned()),
        "i-[0-9a-f]{0,17}",
        "\\PC{0,12}",
    ]
}

/// Arbitrary JSON of depth at most 3, objects keyed mostly by [`KEYS`].
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        let key = prop_oneof![
            4 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
            1 => "\\PC{0,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// AWS Health's affected entities: objects of `entityValue`, or anything.
fn entities() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        prop_oneof![
            3 => text().prop_map(|id| json!({"entityValue": id})),
            1 => json_value(),
        ],
        0..4,
    )
    .prop_map(Value::Array)
}

/// A `detail` object with some of the fields the kinds read, mostly of the
/// right type, so that many details parse; or any JSON at all.
fn detail() -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        4 => text().prop_map(Value::String),
        1 => entities(),
        1 => json_value(),
    ];
    prop_oneof![
        4 => prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), field, 0..7)
            .prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        1 => json_value(),
    ]
}

/// Every string anywhere in `value`.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parse_never_panics_on_any_string(body in "\\PC{0,200}") {
        if let Ok(message) = parse(&body) {
            prop_assert!(message.instance_ids().iter().all(|id| !id.is_empty()));
        }
    }

    #[test]
    fn parse_never_panics_on_json_shaped_strings(
        body in "[{}\\[\\]\":,0-9a-z -]{0,80}",
    ) {
        if let Ok(message) = parse(&body) {
            prop_assert!(message.instance_ids().iter().all(|id| !id.is_empty()));
        }
    }

    #[test]
    fn any_detail_in_an_envelope_parses_or_errs_naming_only_its_instances(
        kind in prop::sample::select(KINDS.to_vec()),
        detail in detail(),
        version in prop::sample::select(vec!["0", "1", ""]),
    ) {
        let (source, detail_type) = kind;
        let body = json!({
            "version": version,
            "id": "5d5d2a5e-5c14-4a7a-8b7e-12c0e8f1a111",
            "detail-type": detail_type,
            "source": source,
            "account": "123456789012",
            "time": "2026-11-29T06:58:12Z",
            "region": "us-west-2",
            "resources": [],
            "detail": detail,
        })
        .to_string();
        let parsed = parse(&body);
        // The same body reads the same way twice.
        let again = parse(&body);
        prop_assert_eq!(parsed.as_ref().ok(), again.as_ref().ok());
        if let Ok(message) = parsed {
            let mut named = Vec::new();
            strings(&detail, &mut named);
            for id in message.instance_ids() {
                prop_assert!(!id.is_empty());
                prop_assert!(named.iter().any(|s| s == id), "{id:?} is not in {detail}");
            }
        }
    }
}
