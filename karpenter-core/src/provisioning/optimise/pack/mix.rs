//! The cheapest mix of node kinds for the items left to place, fractional
//! nodes allowed, each class of items (those that fit the same kinds) shared
//! among the kinds it fits: the LP whose solution guides the packer's rounds
//! (how many nodes of which kind a good plan buys).

use microlp::{ComparisonOp, OptimizationDirection, Problem};

use super::bins::Kind;

/// Items that fit the same kinds, with what they request together.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Class {
    /// Their requests summed, resource by resource.
    pub demand: Vec<i64>,
    /// The kinds each of them fits, ascending.
    pub fits: Vec<usize>,
}

/// The LP's answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mix {
    /// Nodes of each kind (fractions allowed).
    pub nodes: Vec<f64>,
}

/// The mix of least price: minimise `sum(price[k] * nodes[k])` such that each
/// class's demand is shared among the kinds it fits (shares summing to one),
/// and no kind gets more of any resource than its nodes hold. `None` when
/// the solver fails.
pub(crate) fn cheapest_mix(classes: &[Class], kinds: &[Kind]) -> Option<Mix> {
    let dims = kinds.first().map_or(0, |k| k.capacity.len());
    // Each resource divided by its total demand: amounts of bytes and of pods
    // then weigh alike, which keeps the solver's arithmetic well scaled.
    let scale: Vec<f64> = (0..dims)
        .map(|d| {
            classes
                .iter()
                .map(|c| c.demand[d].max(0) as f64)
                .sum::<f64>()
        })
        .collect();
    let mut problem = Problem::new(OptimizationDirection::Minimize);
    let nodes: Vec<microlp::Variable> = kinds
        .iter()
        .map(|k| problem.add_var(k.price.max(0.0), (0.0, f64::INFINITY)))
        .collect();
    let shares: Vec<Vec<microlp::Variable>> = classes
        .iter()
        .map(|c| {
            c.fits
                .iter()
                .map(|_| problem.add_var(0.0, (0.0, f64::INFINITY)))
                .collect()
        })
        .collect();
    for class in &shares {
        let terms: Vec<(microlp::Variable, f64)> = class.iter().map(|&v| (v, 1.0)).collect();
        problem.add_constraint(terms, ComparisonOp::Ge, 1.0);
    }
    for (k, kind) in kinds.iter().enumerate() {
        for d in (0..dims).filter(|&d| scale[d] > 0.0) {
            let mut terms = vec![(nodes[k], -(kind.capacity[d] as f64) / scale[d])];
            for (class, vars) in classes.iter().zip(&shares) {
                if class.demand[d] <= 0 {
                    continue;
                }
                if let Ok(at) = class.fits.binary_search(&k) {
                    terms.push((vars[at], class.demand[d] as f64 / scale[d]));
                }
            }
            if terms.len() > 1 {
                problem.add_constraint(terms, ComparisonOp::Le, 0.0);
            }
        }
    }
    let microlp::SolveOutcome::Solution(solution) = problem.solve().ok()? else {
        return None;
    };
    Some(Mix {
        nodes: nodes.iter().map(|&v| solution[v].max(0.0)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(capacity: &[i64], price: f64) -> Kind {
        Kind {
            capacity: capacity.to_vec(),
            price,
        }
    }

    fn cost(mix: &Mix, kinds: &[Kind]) -> f64 {
        mix.nodes.iter().zip(kinds).map(|(x, k)| x * k.price).sum()
    }

    #[test]
    fn covers_the_demand_with_the_cheapest_kinds() {
        // cpu-rich and memory-rich kinds: cpu-only items (8 cpu) and
        // memory-only items (8 memory) are met best by one node of each
        // (price 2), not by two balanced ones (price 3).
        let kinds = [kind(&[6, 2], 1.0), kind(&[2, 6], 1.0), kind(&[4, 4], 1.5)];
        let cpu = Class {
            demand: vec![8, 0],
            fits: vec![0, 1, 2],
        };
        let memory = Class {
            demand: vec![0, 8],
            fits: vec![0, 1, 2],
        };
        let mix = cheapest_mix(&[cpu, memory], &kinds).expect("a mix");
        assert!((cost(&mix, &kinds) - 2.0).abs() < 1e-6, "{mix:?}");
        // Items keep their shape: balanced items cannot be split into a
        // cpu part and a memory part, so they take the balanced kind.
        let balanced = Class {
            demand: vec![8, 8],
            fits: vec![0, 1, 2],
        };
        let mix = cheapest_mix(&[balanced], &kinds).expect("a mix");
        assert!((cost(&mix, &kinds) - 3.0).abs() < 1e-6, "{mix:?}");
    }

    #[test]
    fn items_only_count_on_the_kinds_they_fit() {
        // The small kind is cheaper per unit, but the big items fit only the
        // big kind: 8 units on it cost 4, the 2 small units 0.5.
        let kinds = [kind(&[2], 0.5), kind(&[8], 4.0)];
        let big = Class {
            demand: vec![8],
            fits: vec![1],
        };
        let small = Class {
            demand: vec![2],
            fits: vec![0, 1],
        };
        let mix = cheapest_mix(&[big, small], &kinds).expect("a mix");
        assert!((cost(&mix, &kinds) - 4.5).abs() < 1e-6, "{mix:?}");
        assert!(mix.nodes[0] > 0.99 && mix.nodes[1] < 1.01, "{mix:?}");
    }
}
