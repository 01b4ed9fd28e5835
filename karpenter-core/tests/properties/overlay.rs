//! NodeOverlays over random clusters: the overlays' own laws (prices never
//! negative, what no overlay selects untouched, the order the overlays are
//! given in irrelevant), and plans over overlaid instance types keeping every
//! rule the plan validator checks, priced at the overlaid prices, with the
//! lower bound below them.

use karpenter_core::Snapshot;
use karpenter_core::api::NodeOverlay;
use karpenter_core::overlay::{OverlayVerdict, apply};
use karpenter_core::provisioning::{Rule, plan_provisioning, validate};
use karpenter_core::scheduling::CapacityType;
use karpenter_core::snapshot::build::{InstanceTypeBuilder, NodePoolBuilder, PodBuilder};
use proptest::prelude::*;
use serde_json::{Value, json};

const ZONES: [&str; 2] = ["zone-a", "zone-b"];
const DEVICE: &str = "example.com/device";

#[derive(Clone, Debug)]
struct TypeSpec {
    cores: u32,
    /// Per zone: the on-demand price in thousandths, and a spot price.
    prices: Vec<(usize, u32, Option<u32>)>,
}

#[derive(Clone, Debug)]
struct OverlaySpec {
    /// Which key selects: 0 the type, 1 the zone, 2 the capacity type, 3 the
    /// pool, 4 the pool's team label.
    selector: usize,
    value: usize,
    price: Option<PriceSpec>,
    device: Option<u32>,
    weight: Option<i32>,
}

#[derive(Clone, Debug)]
enum PriceSpec {
    Override(u32),
    Percent(i32),
    Delta(i32),
}

#[derive(Clone, Debug)]
struct Case {
    types: Vec<TypeSpec>,
    /// Pods' cpu in cores, and whether each wants a device.
    pods: Vec<(u32, bool)>,
    overlays: Vec<OverlaySpec>,
}

fn type_spec() -> impl Strategy<Value = TypeSpec> {
    (
        1u32..=8,
        prop::collection::vec(
            (0usize..2, 50u32..2000, prop::option::of(10u32..1000)),
            1..=2,
        ),
    )
        .prop_map(|(cores, prices)| TypeSpec { cores, prices })
}

fn overlay_spec() -> impl Strategy<Value = OverlaySpec> {
    let price = prop_oneof![
        (0u32..3000).prop_map(PriceSpec::Override),
        (-100i32..300).prop_map(PriceSpec::Percent),
        (-2000i32..2000).prop_map(PriceSpec::Delta),
    ];
    (
        0usize..5,
        0usize..4,
        prop::option::of(price),
        prop::option::of(1u32..4),
        prop::option::of(1i32..=3),
    )
        .prop_map(|(selector, value, price, device, weight)| OverlaySpec {
            selector,
            value,
            price,
            device,
            weight,
        })
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(type_spec(), 1..5),
        prop::collection::vec((1u32..4, any::<bool>()), 0..8),
        prop::collection::vec(overlay_spec(), 0..5),
    )
        .prop_map(|(types, pods, overlays)| Case {
            types,
            pods,
            overlays,
        })
}

impl Case {
    fn snapshot(&self) -> Snapshot {
        let types: Vec<_> = (self.types.iter().enumerate())
            .map(|(i, spec)| {
                let mut builder = InstanceTypeBuilder::new(format!("type-{i}"))
                    .cpu(&spec.cores.to_string())
                    .memory(&format!("{}Gi", spec.cores * 4));
                let mut zones = std::collections::BTreeSet::new();
                for &(zone, on_demand, spot) in &spec.prices {
                    if !zones.insert(zone) {
                        continue;
                    }
                    builder = builder.offering(
                        ZONES[zone],
                        CapacityType::OnDemand,
                        f64::from(on_demand) / 1000.0,
                    );
                    if let Some(spot) = spot {
                        builder = builder.offering(
                            ZONES[zone],
                            CapacityType::Spot,
                            f64::from(spot) / 1000.0,
                        );
                    }
                }
                builder.build()
            })
            .collect();
        let pods = (self.pods.iter().enumerate()).map(|(i, &(cores, device))| {
            let pod =
                PodBuilder::new("default", format!("pod-{i}")).requests(cores.to_string(), "1Gi");
            if device {
                pod.request(DEVICE, "1")
            } else {
                pod
            }
            .build()
        });
        Snapshot {
            node_pools: vec![
                NodePoolBuilder::new("pool-0").build(),
                NodePoolBuilder::new("pool-1").label("team", "red").build(),
            ],
            ..Snapshot::default()
        }
        .with_pods(pods)
        .with_instance_types("pool-0", types.clone())
        .with_instance_types("pool-1", types)
    }

    fn overlays(&self) -> Vec<NodeOverlay> {
        (self.overlays.iter().enumerate())
            .map(|(i, spec)| {
                let (key, value) = match spec.selector {
                    0 => (
                        "node.kubernetes.io/instance-type",
                        format!("type-{}", spec.value),
                    ),
                    1 => (
                        "topology.kubernetes.io/zone",
                        ZONES[spec.value % 2].to_owned(),
                    ),
                    2 => (
                        "karpenter.sh/capacity-type",
                        ["on-demand", "spot"][spec.value % 2].to_owned(),
                    ),
                    3 => ("karpenter.sh/nodepool", format!("pool-{}", spec.value % 2)),
                    _ => ("team", "red".to_owned()),
                };
                let mut body = json!({
                    "requirements": [{"key": key, "operator": "In", "values": [value]}],
                });
                match &spec.price {
                    Some(PriceSpec::Override(p)) => {
                        body["price"] = json!(format!("{}.{:03}", p / 1000, p % 1000));
                    }
                    Some(PriceSpec::Percent(p)) => {
                        body["priceAdjustment"] = json!(format!("{p:+}%"))
                    }
                    Some(PriceSpec::Delta(d)) => {
                        let sign = if *d < 0 { '-' } else { '+' };
                        let d = d.unsigned_abs();
                        body["priceAdjustment"] =
                            json!(format!("{sign}{}.{:03}", d / 1000, d % 1000));
                    }
                    None => {}
                }
                if let Some(count) = spec.device {
                    body["capacity"] = json!({DEVICE: count.to_string()});
                }
                if let Some(weight) = spec.weight {
                    body["weight"] = json!(weight);
                }
                serde_json::from_value(
                    json!({"metadata": {"name": format!("overlay-{i}")}, "spec": body}),
                )
                .expect("an overlay")
            })
            .collect()
    }
}

fn prices(snapshot: &Snapshot) -> Vec<(String, String, String, String, f64)> {
    let mut all = Vec::new();
    for (pool, types) in &snapshot.instance_types {
        for ty in types.iter() {
            for o in &ty.offerings {
                all.push((
                    pool.clone(),
                    ty.name.clone(),
                    o.zone.clone(),
                    o.capacity_type.clone(),
                    o.price,
                ));
            }
        }
    }
    all
}

fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serializes")
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn overlays_keep_their_laws_and_plans_keep_every_rule(case in case(), rotate in 0usize..5) {
        let base = case.snapshot();
        let overlays = case.overlays();
        let mut overlaid = base.clone();
        let outcomes = apply(&mut overlaid, &overlays);
        prop_assert_eq!(outcomes.len(), overlays.len());
        // Generated overlays are valid: each is applied or in conflict.
        for outcome in &outcomes {
            prop_assert!(!matches!(outcome.verdict, OverlayVerdict::Invalid(_)), "{:?}", outcome);
        }

        // The order the overlays come in does not matter.
        let mut turned = overlays.clone();
        if !turned.is_empty() {
            let by = rotate % turned.len();
            turned.rotate_left(by);
        }
        let mut again = base.clone();
        apply(&mut again, &turned);
        prop_assert_eq!(prices(&again), prices(&overlaid));

        // Prices never fall below zero; offerings no applied overlay with a
        // price selects keep theirs; capacity only grows, in the device.
        let priced = outcomes.iter().zip(&case.overlays)
            .any(|(o, spec)| o.verdict.is_applied() && spec.price.is_some());
        for (before, after) in prices(&base).iter().zip(prices(&overlaid)) {
            prop_assert!(after.4 >= 0.0);
            if !priced {
                prop_assert_eq!(before.4, after.4);
            }
        }
        for (pool, types) in &overlaid.instance_types {
            for (ty, original) in types.iter().zip(base.instance_types[pool].iter()) {
                prop_assert_eq!(ty.capacity.get("cpu"), original.capacity.get("cpu"));
                prop_assert_eq!(ty.capacity.get("memory"), original.capacity.get("memory"));
                prop_assert!(ty.capacity.get(DEVICE) >= 0);
            }
        }

        // Plans over the overlaid types keep every rule, priced as overlaid.
        let plan = plan_provisioning(&overlaid);
        let violations = validate(&overlaid, &plan);
        prop_assert!(violations.is_empty(), "{:?}\n{}", violations, json_of(&plan));
        let mut bounded = plan.clone();
        bounded.add_lower_bound(&overlaid);
        let bound = bounded.lower_bound_per_hour.expect("the bound's LP solves");
        prop_assert!(
            bound <= plan.total_price_per_hour + 1e-9,
            "bound {} above the plan's {}: {}\ntypes: {:?}",
            bound,
            plan.total_price_per_hour,
            json_of(&plan),
            overlaid.instance_types.iter().map(|(p, t)| (p, t.iter().map(|t| (t.name.clone(), t.capacity.get(DEVICE), t.offerings.iter().map(|o| o.price).collect::<Vec<_>>())).collect::<Vec<_>>())).collect::<Vec<_>>()
        );
        // Judged against the list prices, a launch whose offering an overlay
        // repriced is caught.
        let repriced = plan.node_claims.iter().any(|claim| {
            claim.launch.as_ref().is_some_and(|launch| {
                base.instance_types[&claim.node_pool].iter()
                    .find(|t| t.name == launch.instance_type)
                    .and_then(|t| t.offerings.iter().find(|o| o.zone == launch.zone && o.capacity_type == launch.capacity_type))
                    .is_some_and(|o| (o.price - launch.price).abs() > 1e-9)
            })
        });
        if repriced {
            let against_list = validate(&base, &plan);
            prop_assert!(against_list.iter().any(|v| v.rule == Rule::LaunchPrice), "{:?}", against_list);
        }
    }
}
