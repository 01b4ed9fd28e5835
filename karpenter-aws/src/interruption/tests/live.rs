//! An in-memory EC2 that launches instances, and NodeClaims for them, for
//! the tests of the queue pass and the status poll.

use jiff::Timestamp;
use karpenter_core::api::NodeClaim;
use karpenter_core::scheduling::{LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE};

use super::claim;
use crate::ec2::{
    CreateFleetInput, CreateLaunchTemplateInput, Ec2Api, FleetLaunchTemplateConfig,
    FleetLaunchTemplateOverrides, Image, InMemoryEc2, LaunchTemplateData, Subnet,
    TargetCapacityType,
};

pub(super) const REGION: &str = "us-east-1";
pub(super) const ZONE: &str = "us-east-1a";
pub(super) const TYPE: &str = "m5.large";
const TEMPLATE: &str = "karpenter.k8s.aws/test";

/// When each test's clock starts.
pub(super) fn start() -> Timestamp {
    "2026-11-29T07:00:00Z".parse().expect("a valid timestamp")
}

/// EC2 at [`start`] with a subnet in [`ZONE`], an image and a launch
/// template.
pub(super) async fn ec2() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new(REGION);
    ec2.set_now(start());
    ec2.add_subnet(Subnet {
        subnet_id: "subnet-a".into(),
        vpc_id: "vpc-1".into(),
        availability_zone: ZONE.into(),
        available_ip_address_count: 16,
        ..Subnet::default()
    });
    ec2.add_image(Image {
        image_id: "ami-amd64".into(),
        architecture: "x86_64".into(),
        owner_id: "amazon".into(),
        state: "available".into(),
        ..Image::default()
    });
    let template = CreateLaunchTemplateInput {
        launch_template_name: TEMPLATE.into(),
        launch_template_data: LaunchTemplateData {
            image_id: Some("ami-amd64".into()),
            ..LaunchTemplateData::default()
        },
        ..CreateLaunchTemplateInput::default()
    };
    ec2.create_launch_template(template)
        .await
        .expect("the template is created");
    ec2
}

/// Launches one [`TYPE`] instance of `kind` in [`ZONE`]; its ID.
pub(super) async fn launch(ec2: &InMemoryEc2, kind: TargetCapacityType) -> String {
    let input = CreateFleetInput {
        launch_template_configs: vec![FleetLaunchTemplateConfig {
            launch_template_name: TEMPLATE.into(),
            version: "$Latest".into(),
            overrides: vec![FleetLaunchTemplateOverrides {
                instance_type: TYPE.into(),
                subnet_id: "subnet-a".into(),
                availability_zone: ZONE.into(),
                image_id: None,
                priority: Some(1.0),
            }],
        }],
        total_target_capacity: 1,
        default_target_capacity_type: kind,
        ..CreateFleetInput::default()
    };
    let out = ec2.create_fleet(input).await.expect("the fleet call");
    out.instances
        .first()
        .and_then(|launched| launched.instance_ids.first())
        .cloned()
        .expect("one instance launched")
}

/// The NodeClaim `name` of instance `instance_id`, labelled as the
/// provider labels what it launches.
pub(super) fn claim_of(name: &str, instance_id: &str) -> NodeClaim {
    claim(
        name,
        Some(&format!("aws:///{ZONE}/{instance_id}")),
        &[
            (LABEL_INSTANCE_TYPE_STABLE, TYPE),
            (LABEL_TOPOLOGY_ZONE, ZONE),
        ],
    )
}
