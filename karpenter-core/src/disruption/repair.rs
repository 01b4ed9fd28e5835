//! Node repair and interruption, as upstream's node health controller
//! (`pkg/controllers/node/health`): a managed node whose Node has held a
//! condition one of the provider's [`RepairPolicy`]s names (type and status)
//! for longer than the policy's toleration is replaced, forcefully like
//! expiration (budgets and pod protections do not hold it back). A policy
//! marked as an interruption notice (a spot eviction) gives the reason
//! `Interrupted`; any other, `Unhealthy`.
//!
//! As upstream, a pool with more than 20 % of its nodes (rounded up) matching
//! some policy, tolerated or not, is not repaired: so many failing at once
//! points at something replacing nodes will not fix. Its due nodes are
//! reported as blocked.
//!
//! When a node matches several policies, the one whose toleration runs out
//! first decides.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeCondition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::expiration::forceful_command;
use super::options::DisruptionOptions;
use super::plan::{Blocked, Command, CommandReason};
use crate::cloudprovider::RepairPolicy;
use crate::snapshot::{ClusterNode, Snapshot};

/// The share of a pool's nodes that may be unhealthy for repair to go on.
const ALLOWED_UNHEALTHY_PERCENT: u64 = 20;

/// The nodes due for repair at `now`, each with the kind of repair it is due
/// for; and the due nodes of pools too unhealthy to repair.
pub(crate) fn due<'s>(
    snapshot: &'s Snapshot,
    now: Timestamp,
    policies: &[RepairPolicy],
) -> (Vec<(&'s ClusterNode, Repair)>, Vec<Blocked>) {
    let mut due = Vec::new();
    let mut blocked = Vec::new();
    if policies.is_empty() {
        return (due, blocked);
    }
    // Each pool's health, worked out once.
    let mut healthy: BTreeMap<&str, bool> = BTreeMap::new();
    for (node, pool, policy, at) in watched(snapshot, policies) {
        if at > now {
            continue;
        }
        let pool_healthy = *healthy
            .entry(pool)
            .or_insert_with(|| pool_is_healthy(snapshot, pool, policies));
        if pool_healthy {
            due.push((node, Repair::of(policy)));
        } else {
            blocked.push(Blocked {
                node: node.name().to_owned(),
                reason: format!(
                    "node repair is blocked: more than {ALLOWED_UNHEALTHY_PERCENT}% of nodepool {pool:?}'s nodes are unhealthy"
                ),
            });
        }
    }
    (due, blocked)
}

/// The first moment after `now` at which a node [`due`] passes over
/// becomes due (its condition held past the toleration); `None` when none
/// will. The conditions themselves change only with the cluster.
pub(crate) fn next_due(
    snapshot: &Snapshot,
    now: Timestamp,
    policies: &[RepairPolicy],
) -> Option<Timestamp> {
    watched(snapshot, policies)
        .map(|(.., at)| at)
        .filter(|at| *at > now)
        .min()
}

/// The managed nodes of a pool, with a claim and not being deleted, that a
/// policy will find unhealthy: each with its pool, that policy and the
/// moment it is due (past or to come).
fn watched<'s, 'p>(
    snapshot: &'s Snapshot,
    policies: &'p [RepairPolicy],
) -> impl Iterator<Item = (&'s ClusterNode, &'s str, &'p RepairPolicy, Timestamp)> {
    snapshot.nodes.iter().filter_map(move |node| {
        let pool = node.node_pool()?;
        if !node.is_managed() || node.is_deleting() || node.node_claim.is_none() {
            return None;
        }
        let (policy, at) = first_due(node, policies)?;
        Some((node, pool, policy, at))
    })
}

/// Which due nodes a repair command replaces: those whose policy is an
/// interruption notice, or the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Repair {
    /// Nodes given notice (a spot interruption): [`CommandReason::Interrupted`].
    Interrupted,
    /// Nodes failing any other policy: [`CommandReason::Unhealthy`].
    Unhealthy,
}

impl Repair {
    /// What the policy that made a node due says it is.
    fn of(policy: &RepairPolicy) -> Repair {
        if policy.interruption {
            Repair::Interrupted
        } else {
            Repair::Unhealthy
        }
    }

    /// The reason a command of this kind gives.
    fn reason(self) -> CommandReason {
        match self {
            Repair::Interrupted => CommandReason::Interrupted,
            Repair::Unhealthy => CommandReason::Unhealthy,
        }
    }
}

/// The command replacing the due nodes of one kind (by the options' repair
/// policies, its replacements chosen by their packing), if any.
pub(crate) fn repair(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
    kind: Repair,
) -> Option<Command> {
    let (due, _) = due(snapshot, now, options.repair_policies());
    let nodes = due
        .into_iter()
        .filter(|(_, due_for)| *due_for == kind)
        .map(|(node, _)| node)
        .collect();
    forceful_command(snapshot, nodes, kind.reason(), now, options)
}

/// The node's condition of `policy`'s type, when its status is the policy's.
fn matching<'n>(node: &'n ClusterNode, policy: &RepairPolicy) -> Option<&'n NodeCondition> {
    let conditions = node.node.as_ref()?.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| c.type_ == policy.condition_type)
        .filter(|c| c.status == policy.condition_status)
}

/// The matching policy whose toleration runs out first, with when it does
/// (a condition without a transition time has held forever).
fn first_due<'p>(
    node: &ClusterNode,
    policies: &'p [RepairPolicy],
) -> Option<(&'p RepairPolicy, Timestamp)> {
    policies
        .iter()
        .filter_map(|policy| {
            let condition = matching(node, policy)?;
            let since = condition
                .last_transition_time
                .as_ref()
                .map_or(Timestamp::MIN, |t| t.0);
            let toleration =
                SignedDuration::try_from(policy.toleration).unwrap_or(SignedDuration::MAX);
            let at = since.checked_add(toleration).unwrap_or(Timestamp::MAX);
            Some((policy, at))
        })
        .min_by_key(|(_, at)| *at)
}

/// Whether at most 20 % (rounded up) of the pool's nodes match some policy.
fn pool_is_healthy(snapshot: &Snapshot, pool: &str, policies: &[RepairPolicy]) -> bool {
    let nodes: Vec<&ClusterNode> = snapshot
        .nodes
        .iter()
        .filter(|n| n.node.is_some() && n.node_pool() == Some(pool))
        .collect();
    let unhealthy = nodes
        .iter()
        .filter(|n| policies.iter().any(|p| matching(n, p).is_some()))
        .count() as u64;
    let threshold = (nodes.len() as u64 * ALLOWED_UNHEALTHY_PERCENT).div_ceil(100);
    unhealthy <= threshold
}
