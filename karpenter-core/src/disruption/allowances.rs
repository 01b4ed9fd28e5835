//! How many more nodes each NodePool may have disrupted, per reason, as a plan
//! goes: upstream's `BuildDisruptionBudgetMapping`
//! (`pkg/controllers/disruption/helpers.go`), kept up to date as commands take
//! nodes.
//!
//! A pool's budgets are taken over its managed, initialized nodes that are not
//! terminating; nodes already disrupting (not Ready, or being deleted) use up
//! allowance first, and so does every node a command of the plan takes.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use super::budgets::allowed_count;
use crate::api::{DisruptionReason, NodePool};
use crate::snapshot::{ClusterNode, Snapshot};

/// Each pool's node counts and what its budgets allow.
#[derive(Clone, Debug)]
pub(super) struct Allowances<'s> {
    pools: BTreeMap<&'s str, PoolCounts<'s>>,
    now: Timestamp,
}

#[derive(Clone, Debug)]
struct PoolCounts<'s> {
    pool: &'s NodePool,
    /// Managed, initialized, not terminating.
    nodes: u64,
    /// Not Ready or being deleted, and those the plan has taken.
    disrupting: u64,
}

impl<'s> Allowances<'s> {
    /// The counts of `snapshot`'s pools at `now`.
    pub(super) fn new(snapshot: &'s Snapshot, now: Timestamp) -> Allowances<'s> {
        let mut pools: BTreeMap<&'s str, PoolCounts<'s>> = snapshot
            .node_pools
            .iter()
            .filter_map(|pool| {
                let counts = PoolCounts {
                    pool,
                    nodes: 0,
                    disrupting: 0,
                };
                Some((pool.name()?, counts))
            })
            .collect();
        for node in &snapshot.nodes {
            let Some(counts) = node.node_pool().and_then(|p| pools.get_mut(p)) else {
                continue;
            };
            if !node.is_managed() || !node.is_initialized() || node.is_instance_terminating() {
                continue;
            }
            counts.nodes += 1;
            if node.is_marked_for_deletion() || !is_ready(node) {
                counts.disrupting += 1;
            }
        }
        Allowances { pools, now }
    }

    /// Whether one more of `pool`'s nodes may be disrupted for `reason`.
    pub(super) fn admits(&self, pool: &str, reason: DisruptionReason) -> bool {
        let Some(counts) = self.pools.get(pool) else {
            return false;
        };
        allowed_count(counts.pool, reason, self.now, counts.nodes)
            .is_none_or(|allowed| allowed.saturating_sub(counts.disrupting) > 0)
    }

    /// Counts a node of `pool` a command takes.
    pub(super) fn take(&mut self, pool: &str) {
        if let Some(counts) = self.pools.get_mut(pool) {
            counts.disrupting += 1;
        }
    }
}

/// Whether the Node's `Ready` condition is true (a node without a Node object
/// is not ready).
fn is_ready(node: &ClusterNode) -> bool {
    let conditions = node
        .node
        .as_ref()
        .and_then(|n| n.status.as_ref())
        .and_then(|s| s.conditions.as_ref());
    conditions
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}
