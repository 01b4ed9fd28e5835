//! Which daemons count on a new node.

use super::*;

/// A DaemonSet `kube-system/agent` whose pod is `spec`.
fn daemon_set(spec: PodSpec) -> DaemonSet {
    DaemonSet {
        metadata: ObjectMeta {
            name: Some("agent".to_string()),
            namespace: Some("kube-system".to_string()),
            ..Default::default()
        },
        spec: DaemonSetSpec {
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(spec),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn leaves_out_daemons_with_dra_claims() {
    // A DaemonSet of 1500m that claims a device: upstream's default
    // ignore-dra-requests counts it on no node, so the small type holds the
    // 1000m pod.
    let mut daemon_spec = PodSpec {
        containers: vec![container(1500)],
        ..Default::default()
    };
    daemon_spec.resource_claims = Some(vec![k8s_openapi::api::core::v1::PodResourceClaim {
        name: "gpu".to_string(),
        resource_claim_name: Some("gpu-0".to_string()),
        ..Default::default()
    }]);
    let mut snapshot = snapshot(vec![pod("web-0", "web", 1000)]);
    snapshot.daemon_sets = vec![daemon_set(daemon_spec.clone())];
    let good = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0"],
    )]);
    assert_eq!(validate(&snapshot, &good), vec![]);
    assert_eq!(validate(&snapshot, &plan_provisioning(&snapshot)), vec![]);
    // Without the claim the daemon counts, and the small type is too small.
    daemon_spec.resource_claims = None;
    snapshot.daemon_sets = vec![daemon_set(daemon_spec)];
    assert_eq!(
        rules(&validate(&snapshot, &good)),
        BTreeSet::from([Rule::OverCommitted])
    );
}

#[test]
fn counts_daemons_whose_live_pod_has_match_fields_affinity() {
    // A DaemonSet of 1500m with a live pod, whose affinity the DaemonSet
    // controller rewrote to `matchFields`; upstream reads no matchFields, so the
    // daemon lands on every new node.
    let daemon_spec = PodSpec {
        containers: vec![container(1500)],
        ..Default::default()
    };
    let mut live_spec = daemon_spec.clone();
    live_spec.node_name = Some("node-0".to_string());
    live_spec.affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".to_string(),
                        operator: "In".to_string(),
                        values: Some(vec!["node-0".to_string()]),
                    }]),
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    let mut live = pod("agent-x", "agent", 0);
    live.metadata.namespace = Some("kube-system".to_string());
    live.spec = Some(live_spec);
    live.metadata.owner_references = Some(vec![OwnerReference {
        kind: "DaemonSet".to_string(),
        name: "agent".to_string(),
        ..Default::default()
    }]);
    let mut snapshot = snapshot(vec![pod("web-0", "web", 1000), live]);
    snapshot.daemon_sets = vec![daemon_set(daemon_spec)];
    let bad = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0"],
    )]);
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::OverCommitted]));
    assert!(
        violations[0].detail.contains("with its daemons (cpu=1500m"),
        "{}",
        violations[0]
    );
    let good = plan(vec![claim(
        &["large"],
        launch("large", "zone-a", "spot", 0.20),
        &["web-0"],
    )]);
    assert_eq!(validate(&snapshot, &good), vec![]);
}
