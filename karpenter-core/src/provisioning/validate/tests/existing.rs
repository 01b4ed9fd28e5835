//! Existing nodes.

use super::*;

#[test]
fn catches_an_over_committed_node_and_a_bad_destination() {
    let mut node = Node {
        metadata: ObjectMeta {
            name: Some("node-0".to_string()),
            labels: Some(BTreeMap::from([(
                LABEL_TOPOLOGY_ZONE.to_string(),
                "zone-a".to_string(),
            )])),
            ..Default::default()
        },
        status: Some(NodeStatus {
            allocatable: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("2".to_string())),
                ("memory".to_string(), Quantity("8Gi".to_string())),
                ("pods".to_string(), Quantity("10".to_string())),
            ])),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut running = pod("db-0", "db", 1500);
    running.spec.as_mut().unwrap().node_name = Some("node-0".to_string());
    let mut snapshot = snapshot(vec![pod("web-0", "web", 1000), running]);
    snapshot.nodes = vec![ClusterNode {
        node: Some(Arc::new(node.clone())),
        node_claim: None,
    }];
    let mut bad = plan(vec![]);
    bad.existing_nodes.push(ExistingPlacement {
        name: "node-0".to_string(),
        pods: vec![PodKey::new("default", "web-0")],
    });
    let violations = validate(&snapshot, &bad);
    assert_eq!(rules(&violations), BTreeSet::from([Rule::OverCommitted]));
    assert_eq!(
        violations[0].to_string(),
        "node \"node-0\": over-committed: cpu: allocatable 2 − running 1500m − added 1"
    );
    node.spec = Some(k8s_openapi::api::core::v1::NodeSpec {
        taints: Some(vec![Taint {
            key: DISRUPTED_TAINT_KEY.to_string(),
            effect: "NoSchedule".to_string(),
            ..Default::default()
        }]),
        ..Default::default()
    });
    snapshot.nodes[0].node = Some(Arc::new(node));
    assert!(
        rules(&validate(&snapshot, &bad))
            .is_superset(&BTreeSet::from([Rule::NotADestination, Rule::Taint]))
    );
}
