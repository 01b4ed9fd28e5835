//! What a plan carries from one pass to the next, so that a pass after the
//! first costs what the commands before it changed rather than what the
//! cluster holds ([`Carried`]): the candidates' assessments
//! ([`CarriedCandidates`]), what the pass's simulator read ([`CarriedSetup`]),
//! and the PodDisruptionBudgets, read once.
//!
//! After each command the plan notes what it changed on both
//! ([`Carried::note_changes`]). What a plan must note, what is checked rather
//! than trusted, and why a pass that takes what was carried finds what a
//! fresh pass finds, are written once, with the set-up carried
//! (`provisioning/scheduler/carry/`, [`CarriedSetup`]).
//!
//! The candidates take the same notes. A plan's passes see one cluster that
//! each command changes a little: its nodes start deleting, its pods move to
//! a few destinations, its replacements arrive. So the plan keeps the pods of
//! each node and each node's whole assessment ([`Outcome`]), and forgets the
//! nodes noted ([`CarriedCandidates::note_changes`]): a pass assesses those
//! again and takes the rest as they were. This is exact because a node's
//! assessment reads only the node, its NodeClaim and its pods, besides what a
//! plan never changes for it (the pools; their instance types, whose
//! offerings it reads available or not; the PodDisruptionBudgets; the
//! provider's drift; the time), and the plan notes every node whose claim or
//! pods a command changes. The unit tests hold every pass's carried
//! assessments and budget counts to fresh ones (in the planner's `with_pass`,
//! over the random plans of `disruption/planner/tests.rs`).

use std::sync::Arc;

use rayon::prelude::*;

use super::allowances::{Standing, Totals};
use super::drift_detection::DriftReason;
use super::plan::{Blocked, Command};
use crate::fast_hash::HashMap;
use crate::pods::PodBlock;
use crate::pods::{Pdbs, PodInfo, bound_node, pod_key};
use crate::provisioning::CarriedSetup;
use crate::snapshot::Snapshot;

use k8s_openapi::jiff::Timestamp;

/// What assessing a node found, kept until a command touches it.
#[derive(Clone, Debug)]
pub(super) enum Outcome {
    /// Not something disruption could act on: left out.
    LeftOut,
    /// Blocked before its pods were looked at.
    Blocked(Blocked),
    /// A candidate, unless a pod blocks it.
    Assessed(Box<Assessed>),
}

/// A node assessed as a candidate: what its
/// [`Candidate`](super::candidates::Candidate) is made of, besides the node
/// itself.
#[derive(Clone, Debug)]
pub(super) struct Assessed {
    /// Its pool, as an index into the snapshot's pools (a plan never
    /// changes them).
    pub(super) pool: usize,
    /// Its instance type, as an index into its pool's types.
    pub(super) instance_type: Option<usize>,
    pub(super) zone: Option<Arc<str>>,
    pub(super) capacity_type: Option<Arc<str>>,
    pub(super) price: f64,
    pub(super) facts: Facts,
    /// The entry for the blocked nodes when a pod blocks it.
    pub(super) pod_blocked: Option<Blocked>,
}

/// What a node's pods and times say of it as a candidate.
#[derive(Clone, Debug)]
pub(super) struct Facts {
    /// Every pod bound to it, as indices into the snapshot's pods, in
    /// `namespace/name` order.
    pub(super) pods: Arc<[usize]>,
    /// The reschedulable pods among them.
    pub(super) reschedulable: Arc<[usize]>,
    pub(super) reschedule_cost: f64,
    pub(super) disruption_cost: f64,
    pub(super) created: Timestamp,
    pub(super) consolidatable_at: Option<Timestamp>,
    pub(super) expires_at: Option<Timestamp>,
    pub(super) drift: Option<DriftReason>,
    pub(super) pod_block: Option<PodBlock>,
}

/// A pod that a command moved, for [`Carried::note_changes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    /// Its index in the snapshot's pods.
    pub(crate) pod: usize,
    /// The node it was bound to, if any.
    pub(crate) from: Option<String>,
    /// The node it is bound to now.
    pub(crate) to: String,
}

/// What a pass leaves for the next: the candidates' assessments and what its
/// simulator read, with what every pass reads alike (see the module
/// documentation).
pub(super) struct Carried<'p> {
    pub(super) candidates: CarriedCandidates,
    pub(super) setup: CarriedSetup,
    /// The PodDisruptionBudgets, read once: a plan never changes them.
    pub(super) pdbs: Arc<Pdbs<'p>>,
}

impl<'p> Carried<'p> {
    /// Nothing carried yet over `snapshot`.
    pub(super) fn new(snapshot: &'p Snapshot) -> Carried<'p> {
        Carried {
            candidates: CarriedCandidates::new(snapshot),
            setup: CarriedSetup::default(),
            pdbs: Arc::new(Pdbs::new(&snapshot.pod_disruption_budgets)),
        }
    }

    /// Notes that `command` was applied to `working`, moving the pods of
    /// `moved`: the nodes it takes, the nodes it moves pods from and to, and
    /// the pods it moves, which the next pass reads again.
    pub(super) fn note_changes(&mut self, working: &Snapshot, command: &Command, moved: &[Move]) {
        self.candidates
            .note_changes(working, &command.candidates, moved);
        let touched = moved
            .iter()
            .flat_map(|m| m.from.as_deref().into_iter().chain([m.to.as_str()]));
        self.setup.note_changes(
            moved.iter().map(|m| m.pod),
            command.candidates.iter().map(String::as_str).chain(touched),
        );
    }
}

/// The pods of each node and the assessments of the nodes no command has
/// touched since (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct CarriedCandidates {
    /// The pods bound to each node name, as indices into the snapshot's
    /// pods, in `namespace/name` order (ties in snapshot order).
    bound: HashMap<String, Vec<usize>>,
    /// Each node's assessment and standing toward its pool's budgets, by its
    /// index in the snapshot's nodes: `None` when it was not assessed yet,
    /// or was touched since.
    outcomes: Vec<Option<(Outcome, Standing)>>,
    /// The standings kept, added up.
    totals: Totals,
    /// The indices of the nodes of each name.
    nodes: HashMap<String, Vec<usize>>,
    /// How many of the snapshot's nodes `nodes` holds.
    indexed: usize,
}

impl CarriedCandidates {
    /// Nothing assessed yet over `snapshot`: its pods grouped by node.
    pub(crate) fn new(snapshot: &Snapshot) -> CarriedCandidates {
        // Gathered by borrowed names (a name copied per pod would cost more
        // than the grouping), sorted in parallel, then owned.
        let mut by_node: HashMap<&str, Vec<usize>> = HashMap::default();
        for (i, pod) in snapshot.pods.iter().enumerate() {
            if let Some(node) = bound_node(pod) {
                by_node.entry(node).or_default().push(i);
            }
        }
        by_node.par_iter_mut().for_each(|(_, pods)| {
            // Stable: pods of one key stay in snapshot order.
            pods.sort_by_cached_key(|&i| pod_key(snapshot.pods[i].as_ref()));
        });
        let mut carried = CarriedCandidates {
            bound: by_node
                .into_iter()
                .map(|(node, pods)| (node.to_owned(), pods))
                .collect(),
            outcomes: Vec::new(),
            totals: Totals::default(),
            nodes: HashMap::default(),
            indexed: 0,
        };
        carried.index_nodes(snapshot);
        carried
    }

    /// The pods bound to the node `name`, as indices into the snapshot's
    /// pods, in `namespace/name` order.
    pub(super) fn pods_of(&self, name: &str) -> &[usize] {
        self.bound.get(name).map_or(&[], Vec::as_slice)
    }

    /// The assessment kept for the node at `index`, if it is untouched.
    pub(super) fn outcome(&self, index: usize) -> Option<&Outcome> {
        self.outcomes
            .get(index)?
            .as_ref()
            .map(|(outcome, _)| outcome)
    }

    /// The standings of the nodes assessed, added up: after a pass has
    /// assessed every node, those of the whole cluster.
    pub(crate) fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The indices of the first `nodes` nodes that have no assessment kept.
    pub(super) fn unassessed(&self, nodes: usize) -> Vec<usize> {
        (0..nodes).filter(|&i| self.outcome(i).is_none()).collect()
    }

    /// Keeps `outcome` and `standing` for the node at `index`, which has
    /// none kept.
    pub(super) fn keep(&mut self, index: usize, outcome: Outcome, standing: Standing) {
        if self.outcomes.len() <= index {
            self.outcomes.resize(index + 1, None);
        }
        self.totals.add(&standing);
        self.outcomes[index] = Some((outcome, standing));
    }

    /// Notes a command, once it is applied to `snapshot`: the nodes it
    /// `took` and the pods it `moved` (each now bound to its new node in
    /// `snapshot`). Their nodes are assessed again by the next pass; the
    /// nodes it added are indexed.
    pub(crate) fn note_changes(&mut self, snapshot: &Snapshot, took: &[String], moved: &[Move]) {
        self.index_nodes(snapshot);
        for name in took {
            self.forget(name);
        }
        for step in moved {
            if let Some(from) = &step.from {
                if let Some(pods) = self.bound.get_mut(from) {
                    pods.retain(|&i| i != step.pod);
                }
                self.forget(from);
            }
            let pods = self.bound.entry(step.to.clone()).or_default();
            let key = |i: usize| (pod_key(snapshot.pods[i].as_ref()), i);
            let moved_key = key(step.pod);
            let at = pods.partition_point(|&i| key(i) < moved_key);
            pods.insert(at, step.pod);
            self.forget(&step.to);
        }
    }

    /// Forgets the assessments of every node named `name`.
    fn forget(&mut self, name: &str) {
        for &index in self.nodes.get(name).into_iter().flatten() {
            if let Some(kept) = self.outcomes.get_mut(index)
                && let Some((_, standing)) = kept.take()
            {
                self.totals.remove(&standing);
            }
        }
    }

    /// Indexes the nodes of `snapshot` not indexed yet (a snapshot's nodes
    /// are only ever added to during a plan).
    fn index_nodes(&mut self, snapshot: &Snapshot) {
        for (i, node) in snapshot.nodes.iter().enumerate().skip(self.indexed) {
            self.nodes
                .entry(node.name().to_owned())
                .or_default()
                .push(i);
        }
        self.indexed = snapshot.nodes.len();
    }
}

/// The pods at `indices` of `snapshot`.
pub(super) fn pods_at<'s>(snapshot: &'s Snapshot, indices: &[usize]) -> Vec<&'s PodInfo> {
    indices
        .iter()
        .map(|&i| Arc::as_ref(&snapshot.pods[i]))
        .collect()
}
