//! A cloud that adopts a cluster's running claims (`FakeCloudProvider::adopt`),
//! as a replay or a restarted test starts from nodes launched before: the
//! driver finds their instances and keeps them, launching nothing more.

use std::sync::Arc;

use crate::support::{World, pool};
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};
use serde_json::json;

#[tokio::test]
async fn claims_adopted_by_a_new_cloud_are_kept() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "1", json!([])));
    world.add_pods([pending_pod("web-0", Shape::Plain, "1", "1Gi")]);
    world.run_until(20, |w| w.settled()).await;
    let before = world.claim_names();
    assert_eq!(before.len(), 1);

    // A cloud that knows nothing of them, but adopts what the cluster runs.
    let fresh = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    for claim in world.cluster.node_claim_list() {
        assert!(fresh.adopt(&claim));
    }
    world.provider = fresh.clone();
    world.truth = fresh;
    world.restart_driver();
    let launched_before = world.count(|e| matches!(e, Event::Launched { .. }));
    for _ in 0..6 {
        world.step().await;
    }
    let after = world.claim_names();
    assert_eq!(after, before);
    assert_eq!(
        world.count(|e| matches!(e, Event::Launched { .. })),
        launched_before
    );
    assert!(world.settled());
}
