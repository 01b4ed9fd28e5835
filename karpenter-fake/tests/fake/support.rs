//! A cluster, a cloud and a driver stepped together, checking after every
//! step what must always hold: no node over-committed, no instance without
//! its claim (nor a launched claim without its instance), no evicted pod left
//! without capacity, no pool disrupting more nodes than its budget allows.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::CloudProvider;
use karpenter_core::driver::{Driver, DriverOptions, Event, PlanningRunner, Report, SpawnBlocking};
use karpenter_core::pods::{PodKey, bound_node, is_daemon_pod, is_terminal, pod_key};
use karpenter_core::resources::{ResourceList, pod_requests};
use karpenter_core::scheduling::{DISRUPTED_TAINT_KEY, NODE_POOL_LABEL_KEY};
use karpenter_fake::InMemoryCluster;

/// Seconds between steps.
pub(crate) const STEP: i64 = 10;

pub(crate) struct World {
    /// What the driver talks to.
    pub provider: Arc<dyn CloudProvider>,
    /// The cloud as it is (the provider without its faults), for the checks.
    pub truth: Arc<dyn CloudProvider>,
    pub cluster: Arc<InMemoryCluster>,
    pub driver: Driver,
    pub now: Timestamp,
    pub step: usize,
    /// Every event so far, with the step it came in.
    pub events: Vec<(usize, Event)>,
    /// The errors of passes that failed.
    pub failed_passes: Vec<String>,
    /// Pods that were bound and are not now: since which step.
    evicted: BTreeMap<PodKey, usize>,
    bound_before: BTreeSet<PodKey>,
    options: DriverOptions,
}

impl World {
    pub(crate) fn new(provider: Arc<dyn CloudProvider>, options: DriverOptions) -> World {
        Self::with_faults(provider.clone(), provider, options)
    }

    /// A world whose driver talks to `provider`, a faulty view of `truth`.
    /// The driver plans on tokio's blocking pool, as a tokio embedder's would.
    pub(crate) fn with_faults(
        provider: Arc<dyn CloudProvider>,
        truth: Arc<dyn CloudProvider>,
        options: DriverOptions,
    ) -> World {
        let options = options.with_planning_runner(SpawnBlocking);
        let cluster =
            Arc::new(InMemoryCluster::new().with_registration_delay(Duration::from_secs(45)));
        let driver = Driver::new(provider.clone(), cluster.clone()).with_options(options.clone());
        World {
            provider,
            truth,
            cluster,
            driver,
            now: "2026-06-01T08:00:00Z".parse().expect("a time"),
            step: 0,
            events: Vec::new(),
            failed_passes: Vec::new(),
            evicted: BTreeMap::new(),
            bound_before: BTreeSet::new(),
            options,
        }
    }

    pub(crate) fn add_pool(&self, pool: serde_json::Value) {
        let pool: NodePool = serde_json::from_value(pool).expect("a NodePool");
        self.cluster.apply_node_pool(pool);
    }

    pub(crate) fn add_pods(&self, pods: impl IntoIterator<Item = Pod>) {
        for pod in pods {
            self.cluster.apply_pod(pod);
        }
    }

    /// This world with its driver planning on `runner`.
    pub(crate) fn planning_on(mut self, runner: impl PlanningRunner + 'static) -> World {
        self.options = self.options.clone().with_planning_runner(runner);
        self.restart_driver();
        self
    }

    /// The driver as it would be after a restart: a new one, same options.
    pub(crate) fn restart_driver(&mut self) {
        self.driver = Driver::new(self.provider.clone(), self.cluster.clone())
            .with_options(self.options.clone());
    }

    /// One step: the driver reconciles, the cluster moves on, the invariants
    /// are checked.
    pub(crate) async fn step(&mut self) -> Report {
        self.step += 1;
        self.now += jiff::SignedDuration::from_secs(STEP);
        // A failed pass is what a controller logs and retries.
        let report = match self.driver.reconcile(self.now).await {
            Ok(report) => report,
            Err(error) => {
                self.failed_passes.push(error.to_string());
                Report::default()
            }
        };
        self.cluster.tick(self.now);
        for event in &report.events {
            self.events.push((self.step, event.clone()));
        }
        self.check().await;
        report
    }

    /// Steps until `done` holds, at most `max` steps; returns the steps taken.
    pub(crate) async fn run_until(&mut self, max: usize, done: impl Fn(&World) -> bool) -> usize {
        for taken in 1..=max {
            self.step().await;
            if done(self) {
                return taken;
            }
        }
        panic!(
            "not done after {max} steps; last events: {:#?}",
            self.events.iter().rev().take(20).collect::<Vec<_>>()
        );
    }

    /// Pods waiting for a node: not bound, not finished, not being deleted,
    /// not a DaemonSet's; pending, or nominated to a node and not bound yet.
    pub(crate) fn pending(&self) -> usize {
        self.cluster
            .pod_list()
            .iter()
            .filter(|p| {
                bound_node(p).is_none()
                    && !is_terminal(p)
                    && p.metadata.deletion_timestamp.is_none()
                    && !is_daemon_pod(p)
            })
            .count()
    }

    /// The names of every NodeClaim, in name order.
    pub(crate) fn claim_names(&self) -> Vec<String> {
        self.cluster
            .node_claim_list()
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    }

    /// Managed nodes (claims not being deleted).
    pub(crate) fn claims(&self) -> usize {
        self.cluster
            .node_claim_list()
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .count()
    }

    /// Whether nothing is moving: no pending pod, every claim initialized and
    /// not being deleted, no command under way or held for its check, and a
    /// reconcile changes nothing.
    pub(crate) fn settled(&self) -> bool {
        let claims = self.cluster.node_claim_list();
        self.pending() == 0
            && self.driver.held_until().is_none()
            && claims.iter().all(|c| {
                c.metadata.deletion_timestamp.is_none()
                    && c.condition("Initialized").is_some_and(|c| c.is_true())
                    && !c.metadata.annotations.as_ref().is_some_and(|a| {
                        a.contains_key(karpenter_core::driver::COMMAND_ANNOTATION)
                            || a.contains_key(karpenter_core::driver::REPLACES_ANNOTATION)
                    })
            })
    }

    pub(crate) fn unavailable_is_empty(&self) -> bool {
        self.driver.unavailable_offerings().is_empty()
    }

    pub(crate) fn count(&self, pick: impl Fn(&Event) -> bool) -> usize {
        self.events.iter().filter(|(_, e)| pick(e)).count()
    }

    /// The hourly price of what runs, from the instances' offerings.
    pub(crate) async fn price(&self, prices: &BTreeMap<(String, String, String), f64>) -> f64 {
        let instances = self.truth.list().await.expect("a list");
        instances
            .iter()
            .map(|i| {
                let labels = i.metadata.labels.clone().unwrap_or_default();
                let key = |k: &str| labels.get(k).cloned().unwrap_or_default();
                prices
                    .get(&(
                        key("node.kubernetes.io/instance-type"),
                        key("topology.kubernetes.io/zone"),
                        key("karpenter.sh/capacity-type"),
                    ))
                    .copied()
                    .unwrap_or(0.0)
            })
            .sum()
    }

    /// Checks what must hold after every step (see the module's doc).
    async fn check(&mut self) {
        let pods = self.cluster.pod_list();
        let nodes = self.cluster.node_list();
        let claims = self.cluster.node_claim_list();
        self.check_nodes_hold_their_pods(&pods, &nodes);
        self.check_cloud_and_cluster_agree(&claims).await;
        self.check_evicted_pods_find_capacity(&pods);
        self.check_budgets(&nodes).await;
    }

    /// No node over-committed, no pod bound to a node that is not there.
    fn check_nodes_hold_their_pods(&self, pods: &[Pod], nodes: &[Node]) {
        // No node over-committed.
        let mut used: BTreeMap<&str, ResourceList> = BTreeMap::new();
        for pod in pods {
            if let Some(node) = bound_node(pod) {
                let asks = pod_requests(pod.spec.as_ref().expect("a spec")).expect("requests");
                let entry = used.entry(node).or_default();
                *entry = entry.checked_add(&asks).expect("no overflow");
            }
        }
        for node in nodes {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            let allocatable = node
                .status
                .as_ref()
                .and_then(|s| s.allocatable.as_ref())
                .map(|a| ResourceList::from_quantities(a).expect("quantities"))
                .unwrap_or_default();
            if let Some(used) = used.get(name) {
                assert!(
                    used.fits(&allocatable),
                    "step {}: node {name} over-committed",
                    self.step
                );
            }
        }
        let node_names: BTreeSet<&str> = nodes
            .iter()
            .filter_map(|n| n.metadata.name.as_deref())
            .collect();
        for pod in pods {
            if let Some(node) = bound_node(pod) {
                assert!(
                    node_names.contains(node),
                    "step {}: pod bound to missing node {node}",
                    self.step
                );
            }
        }
    }

    /// Every instance has its claim, every launched claim its instance.
    async fn check_cloud_and_cluster_agree(&self, claims: &[NodeClaim]) {
        let running = self.truth.list().await.expect("a list");
        let instances: BTreeSet<String> = running
            .iter()
            .filter_map(|i| i.status.as_ref()?.provider_id.clone())
            .collect();
        let claimed: BTreeSet<String> = claims
            .iter()
            .filter_map(|c| c.status.as_ref()?.provider_id.clone())
            .collect();
        let unlaunched: BTreeSet<&str> = claims
            .iter()
            .filter(|c| {
                c.status
                    .as_ref()
                    .and_then(|s| s.provider_id.as_ref())
                    .is_none()
            })
            .filter_map(|c| c.metadata.name.as_deref())
            .collect();
        // An instance whose launch answer was lost belongs to the claim of
        // its name, while that claim has no instance, until the driver adopts
        // it.
        let orphans: Vec<&String> = running
            .iter()
            .filter(|i| {
                !i.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| unlaunched.contains(n))
            })
            .filter_map(|i| i.status.as_ref()?.provider_id.as_ref())
            .filter(|id| !claimed.contains(*id))
            .collect();
        assert!(
            orphans.is_empty(),
            "step {}: orphaned instances {orphans:?}",
            self.step
        );
        let lost: Vec<&String> = claims
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter_map(|c| c.status.as_ref()?.provider_id.as_ref())
            .filter(|id| !instances.contains(*id))
            .collect();
        assert!(
            lost.is_empty(),
            "step {}: claims without instances {lost:?}",
            self.step
        );
    }

    /// An evicted pod is bound again by the end of the next step.
    fn check_evicted_pods_find_capacity(&mut self, pods: &[Pod]) {
        // A pod taken off its node finds capacity at once: it is bound again
        // by the end of the next step. Not a pod `karpenter.sh/do-not-disrupt`
        // kept on its node until the node's grace period ended: as upstream,
        // no capacity is planned for such a pod before it leaves
        // (`CurrentlyReschedulablePods` leaves it out).
        let bound_now: BTreeSet<PodKey> = pods
            .iter()
            .filter(|p| bound_node(p).is_some())
            .map(pod_key)
            .collect();
        let guarded = |p: &&Pod| {
            p.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("karpenter.sh/do-not-disrupt"))
        };
        let exists: BTreeSet<PodKey> = pods.iter().filter(|p| !guarded(p)).map(pod_key).collect();
        for pod in self.bound_before.difference(&bound_now) {
            if exists.contains(pod) {
                self.evicted.entry(pod.clone()).or_insert(self.step);
            }
        }
        self.evicted
            .retain(|pod, _| !bound_now.contains(pod) && exists.contains(pod));
        let stranded: Vec<&PodKey> = self
            .evicted
            .iter()
            .filter(|(_, since)| self.step > **since + 1)
            .map(|(pod, _)| pod)
            .collect();
        assert!(
            stranded.is_empty(),
            "step {}: evicted pods lost their capacity: {stranded:?}",
            self.step
        );
        self.bound_before = bound_now;
    }

    /// No pool disrupts more nodes than its budget allows.
    async fn check_budgets(&self, nodes: &[Node]) {
        for pool in self.cluster_pools().await {
            let name = pool.metadata.name.clone().unwrap_or_default();
            let Some(allowed) = fixed_budget(&pool) else {
                continue;
            };
            let disrupting = nodes
                .iter()
                .filter(|n| {
                    n.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(NODE_POOL_LABEL_KEY))
                        == Some(&name)
                })
                .filter(|n| {
                    let tainted = n
                        .spec
                        .as_ref()
                        .and_then(|s| s.taints.as_ref())
                        .is_some_and(|t| t.iter().any(|t| t.key == DISRUPTED_TAINT_KEY));
                    tainted || n.metadata.deletion_timestamp.is_some()
                })
                .count();
            assert!(
                disrupting <= allowed,
                "step {}: pool {name} disrupts {disrupting} nodes, budget {allowed}",
                self.step
            );
        }
    }

    async fn cluster_pools(&self) -> Vec<NodePool> {
        use karpenter_core::cluster::Cluster as _;
        self.cluster.node_pools().await.expect("pools")
    }
}

/// A pool's budget when it is one fixed number of nodes.
fn fixed_budget(pool: &NodePool) -> Option<usize> {
    let budgets = pool.spec.disruption.as_ref()?.budgets.as_ref()?;
    budgets
        .iter()
        .filter_map(|b| b.nodes.as_deref()?.parse::<usize>().ok())
        .min()
}

/// A NodePool of the fake node class with this budget (a number of nodes).
pub(crate) fn pool(name: &str, budget: &str, requirements: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "metadata": {"name": name},
        "spec": {
            "template": {"spec": {
                "requirements": requirements,
                "expireAfter": "Never",
                "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            }},
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": budget}],
            },
        },
    })
}

/// Pods of 1 to 3 cpu spread over zones, settled on the cloud.
pub(crate) async fn settled_world(
    provider: Arc<karpenter_fake::FakeCloudProvider>,
    budget: &str,
    pods: usize,
) -> World {
    settled_world_with(provider, budget, pods, DriverOptions::default()).await
}

/// [`settled_world`] with a driver of these options.
pub(crate) async fn settled_world_with(
    provider: Arc<karpenter_fake::FakeCloudProvider>,
    budget: &str,
    pods: usize,
    options: DriverOptions,
) -> World {
    let mut world = World::new(provider, options);
    world.add_pool(pool("default", budget, serde_json::json!([])));
    let pods: Vec<_> = (0..pods)
        .map(|i| {
            let cpu = ["1", "2", "3"][i % 3];
            karpenter_fake::generate::workload::pending_pod(
                &format!("app-{i}"),
                karpenter_fake::generate::workload::Shape::ZonalSpread,
                cpu,
                "1Gi",
            )
        })
        .collect();
    world.add_pods(pods);
    world.run_until(60, |w| w.settled()).await;
    world
}

pub(crate) fn provider_ids(world: &World) -> Vec<String> {
    world
        .cluster
        .node_claim_list()
        .iter()
        .filter_map(|c| c.status.as_ref()?.provider_id.clone())
        .collect()
}

/// Whether any node carries the disrupted taint.
pub(crate) fn any_tainted(world: &World) -> bool {
    world.cluster.node_list().iter().any(|n| {
        n.spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|t| t.iter().any(|t| t.key == DISRUPTED_TAINT_KEY))
    })
}
