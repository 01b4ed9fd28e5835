//! The driver against the fake cloud and the in-memory cluster, end to end:
//! scale up, scale down into consolidation, a drift roll, an
//! insufficient-capacity storm, a restart mid-command, planning inline or on
//! tokio's blocking pool. The world checks its invariants after every step
//! (see `support`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::{World, pool, provider_ids, settled_world, settled_world_with};
use karpenter_core::cloudprovider::CloudProvider as _;
use karpenter_core::driver::{
    DriverOptions, Event, Inline, PlanningJob, PlanningRunner, SpawnBlocking,
};
use karpenter_core::features::{FeatureGate, FeatureGates};
use karpenter_core::pods::{PodKey, bound_node};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, diverse_pods, pending_pod};

#[tokio::test]
async fn a_thousand_pods_scale_up() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(64)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "10", serde_json::json!([])));
    world.add_pods(diverse_pods(1000, 7));
    let steps = world.run_until(20, |w| w.pending() == 0).await;
    // Launch, register (45 s), bind: a few steps, not one per pod.
    assert!(steps <= 8, "{steps} steps");
    let pods = world.cluster.pod_list();
    assert!(pods.iter().all(|p| bound_node(p).is_some()));
    // The 200 pods with hostname anti-affinity need a node each.
    assert!(world.claims() >= 200, "{} claims", world.claims());
    // Planning again while claims launch made no second claim for the same
    // pods: every node runs some.
    for node in world.cluster.node_list() {
        let name = node.metadata.name.as_deref();
        assert!(
            pods.iter().any(|p| bound_node(p) == name),
            "{name:?} is empty"
        );
    }
    assert_eq!(world.count(|e| matches!(e, Event::LaunchFailed { .. })), 0);
}

#[tokio::test]
async fn scale_down_consolidates() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(16)));
    let mut world = World::new(provider, DriverOptions::default());
    world.add_pool(pool("default", "3", serde_json::json!([])));
    let pods: Vec<_> = (0..60)
        .map(|i| pending_pod(&format!("web-{i}"), Shape::Plain, "1", "1Gi"))
        .collect();
    world.add_pods(pods);
    world
        .run_until(30, |w| w.pending() == 0 && w.settled())
        .await;
    let before = world.claims();
    // Scale the deployment down to a sixth.
    for i in 10..60 {
        assert!(
            world
                .cluster
                .delete_pod(&PodKey::new("default", &format!("web-{i}")))
        );
    }
    world
        .run_until(200, |w| w.settled() && w.claims() < before)
        .await;
    // Keep going until consolidation has nothing more to do.
    let mut quiet = 0;
    while quiet < 5 {
        let report = world.step().await;
        quiet = if report.is_empty() { quiet + 1 } else { 0 };
        assert!(world.step < 500, "consolidation did not settle");
    }
    assert!(world.settled());
    // Ten pods of 1 cpu: one node of the 16-vCPU catalog holds them.
    assert_eq!(world.claims(), 1, "claims left: {}", world.claims());
    assert!(world.count(|e| matches!(e, Event::CommandCompleted { .. })) >= 1);
}

/// A planning runner that counts the jobs it hands to another.
#[derive(Debug)]
struct Counting<R> {
    runner: R,
    jobs: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl<R: PlanningRunner> PlanningRunner for Counting<R> {
    async fn run(&self, job: PlanningJob) {
        self.jobs.fetch_add(1, Ordering::Relaxed);
        self.runner.run(job).await;
    }
}

/// A scale-up, then a scale-down into consolidation, planned by `runner`:
/// every event, and how many planning jobs the runner ran.
async fn scale_up_and_down(runner: impl PlanningRunner + 'static) -> (Vec<(usize, Event)>, usize) {
    let jobs = Arc::new(AtomicUsize::new(0));
    let counting = Counting {
        runner,
        jobs: Arc::clone(&jobs),
    };
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(16)));
    let mut world = World::new(provider, DriverOptions::default()).planning_on(counting);
    world.add_pool(pool("default", "3", serde_json::json!([])));
    world.add_pods((0..30).map(|i| pending_pod(&format!("web-{i}"), Shape::Plain, "1", "1Gi")));
    world
        .run_until(30, |w| w.pending() == 0 && w.settled())
        .await;
    for i in 5..30 {
        assert!(
            world
                .cluster
                .delete_pod(&PodKey::new("default", &format!("web-{i}")))
        );
    }
    world
        .run_until(200, |w| {
            w.settled() && w.count(|e| matches!(e, Event::CommandCompleted { .. })) > 0
        })
        .await;
    (world.events, jobs.load(Ordering::Relaxed))
}

/// The driver plans (provisioning and disruption) through the runner its
/// options name, and where planning runs changes nothing it does.
#[tokio::test]
async fn planning_on_the_blocking_pool_acts_as_planning_inline() {
    let (inline, inline_jobs) = scale_up_and_down(Inline).await;
    let (pooled, pooled_jobs) = scale_up_and_down(SpawnBlocking).await;
    assert!(
        inline
            .iter()
            .any(|(_, e)| matches!(e, Event::CommandStarted { .. })),
        "{inline:?}"
    );
    assert!(inline_jobs > 0);
    assert_eq!(pooled_jobs, inline_jobs);
    assert_eq!(pooled, inline);
}

#[tokio::test]
async fn a_drift_roll_replaces_every_node_of_the_pool() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = settled_world(provider.clone(), "2", 40).await;
    let drifted = provider_ids(&world);
    assert!(drifted.len() >= 5, "{} nodes", drifted.len());
    for id in &drifted {
        provider.set_drifted(id, "ImageDrift");
    }
    world
        .run_until(400, |w| {
            w.settled() && provider_ids(w).iter().all(|id| !drifted.contains(id))
        })
        .await;
    let drift_commands = world.count(|e| {
        matches!(e, Event::CommandStarted { reason, .. } if *reason == karpenter_core::disruption::CommandReason::Drifted)
    });
    assert!(drift_commands >= 1);
    // Each drift command says why each of its nodes drifted: the
    // provider's reason.
    let explained = world.count(|e| {
        matches!(e, Event::CommandStarted { candidates, drift, .. }
            if drift.len() == candidates.len() && drift.iter().all(|c| c.reason == "ImageDrift"))
    });
    assert_eq!(explained, drift_commands);
    assert_eq!(
        world.count(|e| matches!(e, Event::CommandAborted { .. })),
        0
    );
    assert_eq!(world.pending(), 0);
}

#[tokio::test]
async fn an_insufficient_capacity_storm_on_the_cheapest_offerings() {
    let types = sized_instance_types(16);
    // Every offering of the eight smallest types: the cheapest there are.
    let storm: Vec<_> = types[..8]
        .iter()
        .flat_map(|t| {
            t.offerings
                .iter()
                .map(|o| karpenter_core::cloudprovider::OfferingKey::of(t, o))
        })
        .collect();
    let provider = Arc::new(FakeCloudProvider::new(types));
    provider.sell_out(storm.clone());
    let mut world = World::new(
        provider.clone(),
        DriverOptions::default().with_disrupt(false),
    );
    world.add_pool(pool("default", "2", serde_json::json!([])));
    let pods: Vec<_> = (0..30)
        .map(|i| pending_pod(&format!("web-{i}"), Shape::HostnameSpread, "500m", "512Mi"))
        .collect();
    world.add_pods(pods);
    world.run_until(60, |w| w.settled()).await;
    assert!(world.count(|e| matches!(e, Event::OfferingsUnavailable { .. })) > 0);
    // Nothing runs on a sold-out offering.
    for claim in world.cluster.node_claim_list() {
        let labels = claim.metadata.labels.unwrap_or_default();
        let launched = karpenter_core::cloudprovider::OfferingKey::new(
            labels["node.kubernetes.io/instance-type"].clone(),
            labels["topology.kubernetes.io/zone"].clone(),
            labels["karpenter.sh/capacity-type"].clone(),
        );
        assert!(!storm.contains(&launched), "{launched} was sold out");
    }
    // The storm passes; consolidation moves onto the cheap offerings again.
    provider.restock();
    let before = world.claims();
    world.driver = karpenter_core::driver::Driver::new(provider.clone(), world.cluster.clone());
    world
        .run_until(400, |w| w.settled() && w.unavailable_is_empty())
        .await;
    assert!(world.claims() <= before);
}

#[tokio::test]
async fn a_driver_restarted_mid_command_finishes_it() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = settled_world(provider.clone(), "1", 12).await;
    let drifted = provider_ids(&world);
    for id in &drifted {
        provider.set_drifted(id, "ImageDrift");
    }
    // Step until a command with replacements has started.
    world
        .run_until(20, |w| {
            w.events.iter().any(|(_, e)| matches!(e, Event::CommandStarted { replacements, .. } if !replacements.is_empty()))
        })
        .await;
    let started = world.events.len();
    world.restart_driver();
    world
        .run_until(400, |w| {
            w.settled() && provider_ids(w).iter().all(|id| !drifted.contains(id))
        })
        .await;
    // The new driver carried on: the first command's candidates were deleted
    // without launching its replacements again, and nothing was aborted.
    assert!(
        world.events[started..]
            .iter()
            .any(|(_, e)| matches!(e, Event::CandidatesDeleted { .. }))
    );
    assert_eq!(
        world.count(|e| matches!(e, Event::CommandAborted { .. })),
        0
    );
    let launched = world.count(|e| matches!(e, Event::Launched { .. }));
    let created = world.count(|e| matches!(e, Event::ClaimCreated { .. }))
        + world
            .events
            .iter()
            .map(|(_, e)| match e {
                Event::CommandStarted { replacements, .. } => replacements.len(),
                _ => 0,
            })
            .sum::<usize>();
    assert_eq!(launched, created, "every claim launched exactly once");
}

#[tokio::test]
async fn a_flaky_cloud_that_loses_launch_answers_orphans_nothing() {
    use karpenter_fake::{Flaky, FlakyRates};
    let fake = Arc::new(FakeCloudProvider::new(sized_instance_types(16)));
    let rates = FlakyRates {
        error: 0.2,
        lost_create: 0.3,
    };
    let flaky = Arc::new(Flaky::new(fake.clone(), rates, 11));
    let mut world = World::with_faults(flaky, fake.clone(), DriverOptions::default());
    world.add_pool(pool("default", "2", serde_json::json!([])));
    let pods: Vec<_> = (0..80)
        .map(|i| pending_pod(&format!("web-{i}"), Shape::HostnameSpread, "1", "1Gi"))
        .collect();
    world.add_pods(pods);
    world.run_until(200, |w| w.settled()).await;
    // Then most of it goes away, and consolidation runs through the faults.
    for i in 20..80 {
        world
            .cluster
            .delete_pod(&PodKey::new("default", &format!("web-{i}")));
    }
    let before = world.claims();
    world
        .run_until(600, |w| w.settled() && w.claims() < before)
        .await;
    let failures =
        world.count(|e| matches!(e, Event::LaunchFailed { .. } | Event::ProviderError { .. }));
    assert!(failures > 0, "the faults were felt");
    assert!(!world.failed_passes.is_empty());
    // Every running instance belongs to a claim, every claim to an instance.
    let running = fake.list().await.map(|l| l.len()).unwrap_or_default();
    assert_eq!(running, world.cluster.node_claim_list().len());
}

#[tokio::test]
async fn an_interrupted_node_and_an_unhealthy_one_are_replaced() {
    use k8s_openapi::api::core::v1::NodeCondition;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use karpenter_core::disruption::CommandReason;
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let repair = FeatureGates::UPSTREAM.with(FeatureGate::NodeRepair, true);
    let options = DriverOptions::default().with_planning(repair.into());
    let mut world = settled_world_with(provider.clone(), "2", 12, options).await;
    let nodes: Vec<String> = world
        .cluster
        .node_list()
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    let condition = |type_: &str, status: &str| NodeCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        last_transition_time: Some(Time(world.now)),
        ..NodeCondition::default()
    };
    // A spot eviction notice is acted on at once; a kubelet that reports
    // BadNode is tolerated for 30 minutes.
    assert!(
        world
            .cluster
            .set_node_condition(&nodes[0], condition("PreemptionScheduled", "True"))
    );
    assert!(
        world
            .cluster
            .set_node_condition(&nodes[1], condition("BadNode", "False"))
    );
    let reason_of = |w: &World, node: &str| {
        w.events.iter().find_map(|(step, e)| match e {
            Event::CommandStarted {
                reason, candidates, ..
            } if candidates.iter().any(|c| c == node) => Some((*step, *reason)),
            _ => None,
        })
    };
    let gone = |w: &World, node: &str| {
        !w.cluster
            .node_list()
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some(node))
    };
    world.run_until(20, |w| gone(w, &nodes[0])).await;
    let (interrupted_at, reason) = reason_of(&world, &nodes[0]).expect("a command");
    assert_eq!(reason, CommandReason::Interrupted);
    assert!(
        reason_of(&world, &nodes[1]).is_none(),
        "BadNode is tolerated for a while"
    );
    // 30 minutes are 180 steps of 10 s.
    world
        .run_until(400, |w| gone(w, &nodes[1]) && w.settled())
        .await;
    let (repaired_at, reason) = reason_of(&world, &nodes[1]).expect("a command");
    assert_eq!(reason, CommandReason::Unhealthy);
    assert!(
        repaired_at - interrupted_at >= 170,
        "{interrupted_at} -> {repaired_at}"
    );
    assert_eq!(world.pending(), 0);
}

#[tokio::test]
async fn without_the_node_repair_gate_unhealthy_nodes_stay() {
    use k8s_openapi::api::core::v1::NodeCondition;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    // Upstream's defaults: NodeRepair is off.
    let mut world = settled_world(provider.clone(), "2", 12).await;
    let node = world.cluster.node_list()[0]
        .metadata
        .name
        .clone()
        .expect("a name");
    let condition = NodeCondition {
        type_: "BadNode".to_owned(),
        status: "False".to_owned(),
        last_transition_time: Some(Time(world.now)),
        ..NodeCondition::default()
    };
    assert!(world.cluster.set_node_condition(&node, condition));
    // Past the 30 minutes' toleration (180 steps of 10 s).
    for _ in 0..200 {
        world.step().await;
    }
    let repaired = world.count(
        |e| matches!(e, Event::CommandStarted { candidates, .. } if candidates.contains(&node)),
    );
    assert_eq!(repaired, 0, "{:?}", world.events);
}

#[tokio::test]
async fn consolidation_weighs_overlaid_prices_with_the_node_overlay_gate() {
    /// The instance types of the nodes once an overlay has made the one the
    /// pod settled on ten times dearer.
    async fn after_overlay(gates: FeatureGates) -> Vec<String> {
        let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
        let options = DriverOptions::default().with_planning(gates.into());
        let mut world = World::new(provider, options);
        world.add_pool(pool("default", "10", serde_json::json!([])));
        world.add_pods([pending_pod("web-0", Shape::Plain, "1", "1Gi")]);
        world
            .run_until(20, |w| w.pending() == 0 && w.settled())
            .await;
        assert_eq!(
            instance_types(&world),
            ["fake-it-2"],
            "the cheapest that fits"
        );
        let overlay = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "dear-2"},
            "spec": {
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["fake-it-2"]}],
                "priceAdjustment": "+900%",
            },
        }))
        .expect("an overlay");
        world.cluster.apply_node_overlay(overlay);
        // A minute of reconciles: time for a replace-then-delete.
        for _ in 0..60 {
            world.step().await;
        }
        assert!(world.settled());
        instance_types(&world)
    }
    fn instance_types(world: &World) -> Vec<String> {
        world
            .cluster
            .node_list()
            .iter()
            .filter_map(|n| {
                let labels = n.metadata.labels.as_ref()?;
                labels.get("node.kubernetes.io/instance-type").cloned()
            })
            .collect()
    }
    // Upstream's default: the gate is off, the overlay is not read, and the
    // node stays.
    assert_eq!(after_overlay(FeatureGates::UPSTREAM).await, ["fake-it-2"]);
    // With it, the node costs 10 times its list price: consolidation
    // replaces it with the next size, cheaper at the overlaid prices.
    let on = FeatureGates::UPSTREAM.with(FeatureGate::NodeOverlay, true);
    assert_eq!(after_overlay(on).await, ["fake-it-3"]);
}

#[tokio::test]
async fn a_static_pool_is_held_at_its_replicas_and_its_drift_replaced() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let gates = FeatureGates::UPSTREAM.with(FeatureGate::StaticCapacity, true);
    let options = DriverOptions::default().with_planning(gates.into());
    let mut world = World::new(provider.clone(), options);
    let with_replicas = |replicas: i64| {
        let mut pool = pool("fixed", "10", serde_json::json!([]));
        pool["spec"]["replicas"] = serde_json::json!(replicas);
        pool
    };
    let nodes = |world: &World| {
        let list = world.cluster.node_list();
        list.iter()
            .filter(|n| {
                let labels = n.metadata.labels.as_ref();
                labels
                    .and_then(|l| l.get("karpenter.sh/nodepool"))
                    .map(String::as_str)
                    == Some("fixed")
            })
            .count()
    };
    // Up: three nodes, with no pod asking for them.
    world.add_pool(with_replicas(3));
    world.run_until(20, |w| nodes(w) == 3 && w.settled()).await;
    assert_eq!(world.claims(), 3);
    // Down: the surplus goes.
    world.add_pool(with_replicas(1));
    world
        .run_until(40, |w| nodes(w) == 1 && w.claims() == 1)
        .await;
    let removed = world.count(|e| matches!(e, Event::StaticClaimRemoved { .. }));
    assert_eq!(removed, 2);
    // Held: nothing more happens.
    for _ in 0..10 {
        world.step().await;
    }
    assert_eq!((nodes(&world), world.claims()), (1, 1));
    // Drift: the node is replaced one for one.
    let drifted = provider_ids(&world);
    for id in &drifted {
        provider.set_drifted(id, "ImageDrift");
    }
    world
        .run_until(60, |w| {
            w.settled() && nodes(w) == 1 && provider_ids(w).iter().all(|id| !drifted.contains(id))
        })
        .await;
    assert_eq!(world.claims(), 1);
    let drift = world.count(|e| {
        matches!(e, Event::CommandStarted { reason, .. } if *reason == karpenter_core::disruption::CommandReason::Drifted)
    });
    assert_eq!(drift, 1, "one static drift command");
}

#[tokio::test]
async fn best_effort_launches_what_min_values_refuse_and_says_so() {
    use karpenter_core::planning::MinValuesPolicy;
    // Eight instance types where the pool asks for twenty.
    let requirements = serde_json::json!([
        {"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 20}
    ]);
    let run = |policy: MinValuesPolicy| {
        let requirements = requirements.clone();
        async move {
            let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
            let options = DriverOptions::default().with_planning(policy.into());
            let mut world = World::new(provider, options);
            world.add_pool(pool("default", "10", requirements));
            world.add_pods(
                (0..3).map(|i| pending_pod(&format!("web-{i}"), Shape::Plain, "1", "1Gi")),
            );
            for _ in 0..10 {
                world.step().await;
            }
            world
        }
    };
    // Upstream's default: the pods wait.
    let strict = run(MinValuesPolicy::Strict).await;
    assert_eq!((strict.pending(), strict.claims()), (3, 0));
    // BestEffort: they run, on claims that say their minValues were lowered.
    let best_effort = run(MinValuesPolicy::BestEffort).await;
    assert_eq!(best_effort.pending(), 0);
    let claims = best_effort.cluster.node_claim_list();
    assert!(!claims.is_empty());
    for claim in &claims {
        let annotation = claim
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("karpenter.sh/nodeclaim-min-values-relaxed"));
        assert_eq!(annotation.map(String::as_str), Some("true"));
        let lowered = claim
            .spec
            .requirements
            .iter()
            .flatten()
            .find(|r| r.key == "node.kubernetes.io/instance-type")
            .and_then(|r| r.min_values);
        assert!(lowered.is_some_and(|m| (1..20).contains(&m)), "{lowered:?}");
    }
}

#[tokio::test]
async fn on_a_settled_cluster_reconciling_again_changes_nothing() {
    use karpenter_fake::{Call, Recording};
    let fake = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let recording = Arc::new(Recording::new(fake.clone()));
    let mut world = World::with_faults(recording.clone(), fake.clone(), DriverOptions::default());
    world.add_pool(pool("default", "2", serde_json::json!([])));
    world.add_pods(
        (0..10).map(|i| pending_pod(&format!("web-{i}"), Shape::ZonalSpread, "1", "1Gi")),
    );
    world.run_until(60, |w| w.settled()).await;
    // Let consolidation finish, then watch.
    let mut quiet = 0;
    while quiet < 3 {
        quiet = if world.step().await.is_empty() {
            quiet + 1
        } else {
            0
        };
    }
    let claims = world.cluster.node_claim_list();
    let pods = world.cluster.pod_list();
    let calls_before = recording.calls().len();
    for _ in 0..5 {
        assert!(world.step().await.is_empty());
    }
    assert_eq!(world.cluster.node_claim_list(), claims);
    assert_eq!(world.cluster.pod_list(), pods);
    let writes = recording.calls()[calls_before..]
        .iter()
        .filter(|c| matches!(c, Call::Create(_) | Call::Delete(_)))
        .count();
    assert_eq!(writes, 0);
}

#[tokio::test]
async fn a_drift_roll_survives_a_restart_at_any_step() {
    for restart_at in 1..=24 {
        let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
        let mut world = settled_world(provider.clone(), "1", 9).await;
        let drifted = provider_ids(&world);
        for id in &drifted {
            provider.set_drifted(id, "ImageDrift");
        }
        for _ in 0..restart_at {
            world.step().await;
        }
        world.restart_driver();
        world
            .run_until(300, |w| {
                w.settled() && provider_ids(w).iter().all(|id| !drifted.contains(id))
            })
            .await;
        assert_eq!(
            world.count(|e| matches!(e, Event::CommandAborted { .. })),
            0,
            "restart at step {restart_at}"
        );
    }
}

/// Scales an unconstrained mix up on the three-families catalog with the
/// given packing, and returns the hourly price of what then runs.
async fn scale_up_price(packing: karpenter_core::planning::Packing) -> f64 {
    let types = karpenter_fake::generate::catalog::three_families();
    let prices = types
        .iter()
        .flat_map(|t| {
            t.offerings.iter().map(|o| {
                let key = (t.name.clone(), o.zone.clone(), o.capacity_type.clone());
                (key, o.price)
            })
        })
        .collect();
    let provider = Arc::new(FakeCloudProvider::new(types));
    let options = DriverOptions::default()
        .with_disrupt(false)
        .with_planning(packing.into());
    let mut world = World::new(provider, options);
    world.add_pool(pool("default", "10", serde_json::json!([])));
    world.add_pods(karpenter_fake::generate::workload::unconstrained_mix(
        300, 7,
    ));
    world.run_until(20, |w| w.pending() == 0).await;
    assert!(
        world
            .cluster
            .pod_list()
            .iter()
            .all(|p| bound_node(p).is_some())
    );
    world.price(&prices).await
}

#[tokio::test]
async fn the_cost_mode_launches_cheaper_capacity_for_the_same_pods() {
    use karpenter_core::planning::Packing;
    let upstream = scale_up_price(Packing::Upstream).await;
    let cost = scale_up_price(Packing::Cost).await;
    assert!(cost < upstream, "cost mode {cost} vs upstream {upstream}");
}

/// A catalog of eight sizes where `fake-it-4` also launches into
/// reservation `cr-1`, which can start one more instance.
fn with_a_reservation() -> Vec<karpenter_core::cloudprovider::InstanceType> {
    use karpenter_core::cloudprovider::{InstanceType, Offering, Reservation};
    sized_instance_types(8)
        .into_iter()
        .map(|t| {
            if t.name != "fake-it-4" {
                return t;
            }
            let mut offerings = t.offerings.clone();
            let reservation = Reservation {
                label: karpenter_fake::RESERVATION_ID_LABEL.to_owned(),
                id: "cr-1".to_owned(),
                capacity: 1,
            };
            offerings.push(Offering::reserved("test-zone-1", 0.001, reservation));
            InstanceType::new(
                t.name.clone(),
                t.requirements.labels(),
                offerings,
                t.capacity.clone(),
                t.overhead.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_reservation_takes_one_node_and_the_next_pod_waits_for_the_next_plan() {
    let run = |gates: FeatureGates| async move {
        let provider = Arc::new(FakeCloudProvider::new(with_a_reservation()));
        let options = DriverOptions::default().with_planning(gates.into());
        let mut world = World::new(provider, options);
        world.add_pool(pool("default", "100", serde_json::json!([])));
        // Two pods of 3 cpu: one per 4-cpu node.
        world.add_pods((0..2).map(|i| pending_pod(&format!("web-{i}"), Shape::Plain, "3", "1Gi")));
        let first = world.step().await;
        let claims_after_first = world.claims();
        world.run_until(60, |w| w.settled()).await;
        (world, first, claims_after_first)
    };
    let (world, _, claims_after_first) = run(FeatureGates::UPSTREAM).await;
    // The first plan launches only the reserved claim: the other pod could
    // have had the reservation and waits rather than fall back.
    assert_eq!(claims_after_first, 1);
    assert_eq!(world.pending(), 0);
    let reserved: Vec<_> = world
        .cluster
        .node_claim_list()
        .into_iter()
        .filter_map(|c| {
            let labels = c.metadata.labels?;
            (labels["karpenter.sh/capacity-type"] == "reserved")
                .then(|| labels.get(karpenter_fake::RESERVATION_ID_LABEL).cloned())
        })
        .collect();
    assert_eq!(reserved, [Some("cr-1".to_owned())]);
    // With the gate off the reservation is not offered at all.
    let off = FeatureGates::UPSTREAM.with(FeatureGate::ReservedCapacity, false);
    let (world, _, _) = run(off).await;
    assert_eq!(world.pending(), 0);
    assert!(world.cluster.node_claim_list().iter().all(|c| {
        c.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l["karpenter.sh/capacity-type"] != "reserved")
    }));
}
