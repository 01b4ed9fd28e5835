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
        pod: PodKey::new("default", "web-1"),
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
            .any(|v| v.subject == Subject::Pod(PodKey::new("default", "web-1")))
    );
    assert!(
        violations
            .iter()
            .any(|v| v.subject == Subject::Pod(PodKey::new("default", "ghost")))
    );
}

/// `pod` claiming a DRA device from its first container.
fn with_dra_claim(mut pod: Pod) -> Pod {
    let spec = pod.spec.as_mut().expect("a spec");
    if let Some(resources) = spec.containers[0].resources.as_mut() {
        resources.claims = Some(vec![k8s_openapi::api::core::v1::ResourceClaim {
            name: "gpu".to_string(),
            ..Default::default()
        }]);
    }
    pod
}

#[test]
fn catches_a_pod_with_dra_claims_that_is_placed() {
    let snapshot = snapshot(vec![
        pod("web-0", "web", 1000),
        with_dra_claim(pod("web-1", "web", 1000)),
    ]);
    let bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::DraPodPlaced]));
    assert_eq!(
        violations[0].to_string(),
        "pod default/web-1: pod with DRA claims placed: placed on claim #0, but it has \
         Dynamic Resource Allocation claims"
    );
    let mut good = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0"],
    )]);
    good.unschedulable.push(Unschedulable {
        pod: PodKey::new("default", "web-1"),
        reason: crate::provisioning::DRA_UNSUPPORTED.to_string(),
    });
    assert_eq!(validate(&snapshot, &good), vec![]);
    assert_eq!(validate(&snapshot, &plan_provisioning(&snapshot)), vec![]);
}

#[test]
fn pods_that_are_not_pending_must_not_be_planned() {
    // Preempting (nominated), held by a scheduling gate, and a static pod's
    // mirror: none is pending.
    let mut preempting = pod("web-1", "web", 1000);
    if let Some(status) = preempting.status.as_mut() {
        status.nominated_node_name = Some("node-a".to_string());
    }
    let mut gated = pod("web-2", "web", 1000);
    gated.status = Some(PodStatus {
        phase: Some("Pending".to_string()),
        conditions: Some(vec![PodCondition {
            type_: "PodScheduled".to_string(),
            status: "False".to_string(),
            reason: Some("SchedulingGated".to_string()),
            ..Default::default()
        }]),
        ..Default::default()
    });
    let mut mirror = pod("web-3", "web", 1000);
    mirror.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".to_string(),
        kind: "Node".to_string(),
        name: "node-a".to_string(),
        ..Default::default()
    }]);
    let mut bare = pod("web-4", "web", 1000);
    bare.status = None;
    let snapshot = snapshot(vec![
        pod("web-0", "web", 1000),
        preempting,
        gated,
        mirror,
        bare,
    ]);
    let good = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-4"],
    )]);
    assert_eq!(validate(&snapshot, &good), vec![]);
    assert_eq!(validate(&snapshot, &plan_provisioning(&snapshot)), vec![]);
    let bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1", "web-2", "web-3", "web-4"],
    )]);
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::UnknownPod]));
    let unknown: BTreeSet<&Subject> = violations.iter().map(|v| &v.subject).collect();
    assert_eq!(
        unknown,
        BTreeSet::from([
            &Subject::Pod(PodKey::new("default", "web-1")),
            &Subject::Pod(PodKey::new("default", "web-2")),
            &Subject::Pod(PodKey::new("default", "web-3")),
        ])
    );
}
