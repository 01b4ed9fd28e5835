//! The EKS documents: an `EC2NodeClass` is read as a typed object (not
//! skipped), kept as written, checked against its CRD's rules with errors
//! naming the file, the document and the field, and unique by name.

use karpenter_scenario::{Kind, LoadError, LoadOptions, Scenario};

/// A seed-style EC2NodeClass: AL2023 by family and alias, subnets and
/// security groups by discovery tag, a node role; `extra` is appended to
/// its spec.
fn node_class(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: {name}
spec:
  amiFamily: AL2023
  amiSelectorTerms:
  - alias: al2023@latest
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: my-cluster
  securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: my-cluster
  role: KarpenterNodeRole-my-cluster
{extra}"
    )
}

/// A NodePool choosing m5 and c5 from the EC2NodeClass `class`.
fn node_pool(class: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: {class}
      requirements:
      - key: karpenter.k8s.aws/instance-family
        operator: In
        values: [m5, c5]
      - key: kubernetes.io/arch
        operator: In
        values: [amd64]
"
    )
}

fn load(name: &str, text: &str) -> Result<Scenario, LoadError> {
    Scenario::from_str(name, text, &LoadOptions::default())
}

#[test]
fn a_seed_eks_manifest_is_read_without_a_warning() {
    let text = format!("{}---\n{}", node_class("default", ""), node_pool("default"));
    let scenario = load("eks.yaml", &text).expect("the seed manifest reads");
    assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
    assert_eq!(scenario.count(Kind::EC2NodeClass), 1);
    assert_eq!(scenario.node_pools.len(), 1);
    let class = &scenario.ec2_node_classes[0];
    assert_eq!(class.source.document, 1);
    assert_eq!(class.metadata.name.as_deref(), Some("default"));
    assert_eq!(class.spec.ami_family.as_deref(), Some("AL2023"));
    assert_eq!(
        class.spec.role.as_deref(),
        Some("KarpenterNodeRole-my-cluster")
    );
    let reference = scenario.node_pools[0]
        .spec
        .template
        .spec
        .node_class_ref
        .as_ref();
    assert_eq!(reference.map(|r| r.kind.as_str()), Some("EC2NodeClass"));
}

#[test]
fn an_ec2_node_class_at_another_version_is_still_skipped() {
    let text =
        node_class("default", "").replace("karpenter.k8s.aws/v1", "karpenter.k8s.aws/v1beta1");
    let scenario = load("old.yaml", &text).expect("a skipped document is no error");
    assert_eq!(scenario.count(Kind::EC2NodeClass), 0);
    assert_eq!(scenario.warnings.len(), 1);
    assert!(
        scenario.warnings[0]
            .message
            .contains("only karpenter.k8s.aws/v1 EC2NodeClass is read"),
        "{:?}",
        scenario.warnings
    );
}

#[test]
fn an_ec2_node_class_is_kept_as_written() {
    // JSON, so the written object can be compared with the text as values;
    // fields the reader has no name for (spec.futureField) are kept too.
    let json = serde_json::json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu", "annotations": {"team": "ml"}},
        "spec": {
            "amiSelectorTerms": [{"alias": "bottlerocket@v1.20.0"}],
            "subnetSelectorTerms": [{"id": "subnet-0123"}],
            "securityGroupSelectorTerms": [{"name": "nodes"}],
            "instanceProfile": "KarpenterNodeInstanceProfile",
            "kubelet": {"maxPods": 58, "podsPerCore": 4},
            "blockDeviceMappings": [{
                "deviceName": "/dev/xvdb",
                "rootVolume": true,
                "ebs": {"volumeSize": "100Gi", "volumeType": "gp3"}
            }],
            "instanceStorePolicy": "RAID0",
            "tags": {"team": "ml"},
            "futureField": {"kept": true}
        }
    });
    let scenario = load("gpu.json", &json.to_string()).expect("the node class reads");
    assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
    let written = serde_json::to_value(&scenario.ec2_node_classes[0].object).expect("writes");
    assert_eq!(written, json);
}

#[test]
fn an_invalid_ec2_node_class_names_the_file_document_and_field() {
    // Document 2: neither a role nor an instance profile, and a bad family.
    let bad = node_class("broken", "")
        .replace("  role: KarpenterNodeRole-my-cluster\n", "")
        .replace("amiFamily: AL2023", "amiFamily: Ubuntu");
    let text = format!("{}---\n{bad}", node_pool("broken"));
    let error = load("eks.yaml", &text).expect_err("an invalid node class is an error");
    let LoadError::Invalid {
        origin,
        object,
        field,
        message,
    } = &error
    else {
        panic!("expected Invalid, got {error:?}");
    };
    assert_eq!(&*origin.file, "eks.yaml");
    assert_eq!(origin.document, 2);
    assert_eq!(object, "EC2NodeClass broken");
    assert_eq!(field, "spec.amiFamily");
    // Every problem is told, the first by its field and the rest in full.
    assert!(message.contains("\"Ubuntu\""), "{message}");
    assert!(
        message.contains("spec.role: must specify exactly one of ['role', 'instanceProfile']"),
        "{message}"
    );
    let text = error.to_string();
    for part in [
        "eks.yaml",
        "document 2",
        "EC2NodeClass broken",
        "field spec.amiFamily",
    ] {
        assert!(text.contains(part), "{text:?} should say {part:?}");
    }
}

#[test]
fn the_kubelet_rules_are_checked_too() {
    let extra =
        "  kubelet:\n    imageGCHighThresholdPercent: 50\n    imageGCLowThresholdPercent: 60\n";
    let error = load("k.yaml", &node_class("default", extra)).expect_err("low above high");
    assert!(
        matches!(&error, LoadError::Invalid { field, .. } if field.starts_with("spec.kubelet")),
        "{error:?}"
    );
}

#[test]
fn two_ec2_node_classes_may_not_share_a_name() {
    let text = format!(
        "{}---\n{}",
        node_class("default", ""),
        node_class("default", "")
    );
    let error = load("twice.yaml", &text).expect_err("a duplicate name is an error");
    assert!(
        matches!(&error, LoadError::Invalid { origin, object, field, .. }
            if origin.document == 2 && object == "EC2NodeClass default" && field == "metadata.name"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("twice.yaml, document 1"),
        "{error}"
    );
    let other = format!("{}---\n{}", node_class("a", ""), node_class("b", ""));
    assert_eq!(
        load("two.yaml", &other)
            .map(|s| s.ec2_node_classes.len())
            .ok(),
        Some(2)
    );
}
