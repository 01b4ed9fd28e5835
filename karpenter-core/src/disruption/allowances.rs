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
    /// The counts of `snapshot`'s pools at `now` (a plan's passes take them
    /// from the standings they carry, [`with_totals`](Self::with_totals)).
    #[cfg(test)]
    pub(super) fn new(snapshot: &'s Snapshot, now: Timestamp) -> Allowances<'s> {
        let mut totals = Totals::default();
        for node in &snapshot.nodes {
            totals.add(&standing(node));
        }
        Allowances::with_totals(snapshot, now, &totals)
    }

    /// The counts of `snapshot`'s pools at `now`, from the `totals` of its
    /// nodes' standings.
    pub(super) fn with_totals(
        snapshot: &'s Snapshot,
        now: Timestamp,
        totals: &Totals,
    ) -> Allowances<'s> {
        let pools = snapshot
            .node_pools
            .iter()
            .filter_map(|pool| {
                let name = pool.name()?;
                let (nodes, disrupting) = totals.of(name);
                let counts = PoolCounts {
                    pool,
                    nodes,
                    disrupting,
                };
                Some((name, counts))
            })
            .collect();
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

/// How a node counts toward its pool's budgets: `None` when it does not (not
/// managed, not initialized, or terminating), else its pool's name and
/// whether it is disrupting already (not Ready, or being deleted).
pub(super) type Standing = Option<(Box<str>, bool)>;

/// How `node` counts toward its pool's budgets.
pub(super) fn standing(node: &ClusterNode) -> Standing {
    let pool = node.node_pool()?;
    if !node.is_managed() || !node.is_initialized() || node.is_instance_terminating() {
        return None;
    }
    Some((
        pool.into(),
        node.is_marked_for_deletion() || !is_ready(node),
    ))
}

/// The nodes and the disrupting nodes that count toward each pool's
/// budgets, by pool name, as nodes' standings are added and taken away.
#[derive(Clone, Debug, Default)]
pub(super) struct Totals {
    by_pool: BTreeMap<Box<str>, (u64, u64)>,
}

impl Totals {
    /// Counts a node of this standing.
    pub(super) fn add(&mut self, standing: &Standing) {
        if let Some((pool, disrupting)) = standing {
            let (nodes, disrupted) = self.by_pool.entry(pool.clone()).or_default();
            *nodes += 1;
            *disrupted += u64::from(*disrupting);
        }
    }

    /// Uncounts a node of this standing, counted before.
    pub(super) fn remove(&mut self, standing: &Standing) {
        if let Some((pool, disrupting)) = standing
            && let Some((nodes, disrupted)) = self.by_pool.get_mut(pool)
        {
            *nodes = nodes.saturating_sub(1);
            *disrupted = disrupted.saturating_sub(u64::from(*disrupting));
        }
    }

    /// The nodes and the disrupting nodes of the pool `name`.
    fn of(&self, name: &str) -> (u64, u64) {
        self.by_pool.get(name).copied().unwrap_or_default()
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
