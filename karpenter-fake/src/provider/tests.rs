//! The fake provider's launches, offerings, reservations and drift.

use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE,
};

use super::*;
use crate::generate::catalog::sized_instance_types;
use crate::test_support::block_on;

fn claim(requirements: serde_json::Value, cpu: &str) -> NodeClaim {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "claim-1", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            "requirements": requirements,
            "resources": {"requests": {"cpu": cpu}},
        },
    }))
    .expect("a NodeClaim")
}

#[test]
fn create_launches_the_cheapest_allowed_offering_that_holds_the_requests() {
    let provider = FakeCloudProvider::new(sized_instance_types(8));
    let wanted = claim(
        serde_json::json!([
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-3"]},
        ]),
        "2500m",
    );
    let launched = block_on(provider.create(&wanted)).expect("capacity");
    let labels = launched.metadata.labels.as_ref().expect("labels");
    // 2.5 cpu plus 100m overhead: the 3-vCPU type is the smallest that holds it.
    assert_eq!(labels[LABEL_INSTANCE_TYPE_STABLE], "fake-it-3");
    assert_eq!(labels[LABEL_TOPOLOGY_ZONE], "test-zone-3");
    assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "on-demand");
    let provider_id = launched
        .status
        .as_ref()
        .and_then(|s| s.provider_id.clone())
        .expect("a provider ID");
    assert_eq!(
        block_on(provider.get(&provider_id)).ok(),
        Some(launched.clone())
    );
    assert_eq!(block_on(provider.list()).map(|l| l.len()).ok(), Some(1));
    // Delete, then the instance is gone.
    assert!(block_on(provider.delete(&launched)).is_ok());
    assert!(matches!(
        block_on(provider.delete(&launched)),
        Err(CloudProviderError::NodeClaimNotFound { .. })
    ));
}

#[test]
fn no_offering_means_insufficient_capacity() {
    let mut types = sized_instance_types(2);
    for t in &mut types {
        t.mark_unavailable(|_| true);
    }
    let provider = FakeCloudProvider::new(types);
    let wanted = claim(serde_json::json!([]), "500m");
    match block_on(provider.create(&wanted)) {
        Err(CloudProviderError::InsufficientCapacity { offerings, .. }) => {
            // Both types, five offerings each, all sold out.
            assert_eq!(offerings.len(), 10);
        }
        other => panic!("expected insufficient capacity, got {other:?}"),
    }
    assert_eq!(block_on(provider.list()).map(|l| l.len()).ok(), Some(0));
}

#[test]
fn a_sold_out_offering_fails_once_then_is_avoided_and_reported_unavailable() {
    let provider = FakeCloudProvider::new(sized_instance_types(4));
    let wanted = claim(
        serde_json::json!([
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ]),
        "1",
    );
    let cheapest = OfferingKey::new("fake-it-2", "test-zone-1", "on-demand");
    provider.sell_out([cheapest.clone()]);
    match block_on(provider.create(&wanted)) {
        Err(CloudProviderError::InsufficientCapacity { offerings, .. }) => {
            assert_eq!(offerings, std::slice::from_ref(&cheapest));
        }
        other => panic!("expected insufficient capacity, got {other:?}"),
    }
    let pool = NodePool::default();
    let types = block_on(provider.instance_types(&pool)).expect("types");
    let reported = types
        .iter()
        .flat_map(|t| t.offerings.iter().map(move |o| (key(t, o), o.available)))
        .find(|(k, _)| *k == cheapest);
    assert_eq!(reported, Some((cheapest.clone(), false)));
    let launched = block_on(provider.create(&wanted)).expect("another offering");
    let labels = launched.metadata.labels.expect("labels");
    assert_eq!(labels[LABEL_INSTANCE_TYPE_STABLE], "fake-it-2");
    assert_ne!(labels[LABEL_TOPOLOGY_ZONE], "test-zone-1");
    provider.restock();
    let types = block_on(provider.instance_types(&pool)).expect("types");
    assert!(
        types
            .iter()
            .all(|t| t.offerings.iter().all(|o| o.available))
    );
}

#[test]
fn adopted_instances_are_running_and_reclaimed_ones_gone() {
    let provider = FakeCloudProvider::new(sized_instance_types(4));
    let mut running = claim(serde_json::json!([]), "1");
    assert!(
        !provider.adopt(&running),
        "no provider ID: nothing to adopt"
    );
    running.status = Some(karpenter_core::api::NodeClaimStatus {
        provider_id: Some("fake:///started-before".into()),
        ..Default::default()
    });
    assert!(provider.adopt(&running));
    let found = block_on(provider.get("fake:///started-before")).expect("running");
    assert_eq!(found.metadata.name, running.metadata.name);
    assert_eq!(block_on(provider.list()).expect("a list").len(), 1);
    // A new launch does not take the adopted instance's place.
    let launched = block_on(provider.create(&claim(serde_json::json!([]), "1"))).expect("launched");
    assert_eq!(block_on(provider.list()).expect("a list").len(), 2);
    assert!(provider.reclaim("fake:///started-before"));
    assert!(!provider.reclaim("fake:///started-before"));
    assert!(matches!(
        block_on(provider.get("fake:///started-before")),
        Err(CloudProviderError::NodeClaimNotFound { .. })
    ));
    let left = block_on(provider.list()).expect("a list");
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].status, launched.status);
}

#[test]
fn a_reservation_is_used_up_by_its_instances_and_given_back_on_delete() {
    use karpenter_core::cloudprovider::Reservation;
    use karpenter_core::resources::ResourceList;
    let mut capacity = ResourceList::new();
    capacity.set("cpu", 4_000);
    capacity.set("memory", 8 << 30);
    capacity.set("pods", 110_000);
    let reservation = Reservation {
        label: crate::RESERVATION_ID_LABEL.to_owned(),
        id: "cr-1".to_owned(),
        capacity: 1,
    };
    let types = vec![InstanceType::new(
        "c-4x",
        [("kubernetes.io/arch", "amd64")],
        vec![
            Offering::new("zone-a", "on-demand", 0.17),
            Offering::reserved("zone-a", 0.01, reservation),
        ],
        capacity,
        ResourceList::new(),
    )];
    let provider = FakeCloudProvider::new(types);
    let wanted = claim(serde_json::json!([]), "1");
    let first = block_on(provider.create(&wanted)).expect("launched");
    let labels = first.metadata.labels.clone().expect("labels");
    assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "reserved");
    assert_eq!(labels[crate::RESERVATION_ID_LABEL], "cr-1");
    // Used up: reported unavailable, and the next launch goes on demand.
    let pool = NodePool::default();
    let types = block_on(provider.instance_types(&pool)).expect("types");
    let reserved = &types[0].offerings[1];
    assert!(!reserved.available);
    assert_eq!(reserved.reservation.as_ref().map(|r| r.capacity), Some(0));
    let second = block_on(provider.create(&wanted)).expect("launched");
    let labels = second.metadata.labels.clone().expect("labels");
    assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "on-demand");
    assert!(!labels.contains_key(crate::RESERVATION_ID_LABEL));
    // Reclaimed, then adopted again (a cluster read back): the unit is
    // taken again.
    let first_id = first
        .status
        .as_ref()
        .and_then(|s| s.provider_id.clone())
        .expect("an id");
    assert!(provider.reclaim(&first_id));
    let types = block_on(provider.instance_types(&pool)).expect("types");
    assert!(types[0].offerings[1].available);
    assert!(provider.adopt(&first));
    let types = block_on(provider.instance_types(&pool)).expect("types");
    assert!(!types[0].offerings[1].available);
    // The reserved instance goes: its unit is free again.
    block_on(provider.delete(&first)).expect("deleted");
    let types = block_on(provider.instance_types(&pool)).expect("types");
    assert!(types[0].offerings[1].available);
    let third = block_on(provider.create(&wanted)).expect("launched");
    let labels = third.metadata.labels.expect("labels");
    assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "reserved");
}

#[test]
fn drift_is_reported_as_set() {
    let provider = FakeCloudProvider::new(sized_instance_types(2));
    let launched = block_on(provider.create(&claim(serde_json::json!([]), "1"))).expect("capacity");
    assert_eq!(block_on(provider.is_drifted(&launched)).ok(), Some(None));
    let id = launched
        .status
        .as_ref()
        .and_then(|s| s.provider_id.clone())
        .expect("an ID");
    provider.set_drifted(&id, "ImageDrift");
    assert_eq!(
        block_on(provider.is_drifted(&launched)).ok(),
        Some(Some("ImageDrift".to_owned()))
    );
}
