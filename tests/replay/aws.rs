//! The replay on the AWS provider (`ReplayCloud::Aws`): the driver launches
//! instances of the embedded EC2 catalog through an in-memory EC2 at the
//! region's on-demand prices; a trace's `interrupt` of a spot node reaches
//! the provider as EC2's warning on the interruption queue, which takes the
//! node and marks its spot offering unavailable.

use karpenter::aws::{Catalog, on_demand_price};
use karpenter::replay::{
    AwsReplayOptions, ReplayCloud, ReplayError, ReplayEvent, ReplayOptions, Run, run,
};
use karpenter::scenario::{LoadError, LoadOptions, Scenario};

use crate::support::{disrupted, trace};

const EKS: &str = include_str!("../../examples/replay/eks.yaml");

fn aws(region: &str) -> ReplayOptions {
    ReplayOptions::default().with_cloud(ReplayCloud::Aws {
        region: region.into(),
        options: AwsReplayOptions::default(),
    })
}

pub(crate) fn scenario(text: &str) -> Scenario {
    Scenario::from_str("eks.yaml", text, &LoadOptions::default()).expect("a cluster")
}

fn replay(scenario: &Scenario, events: &str, options: &ReplayOptions) -> Run {
    run(scenario, &trace(events), options, &mut |_, _| {}).expect("the replay runs")
}

/// Every launch: (claim, pool, type, zone, capacity type, price), in order.
pub(crate) fn launches(run: &Run) -> Vec<(&str, &str, &str, &str, &str, f64)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            ReplayEvent::Launch {
                node_claim,
                node_pool,
                instance_type,
                zone,
                capacity_type,
                price,
                ..
            } => Some((
                node_claim.as_str(),
                node_pool.as_str(),
                instance_type.as_str(),
                zone.as_str(),
                capacity_type.as_str(),
                *price,
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn the_eks_day_launches_catalog_types_at_the_regions_prices() {
    let cluster = scenario(EKS);
    // 150 web pods and the api's five ask for 80 CPUs: more than the spot
    // pool's 64.
    let events = "  - {at: 0s, scale: {deployment: web, replicas: 150}}\n  - {at: 1h, scale: {deployment: web, replicas: 4}}\n";
    let catalog = Catalog::embedded().expect("the embedded catalog");
    // us-east-1 has its own table; eu-west-1 has none and is priced from
    // us-east-1's, as upstream prices it before reading the Pricing API.
    for region in ["us-east-1", "eu-west-1"] {
        let run = replay(&cluster, events, &aws(region));
        let launched = launches(&run);
        assert!(!launched.is_empty(), "{region}");
        for (_, pool, ty, zone, capacity_type, price) in &launched {
            let (family, size) = ty.split_once('.').expect("family.size");
            assert!(["m5", "c5", "r5"].contains(&family), "{ty}");
            assert!(["large", "xlarge", "2xlarge"].contains(&size), "{ty}");
            assert!(zone.starts_with(region), "{zone}");
            let expected = match *pool {
                "spot" => "spot",
                _ => "on-demand",
            };
            assert_eq!(*capacity_type, expected, "{pool}");
            // Spot is priced as on-demand until a spot price is known.
            let table = on_demand_price(catalog, "us-east-1", ty).expect("a price");
            assert_eq!(*price, table, "{ty} in {region}");
        }
        // The spot pool is preferred up to its 64 vCPUs, on-demand beyond.
        assert!(launched.iter().any(|l| l.1 == "spot"));
        assert!(launched.iter().any(|l| l.1 == "default"));
        let peak = run.timeline.iter().map(|s| s.nodes).max().expect("samples");
        let last = run.timeline.last().expect("samples");
        assert_eq!(last.pods_running, 9, "four web pods and the api's five");
        assert!(last.nodes < peak, "{last:?}, peak {peak}");
        assert!(last.price_per_hour > 0.0);
        assert!(run.warnings.is_empty(), "{:?}", run.warnings);
    }
}

/// One EC2NodeClass with a resolved status (two zones), a spot pool of
/// `m5.2xlarge` in us-east-1a only, preferred, an on-demand pool of m5
/// beside it, and six one-CPU web pods: one spot node holds them all.
pub(crate) const ONE_SPOT_NODE: &str = r#"apiVersion: karpenter.k8s.aws/v1
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
  weight: 50
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nodes}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.2xlarge]}
      - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1h}
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
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1h}
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
      containers: [{name: web, image: web, resources: {requests: {cpu: '1', memory: 2Gi}}}]
"#;

#[test]
fn an_interrupt_reaches_the_queue_takes_its_node_and_marks_its_offering() {
    let cluster = scenario(ONE_SPOT_NODE);
    let events = "  - {at: 30m, interrupt: {nodes: 1, capacityType: spot}}\n";
    let options = aws("us-east-1").with_duration(std::time::Duration::from_secs(3600));
    let run = replay(&cluster, events, &options);
    let launched = launches(&run);
    let (spot_claim, _, ty, zone, capacity_type, _) = launched[0];
    assert_eq!(
        (ty, zone, capacity_type),
        ("m5.2xlarge", "us-east-1a", "spot")
    );
    // The cloud took the interrupted node at the notice's end (two
    // minutes on), and the queue's message named that node's claim.
    let taken: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            ReplayEvent::Disrupt {
                time,
                reason,
                candidates,
                by,
                ..
            } if reason == "Interrupted" => {
                Some((time.to_string(), candidates.clone(), by.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        taken,
        [(
            "2026-01-05T00:32:00Z".to_owned(),
            vec![spot_claim.to_owned()],
            "cloud".to_owned()
        )]
    );
    assert_eq!(disrupted(&run, "Interrupted"), 1);
    // Its spot offering, the spot pool's only one, is unavailable for
    // three minutes: the pods it ran go on demand, not back to spot.
    let after: Vec<_> = launched[1..].iter().map(|l| (l.1, l.4)).collect();
    assert_eq!(
        after.first(),
        Some(&("default", "on-demand")),
        "{launched:?}"
    );
    let last = run.timeline.last().expect("samples");
    assert_eq!(last.pods_running, 6);
}

#[test]
fn an_on_demand_interrupt_terminates_without_a_spot_mark() {
    // The preferred pool launches the same offering on demand.
    let text = ONE_SPOT_NODE.replace("values: [spot]", "values: [on-demand]");
    let events = "  - {at: 30m, interrupt: {nodes: 1, capacityType: on-demand}}\n";
    let options = aws("us-east-1").with_duration(std::time::Duration::from_secs(3600));
    let run = replay(&scenario(&text), events, &options);
    let launched = launches(&run);
    let first = launched[0];
    assert_eq!(
        (first.1, first.2, first.4),
        ("spot", "m5.2xlarge", "on-demand")
    );
    let interrupted = run.events.iter().find_map(|e| match e {
        ReplayEvent::Disrupt {
            reason,
            candidates,
            by,
            ..
        } if reason == "Interrupted" => Some((candidates.clone(), by.as_str())),
        _ => None,
    });
    assert_eq!(interrupted, Some((vec![first.0.to_owned()], "cloud")));
    // EC2 sends no spot warning for it, so nothing is marked: the pods go
    // back to the same offering.
    let next = launched[1];
    assert_eq!(
        (next.1, next.2, next.3, next.4),
        ("spot", "m5.2xlarge", "us-east-1a", "on-demand")
    );
    assert_eq!(run.timeline.last().expect("samples").pods_running, 6);
}

#[test]
fn the_same_input_gives_the_same_output() {
    let cluster = scenario(EKS);
    let events = "  - {at: 0s, scale: {deployment: web, replicas: 80}}\n  - {at: 20m, interrupt: {nodes: 2, capacityType: spot}}\n  - {at: 40m, drift: {nodePool: spot}}\n  - {at: 1h, scale: {deployment: web, replicas: 10}}\n";
    let json =
        || serde_json::to_string(&replay(&cluster, events, &aws("us-east-1"))).expect("json");
    let first = json();
    assert!(first.contains("\"Interrupted\":2"), "{first}");
    assert_eq!(first, json());
}

#[test]
fn a_fake_cluster_or_a_bad_region_is_refused() {
    let fake = crate::support::cluster(&crate::support::pool(
        "spot",
        "    consolidationPolicy: WhenEmpty",
        "Never",
    ));
    let events = "  - {at: 0s, scale: {deployment: web, replicas: 4}}\n";
    let error = run(&fake, &trace(events), &aws("us-east-1"), &mut |_, _| {}).expect_err("refused");
    let ReplayError::Input(LoadError::Provider { message, .. }) = &error else {
        panic!("{error:?}");
    };
    assert!(message.contains("InstanceType"), "{message}");
    let error = run(
        &scenario(EKS),
        &trace(events),
        &aws("mars-north-1x"),
        &mut |_, _| {},
    )
    .expect_err("refused");
    assert!(matches!(error, ReplayError::Input(_)), "{error:?}");
    assert!(error.to_string().contains("mars-north-1x"), "{error}");
}

#[test]
fn a_reserved_launch_is_priced_as_its_reservation() {
    // The reservation takes one m5.2xlarge in us-east-1a; the pool allows
    // reserved and on-demand capacity, so the first launch takes it.
    let text = ONE_SPOT_NODE
        .replace(
            "  securityGroups: [{id: sg-0nodes, name: nodes}]",
            "  securityGroups: [{id: sg-0nodes, name: nodes}]
  capacityReservations:
  - {id: cr-0replay, availabilityZone: us-east-1a, instanceType: m5.2xlarge,
     instanceMatchCriteria: targeted, ownerID: '012345678901', availableInstanceCount: 1}",
        )
        .replace("values: [spot]", "values: [reserved, on-demand]");
    let run = replay(
        &scenario(&text),
        "  - {at: 0s, scale: {deployment: web, replicas: 6}}\n",
        &aws("us-east-1"),
    );
    let launched = launches(&run);
    let reserved: Vec<_> = launched.iter().filter(|l| l.4 == "reserved").collect();
    assert_eq!(reserved.len(), 1, "{launched:?}");
    // Upstream prices a reservation at its type's on-demand price over ten
    // million: tiny, but a price.
    let catalog = Catalog::embedded().expect("the embedded catalog");
    let table = on_demand_price(catalog, "us-east-1", "m5.2xlarge").expect("a price");
    assert_eq!(reserved[0].5, table / 10_000_000.0);
    // The timeline counts it as reserved (its price rounds to 0 at the
    // timeline's millionths).
    let busy = run
        .timeline
        .iter()
        .find(|s| s.nodes == 1)
        .expect("a sample with the node");
    assert_eq!(busy.nodes_by_capacity_type.get("reserved"), Some(&1));
}
