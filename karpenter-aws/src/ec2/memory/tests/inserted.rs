//! Instances put in by a caller (a simulation's starting nodes): counted
//! against their subnet and reservation, read back and reclaimed as
//! launched ones are, and never named again by a launch.

use super::*;

/// A running spot `m5.large` in subnet-a with ID `id`, tagged.
fn running(id: &str) -> crate::ec2::Instance {
    crate::ec2::Instance {
        instance_id: id.into(),
        instance_type: "m5.large".into(),
        image_id: "ami-amd64".into(),
        state: InstanceState::Running,
        launch_time: "2026-01-01T00:00:00Z".parse().unwrap(),
        availability_zone: "us-east-1a".into(),
        subnet_id: "subnet-a".into(),
        security_group_ids: vec!["sg-1".into()],
        instance_lifecycle: Some("spot".into()),
        capacity_reservation_id: None,
        tags: vec![Tag::new("karpenter.sh/nodepool", "default")],
    }
}

#[tokio::test]
async fn an_inserted_instance_takes_an_address_and_reads_back() {
    let ec2 = ready(5).await;
    let id = "i-0123456789abcdef0";
    assert!(ec2.insert_instance(running(id)));
    assert!(
        !ec2.insert_instance(running(id)),
        "a live instance is not put in twice"
    );
    assert_eq!(
        ec2.subnet("subnet-a").unwrap().available_ip_address_count,
        4,
        "one address taken, once"
    );
    let found = ec2
        .describe_instances(DescribeInput {
            ids: Vec::new(),
            filters: vec![Filter::new("tag-key", ["karpenter.sh/nodepool"])],
        })
        .await
        .unwrap();
    assert_eq!(found.instances, vec![running(id)]);
    // A spot instance put in is reclaimed as a launched one is, and its
    // address comes back.
    assert!(ec2.reclaim_spot(id));
    assert_eq!(
        ec2.subnet("subnet-a").unwrap().available_ip_address_count,
        5
    );
    // Once terminated, the ID may be put in again.
    assert!(ec2.insert_instance(running(id)));
}

#[tokio::test]
async fn an_inserted_reserved_instance_takes_a_place() {
    let ec2 = ready(5).await;
    ec2.add_capacity_reservation(CapacityReservation {
        capacity_reservation_id: "cr-1".into(),
        instance_type: "m5.large".into(),
        availability_zone: "us-east-1a".into(),
        available_instance_count: 1,
        total_instance_count: 2,
        state: "active".into(),
        ..CapacityReservation::default()
    });
    let mut reserved = running("i-00000000000000aaa");
    reserved.instance_lifecycle = None;
    reserved.capacity_reservation_id = Some("cr-1".into());
    assert!(ec2.insert_instance(reserved.clone()));
    let left = |ec2: &InMemoryEc2| {
        ec2.capacity_reservation("cr-1")
            .unwrap()
            .available_instance_count
    };
    assert_eq!(left(&ec2), 0);
    // Another running instance in a full reservation still exists: the
    // count stays at zero rather than wrapping.
    reserved.instance_id = "i-00000000000000bbb".into();
    assert!(ec2.insert_instance(reserved));
    assert_eq!(left(&ec2), 0);
}

#[tokio::test]
async fn a_launch_never_reuses_an_inserted_id() {
    let ec2 = ready(5).await;
    // The ID the first launch would otherwise take.
    let taken = format!("i-{:017x}", 1);
    assert!(ec2.insert_instance(running(&taken)));
    let out = ec2
        .create_fleet(fleet(
            TargetCapacityType::OnDemand,
            vec![choice("m5.large", "a", 1.0)],
        ))
        .await
        .unwrap();
    let launched = &out.instances[0].instance_ids[0];
    assert_ne!(launched, &taken);
    let ids: Vec<String> = ec2.instances().into_iter().map(|i| i.instance_id).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(launched) && ids.contains(&taken));
}
