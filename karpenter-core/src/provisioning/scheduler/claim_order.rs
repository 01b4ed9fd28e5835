//! The order tier two tries the plan's claims in: fewest pods first; among
//! equal counts, as upstream's scheduler leaves them. Upstream sorts its new
//! claims by pod count in place before each pod (`Scheduler.add`, Go's
//! `sort.Slice`, whose insertion sort keeps equal elements in place for the
//! dozen claims a batch usually makes), so a claim that has just reached a count
//! comes first among the claims of that count, and a new claim last among those
//! of its own. (Beyond twelve claims Go's pattern-defeating quicksort decides, in
//! an order no simpler rule reproduces; the stable rule is kept there too.)
//!
//! Every pod walks this order, often far (a pod with hostname anti-affinity
//! passes every claim that holds a pod like it), while each placement moves one
//! claim from its count to the next: so the order is kept as one list per
//! count, quick to walk, where a claim that gains a pod is put at the front of
//! its new count's list and left behind as a stale entry in its old one
//! (passed over, and swept out when a list is half stale), rather than a
//! sorted list shifted by each move, which costs the whole list when
//! thousands of claims hold as many pods.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::claim_sets::ClaimSet;

/// How many places of the order a pod walks per claim left, when most claims
/// are skipped, before the claims left are gathered instead (see
/// [`ClaimOrder::except`]): gathering one costs about as much as walking this
/// many places, so neither way costs much more than the other would have.
const WALK_PER_CLAIM_LEFT: usize = 8;

/// The claims by pod count, equal counts in upstream's order: each claim's
/// key is its count and a tie-break, positive and rising for claims in the
/// order they were made (last among their count), negative and falling for
/// claims as they gain a pod (first among their new count).
#[derive(Clone, Debug, Default)]
pub(crate) struct ClaimOrder {
    /// The claims of each count (by count), by tie-break: an entry whose
    /// claim has since gained a pod (its count is no longer the list's) is
    /// stale.
    lists: Vec<VecDeque<usize>>,
    /// How many stale entries each list holds.
    stale: Vec<usize>,
    /// Each claim's pod count, by claim index.
    counts: Vec<usize>,
    /// Each claim's tie-break among equal counts, by claim index.
    ties: Vec<i64>,
    /// How many pods were counted so far (the next bump's tie-break).
    bumps: i64,
}

impl ClaimOrder {
    /// The claims in order.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.lists
            .iter()
            .enumerate()
            .flat_map(move |(count, list)| {
                list.iter()
                    .copied()
                    .filter(move |&claim| self.counts[claim] == count)
            })
    }

    /// The claims not in `skip`, in order. When most claims are skipped, the
    /// few left may lie anywhere in the order, and walking all of it for every
    /// pod would cost the whole order each time: after a walk in proportion to
    /// the claims left (see [`WALK_PER_CLAIM_LEFT`]), the claims left beyond
    /// it are gathered from the complement of `skip` and taken from a heap,
    /// least key first. A pod usually takes one of the first claims it meets,
    /// so sorting them all would be wasted; the sequence is the same either
    /// way (keys are unique).
    pub(crate) fn except<'a>(&'a self, skip: &'a ClaimSet) -> Except<'a> {
        let claims = self.counts.len();
        let left = claims.saturating_sub(skip.len());
        let walk = if left * 2 < claims {
            left.saturating_mul(WALK_PER_CLAIM_LEFT).max(64)
        } else {
            usize::MAX
        };
        Except {
            order: self,
            skip,
            list: 0,
            at: 0,
            walk,
            rest: None,
        }
    }

    /// Where `claim` stands: claims order by this key.
    fn key(&self, claim: usize) -> (usize, i64) {
        (self.counts[claim], self.ties[claim])
    }

    /// The list of claims holding `count` pods.
    fn list_mut(&mut self, count: usize) -> &mut VecDeque<usize> {
        if self.lists.len() <= count {
            self.lists.resize_with(count + 1, VecDeque::new);
            self.stale.resize(count + 1, 0);
        }
        &mut self.lists[count]
    }

    /// Adds the next claim (its index is the number of claims so far) holding
    /// `count` pods: last among the claims of its count.
    pub(crate) fn push(&mut self, count: usize) {
        let claim = self.counts.len();
        self.counts.push(count);
        self.ties
            .push(i64::try_from(claim).unwrap_or(i64::MAX).saturating_add(1));
        self.list_mut(count).push_back(claim);
    }

    /// Counts one more pod on `claim`, which goes first among the claims of
    /// its new count.
    pub(crate) fn bump(&mut self, claim: usize) {
        let from = self.counts[claim];
        self.bumps = self.bumps.saturating_add(1);
        self.counts[claim] = from + 1;
        self.ties[claim] = -self.bumps;
        self.list_mut(from + 1).push_front(claim);
        // Its entry in the old list is stale now; a list half stale is swept,
        // which keeps walks and sweeps to a constant per placement.
        self.stale[from] += 1;
        if self.stale[from] * 2 > self.lists[from].len() {
            let counts = &self.counts;
            self.lists[from].retain(|&c| counts[c] == from);
            self.stale[from] = 0;
        }
    }
}

/// Claims by their key in a [`ClaimOrder`], least key first.
type ByKey = BinaryHeap<Reverse<((usize, i64), usize)>>;

/// The claims of a [`ClaimOrder`] outside a set, in order (see
/// [`ClaimOrder::except`]).
pub(crate) struct Except<'a> {
    order: &'a ClaimOrder,
    skip: &'a ClaimSet,
    /// The next place of the order to look at: a list, and a place in it.
    list: usize,
    at: usize,
    /// How many places are left to walk before the rest is gathered.
    walk: usize,
    /// Once gathered: the claims left from the place reached on, by key.
    rest: Option<ByKey>,
}

impl Except<'_> {
    /// The claim at the next place that is not stale (moving there), if any.
    fn current(&mut self) -> Option<usize> {
        let lists = &self.order.lists;
        while let Some(list) = lists.get(self.list) {
            match list.get(self.at) {
                Some(&claim) if self.order.counts[claim] == self.list => return Some(claim),
                Some(_) => self.at += 1,
                None => (self.list, self.at) = (self.list + 1, 0),
            }
        }
        None
    }
}

impl Iterator for Except<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        loop {
            if let Some(rest) = &mut self.rest {
                return rest.pop().map(|Reverse((_, claim))| claim);
            }
            let claim = self.current()?;
            if self.walk == 0 {
                // Every claim from this place on orders at or after it.
                let from = self.order.key(claim);
                let order = self.order;
                let left = self.skip.absent_below(order.counts.len());
                self.rest = Some(
                    left.map(|c| Reverse((order.key(c), c)))
                        .filter(|Reverse((key, _))| *key >= from)
                        .collect(),
                );
                continue;
            }
            self.at += 1;
            self.walk -= 1;
            if !self.skip.contains(claim) {
                return Some(claim);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order always equals a stable sort by count of the order before
    /// (new claims appended), as upstream's in-place sort before each pod
    /// gives it, whatever the sequence of additions and placements.
    #[test]
    fn matches_a_stable_sort_of_the_previous_order() {
        let mut order = ClaimOrder::default();
        let mut counts: Vec<usize> = Vec::new();
        let mut expected: Vec<usize> = Vec::new();
        let mut state: u64 = 7;
        for step in 0..2_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (state >> 33) as usize;
            if counts.is_empty() || step % 7 == 0 {
                order.push(1);
                expected.push(counts.len());
                counts.push(1);
            } else {
                let claim = pick % counts.len();
                order.bump(claim);
                counts[claim] += 1;
            }
            // `sort_by_key` is stable.
            expected.sort_by_key(|&c| counts[c]);
            assert_eq!(order.iter().collect::<Vec<_>>(), expected, "step {step}");
        }
    }

    /// The claims outside a set come in the order's sequence, whether the
    /// walk finds them all or gives way to gathering the rest.
    #[test]
    fn the_claims_outside_a_set_come_in_order() {
        let mut order = ClaimOrder::default();
        let mut state: u64 = 11;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        for step in 0..1_500 {
            let claims = order.counts.len();
            if claims == 0 || step % 5 == 0 {
                order.push(1);
            } else {
                order.bump(next() % claims);
            }
            let claims = order.counts.len();
            // Sets from nearly empty to nearly full, so that both ways are taken.
            let mut skip = ClaimSet::default();
            let keep_one_in = 1 + step % 40;
            for claim in 0..claims {
                if next() % keep_one_in != 0 {
                    skip.insert(claim);
                }
            }
            let expected: Vec<usize> = order.iter().filter(|&c| !skip.contains(c)).collect();
            assert_eq!(
                order.except(&skip).collect::<Vec<_>>(),
                expected,
                "step {step}"
            );
        }
    }
}

#[cfg(test)]
mod upstream_order {
    use super::*;

    /// Upstream's example: A reaches two pods, then B does; B is tried first.
    #[test]
    fn the_claim_that_reached_a_count_last_goes_first_among_its_count() {
        let mut order = ClaimOrder::default();
        order.push(1); // A
        order.push(1); // B
        order.push(1); // C
        order.bump(0); // A: 2
        assert_eq!(order.iter().collect::<Vec<_>>(), [1, 2, 0]);
        order.bump(1); // B: 2, before A
        assert_eq!(order.iter().collect::<Vec<_>>(), [2, 1, 0]);
        order.push(1); // D: last among the ones
        assert_eq!(order.iter().collect::<Vec<_>>(), [2, 3, 1, 0]);
    }
}
