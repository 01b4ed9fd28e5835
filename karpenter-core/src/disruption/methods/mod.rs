//! The disruption methods, one file each, behind one trait, tried in
//! upstream's order (`pkg/controllers/disruption/controller.go`): emptiness,
//! static drift, drift, multi-node consolidation, single-node consolidation. Each pass takes
//! the first command a method finds; the plan repeats passes until none does.
//!
//! The methods: [`emptiness`], [`static_drift`], [`drift`], [`multi_node`] and [`single_node`]
//! consolidation, with the decision the consolidations share in
//! [`consolidation`] and the opt-in replacement of several nodes by several
//! in [`m_to_n`].

pub(super) mod consolidation;
pub(super) mod drift;
pub(super) mod emptiness;
pub(super) mod m_to_n;
pub(super) mod multi_node;
mod prices;
pub(super) mod single_node;
pub(super) mod static_drift;

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use k8s_openapi::jiff::Timestamp;

use super::allowances::Allowances;
use super::balanced::Balanced;
use super::candidates::Candidate;
use super::options::DisruptionOptions;
use super::plan::Command;
use super::simulate::{Simulation, Simulator};
use crate::features::FeatureGate;
use crate::pods::Pdbs;
use crate::provisioning::CarriedSetup;
use crate::provisioning::{ProvisioningOptions, plan_provisioning_with};
use crate::snapshot::Snapshot;

/// What a method sees in one pass.
///
/// A pass is `Send` and `Sync`: a method may weigh its candidates on several
/// threads, each simulating through the same pass. What it builds on first
/// use (the simulator, the Balanced totals) is in a [`OnceLock`], and the
/// simulations it remembers are behind a mutex, taken once per simulation
/// (a whole scheduling run), never inside one.
#[derive(Debug)]
pub(super) struct Pass<'p, 's> {
    /// The cluster.
    pub snapshot: &'s Snapshot,
    /// The moment planned for.
    pub now: Timestamp,
    /// The candidates no earlier command took, in name order.
    pub candidates: &'p [&'p Candidate<'s>],
    /// The same for the eventual class (drift): with the nodes kept only by a
    /// pod blocker that their `terminationGracePeriod` waives.
    pub eventual: &'p [&'p Candidate<'s>],
    /// What the pools' budgets still allow.
    pub allowances: &'p Allowances<'s>,
    /// The nodes earlier commands of the plan take: no destination for pods.
    pub taken: &'p BTreeSet<String>,
    /// What the plan may do beyond upstream's defaults.
    pub options: &'p DisruptionOptions,
    /// What this pass's simulator starts from.
    seed: Seed<'p, 's>,
    /// Rescheduling simulations of this cluster, sharing one set-up, built
    /// when a method first simulates (see [`simulate`](Self::simulate)).
    simulator: OnceLock<Simulator<'s>>,
    /// The nodes `taken` that are not on their way out in the cluster (in a
    /// plan's passes, none: a command's nodes start deleting), made when
    /// first asked.
    taken_beyond_leaving: OnceLock<BTreeSet<&'p str>>,
    /// The latest simulations, by the nodes removed beyond `taken`, so that
    /// the plan can apply a command without simulating it again.
    recent: Mutex<Vec<Recent>>,
    /// The Balanced policy's pool totals, made when first asked (see
    /// [`balanced`](Self::balanced)).
    balanced: OnceLock<Balanced>,
    /// The nodes provisioning would put CapacityBuffer virtual pods on,
    /// worked out when first asked (see
    /// [`holds_buffer_pods`](Self::holds_buffer_pods)).
    buffer_holders: OnceLock<BTreeSet<String>>,
}

/// What a pass's simulator starts from besides the cluster: the
/// destinations an earlier pass's simulator read (for this pass's to take
/// where nothing changed), and the PodDisruptionBudgets, which a plan reads
/// once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seed<'p, 's> {
    pub(crate) carried: &'p CarriedSetup,
    pub(crate) pdbs: &'p Arc<Pdbs<'s>>,
}

/// A simulation a pass ran: the nodes removed beyond those taken (sorted,
/// none of them taken), and what came of it.
type Recent = (Vec<String>, Simulation);

/// How many simulations a pass remembers (more than a multi-node binary
/// search runs).
const RECENT: usize = 16;

impl<'p, 's> Pass<'p, 's> {
    /// A pass over `snapshot` at `now`, with the candidates no earlier
    /// command took (and those of the eventual class), what the budgets still
    /// allow and the nodes earlier commands take; it simulates nothing until
    /// a method asks; its simulator starts from `seed`. A `simulator` built beforehand
    /// for this very cluster (see [`Pass::simulator`]) is taken as the pass's.
    #[allow(clippy::too_many_arguments)] // each is a part of the pass, named
    pub(crate) fn new(
        snapshot: &'s Snapshot,
        now: Timestamp,
        candidates: &'p [&'p Candidate<'s>],
        eventual: &'p [&'p Candidate<'s>],
        allowances: &'p Allowances<'s>,
        taken: &'p BTreeSet<String>,
        options: &'p DisruptionOptions,
        seed: Seed<'p, 's>,
        simulator: Option<Simulator<'s>>,
    ) -> Pass<'p, 's> {
        Pass {
            snapshot,
            now,
            candidates,
            eventual,
            allowances,
            taken,
            options,
            seed,
            simulator: simulator.map_or_else(OnceLock::new, OnceLock::from),
            taken_beyond_leaving: OnceLock::new(),
            recent: Mutex::new(Vec::new()),
            balanced: OnceLock::new(),
            buffer_holders: OnceLock::new(),
        }
    }

    /// Whether provisioning, run on this cluster now, would put a
    /// CapacityBuffer's virtual pod on the node named `name`: upstream's
    /// `HasBufferPods`, from the counts its provisioner keeps of its last
    /// pass (here worked out for this very cluster). Always false with the
    /// `CapacityBuffer` gate off.
    pub(super) fn holds_buffer_pods(&self, name: &str) -> bool {
        let gates = &self.options.planning.feature_gates;
        if !gates.is_on(FeatureGate::CapacityBuffer)
            || self.snapshot.capacity_buffers.virtual_pod_count() == 0
        {
            return false;
        }
        self.buffer_holders
            .get_or_init(|| {
                let options = ProvisioningOptions::from(self.options.planning).at(self.now);
                let plan = plan_provisioning_with(self.snapshot, &options);
                plan.capacity_buffers
                    .into_iter()
                    .flat_map(|b| b.existing_nodes.into_keys())
                    .collect()
            })
            .contains(name)
    }

    /// The simulator this pass's simulations share, built on first use.
    pub(super) fn simulator(&self) -> &Simulator<'s> {
        self.simulator
            .get_or_init(|| Pass::build_simulator(self.snapshot, self.now, self.seed, self.options))
    }

    /// The simulator a pass over `snapshot` at `now` with `options` uses,
    /// starting from `seed`.
    pub(crate) fn build_simulator(
        snapshot: &'s Snapshot,
        now: Timestamp,
        seed: Seed<'_, 's>,
        options: &DisruptionOptions,
    ) -> Simulator<'s> {
        Simulator::carrying(
            snapshot,
            now,
            Some(seed.carried),
            Arc::clone(seed.pdbs),
            options.planning,
        )
    }

    /// The simulator this pass built, if a method simulated: what it read
    /// can be carried to a later pass.
    pub(crate) fn into_simulator(self) -> Option<Simulator<'s>> {
        self.simulator.into_inner()
    }

    /// The cluster's pods rescheduled without the nodes the plan has taken
    /// (being deleted already) and the nodes `names`, as
    /// [`simulate`](crate::disruption::simulate()) answers.
    pub(super) fn simulate_without(&self, names: &[&str]) -> Simulation {
        // Every simulation removes the nodes on their way out, the taken
        // ones among them: only the others are named.
        let beyond = self.taken_beyond_leaving.get_or_init(|| {
            let leaving = self.simulator().leaving();
            self.taken
                .iter()
                .map(String::as_str)
                .filter(|name| !leaving.contains(name))
                .collect()
        });
        let mut removed = beyond.clone();
        removed.extend(names.iter().copied());
        let simulation = self.simulator().simulate(&removed, beyond);
        // A poisoned list is still whole: entries go in complete, or not at all.
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == RECENT {
            recent.remove(0);
        }
        recent.push((self.beyond_taken(names), simulation.clone()));
        simulation
    }

    /// `names` without the nodes taken, sorted, each once.
    fn beyond_taken(&self, names: &[impl AsRef<str>]) -> Vec<String> {
        let mut beyond: Vec<String> = names
            .iter()
            .map(AsRef::as_ref)
            .filter(|name| !self.taken.contains(*name))
            .map(str::to_owned)
            .collect();
        beyond.sort_unstable();
        beyond.dedup();
        beyond
    }

    /// The Balanced judge over the pools of the consolidatable candidates.
    pub(super) fn balanced(&self) -> &Balanced {
        self.balanced.get_or_init(|| {
            let consolidatable: Vec<&Candidate<'_>> = self
                .candidates
                .iter()
                .copied()
                .filter(|c| single_node::consolidatable(c, self))
                .collect();
            Balanced::new(self.snapshot, &consolidatable)
        })
    }

    /// The simulation this pass ran without the nodes taken and the nodes
    /// `names`, if it still remembers it.
    pub(crate) fn recall(&self, names: &[String]) -> Option<Simulation> {
        let beyond = self.beyond_taken(names);
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .rev()
            .find(|(removed, _)| *removed == beyond)
            .map(|(_, simulation)| simulation.clone())
    }
}

/// A way of disrupting nodes. `Send` and `Sync`, so that a method may be
/// shared by threads weighing candidates, as a [`Pass`] may.
pub(super) trait Method: Send + Sync {
    /// The command it would start in this pass, if any.
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command>;
}

/// [`by_savings_ratio`], one at a time: a method that reads only the first
/// hundred of ten thousand candidates does not sort them all. The order is
/// [`by_savings_ratio`]'s, equal candidates included (they come in the
/// pass's order, as a stable sort leaves them).
pub(super) fn in_savings_order<'c, 's>(
    pass: &Pass<'c, 's>,
    qualifies: impl Fn(&Candidate<'s>) -> bool,
) -> impl Iterator<Item = &'c Candidate<'s>> {
    let ranked: Vec<Ranked<'c, 's>> = pass
        .candidates
        .iter()
        .copied()
        .filter(|c| qualifies(c))
        .enumerate()
        .map(|(order, candidate)| Ranked {
            ratio: candidate.savings_ratio(),
            order,
            candidate,
        })
        .collect();
    // Made in linear time; each candidate taken costs a logarithm.
    let mut heap = BinaryHeap::from(ranked);
    std::iter::from_fn(move || heap.pop().map(|r| r.candidate))
}

/// A candidate in [`in_savings_order`]: the greatest comes first.
struct Ranked<'c, 's> {
    ratio: f64,
    /// Its place among the qualifying candidates, for ties.
    order: usize,
    candidate: &'c Candidate<'s>,
}

impl Ord for Ranked<'_, '_> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Higher ratio first, then the name and the place first in order.
        self.ratio
            .total_cmp(&other.ratio)
            .then_with(|| other.candidate.name.cmp(self.candidate.name))
            .then_with(|| other.order.cmp(&self.order))
    }
}

impl PartialOrd for Ranked<'_, '_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_, '_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked<'_, '_> {}

/// The candidates that `qualifies` keeps, by price per unit of disruption,
/// highest first (upstream's `SavingsRatio` order; ties by name, so the plan
/// is the same on every run).
pub(super) fn by_savings_ratio<'c, 's>(
    pass: &Pass<'c, 's>,
    qualifies: impl Fn(&Candidate<'s>) -> bool,
) -> Vec<&'c Candidate<'s>> {
    let mut kept: Vec<&Candidate<'s>> = pass
        .candidates
        .iter()
        .copied()
        .filter(|c| qualifies(c))
        .collect();
    kept.sort_by(|a, b| {
        b.savings_ratio()
            .total_cmp(&a.savings_ratio())
            .then_with(|| a.name.cmp(b.name))
    });
    kept
}
