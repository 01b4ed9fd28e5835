//! Single-node consolidation, as upstream's `singlenodeconsolidation.go`: walk
//! the consolidatable candidates, highest price per unit of disruption first,
//! and return the first that can be deleted or replaced by one cheaper node,
//! within its pool's `Underutilized` budget.
//!
//! A candidate qualifies when its pool is not static and its policy is not
//! `WhenEmpty`, its instance type, zone and capacity type are known, its
//! `consolidateAfter` has passed, and it is not empty (emptiness takes those).
//! Under the `Balanced` policy a candidate that could not pass even as a
//! delete is passed over, and a command the policy does not approve is not
//! taken. As upstream, NodePools are interleaved round-robin (each pool's best
//! candidate, in the order the pools' best ones come, then each pool's second,
//! and so on; ties by name); upstream also stops after three minutes and starts
//! with the pools it did not reach next time, which a plan, without a wall
//! clock, does not.
//!
//! Each candidate it evaluates and cannot consolidate is refused with an
//! [`Unconsolidatable`] reason (upstream publishes it as an event); the
//! refusals of a pass are what [`first_command_explained`] reports. A
//! candidate its pool's budget holds back is not evaluated, as upstream; one
//! the Balanced policy passes over without simulating is refused as
//! [`NotWorthDisruption`](Unconsolidatable::NotWorthDisruption), which
//! upstream only counts in a metric.
//!
//! [`first_command_explained`]: crate::disruption::first_command_explained

use rayon::prelude::*;

use super::consolidation::{approved, compute};
use super::{Method, Pass, by_savings_ratio};
use crate::api::{ConsolidationPolicy, DisruptionReason};
use crate::disruption::candidates::Candidate;
use crate::disruption::plan::Command;
use crate::disruption::unconsolidatable::Unconsolidatable;

/// The most candidates weighed at once (see
/// [`SingleNode::next_command_noting`]).
const BATCH: usize = 8;

/// A candidate single-node consolidation evaluated and refused, by name, with
/// why.
pub(crate) type Refusal = (String, Unconsolidatable);

/// The single-node consolidation method.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SingleNode;

/// Whether consolidation may consider the candidate (budgets aside).
pub(crate) fn consolidatable(candidate: &Candidate<'_>, pass: &Pass<'_, '_>) -> bool {
    let spec = &candidate.pool.spec;
    !spec.is_static()
        && spec.effective_consolidation_policy() != ConsolidationPolicy::WhenEmpty
        && candidate.instance_type.is_some()
        && candidate.zone.is_some()
        && candidate.capacity_type.is_some()
        && candidate.is_consolidatable(pass.now)
        && !candidate.is_empty()
}

impl SingleNode {
    /// What this method would do with each candidate it considers, in the
    /// order it tries them, budgets aside: the command deleting or replacing
    /// the node, or why it cannot go. Upstream stops at the first
    /// command; a capacity planner asking which nodes are worth
    /// consolidating wants every answer.
    pub(crate) fn every_option(
        &self,
        pass: &Pass<'_, '_>,
    ) -> Vec<(String, Result<Command, Unconsolidatable>)> {
        // Each candidate weighed on its own, on the pool's threads; gathered
        // in the order tried.
        interleaved(by_savings_ratio(pass, |c| consolidatable(c, pass)))
            .into_par_iter()
            .map(|candidate| (candidate.name.to_owned(), option(pass, candidate)))
            .collect()
    }

    /// The command of this pass ([`Method::next_command`]), with each
    /// candidate evaluated before it (or all of them, when none gives a
    /// command) and refused pushed to `refused`, in the order tried. A
    /// candidate its pool's budget holds back is not evaluated.
    pub(crate) fn next_command_noting(
        &self,
        pass: &Pass<'_, '_>,
        refused: &mut Vec<Refusal>,
    ) -> Option<Command> {
        let ordered: Vec<&Candidate<'_>> =
            interleaved(by_savings_ratio(pass, |c| consolidatable(c, pass)))
                .into_iter()
                .filter(|c| {
                    let pool = c.pool.name().unwrap_or_default();
                    pass.allowances
                        .admits(pool, DisruptionReason::Underutilized)
                })
                .collect();
        // Candidates are weighed a batch at a time, the batch's on the pool's
        // threads at once, and read in order: the command is the first the
        // sequential walk would find, the refusals those it would note before
        // it. A batch is small (two per thread, at most `BATCH`), so little
        // is weighed past the command, and the pass still remembers the
        // command's simulation (it keeps the latest sixteen).
        let batch = (2 * rayon::current_num_threads()).clamp(1, BATCH);
        for chunk in ordered.chunks(batch) {
            let options: Vec<_> = chunk
                .par_iter()
                .map(|candidate| option(pass, candidate))
                .collect();
            for (candidate, option) in chunk.iter().zip(options) {
                match option {
                    Ok(command) => return Some(command),
                    Err(why) => refused.push((candidate.name.to_owned(), why)),
                }
            }
        }
        None
    }
}

/// The candidates (sorted) interleaved by NodePool (see the module
/// documentation).
fn interleaved<'c, 's>(sorted: Vec<&'c Candidate<'s>>) -> Vec<&'c Candidate<'s>> {
    interleave(sorted, |c| c.pool.name().unwrap_or_default())
}

/// `sorted` interleaved by `group`: the first of each group in the order the
/// groups first appear, then the second of each, and so on.
fn interleave<T: Copy, G: PartialEq>(sorted: Vec<T>, group: impl Fn(T) -> G) -> Vec<T> {
    let mut groups: Vec<(G, Vec<T>)> = Vec::new();
    for item in sorted {
        let key = group(item);
        match groups.iter_mut().find(|(g, _)| *g == key) {
            Some((_, members)) => members.push(item),
            None => groups.push((key, vec![item])),
        }
    }
    let longest = groups.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    (0..longest)
        .flat_map(|i| groups.iter().filter_map(move |(_, m)| m.get(i).copied()))
        .collect()
}

/// The command consolidating the candidate alone, or why there is none: not
/// tried when even deleting it could not pass the Balanced threshold, and
/// kept only when the Balanced policy approves it.
fn option(pass: &Pass<'_, '_>, candidate: &Candidate<'_>) -> Result<Command, Unconsolidatable> {
    if !pass.balanced().can_pass(candidate) {
        return Err(Unconsolidatable::NotWorthDisruption);
    }
    let command = compute(pass, &[candidate])?;
    if approved(pass, &[candidate], &command) {
        Ok(command)
    } else {
        Err(Unconsolidatable::NotWorthDisruption)
    }
}

impl Method for SingleNode {
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command> {
        self.next_command_noting(pass, &mut Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::interleave;

    #[test]
    fn pools_take_turns_in_the_order_of_their_best_candidates() {
        let sorted = ["a1", "a2", "b1", "a3", "c1", "b2"];
        let pool = |name: &str| name.as_bytes()[0];
        assert_eq!(
            interleave(sorted.to_vec(), pool),
            ["a1", "b1", "c1", "a2", "b2", "a3"]
        );
        assert!(interleave(Vec::<&str>::new(), pool).is_empty());
    }
}
