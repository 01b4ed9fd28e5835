//! Every pending pod once, nothing else.

use super::*;

#[test]
fn catches_a_pod_listed_twice() {
    let snapshot = two_pods();
    let mut bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    bad.unschedulable.push(Unschedulable {
        pod: "default/web-1".to_string(),
        reason: "no room".to_string(),
    });
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::PodDuplicated]));
    assert_eq!(
        violations[0].to_string(),
        "pod default/web-1: pod planned more than once: 2 times: claim #0, unschedulable"
    );
}

#[test]
fn catches_a_missing_pod_and_an_unknown_one() {
    let snapshot = two_pods();
    let bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "ghost"],
    )]);
    let violations = validate(&snapshot, &bad);
    assert_eq!(
        rules(&violations),
        BTreeSet::from([Rule::PodMissing, Rule::UnknownPod])
    );
    assert!(
        violations
            .iter()
            .any(|v| v.subject == Subject::Pod("default/web-1".into()))
    );
    assert!(
        violations
            .iter()
            .any(|v| v.subject == Subject::Pod("default/ghost".into()))
    );
}
