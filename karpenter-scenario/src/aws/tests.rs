use karpenter_aws::on_demand_price;
use karpenter_core::scheduling::{CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT};

use super::*;
use crate::LoadOptions;

const CLASS: &str = r#"
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: main}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"#;

const STATUS: &str = r#"
status:
  subnets:
  - {id: subnet-1, zone: us-east-1a, zoneID: use1-az1}
  - {id: subnet-2, zone: us-east-1b, zoneID: use1-az2}
  securityGroups: [{id: sg-1}]
  amis:
  - id: ami-new
    requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  capacityReservations:
  - {id: cr-counted, instanceType: m5.large, availabilityZone: us-east-1a, availableInstanceCount: 3, instanceMatchCriteria: open, ownerID: "1"}
  - {id: cr-plain, instanceType: c5.large, availabilityZone: us-east-1b, instanceMatchCriteria: open, ownerID: "1"}
"#;

fn pool(name: &str, reference: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n{reference}      requirements: []\n"
    )
}

fn ec2_ref(name: &str) -> String {
    format!("      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: {name}}}\n")
}

fn load(text: &str) -> Scenario {
    Scenario::from_str("test.yaml", text, &LoadOptions::default()).unwrap()
}

fn with_gate() -> InstanceTypeOptions {
    InstanceTypeOptions {
        reserved_capacity: true,
        ..InstanceTypeOptions::default()
    }
}

fn find<'a>(types: &'a [InstanceType], name: &str) -> &'a InstanceType {
    types.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn a_class_offers_its_subnets_zones_at_the_regions_prices() {
    let text = format!("{CLASS}{STATUS}{}", pool("web", &ec2_ref("main")));
    let aws = load(&text)
        .aws_instance_types("us-east-1", &with_gate())
        .unwrap();
    assert!(aws.warnings.is_empty(), "{:?}", aws.warnings);
    assert!(aws.node_classes.contains_key("web"));
    let m5 = find(&aws.per_pool["web"], "m5.large");
    let price = on_demand_price(Catalog::embedded().unwrap(), "us-east-1", "m5.large").unwrap();
    let zones: std::collections::BTreeSet<&str> =
        m5.offerings.iter().map(|o| o.zone.as_str()).collect();
    assert_eq!(
        zones.into_iter().collect::<Vec<_>>(),
        ["us-east-1a", "us-east-1b"]
    );
    assert!(
        (m5.offerings.iter())
            .filter(|o| o.capacity_type != CAPACITY_TYPE_RESERVED)
            .all(|o| o.price == price)
    );
}

#[test]
fn reservations_count_what_the_status_says_and_one_without() {
    let text = format!("{CLASS}{STATUS}{}", pool("web", &ec2_ref("main")));
    let aws = load(&text)
        .aws_instance_types("us-east-1", &with_gate())
        .unwrap();
    let reserved = |name: &str| {
        let t = find(&aws.per_pool["web"], name);
        let o = t
            .offerings
            .iter()
            .find(|o| o.capacity_type == CAPACITY_TYPE_RESERVED);
        o.and_then(|o| o.reservation.as_ref()).map(|r| r.capacity)
    };
    assert_eq!(reserved("m5.large"), Some(3));
    assert_eq!(reserved("c5.large"), Some(1));
    let off = load(&text)
        .aws_instance_types("us-east-1", &InstanceTypeOptions::default())
        .unwrap();
    let m5 = find(&off.per_pool["web"], "m5.large");
    assert!(
        m5.offerings
            .iter()
            .all(|o| o.capacity_type != CAPACITY_TYPE_RESERVED)
    );
}

#[test]
fn a_count_that_is_not_a_number_names_its_field() {
    let bad = STATUS.replace("availableInstanceCount: 3", "availableInstanceCount: many");
    let text = format!("{CLASS}{bad}{}", pool("web", &ec2_ref("main")));
    let error = load(&text)
        .aws_instance_types("us-east-1", &with_gate())
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("test.yaml, document 1"), "{text}");
    assert!(text.contains("EC2NodeClass main"), "{text}");
    assert!(
        text.contains("status.capacityReservations[0].availableInstanceCount"),
        "{text}"
    );
}

#[test]
fn without_a_status_a_class_gets_three_zones_of_the_region() {
    let text = format!("{CLASS}{}", pool("web", &ec2_ref("main")));
    let aws = load(&text)
        .aws_instance_types("eu-west-1", &with_gate())
        .unwrap();
    let m5 = find(&aws.per_pool["web"], "m5.large");
    let mut zones: Vec<&str> = m5.offerings.iter().map(|o| o.zone.as_str()).collect();
    zones.dedup();
    assert_eq!(zones, ["eu-west-1a", "eu-west-1b", "eu-west-1c"]);
    // No table of its own: priced from us-east-1's.
    let price = on_demand_price(Catalog::embedded().unwrap(), "us-east-1", "m5.large");
    assert_eq!(m5.offerings.first().map(|o| o.price), price);
}

#[test]
fn pools_without_their_class_get_the_default_and_a_warning_when_named() {
    let aks = "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: x}\n";
    let text = format!(
        "{CLASS}{}{}{}{}",
        pool("missing", &ec2_ref("gone")),
        pool("bare", ""),
        pool("azure", aks),
        pool("web", &ec2_ref("main")),
    );
    let aws = load(&text)
        .aws_instance_types("us-east-1", &with_gate())
        .unwrap();
    assert_eq!(aws.warnings.len(), 2, "{:?}", aws.warnings);
    assert!(aws.warnings[0].contains("EC2NodeClass gone, which the input lacks"));
    assert!(aws.warnings[1].contains("AKSNodeClass x"));
    assert!(
        aws.warnings
            .iter()
            .all(|w| w.contains("default EC2NodeClass"))
    );
    let shared = |a: &str, b: &str| Arc::ptr_eq(&aws.per_pool[a], &aws.per_pool[b]);
    assert!(shared("missing", "bare") && shared("bare", "azure"));
    assert!(!shared("bare", "web"));
    assert_eq!(aws.node_classes.keys().collect::<Vec<_>>(), ["web"]);
}

#[test]
fn a_kubelet_value_that_is_not_a_quantity_names_document_and_field() {
    let class = format!("{CLASS}  kubelet: {{kubeReserved: {{memory: lots}}}}\n");
    let text = format!("{class}{}", pool("web", &ec2_ref("main")));
    let mut scenario = Scenario::default();
    let options = LoadOptions::default();
    // Read without the validation that may catch it first: the provider's
    // own error must name the place too.
    let error = match scenario.read_bytes("test.yaml".into(), text.as_bytes(), &options) {
        Err(error) => error,
        Ok(()) => match scenario.validate() {
            Err(error) => error,
            Ok(()) => scenario
                .aws_instance_types("us-east-1", &with_gate())
                .unwrap_err(),
        },
    };
    let text = error.to_string();
    assert!(text.contains("test.yaml, document 1"), "{text}");
    assert!(text.contains("kubeReserved"), "{text}");
    let mut unvalidated = Scenario::default();
    let class_only = format!("{class}{}", pool("web", &ec2_ref("main")));
    unvalidated
        .read_bytes("test.yaml".into(), class_only.as_bytes(), &options)
        .unwrap();
    let text = (unvalidated.aws_instance_types("us-east-1", &with_gate()))
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("EC2NodeClass main: field spec.kubelet.kubeReserved"),
        "{text}"
    );
}

#[test]
fn a_malformed_region_is_refused_and_a_tableless_one_is_not() {
    let scenario = || load(&format!("{CLASS}{}", pool("web", &ec2_ref("main"))));
    let options = InstanceTypeOptions::default();
    assert!(scenario().into_aws_snapshot("us-east-1", &options).is_ok());
    assert!(
        scenario()
            .into_aws_snapshot("ap-southeast-5", &options)
            .is_ok()
    );
    let error = scenario()
        .into_aws_snapshot("eastus", &options)
        .unwrap_err()
        .to_string();
    assert!(error.contains("eastus"), "{error}");
}

#[test]
fn the_snapshot_carries_aws_labels_and_rank() {
    let text = format!("{CLASS}{STATUS}{}", pool("web", &ec2_ref("main")));
    let (snapshot, _) = load(&text)
        .into_aws_snapshot("us-east-1", &with_gate())
        .unwrap();
    assert_eq!(snapshot.launch_rank, karpenter_aws::LAUNCH_RANK);
    for key in [
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/capacity-reservation-id",
        "topology.k8s.aws/zone-id",
    ] {
        assert!(snapshot.well_known_labels.contains(key), "{key}");
    }
    assert!(
        !snapshot
            .well_known_labels
            .contains("karpenter.azure.com/sku-family")
    );
    let m5 = find(&snapshot.instance_types["web"], "m5.large");
    assert!(
        m5.offerings
            .iter()
            .any(|o| o.capacity_type == CAPACITY_TYPE_SPOT)
    );
}

/// A claim of pool `web` on `m5.large` with `image` and hash annotations.
fn claim(name: &str, image: &str, hash: &str, version: &str) -> String {
    format!(
        r#"---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: {name}
  labels: {{karpenter.sh/nodepool: web, node.kubernetes.io/instance-type: m5.large, kubernetes.io/arch: amd64}}
  annotations: {{karpenter.k8s.aws/ec2nodeclass-hash: "{hash}", karpenter.k8s.aws/ec2nodeclass-hash-version: {version}}}
spec:
  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: main}}
  requirements: []
status:
  imageID: {image}
"#
    )
}

#[test]
fn drift_is_the_hash_then_the_image() {
    let class = CLASS.replace(
        "metadata: {name: main}",
        "metadata:\n  name: main\n  annotations: {karpenter.k8s.aws/ec2nodeclass-hash: \"111\", karpenter.k8s.aws/ec2nodeclass-hash-version: v6}",
    );
    let text = format!(
        "{class}{STATUS}{}{}{}{}{}",
        pool("web", &ec2_ref("main")),
        claim("hash-changed", "ami-new", "222", "v6"),
        claim("other-version", "ami-new", "222", "v5"),
        claim("old-image", "ami-old", "111", "v6"),
        claim("current", "ami-new", "111", "v6"),
    );
    let (snapshot, _) = load(&text)
        .into_aws_snapshot("us-east-1", &with_gate())
        .unwrap();
    let drift: Vec<(&str, &str)> = (snapshot.provider_drift.iter())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        drift,
        [
            ("hash-changed", "NodeClassDrift"),
            ("old-image", "AMIDrift")
        ]
    );
}

#[test]
fn spot_price_files_read_and_their_errors_name_line_and_field() {
    let text = "instanceType,zone,price\nm5.large,us-east-1a,0.04\n\nc5.large, us-east-1b ,0.031\n";
    let prices = parse_spot_prices("spot.csv", text).unwrap();
    assert_eq!(prices.len(), 2);
    assert_eq!(
        prices[&("c5.large".to_owned(), "us-east-1b".to_owned())],
        0.031
    );
    let error = |text: &str| parse_spot_prices("spot.csv", text).unwrap_err().to_string();
    let header = error("type,zone,price\n");
    assert!(header.starts_with("spot.csv, line 1 column 1"), "{header}");
    assert!(header.contains("instanceType,zone,price"), "{header}");
    for bad in ["-1", "NaN", "inf", "cheap"] {
        let text =
            format!("instanceType,zone,price\nm5.large,us-east-1a,1\nc5.large,us-east-1a,{bad}\n");
        let message = error(&text);
        assert!(
            message.starts_with("spot.csv, line 3 column 21, field price"),
            "{message}"
        );
    }
    let short = error("instanceType,zone,price\nm5.large,us-east-1a\n");
    assert!(short.starts_with("spot.csv, line 2"), "{short}");
    let twice = error("instanceType,zone,price\nm5.large,a,1\nm5.large,a,2\n");
    assert!(
        twice.contains("line 3") && twice.contains("twice"),
        "{twice}"
    );
    assert!(error("").contains("header"));
}

#[test]
fn only_the_shipped_tables_are_a_regions_own() {
    assert!(has_own_prices("us-east-1").unwrap());
    assert!(has_own_prices("us-gov-west-1").unwrap());
    assert!(!has_own_prices("eu-west-1").unwrap());
}
