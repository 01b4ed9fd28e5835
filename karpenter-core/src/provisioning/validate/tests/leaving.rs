//! The pods of nodes on their way out: planned like pending pods.

use super::*;

/// Node `old` in zone-a, tainted `karpenter.sh/disrupted` (a command took it).
fn old_node() -> ClusterNode {
    let node = Node {
        metadata: ObjectMeta {
            name: Some("old".to_string()),
            labels: Some(BTreeMap::from([(
                LABEL_TOPOLOGY_ZONE.to_string(),
                "zone-a".to_string(),
            )])),
            ..Default::default()
        },
        spec: Some(k8s_openapi::api::core::v1::NodeSpec {
            taints: Some(vec![Taint {
                key: DISRUPTED_TAINT_KEY.to_string(),
                effect: "NoSchedule".to_string(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            allocatable: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("4".to_string())),
                ("memory".to_string(), Quantity("8Gi".to_string())),
                ("pods".to_string(), Quantity("10".to_string())),
            ])),
            ..Default::default()
        }),
    };
    ClusterNode {
        node: Some(Arc::new(node)),
        node_claim: None,
    }
}

/// `pod` running on `old`.
fn on_old(mut pod: Pod) -> Pod {
    pod.spec.as_mut().unwrap().node_name = Some("old".to_string());
    pod.status = Some(PodStatus {
        phase: Some("Running".to_string()),
        ..Default::default()
    });
    pod
}

/// `pod`, which may share no zone with a pod of app `web`.
fn zone_anti_affine(mut pod: Pod) -> Pod {
    pod.spec.as_mut().unwrap().affinity = Some(Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(app_selector("web")),
                topology_key: LABEL_TOPOLOGY_ZONE.to_string(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    });
    pod
}

/// On `old`: web-0 (leaves), pinned (`do-not-disrupt`: may stay), agent (a
/// DaemonSet's: stays).
fn cluster() -> Snapshot {
    let mut pinned = on_old(pod("pinned", "db", 500));
    pinned.metadata.annotations = Some(BTreeMap::from([(
        "karpenter.sh/do-not-disrupt".to_string(),
        "true".to_string(),
    )]));
    let mut agent = on_old(pod("agent", "agent", 100));
    agent.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".to_string(),
        kind: "DaemonSet".to_string(),
        name: "agent".to_string(),
        uid: "agent-uid".to_string(),
        ..Default::default()
    }]);
    let mut snapshot = snapshot(vec![on_old(pod("web-0", "web", 1000)), pinned, agent]);
    snapshot.nodes = vec![old_node()];
    snapshot
}

#[test]
fn the_schedulers_plan_places_the_leaving_pods_and_passes() {
    let snapshot = cluster();
    let planned = plan_provisioning(&snapshot);
    let placed: Vec<&str> = planned
        .node_claims
        .iter()
        .flat_map(|c| c.pods.iter().map(PodKey::as_str))
        .collect();
    assert_eq!(placed, ["default/web-0"]);
    assert_eq!(validate(&snapshot, &planned), vec![]);
}

#[test]
fn a_leaving_pod_must_be_planned_and_a_staying_one_may_be() {
    let snapshot = cluster();
    let missing = plan(vec![]);
    let violations = validate(&snapshot, &missing);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::PodMissing]));
    assert_eq!(
        violations[0].subject,
        Subject::Pod(PodKey::new("default", "web-0"))
    );

    // The pinned pod may be planned (the validator does not judge the
    // annotation's clock), once; the DaemonSet's pod never.
    let with_pinned = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "pinned"],
    )]);
    assert_eq!(validate(&snapshot, &with_pinned), vec![]);
    let mut twice = with_pinned.clone();
    twice.unschedulable.push(Unschedulable {
        pod: PodKey::new("default", "pinned"),
        reason: "no room".to_string(),
    });
    assert_eq!(
        rules(&validate(&snapshot, &twice)),
        BTreeSet::from([Rule::PodDuplicated])
    );
    let with_agent = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "agent"],
    )]);
    let violations = validate(&snapshot, &with_agent);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::UnknownPod]));
    assert_eq!(
        violations[0].subject,
        Subject::Pod(PodKey::new("default", "agent"))
    );
}

#[test]
fn a_moved_pod_counts_for_topology_where_it_lands_only() {
    // web-0 may share no zone with another web pod. Moved from zone-a to
    // node `new` in zone-b, it no longer meets web-1 placed in zone-a; left
    // in zone-a beside web-1 it breaks the rule.
    let web = zone_anti_affine(on_old(pod("web-0", "web", 1000)));
    let mut snapshot = snapshot(vec![web, pod("web-1", "web", 1000)]);
    let mut new = old_node();
    let node = Arc::make_mut(new.node.as_mut().unwrap());
    node.metadata.name = Some("new".to_string());
    node.metadata.labels = Some(BTreeMap::from([(
        LABEL_TOPOLOGY_ZONE.to_string(),
        "zone-b".to_string(),
    )]));
    node.spec = None;
    snapshot.nodes = vec![old_node(), new];
    let web_1_in_zone_a = || {
        claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-1"],
        )
    };
    let mut good = plan(vec![web_1_in_zone_a()]);
    good.existing_nodes.push(ExistingPlacement {
        name: "new".to_string(),
        pods: vec![PodKey::new("default", "web-0")],
    });
    assert_eq!(validate(&snapshot, &good), vec![]);
    let mut bad = plan(vec![web_1_in_zone_a()]);
    bad.node_claims[0]
        .pods
        .push(PodKey::new("default", "web-0"));
    assert_eq!(
        rules(&validate(&snapshot, &bad)),
        BTreeSet::from([Rule::AntiAffinity])
    );
}

#[test]
fn a_leaving_pod_the_plan_cannot_place_no_longer_counts_where_it_ran() {
    // web-1 may share no zone with a web pod; web-0 leaves zone-a and finds
    // no home. As upstream leaves the pods it schedules out of its counts,
    // web-1 may take zone-a. Were web-0 held in place (left out of the
    // plan, as its do-not-disrupt annotation allows), it would still count.
    let web_1 = zone_anti_affine(pod("web-1", "web", 1000));
    let mut web_0 = on_old(pod("web-0", "web", 1000));
    web_0.metadata.annotations = Some(BTreeMap::from([(
        "karpenter.sh/do-not-disrupt".to_string(),
        "1h".to_string(),
    )]));
    let mut snapshot = snapshot(vec![web_0, web_1]);
    snapshot.nodes = vec![old_node()];
    let web_1_in_zone_a = || {
        plan(vec![claim(
            &["small", "large"],
            launch("small", "zone-a", "spot", 0.05),
            &["web-1"],
        )])
    };
    let mut moved = web_1_in_zone_a();
    moved.unschedulable.push(Unschedulable {
        pod: PodKey::new("default", "web-0"),
        reason: "no room".to_string(),
    });
    assert_eq!(validate(&snapshot, &moved), vec![]);
    let held = web_1_in_zone_a();
    assert_eq!(
        rules(&validate(&snapshot, &held)),
        BTreeSet::from([Rule::AntiAffinity])
    );
}
