//! An AWS replay starting from a running EKS cluster: its NodeClaims'
//! instances are adopted into the in-memory EC2, priced from their labels,
//! consolidated and interrupted (through the interruption queue) like
//! launched ones; a bad one is named as bad input.

use karpenter::aws::{Catalog, on_demand_price};
use karpenter::replay::{
    AwsReplayOptions, ReplayCloud, ReplayError, ReplayEvent, ReplayOptions, Run, run,
};
use karpenter::scenario::{LoadError, LoadOptions, Scenario};

use crate::support::{disrupted, trace};

/// One EC2NodeClass resolving subnets in us-east-1a and b; a spot pool of
/// `m5.2xlarge` in us-east-1a and an on-demand pool of m5, both
/// consolidated when empty for ten minutes; six one-CPU web pods that run
/// on the spot pool's nodes only.
const CLUSTER: &str = r#"apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: nodes}
spec:
  role: KarpenterNodeRole-replay
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: replay}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: replay}}]
status:
  subnets:
  - {id: subnet-0a, zone: us-east-1a, zoneID: use1-az1}
  - {id: subnet-0b, zone: us-east-1b, zoneID: use1-az2}
  securityGroups: [{id: sg-0nodes, name: nodes}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spot}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nodes}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.2xlarge]}
      - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 10m}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nodes}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 10m}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: spot}
      containers: [{name: web, image: web, resources: {requests: {cpu: '1', memory: 2Gi}}}]
"#;

/// A NodeClaim of `pool` and its Node, an `m5.2xlarge` of `capacity_type`
/// in `zone` launched the day before the replay, with this provider ID.
fn running_node(
    name: &str,
    pool: &str,
    zone: &str,
    capacity_type: &str,
    provider_id: &str,
) -> String {
    let labels = format!(
        "{{karpenter.sh/nodepool: {pool}, node.kubernetes.io/instance-type: m5.2xlarge, \
         topology.kubernetes.io/zone: {zone}, karpenter.sh/capacity-type: {capacity_type}, \
         karpenter.sh/registered: 'true', karpenter.sh/initialized: 'true'"
    );
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: {name}
  creationTimestamp: '2026-01-04T00:00:00Z'
  labels: {labels}}}
spec:
  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: nodes}}
  requirements: []
status:
  providerID: '{provider_id}'
  nodeName: {name}
  capacity: {{cpu: '8', memory: 32Gi, pods: '58'}}
  allocatable: {{cpu: 7910m, memory: 29317Mi, pods: '58'}}
  conditions:
  - {{type: Launched, status: 'True', lastTransitionTime: '2026-01-04T00:00:00Z'}}
  - {{type: Registered, status: 'True', lastTransitionTime: '2026-01-04T00:01:00Z'}}
  - {{type: Initialized, status: 'True', lastTransitionTime: '2026-01-04T00:01:00Z'}}
---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  creationTimestamp: '2026-01-04T00:01:00Z'
  labels: {labels}, kubernetes.io/arch: amd64, kubernetes.io/os: linux}}
spec:
  providerID: '{provider_id}'
status:
  capacity: {{cpu: '8', memory: 32Gi, pods: '58'}}
  allocatable: {{cpu: 7910m, memory: 29317Mi, pods: '58'}}
  conditions: [{{type: Ready, status: 'True'}}]
"#
    )
}

/// The cluster with a spot node (which the web pods run on) and an empty
/// on-demand one.
fn started(spot_id: &str) -> Scenario {
    let text = format!(
        "{CLUSTER}---\n{}---\n{}",
        running_node("spot-old", "spot", "us-east-1a", "spot", spot_id),
        running_node(
            "default-old",
            "default",
            "us-east-1b",
            "on-demand",
            "aws:///us-east-1b/i-0000000000000d001"
        ),
    );
    Scenario::from_str("eks.yaml", &text, &LoadOptions::default()).expect("a cluster")
}

fn aws() -> ReplayOptions {
    ReplayOptions::default()
        .with_cloud(ReplayCloud::Aws {
            region: "us-east-1".into(),
            options: AwsReplayOptions::default(),
        })
        .with_duration(std::time::Duration::from_secs(3600))
}

const INTERRUPT: &str = "  - {at: 30m, interrupt: {nodes: 1, capacityType: spot}}\n";

fn replay(scenario: &Scenario) -> Run {
    run(scenario, &trace(INTERRUPT), &aws(), &mut |_, _| {}).expect("the replay runs")
}

/// Every disruption: (reason, candidates, by).
fn disruptions(run: &Run) -> Vec<(String, Vec<String>, String)> {
    (run.events.iter())
        .filter_map(|e| match e {
            ReplayEvent::Disrupt {
                reason,
                candidates,
                by,
                ..
            } => Some((reason.clone(), candidates.clone(), by.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn starting_eks_nodes_are_adopted_priced_consolidated_and_interrupted() {
    let run = replay(&started("aws:///us-east-1a/i-0000000000000a001"));
    // Both instances run from the start, priced from the region's table
    // (spot as on-demand, no spot price being known): none went missing,
    // nothing launched for the web pods, which the spot node holds.
    let catalog = Catalog::embedded().expect("the embedded catalog");
    let price = on_demand_price(catalog, "us-east-1", "m5.2xlarge").expect("a price");
    let first = &run.timeline[0];
    assert_eq!((first.nodes, first.pods_running), (2, 6), "{first:?}");
    assert!(
        (first.price_per_hour - 2.0 * price).abs() < 1e-9,
        "{first:?}"
    );
    // The empty on-demand node is consolidated by the driver; the spot one
    // is interrupted by the cloud, its claim named by the queue's message.
    let seen = disruptions(&run);
    assert!(
        seen.contains(&("Empty".into(), vec!["default-old".into()], "driver".into())),
        "{seen:?}"
    );
    assert!(
        seen.contains(&(
            "Interrupted".into(),
            vec!["spot-old".into()],
            "cloud".into()
        )),
        "{seen:?}"
    );
    assert_eq!(disrupted(&run, "Interrupted"), 1);
    // The web pods end on a spot node launched in its place.
    let launched: Vec<_> = (run.events.iter())
        .filter_map(|e| match e {
            ReplayEvent::Launch {
                node_pool,
                capacity_type,
                ..
            } => Some((node_pool.as_str(), capacity_type.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(launched.first(), Some(&("spot", "spot")), "{launched:?}");
    let last = run.timeline.last().expect("samples");
    assert_eq!((last.nodes, last.pods_running), (1, 6), "{last:?}");
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[test]
fn a_started_replay_gives_the_same_json() {
    let scenario = started("aws:///us-east-1a/i-0000000000000a001");
    let json = || serde_json::to_string(&replay(&scenario)).expect("json");
    assert_eq!(json(), json());
}

#[test]
fn a_bad_provider_id_is_named_as_bad_input() {
    for bad in ["azure:///subscriptions/x/vm", "aws:///us-east-1a/"] {
        let scenario = started(bad);
        let error = run(&scenario, &trace(INTERRUPT), &aws(), &mut |_, _| {}).expect_err("refused");
        let ReplayError::Input(LoadError::Invalid {
            object,
            field,
            message,
            ..
        }) = &error
        else {
            panic!("{error:?}");
        };
        assert_eq!(
            (object.as_str(), field.as_str()),
            ("NodeClaim spot-old", "status.providerID")
        );
        assert!(message.contains(bad), "{message}");
    }
    // A zone label the provider ID contradicts names the label.
    let scenario = started("aws:///us-east-1b/i-0000000000000a001");
    let error = run(&scenario, &trace(INTERRUPT), &aws(), &mut |_, _| {}).expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("NodeClaim spot-old: field metadata.labels[topology.kubernetes.io/zone]"),
        "{error}"
    );
}

#[test]
fn a_starting_node_drifts_with_its_pool() {
    let scenario = started("aws:///us-east-1a/i-0000000000000a001");
    let events = "  - {at: 20m, drift: {nodePool: spot}}\n";
    let run = run(&scenario, &trace(events), &aws(), &mut |_, _| {}).expect("the replay runs");
    let seen = disruptions(&run);
    // Given its pool's hash at the start, as upstream's hash controller
    // gives a claim hashed by another scheme: the pool's change drifts it.
    assert!(
        seen.iter()
            .any(|(reason, candidates, _)| reason == "Drifted" && candidates == &["spot-old"]),
        "{seen:?}"
    );
    assert_eq!(run.timeline.last().expect("samples").pods_running, 6);
}
