//! The driver's quiet skip (`DriverOptions::with_quiet_skip`) changes
//! nothing but the time taken: replays with it on and off give the same
//! run, byte for byte, over every kind of moment a disruption plan depends
//! on (`consolidateAfter`, `expireAfter`, a budget's cron window, node
//! repair, drift, `karpenter.sh/do-not-disrupt` durations, a command held
//! for its check and started or dropped there); and a driver
//! stepped by hand reports the same events, `DisruptionBlocked` and
//! `Unconsolidatable` included, while planning far less often.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::NodeCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter::core::cluster::Cluster;
use karpenter::core::driver::{Driver, DriverOptions, Step};
use karpenter::fake::{FakeCloudProvider, InMemoryCluster};
use karpenter::replay::{ReplayOptions, Run, run};
use karpenter::scenario::{Scenario, Trace};

use crate::support::{disrupted, gates, pool, trace};

/// A Deployment `guarded` whose pods keep their node for 30 minutes after
/// they start (`karpenter.sh/do-not-disrupt: 30m`).
const GUARDED: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: guarded, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: guarded}}
  template:
    metadata:
      labels: {app: guarded}
      annotations: {karpenter.sh/do-not-disrupt: 30m}
    spec:
      containers: [{name: guarded, image: guarded, resources: {requests: {cpu: 700m, memory: 1Gi}}}]
"#;

fn disruption(after: &str, budgets: &str) -> String {
    format!(
        "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: {after}\n    budgets: {budgets}"
    )
}

fn cluster(pool: &str) -> Scenario {
    crate::support::cluster(&format!("{GUARDED}---\n{pool}"))
}

fn json(run: &Run) -> String {
    serde_json::to_string(run).expect("json")
}

/// Replays with the skip on and off; the two runs' JSON must be the same.
/// Returns the run, for the case to check it did what it is about.
fn same_either_way(name: &str, scenario: &Scenario, trace: &Trace, options: ReplayOptions) -> Run {
    let replay = |skip: bool| {
        let options = options.clone().with_quiet_skip(skip);
        run(scenario, trace, &options, &mut |_, _| {}).expect("the replay runs")
    };
    let on = replay(true);
    let off = replay(false);
    assert_eq!(json(&on), json(&off), "{name}: the skip changed the run");
    on
}

#[test]
fn consolidate_after_windows() {
    let scenario = cluster(&pool(
        "on-demand",
        &disruption("30m", "[{nodes: '100%'}]"),
        "Never",
    ));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 2h, scale: {deployment: web, replicas: 9}}\n  - {at: 2h17m, scale: {deployment: web, replicas: 3}}\n",
    );
    let run = same_either_way(
        "consolidateAfter",
        &scenario,
        &trace,
        ReplayOptions::default(),
    );
    assert!(disrupted(&run, "Empty") + disrupted(&run, "Underutilized") > 0);
}

#[test]
fn expire_after_at_one_and_five_minute_steps() {
    let scenario = cluster(&pool(
        "on-demand",
        &disruption("1m", "[{nodes: '100%'}]"),
        "2h",
    ));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 12}}\n  - {at: 1h, scale: {deployment: web, replicas: 20}}\n",
    );
    for step in [60, 300] {
        let options = ReplayOptions::default()
            .with_duration(Duration::from_secs(6 * 3600))
            .with_step(Duration::from_secs(step));
        let run = same_either_way("expireAfter", &scenario, &trace, options);
        assert!(disrupted(&run, "Expired") >= 2, "{:?}", run.totals);
    }
}

#[test]
fn a_budget_cron_window() {
    // No disruption from 02:00 to 04:00 and from 06:30 for 45 minutes;
    // the scale-downs inside the windows leave empty nodes that wait,
    // quiet, for the windows to end.
    let budgets = "[{nodes: '0', schedule: '0 2 * * *', duration: 2h}, {nodes: '0', schedule: '30 6 * * *', duration: 45m}, {nodes: '100%'}]";
    let scenario = cluster(&pool("on-demand", &disruption("1m", budgets), "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 1h50m, scale: {deployment: web, replicas: 30}}\n  - {at: 2h10m, scale: {deployment: web, replicas: 10}}\n  - {at: 6h40m, scale: {deployment: web, replicas: 2}}\n",
    );
    let options = ReplayOptions::default().with_duration(Duration::from_secs(9 * 3600));
    let run = same_either_way("budget window", &scenario, &trace, options);
    let times: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            // When the plan found the command: held for its check, it runs
            // at the next step.
            karpenter::replay::ReplayEvent::Disrupt {
                time, held_since, ..
            } => Some(held_since.unwrap_or(*time).to_string()),
            _ => None,
        })
        .collect();
    // Each window's end lets the waiting nodes go: the plan at the end finds
    // them.
    for end in ["2026-01-05T04:00:00Z", "2026-01-05T07:15:00Z"] {
        assert!(times.iter().any(|t| t == end), "none at {end}: {times:?}");
    }
}

#[test]
fn node_repair_of_failed_and_interrupted_nodes() {
    let scenario = cluster(&pool(
        "spot, on-demand",
        &disruption("5m", "[{nodes: '20%'}]"),
        "Never",
    ));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 30m, interrupt: {nodes: 2}}\n  - {at: 1h, fail: {nodes: 1}}\n  - {at: 2h10m, fail: {nodes: 1}}\n  - {at: 3h, scale: {deployment: web, replicas: 10}}\n",
    );
    let options = ReplayOptions::default()
        .with_duration(Duration::from_secs(5 * 3600))
        .with_planning(gates("NodeRepair=true").into());
    let run = same_either_way("node repair", &scenario, &trace, options);
    assert!(disrupted(&run, "Unhealthy") >= 2, "{:?}", run.totals);
    assert!(disrupted(&run, "Interrupted") >= 2, "{:?}", run.totals);
}

#[test]
fn drift_rolls() {
    let scenario = cluster(&pool(
        "on-demand",
        &disruption("1h", "[{nodes: '1'}]"),
        "Never",
    ));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 1h, drift: {nodePool: default}}\n  - {at: 3h, scale: {deployment: web, replicas: 5}}\n",
    );
    let options = ReplayOptions::default().with_duration(Duration::from_secs(6 * 3600));
    let run = same_either_way("drift", &scenario, &trace, options);
    assert!(disrupted(&run, "Drifted") > 0);
}

/// A node `old-1` of the type `xlarge`, which the replay's provider does
/// not offer, whose NodeClaim was launched half an hour before the trace
/// starts (its Node long before).
const VANISHED_TYPE_NODE: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: old-1
  creationTimestamp: '2026-01-01T00:00:00Z'
  labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: xlarge, topology.kubernetes.io/zone: zone-a, karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64, kubernetes.io/os: linux, kubernetes.io/hostname: old-1, karpenter.sh/initialized: 'true', karpenter.sh/registered: 'true'}
spec: {providerID: 'fake:///old-1'}
status:
  capacity: {cpu: '16', memory: 64Gi, pods: '110'}
  allocatable: {cpu: '16', memory: 64Gi, pods: '110'}
  conditions: [{type: Ready, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z'}]
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-old
  creationTimestamp: '2026-01-04T23:30:00Z'
  labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: xlarge, topology.kubernetes.io/zone: zone-a, karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64, kubernetes.io/os: linux}
spec:
  nodeClassRef: {group: karpenter.fake, kind: FakeNodeClass, name: default}
  requirements: []
status:
  nodeName: old-1
  providerID: 'fake:///old-1'
  conditions:
  - {type: Launched, status: 'True', lastTransitionTime: '2026-01-04T23:30:00Z'}
  - {type: Registered, status: 'True', lastTransitionTime: '2026-01-04T23:31:00Z'}
  - {type: Initialized, status: 'True', lastTransitionTime: '2026-01-04T23:31:00Z'}
"#;

#[test]
fn a_vanished_instance_type_drifts_its_node_an_hour_after_launch() {
    // Nothing else turns: no consolidation, no expiry. The only moment the
    // plan waits for is the claim's first instance type check.
    let scenario = cluster(&format!(
        "{}---\n{VANISHED_TYPE_NODE}",
        pool(
            "on-demand",
            &disruption("Never", "[{nodes: '100%'}]"),
            "Never"
        )
    ));
    let trace = trace("  - {at: 0s, scale: {deployment: web, replicas: 4}}\n");
    let options = ReplayOptions::default().with_duration(Duration::from_secs(2 * 3600));
    let run = same_either_way("instance type not found", &scenario, &trace, options);
    assert_eq!(disrupted(&run, "Drifted"), 1, "{:?}", run.totals);
    let checked: Timestamp = "2026-01-05T00:30:00Z".parse().expect("a time");
    let drifted_at = run.events.iter().find_map(|event| match event {
        karpenter::replay::ReplayEvent::Disrupt { time, reason, .. } if reason == "Drifted" => {
            Some(*time)
        }
        _ => None,
    });
    assert!(
        drifted_at.is_some_and(|at| at > checked),
        "drifted at {drifted_at:?}, after {checked}"
    );
}

#[test]
fn scale_up_and_down_at_random() {
    let scenario = cluster(&pool(
        "spot, on-demand",
        &disruption("2m", "[{nodes: '50%'}]"),
        "Never",
    ));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 30}}\n  - {at: 10m, random: {deployment: batch, every: 7m, min: 0, max: 12}}\n  - {at: 2h, scale: {deployment: web, replicas: 4}}\n  - {at: 3h, scale: {deployment: batch, replicas: 0}}\n",
    );
    for options in [
        ReplayOptions::default(),
        ReplayOptions::default().with_m_to_n(true),
        ReplayOptions::default().with_step(Duration::from_secs(300)),
    ] {
        let options = options.with_duration(Duration::from_secs(5 * 3600));
        same_either_way("random scale", &scenario, &trace, options);
    }
}

#[test]
fn do_not_disrupt_for_thirty_minutes() {
    let scenario = cluster(&pool(
        "on-demand",
        &disruption("1m", "[{nodes: '100%'}]"),
        "Never",
    ));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 20}}\n  - {at: 0s, scale: {deployment: guarded, replicas: 6}}\n  - {at: 1h, scale: {deployment: web, replicas: 2}}\n  - {at: 1h5m, scale: {deployment: guarded, replicas: 9}}\n  - {at: 2h, scale: {deployment: guarded, replicas: 1}}\n",
    );
    let options = ReplayOptions::default()
        .with_duration(Duration::from_secs(4 * 3600))
        .with_planning(gates("NodeRepair=true").into());
    let run = same_either_way("do-not-disrupt", &scenario, &trace, options);
    assert!(disrupted(&run, "Empty") + disrupted(&run, "Underutilized") > 0);
}

/// What changes at a step of [`stepped`].
enum Action {
    Scale(&'static str, i32),
    Fail,
}

/// Steps a driver over the cluster `scenario` describes for `minutes`, as
/// the replay does, applying `actions` at their minutes; returns every
/// event the driver reported, with the step's minute, and how many passes
/// planned disruption.
fn stepped(
    scenario: &Scenario,
    actions: &[(i64, Action)],
    minutes: i64,
    skip: bool,
) -> (Vec<String>, usize) {
    let start: Timestamp = "2026-01-05T00:00:00Z".parse().expect("a time");
    let types = scenario.fake_instance_types().expect("types");
    let cloud = Arc::new(FakeCloudProvider::new(types));
    let cluster = Arc::new(InMemoryCluster::new().with_registration_delay(Duration::from_secs(60)));
    cluster.tick(start);
    for pool in &scenario.node_pools {
        cluster.apply_node_pool(pool.object.clone());
    }
    for deployment in &scenario.deployments {
        cluster.apply_deployment(&deployment.object);
    }
    let options = DriverOptions::default()
        .with_planning(gates("NodeRepair=true").into())
        .with_quiet_skip(skip);
    let mut driver = Driver::new(cloud, cluster.clone()).with_options(options);
    let mut events = Vec::new();
    let mut planned = 0;
    for minute in 0..=minutes {
        let now = start + SignedDuration::from_mins(minute);
        cluster.tick(now);
        for (_, action) in actions.iter().filter(|(at, _)| *at == minute) {
            match action {
                Action::Scale(deployment, replicas) => {
                    cluster
                        .scale_deployment("default", deployment, *replicas)
                        .expect("scaled");
                }
                Action::Fail => {
                    let node = cluster.node_list().into_iter().next().expect("a node");
                    let name = node.metadata.name.clone().expect("a name");
                    cluster.set_node_condition(
                        &name,
                        NodeCondition {
                            type_: "Ready".to_owned(),
                            status: "False".to_owned(),
                            last_transition_time: Some(Time(now)),
                            ..NodeCondition::default()
                        },
                    );
                }
            }
        }
        let report = futures_lite_block_on(driver.reconcile(now)).expect("a pass");
        planned += report
            .timings
            .iter()
            .filter(|t| t.step == Step::Disruption)
            .count();
        events.extend(report.events.iter().map(|e| format!("{minute}: {e:?}")));
        cluster.tick(now);
    }
    // The cluster's revision moved with every change, and only then.
    assert!(cluster.revision().is_some());
    (events, planned)
}

/// Runs a future that never waits (the in-memory cluster and fake cloud
/// answer at once) to completion.
fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the in-memory world never waits"),
    }
}

#[test]
fn the_driver_reports_the_same_events_and_plans_less() {
    // A budget allowing nothing for ten minutes of every forty-five: the
    // candidates it holds back are not weighed, and reported again after.
    let budgets = "[{nodes: '0', schedule: '*/45 * * * *', duration: 10m}, {nodes: '100%'}]";
    let scenario = cluster(&pool("on-demand", &disruption("10m", budgets), "3h"));
    let actions = [
        (0, Action::Scale("web", 16)),
        (0, Action::Scale("guarded", 5)),
        (50, Action::Scale("web", 3)),
        (70, Action::Fail),
        (95, Action::Scale("guarded", 2)),
        (150, Action::Scale("web", 9)),
    ];
    let (on, planned_on) = stepped(&scenario, &actions, 240, true);
    let (off, planned_off) = stepped(&scenario, &actions, 240, false);
    assert_eq!(on, off, "the skip changed what the driver reported");
    let reported = |kind: &str| on.iter().filter(|e| e.contains(kind)).count();
    assert!(reported("DisruptionBlocked") > 0, "{on:#?}");
    assert!(reported("Unconsolidatable") > 0, "{on:#?}");
    assert!(reported("CommandStarted") > 0, "{on:#?}");
    // Emptiness and consolidation commands wait for their check: the
    // moment they are due is one the skip must not pass over.
    assert!(reported("CommandHeld") > 0, "{on:#?}");
    eprintln!("planned {planned_on} times with the skip, {planned_off} without");
    assert!(
        planned_on * 2 < planned_off,
        "planned {planned_on} times with the skip, {planned_off} without"
    );
}

#[test]
fn a_held_command_started_or_dropped_at_its_check() {
    // Scaled down at 30 minutes: the emptied nodes are held at 31 for their
    // check; the pods come back at 32 (bound at 33, where the check drops
    // the command); scaled down again at 60, the command held at 61 runs at
    // 62. Both ways the skip must plan again at each check.
    let scenario = cluster(&pool(
        "on-demand",
        &disruption("1m", "[{nodes: '100%'}]"),
        "Never",
    ));
    let actions = [
        (0, Action::Scale("web", 16)),
        (30, Action::Scale("web", 3)),
        (32, Action::Scale("web", 16)),
        (60, Action::Scale("web", 3)),
    ];
    let (on, _) = stepped(&scenario, &actions, 90, true);
    let (off, _) = stepped(&scenario, &actions, 90, false);
    assert_eq!(on, off, "the skip changed what the driver reported");
    let at = |minute: i64, kind: &str| {
        on.iter()
            .any(|e| e.starts_with(&format!("{minute}: {kind}")))
    };
    assert!(at(31, "CommandHeld"), "{on:#?}");
    assert!(at(33, "CommandDropped"), "{on:#?}");
    assert!(at(61, "CommandHeld"), "{on:#?}");
    assert!(at(62, "CommandStarted"), "{on:#?}");
}
