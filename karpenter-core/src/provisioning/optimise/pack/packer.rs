//! Packing items (pods' requests) into bins (new nodes) of priced kinds
//! (instance types) at least cost: vector bin packing with bins of many sizes.
//!
//! The cheapest fractional mix of kinds for the items (an LP over classes of
//! items alike in the kinds they fit) is what a good plan approaches. Two
//! strategies round it:
//! - rounds ([`Packer::by_rounds`], `cheapest_mix`): the LP's whole nodes
//!   opened and each item, largest first, placed in the open bin whose free
//!   room points the most its way (the largest cosine, so that cpu-heavy
//!   items fill cpu-rich kinds and memory-heavy items memory-rich ones), the
//!   rest planned again until less than a node is left;
//! - value-greedy ([`Packer::by_value`], `greedy.rs`): every item worth its
//!   fluid price by the LP's dual, and nodes bought one at a time, the kind
//!   whose filling is worth most per unit of price first.
//!
//! Rounds does best where the kinds are few and alike (families with linear
//! prices); value-greedy where they are many and unalike (Azure's catalog,
//! whose cheapest capacity per unit comes in very large and very small
//! sizes). Each packing is tidied
//! (`tidy.rs`: bins shrunk to the cheapest kind holding them, dear bins
//! split, spare bins closed), the cheapest wins, and its bins are merged in
//! pairs wherever one node costs less than two.

use super::bins::{Bin, Kind, Open, cheapest_holding, fits, total};
use super::mix::{Class, cheapest_mix};
use super::tidy::{close_spare_bins, merge_pairs, split_dear_bins};

/// Packs every item into bins of the given kinds (each item a vector of
/// requests, in the kinds' resource order), trying to minimise the bins'
/// total price. `None` when some item fits no kind, or the LP fails.
/// Deterministic: ties go to the lower index.
pub(crate) fn pack(items: &[Vec<i64>], kinds: &[Kind]) -> Option<Vec<Bin>> {
    if items.is_empty() {
        return Some(Vec::new());
    }
    let packer = Packer::new(items, kinds)?;
    let mut best = packer.best()?;
    merge_pairs(&mut best, kinds, &packer.by_price);
    Some(
        best.into_iter()
            .map(|b| Bin {
                kind: b.kind,
                items: b.items,
            })
            .collect(),
    )
}

/// The total price of bins.
pub(super) fn price_of(open: &[Open], kinds: &[Kind]) -> f64 {
    open.iter().map(|b| kinds[b.kind].price).sum()
}

/// What the packing strategies share.
pub(super) struct Packer<'a> {
    pub(super) items: &'a [Vec<i64>],
    pub(super) kinds: &'a [Kind],
    /// The kinds no other beats (see [`undominated`]).
    pub(super) useful: Vec<usize>,
    /// The same kinds, themselves, for the LP.
    pub(super) useful_kinds: Vec<Kind>,
    /// The useful kinds by price (then index): the order every search for
    /// the cheapest kind that holds something goes in.
    pub(super) by_price: Vec<usize>,
    /// Each resource's largest amount on a useful kind: what makes resources
    /// comparable.
    pub(super) scale: Vec<f64>,
    /// The items, largest (in their largest scaled resource) first.
    pub(super) largest_first: Vec<usize>,
}

impl<'a> Packer<'a> {
    /// `None` when some item fits no kind.
    pub(super) fn new(items: &'a [Vec<i64>], kinds: &'a [Kind]) -> Option<Packer<'a>> {
        let useful = undominated(kinds);
        if items
            .iter()
            .any(|r| !useful.iter().any(|&k| fits(r, &kinds[k].capacity)))
        {
            return None;
        }
        let dims = kinds.first().map_or(0, |k| k.capacity.len());
        let scale: Vec<f64> = (0..dims)
            .map(|d| {
                let most = useful.iter().map(|&k| kinds[k].capacity[d]).max();
                most.unwrap_or(0).max(1) as f64
            })
            .collect();
        let size = |i: usize| {
            (0..dims)
                .map(|d| items[i][d] as f64 / scale[d])
                .fold(0.0, f64::max)
        };
        let mut largest_first: Vec<usize> = (0..items.len()).collect();
        largest_first.sort_by(|&a, &b| size(b).total_cmp(&size(a)).then(a.cmp(&b)));
        let useful_kinds = useful.iter().map(|&k| kinds[k].clone()).collect();
        let mut by_price = useful.clone();
        by_price.sort_by(|&a, &b| kinds[a].price.total_cmp(&kinds[b].price).then(a.cmp(&b)));
        Some(Packer {
            items,
            kinds,
            useful,
            useful_kinds,
            by_price,
            scale,
            largest_first,
        })
    }

    /// The cheapest of the strategies' packings, finished.
    pub(super) fn best(&self) -> Option<Vec<Open>> {
        let kinds = self.kinds;
        // Two ways of following the LP; each does better on some catalogs, so
        // both run and the cheaper packing wins.
        let packings = [self.by_rounds(), self.by_value()];
        packings
            .into_iter()
            .flatten()
            .map(|open| self.finish(open))
            .fold(None, |best: Option<Vec<Open>>, open| match best {
                Some(b) if price_of(&b, kinds) <= price_of(&open, kinds) => Some(b),
                _ => Some(open),
            })
    }

    /// Rounds: the LP's whole nodes are opened and every item goes to the
    /// open bin whose free room points the most its way; what is left is
    /// planned again, until less than a node's worth remains.
    pub(super) fn by_rounds(&self) -> Option<Vec<Open>> {
        let (items, kinds) = (self.items, self.kinds);
        let mut rest = self.largest_first.clone();
        let mut open: Vec<Open> = Vec::new();
        while let Some(&first) = rest.first() {
            let classes = classes(items, &rest, &self.useful_kinds, None);
            let mix = cheapest_mix(&classes, &self.useful_kinds)?;
            let mut planned: Vec<usize> = Vec::new();
            for (u, x) in mix.nodes.iter().enumerate() {
                // Whole nodes only; a hair under a whole one counts as one.
                let whole = (x + 1e-6).floor() as usize;
                planned.extend(std::iter::repeat_n(self.useful[u], whole));
            }
            if planned.is_empty() {
                let demand = total(items, &rest, self.scale.len());
                planned = self.last_nodes(&mix.nodes, &demand, first);
            }
            open.extend(planned.into_iter().map(|kind| Open::new(kind, kinds)));
            let before = rest.len();
            rest = place(rest, &mut open, items, &self.scale);
            if rest.len() == before {
                // Nothing fitted (the mix's nodes are too small for the items
                // left): a node of the cheapest kind the first one fits in.
                let kind = cheapest_holding(kinds, &self.by_price, &items[first]);
                open.push(Open::new(kind, kinds));
                rest = place(rest, &mut open, items, &self.scale);
            }
        }
        Some(open)
    }

    /// The nodes for what is left when the mix wants less than a whole one
    /// of every kind: the cheapest kind that holds it all, or one node of
    /// each kind the mix wants some of (those the first item fits),
    /// whichever costs less.
    pub(super) fn last_nodes(&self, mix: &[f64], demand: &[i64], first: usize) -> Vec<usize> {
        let (items, kinds) = (self.items, self.kinds);
        let one = self
            .by_price
            .iter()
            .copied()
            .find(|&k| fits(demand, &kinds[k].capacity));
        let each: Vec<usize> = self
            .useful
            .iter()
            .zip(mix)
            .filter(|&(&k, &x)| x > 1e-9 && fits(&items[first], &kinds[k].capacity))
            .map(|(&k, _)| k)
            .collect();
        let price = |ks: &[usize]| ks.iter().map(|&k| kinds[k].price).sum::<f64>();
        match one {
            Some(k) if each.is_empty() || kinds[k].price <= price(&each) => vec![k],
            _ if !each.is_empty() => each,
            _ => vec![cheapest_holding(kinds, &self.by_price, &items[first])],
        }
    }

    /// The clean-up after each strategy: every bin becomes the cheapest kind
    /// that holds what it took; bins dearer than their items alone are split;
    /// bins whose items fit in the others' free room are closed. (Pairs of
    /// bins are merged after, on the winning packing only.)
    pub(super) fn finish(&self, mut open: Vec<Open>) -> Vec<Open> {
        let kinds = self.kinds;
        open.retain(|b| !b.items.is_empty());
        for bin in &mut open {
            let used = bin.used(kinds);
            let kind = cheapest_holding(kinds, &self.by_price, &used);
            bin.resize(kind, kinds);
        }
        split_dear_bins(&mut open, self.items, kinds, &self.by_price);
        close_spare_bins(&mut open, self.items, kinds);
        open
    }
}

/// Places each item (in the order given) in the open bin whose free room
/// points the most its way; returns the items no open bin holds, in order.
fn place(rest: Vec<usize>, open: &mut [Open], items: &[Vec<i64>], scale: &[f64]) -> Vec<usize> {
    let mut left = Vec::new();
    for i in rest {
        let request = &items[i];
        let mut best: Option<(usize, f64)> = None;
        for (b, bin) in open.iter().enumerate() {
            if !fits(request, &bin.free) {
                continue;
            }
            let score = cosine(request, &bin.free, scale);
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((b, score));
            }
        }
        match best {
            Some((b, _)) => open[b].take(i, request),
            None => left.push(i),
        }
    }
    left
}

/// The cosine of the angle between a request and a bin's free room, each
/// resource divided by its scale.
fn cosine(request: &[i64], free: &[i64], scale: &[f64]) -> f64 {
    let (mut dot, mut rr, mut ff) = (0.0, 0.0, 0.0);
    for ((&r, &f), &s) in request.iter().zip(free).zip(scale) {
        let (r, f) = (r as f64 / s, f as f64 / s);
        dot += r * f;
        rr += r * r;
        ff += f * f;
    }
    if rr == 0.0 || ff == 0.0 {
        return 0.0;
    }
    dot / (rr.sqrt() * ff.sqrt())
}

/// The items of `rest` in classes by the kinds (indices into `kinds`) they
/// fit and, given the resources' scales, by their shape (each resource's
/// part of the item, in fifths), in order of first appearance.
pub(super) fn classes(
    items: &[Vec<i64>],
    rest: &[usize],
    kinds: &[Kind],
    shape_scale: Option<&[f64]>,
) -> Vec<Class> {
    let mut by_fits: crate::fast_hash::HashMap<(Vec<usize>, Vec<u8>), usize> = Default::default();
    let mut classes: Vec<Class> = Vec::new();
    for &i in rest {
        let fit: Vec<usize> = (0..kinds.len())
            .filter(|&k| fits(&items[i], &kinds[k].capacity))
            .collect();
        let shape = shape_scale.map_or_else(Vec::new, |scale| shape(&items[i], scale));
        let next = classes.len();
        let c = *by_fits.entry((fit.clone(), shape)).or_insert(next);
        if c == next {
            classes.push(Class {
                demand: vec![0; items[i].len()],
                fits: fit,
            });
        }
        let demand = &mut classes[c].demand;
        demand
            .iter_mut()
            .zip(&items[i])
            .for_each(|(s, r)| *s = s.saturating_add(*r));
    }
    classes
}

/// Each resource's part of the scaled request, rounded to fifths.
fn shape(request: &[i64], scale: &[f64]) -> Vec<u8> {
    let amounts: Vec<f64> = request.iter().map(|&r| r as f64).collect();
    crate::provisioning::optimise::dual::shape(&amounts, scale)
}

/// Kinds no other kind beats: none as cheap and at least as big everywhere
/// (ties kept once, at the lowest index).
pub(super) fn undominated(kinds: &[Kind]) -> Vec<usize> {
    (0..kinds.len())
        .filter(|&a| {
            !(0..kinds.len()).any(|b| {
                b != a
                    && kinds[b].price <= kinds[a].price
                    && fits(&kinds[a].capacity, &kinds[b].capacity)
                    && (kinds[b].price < kinds[a].price
                        || kinds[b].capacity != kinds[a].capacity
                        || b < a)
            })
        })
        .collect()
}
