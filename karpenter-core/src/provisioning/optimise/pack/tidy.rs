//! The clean-up of a packing: bins dearer than their items alone split,
//! bins whose items fit elsewhere closed, and pairs of bins merged into one
//! cheaper bin.

use super::bins::{Kind, Open, cheapest_holding, fits};

/// Splits every bin that costs more than its items would on nodes of their
/// own (a fractional mix can favour a big kind that, bought whole for a
/// small remainder, is dear) into a node per item.
pub(super) fn split_dear_bins(
    open: &mut Vec<Open>,
    items: &[Vec<i64>],
    kinds: &[Kind],
    by_price: &[usize],
) {
    let alone = |i: usize| kinds[cheapest_holding(kinds, by_price, &items[i])].price;
    let mut split = Vec::new();
    for bin in open.iter_mut() {
        let separately: f64 = bin.items.iter().map(|&i| alone(i)).sum();
        if separately < kinds[bin.kind].price {
            split.extend(std::mem::take(&mut bin.items));
        }
    }
    open.retain(|b| !b.items.is_empty());
    for i in split {
        let mut bin = Open::new(cheapest_holding(kinds, by_price, &items[i]), kinds);
        bin.take(i, &items[i]);
        open.push(bin);
    }
}

/// Closes bins whose items all fit in the other bins' free room, the
/// dearest first, moving each item to the bin it fits best (first fit by
/// the other bins' order).
pub(super) fn close_spare_bins(open: &mut Vec<Open>, items: &[Vec<i64>], kinds: &[Kind]) {
    let mut order: Vec<usize> = (0..open.len()).collect();
    order.sort_by(|&a, &b| {
        kinds[open[b].kind]
            .price
            .total_cmp(&kinds[open[a].kind].price)
            .then(a.cmp(&b))
    });
    let mut closed = vec![false; open.len()];
    for b in order {
        // Try to move every item of b elsewhere, on copies of the free room.
        let mut free: Vec<Option<Vec<i64>>> = vec![None; open.len()];
        let mut moves = Vec::with_capacity(open[b].items.len());
        let all_moved = open[b].items.iter().all(|&i| {
            let target = (0..open.len())
                .filter(|&o| o != b && !closed[o])
                .find(|&o| {
                    let room = free[o].get_or_insert_with(|| open[o].free.clone());
                    fits(&items[i], room)
                });
            if let Some(o) = target {
                if let Some(room) = free[o].as_mut() {
                    room.iter_mut().zip(&items[i]).for_each(|(f, r)| *f -= r);
                }
                moves.push((i, o));
            }
            target.is_some()
        });
        if !all_moved {
            continue;
        }
        for (i, o) in moves {
            open[o].take(i, &items[i]);
        }
        open[b].items.clear();
        closed[b] = true;
    }
    open.retain(|b| !b.items.is_empty());
}

/// Merges two bins into one whenever a single kind holds both for less than
/// the two cost: rounding leaves part-full nodes that another node, perhaps
/// of a larger kind, takes in whole. Bins are tried cheapest first, each
/// with the partner saving most, until a pass merges nothing (at most
/// [`MERGE_PASSES`]).
pub(super) fn merge_pairs(open: &mut Vec<Open>, kinds: &[Kind], by_price: &[usize]) {
    // What any kind holds at most: a pair beyond it needs no kind scan.
    let dims = kinds.first().map_or(0, |k| k.capacity.len());
    let most: Vec<i64> = (0..dims)
        .map(|d| {
            by_price
                .iter()
                .map(|&k| kinds[k].capacity[d])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for _pass in 0..MERGE_PASSES {
        let mut order: Vec<usize> = (0..open.len()).collect();
        order.sort_by(|&a, &b| {
            kinds[open[a].kind]
                .price
                .total_cmp(&kinds[open[b].kind].price)
                .then(a.cmp(&b))
        });
        let mut used: Vec<Vec<i64>> = open.iter().map(|b| b.used(kinds)).collect();
        let mut gone = vec![false; open.len()];
        let mut merged = false;
        for (at, &a) in order.iter().enumerate() {
            if gone[a] {
                continue;
            }
            // A bin takes in partners one after another while that saves.
            loop {
                let price_a = kinds[open[a].kind].price;
                let mut best: Option<(usize, usize, f64)> = None;
                for &b in order[at + 1..].iter().filter(|&&b| !gone[b]) {
                    if (0..dims).any(|d| used[a][d] + used[b][d] > most[d]) {
                        continue;
                    }
                    let budget = price_a + kinds[open[b].kind].price;
                    let holds = |k: usize| {
                        let capacity = &kinds[k].capacity;
                        (0..dims).all(|d| used[a][d] + used[b][d] <= capacity[d])
                    };
                    // Kinds by price: only those cheaper than the two can save.
                    let kind = by_price
                        .iter()
                        .take_while(|&&k| kinds[k].price < budget - 1e-9)
                        .find(|&&k| holds(k));
                    if let Some(&kind) = kind {
                        let saving = budget - kinds[kind].price;
                        if best.is_none_or(|(_, _, s)| saving > s) {
                            best = Some((b, kind, saving));
                        }
                    }
                }
                let Some((b, kind, _)) = best else {
                    break;
                };
                let items = std::mem::take(&mut open[b].items);
                open[a].resize(kind, kinds);
                open[a]
                    .free
                    .iter_mut()
                    .zip(&used[b])
                    .for_each(|(f, u)| *f -= u);
                open[a].items.extend(items);
                used[a] = open[a].used(kinds);
                gone[b] = true;
                merged = true;
            }
        }
        open.retain(|b| !b.items.is_empty());
        if !merged {
            return;
        }
    }
}

/// How many passes [`merge_pairs`] makes at most: each is quadratic in the
/// bins, and a bin takes in all the partners it can within its pass.
const MERGE_PASSES: usize = 2;
