use super::*;
use crate::provisioning::plan_provisioning;
use crate::provisioning::test_support::{instance_type, pod, snapshot};
use k8s_openapi::api::core::v1::Pod;

fn bound_of(snapshot: &Snapshot) -> f64 {
    let pods: Vec<&PodInfo> = snapshot.pods.iter().map(Arc::as_ref).collect();
    lower_bound(snapshot, &pods).expect("solved")
}

#[test]
fn the_bound_equals_a_known_optimum() {
    // Eight pods of one cpu on 4-cpu nodes at 1/h: two nodes.
    let pods = (0..8)
        .map(|i| pod(&format!("p{i}"), "1", "100Mi"))
        .collect();
    let one_type = snapshot(vec![instance_type("m-4", 4, 16, 1.0)], pods);
    assert!(
        (bound_of(&one_type) - 2.0).abs() < 1e-9,
        "{}",
        bound_of(&one_type)
    );
    // Four such pods, 2-cpu nodes at 1/h or 4-cpu nodes at 1.5/h: one
    // large node.
    let pods = (0..4)
        .map(|i| pod(&format!("p{i}"), "1", "100Mi"))
        .collect();
    let two_types = snapshot(
        vec![
            instance_type("m-2", 2, 8, 1.0),
            instance_type("m-4", 4, 16, 1.5),
        ],
        pods,
    );
    assert!(
        (bound_of(&two_types) - 1.5).abs() < 1e-9,
        "{}",
        bound_of(&two_types)
    );
    let plan = plan_provisioning(&two_types);
    assert!((plan.total_price_per_hour - 1.5).abs() < 1e-9);
}

#[test]
fn one_name_with_two_shapes_in_two_pools_is_two_types() {
    // Pool `z`'s `m-4` has 8 cpu (as a NodeOverlay or a node class may make
    // it): eight one-cpu pods fit one such node, so the bound is one node,
    // not the two that pool `default`'s 4-cpu `m-4` would need.
    let pods = (0..8)
        .map(|i| pod(&format!("p{i}"), "1", "100Mi"))
        .collect();
    let mut snapshot = snapshot(vec![instance_type("m-4", 4, 16, 1.0)], pods);
    let mut z = snapshot.node_pools[0].clone();
    z.metadata.name = Some("z".into());
    snapshot.node_pools.push(z);
    snapshot = snapshot.with_instance_types("z", vec![instance_type("m-4", 8, 16, 1.0)]);
    assert!(
        (bound_of(&snapshot) - 1.0).abs() < 1e-9,
        "{}",
        bound_of(&snapshot)
    );
    // Upstream's packing takes `z` first (equal weights, name descending).
    assert!((plan_provisioning(&snapshot).total_price_per_hour - 1.0).abs() < 1e-9);
}

#[test]
fn a_label_of_the_types_that_no_pool_mentions_leaves_the_bound_alone() {
    // Eight one-cpu pods on 4-cpu nodes at 1/h: two nodes, whether or not
    // the types carry a family label the pool does not speak of.
    let pods: Vec<Pod> = (0..8)
        .map(|i| pod(&format!("p{i}"), "1", "100Mi"))
        .collect();
    let plain = instance_type("m-4", 4, 16, 1.0);
    let mut labelled = plain.clone();
    labelled
        .requirements
        .add(Requirement::in_values("example.com/family", ["cx"]));
    for t in [plain, labelled] {
        let cluster = snapshot(vec![t], pods.clone());
        let plan = plan_provisioning(&cluster);
        assert_eq!(plan.node_claims.len(), 2);
        assert!(
            (bound_of(&cluster) - 2.0).abs() < 1e-9,
            "{}",
            bound_of(&cluster)
        );
    }
}

#[test]
fn cpu_and_memory_heavy_pods_share_nodes_in_the_bound() {
    // A cpu-heavy and a memory-heavy pod: each alone is cheapest on its
    // own specialised node (0.6 + 0.6), but one balanced node holds both
    // for 1.0. The bound may not exceed that.
    let pods = vec![pod("cpu", "3", "1Gi"), pod("mem", "500m", "14Gi")];
    let types = vec![
        instance_type("c-4", 4, 4, 0.6),
        instance_type("r-1", 1, 16, 0.6),
        instance_type("m-4", 4, 16, 1.0),
    ];
    let cluster = snapshot(types, pods);
    let bound = bound_of(&cluster);
    let plan = plan_provisioning(&cluster);
    assert!(
        bound <= plan.total_price_per_hour + 1e-12,
        "{bound} > {}",
        plan.total_price_per_hour
    );
    assert!(bound <= 1.0 + 1e-12, "{bound}");
    assert!(bound > 0.5, "{bound}");
}

#[test]
fn unlike_pods_that_fit_the_same_types_each_pay_their_own_share() {
    // Both shapes fit both types, but four cpu-heavy pods fill one
    // cpu-rich node exactly and four memory-heavy ones one memory-rich
    // node: 2.0, the optimum, which the bound must reach although a
    // balanced mix of the two types would hold the pods' summed demand
    // only at 5.0.
    let mut pods: Vec<Pod> = (0..4)
        .map(|i| pod(&format!("cpu{i}"), "1", "1Gi"))
        .collect();
    pods.extend((0..4).map(|i| pod(&format!("mem{i}"), "250m", "4Gi")));
    let types = vec![
        instance_type("c-4", 4, 4, 1.0),
        instance_type("r-1", 1, 16, 1.0),
    ];
    let bound = bound_of(&snapshot(types, pods));
    assert!((bound - 2.0).abs() < 1e-9, "{bound}");
}

#[test]
fn pods_that_each_need_a_node_of_their_own_are_charged_a_node_each() {
    // Three pods of 3 cpu on 4-cpu nodes at 1/h: no two share a node, so
    // three nodes (the fluid LP alone proves 2.25).
    let types = || vec![instance_type("m-4", 4, 16, 1.0)];
    let pods = (0..3)
        .map(|i| pod(&format!("big{i}"), "3", "1Gi"))
        .collect();
    let bound = bound_of(&snapshot(types(), pods));
    assert!((bound - 3.0).abs() < 1e-9, "{bound}");
    // Two such pods and two of 1.5 cpu, which fit beside neither: two
    // nodes for the big pods, and the others' fluid share (0.75) on top.
    // The optimum is 3 (the two smaller pods share a third node).
    let mut pods: Vec<Pod> = (0..2)
        .map(|i| pod(&format!("big{i}"), "3", "1Gi"))
        .collect();
    pods.extend((0..2).map(|i| pod(&format!("mid{i}"), "1500m", "1Gi")));
    let cluster = snapshot(types(), pods);
    let bound = bound_of(&cluster);
    assert!((bound - 2.75).abs() < 1e-6, "{bound}");
    assert!(bound <= plan_provisioning(&cluster).total_price_per_hour + 1e-12);
    // Small pods that fit beside the big ones add nothing: 2 nodes.
    let mut pods: Vec<Pod> = (0..2)
        .map(|i| pod(&format!("big{i}"), "3", "1Gi"))
        .collect();
    pods.extend((0..4).map(|i| pod(&format!("small{i}"), "500m", "1Gi")));
    let bound = bound_of(&snapshot(types(), pods));
    assert!((bound - 2.0).abs() < 1e-6, "{bound}");
}

proptest::proptest! {
    /// Large pods on small types, where integrality counts: the bound
    /// never exceeds the price of either mode's plan.
    #[test]
    fn the_bound_with_own_nodes_stays_below_plans(
        sizes in proptest::collection::vec((1_u32..4000, 1_u32..16), 1..12),
        second in proptest::option::of((2_i64..8, 0.5_f64..3.0)),
    ) {
        let mut types = vec![instance_type("m-4", 4, 16, 1.0)];
        if let Some((cpus, price)) = second {
            types.push(instance_type("other", cpus, cpus * 4, price));
        }
        let pods = sizes
            .iter()
            .enumerate()
            .map(|(i, (cpu, gib))| pod(&format!("p{i}"), &format!("{cpu}m"), &format!("{gib}Gi")))
            .collect();
        let cluster = snapshot(types, pods);
        let upstream = plan_provisioning(&cluster);
        let cost = crate::provisioning::plan_provisioning_with(&cluster, &crate::planning::Packing::Cost.into());
        let mut bounded = upstream.clone();
        bounded.add_lower_bound(&cluster);
        let bound = bounded.lower_bound_per_hour.expect("solved");
        proptest::prop_assert!(bound <= upstream.total_price_per_hour + 1e-9, "{} > {}", bound, upstream.total_price_per_hour);
        proptest::prop_assert!(bound <= cost.total_price_per_hour + 1e-9, "{} > {}", bound, cost.total_price_per_hour);
    }
}

#[test]
fn a_pod_no_type_holds_is_left_out_and_no_pods_cost_nothing() {
    let cluster = snapshot(
        vec![instance_type("m-2", 2, 8, 1.0)],
        vec![pod("huge", "64", "1Gi")],
    );
    assert_eq!(bound_of(&cluster), 0.0);
    let empty = snapshot(vec![instance_type("m-2", 2, 8, 1.0)], vec![]);
    assert_eq!(bound_of(&empty), 0.0);
}

#[test]
fn column_generation_reaches_the_full_lps_bound() {
    // Three families of twelve sizes, and pods of three shapes: the LP
    // over every column and the generated one prove the same bound.
    let mut types = Vec::new();
    for (family, gib_per_cpu, price) in [("c", 2, 0.04), ("m", 4, 0.05), ("r", 8, 0.065)] {
        for cpus in [2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 80, 96] {
            let name = format!("{family}-{cpus}");
            types.push(instance_type(
                &name,
                cpus,
                cpus * gib_per_cpu,
                price * cpus as f64,
            ));
        }
    }
    let mut pods = Vec::new();
    for i in 0..90 {
        let (cpu, memory) = match i % 3 {
            0 => (format!("{}m", 200 + 37 * i), format!("{}Mi", 512 + 101 * i)),
            1 => (format!("{}m", 1000 + 29 * i), "256Mi".to_owned()),
            _ => ("250m".to_owned(), format!("{}Mi", 4096 + 211 * i)),
        };
        pods.push(pod(&format!("p{i}"), &cpu, &memory));
    }
    let cluster = snapshot(types, pods);
    let generated = bound_of(&cluster);
    // The same groups and columns, every column in one LP.
    let pods: Vec<&PodInfo> = cluster.pods.iter().map(Arc::as_ref).collect();
    let full = {
        let _ = &pods;
        let catalog_types: Vec<&InstanceType> = cluster.instance_types["default"].iter().collect();
        let allocatable: Vec<Vec<f64>> = catalog_types
            .iter()
            .map(|t| {
                let list = t.allocatable();
                ["cpu", "memory", "pods"]
                    .iter()
                    .map(|r| list.get(r).max(0) as f64 / unit_scale(r))
                    .collect()
            })
            .collect();
        let columns: Vec<Column> = catalog_types
            .iter()
            .enumerate()
            .map(|(i, t)| Column {
                instance_type: i,
                price: t.offerings[0].price,
            })
            .collect();
        let mut groups: BTreeMap<Vec<usize>, Group> = BTreeMap::new();
        for pod in &cluster.pods {
            let asks = pod_requests(pod.spec.as_ref().expect("a spec")).expect("requests");
            let fits: Vec<usize> = (0..catalog_types.len())
                .filter(|&t| asks.fits(&catalog_types[t].allocatable()))
                .collect();
            let group = groups.entry(fits.clone()).or_insert_with(|| Group {
                demand: Demand {
                    prices: fits.iter().map(|&t| (t, columns[t].price)).collect(),
                    amounts: vec![0.0; 3],
                },
                members: BTreeMap::new(),
            });
            let request: Vec<f64> = ["cpu", "memory", "pods"]
                .iter()
                .map(|r| asks.get(r) as f64 / unit_scale(r))
                .collect();
            for (i, amount) in request.iter().enumerate() {
                group.demand.amounts[i] += amount;
            }
            *group
                .members
                .entry(request.iter().map(|x| x.to_bits()).collect())
                .or_insert(0) += 1;
        }
        let groups: Vec<Group> = groups.into_values().collect();
        let demands: Vec<Demand> = groups.iter().map(|g| g.demand.clone()).collect();
        let (weights, _) =
            crate::provisioning::optimise::dual::solve_dual(&demands, &columns, &allocatable)
                .expect("solved");
        certify(&groups, &columns, &allocatable, weights)
    };
    assert!(
        (generated - full).abs() <= 1e-9 * full.max(1.0),
        "{generated} vs {full}"
    );
    assert!(generated > 0.0);
}
