//! What the overlays set, per NodePool and instance type, as upstream's
//! `internalInstanceTypeStore` records it: for each offering, the price
//! change that won and the lowest weight that has touched it since; for each
//! type, the merged capacity and the resources of the lowest weight that
//! named any. Conflicts are judged against those lowest weights, which
//! works because overlays arrive in descending weight.

use std::collections::BTreeMap;

use crate::cloudprovider::{InstanceType, OfferingFilter};
use crate::scheduling::{NODE_POOL_LABEL_KEY, Requirement, Requirements, WellKnownLabels};
use crate::snapshot::Snapshot;

use super::OverlayVerdict;
use super::price::PriceChange;
use super::validate::Checked;

/// The overlays' changes to a snapshot's instance types.
pub(super) struct Store<'s> {
    pools: Vec<Pool<'s>>,
}

/// One NodePool's instance types and what the overlays set on them.
struct Pool<'s> {
    name: &'s str,
    types: &'s [InstanceType],
    /// Each type's requirements with `karpenter.sh/nodepool` and the
    /// template labels, as upstream matches them against an overlay's:
    /// built once, read by every overlay.
    matched: Vec<Requirements>,
    /// By index in `types`.
    updates: BTreeMap<usize, TypeUpdate>,
}

#[derive(Default)]
struct TypeUpdate {
    /// By offering index.
    prices: BTreeMap<usize, PriceUpdate>,
    capacity: Option<CapacityUpdate>,
}

struct PriceUpdate {
    change: PriceChange,
    /// The weight of the last overlay that selected the offering, and its name.
    lowest: (i32, String),
}

struct CapacityUpdate {
    /// The merged resources: the first overlay to name one wins it.
    merged: BTreeMap<String, i64>,
    /// The resources of the last overlay that added capacity, its weight
    /// and name.
    lowest_resources: Vec<String>,
    lowest: (i32, String),
}

/// An overlay's reach in one pool: a type and the offerings it selects.
struct Selected {
    pool: usize,
    ty: usize,
    offerings: Vec<usize>,
}

impl<'s> Store<'s> {
    /// An empty store over `snapshot`'s NodePools and their instance types.
    pub(super) fn new(snapshot: &'s Snapshot) -> Store<'s> {
        let pools = snapshot
            .node_pools
            .iter()
            .filter_map(|pool| {
                let name = pool.metadata.name.as_deref()?;
                let types = snapshot.instance_types.get(name)?;
                let labels = (pool.spec.template.metadata.iter())
                    .flat_map(|metadata| metadata.labels.iter().flatten());
                let mut base = Requirements::from_labels(labels);
                base.add(Requirement::in_values(NODE_POOL_LABEL_KEY, [name]));
                let matched = (types.iter())
                    .map(|t| {
                        let mut own = base.clone();
                        own.add_all(&t.requirements);
                        own
                    })
                    .collect();
                Some(Pool {
                    name,
                    types,
                    matched,
                    updates: BTreeMap::new(),
                })
            })
            .collect();
        Store { pools }
    }

    /// Adds one valid overlay (in upstream's order), unless it conflicts
    /// with one taken before it.
    pub(super) fn add(&mut self, name: &str, weight: i32, overlay: &Checked) -> OverlayVerdict {
        let selected = self.selected(&overlay.requirements);
        if let Some(with) = self.conflict(&selected, weight, overlay) {
            return OverlayVerdict::Conflict { with };
        }
        for Selected {
            pool,
            ty,
            offerings,
        } in &selected
        {
            let update = self.pools[*pool].updates.entry(*ty).or_default();
            if let Some(change) = overlay.price {
                for offering in offerings {
                    let lowest = (weight, name.to_owned());
                    update
                        .prices
                        .entry(*offering)
                        .and_modify(|set| set.lowest = lowest.clone())
                        .or_insert(PriceUpdate { change, lowest });
                }
            }
            if let Some(capacity) = &overlay.capacity {
                let names = capacity.iter().map(|(name, _)| name.clone()).collect();
                let lowest = (weight, name.to_owned());
                match &mut update.capacity {
                    None => {
                        update.capacity = Some(CapacityUpdate {
                            merged: capacity.iter().cloned().collect(),
                            lowest_resources: names,
                            lowest,
                        });
                    }
                    Some(set) => {
                        for (resource, milli) in capacity {
                            set.merged.entry(resource.clone()).or_insert(*milli);
                        }
                        set.lowest_resources = names;
                        set.lowest = lowest;
                    }
                }
            }
        }
        OverlayVerdict::Applied {
            instance_types: selected.len(),
        }
    }

    /// Each NodePool's instance types with the overlays applied, for the
    /// pools any overlay changed.
    pub(super) fn into_changed_types(self) -> Vec<(String, Vec<InstanceType>)> {
        self.pools
            .into_iter()
            .filter(|pool| !pool.updates.is_empty())
            .map(|pool| {
                let mut types = pool.types.to_vec();
                for (ty, update) in pool.updates {
                    let instance_type = &mut types[ty];
                    if let Some(capacity) = update.capacity {
                        for (resource, milli) in capacity.merged {
                            instance_type.capacity.set(&resource, milli);
                        }
                    }
                    for (offering, price) in update.prices {
                        let offering = &mut instance_type.offerings[offering];
                        offering.price = price.change.apply(offering.price);
                    }
                }
                (pool.name.to_owned(), types)
            })
            .collect()
    }

    /// The types (and their offerings) `requirements` select, pool by pool
    /// (upstream's `getOverlaidOfferings`).
    fn selected(&self, requirements: &Requirements) -> Vec<Selected> {
        let strict = WellKnownLabels::empty();
        let filter = OfferingFilter::new(requirements);
        let mut selected = Vec::new();
        for (at, pool) in self.pools.iter().enumerate() {
            for (ty, instance_type) in pool.types.iter().enumerate() {
                if !pool.matched[ty].is_compatible(requirements, &strict) {
                    continue;
                }
                let offerings: Vec<usize> = (instance_type.offerings.iter().enumerate())
                    .filter(|(_, offering)| filter.admits(offering))
                    .map(|(index, _)| index)
                    .collect();
                if !offerings.is_empty() {
                    selected.push(Selected {
                        pool: at,
                        ty,
                        offerings,
                    });
                }
            }
        }
        selected
    }

    /// The overlay of the same weight taken before that already sets what
    /// this one would, if any.
    fn conflict(&self, selected: &[Selected], weight: i32, overlay: &Checked) -> Option<String> {
        for Selected {
            pool,
            ty,
            offerings,
        } in selected
        {
            let Some(update) = self.pools[*pool].updates.get(ty) else {
                continue;
            };
            if overlay.price.is_some() {
                let same_weight = offerings
                    .iter()
                    .filter_map(|offering| update.prices.get(offering))
                    .find(|set| set.lowest.0 == weight);
                if let Some(set) = same_weight {
                    return Some(set.lowest.1.clone());
                }
            }
            if let (Some(capacity), Some(set)) = (&overlay.capacity, &update.capacity)
                && set.lowest.0 == weight
                && capacity
                    .iter()
                    .any(|(resource, _)| set.lowest_resources.contains(resource))
            {
                return Some(set.lowest.1.clone());
            }
        }
        None
    }
}
