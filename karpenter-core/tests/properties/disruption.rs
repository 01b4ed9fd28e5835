//! Properties of disruption plans over random clusters: small catalogs (three
//! sizes, on-demand and spot), managed nodes of random types running random
//! pods, some protected by `karpenter.sh/do-not-disrupt` or by a
//! PodDisruptionBudget that allows nothing, some claiming a Dynamic Resource
//! Allocation device, some nodes drifted, pools with random budgets and
//! consolidation policies.
//!
//! For each plan (expiration, being forceful, is exempt from the blocker and
//! budget promises, but what it takes counts against budgets afterwards):
//! - the same snapshot gives the same plan, byte for byte;
//! - no command takes a blocked node or one running a blocking pod;
//! - no command but expiration takes a node running a pod with a DRA claim
//!   (no simulation can move it: it gets no capacity);
//! - every pool's nodes taken so far stay within what its budgets allowed for
//!   each command's reason when the plan began;
//! - consolidation never raises cost (savings are not negative);
//! - after each command, with the nodes of it and every earlier command gone,
//!   every moved pod has a place but those with a DRA claim (which only
//!   expiration moves), and the provisioning validator finds no violation in
//!   that simulated cluster.
//!
//! 256 cases by default (`PROPTEST_CASES` overrides).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::jiff::Timestamp;
use karpenter_core::api::{DisruptionReason, NodeClaim, NodePool};
use karpenter_core::cloudprovider::{InstanceType, Offering, Reservation};
use karpenter_core::disruption::{
    CommandReason, DisruptionOptions, Simulator, StrandedReason, allowed_disruptions,
    first_command, plan_disruption_with, simulate, without_nodes,
};
use karpenter_core::planning::{Packing, PlanningOptions};
use karpenter_core::provisioning::{
    DRA_UNSUPPORTED, ProvisioningOptions, plan_provisioning_with, validate,
};
use karpenter_core::resources::ResourceList;
use karpenter_core::scheduling::WellKnownLabels;
use karpenter_core::snapshot::{Snapshot, join_nodes};
use proptest::prelude::*;
use serde_json::json;

const NOW: &str = "2026-06-01T00:00:00Z";
const SIZES: [(&str, i64, f64); 3] = [("small", 2, 0.1), ("medium", 4, 0.2), ("large", 8, 0.4)];

/// One node: its type, capacity type, pool, whether drifted, and its pods
/// (cpu in millicores; protected by do-not-disrupt; selected by the PDB;
/// claiming a DRA device).
#[derive(Clone, Debug)]
struct NodeSpec {
    size: usize,
    spot: bool,
    pool: usize,
    drifted: bool,
    pods: Vec<(i64, bool, bool, bool)>,
}

#[derive(Clone, Debug)]
struct ClusterSpec {
    /// Per pool: budget nodes, consolidation policy and expireAfter.
    pools: Vec<(&'static str, &'static str, &'static str)>,
    nodes: Vec<NodeSpec>,
    /// The capacity of a cheap reservation of the medium size, if any.
    reservation: Option<u32>,
}

fn cluster() -> impl Strategy<Value = ClusterSpec> {
    let budget = prop::sample::select(vec!["0", "1", "2", "50%", "100%"]);
    let policy = prop::sample::select(vec!["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"]);
    // Nodes are five months old: 720h has passed, 8760h has not.
    let expire_after = prop::sample::select(vec!["Never", "8760h", "720h"]);
    let pools = prop::collection::vec((budget, policy, expire_after), 1..3);
    let pod = (
        prop::sample::select(vec![250i64, 500, 1000, 1500]),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
    );
    let node = (
        0..3usize,
        any::<bool>(),
        0..2usize,
        prop::bool::weighted(0.2),
        prop::collection::vec(pod, 0..4),
    )
        .prop_map(|(size, spot, pool, drifted, pods)| NodeSpec {
            size,
            spot,
            pool,
            drifted,
            pods,
        });
    let reservation = prop::option::weighted(0.3, 0_u32..=2);
    (pools, prop::collection::vec(node, 1..7), reservation).prop_map(
        |(pools, mut nodes, reservation)| {
            for node in &mut nodes {
                node.pool %= pools.len();
            }
            ClusterSpec {
                pools,
                nodes,
                reservation,
            }
        },
    )
}

/// The reservation's id, and the label naming it.
const RESERVATION: (&str, &str) = ("r-medium", "example.com/reservation-id");

fn instance_types(reservation: Option<u32>) -> Vec<InstanceType> {
    SIZES
        .iter()
        .map(|&(name, cpu, price)| {
            let mut capacity = ResourceList::new();
            capacity.set("cpu", cpu * 1000);
            capacity.set("memory", cpu * 4 * 1024 * 1024 * 1024 * 1000);
            capacity.set("pods", 110_000);
            let mut offerings = vec![
                Offering::new("zone-a", "on-demand", price),
                Offering::new("zone-a", "spot", price / 2.0),
            ];
            if let (Some(capacity), "medium") = (reservation, name) {
                let (id, label) = RESERVATION;
                let reservation = Reservation {
                    label: label.to_owned(),
                    id: id.to_owned(),
                    capacity,
                };
                let offering = Offering::reserved("zone-a", price / 10.0, reservation);
                offerings.push(if capacity == 0 {
                    offering.unavailable()
                } else {
                    offering
                });
            }
            let labels: [(&str, &str); 0] = [];
            InstanceType::new(name, labels, offerings, capacity, ResourceList::new())
        })
        .collect()
}

fn from<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// The `i`th node of the cluster, managed and ready, and its NodeClaim
/// (drifted if `node` says so).
fn node_and_claim(i: usize, node: &NodeSpec) -> (Node, NodeClaim) {
    let name = format!("node-{i}");
    let (size, cpu, _) = SIZES[node.size];
    let capacity_type = if node.spot { "spot" } else { "on-demand" };
    let labels = json!({
        "karpenter.sh/nodepool": format!("pool-{}", node.pool),
        "node.kubernetes.io/instance-type": size,
        "topology.kubernetes.io/zone": "zone-a",
        "karpenter.sh/capacity-type": capacity_type,
        "kubernetes.io/hostname": name,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "karpenter.sh/initialized": "true",
        "karpenter.sh/registered": "true",
        "karpenter.fake/fakenodeclass": "default",
    });
    let allocatable =
        json!({"cpu": format!("{cpu}"), "memory": format!("{}Gi", cpu * 4), "pods": "110"});
    let kube_node: Node = from(json!({
        "metadata": {"name": name, "labels": labels, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"providerID": format!("fake:///{name}")},
        "status": {"allocatable": allocatable, "capacity": allocatable, "conditions": [{"type": "Ready", "status": "True"}]},
    }));
    let mut conditions = vec![
        json!({"type": "Initialized", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}),
    ];
    if node.drifted {
        conditions.push(json!({"type": "Drifted", "status": "True", "lastTransitionTime": "2026-05-01T00:00:00Z"}));
    }
    let claim: NodeClaim = from(json!({
        "metadata": {"name": format!("nc-{name}"), "labels": labels, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"}, "requirements": []},
        "status": {"nodeName": name, "providerID": format!("fake:///{name}"), "conditions": conditions},
    }));
    (kube_node, claim)
}

/// The pods `node` (the `i`th) runs, owned by a ReplicaSet.
fn running_pods(i: usize, node: &NodeSpec) -> Vec<Pod> {
    let name = format!("node-{i}");
    let mut pods: Vec<Pod> = Vec::new();
    for (j, &(cpu_m, do_not_disrupt, guarded, dra)) in node.pods.iter().enumerate() {
        let pod_name = format!("app-{i}-{j}");
        let mut annotations = serde_json::Map::new();
        if do_not_disrupt {
            annotations.insert("karpenter.sh/do-not-disrupt".into(), json!("true"));
        }
        let app = if guarded { "guarded" } else { "app" };
        let mut container = json!({"name": "c", "resources": {"requests": {"cpu": format!("{cpu_m}m"), "memory": "512Mi"}}});
        let mut spec = json!({"nodeName": name});
        if dra {
            container["resources"]["claims"] = json!([{"name": "gpu"}]);
            spec["resourceClaims"] = json!([{"name": "gpu", "resourceClaimTemplateName": "gpu"}]);
        }
        spec["containers"] = json!([container]);
        pods.push(from(json!({
            "metadata": {
                "name": pod_name, "namespace": "default", "uid": format!("uid-{pod_name}"),
                "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": app},
                "annotations": annotations,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs", "controller": true}],
            },
            "spec": spec,
            "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z", "conditions": [{"type": "Ready", "status": "True"}]},
        })));
    }
    pods
}

fn snapshot(spec: &ClusterSpec) -> Snapshot {
    let types: Arc<[InstanceType]> = instance_types(spec.reservation).into();
    let pools: Vec<NodePool> = spec
        .pools
        .iter()
        .enumerate()
        .map(|(i, (budget, policy, expire_after))| {
            from(json!({
                "metadata": {"name": format!("pool-{i}")},
                "spec": {
                    "template": {"spec": {"requirements": [], "expireAfter": expire_after, "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"}}},
                    "disruption": {"consolidationPolicy": policy, "consolidateAfter": "0s", "budgets": [{"nodes": budget}]},
                },
            }))
        })
        .collect();
    let mut nodes: Vec<Node> = Vec::new();
    let mut claims: Vec<NodeClaim> = Vec::new();
    let mut pods: Vec<Pod> = Vec::new();
    for (i, node) in spec.nodes.iter().enumerate() {
        let (kube_node, claim) = node_and_claim(i, node);
        nodes.push(kube_node);
        claims.push(claim);
        pods.extend(running_pods(i, node));
    }
    let pdb: PodDisruptionBudget = from(json!({
        "metadata": {"name": "guard", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "guarded"}}, "maxUnavailable": 0},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "observedGeneration": 1},
    }));
    let instance_types: BTreeMap<String, Arc<[InstanceType]>> = pools
        .iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                Arc::clone(&types),
            )
        })
        .collect();
    Snapshot {
        node_pools: pools,
        instance_types,
        nodes: join_nodes(nodes, claims),
        pods: pods.into_iter().map(|p| Arc::new(p.into())).collect(),
        pod_disruption_budgets: vec![pdb],
        well_known_labels: WellKnownLabels::core().clone(),
        ..Snapshot::default()
    }
}

fn reason(command: CommandReason) -> DisruptionReason {
    match command {
        CommandReason::Empty => DisruptionReason::Empty,
        CommandReason::Drifted => DisruptionReason::Drifted,
        _ => DisruptionReason::Underutilized,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn plans_keep_their_promises(
        spec in cluster(),
        m_to_n in any::<bool>(),
        spot_to_spot in any::<bool>(),
        cost in any::<bool>(),
    ) {
        let now: Timestamp = NOW.parse().expect("a timestamp");
        let snapshot = snapshot(&spec);
        let packing = if cost { Packing::Cost } else { Packing::Upstream };
        let options = DisruptionOptions::default()
            .with_planning(PlanningOptions::from(packing))
            .with_m_to_n(m_to_n)
            .with_spot_to_spot(spot_to_spot);
        let first = plan_disruption_with(&snapshot, now, &options);
        let again = plan_disruption_with(&snapshot, now, &options);
        prop_assert_eq!(serde_json::to_string(&first).unwrap(), serde_json::to_string(&again).unwrap());
        // What a driver starts is the plan's first command.
        let started = first_command(&snapshot, now, &options);
        prop_assert_eq!(started.as_ref(), first.commands.first());

        // Blocked nodes: those with a protected pod (nothing else blocks here)
        // that expiration did not take.
        let protected: BTreeSet<String> = spec
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.pods.iter().any(|&(_, dnd, guarded, _)| dnd || guarded))
            .map(|(i, _)| format!("node-{i}"))
            .collect();
        let expired: BTreeSet<String> = first
            .commands
            .iter()
            .filter(|c| c.reason == CommandReason::Expired)
            .flat_map(|c| c.candidates.iter().cloned())
            .collect();
        let blocked: BTreeSet<String> = first.blocked.iter().map(|b| b.node.clone()).collect();
        let expected: BTreeSet<String> = protected.difference(&expired).cloned().collect();
        prop_assert_eq!(&blocked, &expected);

        let node_of = |name: &str| -> &NodeSpec {
            let index: usize = name.trim_start_matches("node-").parse().expect("a node index");
            &spec.nodes[index]
        };
        let pool_of = |name: &str| node_of(name).pool;
        // The pods no simulation can move: those with a DRA claim.
        let dra_pods: BTreeSet<String> = spec
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| {
                n.pods
                    .iter()
                    .enumerate()
                    .filter(|(_, pod)| pod.3)
                    .map(move |(j, _)| format!("default/app-{i}-{j}"))
            })
            .collect();
        // No more replacements launch into the reservation than it has.
        let reserved = first
            .commands
            .iter()
            .flat_map(|c| &c.replacements)
            .filter(|r| r.launch.as_ref().and_then(|l| l.reservation_id.as_deref()) == Some(RESERVATION.0))
            .count();
        prop_assert!(
            reserved <= spec.reservation.unwrap_or(0) as usize,
            "{} replacements launch into a reservation of {:?}",
            reserved,
            spec.reservation
        );
        let mut taken: BTreeSet<String> = BTreeSet::new();
        for (i, command) in first.commands.iter().enumerate() {
            // Expiration is forceful: it takes protected nodes and ignores
            // budgets, but what it takes counts against them afterwards.
            let forceful = command.reason == CommandReason::Expired;
            for candidate in &command.candidates {
                prop_assert!(forceful || !protected.contains(candidate), "command {} takes protected {}", i, candidate);
                let holds_dra = node_of(candidate).pods.iter().any(|pod| pod.3);
                prop_assert!(forceful || !holds_dra, "command {} takes {}, which runs a pod with a DRA claim", i, candidate);
                prop_assert!(taken.insert(candidate.clone()), "{} taken twice", candidate);
            }
            // Budgets: the nodes of each pool taken so far, against what the
            // pool allowed this command's reason at the start.
            for (p, pool) in snapshot.node_pools.iter().enumerate() {
                let nodes = spec.nodes.iter().filter(|n| n.pool == p).count() as u64;
                let allowed = allowed_disruptions(pool, reason(command.reason), now, nodes).allowed;
                let so_far = taken.iter().filter(|n| pool_of(n) == p).count() as u64;
                let touched = command.candidates.iter().any(|c| pool_of(c) == p);
                if touched && !forceful {
                    prop_assert!(allowed.is_none_or(|a| so_far <= a), "pool {} over budget: {} > {:?}", p, so_far, allowed);
                }
            }
            if command.reason == CommandReason::Underutilized || command.reason == CommandReason::Empty {
                prop_assert!(command.savings_per_hour >= 0.0, "command {} raises cost: {:?}", i, command);
                // Consolidation never replaces nodes with as many or more.
                prop_assert!(command.replacements.len() <= 1 || command.replacements.len() < command.candidates.len(), "command {} does not shrink: {:?}", i, command);
            }
            let removed: BTreeSet<&str> = taken.iter().map(String::as_str).collect();
            let simulation = simulate(&snapshot, &removed, &BTreeSet::new(), now, PlanningOptions::from(packing));
            let stranded_only_dra = simulation
                .stranded
                .iter()
                .all(|s| dra_pods.contains(s.pod.as_str()) && matches!(&s.reason, StrandedReason::Unschedulable(r) if r == DRA_UNSUPPORTED));
            prop_assert!(stranded_only_dra, "after command {}: {:?}", i, simulation.stranded);
            let (changed, _) = without_nodes(&snapshot, &removed, now);
            let violations = validate(&changed, &simulation.plan);
            prop_assert!(violations.is_empty(), "after command {}: {:?}", i, violations);
        }
    }

    /// The shared set-up answers every simulation as the reference does:
    /// random nodes removed, some of them being deleted already.
    #[test]
    fn simulator_matches_the_reference(spec in cluster(), picks in prop::collection::vec((0..7usize, any::<bool>()), 0..8)) {
        let now: Timestamp = NOW.parse().expect("a timestamp");
        let snapshot = snapshot(&spec);
        let simulator = Simulator::new(&snapshot, now);
        let names: Vec<String> = (0..spec.nodes.len()).map(|i| format!("node-{i}")).collect();
        // Every single node, then the picked set.
        for name in &names {
            let removed: BTreeSet<&str> = [name.as_str()].into();
            let reference = simulate(&snapshot, &removed, &BTreeSet::new(), now, PlanningOptions::default());
            prop_assert_eq!(simulator.simulate(&removed, &BTreeSet::new()), reference);
        }
        let mut removed: BTreeSet<&str> = BTreeSet::new();
        let mut deleting: BTreeSet<&str> = BTreeSet::new();
        for (pick, being_deleted) in picks {
            let name = names[pick % names.len()].as_str();
            removed.insert(name);
            if being_deleted {
                deleting.insert(name);
            }
        }
        let reference = simulate(&snapshot, &removed, &deleting, now, PlanningOptions::default());
        prop_assert_eq!(simulator.simulate(&removed, &deleting), reference);
    }

    /// One simulator shared by threads (its memos filled by whichever asks
    /// first) answers every simulation as the reference does: each thread
    /// removes every node in turn, starting at a different one.
    #[test]
    fn a_simulator_shared_by_threads_matches_the_reference(spec in cluster()) {
        let now: Timestamp = NOW.parse().expect("a timestamp");
        let snapshot = snapshot(&spec);
        let names: Vec<String> = (0..spec.nodes.len()).map(|i| format!("node-{i}")).collect();
        let reference: Vec<_> = names
            .iter()
            .map(|name| simulate(&snapshot, &[name.as_str()].into(), &BTreeSet::new(), now, PlanningOptions::default()))
            .collect();
        let simulator = Simulator::new(&snapshot, now);
        let threads = 3;
        let answers: Vec<Vec<(usize, _)>> = std::thread::scope(|scope| {
            let running: Vec<_> = (0..threads)
                .map(|t| {
                    let (simulator, names) = (&simulator, &names);
                    scope.spawn(move || {
                        (0..names.len())
                            .map(|k| (k + t * names.len() / threads) % names.len())
                            .map(|i| {
                                let removed: BTreeSet<&str> = [names[i].as_str()].into();
                                (i, simulator.simulate(&removed, &BTreeSet::new()))
                            })
                            .collect()
                    })
                })
                .collect();
            running.into_iter().map(|t| t.join().expect("no panic")).collect()
        });
        for (i, simulation) in answers.into_iter().flatten() {
            prop_assert_eq!(&simulation, &reference[i], "removing {}", names[i]);
        }
    }

    /// With the `CapacityBuffer` gate, a buffer's chunks are pending pods
    /// of every simulation: the shared set-up still answers as the
    /// reference does; plans are deterministic, keep the budgets and never
    /// raise cost by consolidation; and the first emptiness command takes
    /// no node that provisioning puts a chunk on.
    #[test]
    fn buffers_keep_their_room_and_the_planners_agree(
        spec in cluster(),
        replicas in 1..=3i32,
        cpu_m in prop::sample::select(vec![250i64, 900, 1900, 3500]),
    ) {
        let now: Timestamp = NOW.parse().expect("a timestamp");
        let snapshot = with_buffer(snapshot(&spec), replicas, cpu_m);
        let gates = karpenter_core::FeatureGates::default()
            .with(karpenter_core::FeatureGate::CapacityBuffer, true);
        let planning = PlanningOptions::default().with_feature_gates(gates);
        let simulator = Simulator::new(&snapshot, now).with_options(planning);
        for i in 0..spec.nodes.len() {
            let name = format!("node-{i}");
            let removed: BTreeSet<&str> = [name.as_str()].into();
            let reference = simulate(&snapshot, &removed, &BTreeSet::new(), now, planning);
            prop_assert_eq!(simulator.simulate(&removed, &BTreeSet::new()), reference);
        }
        let options = DisruptionOptions::default().with_planning(planning);
        let first = plan_disruption_with(&snapshot, now, &options);
        let again = plan_disruption_with(&snapshot, now, &options);
        prop_assert_eq!(serde_json::to_string(&first).unwrap(), serde_json::to_string(&again).unwrap());
        let holders: BTreeSet<String> = plan_provisioning_with(
            &snapshot,
            &ProvisioningOptions::from(planning).at(now),
        )
        .capacity_buffers
        .into_iter()
        .flat_map(|b| b.existing_nodes.into_keys())
        .collect();
        if let Some(command) = first.commands.first().filter(|c| c.reason == CommandReason::Empty) {
            for node in &command.candidates {
                prop_assert!(!holders.contains(node), "emptiness takes {}, which holds buffer chunks", node);
            }
        }
        let mut taken: BTreeSet<String> = BTreeSet::new();
        for (i, command) in first.commands.iter().enumerate() {
            if matches!(command.reason, CommandReason::Underutilized | CommandReason::Empty) {
                prop_assert!(command.savings_per_hour >= 0.0, "command {} raises cost: {:?}", i, command);
            }
            let forceful = command.reason == CommandReason::Expired;
            taken.extend(command.candidates.iter().cloned());
            for (p, pool) in snapshot.node_pools.iter().enumerate() {
                let nodes = spec.nodes.iter().filter(|n| n.pool == p).count() as u64;
                let allowed = allowed_disruptions(pool, reason(command.reason), now, nodes).allowed;
                let pool_name = format!("pool-{p}");
                let so_far = taken
                    .iter()
                    .filter(|n| spec.nodes[n.trim_start_matches("node-").parse::<usize>().unwrap_or(0)].pool == p)
                    .count() as u64;
                let touched = command.candidates.iter().any(|c| spec.nodes[c.trim_start_matches("node-").parse::<usize>().unwrap_or(0)].pool == p);
                if touched && !forceful {
                    prop_assert!(allowed.is_none_or(|a| so_far <= a), "{} over budget: {} > {:?}", pool_name, so_far, allowed);
                }
            }
        }
    }
}

/// `snapshot` with a CapacityBuffer of `replicas` chunks of `cpu_m`
/// millicores.
fn with_buffer(mut snapshot: Snapshot, replicas: i32, cpu_m: i64) -> Snapshot {
    let template: k8s_openapi::api::core::v1::PodTemplate = from(json!({
        "metadata": {"name": "chunk", "namespace": "default"},
        "template": {"spec": {"containers": [{"name": "pause", "resources": {"requests": {
            "cpu": format!("{cpu_m}m"), "memory": "512Mi",
        }}}]}},
    }));
    let buffer: karpenter_core::api::CapacityBuffer = from(json!({
        "metadata": {"name": "headroom", "namespace": "default"},
        "spec": {"podTemplateRef": {"name": "chunk"}, "replicas": replicas},
    }));
    snapshot.capacity_buffers = karpenter_core::capacity_buffers::CapacityBuffers::new(
        vec![buffer],
        vec![template],
        Vec::new(),
    );
    snapshot
}
