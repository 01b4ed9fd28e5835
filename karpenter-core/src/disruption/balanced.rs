//! The `Balanced` consolidation policy, as upstream's `balanced.go`
//! (kubernetes-sigs/karpenter PR #2962, `designs/balanced-consolidation.md`):
//! a move is worth making when the share of its pool's cost it saves is at
//! least half the share of its pool's disruption it causes.
//!
//! For each pool with `consolidationPolicy: Balanced` among a move's
//! candidates:
//!
//! - `savings_fraction` = the move's savings / the pool's total price (every
//!   managed node of the pool, not only candidates);
//! - `disruption_fraction` = the candidates' reschedule disruption cost / the
//!   pool's total (every node's `1 + Σ max(0, eviction cost)` of its
//!   reschedulable pods);
//! - approved when `savings_fraction / disruption_fraction ≥ 1/k`, `k = 2`
//!   (no savings scores 0; no disruption scores infinity).
//!
//! A move across pools splits its savings among them by their share of the
//! candidates' price, and every Balanced pool in it must approve; pools of
//! other policies do not vote. Single-node consolidation first passes over
//! candidates that could not pass even as a pure delete (`CanPassThreshold`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::candidates::{Candidate, node_price};
use crate::api::ConsolidationPolicy;
use crate::pods::bound_node;
use crate::pods::{is_reschedulable, reschedule_disruption_cost};
use crate::snapshot::Snapshot;

/// Upstream's `BalancedK`: a move must save at least 1/k of what it disrupts,
/// in shares of its pool.
pub(super) const BALANCED_K: u32 = 2;

/// A pool's totals the Balanced score divides by.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct PoolTotals {
    /// The price per hour of all its managed nodes.
    pub cost: f64,
    /// The disruption cost of all its nodes.
    pub disruption_cost: f64,
}

/// The Balanced judge of one pass: every pool's totals.
#[derive(Clone, Debug, Default)]
pub(super) struct Balanced {
    totals: BTreeMap<String, PoolTotals>,
}

/// A move's score against its pool: savings fraction over disruption
/// fraction (upstream `ScoreResult.Score`).
pub(super) fn score(savings: f64, disruption_cost: f64, totals: PoolTotals) -> f64 {
    if totals.cost <= 0.0 || totals.disruption_cost <= 0.0 {
        return 0.0;
    }
    let savings_fraction = savings / totals.cost;
    let disruption_fraction = disruption_cost / totals.disruption_cost;
    if savings_fraction <= 0.0 {
        0.0
    } else if disruption_fraction == 0.0 {
        f64::INFINITY
    } else {
        savings_fraction / disruption_fraction
    }
}

/// Whether a score passes the threshold `1/k`.
fn approved(score: f64) -> bool {
    score >= 1.0 / f64::from(BALANCED_K)
}

fn is_balanced(candidate: &Candidate<'_>) -> bool {
    candidate.pool.spec.effective_consolidation_policy() == ConsolidationPolicy::Balanced
}

fn pool_name<'c>(candidate: &Candidate<'c>) -> &'c str {
    candidate.pool.name().unwrap_or_default()
}

impl Balanced {
    /// The totals of every Balanced pool some `candidates` belong to, over
    /// all of the snapshot's nodes; a pool whose nodes have no known price
    /// falls back to its candidates' prices. Pools of other policies have no
    /// vote, so with none Balanced the cluster is not read at all.
    pub(super) fn new(snapshot: &Snapshot, candidates: &[&Candidate<'_>]) -> Balanced {
        let mut totals: BTreeMap<String, PoolTotals> = BTreeMap::new();
        let mut fallback: BTreeMap<&str, f64> = BTreeMap::new();
        for candidate in candidates.iter().filter(|c| is_balanced(c)) {
            totals.entry(pool_name(candidate).to_owned()).or_default();
            *fallback.entry(pool_name(candidate)).or_default() += candidate.price;
        }
        if totals.is_empty() {
            return Balanced { totals };
        }
        let mut reschedulable: BTreeMap<&str, Vec<_>> = BTreeMap::new();
        for pod in snapshot
            .pods
            .iter()
            .map(Arc::as_ref)
            .filter(is_reschedulable)
        {
            if let Some(node) = bound_node(pod) {
                reschedulable.entry(node).or_default().push(pod);
            }
        }
        for node in &snapshot.nodes {
            let Some(entry) = node.node_pool().and_then(|p| totals.get_mut(p)) else {
                continue;
            };
            let pods = reschedulable
                .get(node.name())
                .into_iter()
                .flatten()
                .copied();
            entry.disruption_cost += reschedule_disruption_cost(pods);
            if node.node_claim.is_some() {
                entry.cost += node_price(snapshot, node);
            }
        }
        for (pool, entry) in &mut totals {
            if entry.cost <= 0.0 {
                entry.cost = fallback.get(pool.as_str()).copied().unwrap_or_default();
            }
        }
        Balanced { totals }
    }

    /// A Balanced pool's totals.
    pub(super) fn totals(&self, pool: &str) -> Option<PoolTotals> {
        self.totals.get(pool).copied()
    }

    /// Whether every Balanced pool among `candidates` approves a move that
    /// saves `savings` per hour (upstream `EvaluateBalancedMove`).
    pub(super) fn approves(&self, candidates: &[&Candidate<'_>], savings: f64) -> bool {
        let mut by_pool: BTreeMap<&str, Vec<&Candidate<'_>>> = BTreeMap::new();
        for candidate in candidates {
            by_pool
                .entry(pool_name(candidate))
                .or_default()
                .push(candidate);
        }
        let source: f64 = candidates.iter().map(|c| c.price).sum();
        let several = by_pool.len() > 1;
        by_pool.iter().all(|(pool, members)| {
            if !is_balanced(members[0]) {
                return true;
            }
            let pool_cost: f64 = members.iter().map(|c| c.price).sum();
            let share = if several && source > 0.0 {
                savings * (pool_cost / source)
            } else {
                savings
            };
            let disruption: f64 = members.iter().map(|c| c.reschedule_cost).sum();
            let totals = self.totals(pool).unwrap_or_default();
            approved(score(share, disruption, totals))
        })
    }

    /// Whether the candidate could pass even as a pure delete, its best case
    /// (upstream `CanPassThreshold`); always for pools of other policies.
    pub(super) fn can_pass(&self, candidate: &Candidate<'_>) -> bool {
        if !is_balanced(candidate) {
            return true;
        }
        match self.totals(pool_name(candidate)) {
            Some(totals) if totals.cost > 0.0 => {
                approved(score(candidate.price, candidate.reschedule_cost, totals))
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(cost: f64, disruption_cost: f64) -> PoolTotals {
        PoolTotals {
            cost,
            disruption_cost,
        }
    }

    #[test]
    fn scores_as_upstream() {
        // Saving 10 % of the pool's cost while disrupting 20 % of it scores
        // 0.5: exactly the threshold, approved.
        let pool = totals(10.0, 20.0);
        let at_threshold = score(1.0, 4.0, pool);
        assert!((at_threshold - 0.5).abs() < 1e-12 && approved(at_threshold));
        assert!(!approved(score(1.0, 4.1, pool)));
        assert_eq!(score(0.0, 1.0, pool), 0.0);
        assert_eq!(score(-1.0, 1.0, pool), 0.0);
        assert_eq!(score(1.0, 0.0, pool), f64::INFINITY);
        assert_eq!(score(1.0, 1.0, totals(0.0, 5.0)), 0.0);
    }
}
