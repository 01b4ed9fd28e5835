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
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::candidates::node_price;
use super::plan::{Command, CommandReason, launch_price};
use super::simulate::simulate_packed;
use crate::api::{NodeClaim, NodePool};
use crate::provisioning::Packing;
use crate::provisioning::round_price;
use crate::snapshot::{ClusterNode, Snapshot};

/// A claim's `expireAfter`: its own (copied from the pool at launch, defaulted
/// by the API server), else its pool's, as the scenario format says; `None`
/// for `Never`.
pub fn expire_after(claim: &NodeClaim, pool: Option<&NodePool>) -> Option<Duration> {
    match (&claim.spec.expire_after, pool) {
        (Some(_), _) | (None, None) => claim.spec.effective_expire_after(),
        (None, Some(pool)) => pool.spec.template.spec.effective_expire_after(),
    }
}

/// When `claim` expires: its creation (else its Node's) plus its
/// [`expire_after`]; `None` when that is `Never` or no creation time is known.
pub fn expires_at(
    node: &ClusterNode,
    claim: &NodeClaim,
    pool: Option<&NodePool>,
) -> Option<Timestamp> {
    let created = claim
        .metadata
        .creation_timestamp
        .as_ref()
        .or(node.node.as_ref()?.metadata.creation_timestamp.as_ref())
        .map(|t| t.0)?;
    let after = SignedDuration::try_from(expire_after(claim, pool)?).ok()?;
    Some(created.checked_add(after).unwrap_or(Timestamp::MAX))
}

/// The command deleting every expired node at `now`, or `None` when nothing
/// has expired.
pub fn expiration(snapshot: &Snapshot, now: Timestamp) -> Option<Command> {
    expiration_packed(snapshot, now, Packing::Upstream)
}

/// [`expiration`], its replacements chosen by `packing`.
pub fn expiration_packed(snapshot: &Snapshot, now: Timestamp, packing: Packing) -> Option<Command> {
    let pool = |name: Option<&str>| {
        snapshot
            .node_pools
            .iter()
            .find(|p| name.is_some_and(|n| p.name() == Some(n)))
    };
    let expired: Vec<&ClusterNode> = snapshot
        .nodes
        .iter()
        .filter(|node| node.is_managed() && !node.is_deleting())
        .filter(|node| {
            let Some(claim) = node.node_claim.as_ref() else {
                return false;
            };
            expires_at(node, claim, pool(node.node_pool())).is_some_and(|at| at <= now)
        })
        .collect();
    forceful_command(snapshot, expired, CommandReason::Expired, now, packing)
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
    packing: Packing,
) -> Option<Command> {
    if nodes.is_empty() {
        return None;
    }
    nodes.sort_by_key(|n| n.name());
    let removed: BTreeSet<&str> = nodes.iter().map(|n| n.name()).collect();
    // The nodes are being deleted: their pods may land anywhere.
    let simulation = simulate_packed(snapshot, &removed, &removed, now, packing);
    let price: f64 = nodes.iter().map(|n| node_price(snapshot, n)).sum();
    let launched = launch_price(&simulation.plan.node_claims);
    Some(Command {
        reason,
        candidates: removed.iter().map(|n| n.to_string()).collect(),
        replacements: simulation.plan.node_claims,
        savings_per_hour: round_price(price - launched),
    })
}
