//! The controller's Prometheus metrics: a small registry (counters, gauges,
//! histograms in the text exposition format 0.0.4) and [`Metrics`], the
//! families upstream Karpenter exports under the same names.

mod family;
mod registry;
mod text;

use std::sync::Arc;
use std::time::Duration;

pub use family::{Collector, CounterVec, GaugeVec, HistogramVec, MetricType};
pub use registry::{Registry, RegistryError};

/// The `Content-Type` of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Upper bounds, in seconds, of the duration histograms: upstream Karpenter's
/// (controller-runtime's, with longer ones for singleton controllers).
pub const DURATION_BUCKETS: [f64; 45] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0, 120.0, 150.0, 300.0, 450.0, 600.0,
];

/// The `reason` label values upstream Karpenter gives claims it creates and
/// disrupts.
pub mod reason {
    /// Created for pending pods.
    pub const PROVISIONING: &str = "provisioning";
    /// Created or removed by consolidation.
    pub const CONSOLIDATION: &str = "consolidation";
    /// Replaced or removed because it drifted from its NodePool.
    pub const DRIFT: &str = "drift";
    /// Removed because it ran no pods.
    pub const EMPTINESS: &str = "emptiness";
    /// Removed because it outlived its NodePool's `expireAfter`.
    pub const EXPIRATION: &str = "expiration";
}

/// The `controller` label of the scheduling families.
const PROVISIONER: &str = "provisioner";

/// The controller's metrics, shared (behind an `Arc`) by the loops that
/// update them and the server that renders them.
pub struct Metrics {
    registry: Registry,
    claims_created: Arc<CounterVec<2>>,
    claims_terminated: Arc<CounterVec<2>>,
    claims_disrupted: Arc<CounterVec<2>>,
    queue_depth: Arc<GaugeVec<1>>,
    scheduling_duration: Arc<HistogramVec<1>>,
    disruption_evaluation: Arc<HistogramVec<2>>,
    cluster_nodes: Arc<GaugeVec<0>>,
    cluster_synced: Arc<GaugeVec<0>>,
}

/// Registers `family`, returning it for the caller to update. The names
/// here are constants checked by a test; should one ever be refused, the
/// family still counts but is left off `/metrics` (and the error is logged).
fn add<C: Collector + 'static>(registry: &mut Registry, family: C) -> Arc<C> {
    let family = Arc::new(family);
    if let Err(error) = registry.register(family.clone()) {
        tracing::error!(%error, "metric family left unregistered");
    }
    family
}

impl Metrics {
    /// Every family registered, none with a series yet but
    /// `karpenter_build_info`.
    pub fn new() -> Self {
        let mut registry = Registry::new();
        let build_info = add(
            &mut registry,
            GaugeVec::new(
                "karpenter_build_info",
                "Always 1, labeled by the version of karpenter running.",
                ["version"],
            ),
        );
        build_info.set([env!("CARGO_PKG_VERSION")], 1.0);
        let claim_labels = ["nodepool", "reason"];
        Self {
            claims_created: add(
                &mut registry,
                CounterVec::new(
                    "karpenter_nodeclaims_created_total",
                    "NodeClaims created, by NodePool and by why they were created.",
                    claim_labels,
                ),
            ),
            claims_terminated: add(
                &mut registry,
                CounterVec::new(
                    "karpenter_nodeclaims_terminated_total",
                    "NodeClaims terminated, by NodePool and by why they were terminated.",
                    claim_labels,
                ),
            ),
            claims_disrupted: add(
                &mut registry,
                CounterVec::new(
                    "karpenter_nodeclaims_disrupted_total",
                    "NodeClaims disrupted, by NodePool and by disruption reason.",
                    claim_labels,
                ),
            ),
            queue_depth: add(
                &mut registry,
                GaugeVec::new(
                    "karpenter_scheduler_queue_depth",
                    "Pods waiting to be scheduled.",
                    ["controller"],
                ),
            ),
            scheduling_duration: add(
                &mut registry,
                HistogramVec::new(
                    "karpenter_scheduler_scheduling_duration_seconds",
                    "Time taken by scheduling simulations, in seconds.",
                    ["controller"],
                    &DURATION_BUCKETS,
                ),
            ),
            disruption_evaluation: add(
                &mut registry,
                HistogramVec::new(
                    "karpenter_voluntary_disruption_decision_evaluation_duration_seconds",
                    "Time taken to evaluate a disruption decision, in seconds, by disruption \
                     reason and consolidation type.",
                    ["consolidation_type", "reason"],
                    &DURATION_BUCKETS,
                ),
            ),
            cluster_nodes: add(
                &mut registry,
                GaugeVec::new(
                    "karpenter_cluster_state_node_count",
                    "Nodes in the controller's view of the cluster.",
                    [],
                ),
            ),
            cluster_synced: add(
                &mut registry,
                GaugeVec::new(
                    "karpenter_cluster_state_synced",
                    "1 when the controller's view of the cluster has synced with the API \
                     server, else 0.",
                    [],
                ),
            ),
            registry,
        }
    }

    /// A NodeClaim was created in `nodepool`, for `reason` (see [`reason`]).
    pub fn claim_created(&self, nodepool: &str, reason: &str) {
        self.claims_created.inc([nodepool, reason]);
    }

    /// A NodeClaim of `nodepool` was terminated, for `reason`.
    pub fn claim_terminated(&self, nodepool: &str, reason: &str) {
        self.claims_terminated.inc([nodepool, reason]);
    }

    /// A NodeClaim of `nodepool` was disrupted, for `reason`.
    pub fn claim_disrupted(&self, nodepool: &str, reason: &str) {
        self.claims_disrupted.inc([nodepool, reason]);
    }

    /// `pods` pods wait to be scheduled.
    pub fn set_pending_pods(&self, pods: usize) {
        self.queue_depth.set([PROVISIONER], pods as f64);
    }

    /// A provisioning scheduling simulation took `elapsed`.
    pub fn observe_scheduling(&self, elapsed: Duration) {
        self.scheduling_duration
            .observe([PROVISIONER], elapsed.as_secs_f64());
    }

    /// Evaluating a disruption decision for `reason` took `elapsed`;
    /// `consolidation_type` is `single`, `multi`, `empty`, or empty for the
    /// other reasons.
    pub fn observe_disruption_evaluation(
        &self,
        reason: &str,
        consolidation_type: &str,
        elapsed: Duration,
    ) {
        self.disruption_evaluation
            .observe([consolidation_type, reason], elapsed.as_secs_f64());
    }

    /// The controller's view of the cluster holds `nodes` nodes, and has (or
    /// has not) `synced` with the API server.
    pub fn set_cluster_state(&self, nodes: usize, synced: bool) {
        self.cluster_nodes.set([], nodes as f64);
        self.cluster_synced.set([], if synced { 1.0 } else { 0.0 });
    }

    /// The registry, to add families of one's own.
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// Every family in the text exposition format, version 0.0.4 (served
    /// with [`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        self.registry.render()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
