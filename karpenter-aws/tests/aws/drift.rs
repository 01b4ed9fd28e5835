//! Drift: what `is_drifted` reads from the class's status and from the
//! instance as EC2 describes it (image, security groups, subnet).

use karpenter_aws::ec2::InMemoryEc2;
use karpenter_aws::{AwsCloudProvider, ec2::SecurityGroup};
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::{Value, json};

use crate::common::{claim, class, ec2, is_in, provider, ready_status};

const TYPE: &str = "node.kubernetes.io/instance-type";
const ZONE: &str = "topology.kubernetes.io/zone";

/// Launches an `m5.large` in us-east-1a as `name`.
async fn launch(provider: &AwsCloudProvider<InMemoryEc2>, name: &str) -> NodeClaim {
    let wanted = claim(
        name,
        json!([is_in(TYPE, &["m5.large"]), is_in(ZONE, &["us-east-1a"])]),
    );
    provider.create(&wanted).await.expect("a launch")
}

/// The drift reason of `claim`, if any.
async fn drift_of(provider: &AwsCloudProvider<InMemoryEc2>, claim: &NodeClaim) -> Option<String> {
    provider.is_drifted(claim).await.expect("decided")
}

/// The ready status with `groups` as its security groups.
fn with_groups(groups: &[&str]) -> Value {
    let mut status = ready_status();
    status["securityGroups"] = groups
        .iter()
        .map(|id| json!({"id": id, "name": id}))
        .collect();
    status
}

#[tokio::test]
async fn a_new_ami_in_the_class_status_drifts_the_node() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let launched = launch(&provider, "web-1").await;
    assert_eq!(drift_of(&provider, &launched).await, None);
    let mut status = ready_status();
    status["amis"][1]["id"] = json!("ami-new");
    provider.apply_node_class(class(status));
    assert_eq!(
        drift_of(&provider, &launched).await.as_deref(),
        Some("AMIDrift")
    );
}

#[tokio::test]
async fn instances_keep_the_security_groups_they_launched_with() {
    let ec2 = ec2();
    ec2.add_security_group(SecurityGroup {
        group_id: "sg-2".into(),
        group_name: "extra".into(),
        vpc_id: "vpc-1".into(),
        ..SecurityGroup::default()
    });
    let (provider, _clock) = provider(&ec2);
    let before = launch(&provider, "web-1").await;
    assert_eq!(drift_of(&provider, &before).await, None);
    // The class now resolves to one more group: the instance launched
    // without it has drifted, one launched from the new class has not.
    provider.apply_node_class(class(with_groups(&["sg-1", "sg-2"])));
    let after = launch(&provider, "web-2").await;
    let groups: Vec<Vec<String>> = ec2
        .instances()
        .into_iter()
        .map(|i| i.security_group_ids)
        .collect();
    assert_eq!(groups, [vec!["sg-1"], vec!["sg-1", "sg-2"]]);
    assert_eq!(
        drift_of(&provider, &before).await.as_deref(),
        Some("SecurityGroupDrift")
    );
    assert_eq!(drift_of(&provider, &after).await, None);
    // Back to the first set: the roles swap, order does not matter.
    provider.apply_node_class(class(with_groups(&["sg-1"])));
    assert_eq!(drift_of(&provider, &before).await, None);
    assert_eq!(
        drift_of(&provider, &after).await.as_deref(),
        Some("SecurityGroupDrift")
    );
}

#[tokio::test]
async fn a_subnet_dropped_from_the_class_drifts_its_instances() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let launched = launch(&provider, "web-1").await;
    assert_eq!(ec2.instances()[0].subnet_id, "subnet-a2");
    // Another subnet of the same zone going away changes nothing.
    let mut status = ready_status();
    status["subnets"] = json!([
        {"id": "subnet-a2", "zone": "us-east-1a", "zoneID": "use1-az1"},
        {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"},
    ]);
    provider.apply_node_class(class(status));
    assert_eq!(drift_of(&provider, &launched).await, None);
    let mut status = ready_status();
    status["subnets"] = json!([
        {"id": "subnet-a1", "zone": "us-east-1a", "zoneID": "use1-az1"},
        {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"},
    ]);
    provider.apply_node_class(class(status));
    assert_eq!(
        drift_of(&provider, &launched).await.as_deref(),
        Some("SubnetDrift")
    );
}
