//! A scenario at a glance: what was read, which pods wait for capacity and how much
//! they ask for, the NodePools and the nodes they own.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use karpenter_core::api::NodePool;
use karpenter_core::pods::{bound_node, is_daemon_pod, is_pending, is_terminal};
use karpenter_core::resources::{self, ResourceList};
use karpenter_core::scheduling::NODE_POOL_LABEL_KEY;
use serde::Serialize;

use crate::scenario::{Kind, Scenario};

/// What `karpenter-sim summary` prints, as a table or as JSON (field names in
/// camelCase).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Objects read, by kind (only the kinds present).
    pub objects: BTreeMap<String, usize>,
    /// Pods provisioning plans capacity for ([`is_pending`]: not bound, not
    /// preempting, marked unschedulable or written without a status, not
    /// finished nor being deleted, not a DaemonSet's nor a Node's).
    pub pending_pods: usize,
    /// Pods bound to a node (daemon pods included).
    pub bound_pods: usize,
    /// Pods owned by a DaemonSet.
    pub daemon_pods: usize,
    /// Pods in phase Succeeded or Failed.
    pub finished_pods: usize,
    /// What the pending pods request in total, as Kubernetes quantities a person
    /// would write (`16800m`, `66368Mi`).
    pub pending_requests: BTreeMap<String, String>,
    /// Nodes.
    pub nodes: usize,
    /// Nodes with the `karpenter.sh/nodepool` label.
    pub managed_nodes: usize,
    /// NodeClaims without a node yet (no `status.nodeName`).
    pub in_flight_node_claims: usize,
    /// The NodePools, heaviest weight first, then by name.
    pub node_pools: Vec<NodePoolSummary>,
    /// The fake provider's instance types in the input.
    pub instance_types: usize,
    /// Their offerings, and how many of them are available.
    pub offerings: usize,
    /// Available offerings.
    pub available_offerings: usize,
    /// Documents skipped, each with where and why.
    pub warnings: Vec<String>,
}

/// One NodePool in a [`Summary`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolSummary {
    /// `metadata.name`.
    pub name: String,
    /// `spec.weight` (0 when absent).
    pub weight: i32,
    /// How many requirements its template has.
    pub requirements: usize,
    /// How many taints its template has.
    pub taints: usize,
    /// The consolidation policy in effect.
    pub consolidation_policy: String,
    /// The nodes labelled as this pool's.
    pub nodes: usize,
}

impl Summary {
    /// Summarises a scenario that has been validated (a pod whose requests do not
    /// parse counts as requesting nothing).
    pub fn of(scenario: &Scenario) -> Summary {
        let mut objects = BTreeMap::new();
        for kind in Kind::ALL {
            let count = scenario.count(kind);
            if count > 0 {
                objects.insert(kind.name().to_string(), count);
            }
        }
        let mut pending = ResourceList::new();
        let (mut pending_pods, mut bound_pods, mut daemon_pods, mut finished_pods) = (0, 0, 0, 0);
        for pod in scenario.pods.iter().map(|pod| &*pod.object) {
            let daemon = is_daemon_pod(pod);
            daemon_pods += usize::from(daemon);
            if is_terminal(pod) {
                finished_pods += 1;
            } else if bound_node(pod).is_some() {
                bound_pods += 1;
            } else if is_pending(pod) {
                pending_pods += 1;
                if let Some(Ok(requests)) = pod.spec.as_deref().map(resources::pod_requests) {
                    pending += &requests;
                }
            }
        }
        let pool_of = |node: &k8s_openapi::api::core::v1::Node| {
            node.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(NODE_POOL_LABEL_KEY))
                .cloned()
        };
        let mut nodes_per_pool: BTreeMap<String, usize> = BTreeMap::new();
        for pool in scenario.nodes.iter().filter_map(|n| pool_of(n)) {
            *nodes_per_pool.entry(pool).or_default() += 1;
        }
        let mut node_pools: Vec<NodePoolSummary> = scenario
            .node_pools
            .iter()
            .map(|pool| pool_summary(pool, &nodes_per_pool))
            .collect();
        node_pools.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.name.cmp(&b.name)));
        let offerings = scenario.instance_types.iter().flat_map(|it| &it.offerings);
        Summary {
            objects,
            pending_pods,
            bound_pods,
            daemon_pods,
            finished_pods,
            pending_requests: pending
                .iter()
                .map(|(name, milli)| (name.to_string(), resources::format_milli(name, milli)))
                .collect(),
            nodes: scenario.nodes.len(),
            managed_nodes: nodes_per_pool.values().sum(),
            in_flight_node_claims: scenario
                .node_claims
                .iter()
                .filter(|c| {
                    c.status
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_none()
                })
                .count(),
            node_pools,
            instance_types: scenario.instance_types.len(),
            offerings: offerings.clone().count(),
            available_offerings: offerings.filter(|o| o.is_available()).count(),
            warnings: scenario.warnings.iter().map(ToString::to_string).collect(),
        }
    }

    /// The summary as a short table for a person.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{:<22} {:>6}", "KIND", "COUNT");
        for kind in Kind::ALL {
            if let Some(count) = self.objects.get(kind.name()) {
                let _ = writeln!(out, "{:<22} {count:>6}", kind.name());
            }
        }
        let _ = writeln!(
            out,
            "\npods: {} pending, {} bound, {} daemon, {} finished",
            self.pending_pods, self.bound_pods, self.daemon_pods, self.finished_pods
        );
        if !self.pending_requests.is_empty() {
            let requests: Vec<String> = self
                .pending_requests
                .iter()
                .map(|(name, quantity)| format!("{name} {quantity}"))
                .collect();
            let _ = writeln!(out, "pending pods request: {}", requests.join(", "));
        }
        let _ = writeln!(
            out,
            "nodes: {} ({} managed by Karpenter); node claims in flight: {}",
            self.nodes, self.managed_nodes, self.in_flight_node_claims
        );
        if !self.node_pools.is_empty() {
            let _ = writeln!(
                out,
                "\n{:<24} {:>6} {:>12} {:>6} {:<26} {:>5}",
                "NODEPOOL", "WEIGHT", "REQUIREMENTS", "TAINTS", "CONSOLIDATION", "NODES"
            );
            for pool in &self.node_pools {
                let _ = writeln!(
                    out,
                    "{:<24} {:>6} {:>12} {:>6} {:<26} {:>5}",
                    pool.name,
                    pool.weight,
                    pool.requirements,
                    pool.taints,
                    pool.consolidation_policy,
                    pool.nodes
                );
            }
        }
        if self.instance_types > 0 {
            let _ = writeln!(
                out,
                "\ninstance types: {} with {} offerings ({} available)",
                self.instance_types, self.offerings, self.available_offerings
            );
        }
        out
    }
}

fn pool_summary(pool: &NodePool, nodes_per_pool: &BTreeMap<String, usize>) -> NodePoolSummary {
    let name = pool.name().unwrap_or_default().to_string();
    NodePoolSummary {
        nodes: nodes_per_pool.get(&name).copied().unwrap_or(0),
        weight: pool.spec.effective_weight(),
        requirements: pool.spec.template.spec.requirements().len(),
        taints: pool.spec.template.spec.taints().len(),
        consolidation_policy: format!("{:?}", pool.spec.effective_consolidation_policy()),
        name,
    }
}
