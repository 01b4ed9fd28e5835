use karpenter_core::resources::ResourceList;
use serde_json::json;

use super::{instance_type, nodeclass, on_demand, reserved, resources, sized};
use crate::launch::{LaunchError, launch_templates};

fn status() -> serde_json::Value {
    json!({"amis": [
        {"id": "ami-arm", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]},
        {"id": "ami-x86", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]},
        {"id": "ami-any", "requirements": []}
    ]})
}

#[test]
fn types_share_a_template_when_ami_pods_and_efa_match() {
    let class = nodeclass(status());
    let mut efa = resources(4, 16, 110);
    efa.set("vpc.amazonaws.com/efa", 1000);
    let types = [
        instance_type("m5.xlarge", vec![on_demand("zone-a", 1.0)]),
        instance_type("c5.xlarge", vec![on_demand("zone-a", 1.0)]),
        sized(
            "t3.small",
            vec![on_demand("zone-a", 0.1)],
            resources(2, 2, 11),
        ),
        sized("c5n.18xlarge", vec![on_demand("zone-a", 3.0)], efa),
    ];
    let templates =
        launch_templates(&class, &types, "on-demand", &ResourceList::new()).expect("templates");
    // Without an EFA request the EFA type shares the 110-pod template.
    let mut groups: Vec<Vec<&str>> = templates
        .iter()
        .map(|t| t.instance_types.iter().map(String::as_str).collect())
        .collect();
    groups.sort();
    assert_eq!(
        groups,
        [
            vec!["m5.xlarge", "c5.xlarge", "c5n.18xlarge"],
            vec!["t3.small"]
        ]
    );
    for template in &templates {
        assert_eq!(template.image_id, "ami-x86", "the first AMI the type meets");
        assert!(
            template.name.starts_with("karpenter.k8s.aws/"),
            "{}",
            template.name
        );
        assert_eq!(template.kube_reserved["cpu"], "100m");
    }
    let mut requests = ResourceList::new();
    requests.set("vpc.amazonaws.com/efa", 1000);
    let with_efa = launch_templates(&class, &types, "on-demand", &requests).expect("templates");
    assert_eq!(with_efa.len(), 3);
    assert!(
        with_efa
            .iter()
            .any(|t| t.efa_count == 1 && t.instance_types == ["c5n.18xlarge"])
    );
}

#[test]
fn names_are_stable_and_change_with_what_they_key_on() {
    let class = nodeclass(status());
    let types = [instance_type("m5.xlarge", vec![on_demand("zone-a", 1.0)])];
    let name = |class: &crate::EC2NodeClass, capacity_type: &str| {
        launch_templates(class, &types, capacity_type, &ResourceList::new()).expect("templates")[0]
            .name
            .clone()
    };
    assert_eq!(name(&class, "on-demand"), name(&class.clone(), "on-demand"));
    assert_ne!(name(&class, "on-demand"), name(&class, "spot"));
    let mut changed = class.clone();
    changed.spec.context = Some("ctx-2".to_owned());
    assert_ne!(name(&class, "on-demand"), name(&changed, "on-demand"));
}

#[test]
fn names_change_with_the_resolved_security_groups_as_a_set() {
    let with_groups = |groups: serde_json::Value| {
        let mut status = status();
        status["securityGroups"] = groups;
        nodeclass(status)
    };
    let types = [instance_type("m5.xlarge", vec![on_demand("zone-a", 1.0)])];
    let name = |class: &crate::EC2NodeClass| {
        launch_templates(class, &types, "on-demand", &ResourceList::new()).expect("templates")[0]
            .name
            .clone()
    };
    let one = with_groups(json!([{"id": "sg-1"}]));
    let two = with_groups(json!([{"id": "sg-1"}, {"id": "sg-2"}]));
    let swapped = with_groups(json!([{"id": "sg-2"}, {"id": "sg-1"}]));
    // A class whose groups changed must not reuse a template that would
    // launch into the old ones; the order they resolved in does not count.
    assert_ne!(name(&one), name(&two));
    assert_eq!(name(&two), name(&swapped));
}

#[test]
fn a_reserved_launch_gets_one_template_per_reservation() {
    let class = nodeclass(status());
    let types = [instance_type(
        "p5.48xlarge",
        vec![
            reserved("zone-a", 0.1, "cr-a", "default", false),
            reserved("zone-b", 0.1, "cr-b", "default", false),
            on_demand("zone-a", 98.0),
        ],
    )];
    let templates =
        launch_templates(&class, &types, "reserved", &ResourceList::new()).expect("templates");
    let mut reservations: Vec<(&str, &str)> = templates
        .iter()
        .filter_map(|t| t.reservation.as_ref())
        .map(|r| (r.id.as_str(), r.zone.as_str()))
        .collect();
    reservations.sort_unstable();
    assert_eq!(reservations, [("cr-a", "zone-a"), ("cr-b", "zone-b")]);
    assert_ne!(templates[0].name, templates[1].name);
}

#[test]
fn missing_or_unusable_amis_are_launch_failures() {
    let types = [instance_type("m5.xlarge", vec![on_demand("zone-a", 1.0)])];
    let expect_failure = |status: serde_json::Value, needle: &str| {
        let class = nodeclass(status);
        match launch_templates(&class, &types, "on-demand", &ResourceList::new()) {
            Err(LaunchError::Create { reason, message }) => {
                assert_eq!(reason, "LaunchFailed");
                assert!(message.contains(needle), "{message}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    };
    expect_failure(json!({}), "no amis");
    // A label the type does not define is not met (NotIn of it is).
    expect_failure(
        json!({"amis": [{"id": "ami-custom", "requirements": [{"key": "example.com/custom", "operator": "In", "values": ["x"]}]}]}),
        "ami-custom",
    );
    let not_in = nodeclass(
        json!({"amis": [{"id": "ami-not-in", "requirements": [{"key": "example.com/custom", "operator": "NotIn", "values": ["x"]}]}]}),
    );
    let templates =
        launch_templates(&not_in, &types, "on-demand", &ResourceList::new()).expect("met");
    assert_eq!(templates[0].image_id, "ami-not-in");
    expect_failure(
        json!({"amis": [{"id": "ami-arm", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}]}),
        "ami-arm",
    );
    let bad = nodeclass(json!({"amis": [
        {"id": "ami-ok", "requirements": []},
        {"id": "ami-bad", "requirements": [{"key": "kubernetes.io/arch", "operator": "Gt", "values": ["x", "y"]}]}
    ]}));
    let err = launch_templates(&bad, &types, "on-demand", &ResourceList::new())
        .expect_err("unreadable requirements");
    assert!(
        matches!(&err, LaunchError::AmiRequirements { index: 1, id, .. } if id == "ami-bad"),
        "{err}"
    );
    assert!(
        err.to_string().contains("status.amis[1].requirements"),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
    assert_eq!(err.reason(), "LaunchFailed");
}
