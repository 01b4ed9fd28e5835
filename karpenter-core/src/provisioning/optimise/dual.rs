//! The fluid relaxation's dual, shared by the lower bound (`bound.rs`) and
//! the cost packer (`cost/pack/greedy.rs`): for each node column a price per unit
//! of each resource, such that a whole node's capacity costs no more than the
//! node, maximising what the demand pays at the cheapest columns it may use.
//!
//! These unit prices are what a pod is worth: its request priced at its
//! cheapest column is its share of the fluid optimum, which makes them both a
//! certificate (the bound) and a guide (which pods a node should take).
//!
//! The LP is solved by column generation: over a few columns first, every
//! other column then priced from the solved ones, joining the LP only where
//! that falls short of what the demand pays.

use std::collections::{BTreeMap, BTreeSet};

use microlp::{ComparisonOp, OptimizationDirection, Problem};

/// A node column: a node shape (an index into the capacities) at a price.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub(crate) struct Column {
    /// An index into the capacities.
    pub instance_type: usize,
    /// Price per hour.
    pub price: f64,
}

/// Demand that may use the same columns: per node shape, the cheapest price
/// it may have it at, and the amounts it asks for, summed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Demand {
    /// Per node shape (index), the cheapest price this demand may have it at.
    pub prices: BTreeMap<usize, f64>,
    /// The amounts, resource by resource.
    pub amounts: Vec<f64>,
}

/// Whether `demand` may use `column`.
pub(crate) fn allowed(demand: &Demand, column: &Column) -> bool {
    demand
        .prices
        .get(&column.instance_type)
        .is_some_and(|p| *p <= column.price)
}

/// The dual LP: for each column a price per unit of each resource, a whole
/// node costing at most the column's price; each group paying for its
/// demand at the cheapest column it may use; the sum of the groups'
/// payments maximised. Returns the unit prices, column by column, and the
/// groups' payments.
pub(crate) fn solve_dual(
    groups: &[Demand],
    columns: &[Column],
    allocatable: &[Vec<f64>],
) -> Option<(Vec<Vec<f64>>, Vec<f64>)> {
    let resources = groups.first().map_or(0, |g| g.amounts.len());
    let mut problem = Problem::new(OptimizationDirection::Maximize);
    let weights: Vec<Vec<microlp::Variable>> = columns
        .iter()
        .map(|_| {
            (0..resources)
                .map(|_| problem.add_var(0.0, (0.0, f64::INFINITY)))
                .collect()
        })
        .collect();
    let payments: Vec<microlp::Variable> = groups
        .iter()
        .map(|_| problem.add_var(1.0, (0.0, f64::INFINITY)))
        .collect();
    for (c, column) in columns.iter().enumerate() {
        let capacity = &allocatable[column.instance_type];
        let terms: Vec<(microlp::Variable, f64)> = (0..resources)
            .filter(|&r| capacity[r] > 0.0)
            .map(|r| (weights[c][r], capacity[r]))
            .collect();
        problem.add_constraint(terms, ComparisonOp::Le, column.price);
        // A resource the type does not have cannot be charged for on it.
        for r in (0..resources).filter(|&r| capacity[r] <= 0.0) {
            problem.add_constraint([(weights[c][r], 1.0)], ComparisonOp::Le, 0.0);
        }
    }
    for (g, group) in groups.iter().enumerate() {
        for (c, column) in columns.iter().enumerate() {
            if !allowed(group, column) {
                continue;
            }
            let mut terms: Vec<(microlp::Variable, f64)> = vec![(payments[g], 1.0)];
            terms.extend(
                (0..resources)
                    .filter(|&r| group.amounts[r] > 0.0)
                    .map(|r| (weights[c][r], -group.amounts[r])),
            );
            problem.add_constraint(terms, ComparisonOp::Le, 0.0);
        }
    }
    let microlp::SolveOutcome::Solution(solution) = problem.solve().ok()? else {
        return None;
    };
    let weights = weights
        .iter()
        .map(|row| row.iter().map(|v| solution[*v].max(0.0)).collect())
        .collect();
    let payments = payments.iter().map(|v| solution[*v]).collect();
    Some((weights, payments))
}

/// The dual by column generation: solved over a few columns (for each
/// group, the cheapest per unit of each resource it asks for), then every
/// other column is given unit prices (a direction from a solved column, or
/// one resource alone, scaled so its node costs its price) under which each
/// group it admits pays at least its payment; the columns where none does
/// join the LP, until none is left. Every column ends with unit prices.
pub(crate) fn unit_prices(
    groups: &[Demand],
    columns: &[Column],
    allocatable: &[Vec<f64>],
) -> Option<Vec<Vec<f64>>> {
    let resources = groups.first().map_or(0, |g| g.amounts.len());
    let mut chosen: BTreeSet<usize> = BTreeSet::new();
    for group in groups {
        for r in (0..resources).filter(|&r| group.amounts[r] > 0.0) {
            let cheapest = (0..columns.len())
                .filter(|&c| {
                    allowed(group, &columns[c]) && allocatable[columns[c].instance_type][r] > 0.0
                })
                .min_by(|&a, &b| {
                    let per_unit =
                        |c: usize| columns[c].price / allocatable[columns[c].instance_type][r];
                    per_unit(a).total_cmp(&per_unit(b)).then(a.cmp(&b))
                });
            chosen.extend(cheapest);
        }
    }
    loop {
        let subset: Vec<usize> = chosen.iter().copied().collect();
        let restricted: Vec<Column> = subset.iter().map(|&c| columns[c].clone()).collect();
        let (solved, payments) = solve_dual(groups, &restricted, allocatable)?;
        let mut weights = vec![vec![0.0; resources]; columns.len()];
        for (i, &c) in subset.iter().enumerate() {
            weights[c] = solved[i].clone();
        }
        let mut directions: Vec<Vec<f64>> = solved
            .iter()
            .filter(|w| w.iter().any(|x| *x > 0.0))
            .cloned()
            .collect();
        for r in 0..resources {
            let mut unit = vec![0.0; resources];
            unit[r] = 1.0;
            directions.push(unit);
        }
        let mut short: Vec<(f64, usize)> = Vec::new();
        for (c, column) in columns.iter().enumerate() {
            if chosen.contains(&c) {
                continue;
            }
            let capacity = &allocatable[column.instance_type];
            let admitted: Vec<usize> = (0..groups.len())
                .filter(|&g| allowed(&groups[g], column))
                .collect();
            let mut best: Option<(f64, Vec<f64>)> = None;
            for direction in &directions {
                let cost: f64 = direction.iter().zip(capacity).map(|(w, a)| w * a).sum();
                if cost <= 0.0 {
                    continue;
                }
                let w: Vec<f64> = direction.iter().map(|x| x * column.price / cost).collect();
                let slack = admitted
                    .iter()
                    .map(|&g| {
                        let pays: f64 = w.iter().zip(&groups[g].amounts).map(|(w, d)| w * d).sum();
                        (pays - payments[g]) / payments[g].abs().max(1e-12)
                    })
                    .fold(f64::INFINITY, f64::min);
                if best.as_ref().is_none_or(|(b, _)| slack > *b) {
                    best = Some((slack, w));
                }
            }
            if let Some((slack, w)) = best {
                weights[c] = w;
                if slack < -1e-9 {
                    short.push((slack, c));
                }
            }
        }
        if short.is_empty() {
            return Some(weights);
        }
        // The most violated first, a bounded number per round.
        short.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        chosen.extend(short.iter().take(64).map(|(_, c)| *c));
    }
}

/// Each resource's part of `amounts` (each divided by its `scale`), rounded
/// to fifths: a coarse shape, for grouping demand that the LP may treat alike.
pub(crate) fn shape(amounts: &[f64], scale: &[f64]) -> Vec<u8> {
    let scaled: Vec<f64> = amounts
        .iter()
        .zip(scale)
        .map(|(a, s)| if *s > 0.0 { a / s } else { 0.0 })
        .collect();
    let sum: f64 = scaled.iter().sum();
    if sum <= 0.0 {
        return vec![0; scaled.len()];
    }
    scaled
        .iter()
        .map(|v| (v / sum * 5.0).round() as u8)
        .collect()
}
