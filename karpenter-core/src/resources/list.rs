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

    /// Whether some resource beyond the four fixed ones is negative: as an
    /// allocatable, one that holds nothing (see [`fits`](Self::fits)). An
    /// allocatable without such a resource holds requests of the four fixed
    /// resources alone by those four amounts.
    pub(crate) fn has_negative_extended(&self) -> bool {
        self.extended.iter().any(|(_, milli)| *milli < 0)
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
mod tests;
