//! What the replay tests share: a cluster of the replay fixture's
//! instance types with one NodePool, a trace starting on a Monday, feature
//! gates and the totals' disruption counts.

use karpenter::core::features::FeatureGates;
use karpenter::replay::Run;
use karpenter::scenario::{LoadOptions, Scenario, Trace};

/// The fixture's instance types and the Deployments `web` and `api`.
const TYPES: &str = include_str!("../fixtures/replay/types.yaml");

/// A NodePool `default` of these capacity types, with this `disruption`
/// block and `expireAfter`.
pub(crate) fn pool(capacity_types: &str, disruption: &str, expire_after: &str) -> String {
    pool_with_grace(capacity_types, disruption, expire_after, None)
}

/// [`pool`], its claims given `grace` as their `terminationGracePeriod`
/// when there is one.
pub(crate) fn pool_with_grace(
    capacity_types: &str,
    disruption: &str,
    expire_after: &str,
    grace: Option<&str>,
) -> String {
    let grace = grace.map_or(String::new(), |g| {
        format!("      terminationGracePeriod: {g}\n")
    });
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.fake, kind: FakeNodeClass, name: default}}
      requirements:
      - {{key: karpenter.sh/capacity-type, operator: In, values: [{capacity_types}]}}
      expireAfter: {expire_after}
{grace}  disruption:
{disruption}
"#
    )
}

/// The fixture's documents followed by `documents` (a NodePool, say).
pub(crate) fn cluster(documents: &str) -> Scenario {
    let text = format!("{TYPES}---\n{documents}");
    Scenario::from_str("cluster.yaml", &text, &LoadOptions::default()).expect("a cluster")
}

/// A trace starting on Monday 2026-01-05 at midnight with these `events`
/// (YAML list items, indented two spaces).
pub(crate) fn trace(events: &str) -> Trace {
    let text = format!(
        "apiVersion: karpenter.sim/v1alpha1\nkind: Trace\nstart: 2026-01-05T00:00:00Z\nevents:\n{events}"
    );
    Trace::from_str("trace.yaml", &text, &LoadOptions::default()).expect("a trace")
}

/// Upstream's feature gates with `text` (`NodeRepair=true`) applied.
pub(crate) fn gates(text: &str) -> FeatureGates {
    FeatureGates::UPSTREAM.apply(text).expect("gates")
}

/// How many nodes the run disrupted for `reason`.
pub(crate) fn disrupted(run: &Run, reason: &str) -> usize {
    run.totals.disruptions[reason]
}
