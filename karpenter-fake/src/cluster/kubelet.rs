//! The kubelet's part (and the cloud's, for a node it takes away): Nodes
//! registered for launched claims once the registration delay has passed,
//! conditions set on them, nodes shut down. [`InMemoryCluster::tick`] moves
//! the clock, registers, then lets the scheduler bind.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeSpec, NodeStatus, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use karpenter_core::api::{Condition, NodeClaim, condition_types};
use karpenter_core::scheduling::LABEL_HOSTNAME;

use super::InMemoryCluster;
use super::eviction::evict;
use super::scheduler::bind_nominated;

impl InMemoryCluster {
    /// Sets a condition on a node (a failing kubelet, an interruption
    /// notice), replacing one of the same type.
    pub fn set_node_condition(&self, node: &str, condition: NodeCondition) -> bool {
        let mut objects = self.lock();
        let Some(node) = objects.nodes.get_mut(node) else {
            return false;
        };
        put_condition(Arc::make_mut(node), condition);
        objects.changed();
        true
    }

    /// Shuts a node down, as the cloud does when it takes the instance
    /// away: the Node turns NotReady and its pods stop (a DaemonSet's go,
    /// the others come back pending, as their ReplicaSets recreate them).
    /// Whether there was such a node.
    pub fn shut_down_node(&self, name: &str) -> bool {
        let mut objects = self.lock();
        let now = objects.now;
        let Some(node) = objects.nodes.get_mut(name) else {
            return false;
        };
        put_condition(
            Arc::make_mut(node),
            NodeCondition {
                type_: "Ready".to_owned(),
                status: "False".to_owned(),
                reason: Some("NodeShutdown".to_owned()),
                last_transition_time: Some(Time(now)),
                ..NodeCondition::default()
            },
        );
        evict(&mut objects, name);
        objects.changed();
        true
    }

    /// Moves the cluster to `now`: the kubelet registers the Nodes of claims
    /// launched at least the registration delay ago, then the scheduler binds
    /// nominated pods.
    pub fn tick(&self, now: Timestamp) {
        let mut objects = self.lock();
        objects.now = now;
        let delay =
            SignedDuration::try_from(objects.registration_delay).unwrap_or(SignedDuration::MAX);
        // Only the claims whose Node is not there yet are read: a tick at
        // every step of a long replay would otherwise go through every claim.
        let registered: Vec<(String, Node)> = objects
            .node_claims
            .iter()
            .filter(|(name, _)| !objects.nodes.contains_key(name.as_str()))
            .filter(|(_, c)| c.metadata.deletion_timestamp.is_none())
            .filter(|(_, c)| {
                c.status
                    .as_ref()
                    .and_then(|s| s.provider_id.as_ref())
                    .is_some()
                    && launched_at(c)
                        .is_some_and(|t| t.saturating_add(delay).is_ok_and(|t| t <= now))
            })
            .map(|(name, claim)| (name.clone(), node_for(claim, name, now)))
            .collect();
        let mut changed = !registered.is_empty();
        for (name, node) in registered {
            objects.nodes.insert(name, Arc::new(node));
        }
        changed |= bind_nominated(&mut objects, now);
        // A tick that registers and binds nothing leaves the reads as they
        // were: the revision stays, so that a quiet cluster stays quiet.
        if changed {
            objects.changed();
        }
    }
}

/// Sets a condition on a node, replacing one of the same type.
fn put_condition(node: &mut Node, condition: NodeCondition) {
    let conditions = node
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != condition.type_);
    conditions.push(condition);
}

/// When the claim's instance launched.
fn launched_at(claim: &NodeClaim) -> Option<Timestamp> {
    let launched: &Condition = claim.condition(condition_types::LAUNCHED)?;
    launched.is_true().then_some(())?;
    launched.last_transition_time.as_ref().map(|t| t.0)
}

/// The Node a kubelet registers for the claim: its labels, taints, capacity
/// and provider ID, ready at once.
fn node_for(claim: &NodeClaim, name: &str, now: Timestamp) -> Node {
    let mut labels = claim.metadata.labels.clone().unwrap_or_default();
    labels.insert(LABEL_HOSTNAME.to_owned(), name.to_owned());
    let status = claim.status.clone().unwrap_or_default();
    let mut taints: Vec<Taint> = claim.spec.taints().to_vec();
    taints.extend_from_slice(claim.spec.startup_taints());
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(labels),
            creation_timestamp: Some(Time(now)),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            provider_id: status.provider_id,
            taints: (!taints.is_empty()).then_some(taints),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: status.capacity.map(|q| q.as_map().clone()),
            allocatable: status.allocatable.map(|q| q.as_map().clone()),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".to_owned(),
                status: "True".to_owned(),
                last_transition_time: Some(Time(now)),
                ..NodeCondition::default()
            }]),
            ..NodeStatus::default()
        }),
    }
}
