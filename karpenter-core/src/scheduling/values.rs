//! The value sets and integer bounds behind a [`Requirement`](super::Requirement).
//!
//! Representation choice: a value set is a sorted, de-duplicated slice of
//! `Arc<str>` behind one more `Arc`, and `None` when empty.
//!
//! * Sorted: iteration, `Display` and serialisation are deterministic without a
//!   sort at output time, membership is a binary search, and intersections and
//!   unions are linear merges (no hashing of every value on every call).
//! * `Arc` around the slice: requirements are cloned constantly by the
//!   scheduler (one copy per candidate node claim and pod), and a clone must not
//!   copy hundreds of instance-type names.
//! * `Arc<str>` per value: the result of an intersection is a subset of its
//!   inputs, so building it bumps reference counts instead of copying strings.
//! * `None` for the empty set: `Exists`, `DoesNotExist` and bounds-only
//!   requirements, the most common ones after `In`, allocate nothing.
//!
//! The filtering operations below also return the input set itself (a
//! reference-count bump) when nothing was filtered out, which is the usual
//! outcome of narrowing a requirement by a looser one.

use std::fmt;
use std::sync::Arc;

/// Inclusive integer bounds; `None` is unbounded on that side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Bounds {
    pub(crate) gte: Option<i64>,
    pub(crate) lte: Option<i64>,
}

impl Bounds {
    pub(crate) const NONE: Bounds = Bounds {
        gte: None,
        lte: None,
    };

    pub(crate) fn is_unbounded(self) -> bool {
        self.gte.is_none() && self.lte.is_none()
    }

    /// The tighter of both bounds on each side.
    pub(crate) fn intersect(self, other: Bounds) -> Bounds {
        Bounds {
            gte: tighter(self.gte, other.gte, i64::max),
            lte: tighter(self.lte, other.lte, i64::min),
        }
    }

    /// True when both sides are set and no integer lies between them.
    pub(crate) fn is_contradictory(self) -> bool {
        matches!((self.gte, self.lte), (Some(gte), Some(lte)) if gte > lte)
    }

    /// Whether `value` satisfies the bounds. Once any bound is set only
    /// integers qualify, parsed as Go's `strconv.Atoi` does (optional sign,
    /// leading zeros allowed), so `"02"` is 2 and `"a"` is out of bounds.
    pub(crate) fn admits(self, value: &str) -> bool {
        if self.is_unbounded() {
            return true;
        }
        let Ok(number) = value.parse::<i64>() else {
            return false;
        };
        self.gte.is_none_or(|gte| number >= gte) && self.lte.is_none_or(|lte| number <= lte)
    }
}

fn tighter(a: Option<i64>, b: Option<i64>, pick: fn(i64, i64) -> i64) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    }
}

/// A sorted, de-duplicated, cheaply clonable set of label values.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct ValueSet(Option<Arc<[Arc<str>]>>);

impl ValueSet {
    /// Builds a set from values in any order, with duplicates.
    pub(crate) fn from_values<I, S>(values: I) -> ValueSet
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut values: Vec<Arc<str>> = values.into_iter().map(|v| Arc::from(v.as_ref())).collect();
        values.sort_unstable();
        values.dedup();
        ValueSet::from_sorted(values)
    }

    fn from_sorted(values: Vec<Arc<str>>) -> ValueSet {
        if values.is_empty() {
            ValueSet(None)
        } else {
            ValueSet(Some(values.into()))
        }
    }

    pub(crate) fn as_slice(&self) -> &[Arc<str>] {
        self.0.as_deref().unwrap_or(&[])
    }

    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn first(&self) -> Option<&str> {
        self.as_slice().first().map(|v| &**v)
    }

    pub(crate) fn contains(&self, value: &str) -> bool {
        self.as_slice()
            .binary_search_by(|v| (**v).cmp(value))
            .is_ok()
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator + Clone {
        self.as_slice().iter().map(|v| &**v)
    }

    /// The members of `self` admitted by `bounds` whose membership in `other`
    /// is `in_other`: the intersection (`true`) or the difference (`false`).
    pub(crate) fn filter_against(
        &self,
        other: &ValueSet,
        in_other: bool,
        bounds: Bounds,
    ) -> ValueSet {
        let own = self.as_slice();
        let mut probe = Probe::new(own.len(), other.as_slice());
        // Allocate only once an element is dropped; until then the result is
        // a prefix of `self`, and if nothing is dropped it is `self`.
        let mut kept: Option<Vec<Arc<str>>> = None;
        for (index, value) in own.iter().enumerate() {
            let keep = bounds.admits(value) && probe.contains(value) == in_other;
            match (&mut kept, keep) {
                (Some(kept), true) => kept.push(Arc::clone(value)),
                (None, false) => {
                    let mut prefix = Vec::with_capacity(own.len() - 1);
                    prefix.extend_from_slice(&own[..index]);
                    kept = Some(prefix);
                }
                (Some(_), false) | (None, true) => {}
            }
        }
        kept.map_or_else(|| self.clone(), ValueSet::from_sorted)
    }

    /// Whether [`filter_against`](Self::filter_against) would be non-empty,
    /// without building it.
    pub(crate) fn any_against(&self, other: &ValueSet, in_other: bool, bounds: Bounds) -> bool {
        let mut probe = Probe::new(self.len(), other.as_slice());
        self.as_slice()
            .iter()
            .any(|value| probe.contains(value) == in_other && bounds.admits(value))
    }

    /// The members of either set admitted by `bounds`.
    pub(crate) fn union_filtered(&self, other: &ValueSet, bounds: Bounds) -> ValueSet {
        if other.is_empty() {
            return self.filter_against(other, false, bounds);
        }
        if self.is_empty() {
            return other.filter_against(self, false, bounds);
        }
        let (left, right) = (self.as_slice(), other.as_slice());
        let mut merged = Vec::with_capacity(left.len() + right.len());
        let (mut i, mut j) = (0, 0);
        while i < left.len() || j < right.len() {
            let next = match (left.get(i), right.get(j)) {
                (Some(l), Some(r)) if l < r => {
                    i += 1;
                    l
                }
                (Some(l), Some(r)) if l > r => {
                    j += 1;
                    r
                }
                (Some(l), Some(_)) => {
                    i += 1;
                    j += 1;
                    l
                }
                (Some(l), None) => {
                    i += 1;
                    l
                }
                (None, Some(r)) => {
                    j += 1;
                    r
                }
                (None, None) => break,
            };
            if bounds.admits(next) {
                merged.push(Arc::clone(next));
            }
        }
        ValueSet::from_sorted(merged)
    }
}

impl fmt::Debug for ValueSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Answers membership queries against a sorted slice for a sorted stream of
/// probes, remembering where the previous probe stopped.
struct Probe<'a> {
    sorted: &'a [Arc<str>],
    position: usize,
    /// Binary-search the remainder rather than walk it: pays off when the
    /// probing side is much smaller (one zone against hundreds of instance
    /// types); walking is cheaper for sets of similar size.
    gallop: bool,
}

impl<'a> Probe<'a> {
    fn new(probes: usize, sorted: &'a [Arc<str>]) -> Probe<'a> {
        Probe {
            sorted,
            position: 0,
            gallop: sorted.len() > probes.saturating_mul(8),
        }
    }

    /// Probes must arrive in ascending order.
    fn contains(&mut self, value: &str) -> bool {
        let rest = self.sorted.get(self.position..).unwrap_or(&[]);
        let skipped = if self.gallop {
            rest.partition_point(|v| &**v < value)
        } else {
            rest.iter().take_while(|v| &***v < value).count()
        };
        self.position += skipped;
        self.sorted
            .get(self.position)
            .is_some_and(|v| &**v == value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(values: &[&str]) -> ValueSet {
        ValueSet::from_values(values)
    }

    #[test]
    fn sorts_and_deduplicates() {
        let values = set(&["b", "a", "b"]);
        assert_eq!(values.iter().collect::<Vec<_>>(), ["a", "b"]);
        assert!(set(&[]).is_empty());
    }

    #[test]
    fn filtering_shares_storage_when_nothing_is_removed() {
        let small = set(&["a", "b"]);
        let large = set(&["a", "b", "c"]);
        let kept = small.filter_against(&large, true, Bounds::NONE);
        assert!(Arc::ptr_eq(
            kept.0.as_ref().unwrap(),
            small.0.as_ref().unwrap()
        ));
    }

    #[test]
    fn merges() {
        let a = set(&["1", "3", "x"]);
        let b = set(&["2", "3"]);
        let within = Bounds {
            gte: Some(2),
            lte: None,
        };
        assert_eq!(a.filter_against(&b, true, Bounds::NONE), set(&["3"]));
        assert_eq!(a.filter_against(&b, false, Bounds::NONE), set(&["1", "x"]));
        assert_eq!(
            a.union_filtered(&b, Bounds::NONE),
            set(&["1", "2", "3", "x"])
        );
        assert_eq!(a.union_filtered(&b, within), set(&["2", "3"]));
        assert!(a.any_against(&b, true, Bounds::NONE));
        assert!(!a.any_against(
            &b,
            true,
            Bounds {
                gte: Some(4),
                lte: None
            }
        ));
    }

    #[test]
    fn galloping_probe_agrees_with_walking() {
        let many: Vec<String> = (0..100).map(|i| format!("{i:03}")).collect();
        let large = ValueSet::from_values(&many);
        let small = set(&["005", "050", "zzz"]);
        assert_eq!(
            small.filter_against(&large, true, Bounds::NONE),
            set(&["005", "050"])
        );
        assert_eq!(
            large.filter_against(&small, true, Bounds::NONE),
            set(&["005", "050"])
        );
    }

    #[test]
    fn bounds_parse_like_go_atoi() {
        let bounds = Bounds {
            gte: Some(2),
            lte: Some(8),
        };
        assert!(bounds.admits("02"));
        assert!(bounds.admits("+8"));
        assert!(!bounds.admits("9"));
        assert!(!bounds.admits("a"));
        assert!(Bounds::NONE.admits("a"));
        assert!(
            Bounds {
                gte: Some(3),
                lte: Some(2)
            }
            .is_contradictory()
        );
    }
}
