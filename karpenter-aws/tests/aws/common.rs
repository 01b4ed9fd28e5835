//! What the provider tests share: an in-memory EC2 in us-east-1 with two
//! zones of subnets, a security group and AL2023 images for both
//! architectures; a ready EC2NodeClass resolving to them; a pool and claims;
//! a clock the test moves.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};
use karpenter_aws::ec2::{Ec2Api, Image, InMemoryEc2, SecurityGroup, Subnet};
use karpenter_aws::{AwsCloudProvider, AwsConfig, EC2NodeClass, InstanceTypeOptions};
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::InstanceType;
use serde_json::{Value, json};

pub(crate) const REGION: &str = "us-east-1";

/// A clock a test moves by hand.
#[derive(Clone)]
pub(crate) struct Clock(Arc<Mutex<Timestamp>>);

impl Clock {
    pub(crate) fn now(&self) -> Timestamp {
        *self.0.lock().expect("clock")
    }

    pub(crate) fn advance(&self, by: SignedDuration) {
        let mut now = self.0.lock().expect("clock");
        *now = now.checked_add(by).expect("a later time");
    }
}

/// EC2 with subnets `subnet-a1` (100 free addresses) and `subnet-a2` (500)
/// in us-east-1a, `subnet-b` (200) in us-east-1b, `sg-1`, and the images
/// `ami-amd64` and `ami-arm64`.
pub(crate) fn ec2() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new(REGION);
    for (id, zone, free) in [
        ("subnet-a1", "us-east-1a", 100),
        ("subnet-a2", "us-east-1a", 500),
        ("subnet-b", "us-east-1b", 200),
    ] {
        ec2.add_subnet(Subnet {
            subnet_id: id.into(),
            vpc_id: "vpc-1".into(),
            availability_zone: zone.into(),
            available_ip_address_count: free,
            ..Subnet::default()
        });
    }
    ec2.add_security_group(SecurityGroup {
        group_id: "sg-1".into(),
        group_name: "nodes".into(),
        vpc_id: "vpc-1".into(),
        ..SecurityGroup::default()
    });
    for (id, arch) in [
        ("ami-amd64", "x86_64"),
        ("ami-arm64", "arm64"),
        ("ami-new", "x86_64"),
    ] {
        ec2.add_image(Image {
            image_id: id.into(),
            name: format!("al2023-{arch}"),
            architecture: arch.into(),
            owner_id: "amazon".into(),
            state: "available".into(),
            ..Image::default()
        });
    }
    ec2
}

/// The status of a ready class: the subnets, group and images of [`ec2`].
pub(crate) fn ready_status() -> Value {
    json!({
        "subnets": [
            {"id": "subnet-a1", "zone": "us-east-1a", "zoneID": "use1-az1"},
            {"id": "subnet-a2", "zone": "us-east-1a", "zoneID": "use1-az1"},
            {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"},
        ],
        "securityGroups": [{"id": "sg-1", "name": "nodes"}],
        "amis": [
            {"id": "ami-arm64", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]},
            {"id": "ami-amd64", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]},
        ],
        "instanceProfile": "KarpenterNodeProfile",
    })
}

/// The EC2NodeClass `default` with `status`.
pub(crate) fn class(status: Value) -> EC2NodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        },
        "status": status,
    }))
    .expect("an EC2NodeClass")
}

/// A provider over `ec2` in cluster `demo` with `options` and the ready
/// class applied, its clock starting at the epoch.
pub(crate) fn provider_with(
    ec2: &InMemoryEc2,
    options: InstanceTypeOptions,
) -> (AwsCloudProvider<InMemoryEc2>, Clock) {
    provider_over(ec2.clone(), options)
}

/// [`provider_with`] over any EC2 client: the in-memory one, or the SDK's
/// calling a server that plays EC2.
pub(crate) fn provider_over<E: Ec2Api>(
    ec2: E,
    options: InstanceTypeOptions,
) -> (AwsCloudProvider<E>, Clock) {
    let clock = Clock(Arc::new(Mutex::new(Timestamp::UNIX_EPOCH)));
    let ticking = clock.clone();
    let config = AwsConfig {
        region: REGION.into(),
        cluster_name: "demo".into(),
        join: None,
    };
    let provider = AwsCloudProvider::new(ec2, config, options)
        .expect("the embedded catalog")
        .with_clock(move || ticking.now());
    provider.apply_node_class(class(ready_status()));
    (provider, clock)
}

/// [`provider_with`] at the default options.
pub(crate) fn provider(ec2: &InMemoryEc2) -> (AwsCloudProvider<InMemoryEc2>, Clock) {
    provider_with(ec2, InstanceTypeOptions::default())
}

/// The pool `default`, of class `class_name`, limited to general-purpose
/// types so the suite launches something ordinary.
pub(crate) fn pool_of(class_name: &str) -> NodePool {
    serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {
            "requirements": [],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class_name},
        }}},
    }))
    .expect("a NodePool")
}

pub(crate) fn pool() -> NodePool {
    pool_of("default")
}

/// A claim of pool `default` asking for 1 CPU and 2 GiB under
/// `requirements`.
pub(crate) fn claim(name: &str, requirements: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": requirements,
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
        },
    }))
    .expect("a NodeClaim")
}

/// The claim's label `key`.
pub(crate) fn label(claim: &NodeClaim, key: &str) -> String {
    claim
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .cloned()
        .unwrap_or_default()
}

/// A requirement `key In values`, as a claim writes it.
pub(crate) fn is_in(key: &str, values: &[&str]) -> Value {
    json!({"key": key, "operator": "In", "values": values})
}

/// The annotations of `class` as the provider stores it.
pub(crate) fn annotations(claim: &NodeClaim) -> BTreeMap<String, String> {
    claim.metadata.annotations.clone().unwrap_or_default()
}

/// The cheapest available offering among `names` as `capacity_type` in
/// `zone`, by the provider's own instance types.
pub(crate) fn cheapest<'t>(
    types: &'t [InstanceType],
    names: &[&str],
    zone: &str,
    capacity_type: &str,
) -> (&'t str, f64) {
    types
        .iter()
        .filter(|t| names.contains(&t.name.as_str()))
        .flat_map(|t| {
            t.offerings
                .iter()
                .filter(|o| o.available && o.zone == zone && o.capacity_type == capacity_type)
                .map(move |o| (t.name.as_str(), o.price))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("an available offering")
}
