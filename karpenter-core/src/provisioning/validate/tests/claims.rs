//! New claims: over-commitment, prices, the instance-type list, taints and
//! node requirements.

use super::*;

#[test]
fn catches_an_over_committed_claim() {
    let snapshot = snapshot(vec![
        pod("web-0", "web", 1000),
        pod("web-1", "web", 1000),
        pod("web-2", "web", 1000),
    ]);
    let bad = plan(vec![claim(
        &["small"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1", "web-2"],
    )]);
    let violations = validate(&snapshot, &bad);
    let over: Vec<String> = violations
        .iter()
        .filter(|v| v.rule == Rule::OverCommitted)
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        over,
        [
            "claim #0 (nodepool \"default\"): over-committed: small cannot hold the pods \
             (cpu=3, memory=3Gi, pods=3) with its daemons (nothing): cpu needs 3 of 2"
        ]
    );
    // Listing a type too small for the pods is as wrong as launching it.
    let listed = plan(vec![claim(
        &["small", "large"],
        launch("large", "zone-a", "spot", 0.20),
        &["web-0", "web-1", "web-2"],
    )]);
    let violations = validate(&snapshot, &listed);
    assert!(
        rules(&violations).contains(&Rule::InstanceTypeTooSmall),
        "{violations:?}"
    );
    assert!(
        !rules(&violations).contains(&Rule::OverCommitted),
        "{violations:?}"
    );
}

#[test]
fn catches_wrong_and_not_cheapest_prices() {
    let snapshot = two_pods();
    let wrong = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.04),
        &["web-0", "web-1"],
    )]);
    assert_eq!(
        rules(&validate(&snapshot, &wrong)),
        BTreeSet::from([Rule::LaunchPrice])
    );
    let dear = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "on-demand", 0.10),
        &["web-0", "web-1"],
    )]);
    let violations = validate(&snapshot, &dear);
    assert_eq!(
        rules(&violations),
        BTreeSet::from([Rule::LaunchNotCheapest])
    );
    assert!(
        violations[0]
            .detail
            .contains("small zone-a spot costs 0.05"),
        "{}",
        violations[0]
    );
    let mut total = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    total.total_price_per_hour = 0.06;
    assert_eq!(
        rules(&validate(&snapshot, &total)),
        BTreeSet::from([Rule::TotalPrice])
    );
}

#[test]
fn catches_unsorted_incomplete_and_unknown_instance_types() {
    let snapshot = two_pods();
    let unsorted = plan(vec![claim(
        &["large", "small"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    let violations = validate(&snapshot, &unsorted);
    assert_eq!(
        rules(&violations),
        BTreeSet::from([Rule::InstanceTypeOrder])
    );
    assert!(
        violations[0]
            .detail
            .contains("large (cheapest 0.2) is listed before small (cheapest 0.05)")
    );
    let incomplete = plan(vec![claim(
        &["small"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    assert_eq!(
        rules(&validate(&snapshot, &incomplete)),
        BTreeSet::from([Rule::InstanceTypesIncomplete])
    );
    let unknown = plan(vec![claim(
        &["small", "large", "huge"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    assert_eq!(
        rules(&validate(&snapshot, &unknown)),
        BTreeSet::from([Rule::InstanceTypeList])
    );
}

#[test]
fn catches_untolerated_taints_and_unmet_selectors() {
    let mut tainted = pool("default");
    tainted.spec.template.spec.taints = Some(vec![Taint {
        key: "dedicated".to_string(),
        value: Some("gpu".to_string()),
        effect: "NoSchedule".to_string(),
        ..Default::default()
    }]);
    let mut tainted_pool = two_pods();
    tainted_pool.node_pools = vec![tainted];
    let good_shape = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    let violations = validate(&tainted_pool, &good_shape);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::Taint]));
    assert_eq!(violations.len(), 2);

    let mut picky = pod("web-0", "web", 500);
    picky.spec.as_mut().unwrap().node_selector = Some(BTreeMap::from([(
        LABEL_TOPOLOGY_ZONE.to_string(),
        "zone-b".to_string(),
    )]));
    let snapshot = snapshot(vec![picky]);
    let bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0"],
    )]);
    assert_eq!(
        rules(&validate(&snapshot, &bad)),
        BTreeSet::from([Rule::NodeRequirements])
    );
}

#[test]
fn a_pod_may_meet_any_one_of_its_required_terms() {
    let term = |zone: &str| NodeSelectorTerm {
        match_expressions: Some(vec![NodeSelectorRequirement {
            key: LABEL_TOPOLOGY_ZONE.to_string(),
            operator: "In".to_string(),
            values: Some(vec![zone.to_string()]),
        }]),
        ..Default::default()
    };
    let mut relaxed = pod("web-0", "web", 500);
    relaxed.spec.as_mut().unwrap().affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![term("zone-c"), term("zone-a")],
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    let snapshot = snapshot(vec![relaxed]);
    let mut on_a = claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0"],
    );
    on_a.requirements.push(RequirementOutput {
        key: LABEL_TOPOLOGY_ZONE.to_string(),
        operator: "In".to_string(),
        values: ["zone-a"].into_iter().collect(),
        min_values: None,
    });
    assert_eq!(validate(&snapshot, &plan(vec![on_a])), vec![]);
}
