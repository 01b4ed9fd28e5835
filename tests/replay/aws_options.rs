//! The AWS provider's options on a replay (`--spot-prices`,
//! `--reserved-enis`): the price book, the provider's instance types and
//! the in-memory EC2 all follow them.

use std::collections::BTreeMap;

use karpenter::aws::{Catalog, on_demand_price};
use karpenter::replay::{AwsReplayOptions, ReplayCloud, ReplayOptions, Run, run};

use crate::aws::{ONE_SPOT_NODE, launches, scenario};
use crate::support::trace;

fn aws(options: AwsReplayOptions) -> ReplayOptions {
    ReplayOptions::default()
        .with_cloud(ReplayCloud::Aws {
            region: "us-east-1".into(),
            options,
        })
        .with_duration(std::time::Duration::from_secs(3600))
}

fn spot_priced(prices: &[(&str, &str, f64)]) -> AwsReplayOptions {
    let prices: BTreeMap<(String, String), f64> = (prices.iter())
        .map(|(ty, zone, price)| (((*ty).to_owned(), (*zone).to_owned()), *price))
        .collect();
    AwsReplayOptions {
        spot_prices: Some(prices),
        ..AwsReplayOptions::default()
    }
}

fn replay(text: &str, events: &str, options: AwsReplayOptions) -> Run {
    run(
        &scenario(text),
        &trace(events),
        &aws(options),
        &mut |_, _| {},
    )
    .expect("the replay runs")
}

const QUIET: &str = "  - {at: 30m, scale: {deployment: web, replicas: 6}}\n";

#[test]
fn spot_prices_change_what_launches_and_what_it_costs() {
    let catalog = Catalog::embedded().expect("the embedded catalog");
    let on_demand = on_demand_price(catalog, "us-east-1", "m5.2xlarge").expect("a price");
    let unpriced = replay(ONE_SPOT_NODE, QUIET, AwsReplayOptions::default());
    // The spot pool's only offering at the file's price.
    let priced = replay(
        ONE_SPOT_NODE,
        QUIET,
        spot_priced(&[("m5.2xlarge", "us-east-1a", 0.1)]),
    );
    let first = |run: &Run| {
        let l = launches(run)[0];
        (l.1.to_owned(), l.4.to_owned(), l.5)
    };
    assert_eq!(first(&unpriced), ("spot".into(), "spot".into(), on_demand));
    assert_eq!(first(&priced), ("spot".into(), "spot".into(), 0.1));
    let sample = &priced.timeline[0];
    assert!((sample.price_per_hour - 0.1).abs() < 1e-9, "{sample:?}");
    assert!(
        priced.totals.cost < unpriced.totals.cost,
        "{} vs {}",
        priced.totals.cost,
        unpriced.totals.cost
    );
    // A file that prices only another zone leaves the spot pool no spot
    // offering: the pods go on demand in the other pool.
    let elsewhere = replay(
        ONE_SPOT_NODE,
        QUIET,
        spot_priced(&[("m5.2xlarge", "us-east-1b", 0.1)]),
    );
    let (pool, capacity_type, _) = first(&elsewhere);
    assert_eq!(
        (pool.as_str(), capacity_type.as_str()),
        ("default", "on-demand")
    );
    assert_eq!(elsewhere.timeline.last().expect("samples").pods_running, 6);
}

/// An on-demand pool of `m5.large` only and a Deployment of 100 pods so
/// small that the ENI-limited pod count (29 a node) is what fills a node.
const POD_DENSE: &str = r#"apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: nodes}
spec:
  role: KarpenterNodeRole-replay
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: replay}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: replay}}]
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
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tiny, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: tiny}}
  template:
    metadata: {labels: {app: tiny}}
    spec:
      containers: [{name: tiny, image: tiny, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
"#;

#[test]
fn a_reserved_eni_takes_pods_from_every_node() {
    let events = "  - {at: 0s, scale: {deployment: tiny, replicas: 100}}\n";
    let nodes = |run: &Run| {
        let last = run.timeline.last().expect("samples");
        assert_eq!(last.pods_running, 100, "{last:?}");
        last.nodes
    };
    let default = replay(POD_DENSE, events, AwsReplayOptions::default());
    let reserved = replay(
        POD_DENSE,
        events,
        AwsReplayOptions {
            reserved_enis: 1,
            ..AwsReplayOptions::default()
        },
    );
    // 29 pods a node at upstream's defaults, 20 with one of the three
    // interfaces kept back: ceil(100 / 29) = 4 nodes, ceil(100 / 20) = 5.
    assert_eq!((nodes(&default), nodes(&reserved)), (4, 5));
}
