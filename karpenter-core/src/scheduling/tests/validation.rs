//! Upstream's `ValidateRequirement` and the provisioner's pod validation.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec,
};

use crate::scheduling::{
    Operator, RequirementError, SelectorRequirement, WellKnownLabels, validate_label_key,
    validate_label_value, validate_pod_spec, validate_requirement,
};

fn requirement(
    key: &str,
    operator: Operator,
    values: &[&str],
    min_values: Option<u32>,
) -> SelectorRequirement {
    SelectorRequirement {
        key: key.to_owned(),
        operator,
        values: values.iter().map(|v| (*v).to_owned()).collect(),
        min_values,
    }
}

fn validate(
    key: &str,
    operator: Operator,
    values: &[&str],
    min_values: Option<u32>,
) -> Result<(), RequirementError> {
    validate_requirement(
        &requirement(key, operator, values, min_values),
        WellKnownLabels::core(),
    )
}

#[test]
fn requirements() {
    assert!(validate("topology.kubernetes.io/zone", Operator::In, &["a"], None).is_ok());
    assert!(
        validate(
            "failure-domain.beta.kubernetes.io/zone",
            Operator::In,
            &["a"],
            None
        )
        .is_ok()
    );
    assert!(matches!(
        validate("karpenter.sh/custom", Operator::Exists, &[], None),
        Err(RequirementError::RestrictedLabel { .. })
    ));
    assert!(matches!(
        validate("kubernetes.io/hostname", Operator::In, &["n"], None),
        Err(RequirementError::RestrictedLabel { .. })
    ));
    assert!(matches!(
        validate("Bad Key", Operator::Exists, &[], None),
        Err(RequirementError::InvalidLabelKey { .. })
    ));
    assert!(matches!(
        validate("team", Operator::In, &["not valid"], None),
        Err(RequirementError::InvalidLabelValue { .. })
    ));
    assert!(matches!(
        validate("cpu", Operator::Gt, &["1.5"], None),
        Err(RequirementError::InvalidIntegerValue { .. })
    ));
    // "-1" is not even a valid label value, which is checked first.
    assert!(validate("cpu", Operator::Gt, &["-1"], None).is_err());
}

#[test]
fn well_known_values() {
    let capacity = "karpenter.sh/capacity-type";
    assert!(validate(capacity, Operator::In, &["spot", "bogus"], None).is_ok());
    assert!(matches!(
        validate(capacity, Operator::In, &["bogus"], None),
        Err(RequirementError::UnknownValues { .. })
    ));
    assert!(matches!(
        validate(capacity, Operator::In, &["spot", "bogus"], Some(2)),
        Err(RequirementError::UnknownValues { needed: 2, .. })
    ));
    assert!(validate(capacity, Operator::NotIn, &["bogus"], None).is_ok());
}

#[test]
fn label_syntax() {
    for good in ["a", "example.com/a", "a.b-c_d", "x/A1"] {
        assert!(validate_label_key(good).is_ok(), "{good}");
    }
    let long_name = "a".repeat(64);
    let long_prefix = format!("{}/a", "a".repeat(254));
    for bad in [
        "",
        "/a",
        "a/",
        "-a",
        "a/b/c",
        "A.com/a",
        "a..b/c",
        long_name.as_str(),
        long_prefix.as_str(),
    ] {
        assert!(validate_label_key(bad).is_err(), "{bad}");
    }
    assert!(validate_label_value("k", "").is_ok());
    assert!(validate_label_value("k", "v-1.2_3").is_ok());
    assert!(validate_label_value("k", "v/1").is_err());
    assert!(validate_label_value("k", &"v".repeat(64)).is_err());
}

#[test]
fn pods() {
    let expression = |key: &str| NodeSelectorRequirement {
        key: key.to_owned(),
        operator: "In".to_owned(),
        values: Some(vec!["x".to_owned()]),
    };
    let pod = |selector: &[(&str, &str)], terms: Vec<NodeSelectorTerm>| PodSpec {
        node_selector: Some(
            selector
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        ),
        affinity: Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: terms,
                }),
                preferred_during_scheduling_ignored_during_execution: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let well_known = WellKnownLabels::core();
    assert!(validate_pod_spec(&pod(&[("team", "ml")], vec![]), well_known).is_ok());
    assert!(
        validate_pod_spec(&pod(&[("kubernetes.io/hostname", "n")], vec![]), well_known).is_err()
    );
    let restricted_second_term = vec![
        NodeSelectorTerm {
            match_expressions: Some(vec![expression("team")]),
            match_fields: None,
        },
        NodeSelectorTerm {
            match_expressions: Some(vec![expression("karpenter.sh/x")]),
            match_fields: None,
        },
    ];
    assert!(validate_pod_spec(&pod(&[], restricted_second_term), well_known).is_err());
    let fields = vec![NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![expression("metadata.name")]),
    }];
    assert_eq!(
        validate_pod_spec(&pod(&[], fields), well_known),
        Err(RequirementError::MatchFieldsUnsupported)
    );
    assert!(validate_pod_spec(&PodSpec::default(), well_known).is_ok());
}
