//! Expiration, as upstream's `nodeclaim/expiration` controller: a managed
//! NodeClaim not being deleted whose `expireAfter` has passed since its
//! creation is deleted, whatever budgets, `karpenter.sh/do-not-disrupt` or
//! PodDisruptionBudgets say (its drain honours them until the claim's
//! `terminationGracePeriod`). Expiration is forceful: it is not one of the
//! methods' passes, and it comes first in a plan.
//!
//! The plan states it as one command for all expired nodes, whose
//! replacements are the claims their pods would need (one simulation with all
//! of them gone), so the nodes' price and their replacements' can be set side
//! by side.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;

use super::candidates::{expires_at, node_price};
use super::options::DisruptionOptions;
use super::plan::{Command, CommandReason, launch_price};
use super::simulate::simulate;
use crate::provisioning::round_price;
use crate::snapshot::{ClusterNode, Snapshot};

/// The command deleting every expired node at `now`, its replacements chosen
/// by the options' packing, or `None` when nothing has expired.
pub(crate) fn expiration(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> Option<Command> {
    let expired: Vec<&ClusterNode> = expiries(snapshot)
        .filter(|(_, at)| *at <= now)
        .map(|(node, _)| node)
        .collect();
    forceful_command(snapshot, expired, CommandReason::Expired, now, options)
}

/// The first moment after `now` at which some node [`expiration`] reads
/// expires; `None` when none will.
pub(super) fn next_expiry(snapshot: &Snapshot, now: Timestamp) -> Option<Timestamp> {
    expiries(snapshot)
        .map(|(_, at)| at)
        .filter(|at| *at > now)
        .min()
}

/// The managed nodes not being deleted that expire, each with when.
fn expiries(snapshot: &Snapshot) -> impl Iterator<Item = (&ClusterNode, Timestamp)> {
    let pool = |name: Option<&str>| {
        snapshot
            .node_pools
            .iter()
            .find(|p| name.is_some_and(|n| p.name() == Some(n)))
    };
    snapshot
        .nodes
        .iter()
        .filter(|node| node.is_managed() && !node.is_deleting())
        .filter_map(move |node| {
            let at = expires_at(node, node.node_claim.as_ref()?, pool(node.node_pool()))?;
            Some((node, at))
        })
}

/// The command deleting `nodes` whatever budgets and their pods' protections
/// say (expiration, repair, interruption), with the claims their pods would
/// need (one simulation with all of them gone, every one of them exempt from
/// the `consolidateAfter` fence); `None` when there is no node.
pub(crate) fn forceful_command(
    snapshot: &Snapshot,
    mut nodes: Vec<&ClusterNode>,
    reason: CommandReason,
    now: Timestamp,
    options: &DisruptionOptions,
) -> Option<Command> {
    if nodes.is_empty() {
        return None;
    }
    nodes.sort_by_key(|n| n.name());
    let removed: BTreeSet<&str> = nodes.iter().map(|n| n.name()).collect();
    // The nodes are being deleted: their pods may land anywhere.
    let simulation = simulate(snapshot, &removed, &removed, now, options.planning);
    let price: f64 = nodes.iter().map(|n| node_price(snapshot, n)).sum();
    let launched = launch_price(&simulation.plan.node_claims);
    Some(Command {
        reason,
        candidates: removed.iter().map(|n| n.to_string()).collect(),
        replacements: simulation.plan.node_claims,
        savings_per_hour: round_price(price - launched),
        drift: Vec::new(),
    })
}
