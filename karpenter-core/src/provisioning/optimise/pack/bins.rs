//! The vocabulary of packing: kinds of bins (instance types as capacity
//! vectors and a price), the bins a packing returns, and bins being filled.

/// A kind of bin: what a node of one instance type gives pods (after daemon
/// overhead), resource by resource, and its price.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Kind {
    /// Amount per resource, in the items' units and order.
    pub capacity: Vec<i64>,
    /// Price per hour.
    pub price: f64,
}

/// A packed bin: its kind and the items it holds, in the order they came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bin {
    /// An index into the kinds.
    pub kind: usize,
    /// Indices into the items.
    pub items: Vec<usize>,
}

/// A bin being filled.
#[derive(Debug)]
pub(super) struct Open {
    pub(super) kind: usize,
    pub(super) free: Vec<i64>,
    pub(super) items: Vec<usize>,
}

impl Open {
    pub(super) fn new(kind: usize, kinds: &[Kind]) -> Open {
        Open {
            kind,
            free: kinds[kind].capacity.clone(),
            items: Vec::new(),
        }
    }

    pub(super) fn used(&self, kinds: &[Kind]) -> Vec<i64> {
        let capacity = &kinds[self.kind].capacity;
        capacity
            .iter()
            .zip(&self.free)
            .map(|(c, f)| c - f)
            .collect()
    }

    pub(super) fn resize(&mut self, kind: usize, kinds: &[Kind]) {
        let used = self.used(kinds);
        self.free = kinds[kind]
            .capacity
            .iter()
            .zip(&used)
            .map(|(c, u)| c - u)
            .collect();
        self.kind = kind;
    }

    pub(super) fn take(&mut self, item: usize, request: &[i64]) {
        self.free.iter_mut().zip(request).for_each(|(f, r)| *f -= r);
        self.items.push(item);
    }
}

/// The first kind of `by_price` (the useful kinds, cheapest first) that
/// holds `amounts`; every caller knows one does.
pub(super) fn cheapest_holding(kinds: &[Kind], by_price: &[usize], amounts: &[i64]) -> usize {
    by_price
        .iter()
        .copied()
        .find(|&k| fits(amounts, &kinds[k].capacity))
        .unwrap_or(by_price[0])
}

/// Whether `amounts` stay within `room`, resource by resource.
pub(super) fn fits(amounts: &[i64], room: &[i64]) -> bool {
    amounts.iter().zip(room).all(|(a, r)| a <= r)
}

/// The summed requests of the items `which`, over `dims` resources.
pub(super) fn total(items: &[Vec<i64>], which: &[usize], dims: usize) -> Vec<i64> {
    let mut sum = vec![0_i64; dims];
    for &i in which {
        sum.iter_mut()
            .zip(&items[i])
            .for_each(|(s, r)| *s = s.saturating_add(*r));
    }
    sum
}
