//! The carried set-up held to fresh ones (see the module documentation):
//! random clusters changed by rebound pods, deleted nodes and relabelled
//! claims, every change noted as a plan notes it.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use proptest::prelude::*;

use super::{CarriedSetup, NodeNames};
use crate::fast_hash::HashSet;
use crate::planning::MinValuesPolicy;
use crate::pods::PodInfo;
use crate::provisioning::scheduler::setup::Setup;
use crate::provisioning::test_support::{instance_type, snapshot};
use crate::provisioning::topology::{LabelMemo, TopologyBase};
use crate::snapshot::Snapshot;
use crate::snapshot::build::{NodeBuilder, PodBuilder};

/// `nodes` managed nodes of 8 cpu, the last still a NodeClaim alone (in
/// flight, its labels the claim's), and a pod of `millis` on each
/// `(node, millis)`.
fn cluster(nodes: usize, pods: &[(usize, u32)]) -> Snapshot {
    let mut cluster = snapshot(vec![instance_type("m-8", 8, 32, 1.0)], vec![]);
    cluster.nodes = (0..nodes)
        .map(|n| {
            NodeBuilder::managed(format!("node-{n}"), "default", "m-8")
                .allocatable("cpu", "8")
                .allocatable("memory", "32Gi")
                .allocatable("pods", "110")
                .build()
        })
        .collect();
    if let Some(last) = cluster.nodes.last_mut() {
        last.node = None;
    }
    cluster.pods = pods
        .iter()
        .enumerate()
        .map(|(i, &(node, millis))| {
            let pod = PodBuilder::new("default", format!("pod-{i}"))
                .requests(format!("{millis}m"), "1Gi")
                .on_node(format!("node-{}", node % nodes))
                .build();
            Arc::new(PodInfo::from(pod))
        })
        .collect();
    cluster
}

/// What a later pass's cluster may differ in.
#[derive(Clone, Debug)]
enum Change {
    /// The pod at this index (modulo) moves to the node at that index.
    Rebind(usize, usize),
    /// The node at this index is being deleted.
    Delete(usize),
    /// The NodeClaim of the node at this index gains a label.
    Relabel(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(p, n)| Change::Rebind(p, n)),
        any::<usize>().prop_map(Change::Delete),
        any::<usize>().prop_map(Change::Relabel),
    ]
}

/// Applies `change`, noting it in `carried` as a plan does.
fn apply(cluster: &mut Snapshot, change: &Change, carried: &mut CarriedSetup) {
    let nodes = cluster.nodes.len();
    match *change {
        Change::Rebind(pod, node) if !cluster.pods.is_empty() => {
            let at = pod % cluster.pods.len();
            let pod = Arc::make_mut(&mut cluster.pods[at]);
            if pod.spec.is_some() {
                let to = format!("node-{}", node % nodes);
                let from = pod.node_name.replace(to.clone());
                let touched = from.iter().map(String::as_str).chain([to.as_str()]);
                carried.note_changes([at], touched);
            }
        }
        Change::Rebind(..) => {}
        Change::Delete(node) => {
            let node = &mut cluster.nodes[node % nodes];
            if let Some(claim) = node.node_claim.as_mut() {
                claim.metadata.deletion_timestamp =
                    Some(Time("2026-06-01T00:00:00Z".parse().expect("a time")));
            }
            carried.note_changes([], [node.name()]);
        }
        Change::Relabel(node) => {
            let node = &mut cluster.nodes[node % nodes];
            if let Some(claim) = node.node_claim.as_mut() {
                claim
                    .metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .insert("team".to_owned(), "blue".to_owned());
            }
            carried.note_changes([], [node.name()]);
        }
    }
}

/// The indices of the pods `changes` rebind in a cluster of `pods` pods.
fn rebound(changes: &[Change], pods: usize) -> Vec<usize> {
    changes
        .iter()
        .filter_map(|change| match *change {
            Change::Rebind(pod, _) if pods > 0 => Some(pod % pods),
            _ => None,
        })
        .collect()
}

/// `before` changed by each of `changes` in turn, and what was
/// `carried` from it with every change noted.
fn changed(
    before: &Snapshot,
    mut carried: CarriedSetup,
    changes: &[Change],
) -> (Snapshot, CarriedSetup) {
    let mut after = before.clone();
    for change in changes {
        apply(&mut after, change, &mut carried);
    }
    (after, carried)
}

/// A fresh topology base of the set-up's cluster.
fn fresh_base(setup: &Setup<'_>, snapshot: &Snapshot) -> TopologyBase {
    setup.topology_base(
        snapshot,
        &HashSet::default(),
        &HashSet::default(),
        true,
        &mut LabelMemo::default(),
    )
}

proptest! {
    /// A topology base carried from an earlier copy of the cluster and
    /// updated for the pods rebound since reads as a fresh one, whatever
    /// else changed (nodes deleted, their claims relabelled).
    #[test]
    fn carried_topology_bases_read_as_fresh_ones(
        nodes in 1..6usize,
        pods in prop::collection::vec((any::<usize>(), 100..2000u32), 0..24),
        changes in prop::collection::vec(change(), 0..6),
    ) {
        let before = cluster(nodes, &pods);
        let first = Setup::new(&before);
        let base = fresh_base(&first, &before);
        let sources = first.topology_sources();
        let (after, carried) =
            changed(&before, first.carry(&before, CarriedSetup::default()), &changes);
        let taking = Setup::carrying(&after, Some(&carried), MinValuesPolicy::Strict);
        let moved = rebound(&changes, before.pods.len());
        prop_assert_eq!(carried.moved(), &moved[..]);
        let updated =
            taking.carried_topology_base(&after, &NodeNames::of(&after), base, &sources, &moved);
        prop_assert!(updated.is_some(), "a rebound pod is an update");
        let fresh = fresh_base(&Setup::new(&after), &after);
        prop_assert_eq!(updated.map(|b| b.canonical()), Some(fresh.canonical()));
    }

    /// A set-up that takes destinations carried from an earlier copy of
    /// the cluster reads the changed cluster exactly as a fresh set-up
    /// does, and takes unread the destinations of the nodes no change
    /// touched.
    #[test]
    fn carried_destinations_read_as_fresh_ones(
        nodes in 1..6usize,
        pods in prop::collection::vec((any::<usize>(), 100..2000u32), 0..24),
        changes in prop::collection::vec(change(), 0..6),
    ) {
        let before = cluster(nodes, &pods);
        let (after, carried) =
            changed(&before, Setup::new(&before).carry(&before, CarriedSetup::default()), &changes);
        let fresh = Setup::new(&after);
        let taking = Setup::carrying(&after, Some(&carried), MinValuesPolicy::Strict);
        let read = |setup: &Setup<'_>| {
            setup.existing.iter().map(|(i, n)| (*i, (**n).clone())).collect::<Vec<_>>()
        };
        prop_assert_eq!(read(&taking), read(&fresh));
        let first = Setup::new(&before);
        for (i, node) in &taking.existing {
            let unchanged = before.nodes[*i] == after.nodes[*i]
                && first.bound.on(after.nodes[*i].name()).len()
                    == taking.bound.on(after.nodes[*i].name()).len()
                && !changes.iter().any(|c| matches!(c, Change::Rebind(..)));
            if unchanged {
                let name = after.nodes[*i].name();
                prop_assert!(carried.destinations.nodes.get(name).is_some_and(|r| Arc::ptr_eq(&r.destination, node)));
            }
        }
    }

    /// Carrying on from a set-up that took destinations carried, told
    /// that the node names are distinct (so that the destinations taken
    /// are not looked up), keeps what carrying on without knowing keeps.
    #[test]
    fn carrying_on_with_distinct_names_keeps_the_same(
        nodes in 1..6usize,
        pods in prop::collection::vec((any::<usize>(), 100..2000u32), 0..24),
        changes in prop::collection::vec(change(), 0..6),
    ) {
        let before = cluster(nodes, &pods);
        let kept = |names_distinct: bool| {
            let (after, carried) =
                changed(&before, Setup::new(&before).carry(&before, CarriedSetup::default()), &changes);
            let taking = Setup::carrying(&after, Some(&carried), MinValuesPolicy::Strict);
            let next = taking.carry_knowing(&after, carried, names_distinct);
            let mut kept: Vec<(String, super::ExistingNode)> = next
                .destinations
                .nodes
                .iter()
                .map(|(name, read)| (name.clone(), (*read.destination).clone()))
                .collect();
            kept.sort_by(|a, b| a.0.cmp(&b.0));
            kept
        };
        prop_assert!(before.nodes.iter().map(|n| n.name()).collect::<HashSet<_>>().len() == before.nodes.len());
        prop_assert_eq!(kept(true), kept(false));
    }
}
