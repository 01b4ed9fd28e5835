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
//! claim one step: so the order is a flat list sorted by count, quick to walk,
//! that a placement shifts by a rotation rather than a map re-sorted or rebuilt.

/// The claims by pod count, equal counts in upstream's order: each claim's
/// key is its count and a tie-break, positive and rising for claims in the
/// order they were made (last among their count), negative and falling for
/// claims as they gain a pod (first among their new count).
#[derive(Clone, Debug, Default)]
pub(crate) struct ClaimOrder {
    order: Vec<usize>,
    /// Each claim's pod count, by claim index.
    counts: Vec<usize>,
    /// Each claim's tie-break among equal counts, by claim index.
    ties: Vec<i64>,
    /// How many pods were counted so far (the next bump's tie-break).
    bumps: i64,
}

impl ClaimOrder {
    /// The claims in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().copied()
    }

    /// Where `claim` stands: claims order by this key.
    pub(crate) fn key(&self, claim: usize) -> (usize, i64) {
        (self.counts[claim], self.ties[claim])
    }

    /// Adds the next claim (its index is the number of claims so far) holding
    /// `count` pods: last among the claims of its count.
    pub(crate) fn push(&mut self, count: usize) {
        let claim = self.counts.len();
        self.counts.push(count);
        self.ties
            .push(i64::try_from(claim).unwrap_or(i64::MAX).saturating_add(1));
        let at = self.position_before(self.key(claim));
        self.order.insert(at, claim);
    }

    /// Counts one more pod on `claim`, which goes first among the claims of
    /// its new count.
    pub(crate) fn bump(&mut self, claim: usize) {
        let from = self.position_before(self.key(claim));
        self.bumps = self.bumps.saturating_add(1);
        let new_key = (self.counts[claim] + 1, -self.bumps);
        // Every claim ordered before the claim's new place, itself included
        // (still at its old key, which is below the new one).
        let to = self.position_before(new_key);
        self.order[from..to].rotate_left(1);
        self.counts[claim] = new_key.0;
        self.ties[claim] = new_key.1;
    }

    /// How many claims order before `key`.
    fn position_before(&self, key: (usize, i64)) -> usize {
        self.order.partition_point(|&c| self.key(c) < key)
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
