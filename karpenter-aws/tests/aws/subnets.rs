//! The subnet a launch takes in a zone: the one with most free addresses,
//! counting what launches in flight are expected to take until EC2's count
//! catches up or upstream's minute-long subnet cache would have expired.

use jiff::SignedDuration;
use karpenter_aws::AwsCloudProvider;
use karpenter_aws::ec2::{InMemoryEc2, Subnet, TargetCapacityType};
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::json;

use crate::common::{claim, ec2, is_in, provider};

const TYPE: &str = "node.kubernetes.io/instance-type";
const ZONE: &str = "topology.kubernetes.io/zone";
const CAPACITY: &str = "karpenter.sh/capacity-type";

/// Sets the free addresses of the us-east-1a subnet `id`.
fn set_free(ec2: &InMemoryEc2, id: &str, free: u32) {
    ec2.add_subnet(Subnet {
        subnet_id: id.into(),
        vpc_id: "vpc-1".into(),
        availability_zone: "us-east-1a".into(),
        available_ip_address_count: free,
        ..Subnet::default()
    });
}

/// EC2 whose us-east-1a subnets are close: `subnet-a1` 100 free,
/// `subnet-a2` 110, so one launch's pods tip the balance.
fn close_subnets() -> InMemoryEc2 {
    let ec2 = ec2();
    set_free(&ec2, "subnet-a2", 110);
    ec2
}

/// Launches one on-demand `instance_type` in us-east-1a; the subnet it
/// landed in, or `None` when it did not launch.
async fn subnet_of_launch(
    provider: &AwsCloudProvider<InMemoryEc2>,
    ec2: &InMemoryEc2,
    instance_type: &str,
) -> Option<String> {
    let wanted = claim(
        "web",
        json!([
            is_in(TYPE, &[instance_type]),
            is_in(ZONE, &["us-east-1a"]),
            is_in(CAPACITY, &["on-demand"]),
        ]),
    );
    let before = ec2.instances().len();
    provider.create(&wanted).await.ok()?;
    let instances = ec2.instances();
    assert_eq!(instances.len(), before + 1);
    // Instance IDs count up, so the newest sorts last.
    instances.last().map(|i| i.subnet_id.clone())
}

#[tokio::test]
async fn launches_in_a_row_spread_until_the_estimates_expire() {
    let ec2 = close_subnets();
    let (provider, clock) = provider(&ec2);
    let first = subnet_of_launch(&provider, &ec2, "m5.large").await;
    assert_eq!(first.as_deref(), Some("subnet-a2"));
    // EC2 counts one address gone from subnet-a2, but the launch's pods
    // are expected to take more: subnet-a1 now has more room.
    assert_eq!(
        ec2.subnet("subnet-a2")
            .map(|s| s.available_ip_address_count),
        Some(109)
    );
    let second = subnet_of_launch(&provider, &ec2, "m5.large").await;
    assert_eq!(second.as_deref(), Some("subnet-a1"));
    // A minute on, EC2's counts are what counts again.
    clock.advance(SignedDuration::from_secs(60));
    let third = subnet_of_launch(&provider, &ec2, "m5.large").await;
    assert_eq!(third.as_deref(), Some("subnet-a2"));
}

#[tokio::test]
async fn an_estimate_ends_when_ec2_counts_below_it() {
    let ec2 = close_subnets();
    let (provider, _clock) = provider(&ec2);
    let first = subnet_of_launch(&provider, &ec2, "m5.large").await;
    assert_eq!(first.as_deref(), Some("subnet-a2"));
    // EC2 now counts fewer free addresses in subnet-a2 than estimated: its
    // count is used from here on, and subnet-a1 takes the next launches.
    set_free(&ec2, "subnet-a2", 40);
    let second = subnet_of_launch(&provider, &ec2, "m5.large").await;
    assert_eq!(second.as_deref(), Some("subnet-a1"));
    let third = subnet_of_launch(&provider, &ec2, "m5.large").await;
    assert_eq!(third.as_deref(), Some("subnet-a1"));
}

#[tokio::test]
async fn a_fleet_that_started_nothing_gives_its_addresses_back() {
    let ec2 = close_subnets();
    let (provider, _clock) = provider(&ec2);
    ec2.set_capacity("m5.large", "us-east-1a", TargetCapacityType::OnDemand, 0);
    assert_eq!(subnet_of_launch(&provider, &ec2, "m5.large").await, None);
    let input = ec2.last_fleet_input().expect("a fleet call");
    let asked: Vec<&str> = input
        .launch_template_configs
        .iter()
        .flat_map(|c| &c.overrides)
        .map(|o| o.subnet_id.as_str())
        .collect();
    assert_eq!(asked, ["subnet-a2"]);
    // Nothing started in subnet-a2, so it is as roomy as before.
    let next = subnet_of_launch(&provider, &ec2, "c5.large").await;
    assert_eq!(next.as_deref(), Some("subnet-a2"));
}
