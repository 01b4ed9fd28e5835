//! NodePool limits.

use super::*;

#[test]
fn catches_exceeded_limits() {
    let mut limited = pool("default");
    limited.spec.limits = Some(Quantities::from(BTreeMap::from([(
        "cpu".to_string(),
        Quantity("3".to_string()),
    )])));
    let mut snapshot = two_pods();
    snapshot.node_pools = vec![limited];
    let two = plan(vec![
        claim(
            &["small"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-0"],
        ),
        claim(
            &["small"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-1"],
        ),
    ]);
    let violations = validate(&snapshot, &two);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::NodePoolLimits]));
    assert_eq!(
        violations[0].to_string(),
        "nodepool \"default\": nodepool limits exceeded: cpu: existing nodes 0 + 2 new claim(s) 4 exceed the limit 3"
    );
}

#[test]
fn nodes_on_their_way_out_count_against_no_limit() {
    let mut limited = pool("default");
    limited.spec.limits = Some(Quantities::from(BTreeMap::from([(
        "cpu".to_string(),
        Quantity("3".to_string()),
    )])));
    let mut snapshot = two_pods();
    snapshot.node_pools = vec![limited];
    // A 2-cpu node of the pool whose NodeClaim is being deleted.
    let claim_json = serde_json::json!({
        "metadata": {"name": "old", "deletionTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"nodeClassRef": {"group": "g", "kind": "K", "name": "n"}},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi"}},
    });
    let old: crate::api::NodeClaim = serde_json::from_value(claim_json).expect("a NodeClaim");
    snapshot.nodes = crate::snapshot::join_nodes(Vec::<Node>::new(), vec![old]);
    let one = plan(vec![claim(
        &["small"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0"],
    )]);
    let violations = validate(&snapshot, &one);
    assert!(
        !rules(&violations).contains(&Rule::NodePoolLimits),
        "{violations:?}"
    );
}
