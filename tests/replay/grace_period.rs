//! A NodeClaim's `terminationGracePeriod` in the replay, as upstream's
//! eventual disruption uses it: a drift roll takes nodes whose pods would
//! otherwise block it (`karpenter.sh/do-not-disrupt`), and their drain ends
//! at the grace period, when the pods still there are deleted and planned
//! elsewhere.

use std::time::Duration;

use karpenter::replay::{ReplayEvent, ReplayOptions, Run, run};
use karpenter::scenario::Scenario;

use crate::support::{cluster, disrupted, pool_with_grace, trace};

/// A pool whose claims get `grace` (a `terminationGracePeriod`, or none),
/// never consolidating, with a Deployment `guarded` whose pods carry
/// `karpenter.sh/do-not-disrupt: "true"`.
fn guarded_cluster(grace: Option<&str>) -> Scenario {
    let disruption = "    consolidationPolicy: WhenEmpty\n    consolidateAfter: Never\n    budgets: [{nodes: '100%'}]";
    let pool = pool_with_grace("on-demand", disruption, "Never", grace);
    cluster(&format!(
        r#"{pool}---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: guarded, namespace: default}}
spec:
  replicas: 0
  selector: {{matchLabels: {{app: guarded}}}}
  template:
    metadata:
      labels: {{app: guarded}}
      annotations: {{karpenter.sh/do-not-disrupt: "true"}}
    spec:
      containers: [{{name: app, image: app, resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}}}]
"#
    ))
}

/// Four hours of 8 guarded pods, their pool drifting at 1h.
fn replay(grace: Option<&str>) -> Run {
    let trace = trace(
        "  - {at: 0s, scale: {deployment: guarded, replicas: 8}}\n  - {at: 1h, drift: {nodePool: default}}\n",
    );
    let options = ReplayOptions::default().with_duration(Duration::from_secs(4 * 3600));
    run(&guarded_cluster(grace), &trace, &options, &mut |_, _| {}).expect("the replay runs")
}

#[test]
fn without_a_grace_period_do_not_disrupt_pods_hold_their_nodes_from_drift() {
    let run = replay(None);
    assert_eq!(disrupted(&run, "Drifted"), 0, "{:?}", run.events);
    let last = run.timeline.last().expect("samples");
    assert_eq!((last.pods_running, last.pending_pods), (8, 0));
}

#[test]
fn with_a_grace_period_drift_takes_the_nodes_and_the_drain_ends_at_its_deadline() {
    let run = replay(Some("30m"));
    let drifted: Vec<_> = run
        .events
        .iter()
        .filter_map(|event| match event {
            ReplayEvent::Disrupt {
                reason,
                time,
                replacements,
                ..
            } if reason == "Drifted" => Some((*time, *replacements)),
            _ => None,
        })
        .collect();
    let before = run.timeline[58].nodes;
    assert!(before >= 1);
    assert_eq!(disrupted(&run, "Drifted"), before, "{:?}", run.events);
    let (first, _) = drifted.first().copied().expect("a drift command");
    // The pods cannot move (do-not-disrupt): the commands replace nothing.
    assert!(drifted.iter().all(|(_, replacements)| *replacements == 0));
    // Until the grace period runs out the pods stay where they are.
    let index = |at: jiff::Timestamp| run.timeline.iter().position(|s| s.time >= at);
    let started = index(first).expect("a sample at the command");
    let deadline = index(first + jiff::SignedDuration::from_mins(30)).expect("a sample later");
    for sample in &run.timeline[started..deadline] {
        assert_eq!(sample.pods_running, 8, "{sample:?}");
        assert_eq!(sample.pending_pods, 0, "{sample:?}");
    }
    // Then the drained nodes go, their pods are planned again on new
    // (undrifted) nodes, and they all run.
    let last = run.timeline.last().expect("samples");
    assert_eq!((last.pods_running, last.pending_pods), (8, 0));
    assert!(run.totals.pod_minutes_pending > 0.0, "{:?}", run.totals);
}
