//! Budget `nodes` parsing, CRD defaults, conditions and resource lists.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::json;

use crate::api::{
    Budget, BudgetNodes, Condition, ConditionStatus, Conditions, ConsolidationPolicy,
    DEFAULT_EXPIRE_AFTER, Disruption, DisruptionReason, NodeClaim, NodePool, NodePoolSpec,
    Quantities,
};

#[test]
fn budget_nodes_parse() {
    let valid = [
        ("10%", BudgetNodes::Percent(10)),
        ("0%", BudgetNodes::Percent(0)),
        ("00%", BudgetNodes::Percent(0)),
        ("100%", BudgetNodes::Percent(100)),
        ("5", BudgetNodes::Count(5)),
        ("0", BudgetNodes::Count(0)),
        ("007", BudgetNodes::Count(7)),
        ("1000", BudgetNodes::Count(1000)),
    ];
    for (text, expected) in valid {
        assert_eq!(text.parse::<BudgetNodes>(), Ok(expected), "{text}");
    }
    let invalid = [
        "",
        "%",
        "101%",
        "007%",
        "1000%",
        "-1",
        "-1%",
        "+5",
        "5 ",
        " 5",
        "10.5%",
        "ten",
        "5%%",
        "99999999999999999999999",
    ];
    for text in invalid {
        let err = text.parse::<BudgetNodes>().expect_err(text);
        assert_eq!(err.text(), text);
        assert!(err.to_string().starts_with("invalid budget nodes"), "{err}");
    }
    assert_eq!(BudgetNodes::Percent(10).to_string(), "10%");
    assert_eq!(BudgetNodes::Count(3).to_string(), "3");
}

#[test]
fn budget_nodes_scale_like_upstream() {
    assert_eq!(BudgetNodes::Percent(10).allowed(15), 2);
    assert_eq!(BudgetNodes::Percent(10).allowed(10), 1);
    assert_eq!(BudgetNodes::Percent(10).allowed(0), 0);
    assert_eq!(BudgetNodes::Percent(0).allowed(50), 0);
    assert_eq!(BudgetNodes::Percent(100).allowed(7), 7);
    assert_eq!(BudgetNodes::Percent(100).allowed(u64::MAX), u64::MAX);
    assert_eq!(BudgetNodes::Count(5).allowed(2), 5);
}

#[test]
fn budget_defaults_and_reasons() {
    let budget: Budget = serde_json::from_value(json!({"reasons": ["Drifted"]})).expect("parses");
    // `nodes` defaults to 10% like the CRD, without being written.
    assert_eq!(budget.nodes(), "10%");
    assert_eq!(budget.parse_nodes(), Ok(BudgetNodes::Percent(10)));
    assert_eq!(
        serde_json::to_value(&budget).expect("serializes"),
        json!({"reasons": ["Drifted"]})
    );
    assert!(budget.applies_to(DisruptionReason::Drifted));
    assert!(!budget.applies_to(DisruptionReason::Empty));
    assert!(Budget::new("5").applies_to(DisruptionReason::Underutilized));
}

#[test]
fn disruption_defaults_are_not_written() {
    let spec = NodePoolSpec::default();
    assert_eq!(
        spec.effective_consolidation_policy(),
        ConsolidationPolicy::WhenEmptyOrUnderutilized
    );
    assert_eq!(spec.effective_consolidate_after(), Some(Duration::ZERO));
    assert_eq!(spec.effective_budgets().as_ref(), &[Budget::new("10%")]);
    assert_eq!(spec.effective_weight(), 0);
    assert!(!spec.is_static());
    assert_eq!(
        spec.template.spec.effective_expire_after(),
        Some(DEFAULT_EXPIRE_AFTER)
    );
    assert_eq!(DEFAULT_EXPIRE_AFTER, Duration::from_secs(720 * 3600));
    assert_eq!(
        spec.template.spec.effective_termination_grace_period(),
        None
    );

    let disruption = Disruption::default();
    assert_eq!(disruption.effective_budgets().len(), 1);
    assert_eq!(
        serde_json::to_value(&disruption).expect("serializes"),
        json!({})
    );

    let input = json!({
        "metadata": {"name": "p"},
        "spec": {"template": {"spec": {"requirements": []}}, "disruption": {}}
    });
    let pool: NodePool = serde_json::from_value(input).expect("parses");
    assert_eq!(
        pool.spec.effective_consolidate_after(),
        Some(Duration::ZERO)
    );
    let written = serde_json::to_value(&pool).expect("serializes");
    assert_eq!(
        written["spec"],
        json!({"template": {"spec": {"requirements": []}}, "disruption": {}})
    );
}

#[test]
fn explicit_disruption_values_win() {
    let pool: NodePool = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {
            "template": {"spec": {"expireAfter": "24h", "terminationGracePeriod": "30m"}},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
            "weight": 50
        }
    }))
    .expect("parses");
    let spec = &pool.spec;
    assert_eq!(
        spec.effective_consolidation_policy(),
        ConsolidationPolicy::WhenEmpty
    );
    assert_eq!(
        spec.effective_consolidate_after(),
        Some(Duration::from_secs(300))
    );
    assert_eq!(spec.effective_weight(), 50);
    let template = &spec.template.spec;
    assert_eq!(
        template.effective_expire_after(),
        Some(Duration::from_secs(24 * 3600))
    );
    assert_eq!(
        template.effective_termination_grace_period(),
        Some(Duration::from_secs(1800))
    );
}

#[test]
fn nodeclaim_expiry_defaults() {
    let claim: NodeClaim =
        serde_json::from_value(json!({"metadata": {}, "spec": {}})).expect("parses");
    assert_eq!(
        claim.spec.effective_expire_after(),
        Some(DEFAULT_EXPIRE_AFTER)
    );
    assert!(claim.spec.requests().is_none());
    let never: NodeClaim =
        serde_json::from_value(json!({"spec": {"expireAfter": "Never"}})).expect("parses");
    assert_eq!(never.spec.effective_expire_after(), None);
}

#[test]
fn condition_helpers() {
    let conditions: Vec<Condition> = serde_json::from_value(json!([
        {"type": "Launched", "status": "True", "lastTransitionTime": "2024-08-02T08:15:03Z"},
        {"type": "Registered", "status": "False", "reason": "NodeNotFound"},
        {"type": "Initialized", "status": "Unknown"}
    ]))
    .expect("parses");
    assert!(conditions.is_true("Launched"));
    assert!(!conditions.is_true("Registered"));
    assert!(!conditions.is_true("Initialized"));
    assert!(!conditions.is_true("Ready"));
    assert_eq!(
        conditions
            .find("Registered")
            .and_then(|c| c.reason.as_deref()),
        Some("NodeNotFound")
    );
    let launched = conditions.transition_time("Launched").expect("recorded");
    assert_eq!(launched.to_string(), "2024-08-02T08:15:03Z");
    assert_eq!(conditions.transition_time("Registered"), None);
    assert_eq!(conditions.transition_time("Ready"), None);
    assert!(conditions.as_slice().is_true("Launched"));
    let absent: Option<Vec<Condition>> = None;
    assert!(absent.find("Launched").is_none());
    assert!(Some(conditions).is_true("Launched"));

    let fresh = Condition::new("Ready", ConditionStatus::Unknown);
    assert_eq!(
        serde_json::to_value(&fresh).expect("serializes"),
        json!({"type": "Ready", "status": "Unknown"})
    );
    assert!(serde_json::from_value::<Condition>(json!({"type": "Ready"})).is_err());
    assert!(serde_json::from_value::<Condition>(json!({"status": "True"})).is_err());
}

#[test]
fn resource_lists_keep_json_types() {
    let input = json!({"cpu": 4, "memory": "16Gi", "nvidia.com/gpu": 0.5, "pods": -1});
    let mut list: Quantities = serde_json::from_value(input.clone()).expect("parses");
    assert_eq!(serde_json::to_value(&list).expect("serializes"), input);
    assert_eq!(list.get("nvidia.com/gpu"), Some(&Quantity("0.5".into())));

    // Replacing a numeric entry writes the new quantity as a string.
    list.insert("cpu", Quantity("8".into()));
    list.remove("pods");
    assert_eq!(
        serde_json::to_value(&list).expect("serializes"),
        json!({"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": 0.5})
    );
    let built: Quantities = [("cpu", Quantity("1".into()))].into_iter().collect();
    assert_eq!(
        serde_json::to_value(&built).expect("serializes"),
        json!({"cpu": "1"})
    );
    assert_eq!(built.len(), 1);
    assert_eq!(built.as_map().len(), 1);

    for bad in [
        json!({"cpu": null}),
        json!({"cpu": true}),
        json!({"cpu": [1]}),
        json!([]),
    ] {
        assert!(serde_json::from_value::<Quantities>(bad).is_err());
    }
}
