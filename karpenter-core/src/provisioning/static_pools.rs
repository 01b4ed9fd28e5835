//! Static NodePools (`spec.replicas`, upstream's `StaticCapacity` feature
//! gate): a pool that holds exactly that many nodes, whatever its pods, as
//! upstream's static provisioning and deprovisioning controllers
//! (`pkg/controllers/static`) hold it.
//!
//! A static pool's claims are counted as upstream's `NodePoolState` counts
//! them: *active* (neither being deleted nor taken by a disruption command),
//! *deleting*, and *taken* (pending disruption).
//!
//! - **Up**: while active and taken claims number fewer than `replicas`, the
//!   pool launches `replicas` − active claims, as many as its `nodes` limit
//!   leaves room for (every claim counts against it). A claim is the pool's
//!   template alone: its requirements and labels, no pods, no daemon
//!   overhead; the cloud launches the cheapest type they allow. A pool being
//!   deleted, or whose `Ready` condition is not true, launches nothing.
//! - **Down**: while active claims outnumber `replicas`, the surplus is
//!   deleted: claims not launched yet (no provider ID) first; then empty
//!   nodes (no pods but DaemonSets', none held by `karpenter.sh/do-not-disrupt`);
//!   then the others, those without a do-not-disrupt pod first, the cheapest
//!   to disrupt first (every pod's eviction cost, times the share of the
//!   node's lifetime left). Ties go by name, where upstream takes its map's
//!   order. A pool being deleted removes nothing here.
//!
//! Pending pods do not wait for the claims launched here within one plan (they
//! are not destinations until they exist), as upstream's provisioner and its
//! static controller run apart.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::instance_types::templates::Template;
use super::plan::{PlannedClaim, StaticRemoval};
use super::scheduler::finalize::template_claim;
use crate::api::{NodePool, condition_types};
use crate::planning::MinValuesPolicy;
use crate::pods::PodInfo;
use crate::pods::{PodFields, disruption_cost, do_not_disrupt, is_daemon_pod, lifetime_remaining};
use crate::snapshot::{ClusterNode, NODES_RESOURCE, Snapshot};

/// What holding the static pools at their replicas takes.
#[derive(Debug, Default)]
pub(crate) struct StaticChanges {
    /// Claims to launch, pool by pool in name order.
    pub launches: Vec<PlannedClaim>,
    /// Claims to delete.
    pub removals: Vec<StaticRemoval>,
}

/// The claims of one pool, by state.
struct Counts<'s> {
    active: Vec<&'s ClusterNode>,
    deleting: usize,
    taken: usize,
}

impl Counts<'_> {
    /// How many there are in each state.
    fn totals(&self) -> StaticCounts {
        StaticCounts {
            active: self.active.len() as i64,
            deleting: self.deleting as i64,
            taken: self.taken as i64,
        }
    }
}

/// How many claims a static pool has in each state, as upstream's
/// `NodePoolState` counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StaticCounts {
    /// Neither being deleted nor taken by a command.
    pub active: i64,
    /// Being deleted.
    pub deleting: i64,
    /// Taken by a disruption command (pending disruption).
    pub taken: i64,
}

impl StaticCounts {
    /// The counts of the pool named `pool` in `snapshot`.
    pub(crate) fn of(snapshot: &Snapshot, pool: &str) -> StaticCounts {
        counts(snapshot, pool).totals()
    }

    /// How many more claims `pool`'s `nodes` limit leaves room for (every
    /// claim counts against it); `i64::MAX` without a limit.
    pub(crate) fn room(&self, pool: &NodePool) -> i64 {
        node_limit(pool).map_or(i64::MAX, |limit| {
            limit - self.active - self.deleting - self.taken
        })
    }
}

/// One claim of the static pool's template, as it launches them (and static
/// drift replaces a node with): `None` when the pool can launch nothing.
pub(crate) fn static_claim(snapshot: &Snapshot, pool: &NodePool) -> Option<PlannedClaim> {
    let types = snapshot.instance_types.get(pool.name()?)?;
    // Upstream's static claims take the template's types as `minValues`
    // leave them, whatever the policy.
    let strict = MinValuesPolicy::Strict;
    let template = Template::new(pool, types, &[], &snapshot.well_known_labels, strict).ok()?;
    template_claim(&template, snapshot.launch_rank)
}

/// What holding every static pool of `snapshot` at its replicas takes at
/// `now` (`None`: every duration-valued do-not-disrupt still holds, and every
/// node has its whole lifetime left).
pub(crate) fn static_changes(snapshot: &Snapshot, now: Option<Timestamp>) -> StaticChanges {
    let mut pools: Vec<&NodePool> = snapshot
        .node_pools
        .iter()
        .filter(|p| p.spec.is_static() && p.metadata.deletion_timestamp.is_none())
        .collect();
    pools.sort_by(|a, b| a.name().cmp(&b.name()));
    let mut changes = StaticChanges::default();
    for pool in pools {
        let name = pool.name().unwrap_or_default();
        let replicas = pool.spec.replicas.unwrap_or(0).max(0);
        let counts = counts(snapshot, name);
        let totals = counts.totals();
        let active = totals.active;
        if active > replicas {
            let surplus = usize::try_from(active - replicas).unwrap_or(usize::MAX);
            changes
                .removals
                .extend(removals(snapshot, name, &counts.active, surplus, now));
        } else if active + totals.taken < replicas {
            let ready = pool
                .condition(condition_types::READY)
                .is_none_or(|c| c.is_true());
            let wanted = replicas - active;
            let room = totals.room(pool);
            let count = wanted.min(room).max(0);
            if ready && count > 0 {
                changes.launches.extend(launches(snapshot, pool, count));
            }
        }
    }
    changes
}

/// The pool's `nodes` limit, if it has one.
pub(crate) fn node_limit(pool: &NodePool) -> Option<i64> {
    let quantity = pool.spec.limits.as_ref()?.get(NODES_RESOURCE)?;
    let milli = crate::resources::milli_value(quantity).ok()?;
    Some(milli / 1000)
}

/// The claims of the pool named `pool`, by state.
fn counts<'s>(snapshot: &'s Snapshot, pool: &str) -> Counts<'s> {
    let mut counts = Counts {
        active: Vec::new(),
        deleting: 0,
        taken: 0,
    };
    for node in &snapshot.nodes {
        if node.node_claim.is_none() || node.node_pool() != Some(pool) {
            continue;
        }
        if node.is_deleting() {
            counts.deleting += 1;
        } else if node.is_marked_for_deletion() {
            counts.taken += 1;
        } else {
            counts.active.push(node);
        }
    }
    counts
}

/// `count` claims of the pool's template, if it can launch any.
fn launches(snapshot: &Snapshot, pool: &NodePool, count: i64) -> Vec<PlannedClaim> {
    let count = usize::try_from(count).unwrap_or(0);
    static_claim(snapshot, pool).map_or_else(Vec::new, |claim| vec![claim; count])
}

/// Which `surplus` of the pool's active claims go, and why.
fn removals(
    snapshot: &Snapshot,
    pool: &str,
    active: &[&ClusterNode],
    surplus: usize,
    now: Option<Timestamp>,
) -> Vec<StaticRemoval> {
    let removal = |node: &ClusterNode, reason: &str| StaticRemoval {
        node_pool: pool.to_owned(),
        node_claim: claim_name(node).to_owned(),
        node: node.node.as_ref().and_then(|n| n.metadata.name.clone()),
        reason: reason.to_owned(),
    };
    let mut by_name: Vec<&ClusterNode> = active.to_vec();
    by_name.sort_by(|a, b| claim_name(a).cmp(claim_name(b)));
    let unlaunched = |node: &ClusterNode| {
        let claim = node.node_claim.as_ref();
        claim
            .and_then(|c| c.status.as_ref())
            .and_then(|s| s.provider_id.as_deref())
            .is_none_or(str::is_empty)
    };
    let mut chosen: Vec<StaticRemoval> = by_name
        .iter()
        .filter(|n| unlaunched(n))
        .take(surplus)
        .map(|n| removal(n, "not launched yet"))
        .collect();
    // The launched ones, with their pods.
    let launched: Vec<(&ClusterNode, Vec<&PodInfo>)> = by_name
        .iter()
        .filter(|n| !unlaunched(n) && n.node.is_some())
        .map(|&n| (n, pods_on(snapshot, n)))
        .collect();
    let holds = |pods: &[&PodInfo]| {
        pods.iter()
            .any(|p| now.is_none_or(|now| do_not_disrupt(*p, now).is_some()))
    };
    let (empty, busy): (Vec<_>, Vec<_>) = launched
        .iter()
        .partition(|(_, pods)| pods.iter().all(|p| is_daemon_pod(*p)) && !holds(pods));
    for (node, _) in empty.iter().take(surplus - chosen.len().min(surplus)) {
        chosen.push(removal(node, "empty"));
    }
    let mut busy: Vec<(&ClusterNode, bool, f64)> = busy
        .iter()
        .map(|(node, pods)| {
            let cost = disruption_cost(pods.iter().copied(), lifetime_left(node, now));
            (*node, holds(pods), cost)
        })
        .collect();
    busy.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.2.total_cmp(&b.2)));
    for (node, _, _) in busy.iter().take(surplus - chosen.len().min(surplus)) {
        chosen.push(removal(node, "the cheapest to disrupt"));
    }
    chosen
}

/// The name of the node's NodeClaim (its own name without one).
pub(crate) fn claim_name(node: &ClusterNode) -> &str {
    node.node_claim
        .as_ref()
        .and_then(|c| c.metadata.name.as_deref())
        .unwrap_or_else(|| node.name())
}

/// Every pod bound to the node, whatever its phase (upstream lists them by
/// `spec.nodeName`).
fn pods_on<'s>(snapshot: &'s Snapshot, node: &ClusterNode) -> Vec<&'s PodInfo> {
    let name = node.name();
    snapshot
        .pods
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| p.node_name() == Some(name))
        .collect()
}

/// The share of the node's lifetime left at `now` (all of it without a
/// clock).
fn lifetime_left(node: &ClusterNode, now: Option<Timestamp>) -> f64 {
    let (Some(now), Some(claim)) = (now, node.node_claim.as_ref()) else {
        return 1.0;
    };
    let Some(created) = claim.metadata.creation_timestamp.as_ref() else {
        return 1.0;
    };
    let age = Duration::try_from(now.duration_since(created.0)).unwrap_or_default();
    lifetime_remaining(age, claim.spec.effective_expire_after())
}

#[cfg(test)]
mod tests;
