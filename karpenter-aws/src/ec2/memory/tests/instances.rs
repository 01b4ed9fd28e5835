//! Instances after launch: spot reclaims, termination, tags,
//! reservations and the status poll.

use super::*;

#[tokio::test]
async fn reclaiming_spot_terminates_and_sends_the_warning() {
    let ec2 = ready(5).await;
    let queue = InMemoryQueue::new(Timestamp::UNIX_EPOCH);
    ec2.attach_queue(queue.clone());
    ec2.set_now("2026-01-02T03:04:05Z".parse().unwrap());
    let spot = ec2
        .create_fleet(fleet(
            TargetCapacityType::Spot,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    let id = spot.instances[0].instance_ids[0].clone();
    assert!(ec2.reclaim_spot(&id));
    assert!(
        !ec2.reclaim_spot(&id),
        "a terminated instance is not reclaimed twice"
    );
    assert_eq!(ec2.instances()[0].state, InstanceState::Terminated);
    assert_eq!(
        ec2.subnet("subnet-a").unwrap().available_ip_address_count,
        5
    );
    let input = ReceiveMessageInput {
        max_number_of_messages: 10,
        ..Default::default()
    };
    let messages = queue.receive_message(input).await.unwrap();
    assert_eq!(messages.len(), 1);
    let body: serde_json::Value = serde_json::from_str(&messages[0].body).unwrap();
    assert_eq!(
        body["detail-type"],
        "EC2 Spot Instance Interruption Warning"
    );
    assert_eq!(body["source"], "aws.ec2");
    assert_eq!(body["detail"]["instance-id"], id.as_str());
    assert_eq!(body["time"], "2026-01-02T03:04:05Z");
    assert_eq!(body["region"], REGION);
}

#[tokio::test]
async fn on_demand_instances_are_not_reclaimed() {
    let ec2 = ready(5).await;
    let out = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    assert!(!ec2.reclaim_spot(&out.instances[0].instance_ids[0]));
}

#[tokio::test]
async fn terminate_frees_the_address_and_an_unknown_id_fails_the_call() {
    let ec2 = ready(1).await;
    let out = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    let id = out.instances[0].instance_ids[0].clone();
    assert_eq!(
        ec2.subnet("subnet-a").unwrap().available_ip_address_count,
        0
    );
    let unknown = TerminateInstancesInput {
        instance_ids: vec![id.clone(), "i-00000000000000999".into()],
    };
    assert_eq!(
        ec2.terminate_instances(unknown).await.unwrap_err().code(),
        Some("InvalidInstanceID.NotFound")
    );
    assert_eq!(
        ec2.instances()[0].state,
        InstanceState::Running,
        "a refused call terminates nothing"
    );
    let done = ec2
        .terminate_instances(TerminateInstancesInput {
            instance_ids: vec![id],
        })
        .await
        .unwrap();
    assert_eq!(
        done.terminating_instances[0].previous_state,
        InstanceState::Running
    );
    assert_eq!(
        ec2.subnet("subnet-a").unwrap().available_ip_address_count,
        1
    );
}

#[tokio::test]
async fn tags_and_state_filter_instances() {
    let ec2 = ready(5).await;
    ec2.advance(SignedDuration::from_secs(60));
    let mut input = fleet(
        TargetCapacityType::OnDemand,
        vec![choice("m5.large", "a", 1.0)],
    );
    input.total_target_capacity = 2;
    input.tag_specifications = vec![TagSpecification {
        resource_type: "instance".into(),
        tags: vec![Tag::new("karpenter.sh/nodepool", "default")],
    }];
    let out = ec2.create_fleet(input).await.unwrap();
    let ids = out.instances[0].instance_ids.clone();
    assert_eq!(ids, ["i-00000000000000001", "i-00000000000000002"]);
    let tag = CreateTagsInput {
        resources: vec![ids[1].clone()],
        tags: vec![Tag::new("Name", "node-2")],
    };
    ec2.create_tags(tag).await.unwrap();
    let named = DescribeInput {
        ids: Vec::new(),
        filters: vec![Filter::new("tag:Name", ["node-*"])],
    };
    let found = ec2.describe_instances(named).await.unwrap().instances;
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].tags[0],
        Tag::new("karpenter.sh/nodepool", "default")
    );
    assert_eq!(
        found[0].launch_time,
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(60)
    );
    ec2.terminate_instances(TerminateInstancesInput {
        instance_ids: vec![ids[0].clone()],
    })
    .await
    .unwrap();
    let running = DescribeInput {
        ids: Vec::new(),
        filters: vec![Filter::new("instance-state-name", ["running"])],
    };
    assert_eq!(
        ec2.describe_instances(running)
            .await
            .unwrap()
            .instances
            .len(),
        1
    );
}

#[tokio::test]
async fn reservations_count_down_on_launch_and_up_on_terminate() {
    let ec2 = ready(5).await;
    ec2.add_capacity_reservation(CapacityReservation {
        capacity_reservation_id: "cr-1".into(),
        instance_type: "m5.large".into(),
        availability_zone: "us-east-1a".into(),
        available_instance_count: 1,
        total_instance_count: 1,
        state: "active".into(),
        reservation_type: "capacity-block".into(),
        ..CapacityReservation::default()
    });
    let block = || {
        fleet(
            TargetCapacityType::CapacityBlock,
            vec![choice("m5.large", "a", 1.0)],
        )
    };
    let out = ec2.create_fleet(block()).await.unwrap();
    assert_eq!(
        ec2.instances()[0].capacity_reservation_id.as_deref(),
        Some("cr-1")
    );
    assert_eq!(
        ec2.capacity_reservation("cr-1")
            .unwrap()
            .available_instance_count,
        0
    );
    let full = ec2.create_fleet(block()).await.unwrap();
    assert!(full.instances.is_empty());
    assert_eq!(full.errors[0].error_code, "ReservationCapacityExceeded");
    let id = out.instances[0].instance_ids.clone();
    ec2.terminate_instances(TerminateInstancesInput { instance_ids: id })
        .await
        .unwrap();
    assert_eq!(
        ec2.capacity_reservation("cr-1")
            .unwrap()
            .available_instance_count,
        1
    );
    let described = ec2
        .describe_capacity_reservations(DescribeInput {
            ids: vec!["cr-1".into()],
            filters: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(
        described.capacity_reservations[0].availability_zone_id,
        "use1-az1"
    );
}

#[tokio::test]
async fn impaired_instances_and_events_show_in_the_status_poll() {
    let ec2 = ready(5).await;
    let out = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    let id = out.instances[0].instance_ids[0].clone();
    let poll = |name: &str, value: &str| crate::ec2::DescribeInstanceStatusInput {
        filters: vec![Filter::new(name, [value])],
        ..Default::default()
    };
    assert!(
        ec2.describe_instance_status(poll("instance-status.status", "impaired"))
            .await
            .unwrap()
            .instance_statuses
            .is_empty()
    );
    ec2.impair(&id, false);
    ec2.schedule_event(&id, "instance-retirement");
    let impaired = ec2
        .describe_instance_status(poll("instance-status.status", "impaired"))
        .await
        .unwrap();
    assert_eq!(impaired.instance_statuses[0].instance_id, id);
    assert_eq!(impaired.instance_statuses[0].system_status, "ok");
    let events = ec2
        .describe_instance_status(poll("event.code", "instance-retirement"))
        .await
        .unwrap();
    assert_eq!(events.instance_statuses.len(), 1);
}
