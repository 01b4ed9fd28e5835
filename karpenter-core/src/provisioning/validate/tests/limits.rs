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
