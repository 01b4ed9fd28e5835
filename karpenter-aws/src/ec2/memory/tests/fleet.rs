//! `CreateFleet`: order, capacity, addresses and templates.

use super::*;

#[tokio::test]
async fn lowest_priority_launches_first() {
    let ec2 = ready(5).await;
    let input = fleet(
        TargetCapacityType::OnDemand,
        vec![choice("m5.xlarge", "a", 0.2), choice("m5.large", "b", 0.1)],
    );
    let out = ec2.create_fleet(input).await.unwrap();
    assert_eq!(out.instances.len(), 1);
    assert_eq!(out.instances[0].instance_type, "m5.large");
    assert_eq!(out.instances[0].lifecycle, "on-demand");
    assert!(out.errors.is_empty());
    let instance = &ec2.instances()[0];
    assert_eq!(instance.availability_zone, "us-east-1b");
    assert_eq!(
        instance.image_id, "ami-amd64",
        "the template's image when the override names none"
    );
    assert_eq!(instance.instance_lifecycle, None);
}

#[tokio::test]
async fn exhausted_capacity_is_a_per_override_error_and_the_next_launches() {
    let ec2 = ready(5).await;
    ec2.set_capacity("m5.large", "us-east-1b", TargetCapacityType::Spot, 0);
    let input = fleet(
        TargetCapacityType::Spot,
        vec![choice("m5.large", "b", 0.1), choice("m5.xlarge", "a", 0.2)],
    );
    let mut input = input;
    input.spot_allocation_strategy = SpotAllocationStrategy::CapacityOptimizedPrioritized;
    let out = ec2.create_fleet(input).await.unwrap();
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].error_code, "InsufficientInstanceCapacity");
    assert_eq!(
        out.errors[0].launch_template_and_overrides.instance_type,
        "m5.large"
    );
    assert_eq!(out.errors[0].lifecycle, "spot");
    assert_eq!(out.instances[0].instance_type, "m5.xlarge");
    assert_eq!(
        ec2.instances()[0].instance_lifecycle.as_deref(),
        Some("spot")
    );
}

#[tokio::test]
async fn capacity_runs_out_after_the_count_set() {
    let ec2 = ready(5).await;
    ec2.set_capacity("m5.large", "us-east-1a", TargetCapacityType::OnDemand, 1);
    let one = || {
        fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        )
    };
    assert_eq!(ec2.create_fleet(one()).await.unwrap().instances.len(), 1);
    let out = ec2.create_fleet(one()).await.unwrap();
    assert!(out.instances.is_empty());
    assert_eq!(out.errors[0].error_code, "InsufficientInstanceCapacity");
    let spot = fleet(TargetCapacityType::Spot, vec![choice("m5.large", "a", 1.0)]);
    assert_eq!(
        ec2.create_fleet(spot).await.unwrap().instances.len(),
        1,
        "spot is its own pool"
    );
}

#[tokio::test]
async fn a_full_subnet_fails_with_insufficient_addresses() {
    let ec2 = ready(1).await;
    let one = || {
        fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        )
    };
    ec2.create_fleet(one()).await.unwrap();
    let out = ec2.create_fleet(one()).await.unwrap();
    assert_eq!(
        out.errors[0].error_code,
        "InsufficientFreeAddressesInSubnet"
    );
    let err = ec2
        .describe_instances(DescribeInput::default())
        .await
        .unwrap();
    assert_eq!(err.instances.len(), 1);
}

#[tokio::test]
async fn a_missing_launch_template_fails_the_call() {
    let ec2 = ready(5).await;
    ec2.delete_launch_template(TEMPLATE).await.unwrap();
    let err = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some("InvalidLaunchTemplateName.NotFoundException")
    );
    assert!(ec2.instances().is_empty());
}

#[tokio::test]
async fn unknown_images_and_types_are_refused_per_override() {
    let ec2 = ready(5).await;
    let mut bad_image = choice("m5.large", "a", 1.0);
    bad_image.image_id = Some("ami-missing".into());
    let input = fleet(
        TargetCapacityType::OnDemand,
        vec![bad_image, choice("x9.nothing", "a", 2.0)],
    );
    let out = ec2.create_fleet(input).await.unwrap();
    let codes: Vec<&str> = out.errors.iter().map(|e| e.error_code.as_str()).collect();
    assert_eq!(codes, ["InvalidAMIID.NotFound", "Unsupported"]);
    assert!(out.instances.is_empty());
}

#[tokio::test]
async fn same_state_and_input_give_the_same_answer() {
    let run = || async {
        let ec2 = ready(5).await;
        let input = fleet(
            TargetCapacityType::Spot,
            vec![
                choice("m5.large", "a", 1.0),
                choice("m5.large", "b", 1.0),
                choice("c5.large", "a", 1.0),
            ],
        );
        ec2.create_fleet(input).await.unwrap()
    };
    assert_eq!(run().await, run().await);
}

#[tokio::test]
async fn price_capacity_optimized_ignores_priorities() {
    let ec2 = ready(5).await;
    ec2.set_spot_price("m5.large", "us-east-1a", 0.5);
    ec2.set_spot_price("m5.large", "us-east-1b", 0.1);
    let mut input = fleet(
        TargetCapacityType::Spot,
        vec![choice("m5.large", "a", 0.0), choice("m5.large", "b", 9.0)],
    );
    input.spot_allocation_strategy = SpotAllocationStrategy::PriceCapacityOptimized;
    let out = ec2.create_fleet(input.clone()).await.unwrap();
    assert_eq!(
        out.instances[0].launch_template_and_overrides.subnet_id,
        "subnet-b"
    );
    input.spot_allocation_strategy = SpotAllocationStrategy::CapacityOptimizedPrioritized;
    let out = ec2.create_fleet(input).await.unwrap();
    assert_eq!(
        out.instances[0].launch_template_and_overrides.subnet_id,
        "subnet-a"
    );
}

#[tokio::test]
async fn an_image_of_another_architecture_is_refused() {
    let ec2 = ready(5).await;
    let out = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m6g.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    assert_eq!(out.errors[0].error_code, "InvalidParameterValue");
    assert!(out.instances.is_empty());
}

#[tokio::test]
async fn a_template_targeting_a_reservation_launches_only_into_it() {
    let ec2 = ready(5).await;
    ec2.add_capacity_reservation(CapacityReservation {
        capacity_reservation_id: "cr-odcr".into(),
        instance_type: "m5.large".into(),
        availability_zone: "us-east-1a".into(),
        available_instance_count: 1,
        state: "active".into(),
        reservation_type: "default".into(),
        ..CapacityReservation::default()
    });
    let targeted = CreateLaunchTemplateInput {
        launch_template_name: "reserved".into(),
        launch_template_data: LaunchTemplateData {
            image_id: Some("ami-amd64".into()),
            capacity_reservation_id: Some("cr-odcr".into()),
            ..LaunchTemplateData::default()
        },
        ..CreateLaunchTemplateInput::default()
    };
    ec2.create_launch_template(targeted).await.unwrap();
    let reserved = |instance_type: &str| {
        let mut input = fleet(
            TargetCapacityType::OnDemand,
            vec![choice(instance_type, "a", 1.0)],
        );
        input.launch_template_configs[0].launch_template_name = "reserved".into();
        input
    };
    let other_type = ec2.create_fleet(reserved("m5.xlarge")).await.unwrap();
    assert_eq!(
        other_type.errors[0].error_code,
        "ReservationCapacityExceeded"
    );
    let out = ec2.create_fleet(reserved("m5.large")).await.unwrap();
    assert_eq!(out.instances.len(), 1);
    assert_eq!(
        ec2.instances()[0].capacity_reservation_id.as_deref(),
        Some("cr-odcr")
    );
    let full = ec2.create_fleet(reserved("m5.large")).await.unwrap();
    assert_eq!(full.errors[0].error_code, "ReservationCapacityExceeded");
    let plain = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    assert_eq!(
        plain.instances.len(),
        1,
        "an untargeted on-demand launch needs no reservation"
    );
}
