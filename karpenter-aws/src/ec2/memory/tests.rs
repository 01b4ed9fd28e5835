use jiff::{SignedDuration, Timestamp};

use super::{InMemoryEc2, zone_id_prefix};
use crate::ec2::{
    CapacityReservation, CreateFleetInput, CreateLaunchTemplateInput, CreateTagsInput,
    DescribeInput, DescribeInstanceTypeOfferingsInput, DescribeInstanceTypesInput,
    DescribeLaunchTemplatesInput, DescribeSpotPriceHistoryInput, Ec2Api, Ec2Error, Filter,
    FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides, Image, InMemoryQueue, InstanceState,
    LaunchTemplateData, Operation, QueueApi, ReceiveMessageInput, SpotAllocationStrategy, Subnet,
    Tag, TagSpecification, TargetCapacityType, TerminateInstancesInput,
};

mod describe;
mod fleet;
mod inserted;
mod instances;
mod placement;

const REGION: &str = "us-east-1";
const TEMPLATE: &str = "karpenter.k8s.aws/abc";

/// EC2 with one subnet of `ips` free addresses in each of zones a and b,
/// an amd64 image and the launch template [`TEMPLATE`].
async fn ready(ips: u32) -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new(REGION);
    for zone in ["a", "b"] {
        ec2.add_subnet(Subnet {
            subnet_id: format!("subnet-{zone}"),
            vpc_id: "vpc-1".into(),
            availability_zone: format!("{REGION}{zone}"),
            available_ip_address_count: ips,
            tags: vec![Tag::new("karpenter.sh/discovery", "demo")],
            ..Subnet::default()
        });
    }
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
    ec2.create_launch_template(template).await.ok();
    ec2
}

/// An override of `instance_type` in zone `zone` ("a" or "b").
fn choice(instance_type: &str, zone: &str, priority: f64) -> FleetLaunchTemplateOverrides {
    FleetLaunchTemplateOverrides {
        instance_type: instance_type.into(),
        subnet_id: format!("subnet-{zone}"),
        availability_zone: format!("{REGION}{zone}"),
        image_id: None,
        priority: Some(priority),
    }
}

/// A fleet of one instance of `kind` from [`TEMPLATE`] with `overrides`.
fn fleet(
    kind: TargetCapacityType,
    overrides: Vec<FleetLaunchTemplateOverrides>,
) -> CreateFleetInput {
    CreateFleetInput {
        launch_template_configs: vec![FleetLaunchTemplateConfig {
            launch_template_name: TEMPLATE.into(),
            version: "$Latest".into(),
            overrides,
        }],
        total_target_capacity: 1,
        default_target_capacity_type: kind,
        ..CreateFleetInput::default()
    }
}
