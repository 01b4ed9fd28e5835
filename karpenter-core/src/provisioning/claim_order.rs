//! The order tier two tries the plan's claims in: fewest pods first, equal
//! counts in the order the claims were made.
//!
//! Every pod walks this order, often far (a pod with hostname anti-affinity
//! passes every claim that holds a pod like it), while each placement moves one
//! claim one step: so the order is a flat sorted list, quick to walk, that a
//! placement shifts by a rotation rather than a map re-sorted or rebuilt.

/// The claims by `(pod count, index)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClaimOrder {
    order: Vec<usize>,
    /// Each claim's pod count, by claim index.
    counts: Vec<usize>,
}

impl ClaimOrder {
    /// The claims in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().copied()
    }

    /// Adds the next claim (its index is the number of claims so far) holding
    /// `count` pods.
    pub(crate) fn push(&mut self, count: usize) {
        let claim = self.counts.len();
        self.counts.push(count);
        let at = self.position_before((count, claim));
        self.order.insert(at, claim);
    }

    /// Counts one more pod on `claim`.
    pub(crate) fn bump(&mut self, claim: usize) {
        let count = self.counts[claim];
        let from = self.position_before((count, claim));
        // Every claim ordered before the claim's next place, itself included.
        let to = self.position_before((count + 1, claim));
        self.order[from..to].rotate_left(1);
        self.counts[claim] = count + 1;
    }

    /// How many claims order before `key`.
    fn position_before(&self, key: (usize, usize)) -> usize {
        self.order.partition_point(|&c| (self.counts[c], c) < key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order always equals sorting by (count, index), whatever the
    /// sequence of additions and placements.
    #[test]
    fn matches_a_full_sort() {
        let mut order = ClaimOrder::default();
        let mut counts: Vec<usize> = Vec::new();
        let mut state: u64 = 7;
        for step in 0..2_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (state >> 33) as usize;
            if counts.is_empty() || step % 7 == 0 {
                order.push(1);
                counts.push(1);
            } else {
                let claim = pick % counts.len();
                order.bump(claim);
                counts[claim] += 1;
            }
            let mut expected: Vec<usize> = (0..counts.len()).collect();
            expected.sort_by_key(|&c| (counts[c], c));
            assert_eq!(order.iter().collect::<Vec<_>>(), expected, "step {step}");
        }
    }
}
