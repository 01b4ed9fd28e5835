//! Sets of the plan's claims, for passing over the claims a pod cannot take
//! without looking at them.
//!
//! Two kinds of knowledge let tier two skip claims: a refusal that holds for
//! good (remembered per topology signature by the scheduler), and a refusal
//! that follows from a claim's requirement on one topology key, which many
//! claims share (a zone). [`ClaimsByKey`] keeps, for each key and each distinct
//! requirement on it, the claims that have it, so one answer per requirement
//! covers them all.

/// A set of claim indices, as bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClaimSet(Vec<u64>);

impl ClaimSet {
    pub(crate) fn insert(&mut self, claim: usize) {
        let word = claim / 64;
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (claim % 64);
    }

    pub(crate) fn remove(&mut self, claim: usize) {
        if let Some(word) = self.0.get_mut(claim / 64) {
            *word &= !(1 << (claim % 64));
        }
    }

    pub(crate) fn contains(&self, claim: usize) -> bool {
        self.0
            .get(claim / 64)
            .is_some_and(|w| w & (1 << (claim % 64)) != 0)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// How many claims are in the set.
    pub(crate) fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Adds every claim of `other`.
    pub(crate) fn union_with(&mut self, other: &ClaimSet) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a |= b);
    }

    /// The claims below `count` not in the set, ascending.
    pub(crate) fn absent_below(&self, count: usize) -> impl Iterator<Item = usize> + '_ {
        (0..count.div_ceil(64)).flat_map(move |word| {
            let mut bits = !self.0.get(word).copied().unwrap_or(0);
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let bit = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    word * 64 + bit
                })
            })
            .take_while(move |&c| c < count)
        })
    }
}

/// The most distinct requirements per key that are indexed: beyond them a
/// key's claims are only asked one by one (an input this varied is rare, and
/// each index costs a set per requirement).
const MOST_IDS: u32 = 1024;

/// The claims by the id of their requirement on each topology key (the ids of
/// the topology's `NodeKeys`).
#[derive(Clone, Debug, Default)]
pub(crate) struct ClaimsByKey {
    /// By key slot, then id.
    slots: Vec<Vec<ClaimSet>>,
}

impl ClaimsByKey {
    /// Records that `claim`'s ids went from `old` to `new`.
    pub(crate) fn update(&mut self, claim: usize, old: &[u32], new: &[u32]) {
        for (slot, &id) in old.iter().enumerate() {
            if let Some(set) = self
                .slots
                .get_mut(slot)
                .and_then(|s| s.get_mut(id as usize))
            {
                set.remove(claim);
            }
        }
        for (slot, &id) in new.iter().enumerate() {
            if id >= MOST_IDS {
                continue;
            }
            if self.slots.len() <= slot {
                self.slots.resize_with(slot + 1, Vec::new);
            }
            let sets = &mut self.slots[slot];
            if sets.len() <= id as usize {
                sets.resize_with(id as usize + 1, ClaimSet::default);
            }
            sets[id as usize].insert(claim);
        }
    }

    /// Every `(slot, id, claims)` with at least one claim.
    pub(crate) fn groups(&self) -> impl Iterator<Item = (usize, u32, &ClaimSet)> {
        self.slots.iter().enumerate().flat_map(|(slot, sets)| {
            sets.iter()
                .enumerate()
                .filter(|(_, set)| !set.is_empty())
                .map(move |(id, set)| (slot, id as u32, set))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_insert_remove_and_list_what_is_absent() {
        let mut set = ClaimSet::default();
        for c in [0, 3, 64, 130] {
            set.insert(c);
        }
        set.remove(3);
        set.remove(1000);
        assert!(set.contains(0) && !set.contains(3) && set.contains(130));
        assert_eq!(set.len(), 3);
        let absent: Vec<usize> = set.absent_below(132).collect();
        let expected: Vec<usize> = (0..132).filter(|c| ![0, 64, 130].contains(c)).collect();
        assert_eq!(absent, expected);
        let mut other = ClaimSet::default();
        other.insert(200);
        set.union_with(&other);
        assert!(set.contains(200) && set.len() == 4);
    }

    #[test]
    fn claims_move_between_ids() {
        let mut by_key = ClaimsByKey::default();
        by_key.update(0, &[], &[1, u32::MAX]);
        by_key.update(1, &[], &[1, u32::MAX]);
        by_key.update(0, &[1, u32::MAX], &[2, u32::MAX]);
        assert_eq!(by_key.groups().count(), 2);
        let members = |slot, id| {
            by_key
                .groups()
                .find(|&(s, i, _)| s == slot && i == id)
                .map(|(_, _, set)| (0..2).filter(|&c| set.contains(c)).collect::<Vec<_>>())
        };
        assert_eq!(members(0, 1), Some(vec![1]));
        assert_eq!(members(0, 2), Some(vec![0]));
    }
}
