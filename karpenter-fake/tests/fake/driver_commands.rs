//! How the driver gives a disruption command up: when a replacement cannot
//! launch, and when replacements do not initialize in time. Either way the
//! candidates keep running, untainted, and no replacement is left behind.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{any_tainted, provider_ids, settled_world};
use karpenter_core::cloudprovider::OfferingKey;
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;

#[tokio::test]
async fn a_replacement_without_capacity_aborts_the_command() {
    let types = sized_instance_types(8);
    let every_offering: Vec<OfferingKey> = types
        .iter()
        .flat_map(|t| t.offerings.iter().map(|o| OfferingKey::of(t, o)))
        .collect();
    let provider = Arc::new(FakeCloudProvider::new(types));
    let mut world = settled_world(provider.clone(), "2", 12).await;
    let running = provider_ids(&world);
    // The cloud runs dry, then every node drifts.
    provider.sell_out(every_offering);
    for id in &running {
        provider.set_drifted(id, "ImageDrift");
    }
    for _ in 0..40 {
        world.step().await;
    }
    let aborted = world.count(|e| matches!(e, Event::CommandAborted { .. }));
    assert!(aborted >= 1, "{:#?}", world.events);
    assert_eq!(
        world.count(|e| matches!(e, Event::CandidatesDeleted { .. })),
        0
    );
    // The nodes run on, untainted; every replacement claim is gone.
    assert_eq!(provider_ids(&world), running);
    assert!(!any_tainted(&world));
    assert_eq!(world.pending(), 0);
}

#[tokio::test]
async fn replacements_that_never_initialize_time_out() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = settled_world(provider.clone(), "1", 6).await;
    let running = provider_ids(&world);
    world.driver = karpenter_core::driver::Driver::new(provider.clone(), world.cluster.clone())
        .with_options(DriverOptions::default().with_replacement_timeout(Duration::from_secs(120)));
    // Kubelets stop registering; then a node drifts.
    world
        .cluster
        .set_registration_delay(Duration::from_secs(24 * 3600));
    provider.set_drifted(&running[0], "ImageDrift");
    world
        .run_until(40, |w| {
            w.count(|e| matches!(e, Event::CommandAborted { .. })) > 0
        })
        .await;
    let why = world.events.iter().find_map(|(_, e)| match e {
        Event::CommandAborted { why, .. } => Some(why.clone()),
        _ => None,
    });
    assert_eq!(
        why.as_deref(),
        Some("replacements not initialized after 120s")
    );
    // The replacement is terminated; the candidate runs on (and drift tries
    // again, with a new replacement, as upstream's next pass would).
    let replacement = world.events.iter().find_map(|(_, e)| match e {
        Event::CommandStarted { replacements, .. } => replacements.first().cloned(),
        _ => None,
    });
    let replacement = replacement.expect("a replacement");
    world
        .run_until(5, |w| {
            w.count(|e| matches!(e, Event::Terminated { claim } if *claim == replacement)) == 1
        })
        .await;
    assert!(provider_ids(&world).contains(&running[0]));
    assert_eq!(
        world.count(|e| matches!(e, Event::CandidatesDeleted { .. })),
        0
    );
}
