//! The disruption methods, one file each, behind one trait, tried in
//! upstream's order (`pkg/controllers/disruption/controller.go`): emptiness,
//! drift, multi-node consolidation, single-node consolidation. Each pass takes
//! the first command a method finds; the plan repeats passes until none does.
//!
//! The methods: [`emptiness`], [`drift`], [`multi_node`] and [`single_node`]
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

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock, PoisonError};

use k8s_openapi::jiff::Timestamp;

use super::allowances::Allowances;
use super::balanced::Balanced;
use super::candidates::Candidate;
use super::options::DisruptionOptions;
use super::plan::Command;
use super::simulate::{Simulation, Simulator};
use crate::provisioning::Carried;
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
    /// The destinations an earlier pass's simulator read, for this pass's
    /// to take where nothing changed.
    carried: &'p Carried,
    /// Rescheduling simulations of this cluster, sharing one set-up, built
    /// when a method first simulates (see [`simulate`](Self::simulate)).
    simulator: OnceLock<Simulator<'s>>,
    /// The latest simulations, by the nodes removed and those deleting, so
    /// that the plan can apply a command without simulating it again.
    recent: Mutex<Vec<Recent>>,
    /// The Balanced policy's pool totals, made when first asked (see
    /// [`balanced`](Self::balanced)).
    balanced: OnceLock<Balanced>,
}

/// A simulation a pass ran: the nodes removed, those being deleted, and what
/// came of it.
type Recent = (BTreeSet<String>, BTreeSet<String>, Simulation);

/// How many simulations a pass remembers (more than a multi-node binary
/// search runs).
const RECENT: usize = 16;

impl<'p, 's> Pass<'p, 's> {
    /// A pass over `snapshot` at `now`, with the candidates no earlier
    /// command took (and those of the eventual class), what the budgets still
    /// allow and the nodes earlier commands take; it simulates nothing until
    /// a method asks; its simulator takes the destinations `carried` from an
    /// earlier pass where nothing changed. A `simulator` built beforehand
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
        carried: &'p Carried,
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
            carried,
            simulator: simulator.map_or_else(OnceLock::new, OnceLock::from),
            recent: Mutex::new(Vec::new()),
            balanced: OnceLock::new(),
        }
    }

    /// The simulator this pass's simulations share, built on first use.
    pub(super) fn simulator(&self) -> &Simulator<'s> {
        self.simulator.get_or_init(|| {
            Pass::build_simulator(self.snapshot, self.now, self.carried, self.options)
        })
    }

    /// The simulator a pass over `snapshot` at `now` with `options` uses,
    /// taking the destinations `carried` from an earlier pass.
    pub(crate) fn build_simulator(
        snapshot: &'s Snapshot,
        now: Timestamp,
        carried: &Carried,
        options: &DisruptionOptions,
    ) -> Simulator<'s> {
        Simulator::carrying(snapshot, now, Some(carried)).with_options(options.simulation())
    }

    /// The simulator this pass built, if a method simulated: what it read
    /// can be carried to a later pass.
    pub(crate) fn into_simulator(self) -> Option<Simulator<'s>> {
        self.simulator.into_inner()
    }

    /// The cluster's pods rescheduled without the nodes of `removed` (those
    /// of `deleting` being deleted already), as
    /// [`simulate`](crate::disruption::simulate()) answers.
    pub(super) fn simulate(
        &self,
        removed: &BTreeSet<&str>,
        deleting: &BTreeSet<&str>,
    ) -> Simulation {
        let simulation = self.simulator().simulate(removed, deleting);
        // A poisoned list is still whole: entries go in complete, or not at all.
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == RECENT {
            recent.remove(0);
        }
        let names = |set: &BTreeSet<&str>| set.iter().map(|n| n.to_string()).collect();
        recent.push((names(removed), names(deleting), simulation.clone()));
        simulation
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

    /// The simulation this pass ran with exactly `removed` and `deleting`,
    /// if it still remembers it.
    pub(crate) fn recall(
        &self,
        removed: &BTreeSet<String>,
        deleting: &BTreeSet<String>,
    ) -> Option<Simulation> {
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .rev()
            .find(|(r, d, _)| r == removed && d == deleting)
            .map(|(_, _, simulation)| simulation.clone())
    }
}

/// A way of disrupting nodes. `Send` and `Sync`, so that a method may be
/// shared by threads weighing candidates, as a [`Pass`] may.
pub(super) trait Method: Send + Sync {
    /// The command it would start in this pass, if any.
    fn next_command(&self, pass: &Pass<'_, '_>) -> Option<Command>;
}

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
