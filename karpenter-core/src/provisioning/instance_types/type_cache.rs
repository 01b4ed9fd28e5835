//! What a NodePool's instance types answer to a claim's requirements, worked out
//! once per distinct requirement and kept as sets of types.
//!
//! Narrowing a claim's types after each pod asks, of up to hundreds of types,
//! whether their labels meet the claim's requirements and whether an available
//! offering is allowed; finalizing asks each type's cheapest allowed offering.
//! The answers depend on few inputs: compatibility is decided key by key (a
//! type conflicts with requirements when, on some key both define, their values
//! do not intersect), and offerings are matched on the zone and capacity-type
//! requirements and on the keys some offering further requires (none for most
//! providers; Azure's priority and placement scope). A run meets few distinct
//! requirements per key (the pool's, a handful of zones), so each is answered
//! for every type once, as a [`TypeSet`], and a claim's answer is the
//! intersection of its keys' sets.
//!
//! The answers are kept in [`GrowOnly`] memos: a disruption pass shares its
//! templates, and so these caches, between simulations that may run on
//! several threads, and the scheduler reads them for every claim a pod tries,
//! without a lock.

use std::sync::Arc;

use crate::cloudprovider::{InstanceType, Offering, OfferingFilter};
use crate::memo::GrowOnly;
use crate::scheduling::{Requirement, Requirements};

/// A set of instance types (indices into a pool's types), as bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TypeSet(Vec<u64>);

impl TypeSet {
    /// Every type of `len`.
    pub(crate) fn full(len: usize) -> TypeSet {
        let mut words = vec![u64::MAX; len.div_ceil(64)];
        if let Some(last) = words.last_mut()
            && !len.is_multiple_of(64)
        {
            *last = (1 << (len % 64)) - 1;
        }
        TypeSet(words)
    }

    /// No type, with room for `len`.
    pub(crate) fn empty(len: usize) -> TypeSet {
        TypeSet(vec![0; len.div_ceil(64)])
    }

    /// The types of `indices` (each below `len`).
    pub(crate) fn of(len: usize, indices: &[usize]) -> TypeSet {
        let mut set = TypeSet::empty(len);
        indices.iter().for_each(|&t| set.insert(t));
        set
    }

    /// The types in the set, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(word, &bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let bit = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    word * 64 + bit
                })
            })
        })
    }

    /// Whether the set has no type.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    pub(crate) fn remove(&mut self, t: usize) {
        if let Some(word) = self.0.get_mut(t / 64) {
            *word &= !(1 << (t % 64));
        }
    }

    /// Removes every type of `other`.
    pub(crate) fn remove_all(&mut self, other: &TypeSet) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= !b);
    }

    pub(crate) fn insert(&mut self, t: usize) {
        self.0[t / 64] |= 1 << (t % 64);
    }

    pub(crate) fn contains(&self, t: usize) -> bool {
        self.0.get(t / 64).is_some_and(|w| w & (1 << (t % 64)) != 0)
    }

    /// Adds every type `other` lacks (beyond `other`'s length too).
    pub(crate) fn add_complement_of(&mut self, other: &TypeSet) {
        for (i, word) in self.0.iter_mut().enumerate() {
            *word |= !other.0.get(i).copied().unwrap_or(0);
        }
    }

    /// Keeps only the types `other` has too.
    pub(crate) fn intersect_with(&mut self, other: &TypeSet) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= b);
    }
}

/// What one zone and capacity-type requirement pair, with the requirements on
/// the keys offerings further require, allows of each type's offerings.
#[derive(Debug)]
pub(crate) struct OfferingView {
    zone: Option<Requirement>,
    capacity_type: Option<Requirement>,
    /// The requirements on the keys some offering further requires.
    further: Requirements,
    /// The types with an available offering the pair allows.
    pub(crate) available: TypeSet,
    /// Each type's cheapest available allowed offering (an index into its
    /// offerings), by price, then zone, then capacity type.
    pub(crate) cheapest: Vec<Option<usize>>,
    /// Every type, by the price of its cheapest offering (types without one
    /// last), then name, then index: the order a claim lists its types in.
    pub(crate) by_price: Vec<usize>,
    /// The capacity types of each type's available allowed offerings, as bits
    /// over [`TypeCache::capacity_types`].
    pub(crate) capacity_types: Vec<u64>,
}

impl OfferingView {
    fn new(
        types: &[InstanceType],
        capacity_names: &[&str],
        filter: &OfferingFilter<'_>,
        further: Requirements,
    ) -> Self {
        let mut available = TypeSet::empty(types.len());
        let mut cheapest = Vec::with_capacity(types.len());
        let mut capacity_types = Vec::with_capacity(types.len());
        for (t, instance_type) in types.iter().enumerate() {
            let mut best: Option<(usize, &Offering)> = None;
            let mut mask = 0_u64;
            for (i, offering) in instance_type.offerings.iter().enumerate() {
                if !filter.admits_available(offering) {
                    continue;
                }
                if let Ok(bit) = capacity_names.binary_search(&offering.capacity_type.as_str())
                    && bit < 64
                {
                    mask |= 1 << bit;
                }
                if best.is_none_or(|(_, b)| crate::cloudprovider::cheaper(offering, b).is_lt()) {
                    best = Some((i, offering));
                }
            }
            if best.is_some() {
                available.insert(t);
            }
            cheapest.push(best.map(|(i, _)| i));
            capacity_types.push(mask);
        }
        let price = |t: usize| cheapest[t].map_or(f64::INFINITY, |i| types[t].offerings[i].price);
        let mut by_price: Vec<usize> = (0..types.len()).collect();
        by_price.sort_by(|&a, &b| {
            price(a)
                .total_cmp(&price(b))
                .then_with(|| types[a].name.cmp(&types[b].name))
                .then(a.cmp(&b))
        });
        OfferingView {
            zone: filter.zone().cloned(),
            capacity_type: filter.capacity_type().cloned(),
            further,
            available,
            cheapest,
            by_price,
            capacity_types,
        }
    }

    fn answers(&self, filter: &OfferingFilter<'_>, further: &Requirements) -> bool {
        self.zone.as_ref() == filter.zone()
            && self.capacity_type.as_ref() == filter.capacity_type()
            && self.further == *further
    }
}

/// The answers about one pool's instance types, filled in as requirements come.
#[derive(Debug)]
pub(crate) struct TypeCache {
    len: usize,
    /// The keys some type's requirements define, ascending.
    type_keys: Vec<Arc<str>>,
    /// Every type, by name (then index).
    pub(crate) by_name: Vec<usize>,
    /// Each type's name, the table the plan's name lists pick from.
    pub(crate) names: Arc<[Arc<str>]>,
    /// The distinct capacity types of all offerings, ascending. Masks tell
    /// apart the first 64 (see [`masks_cover`](Self::masks_cover)).
    capacity_types: Vec<String>,
    /// The keys some offering further requires, ascending.
    offering_keys: Vec<Arc<str>>,
    /// For each requirement met on a type key: the types it does not conflict
    /// with.
    compatible: GrowOnly<(Requirement, TypeSet)>,
    offerings: GrowOnly<OfferingView>,
}

/// The distinct strings of `keys`, sorted: a hash set sees each of the many
/// repeats once, and only the few distinct keys are sorted.
fn distinct<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<Arc<str>> {
    let mut set = crate::fast_hash::HashSet::default();
    set.extend(keys);
    let mut distinct: Vec<&str> = set.into_iter().collect();
    distinct.sort_unstable();
    distinct.into_iter().map(Arc::from).collect()
}

impl TypeCache {
    /// An empty cache for `types`.
    pub(crate) fn new(types: &[InstanceType]) -> TypeCache {
        // Types mostly share their keys (a provider's types carry the same
        // few dozen labels), so the distinct keys are gathered borrowed and
        // only those are allocated.
        let type_keys = distinct(types.iter().flat_map(|t| t.requirements.keys()));
        let mut capacity_types: Vec<String> = types
            .iter()
            .flat_map(|t| t.offerings.iter().map(|o| o.capacity_type.clone()))
            .collect();
        capacity_types.sort_unstable();
        capacity_types.dedup();
        let offering_keys = distinct(
            types
                .iter()
                .flat_map(|t| &t.offerings)
                .flat_map(|o| o.requirements.keys()),
        );
        let mut by_name: Vec<usize> = (0..types.len()).collect();
        by_name.sort_by(|&a, &b| types[a].name.cmp(&types[b].name).then(a.cmp(&b)));
        TypeCache {
            len: types.len(),
            by_name,
            names: types.iter().map(|t| Arc::from(t.name.as_str())).collect(),
            type_keys,
            capacity_types,
            offering_keys,
            compatible: GrowOnly::new(),
            offerings: GrowOnly::new(),
        }
    }

    /// The types whose requirements intersect `requirements` (as
    /// [`InstanceType::intersects`] decides).
    pub(crate) fn compatible(
        &self,
        types: &[InstanceType],
        requirements: &Requirements,
    ) -> TypeSet {
        let mut set = TypeSet::full(self.len);
        for requirement in requirements.iter() {
            let key = requirement.key();
            if self.type_keys.binary_search_by(|k| (**k).cmp(key)).is_err() {
                continue;
            }
            set.intersect_with(self.compatible_with(types, requirement));
        }
        set
    }

    fn compatible_with(&self, types: &[InstanceType], requirement: &Requirement) -> &TypeSet {
        let (_, set) = self.compatible.find_or_add(
            |(r, _)| r == requirement,
            || {
                let alone: Requirements = [requirement.clone()].into_iter().collect();
                let mut set = TypeSet::empty(self.len);
                for (t, instance_type) in types.iter().enumerate() {
                    if instance_type.intersects(&alone) {
                        set.insert(t);
                    }
                }
                (requirement.clone(), set)
            },
        );
        set
    }

    /// What the zone and capacity-type requirements of `requirements`, and
    /// those on the keys offerings further require, allow of the types'
    /// offerings.
    pub(crate) fn offerings(
        &self,
        types: &[InstanceType],
        requirements: &Requirements,
    ) -> &OfferingView {
        let filter = OfferingFilter::new(requirements);
        // An offering's further requirements meet only the claim's on the same
        // keys, so those (usually none) are all the view depends on beyond
        // the zone and capacity type.
        let further: Requirements = if self.offering_keys.is_empty() {
            Requirements::new()
        } else {
            requirements
                .iter()
                .filter(|r| {
                    self.offering_keys
                        .binary_search_by(|k| (**k).cmp(r.key()))
                        .is_ok()
                })
                .cloned()
                .collect()
        };
        self.offerings.find_or_add(
            |v| v.answers(&filter, &further),
            || {
                let names: Vec<&str> = self.capacity_types.iter().map(String::as_str).collect();
                OfferingView::new(types, &names, &filter, further.clone())
            },
        )
    }

    /// Whether the capacity-type masks name every capacity type: no more than
    /// 64 exist (otherwise the caller reads the offerings themselves).
    pub(crate) fn masks_cover(&self) -> bool {
        self.capacity_types.len() <= 64
    }

    /// The capacity types of a mask from [`OfferingView::capacity_types`],
    /// ascending.
    pub(crate) fn capacity_type_names(&self, mask: u64) -> impl Iterator<Item = &str> {
        self.capacity_types
            .iter()
            .enumerate()
            .take(64)
            .filter(move |(bit, _)| mask & (1 << bit) != 0)
            .map(|(_, name)| name.as_str())
    }
}

#[cfg(test)]
mod tests;
