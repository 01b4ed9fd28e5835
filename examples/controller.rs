//! A controller built on the library, against the fake cloud and an
//! in-memory cluster: it deploys 400 pods, scales them down to 60, and prints
//! what the driver does as the cluster grows and consolidates.
//!
//! ```text
//! cargo run --example controller
//! ```
//!
//! A real controller differs in two places only: its `CloudProvider` talks to
//! a cloud (see `karpenter-azure`) and its `Cluster` to the Kubernetes API,
//! and it calls `reconcile` on a timer with the wall clock
//! (`tokio::time::interval` and `jiff::Timestamp::now()`). Here time is
//! simulated, ten seconds a step, so the whole run takes a moment. As a real
//! controller should, it plans on tokio's blocking pool (`SpawnBlocking`,
//! karpenter-core's `tokio` feature), so that planning a large cluster does
//! not hold the runtime's thread.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::api::NodePool;
use karpenter_core::cloudprovider::{CloudProvider, InstanceType};
use karpenter_core::driver::{Driver, DriverOptions, Event, SpawnBlocking};
use karpenter_core::pods::{PodKey, bound_node, is_daemon_pod, is_terminal, pod_key};
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::InMemoryCluster;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::diverse_pods;

const STEP: SignedDuration = SignedDuration::from_secs(10);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let outcome = scale(400, 60, true).await?;
    println!(
        "\nnodes: {} for 400 pods, {} for 60; {} pods pending",
        outcome.nodes_up, outcome.nodes_down, outcome.pending
    );
    Ok(())
}

/// How the cluster stood after scaling up and after scaling down.
#[derive(Debug)]
struct Outcome {
    nodes_up: usize,
    nodes_down: usize,
    pending: usize,
}

/// Deploys `pods` pods, lets the driver settle, keeps `keep` of them, lets
/// it settle again; prints progress when `print`.
async fn scale(
    pods: usize,
    keep: usize,
    print: bool,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let catalog = sized_instance_types(32);
    let prices = price_list(&catalog);
    let provider = Arc::new(FakeCloudProvider::new(catalog));
    let cluster = Arc::new(InMemoryCluster::new());
    cluster.apply_node_pool(serde_json::from_value::<NodePool>(serde_json::json!({
        "metadata": {"name": "general"},
        "spec": {
            "template": {"spec": {
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                ],
                "expireAfter": "Never",
                "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            }},
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "30s",
                "budgets": [{"nodes": "20%"}],
            },
        },
    }))?);
    let mut run = Run {
        driver: Driver::new(provider.clone(), cluster.clone())
            .with_options(DriverOptions::default().with_planning_runner(SpawnBlocking)),
        cluster: cluster.clone(),
        provider: provider.clone(),
        prices,
        start: "2026-06-01T08:00:00Z".parse()?,
        now: "2026-06-01T08:00:00Z".parse()?,
        print,
    };

    run.say(&format!("deploying {pods} pods"));
    let deployed = diverse_pods(pods, 1);
    let keys: Vec<PodKey> = deployed.iter().map(pod_key).collect();
    for pod in deployed {
        cluster.apply_pod(pod);
    }
    run.until_quiet().await?;
    let nodes_up = provider.list().await?.len();

    run.say(&format!("\nscaling down to {keep} pods"));
    for key in keys.iter().skip(keep) {
        cluster.delete_pod(key);
    }
    run.until_quiet().await?;
    Ok(Outcome {
        nodes_up,
        nodes_down: provider.list().await?.len(),
        pending: cluster.pod_list().iter().filter(|p| waiting(p)).count(),
    })
}

/// Whether the pod waits for a node (what `kubectl` shows as `Pending`): not
/// bound, not finished, not a DaemonSet's. Pods the driver nominated to a node
/// still launching count until they are bound there, which
/// `pods::is_pending` leaves out: they need no more capacity.
fn waiting(pod: &Pod) -> bool {
    bound_node(pod).is_none() && !is_terminal(pod) && !is_daemon_pod(pod)
}

/// The controller's parts, simulated time, and whether to print.
struct Run {
    driver: Driver,
    cluster: Arc<InMemoryCluster>,
    provider: Arc<FakeCloudProvider>,
    prices: BTreeMap<String, f64>,
    start: Timestamp,
    now: Timestamp,
    print: bool,
}

impl Run {
    fn say(&self, line: &str) {
        if self.print {
            println!("{line}");
        }
    }

    /// Reconciles every step until five steps in a row do nothing, printing
    /// a line for each step that did something.
    async fn until_quiet(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let mut quiet = 0;
        while quiet < 5 {
            self.now += STEP;
            let report = self.driver.reconcile(self.now).await?;
            self.cluster.tick(self.now);
            if report.is_empty() {
                quiet += 1;
                continue;
            }
            quiet = 0;
            if !self.print {
                continue;
            }
            let pods = self.cluster.pod_list();
            let pending = pods.iter().filter(|p| waiting(p)).count();
            let instances = self.provider.list().await?;
            let cost: f64 = instances
                .iter()
                .filter_map(|i| {
                    let labels = i.metadata.labels.as_ref()?;
                    self.prices
                        .get(labels.get("node.kubernetes.io/instance-type")?)
                })
                .sum();
            let elapsed = self.now.duration_since(self.start).as_secs();
            println!(
                "t={elapsed:>4}s  pods {:>3} ({pending:>3} pending)  nodes {:>3}  ${cost:>6.2}/h  {}",
                pods.len(),
                instances.len(),
                summary(&report.events)
            );
            for event in &report.events {
                if matches!(
                    event,
                    Event::CommandStarted { .. }
                        | Event::CommandAborted { .. }
                        | Event::OfferingsUnavailable { .. }
                ) {
                    println!("        {event}");
                }
            }
        }
        Ok(())
    }
}

/// How many events of each kind, in a few words.
fn summary(events: &[Event]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for event in events {
        let kind = match event {
            Event::ClaimCreated { .. } => "created",
            Event::Launched { .. } => "launched",
            Event::Registered { .. } => "registered",
            Event::Initialized { .. } => "initialized",
            Event::PodsNominated { .. } => "nominations",
            Event::CommandStarted { .. } => "commands",
            Event::CandidatesDeleted { .. } => "draining",
            Event::Terminated { .. } => "terminated",
            Event::CommandCompleted { .. } => "completed",
            _ => "other",
        };
        *counts.entry(kind).or_default() += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    parts.join(", ")
}

/// The on-demand price of each type (the pool launches on-demand only).
fn price_list(catalog: &[InstanceType]) -> BTreeMap<String, f64> {
    catalog
        .iter()
        .filter_map(|t| {
            let offering = t
                .offerings
                .iter()
                .find(|o| o.capacity_type == "on-demand")?;
            Some((t.name.clone(), offering.price))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// The example, smaller: the cluster grows for the pods and shrinks
    /// after them.
    #[tokio::test(flavor = "current_thread")]
    async fn scales_up_and_down() {
        let outcome = super::scale(100, 10, false).await.expect("the run");
        assert_eq!(outcome.pending, 0);
        // One node per pod with hostname anti-affinity at least (1 in 5).
        assert!(outcome.nodes_up >= 20, "{outcome:?}");
        assert!(outcome.nodes_down < outcome.nodes_up / 2, "{outcome:?}");
    }
}
