//! The value-greedy strategy: every item is worth what the fluid optimum
//! charges it (its request at the unit prices of the LP's dual, `dual.rs`, on
//! the cheapest kind it fits), and nodes are bought one at a time, each time
//! the node that buys the most worth per unit of price.
//!
//! Why this rounds the fluid mix well: the dual prices say what every item
//! is worth on every kind, so a node whose whole-item filling falls short of
//! its price (a big node for a small remainder, a small node its items fill
//! unevenly) loses to one that fills well, whatever its size. The fluid
//! optimum is what a perfect filling of the LP's own kinds would reach.
//!
//! A node is filled item by item: of the items left that fit, the one whose
//! request points most along the node's free room (the dot product, each
//! resource as a part of the node) goes in, which keeps the node's free
//! room balanced. Items are kept in cells of alike requests (each resource
//! on a logarithmic scale), so a fill looks at one item per cell rather than
//! at every item.

use super::bins::{Kind, Open, cheapest_holding, fits, total};
use super::packer::{Packer, classes};
use crate::fast_hash::HashMap;
use crate::provisioning::optimise::dual::{Column, Demand, unit_prices};

/// Cells per doubling of a resource: requests in one cell differ by less
/// than twice in each resource. (Finer cells packed no better in the packing
/// report and took longer: a fill visits every cell for each item it takes.)
const STEPS_PER_DOUBLING: f64 = 1.0;

/// Every kind's filling is measured afresh before every this many nodes
/// bought; in between, only the shortlist's. (Measuring all of them every
/// time costs about twice as long at 20,000 pods and buys nothing measurable
/// in the packing report.)
const REMEASURE_ALL_EVERY: usize = 8;

/// The kinds with the best last ratios, measured afresh and competing for
/// each node bought between the full measurements.
const SHORTLIST: usize = 8;

/// The items left to place, in cells of alike requests.
struct Cells {
    /// Each cell's items, largest first; placed items are dropped on commit.
    items: Vec<Vec<usize>>,
    /// Each cell's least amount of each resource: a fill skips a cell whose
    /// least does not fit.
    least: Vec<Vec<i64>>,
}

impl Cells {
    fn new(items: &[Vec<i64>], order: &[usize]) -> Cells {
        let mut index: HashMap<Vec<i32>, usize> = HashMap::default();
        let mut cells = Cells {
            items: Vec::new(),
            least: Vec::new(),
        };
        // `order` is largest first, so each cell's items are too.
        for &i in order {
            let key: Vec<i32> = items[i]
                .iter()
                .map(|&a| {
                    if a <= 0 {
                        -1
                    } else {
                        ((a as f64).log2() * STEPS_PER_DOUBLING) as i32
                    }
                })
                .collect();
            let next = cells.items.len();
            let c = *index.entry(key).or_insert(next);
            if c == next {
                cells.items.push(Vec::new());
                cells.least.push(items[i].clone());
            }
            cells.items[c].push(i);
            for (least, &a) in cells.least[c].iter_mut().zip(&items[i]) {
                *least = (*least).min(a);
            }
        }
        cells
    }

    fn is_empty(&self) -> bool {
        self.items.iter().all(Vec::is_empty)
    }

    /// Fills a node of `kind` from the items left: each time, of each cell's
    /// largest item that fits (and is not already `taken` by this fill), the
    /// one pointing most along the free room. Returns the items taken, in
    /// order; `taken` marks them.
    fn fill(&self, kind: &Kind, items: &[Vec<i64>], taken: &mut [bool]) -> Vec<usize> {
        let capacity: Vec<f64> = kind.capacity.iter().map(|&c| c.max(1) as f64).collect();
        let mut free = kind.capacity.clone();
        let mut chosen = Vec::new();
        // Per cell, how many of its leading items are out of this fill: the
        // free room only shrinks, so an item that no longer fits never will.
        let mut skipped = vec![0; self.items.len()];
        loop {
            let mut best: Option<(f64, usize)> = None;
            for ((cell, least), skip) in self.items.iter().zip(&self.least).zip(&mut skipped) {
                if *skip >= cell.len() || !fits(least, &free) {
                    continue;
                }
                while *skip < cell.len()
                    && (taken[cell[*skip]] || !fits(&items[cell[*skip]], &free))
                {
                    *skip += 1;
                }
                // What the skipping stopped at is the largest item that fits.
                let Some(&i) = cell.get(*skip) else {
                    continue;
                };
                let score: f64 = items[i]
                    .iter()
                    .zip(&free)
                    .zip(&capacity)
                    .map(|((&r, &f), c)| (r as f64 / c) * (f as f64 / c))
                    .sum();
                if best.is_none_or(|(s, b)| score > s || (score == s && i < b)) {
                    best = Some((score, i));
                }
            }
            let Some((_, i)) = best else {
                return chosen;
            };
            taken[i] = true;
            free.iter_mut().zip(&items[i]).for_each(|(f, r)| *f -= r);
            chosen.push(i);
        }
    }

    /// Drops the items a committed node took.
    fn remove(&mut self, placed: &[bool]) {
        for cell in &mut self.items {
            cell.retain(|&i| !placed[i]);
        }
    }
}

impl Packer<'_> {
    /// What each item is worth: its request at the unit prices of the fluid
    /// LP's dual on the cheapest useful kind it fits. `None` when the LP
    /// fails.
    pub(super) fn item_values(&self) -> Option<Vec<f64>> {
        let (items, kinds) = (self.items, &self.useful_kinds);
        let classes = classes(items, &self.largest_first, kinds, Some(&self.scale));
        let scaled = |amounts: &[i64]| -> Vec<f64> {
            amounts
                .iter()
                .zip(&self.scale)
                .map(|(&a, s)| a.max(0) as f64 / s)
                .collect()
        };
        let demands: Vec<Demand> = classes
            .iter()
            .map(|class| Demand {
                prices: class.fits.iter().map(|&k| (k, kinds[k].price)).collect(),
                amounts: scaled(&class.demand),
            })
            .collect();
        let columns: Vec<Column> = kinds
            .iter()
            .enumerate()
            .map(|(k, kind)| Column {
                instance_type: k,
                price: kind.price,
            })
            .collect();
        let capacities: Vec<Vec<f64>> = kinds.iter().map(|k| scaled(&k.capacity)).collect();
        let weights = unit_prices(&demands, &columns, &capacities)?;
        Some(
            items
                .iter()
                .map(|request| {
                    let amounts = scaled(request);
                    (0..kinds.len())
                        .filter(|&k| fits(request, &kinds[k].capacity))
                        .map(|k| weights[k].iter().zip(&amounts).map(|(w, r)| w * r).sum())
                        .fold(f64::INFINITY, f64::min)
                })
                .map(|v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 })
                .collect(),
        )
    }

    /// Value-greedy (see the module documentation): nodes bought one at a
    /// time, each the kind whose filling is worth the most per unit of its
    /// price (shrunk to the cheapest kind holding what it took). A kind's
    /// filling is measured again only once a bought node took one of its
    /// items (until then the same items are left to it, so the same filling
    /// stands), and only the shortlist competes between full measurements.
    pub(super) fn by_value(&self) -> Option<Vec<Open>> {
        let (items, kinds) = (self.items, self.kinds);
        let worth = self.item_values()?;
        let mut cells = Cells::new(items, &self.largest_first);
        let mut placed = vec![false; items.len()];
        // Each useful kind's filling, measured or not yet; `None` once it
        // holds nothing of what is left.
        let mut fillings: Vec<Option<Filling>> = vec![Some(Filling::default()); self.useful.len()];
        let mut open: Vec<Open> = Vec::new();
        while !cells.is_empty() {
            let mut shortlist = if open.len().is_multiple_of(REMEASURE_ALL_EVERY) {
                (0..fillings.len()).collect()
            } else {
                top(&fillings, SHORTLIST)
            };
            self.measure(&mut fillings, &shortlist, &cells, &placed, &worth);
            if best_filling(&fillings, &shortlist).is_none() {
                // The shortlist holds none of the items left: all compete.
                shortlist = (0..fillings.len()).collect();
                self.measure(&mut fillings, &shortlist, &cells, &placed, &worth);
            }
            // Every item fits some useful kind, so some kind holds one.
            let best = best_filling(&fillings, &shortlist)?;
            let filling = fillings[best].as_ref()?;
            let mut bin = Open::new(filling.kind, kinds);
            for &i in &filling.items {
                bin.take(i, &items[i]);
                placed[i] = true;
            }
            cells.remove(&placed);
            open.push(bin);
        }
        Some(open)
    }

    /// Measures the shortlisted kinds' fillings that are not measured yet or
    /// lost an item to a bought node; a kind that holds none of the items
    /// left drops out (`None`).
    fn measure(
        &self,
        fillings: &mut [Option<Filling>],
        shortlist: &[usize],
        cells: &Cells,
        placed: &[bool],
        worth: &[f64],
    ) {
        let (items, kinds) = (self.items, self.kinds);
        let mut taken = vec![false; items.len()];
        for &u in shortlist {
            let filling = &mut fillings[u];
            let Some(f) = filling else { continue };
            if f.measured && !f.items.iter().any(|&i| placed[i]) {
                continue;
            }
            let chosen = cells.fill(&kinds[self.useful[u]], items, &mut taken);
            chosen.iter().for_each(|&i| taken[i] = false);
            if chosen.is_empty() {
                *filling = None;
                continue;
            }
            let used = total(items, &chosen, self.scale.len());
            let kind = cheapest_holding(kinds, &self.by_price, &used);
            let value: f64 = chosen.iter().map(|&i| worth[i]).sum();
            *f = Filling {
                measured: true,
                ratio: value / kinds[kind].price.max(1e-12),
                items: chosen,
                kind,
            };
        }
    }
}

/// A kind's filling from the items left: the items it took, the kind it
/// shrank to, and their worth per unit of that kind's price.
#[derive(Clone, Debug, Default)]
struct Filling {
    measured: bool,
    ratio: f64,
    items: Vec<usize>,
    kind: usize,
}

/// The `n` kinds with the best last ratios (the lowest index on a tie).
fn top(fillings: &[Option<Filling>], n: usize) -> Vec<usize> {
    let mut ranked: Vec<(usize, f64)> = fillings
        .iter()
        .enumerate()
        .filter_map(|(u, f)| f.as_ref().map(|f| (u, f.ratio)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(n).map(|(u, _)| u).collect()
}

/// Of the shortlisted kinds, the filling with the best ratio (the lowest
/// index on a tie).
fn best_filling(fillings: &[Option<Filling>], shortlist: &[usize]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for &u in shortlist {
        if let Some(f) = &fillings[u]
            && best.is_none_or(|(_, b)| f.ratio > b)
        {
            best = Some((u, f.ratio));
        }
    }
    best.map(|(u, _)| u)
}
