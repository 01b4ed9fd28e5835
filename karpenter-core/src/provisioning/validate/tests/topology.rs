//! Required anti-affinity and zonal spread.

use super::*;

#[test]
fn catches_an_anti_affinity_pair_on_one_claim() {
    let snapshot = snapshot(vec![
        anti_affine(pod("web-0", "web", 500), "web"),
        anti_affine(pod("web-1", "web", 500), "web"),
    ]);
    let bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::AntiAffinity]));
    let apart = plan(vec![
        claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0"],
        ),
        claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-1"],
        ),
    ]);
    assert_eq!(validate(&snapshot, &apart), vec![]);
}

#[test]
fn catches_a_zonal_spread_skew() {
    let pods = (0..3)
        .map(|i| spread(pod(&format!("web-{i}"), "web", 500), "web"))
        .collect();
    let snapshot = snapshot(pods);
    // zone-b is eligible (small on-demand), so 3 pods in zone-a alone skew by 3.
    let one = |p: &str| {
        claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &[p],
        )
    };
    let bad = plan(vec![one("web-0"), one("web-1"), one("web-2")]);
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::TopologySpread]));
    assert!(
        violations[0].detail.contains("3 selected pods in zone-a"),
        "{}",
        violations[0]
    );
    let mut zone_b = claim(
        &["small"],
        launch("small", "zone-b", "on-demand", 0.12),
        &["web-2"],
    );
    zone_b.requirements.push(RequirementOutput {
        key: LABEL_TOPOLOGY_ZONE.to_string(),
        operator: "In".to_string(),
        values: ["zone-b"].into_iter().collect(),
        min_values: None,
    });
    let zone_a = |p: &str| {
        let mut c = one(p);
        c.requirements.push(RequirementOutput {
            key: LABEL_TOPOLOGY_ZONE.to_string(),
            operator: "In".to_string(),
            values: ["zone-a"].into_iter().collect(),
            min_values: None,
        });
        c
    };
    // Two in zone-a and one in zone-b is within maxSkew 1.
    let good = plan(vec![zone_a("web-0"), zone_a("web-1"), zone_b]);
    assert_eq!(validate(&snapshot, &good), vec![]);
}

/// A term's `namespaceSelector` selects the namespaces whose labels it
/// matches: the snapshot's Namespaces', and for a namespace it lacks, only
/// `kubernetes.io/metadata.name`.
#[test]
fn anti_affinity_reads_the_namespaces_labels() {
    let in_namespace = |mut pod: Pod, namespace: &str| {
        pod.metadata.namespace = Some(namespace.to_string());
        pod
    };
    let selecting = |mut pod: Pod, selector: LabelSelector| {
        let affinity = pod.spec.as_mut().unwrap().affinity.as_mut().unwrap();
        let anti = affinity.pod_anti_affinity.as_mut().unwrap();
        let terms = anti
            .required_during_scheduling_ignored_during_execution
            .as_mut()
            .unwrap();
        terms[0].namespace_selector = Some(selector);
        pod
    };
    let labelled = |key: &str, value: &str| LabelSelector {
        match_labels: Some(BTreeMap::from([(key.to_string(), value.to_string())])),
        ..Default::default()
    };
    let cluster = |selector: LabelSelector, tier: &str| {
        let mut snapshot = snapshot(vec![
            in_namespace(pod("web-0", "web", 500), "shop"),
            selecting(anti_affine(pod("guard", "guard", 500), "web"), selector),
        ]);
        let mut shop = k8s_openapi::api::core::v1::Namespace::default();
        shop.metadata.name = Some("shop".to_string());
        shop.metadata.labels = Some(BTreeMap::from([("tier".to_string(), tier.to_string())]));
        snapshot.namespaces = vec![shop];
        snapshot
    };
    let mut shared = claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["guard"],
    );
    shared.pods.push(PodKey::new("shop", "web-0"));
    let together = plan(vec![shared]);
    let violations = validate(&cluster(labelled("tier", "front"), "front"), &together);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::AntiAffinity]));
    let violations = validate(&cluster(labelled("tier", "front"), "back"), &together);
    assert_eq!(violations, vec![], "shop is not selected");
    let by_name = labelled("kubernetes.io/metadata.name", "shop");
    let violations = validate(&cluster(by_name, "back"), &together);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::AntiAffinity]));
}
