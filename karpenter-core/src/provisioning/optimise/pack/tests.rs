use proptest::prelude::*;

use super::bins::{Bin, Kind, fits, total};
use super::packer::{Packer, pack, price_of, undominated};

fn kind(capacity: &[i64], price: f64) -> Kind {
    Kind {
        capacity: capacity.to_vec(),
        price,
    }
}

fn cost(bins: &[Bin], kinds: &[Kind]) -> f64 {
    bins.iter().map(|b| kinds[b.kind].price).sum()
}

/// Every item in exactly one bin, no bin over its kind's capacity, and each
/// bin of the cheapest kind that holds what it took.
fn assert_valid(bins: &[Bin], items: &[Vec<i64>], kinds: &[Kind]) {
    let mut seen = vec![0; items.len()];
    for bin in bins {
        assert!(!bin.items.is_empty(), "an empty bin: {bins:?}");
        let used = total(items, &bin.items, kinds[0].capacity.len());
        assert!(
            fits(&used, &kinds[bin.kind].capacity),
            "bin over capacity: {bin:?} uses {used:?}"
        );
        let cheaper = kinds
            .iter()
            .any(|k| k.price < kinds[bin.kind].price && fits(&used, &k.capacity));
        assert!(!cheaper, "a cheaper kind holds {bin:?}");
        for &i in &bin.items {
            seen[i] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "items placed {seen:?}");
}

/// A family of sizes with linear prices and a fixed per-node cost, as real
/// catalogs have.
fn family(per_cpu_memory: i64, price_per_cpu: f64) -> Vec<Kind> {
    [2, 4, 8, 16, 32, 64]
        .iter()
        .map(|&cpu| {
            kind(
                &[cpu * 1000 - 100, cpu * per_cpu_memory - 1, 110],
                price_per_cpu * cpu as f64,
            )
        })
        .collect()
}

#[test]
fn no_items_no_bins() {
    assert_eq!(pack(&[], &[kind(&[1], 1.0)]), Some(Vec::new()));
}

#[test]
fn an_item_no_kind_holds_has_no_packing() {
    assert_eq!(pack(&[vec![5]], &[kind(&[4], 1.0)]), None);
}

#[test]
fn small_items_share_one_cheap_node() {
    let kinds = [kind(&[4, 4], 1.0), kind(&[8, 8], 1.9)];
    let items = vec![vec![1, 1]; 4];
    let bins = pack(&items, &kinds).expect("packed");
    assert_valid(&bins, &items, &kinds);
    assert_eq!(bins.len(), 1);
    assert_eq!(bins[0].kind, 0);
}

#[test]
fn cpu_heavy_and_memory_heavy_items_go_to_matching_kinds() {
    // Half the items want cpu, half memory: one cpu-rich and one memory-rich
    // node (price 2) beat two balanced ones (price 3) or one big one.
    let kinds = [kind(&[8, 2], 1.0), kind(&[2, 8], 1.0), kind(&[8, 8], 3.0)];
    let mut items = vec![vec![2, 0]; 4];
    items.extend(vec![vec![0, 2]; 4]);
    let bins = pack(&items, &kinds).expect("packed");
    assert_valid(&bins, &items, &kinds);
    assert_eq!(cost(&bins, &kinds), 2.0, "{bins:?}");
}

#[test]
fn the_tail_goes_to_a_small_node() {
    let kinds = family(4096, 0.05);
    // 70 cpu of one-cpu items: a 64-cpu node and a small one for the rest.
    let items = vec![vec![1000, 2048, 1]; 70];
    let bins = pack(&items, &kinds).expect("packed");
    assert_valid(&bins, &items, &kinds);
    assert!(cost(&bins, &kinds) <= 0.05 * 72.0 + 1e-9, "{bins:?}");
}

#[test]
fn value_greedy_buys_small_nodes_for_a_remainder() {
    // A big kind cheapest per unit and a small one a little dearer: 120
    // items take one big node, and the 20 left two small ones (2.5 in all),
    // not a second big node (4.0), which rounding the LP's 1.2 big nodes
    // buys.
    let kinds = [kind(&[100], 2.0), kind(&[10], 0.25)];
    let items = vec![vec![1]; 120];
    let packer = Packer::new(&items, &kinds).expect("a packer");
    let by_value = packer.by_value().expect("packed");
    assert!((price_of(&by_value, &kinds) - 2.5).abs() < 1e-9);
    let by_rounds = packer.by_rounds().expect("packed");
    assert!(price_of(&by_rounds, &kinds) > 2.5 + 1e-9);
    let bins = pack(&items, &kinds).expect("packed");
    assert_valid(&bins, &items, &kinds);
    assert!((cost(&bins, &kinds) - 2.5).abs() < 1e-9, "{bins:?}");
}

#[test]
fn items_are_worth_their_share_of_the_fluid_optimum() {
    // One kind: each item is worth its part of a node, so the items' worth
    // sums to the LP's price of the nodes they fill (3 items of a third).
    let kinds = [kind(&[30, 30], 1.5)];
    let items = vec![vec![10, 5], vec![10, 5], vec![10, 5]];
    let packer = Packer::new(&items, &kinds).expect("a packer");
    let worth = packer.item_values().expect("solved");
    let total: f64 = worth.iter().sum();
    assert!((total - 1.5).abs() < 1e-6, "{worth:?}");
}

#[test]
fn dominated_kinds_are_dropped() {
    let kinds = [kind(&[4, 4], 1.0), kind(&[4, 2], 1.0), kind(&[2, 2], 1.0)];
    assert_eq!(undominated(&kinds), vec![0]);
    let twins = [kind(&[4], 1.0), kind(&[4], 1.0)];
    assert_eq!(undominated(&twins), vec![0]);
}

fn kinds_strategy() -> impl Strategy<Value = Vec<Kind>> {
    prop::collection::vec(((1_i64..64), (1_i64..128), (0.01_f64..4.0)), 1..8).prop_map(|raw| {
        raw.into_iter()
            .map(|(cpu, memory, price)| kind(&[cpu * 100, memory * 100, 20], price))
            .collect()
    })
}

fn items_strategy() -> impl Strategy<Value = Vec<Vec<i64>>> {
    prop::collection::vec(((1_i64..800), (1_i64..1600)), 0..60)
        .prop_map(|raw| raw.into_iter().map(|(c, m)| vec![c, m, 1]).collect())
}

proptest! {
    #[test]
    fn packings_are_valid_and_no_dearer_than_a_node_each(
        kinds in kinds_strategy(),
        items in items_strategy(),
    ) {
        let Some(bins) = pack(&items, &kinds) else {
            // Only when some item fits no kind.
            prop_assert!(items.iter().any(|r| !kinds.iter().any(|k| fits(r, &k.capacity))));
            return Ok(());
        };
        assert_valid(&bins, &items, &kinds);
        let alone: f64 = items
            .iter()
            .map(|r| {
                kinds
                    .iter()
                    .filter(|k| fits(r, &k.capacity))
                    .map(|k| k.price)
                    .fold(f64::INFINITY, f64::min)
            })
            .sum();
        prop_assert!(cost(&bins, &kinds) <= alone + 1e-9);
        // The same input, the same packing.
        prop_assert_eq!(pack(&items, &kinds), Some(bins));
    }

    #[test]
    fn each_strategy_places_every_item_once_within_capacity(
        kinds in kinds_strategy(),
        items in items_strategy(),
    ) {
        let Some(packer) = Packer::new(&items, &kinds) else {
            return Ok(());
        };
        for (name, packing) in [("rounds", packer.by_rounds()), ("value", packer.by_value())] {
            let open = packing.expect("the LP solves");
            let mut seen = vec![0; items.len()];
            for bin in &open {
                prop_assert!(bin.free.iter().all(|&f| f >= 0), "{name}: {bin:?}");
                let used = total(&items, &bin.items, kinds[0].capacity.len());
                prop_assert_eq!(bin.used(&kinds), used);
                bin.items.iter().for_each(|&i| seen[i] += 1);
            }
            prop_assert!(seen.iter().all(|&n| n == 1), "{}: {:?}", name, seen);
        }
    }
}
