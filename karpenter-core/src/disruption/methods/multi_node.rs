//! Multi-node consolidation, as upstream's `multinodeconsolidation.go`: the
//! longest prefix of the consolidatable candidates (by savings ratio, each
//! within its pool's `Underutilized` budget, at most 101 tried, as upstream's
//! `maxParallel` of 100 bounds the binary search's last index) that can be
//! deleted, or replaced by one cheaper node, found by binary search over the
//! prefix length, always with at least two nodes.
//!
//! A prefix the `Balanced` policy does not approve counts as unworkable.
//! A replacement whose types include one the candidates already run is kept
//! below that type's price (`filterOutSameInstanceType`): deleting fewer nodes
//! is better than deleting two and launching one like them.

use super::consolidation::{approved, cheaper_replacement, compute};
use super::single_node::consolidatable;
use super::{Method, Pass, in_savings_order};
use crate::api::DisruptionReason;
use crate::disruption::candidates::Candidate;
use crate::disruption::plan::Command;
use crate::provisioning::round_price;

/// The most candidates one command considers, as upstream (`maxParallel`).
const MOST_CANDIDATES: usize = 100;

/// The multi-node consolidation method.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MultiNode;

impl Method for MultiNode {
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command> {
        let mut allowances = pass.allowances.clone();
        let mut within_budget = Vec::new();
        // A pool that refuses one more node refuses every later one: the
        // allowances only shrink.
        let mut refusing: Vec<&str> = Vec::new();
        for candidate in in_savings_order(pass, |c| consolidatable(c, pass)) {
            let pool = candidate.pool.name().unwrap_or_default();
            if refusing.contains(&pool) {
                continue;
            }
            if allowances.admits(pool, DisruptionReason::Underutilized) {
                allowances.take(pool);
                within_budget.push(candidate);
                // The search never reads past the longest prefix it tries.
                if within_budget.len() > MOST_CANDIDATES {
                    break;
                }
            } else {
                refusing.push(pool);
            }
        }
        first_n(pass, &within_budget)
    }
}

/// The command for the longest workable prefix of `candidates`.
fn first_n(pass: &Pass<'_, '_>, candidates: &[&Candidate<'_>]) -> Option<Command> {
    if candidates.len() < 2 {
        return None;
    }
    // Prefixes of `mid + 1` candidates, for `mid` from 1 up to `high`.
    let mut low = 1;
    let mut high = if candidates.len() <= MOST_CANDIDATES {
        candidates.len() - 1
    } else {
        MOST_CANDIDATES
    };
    let workable = |mid: usize| {
        let prefix = &candidates[..=mid];
        compute(pass, prefix)
            .ok()
            .and_then(|command| without_same_types(pass, prefix, command))
            .filter(|command| approved(pass, prefix, command))
    };
    let speculate = rayon::current_num_threads() > 1;
    // The answer for the prefix the search tries next if this one works,
    // found alongside it on another thread.
    let mut ahead: Option<(usize, Option<Command>)> = None;
    let mut best = None;
    while low <= high {
        let mid = (low + high) / 2;
        let command = match ahead.take() {
            Some((known, command)) if known == mid => command,
            _ => {
                // A workable prefix sends the search to a longer one:
                // weigh that one at once, on another thread. A prefix that
                // does not work wastes it; the search, and so the command,
                // are the sequential search's either way.
                let next = (mid + 1 + high) / 2;
                if speculate && mid < high {
                    let (command, longer) = rayon::join(|| workable(mid), || workable(next));
                    ahead = Some((next, longer));
                    command
                } else {
                    workable(mid)
                }
            }
        };
        match command {
            Some(command) => {
                // Upstream keeps the longest workable prefix. A longer M-to-N
                // prefix that saves no more than a shorter one only disrupts
                // more, so it does not displace it.
                let displaces = command.replacements.len() <= 1
                    || best
                        .as_ref()
                        .is_none_or(|b: &Command| command.savings_per_hour > b.savings_per_hour);
                if displaces {
                    best = Some(command);
                }
                low = mid + 1;
            }
            None => high = mid - 1,
        }
    }
    best
}

/// The command with its replacement (if any) kept below the price of any type
/// it shares with the candidates; `None` when no type is left.
fn without_same_types(
    pass: &Pass<'_, '_>,
    candidates: &[&Candidate<'_>],
    mut command: Command,
) -> Option<Command> {
    // Several replacements (M-to-N) are fewer nodes than the candidates
    // already; the rule is upstream's for a single one.
    let [replacement] = command.replacements.as_slice() else {
        return Some(command);
    };
    let limit = replacement
        .instance_types
        .iter()
        .filter_map(|name| {
            let runs = candidates
                .iter()
                .filter(|c| c.instance_type.is_some_and(|t| t.name == name));
            runs.map(|c| c.price).min_by(f64::total_cmp)
        })
        .min_by(f64::total_cmp);
    let Some(limit) = limit else {
        return Some(command);
    };
    let types = pass.snapshot.instance_types.get(&replacement.node_pool)?;
    let kept = cheaper_replacement(replacement, types, limit, pass.snapshot.launch_rank).ok()?;
    let price: f64 = candidates.iter().map(|c| c.price).sum();
    let launched = kept.launch.as_ref()?.price;
    command.savings_per_hour = round_price(price - launched);
    command.replacements = vec![kept];
    Some(command)
}
