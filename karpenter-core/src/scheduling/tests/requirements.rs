//! Behaviour of upstream's `requirements_test.go`, and the pod constructors.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec,
    PreferredSchedulingTerm,
};

use super::{NAMES, named};
use crate::scheduling::{
    IncompatibleError, LABEL_TOPOLOGY_ZONE, Operator, Requirement, RequirementError, Requirements,
    SelectorRequirement, WellKnownLabels, has_preferred_node_affinity,
};

/// A named requirement of upstream's tables on the zone key, which is well
/// known; `unconstrained` is the empty set of requirements.
fn zone(name: &str) -> Requirements {
    if name == "unconstrained" {
        return Requirements::new();
    }
    let requirement = named(name, None);
    let entries = requirement.to_selector_requirements();
    entries
        .iter()
        .map(|entry| {
            Requirement::new(LABEL_TOPOLOGY_ZONE, entry.operator, &entry.values, None).unwrap()
        })
        .collect()
}

fn columns() -> impl Iterator<Item = &'static str> {
    std::iter::once("unconstrained").chain(NAMES)
}

/// Rows: `self`; columns: `other`, in `unconstrained` + [`NAMES`] order.
/// `Y` when compatible.
const COMPATIBLE_ALLOWING_WELL_KNOWN: [(&str, &str); 15] = [
    ("unconstrained", "YYYYYYYYYYYYYYY"),
    ("exists", "YYNYYYYYYYYYYYY"),
    ("doesNotExist", "YNYNNNYNNNYNNNN"),
    ("inA", "YYNYNYNNNNYNNNN"),
    ("inB", "YYNNYYYNNNYNNNN"),
    ("inAB", "YYNYYYYNNNYNNNN"),
    ("notInA", "YYYNYYYYYYYYYYY"),
    ("in1", "YYNNNNYYNYNNNNY"),
    ("in9", "YYNNNNYNYYYYNNN"),
    ("in19", "YYNNNNYYYYYYNNY"),
    ("notIn12", "YYYYYYYNYYYYYYY"),
    ("greaterThan1", "YYNNNNYNYYYYYNY"),
    ("greaterThan9", "YYNNNNYNNNYYYNN"),
    ("lessThan1", "YYNNNNYNNNYNNYY"),
    ("lessThan9", "YYNNNNYYNYYYNYY"),
];

/// Strictly, an unconstrained side accepts only exclusions; other rows match.
const STRICT_UNCONSTRAINED: &str = "YNYNNNYNNNYNNNN";

fn check_compatibility(row: &str, expected: &str, allow: &WellKnownLabels) {
    let this = zone(row);
    for (column, want) in columns().zip(expected.chars()) {
        let other = zone(column);
        let result = this.compatible(&other, allow);
        assert_eq!(
            result.is_ok(),
            want == 'Y',
            "{row} compatible with {column}: {result:?}"
        );
        assert_eq!(this.is_compatible(&other, allow), want == 'Y');
        if result.is_ok() {
            assert!(
                this.intersects(&other).is_ok(),
                "compatible implies intersects"
            );
        }
    }
}

#[test]
fn compatible_with_well_known_labels_undefined() {
    for (row, expected) in COMPATIBLE_ALLOWING_WELL_KNOWN {
        check_compatibility(row, expected, WellKnownLabels::core());
    }
}

#[test]
fn strictly_compatible() {
    let strict = WellKnownLabels::empty();
    for (row, expected) in COMPATIBLE_ALLOWING_WELL_KNOWN {
        let expected = if row == "unconstrained" {
            STRICT_UNCONSTRAINED
        } else {
            expected
        };
        check_compatibility(row, expected, &strict);
    }
}

#[test]
fn custom_labels_must_be_defined_but_well_known_need_not() {
    let node_pool = Requirements::from_labels([("team", "ml")]);
    let custom = Requirements::from_labels([("gpu", "true")]);
    let error = node_pool
        .compatible(&custom, WellKnownLabels::core())
        .unwrap_err();
    assert_eq!(error.key(), "gpu");
    // Intersects ignores keys on one side only, so only compatible refuses.
    assert!(node_pool.intersects(&custom).is_ok());
    // Exclusions of an undefined custom label are fine.
    let excluded: Requirements = [
        Requirement::not_in("gpu", ["true"]),
        Requirement::does_not_exist("spot"),
    ]
    .into_iter()
    .collect();
    assert!(
        node_pool
            .compatible(&excluded, WellKnownLabels::core())
            .is_ok()
    );
    // The asymmetry: the pod may leave node labels unconstrained.
    assert!(
        custom
            .compatible(&Requirements::new(), WellKnownLabels::core())
            .is_ok()
    );
    // A provider's well-known key is allowed undefined once registered.
    let sku = Requirements::from_labels([("karpenter.azure.com/sku-family", "D")]);
    assert!(node_pool.compatible(&sku, WellKnownLabels::core()).is_err());
    let azure = WellKnownLabels::new().with("karpenter.azure.com/sku-family");
    assert!(node_pool.compatible(&sku, &azure).is_ok());
}

#[test]
fn disjoint_exclusions_are_tolerated() {
    let does_not_exist: Requirements = [Requirement::does_not_exist("team")].into_iter().collect();
    let not_in: Requirements = [Requirement::not_in("team", ["a"])].into_iter().collect();
    assert!(
        !does_not_exist
            .get("team")
            .has_intersection(&not_in.get("team"))
    );
    assert!(does_not_exist.intersects(&not_in).is_ok());
    assert!(not_in.intersects(&does_not_exist).is_ok());
    let exists: Requirements = [Requirement::exists("team")].into_iter().collect();
    assert!(exists.intersects(&does_not_exist).is_err());
}

#[test]
fn error_messages_name_the_key_and_both_sides() {
    let existing = zone("inA");
    let incoming = zone("inB");
    let error = existing
        .compatible(&incoming, WellKnownLabels::core())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [B] not in topology.kubernetes.io/zone In [A]"
    );
    assert!(matches!(error, IncompatibleError::Disjoint { .. }));
}

#[test]
fn undefined_label_hints_at_typos() {
    let table = [
        ("zone", "topology.kubernetes.io/zone"),
        ("region", "topology.kubernetes.io/region"),
        ("nodepool", "karpenter.sh/nodepool"),
        ("instance-type", "node.kubernetes.io/instance-type"),
        ("arch", "kubernetes.io/arch"),
        ("capacity-type", "karpenter.sh/capacity-type"),
        ("topology.kubernetesio/zone", "topology.kubernetes.io/zone"),
        ("node.io/zone", "topology.kubernetes.io/zone"),
        (
            "topology.kubernetes.io/regio",
            "topology.kubernetes.io/region",
        ),
        ("node.kubernetes.io/region", "topology.kubernetes.io/region"),
        ("karpenter/nodepool", "karpenter.sh/nodepool"),
    ];
    for (typo, intended) in table {
        let pod: Requirements = [Requirement::exists(typo)].into_iter().collect();
        let error = Requirements::new()
            .compatible(&pod, WellKnownLabels::core())
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("label {typo:?} does not have known values (typo of {intended:?}?)")
        );
    }
    let pod: Requirements = [Requirement::exists("deployment")].into_iter().collect();
    let error = Requirements::new()
        .compatible(&pod, &WellKnownLabels::empty())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"label "deployment" does not have known values"#
    );
    // Defined keys are hinted too.
    let node_pool = Requirements::from_labels([("example.com/team", "ml")]);
    let pod: Requirements = [Requirement::exists("team")].into_iter().collect();
    let error = node_pool
        .compatible(&pod, &WellKnownLabels::empty())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"label "team" does not have known values (typo of "example.com/team"?)"#
    );
}

#[test]
fn add_intersects_and_get_defaults_to_exists() {
    let mut requirements = Requirements::new();
    requirements.add(Requirement::in_values("zone", ["a", "b"]));
    requirements.add(Requirement::in_values("zone", ["b", "c"]));
    assert_eq!(requirements.get("zone").to_string(), "zone In [b]");
    assert_eq!(requirements.get("missing").operator(), Operator::Exists);
    assert!(!requirements.contains_key("missing"));
    assert_eq!(requirements.len(), 1);
    assert!(requirements.remove("zone").is_some());
    assert!(requirements.is_empty());
}

#[test]
fn normalizes_aliases() {
    let requirements: Requirements = [Requirement::new(
        "failure-domain.beta.kubernetes.io/zone",
        Operator::In,
        ["test"],
        None,
    )
    .unwrap()]
    .into_iter()
    .collect();
    assert!(!requirements.contains_key("failure-domain.beta.kubernetes.io/zone"));
    assert!(requirements.get(LABEL_TOPOLOGY_ZONE).has("test"));

    let aliases = [
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/instance-type",
    ];
    let stable = [
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "node.kubernetes.io/instance-type",
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
    ];
    let selector: BTreeMap<String, String> = aliases
        .iter()
        .map(|k| ((*k).to_owned(), "test".to_owned()))
        .collect();
    let expressions: Vec<NodeSelectorRequirement> = aliases
        .iter()
        .map(|k| expression(k, "In", &["test"]))
        .collect();
    let term = NodeSelectorTerm {
        match_expressions: Some(expressions.clone()),
        match_fields: None,
    };
    let pod = pod_spec(
        Some(selector.clone()),
        vec![term.clone()],
        vec![(1, term.clone())],
    );
    for requirements in [
        Requirements::from_labels(&selector),
        Requirements::from_node_selector_requirements(&expressions).unwrap(),
        Requirements::from_node_selector_term(&term).unwrap(),
        Requirements::from_pod_spec(&pod).unwrap(),
    ] {
        assert_eq!(requirements.keys().collect::<Vec<_>>(), stable);
    }
}

fn expression(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_owned(),
        operator: operator.to_owned(),
        values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

fn term(expressions: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: Some(expressions),
        match_fields: None,
    }
}

fn pod_spec(
    node_selector: Option<BTreeMap<String, String>>,
    required: Vec<NodeSelectorTerm>,
    preferred: Vec<(i32, NodeSelectorTerm)>,
) -> PodSpec {
    PodSpec {
        node_selector,
        affinity: Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: (!required.is_empty())
                    .then_some(NodeSelector {
                        node_selector_terms: required,
                    }),
                preferred_during_scheduling_ignored_during_execution: Some(
                    preferred
                        .into_iter()
                        .map(|(weight, preference)| PreferredSchedulingTerm { weight, preference })
                        .collect(),
                ),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn pod_requirements_take_the_heaviest_preference_and_the_first_required_term() {
    let selector = BTreeMap::from([("team".to_owned(), "ml".to_owned())]);
    let required = vec![
        term(vec![expression("zone", "In", &["a", "b", "c"])]),
        term(vec![expression("zone", "In", &["z"])]),
    ];
    let preferred = vec![
        (10, term(vec![expression("zone", "In", &["c"])])),
        (50, term(vec![expression("zone", "In", &["b"])])),
        (50, term(vec![expression("zone", "In", &["a"])])),
    ];
    let spec = pod_spec(Some(selector), required, preferred);
    assert!(has_preferred_node_affinity(&spec));
    let all = Requirements::from_pod_spec(&spec).unwrap();
    assert_eq!(all.to_string(), "team In [ml], zone In [b]");
    let strict = Requirements::from_pod_spec_strict(&spec).unwrap();
    assert_eq!(strict.to_string(), "team In [ml], zone In [a, b, c]");
    assert!(!has_preferred_node_affinity(&PodSpec::default()));
    assert!(
        Requirements::from_pod_spec(&PodSpec::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn pod_requirements_accept_negative_integers_and_reject_malformed_ones() {
    let spec = pod_spec(
        None,
        vec![term(vec![expression("generation", "Gt", &["-3"])])],
        vec![],
    );
    let requirements = Requirements::from_pod_spec(&spec).unwrap();
    assert!(requirements.get("generation").has("-2"));
    let spec = pod_spec(
        None,
        vec![term(vec![expression("generation", "Gt", &["x"])])],
        vec![],
    );
    assert!(matches!(
        Requirements::from_pod_spec(&spec),
        Err(RequirementError::InvalidIntegerValue { .. })
    ));
    let spec = pod_spec(
        None,
        vec![term(vec![expression("zone", "Near", &["a"])])],
        vec![],
    );
    assert!(matches!(
        Requirements::from_pod_spec(&spec),
        Err(RequirementError::UnsupportedOperator { .. })
    ));
}

#[test]
fn match_fields_are_unsupported_in_required_terms_only() {
    let with_fields = NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![expression("metadata.name", "In", &["node-1"])]),
    };
    assert_eq!(
        Requirements::from_node_selector_term(&with_fields),
        Err(RequirementError::MatchFieldsUnsupported)
    );
    let required = pod_spec(None, vec![with_fields.clone()], vec![]);
    assert!(Requirements::from_pod_spec(&required).is_err());
    let preferred = pod_spec(None, vec![], vec![(1, with_fields)]);
    assert!(Requirements::from_pod_spec(&preferred).unwrap().is_empty());
}

#[test]
fn converts_to_selector_requirements() {
    let requirements: Requirements = NAMES
        .iter()
        .map(|name| {
            let requirement = named(name, Some(1));
            let entries = requirement.to_selector_requirements();
            Requirement::new(name, entries[0].operator, &entries[0].values, None)
                .unwrap()
                .with_min_values(Some(1))
        })
        .collect();
    let entries = requirements.to_selector_requirements();
    assert_eq!(entries.len(), 14);
    let back = Requirements::from_selector_requirements(&entries).unwrap();
    assert_eq!(back, requirements);

    let bounded: Requirements = [
        Requirement::new("cpu", Operator::Gte, ["8"], None).unwrap(),
        Requirement::new("cpu", Operator::Lte, ["8"], None).unwrap(),
    ]
    .into_iter()
    .collect();
    let entries = bounded.to_selector_requirements();
    let entry = |operator| SelectorRequirement {
        key: "cpu".to_owned(),
        operator,
        values: vec!["8".to_owned()],
        min_values: None,
    };
    assert_eq!(entries, vec![entry(Operator::Gte), entry(Operator::Lte)]);
}

#[test]
fn display_is_sorted_and_hides_restricted_labels() {
    let requirements: Requirements = NAMES
        .iter()
        .map(|name| {
            let requirement = named(name, None);
            let entry = &requirement.to_selector_requirements()[0];
            Requirement::new(name, entry.operator, &entry.values, None).unwrap()
        })
        .chain([Requirement::in_values("kubernetes.io/hostname", ["node-1"])])
        .collect();
    assert_eq!(
        requirements.to_string(),
        "doesNotExist DoesNotExist, exists Exists, greaterThan1 Exists >=2, greaterThan9 Exists >=10, in1 In [1], \
         in19 In [1, 9], in9 In [9], inA In [A], inAB In [A, B], inB In [B], lessThan1 Exists <=0, \
         lessThan9 Exists <=8, notIn12 NotIn [1, 2], notInA NotIn [A]"
    );
}

#[test]
fn labels_are_the_single_valued_in_keys() {
    let requirements: Requirements = [
        Requirement::in_values("zone", ["a"]),
        Requirement::in_values("arch", ["amd64", "arm64"]),
        Requirement::exists("team"),
        Requirement::not_in("os", ["windows"]),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        requirements.labels(),
        BTreeMap::from([("zone".to_owned(), "a".to_owned())])
    );
    assert!(!requirements.has_min_values());
}
