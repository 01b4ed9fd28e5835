//! The replay, one test per trace event kind and per disruption the driver
//! makes over simulated time (`karpenter::replay`), on the fake cloud.

use std::time::Duration;

use karpenter::core::features::FeatureGate;
use karpenter::replay::{ReplayEvent, ReplayOptions, Run, run};
use karpenter::scenario::{LoadOptions, Scenario, Trace};

use crate::support::{cluster, disrupted, gates, pool, trace};

const CONSOLIDATE_FAST: &str = "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m\n    budgets: [{nodes: '100%'}]";

fn replay(scenario: &Scenario, trace: &Trace, options: &ReplayOptions) -> Run {
    run(scenario, trace, options, &mut |_, _| {}).expect("the replay runs")
}

#[test]
fn scale_up_launches_after_the_delay_and_scale_down_consolidates() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: default/web, replicas: 40}}\n  - {at: 2h, scale: {deployment: web, replicas: 4}}\n",
    );
    let run = replay(&scenario, &trace, &ReplayOptions::default());
    assert_eq!(run.timeline.len(), 180, "3 hours at 1-minute steps");
    // Launched at the start, registered a minute later: pods pend one step.
    let first = &run.timeline[0];
    assert_eq!(first.pods_running, 40, "{first:?}");
    assert_eq!(first.pending_pods, 0);
    assert!(first.launched > 0);
    assert_eq!(run.totals.max_pending_seconds, 60);
    // 40 × 0.5 cpu on on-demand nodes.
    let at_noon = &run.timeline[100];
    assert!(at_noon.nodes >= 3, "{at_noon:?}");
    assert_eq!(at_noon.nodes_by_capacity_type.get("spot"), None);
    // Scaled down to 4 pods: consolidation leaves one small node (2 cpu).
    let last = run.timeline.last().expect("samples");
    assert_eq!(last.pods_running, 4);
    assert_eq!(last.nodes, 1, "{last:?}");
    assert!((last.price_per_hour - 0.1).abs() < 1e-9);
    assert!(disrupted(&run, "Empty") + disrupted(&run, "Underutilized") > 0);
    // Totals are the sums of the timeline.
    let cost: f64 = run.timeline.iter().map(|s| s.price_per_hour / 60.0).sum();
    assert!(
        (run.totals.cost - cost).abs() < 1e-4,
        "{} vs {cost}",
        run.totals.cost
    );
    let node_hours: f64 = run.timeline.iter().map(|s| s.nodes as f64 / 60.0).sum();
    assert!((run.totals.node_hours - node_hours).abs() < 1e-4);
    let launches = run
        .events
        .iter()
        .filter(|e| matches!(e, ReplayEvent::Launch { .. }))
        .count();
    assert_eq!(run.totals.launches, launches);
    assert_eq!(
        launches,
        run.timeline.iter().map(|s| s.launched).sum::<usize>()
    );
}

#[test]
fn launch_delay_keeps_pods_pending_that_long() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "Never"));
    let trace = Trace::from_str(
        "trace.yaml",
        "apiVersion: karpenter.sim/v1alpha1\nkind: Trace\nlaunchDelay: 5m\nevents:\n  - {at: 10m, scale: {deployment: web, replicas: 10}}\n",
        &LoadOptions::default(),
    )
    .expect("a trace");
    let run = replay(&scenario, &trace, &ReplayOptions::default());
    assert_eq!(run.totals.max_pending_seconds, 300);
    assert_eq!(run.totals.pod_minutes_pending, 50.0);
    let pending: Vec<usize> = run.timeline[8..17].iter().map(|s| s.pending_pods).collect();
    assert_eq!(pending, [0, 10, 10, 10, 10, 10, 0, 0, 0]);
}

#[test]
fn an_interrupt_without_node_repair_is_a_reclaim_and_the_pods_move() {
    let scenario = cluster(&pool("spot", CONSOLIDATE_FAST, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 30m, interrupt: {nodes: 2}}\n",
    );
    let run = replay(&scenario, &trace, &ReplayOptions::default());
    assert_eq!(disrupted(&run, "Interrupted"), 2);
    let reclaims: Vec<&ReplayEvent> = run
        .events
        .iter()
        .filter(|e| matches!(e, ReplayEvent::Disrupt { by, .. } if by == "cloud"))
        .collect();
    assert_eq!(reclaims.len(), 2);
    // The notice is two minutes: the cloud takes them at 00:32.
    for event in reclaims {
        let ReplayEvent::Disrupt { time, .. } = event else {
            unreachable!()
        };
        assert_eq!(time.to_string(), "2026-01-05T00:32:00Z");
    }
    let last = run.timeline.last().expect("samples");
    assert_eq!((last.pods_running, last.pending_pods), (40, 0));
    assert!(run.totals.max_pending_seconds >= 60);
}

#[test]
fn an_interrupt_with_node_repair_is_replaced_by_the_driver_first() {
    let scenario = cluster(&pool("spot", CONSOLIDATE_FAST, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 30m, interrupt: {nodes: 1}}\n",
    );
    let options = ReplayOptions::default().with_planning(gates("NodeRepair=true").into());
    let run = replay(&scenario, &trace, &options);
    let commands: Vec<&ReplayEvent> = run
        .events
        .iter()
        .filter(|e| matches!(e, ReplayEvent::Disrupt { reason, .. } if reason == "Interrupted"))
        .collect();
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert!(
        matches!(commands[0], ReplayEvent::Disrupt { by, time, .. } if by == "driver" && time.to_string() == "2026-01-05T00:30:00Z")
    );
    assert_eq!(disrupted(&run, "Interrupted"), 1, "counted once");
}

#[test]
fn a_failed_node_is_repaired_only_with_node_repair() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 20}}\n  - {at: 1h, fail: {nodes: 1}}\n",
    );
    let off = replay(
        &scenario,
        &trace,
        &ReplayOptions::default().with_duration(Duration::from_secs(3 * 3600)),
    );
    assert_eq!(disrupted(&off, "Unhealthy"), 0);
    let on = replay(
        &scenario,
        &trace,
        &ReplayOptions::default()
            .with_duration(Duration::from_secs(3 * 3600))
            .with_planning(gates("NodeRepair=true").into()),
    );
    assert_eq!(disrupted(&on, "Unhealthy"), 1);
    // The fake provider tolerates a NotReady node for 30 minutes.
    let repaired = on
        .events
        .iter()
        .find_map(|e| match e {
            ReplayEvent::Disrupt { reason, time, .. } if reason == "Unhealthy" => Some(*time),
            _ => None,
        })
        .expect("a repair");
    assert_eq!(repaired.to_string(), "2026-01-05T01:30:00Z");
}

#[test]
fn drift_rolls_every_node_of_the_pool_replacing_before_deleting() {
    let budget =
        "    consolidationPolicy: WhenEmpty\n    consolidateAfter: 1h\n    budgets: [{nodes: '1'}]";
    let scenario = cluster(&pool("on-demand", budget, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 1h, drift: {nodePool: default}}\n",
    );
    let run = replay(
        &scenario,
        &trace,
        &ReplayOptions::default().with_duration(Duration::from_secs(4 * 3600)),
    );
    // The sample at 00:59, before the drift.
    let before = run.timeline[58].nodes;
    assert_eq!(
        disrupted(&run, "Drifted"),
        before,
        "every node drifted once"
    );
    let mut last_start = None;
    for event in &run.events {
        if let ReplayEvent::Disrupt {
            reason,
            replacements,
            time,
            ..
        } = event
            && reason == "Drifted"
        {
            assert!(*replacements >= 1, "replace, then delete: {event:?}");
            // A budget of one node: one command at a time.
            assert!(last_start.is_none_or(|t| t < *time));
            last_start = Some(*time);
        }
    }
    // No sample during the roll has fewer nodes than before it: the
    // replacement runs before the candidate goes.
    assert!(run.timeline[59..].iter().all(|s| s.nodes >= before));
    let last = run.timeline.last().expect("samples");
    assert_eq!((last.pods_running, last.pending_pods), (40, 0));
}

#[test]
fn expire_after_replaces_old_nodes() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "2h"));
    let trace = trace("  - {at: 0s, scale: {deployment: web, replicas: 12}}\n");
    let run = replay(
        &scenario,
        &trace,
        &ReplayOptions::default().with_duration(Duration::from_secs(3 * 3600)),
    );
    assert!(disrupted(&run, "Expired") >= 1, "{:?}", run.totals);
    let first = run
        .events
        .iter()
        .find_map(|e| match e {
            ReplayEvent::Disrupt { reason, time, .. } if reason == "Expired" => Some(*time),
            _ => None,
        })
        .expect("an expiry");
    assert_eq!(first.to_string(), "2026-01-05T02:00:00Z");
}

#[test]
fn consolidate_after_holds_consolidation_after_the_last_pod_event() {
    let wait = "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30m\n    budgets: [{nodes: '100%'}]";
    let scenario = cluster(&pool("on-demand", wait, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 2h, scale: {deployment: web, replicas: 2}}\n",
    );
    let run = replay(&scenario, &trace, &ReplayOptions::default());
    let (ran, held) = run
        .events
        .iter()
        .find_map(|e| match e {
            ReplayEvent::Disrupt {
                time, held_since, ..
            } => Some((*time, *held_since)),
            _ => None,
        })
        .expect("a consolidation");
    // Computed the moment consolidateAfter passes, then held for its check
    // (15 s): the next step runs it.
    assert_eq!(
        held.map(|t| t.to_string()).as_deref(),
        Some("2026-01-05T02:30:00Z")
    );
    assert_eq!(ran.to_string(), "2026-01-05T02:31:00Z");
}

#[test]
fn a_held_command_the_cluster_moved_under_is_dropped_at_its_check() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "Never"));
    // Scaled down at 1h: the emptied nodes are computed empty at 1h01 and
    // held; the pods come back at 1h02, onto those nodes (pending, then
    // bound at 1h03); the check at 1h03, the first settled step, finds the
    // nodes busy again.
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 1h, scale: {deployment: web, replicas: 4}}\n  - {at: 1h2m, scale: {deployment: web, replicas: 40}}\n",
    );
    let options = ReplayOptions::default().with_duration(Duration::from_secs(2 * 3600));
    let run = replay(&scenario, &trace, &options);
    let dropped: Vec<_> = run
        .dropped
        .iter()
        .map(|d| {
            (
                d.time.to_string(),
                d.reason.as_str(),
                d.held_since.to_string(),
                d.failure.as_str(),
                d.candidates.len(),
            )
        })
        .collect();
    assert_eq!(dropped.len(), 1, "{:#?}", run.dropped);
    let (time, reason, held, failure, candidates) = &dropped[0];
    assert_eq!(
        (time.as_str(), *reason, held.as_str(), *failure),
        (
            "2026-01-05T01:03:00Z",
            "Empty",
            "2026-01-05T01:01:00Z",
            "churn"
        )
    );
    assert!(*candidates > 0);
    // Nothing was disrupted around the scale-down: the nodes were needed.
    assert!(
        !run.events.iter().any(|e| matches!(e,
            ReplayEvent::Disrupt { time, .. } if time.to_string().as_str() < "2026-01-05T01:10:00Z")),
        "{:#?}",
        run.events
    );
    // The JSON says it, field for field.
    let json = serde_json::to_value(&run).expect("json");
    let event = &json["dropped"][0];
    assert_eq!(event["time"], "2026-01-05T01:03:00Z");
    assert_eq!(event["reason"], "Empty");
    assert_eq!(event["heldSince"], "2026-01-05T01:01:00Z");
    assert_eq!(event["failure"], "churn");
    // The events are the launches and disruptions alone, as the contract
    // says.
    let kinds: std::collections::BTreeSet<&str> = json["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert!(
        kinds.iter().all(|k| ["launch", "disrupt"].contains(k)),
        "{kinds:?}"
    );
}

#[test]
fn a_budget_of_zero_in_its_window_holds_consolidation() {
    let window = "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m\n    budgets: [{nodes: '0', schedule: '0 2 * * *', duration: 2h}, {nodes: '100%'}]";
    let scenario = cluster(&pool("on-demand", window, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 40}}\n  - {at: 2h, scale: {deployment: web, replicas: 2}}\n  - {at: 5h, scale: {deployment: web, replicas: 2}}\n",
    );
    let run = replay(&scenario, &trace, &ReplayOptions::default());
    let times: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            ReplayEvent::Disrupt { time, .. } => Some(time.to_string()),
            _ => None,
        })
        .collect();
    assert!(!times.is_empty());
    assert!(
        times.iter().all(|t| t.as_str() >= "2026-01-05T04:00:00Z"),
        "{times:?}"
    );
}

#[test]
fn random_draws_within_bounds_every_period_by_the_seed() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "Never"));
    let trace = trace(
        "  - {at: 0s, random: {deployment: batch, every: 10m, min: 2, max: 9}}\n  - {at: 2h, scale: {deployment: batch, replicas: 0}}\n",
    );
    let options = ReplayOptions::default().with_duration(Duration::from_secs(3 * 3600));
    let a = replay(&scenario, &trace, &options);
    let b = replay(&scenario, &trace, &options);
    assert_eq!(a, b, "the same seed gives the same run");
    // Counts a step before each redraw (pods have bound by then).
    let counts: Vec<usize> = (1..12)
        .map(|k| {
            let s = &a.timeline[k * 10 - 2];
            s.pods_running + s.pending_pods
        })
        .collect();
    assert!(counts.iter().all(|c| (2..=9).contains(c)), "{counts:?}");
    assert!(counts.windows(2).any(|w| w[0] != w[1]), "{counts:?}");
    // The random ends with the next scale.
    let last = a.timeline.last().expect("samples");
    assert_eq!(last.pods_running + last.pending_pods, 0);
    let c = replay(&scenario, &trace, &options.clone().with_seed(7));
    assert_ne!(a.timeline, c.timeline, "another seed draws other counts");
}

#[test]
fn the_same_inputs_give_the_same_json() {
    let scenario = cluster(&pool("spot, on-demand", CONSOLIDATE_FAST, "Never"));
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 30}}\n  - {at: 20m, interrupt: {nodes: 1}}\n  - {at: 40m, fail: {nodes: 1}}\n  - {at: 1h, drift: {nodePool: default}}\n  - {at: 90m, random: {deployment: batch, every: 5m, min: 0, max: 8}}\n",
    );
    let options = ReplayOptions::default().with_planning(gates("NodeRepair=true").into());
    let json = |run: &Run| serde_json::to_string(run).expect("json");
    let first = json(&replay(&scenario, &trace, &options));
    assert_eq!(first, json(&replay(&scenario, &trace, &options)));
}

#[test]
fn events_naming_what_is_not_there_or_before_the_start_are_refused() {
    let scenario = cluster(&pool("on-demand", CONSOLIDATE_FAST, "Never"));
    let cases = [
        (
            "  - {at: 1h, scale: {deployment: default/api, replicas: 3}}\n",
            "trace.yaml, document 1: Trace: field events[0].scale.deployment: no Deployment default/api in the input (it has: default/web, default/batch)",
        ),
        (
            "  - {at: '2026-01-04T23:00:00Z', fail: {nodes: 1}}\n",
            "field events[0].at: 2026-01-04T23:00:00Z is before the start (2026-01-05T00:00:00Z)",
        ),
        (
            "  - {at: 1h, drift: {nodePool: gpu}}\n",
            "field events[0].drift.nodePool: no NodePool gpu in the input (it has: default)",
        ),
    ];
    for (events, expected) in cases {
        let error = run(
            &scenario,
            &trace(events),
            &ReplayOptions::default(),
            &mut |_, _| {},
        )
        .expect_err("refused")
        .to_string();
        assert!(error.contains(expected), "{error:?} lacks {expected:?}");
    }
    let error = run(
        &scenario,
        &trace("  - {at: 1h, fail: {nodes: 1}}\n"),
        &ReplayOptions::default().with_step(Duration::from_millis(10)),
        &mut |_, _| {},
    )
    .expect_err("refused");
    assert!(error.to_string().starts_with("step:"), "{error}");
    let _ = FeatureGate::NodeRepair;
}
