//! [`ResourceList`]: resource name to milli-units, shaped for the scheduler's
//! inner loop.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;
use std::ops::{Add, AddAssign};

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::format::{format_milli, format_quantity};
use super::quantity::{QuantityError, milli_value};

/// The `cpu` resource, in milli-cores.
pub const CPU: &str = "cpu";
/// The `memory` resource, in milli-bytes.
pub const MEMORY: &str = "memory";
/// The `pods` resource: how many pods a node takes, in milli-pods.
pub const PODS: &str = "pods";
/// The `ephemeral-storage` resource, in milli-bytes.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";

/// Amounts of named resources, in milli-units; a resource not listed is 0.
///
/// The four resources every pod and node has (`cpu`, `memory`, `pods`,
/// `ephemeral-storage`) live in fixed fields, so the common case costs no
/// allocation and no lookup. Others (`nvidia.com/gpu`, `hugepages-2Mi`) go
/// in a short vector sorted by name. Zero is never stored, so two lists are
/// equal exactly when every resource has the same amount, and iteration
/// yields only non-zero amounts: `cpu`, `memory`, `pods`,
/// `ephemeral-storage`, then the others by name.
///
/// Amounts may be negative (a remainder after subtraction); see
/// [`fits`](Self::fits) for how that is treated.
///
/// ```
/// use karpenter_core::resources::ResourceList;
///
/// let mut requests = ResourceList::new();
/// requests.set("cpu", 500);
/// requests.set("nvidia.com/gpu", 1000);
/// let mut node = ResourceList::new();
/// node.set("cpu", 4000);
/// assert!(!requests.fits(&node));
/// assert_eq!(requests.exceeding(&node).collect::<Vec<_>>(), ["nvidia.com/gpu"]);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ResourceList {
    cpu: i64,
    memory: i64,
    pods: i64,
    ephemeral_storage: i64,
    /// Every other resource: sorted by name, unique, never zero, never one
    /// of the four names above.
    extended: Vec<(String, i64)>,
}

impl ResourceList {
    /// An empty list: every resource is 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a Kubernetes resource map. An error's path is the resource name.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    /// use karpenter_core::resources::ResourceList;
    ///
    /// let map = BTreeMap::from([("memory".to_owned(), Quantity("1Gi".into()))]);
    /// assert_eq!(ResourceList::from_quantities(&map).unwrap().get("memory"), (1 << 30) * 1000);
    /// let bad = BTreeMap::from([("cpu".to_owned(), Quantity("1 ".into()))]);
    /// let err = ResourceList::from_quantities(&bad).unwrap_err();
    /// assert_eq!(err.path(), Some("cpu"));
    /// ```
    pub fn from_quantities(map: &BTreeMap<String, Quantity>) -> Result<Self, QuantityError> {
        let mut list = Self::new();
        for (name, quantity) in map {
            list.set(name, milli_value(quantity).map_err(|e| e.within(name))?);
        }
        Ok(list)
    }

    /// The list as a Kubernetes resource map, in canonical quantity form.
    pub fn to_quantities(&self) -> BTreeMap<String, Quantity> {
        self.iter()
            .map(|(name, milli)| (name.to_owned(), Quantity(format_quantity(milli))))
            .collect()
    }

    /// The amount of `name`, 0 when absent.
    pub fn get(&self, name: &str) -> i64 {
        match self.fixed(name) {
            Some(slot) => *slot,
            None => self
                .find(name)
                .ok()
                .and_then(|i| self.extended.get(i))
                .map_or(0, |(_, milli)| *milli),
        }
    }

    /// Sets the amount of `name`; setting 0 removes it.
    pub fn set(&mut self, name: &str, milli: i64) {
        if let Some(slot) = self.fixed_mut(name) {
            *slot = milli;
            return;
        }
        match (self.find(name), milli) {
            (Ok(i), 0) => {
                self.extended.remove(i);
            }
            (Ok(i), _) => {
                if let Some(entry) = self.extended.get_mut(i) {
                    entry.1 = milli;
                }
            }
            (Err(_), 0) => {}
            (Err(i), _) => self.extended.insert(i, (name.to_owned(), milli)),
        }
    }

    /// Whether every resource is 0.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The non-zero amounts: `cpu`, `memory`, `pods`, `ephemeral-storage`,
    /// then the other resources sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> + '_ {
        self.fixed_entries()
            .into_iter()
            .chain(
                self.extended
                    .iter()
                    .map(|(name, milli)| (name.as_str(), *milli)),
            )
            .filter(|&(_, milli)| milli != 0)
    }

    /// The sum, or `None` if any resource's sum leaves the `i64` range.
    pub fn checked_add(&self, other: &Self) -> Option<Self> {
        self.combine(other, |_, a, b| a.checked_add(b).ok_or(()))
            .ok()
    }

    /// The difference, or `None` if any resource's difference leaves the
    /// `i64` range. Negative results are kept: a remainder can go below zero.
    pub fn checked_sub(&self, other: &Self) -> Option<Self> {
        self.combine(other, |_, a, b| a.checked_sub(b).ok_or(()))
            .ok()
    }

    /// The difference, each resource clamped to the `i64` range.
    ///
    /// Negative results are kept; to clamp at zero instead, take
    /// [`max`](Self::max) with an empty list.
    pub fn saturating_sub(&self, other: &Self) -> Self {
        let Ok(difference) =
            self.combine(other, |_, a, b| Ok::<_, Infallible>(a.saturating_sub(b)));
        difference
    }

    /// The element-wise maximum, an absent resource counting as 0.
    pub fn max(&self, other: &Self) -> Self {
        let Ok(max) = self.combine(other, |_, a, b| Ok::<_, Infallible>(a.max(b)));
        max
    }

    /// Whether these requests fit in `allocatable`: every resource is at
    /// most what `allocatable` has, a resource it does not list counting as
    /// 0. A negative amount anywhere in `allocatable` (an over-committed
    /// remainder) means nothing fits, as in Karpenter.
    pub fn fits(&self, allocatable: &Self) -> bool {
        self.exceeding(allocatable).next().is_none()
    }

    /// The resources that keep these requests from fitting in `allocatable`
    /// (see [`fits`](Self::fits)), in iteration order: for messages like
    /// "no instance type has enough cpu".
    pub fn exceeding<'a>(&'a self, allocatable: &'a Self) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs(allocatable)
            .filter(|&(_, requested, available)| available < 0 || requested > available)
            .map(|(name, _, _)| name)
    }

    /// Every resource in either list with both amounts, in iteration order.
    pub(crate) fn pairs<'a>(
        &'a self,
        other: &'a Self,
    ) -> impl Iterator<Item = (&'a str, i64, i64)> + 'a {
        let fixed = self
            .fixed_entries()
            .into_iter()
            .zip(other.fixed_entries())
            .map(|((name, a), (_, b))| (name, a, b));
        fixed.chain(Union {
            left: &self.extended,
            right: &other.extended,
        })
    }

    /// Applies `op(name, mine, theirs)` to every resource in either list.
    /// The error type lets one helper serve checked, saturating and
    /// infallible operations alike.
    pub(crate) fn combine<E>(
        &self,
        other: &Self,
        mut op: impl FnMut(&str, i64, i64) -> Result<i64, E>,
    ) -> Result<Self, E> {
        let mut out = Self {
            cpu: op(CPU, self.cpu, other.cpu)?,
            memory: op(MEMORY, self.memory, other.memory)?,
            pods: op(PODS, self.pods, other.pods)?,
            ephemeral_storage: op(
                EPHEMERAL_STORAGE,
                self.ephemeral_storage,
                other.ephemeral_storage,
            )?,
            extended: Vec::new(),
        };
        for (name, a, b) in (Union {
            left: &self.extended,
            right: &other.extended,
        }) {
            let milli = op(name, a, b)?;
            // The union is sorted and unique, so pushing keeps the invariant.
            if milli != 0 {
                out.extended.push((name.to_owned(), milli));
            }
        }
        Ok(out)
    }

    /// The amounts of cpu, memory, pods and ephemeral storage, in that order.
    pub(crate) fn fixed_amounts(&self) -> [i64; 4] {
        [self.cpu, self.memory, self.pods, self.ephemeral_storage]
    }

    /// Whether any resource besides the four fixed ones is set.
    pub(crate) fn has_extended(&self) -> bool {
        !self.extended.is_empty()
    }

    fn fixed_entries(&self) -> [(&'static str, i64); 4] {
        [
            (CPU, self.cpu),
            (MEMORY, self.memory),
            (PODS, self.pods),
            (EPHEMERAL_STORAGE, self.ephemeral_storage),
        ]
    }

    fn fixed(&self, name: &str) -> Option<&i64> {
        match name {
            CPU => Some(&self.cpu),
            MEMORY => Some(&self.memory),
            PODS => Some(&self.pods),
            EPHEMERAL_STORAGE => Some(&self.ephemeral_storage),
            _ => None,
        }
    }

    fn fixed_mut(&mut self, name: &str) -> Option<&mut i64> {
        match name {
            CPU => Some(&mut self.cpu),
            MEMORY => Some(&mut self.memory),
            PODS => Some(&mut self.pods),
            EPHEMERAL_STORAGE => Some(&mut self.ephemeral_storage),
            _ => None,
        }
    }

    fn find(&self, name: &str) -> Result<usize, usize> {
        self.extended
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
    }
}

/// Walks two sorted, unique `(name, amount)` slices as one sorted union,
/// yielding 0 for the side a name is missing from.
struct Union<'a> {
    left: &'a [(String, i64)],
    right: &'a [(String, i64)],
}

impl<'a> Iterator for Union<'a> {
    type Item = (&'a str, i64, i64);

    fn next(&mut self) -> Option<Self::Item> {
        let order = match (self.left.first(), self.right.first()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((l, _)), Some((r, _))) => l.cmp(r),
        };
        let take = |side: &mut &'a [(String, i64)]| match side.split_first() {
            Some(((name, milli), rest)) => {
                *side = rest;
                (Some(name.as_str()), *milli)
            }
            None => (None, 0),
        };
        let (name, a, b) = match order {
            Ordering::Less => {
                let (name, a) = take(&mut self.left);
                (name, a, 0)
            }
            Ordering::Greater => {
                let (name, b) = take(&mut self.right);
                (name, 0, b)
            }
            Ordering::Equal => {
                let (name, a) = take(&mut self.left);
                let (_, b) = take(&mut self.right);
                (name, a, b)
            }
        };
        name.map(|name| (name, a, b))
    }
}

/// Adds resource by resource, **saturating** at the `i64` bounds.
///
/// Saturation rather than an error because `+` cannot report one, and
/// because a saturated total is safe in this engine: `i64::MAX` milli-units
/// fits no real allocatable and exceeds every limit, so an absurd sum makes a
/// pod unschedulable instead of aborting a whole scheduling pass. Use
/// [`ResourceList::checked_add`] to detect overflow.
impl Add<&ResourceList> for &ResourceList {
    type Output = ResourceList;

    fn add(self, other: &ResourceList) -> ResourceList {
        let Ok(sum) = self.combine(other, |_, a, b| Ok::<_, Infallible>(a.saturating_add(b)));
        sum
    }
}

/// Saturating addition; see the `&ResourceList + &ResourceList` impl.
impl Add<&ResourceList> for ResourceList {
    type Output = ResourceList;

    fn add(self, other: &ResourceList) -> ResourceList {
        &self + other
    }
}

/// Saturating addition in place; see the `&ResourceList + &ResourceList` impl.
impl AddAssign<&ResourceList> for ResourceList {
    fn add_assign(&mut self, other: &ResourceList) {
        *self = &*self + other;
    }
}

/// Shows each non-zero amount in its human form, e.g.
/// `{"cpu": 500m, "memory": 2Gi}`.
impl fmt::Debug for ResourceList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Human<'a>(&'a str, i64);
        impl fmt::Debug for Human<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&format_milli(self.0, self.1))
            }
        }
        f.debug_map()
            .entries(self.iter().map(|(name, milli)| (name, Human(name, milli))))
            .finish()
    }
}

impl TryFrom<&BTreeMap<String, Quantity>> for ResourceList {
    type Error = QuantityError;

    /// Same as [`ResourceList::from_quantities`].
    fn try_from(map: &BTreeMap<String, Quantity>) -> Result<Self, QuantityError> {
        Self::from_quantities(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(entries: &[(&str, i64)]) -> ResourceList {
        let mut list = ResourceList::new();
        for &(name, milli) in entries {
            list.set(name, milli);
        }
        list
    }

    #[test]
    fn get_set_and_absent_is_zero() {
        let mut l = ResourceList::new();
        assert!(l.is_empty());
        assert_eq!(l.get("cpu"), 0);
        assert_eq!(l.get("nvidia.com/gpu"), 0);
        l.set("nvidia.com/gpu", 2000);
        l.set("cpu", 500);
        l.set("example.com/a", 1);
        assert_eq!(l.get("nvidia.com/gpu"), 2000);
        assert_eq!(l.get("cpu"), 500);
        l.set("nvidia.com/gpu", 3000);
        assert_eq!(l.get("nvidia.com/gpu"), 3000);
        l.set("nvidia.com/gpu", 0);
        l.set("example.com/a", 0);
        l.set("cpu", 0);
        assert!(l.is_empty());
        assert_eq!(l, ResourceList::new());
    }

    #[test]
    fn iterates_fixed_then_sorted_extended() {
        let l = list(&[
            ("nvidia.com/gpu", 1000),
            ("ephemeral-storage", 4),
            ("amd.com/gpu", 2000),
            ("pods", 1000),
            ("memory", 3),
            ("cpu", 1),
            ("hugepages-2Mi", 5),
        ]);
        let names: Vec<_> = l.iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "cpu",
                "memory",
                "pods",
                "ephemeral-storage",
                "amd.com/gpu",
                "hugepages-2Mi",
                "nvidia.com/gpu"
            ]
        );
    }

    #[test]
    fn from_and_to_quantities() {
        let map = BTreeMap::from([
            ("cpu".to_owned(), Quantity("1500m".into())),
            ("memory".to_owned(), Quantity("2Gi".into())),
            ("nvidia.com/gpu".to_owned(), Quantity("1".into())),
            ("pods".to_owned(), Quantity("0".into())),
        ]);
        let l = ResourceList::try_from(&map).unwrap();
        assert_eq!(
            l,
            list(&[
                ("cpu", 1500),
                ("memory", 2_147_483_648_000),
                ("nvidia.com/gpu", 1000)
            ])
        );
        let back = l.to_quantities();
        assert_eq!(back.get("cpu"), Some(&Quantity("1500m".into())));
        assert_eq!(back.get("memory"), Some(&Quantity("2147483648".into())));
        assert_eq!(back.get("pods"), None);

        let bad = BTreeMap::from([("example.com/foo".to_owned(), Quantity("1.2.3".into()))]);
        let err = ResourceList::from_quantities(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"example.com/foo: invalid quantity "1.2.3": unexpected character '.' at byte 3"#
        );
    }

    #[test]
    fn arithmetic() {
        let a = list(&[("cpu", 1000), ("x.io/a", 5), ("x.io/b", 7)]);
        let b = list(&[("cpu", 250), ("memory", 10), ("x.io/b", 7), ("x.io/c", 1)]);
        assert_eq!(
            &a + &b,
            list(&[
                ("cpu", 1250),
                ("memory", 10),
                ("x.io/a", 5),
                ("x.io/b", 14),
                ("x.io/c", 1)
            ])
        );
        assert_eq!(
            a.checked_sub(&b),
            Some(list(&[
                ("cpu", 750),
                ("memory", -10),
                ("x.io/a", 5),
                ("x.io/c", -1)
            ]))
        );
        assert_eq!(
            a.max(&b),
            list(&[
                ("cpu", 1000),
                ("memory", 10),
                ("x.io/a", 5),
                ("x.io/b", 7),
                ("x.io/c", 1)
            ])
        );
        let mut c = a.clone();
        c += &b;
        assert_eq!(c, a.clone() + &b);
        // Clamping a remainder at zero: max with the empty list.
        assert_eq!(
            list(&[("cpu", -5), ("x.io/a", 3)]).max(&ResourceList::new()),
            list(&[("x.io/a", 3)])
        );
    }

    #[test]
    fn overflow_is_checked_or_saturated() {
        let big = list(&[("memory", i64::MAX), ("x.io/a", i64::MIN)]);
        let one = list(&[("memory", 1), ("x.io/a", 1)]);
        assert_eq!(big.checked_add(&one), None);
        assert_eq!(
            &big + &one,
            list(&[("memory", i64::MAX), ("x.io/a", i64::MIN + 1)])
        );
        assert_eq!(big.checked_sub(&one), None);
        assert_eq!(
            big.saturating_sub(&one),
            list(&[("memory", i64::MAX - 1), ("x.io/a", i64::MIN)])
        );
    }

    #[test]
    fn fits_and_exceeding() {
        let node = list(&[("cpu", 4000), ("memory", 8000), ("pods", 110_000)]);
        assert!(list(&[("cpu", 4000), ("memory", 1)]).fits(&node));
        assert!(ResourceList::new().fits(&node));
        let pod = list(&[("cpu", 4001), ("memory", 1), ("nvidia.com/gpu", 1000)]);
        assert!(!pod.fits(&node));
        assert_eq!(
            pod.exceeding(&node).collect::<Vec<_>>(),
            ["cpu", "nvidia.com/gpu"]
        );
        // A negative remainder fits nothing, even a resource not requested.
        let overcommitted = list(&[("cpu", 4000), ("memory", -1)]);
        assert!(!list(&[("cpu", 1)]).fits(&overcommitted));
        assert_eq!(
            list(&[("cpu", 1)])
                .exceeding(&overcommitted)
                .collect::<Vec<_>>(),
            ["memory"]
        );
        // Negative requests fit.
        assert!(list(&[("cpu", -1)]).fits(&ResourceList::new()));
    }

    #[test]
    fn serde_round_trip_and_errors() {
        let l = list(&[
            ("cpu", 1500),
            ("memory", 2_147_483_648_000),
            ("nvidia.com/gpu", 1000),
        ]);
        let json = serde_json::to_value(&l).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"cpu": "1500m", "memory": "2147483648", "nvidia.com/gpu": "1"})
        );
        assert_eq!(serde_json::from_value::<ResourceList>(json).unwrap(), l);

        let from_ints: ResourceList =
            serde_json::from_value(serde_json::json!({"pods": 110, "cpu": "0", "memory": "1Gi"}))
                .unwrap();
        assert_eq!(
            from_ints,
            list(&[("pods", 110_000), ("memory", 1_073_741_824_000)])
        );

        let err = serde_json::from_value::<ResourceList>(serde_json::json!({"memory": "12Q"}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"memory: invalid quantity "12Q": unknown suffix "Q""#
        );
        assert!(serde_json::from_value::<ResourceList>(serde_json::json!({"cpu": 0.5})).is_err());
        assert!(
            serde_json::from_value::<ResourceList>(serde_json::json!({"cpu": u64::MAX})).is_err()
        );
    }

    #[test]
    fn debug_is_human() {
        let l = list(&[("cpu", 500), ("memory", 2_147_483_648_000)]);
        assert_eq!(format!("{l:?}"), r#"{"cpu": 500m, "memory": 2Gi}"#);
    }

    fn amounts() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(0i64),
            -5i64..5,
            any::<i64>(),
            (0i64..1 << 40).prop_map(|v| v * 1000)
        ]
    }

    fn lists() -> impl Strategy<Value = ResourceList> {
        let names = prop_oneof![
            Just("cpu"),
            Just("memory"),
            Just("pods"),
            Just("ephemeral-storage"),
            Just("nvidia.com/gpu"),
            Just("amd.com/gpu"),
            Just("hugepages-2Mi"),
        ];
        proptest::collection::vec((names, amounts()), 0..8).prop_map(|entries| list(&entries))
    }

    const NAMES: [&str; 8] = [
        "cpu",
        "memory",
        "pods",
        "ephemeral-storage",
        "nvidia.com/gpu",
        "amd.com/gpu",
        "hugepages-2Mi",
        "unused.io/x",
    ];

    proptest! {
        #[test]
        fn add_then_sub_round_trips(a in lists(), b in lists()) {
            if let Some(sum) = a.checked_add(&b) {
                prop_assert_eq!(sum.checked_sub(&b), Some(a.clone()));
                prop_assert_eq!(&a + &b, sum);
            }
        }

        #[test]
        fn operations_agree_with_per_resource_math(a in lists(), b in lists()) {
            let sum = &a + &b;
            let max = a.max(&b);
            let diff = a.saturating_sub(&b);
            for name in NAMES {
                prop_assert_eq!(sum.get(name), a.get(name).saturating_add(b.get(name)));
                prop_assert_eq!(max.get(name), a.get(name).max(b.get(name)));
                prop_assert_eq!(diff.get(name), a.get(name).saturating_sub(b.get(name)));
            }
        }

        #[test]
        fn fits_is_per_resource_comparison(req in lists(), alloc in lists()) {
            let expected = NAMES.iter().all(|&n| alloc.get(n) >= 0 && req.get(n) <= alloc.get(n));
            prop_assert_eq!(req.fits(&alloc), expected);
            let exceeding: Vec<_> = req.exceeding(&alloc).collect();
            let expected_exceeding: Vec<_> = req
                .pairs(&alloc)
                .map(|(n, _, _)| n)
                .filter(|&n| alloc.get(n) < 0 || req.get(n) > alloc.get(n))
                .collect();
            prop_assert_eq!(exceeding, expected_exceeding);
        }

        #[test]
        fn serde_round_trips(l in lists()) {
            let json = serde_json::to_string(&l).unwrap();
            prop_assert_eq!(serde_json::from_str::<ResourceList>(&json).unwrap(), l);
        }

        #[test]
        fn equal_lists_hash_equal(entries in proptest::collection::vec((0usize..NAMES.len(), amounts()), 0..8)) {
            use std::hash::{BuildHasher, RandomState};
            // Built in two different orders: same content, same hash.
            let named: Vec<_> = entries.iter().filter_map(|&(i, v)| NAMES.get(i).map(|&n| (n, v))).collect();
            let forward = list(&named);
            let mut reversed = ResourceList::new();
            for &(name, _) in named.iter().rev() {
                reversed.set(name, forward.get(name));
            }
            prop_assert_eq!(&forward, &reversed);
            let state = RandomState::new();
            prop_assert_eq!(state.hash_one(&forward), state.hash_one(&reversed));
        }
    }
}
