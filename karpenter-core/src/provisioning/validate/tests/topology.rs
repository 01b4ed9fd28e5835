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
