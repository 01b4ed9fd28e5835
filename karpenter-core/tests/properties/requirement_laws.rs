//! Algebraic laws of the requirement algebra, checked against a brute-force
//! model: a requirement built from operators over a small label domain must
//! contain exactly the values the operators' plain definitions admit.

use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use karpenter_core::scheduling::{Operator, Requirement, Requirements, WellKnownLabels};
use proptest::prelude::*;

/// Operands drawn by the strategies.
const VALUES: [&str; 8] = ["1", "2", "3", "4", "5", "6", "a", "b"];

/// Values membership is checked on: the operands, neighbours outside them,
/// and spellings that only integer parsing equates ("01", "+3").
const PROBES: [&str; 16] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "a", "b", "c", "01", "+3", "-1", "",
];

const KEY: &str = "key";

/// One operator application, the unit of the model.
#[derive(Clone, Debug)]
struct Atom {
    operator: Operator,
    values: Vec<String>,
}

impl Atom {
    fn requirement(&self) -> Requirement {
        Requirement::new(KEY, self.operator, &self.values, None)
            .expect("strategies build valid atoms")
    }

    /// The operator's definition, written independently of the algebra.
    fn admits(&self, value: &str) -> bool {
        let listed = self.values.iter().any(|v| v == value);
        let number = || value.parse::<i64>().ok();
        let operand = || self.values[0].parse::<i64>().expect("integer operand");
        match self.operator {
            Operator::In => listed,
            Operator::NotIn => !listed,
            Operator::Exists => true,
            Operator::DoesNotExist => false,
            Operator::Gt => number().is_some_and(|n| n > operand()),
            Operator::Lt => number().is_some_and(|n| n < operand()),
            Operator::Gte => number().is_some_and(|n| n >= operand()),
            Operator::Lte => number().is_some_and(|n| n <= operand()),
        }
    }
}

/// A requirement as the intersection of a few atoms, with its model.
#[derive(Clone, Debug)]
struct Model {
    atoms: Vec<Atom>,
    min_values: Option<u32>,
}

impl Model {
    fn requirement(&self) -> Requirement {
        let mut atoms = self.atoms.iter().map(Atom::requirement);
        let first = atoms.next().expect("at least one atom");
        atoms
            .fold(first, |acc, next| acc.intersection(&next))
            .with_min_values(self.min_values)
    }

    fn admits(&self, value: &str) -> bool {
        self.atoms.iter().all(|atom| atom.admits(value))
    }
}

fn atom() -> impl Strategy<Value = Atom> {
    let values = || proptest::sample::subsequence(VALUES.to_vec(), 0..=4);
    let listed = |operator: Operator, at_least: usize| {
        values()
            .prop_filter("enough values", move |v| v.len() >= at_least)
            .prop_map(move |v| Atom {
                operator,
                values: v.into_iter().map(str::to_owned).collect(),
            })
    };
    let numeric = prop::sample::select(vec![
        Operator::Gt,
        Operator::Lt,
        Operator::Gte,
        Operator::Lte,
    ]);
    prop_oneof![
        3 => listed(Operator::In, 1),
        2 => listed(Operator::NotIn, 0),
        1 => Just(Atom { operator: Operator::Exists, values: vec![] }),
        1 => Just(Atom { operator: Operator::DoesNotExist, values: vec![] }),
        3 => (numeric, 0..=7i64).prop_map(|(operator, n)| Atom { operator, values: vec![n.to_string()] }),
    ]
}

fn model() -> impl Strategy<Value = Model> {
    (
        prop::collection::vec(atom(), 1..=3),
        prop::option::of(1..=3u32),
    )
        .prop_map(|(atoms, min_values)| Model { atoms, min_values })
}

/// Requirements over a well-known key and two custom ones, each present or not.
fn requirements() -> impl Strategy<Value = Requirements> {
    let keys = ["topology.kubernetes.io/zone", "team", "gpu"];
    prop::collection::vec(prop::option::of(model()), 3).prop_map(move |models| {
        keys.iter()
            .zip(models)
            .filter_map(|(key, model)| {
                let model = model?;
                let requirement = model.requirement();
                let entries = requirement.to_selector_requirements();
                let expressions: Vec<_> = entries
                    .iter()
                    .map(|e| NodeSelectorRequirement {
                        key: (*key).to_owned(),
                        ..e.to_node_selector_requirement()
                    })
                    .collect();
                Some(
                    Requirements::from_node_selector_requirements(&expressions)
                        .expect("round trip"),
                )
            })
            .fold(Requirements::new(), |mut all, one| {
                all.add_all(&one);
                all
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn membership_matches_the_model(model in model()) {
        let requirement = model.requirement();
        for probe in PROBES {
            prop_assert_eq!(requirement.has(probe), model.admits(probe), "{} on {:?}", requirement, probe);
        }
    }

    #[test]
    fn intersection_membership_is_the_and_of_memberships(a in model(), b in model()) {
        let (ra, rb) = (a.requirement(), b.requirement());
        let both = ra.intersection(&rb);
        for probe in PROBES {
            prop_assert_eq!(both.has(probe), ra.has(probe) && rb.has(probe), "{} ∩ {} on {:?}", ra, rb, probe);
        }
        prop_assert_eq!(both.min_values(), ra.min_values().max(rb.min_values()));
    }

    #[test]
    fn intersection_is_commutative(a in model(), b in model()) {
        let (a, b) = (a.requirement(), b.requirement());
        prop_assert_eq!(a.intersection(&b), b.intersection(&a));
    }

    #[test]
    fn intersection_is_associative(a in model(), b in model(), c in model()) {
        let (a, b, c) = (a.requirement(), b.requirement(), c.requirement());
        prop_assert_eq!(a.intersection(&b).intersection(&c), a.intersection(&b.intersection(&c)));
    }

    #[test]
    fn intersection_is_idempotent(a in model()) {
        let a = a.requirement();
        prop_assert_eq!(a.intersection(&a), a.clone());
    }

    #[test]
    fn has_intersection_agrees_with_intersection(a in model(), b in model()) {
        let (a, b) = (a.requirement(), b.requirement());
        prop_assert_eq!(a.has_intersection(&b), !a.intersection(&b).is_empty());
        prop_assert_eq!(a.has_intersection(&b), b.has_intersection(&a));
    }

    #[test]
    fn any_picks_a_member(a in model()) {
        let requirement = a.requirement();
        match requirement.any() {
            Some(value) => prop_assert!(requirement.has(&value), "{} any {}", requirement, value),
            None => prop_assert!(
                requirement.is_empty() || requirement.lower_bound().is_some() || requirement.upper_bound().is_some(),
                "{} has members", requirement
            ),
        }
        prop_assert_eq!(requirement.any(), requirement.any());
    }

    #[test]
    fn selector_requirements_round_trip(a in model()) {
        let requirement = a.requirement().with_min_values(None);
        let expressions: Vec<_> = requirement
            .to_selector_requirements()
            .iter()
            .map(|entry| entry.to_node_selector_requirement())
            .collect();
        let back = Requirements::from_node_selector_requirements(&expressions).unwrap();
        prop_assert_eq!(back.get(KEY).into_owned(), requirement);
    }

    #[test]
    fn compatible_implies_intersects(a in requirements(), b in requirements()) {
        for well_known in [WellKnownLabels::core().clone(), WellKnownLabels::empty()] {
            let compatible = a.compatible(&b, &well_known);
            prop_assert_eq!(compatible.is_ok(), a.is_compatible(&b, &well_known));
            if compatible.is_ok() {
                prop_assert!(a.intersects(&b).is_ok());
            }
        }
        prop_assert_eq!(a.intersects(&b).is_ok(), b.intersects(&a).is_ok());
    }

    #[test]
    fn adding_is_order_independent(models in prop::collection::vec(model(), 1..=4)) {
        let requirements: Vec<_> = models.iter().map(Model::requirement).collect();
        let forward: Requirements = requirements.iter().cloned().collect();
        let backward: Requirements = requirements.iter().rev().cloned().collect();
        prop_assert_eq!(forward, backward);
    }

    #[test]
    fn arbitrary_input_never_panics(
        key in ".{0,20}",
        operator in prop::sample::select(Operator::ALL.to_vec()),
        values in prop::collection::vec(".{0,8}|-?[0-9]{1,20}", 0..4),
        min_values in prop::option::of(any::<u32>()),
        probe in ".{0,8}|-?[0-9]{1,20}",
    ) {
        if let Ok(requirement) = Requirement::new(&key, operator, &values, min_values) {
            let other = Requirement::new(&key, Operator::Lt, ["9223372036854775807"], None).unwrap();
            let both = requirement.intersection(&other);
            let _ = (both.to_string(), both.any(), both.has(&probe), both.len(), both.to_selector_requirements());
            let _ = requirement.has_intersection(&Requirement::new(&key, Operator::Gt, ["0"], None).unwrap());
        }
    }
}
