//! The plan: the forceful commands first (interruption notices, unhealthy
//! nodes, expiration), then passes of the methods in upstream's order, each
//! taking the first command a method finds, until a pass finds none; then the
//! blocked nodes.
//!
//! Each pass sees the cluster as the commands before it left it (see
//! [`apply`](super::apply)): their nodes being deleted (so no longer
//! candidates, and counting against their pools' budgets), their pods where
//! the simulation put them, their replacements in flight.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;

use super::allowances::Allowances;
use super::apply::{Applier, Origin};
use super::candidates::{Candidate, candidates, candidates_carrying};
use super::carry::Carried;
use super::expiration::expiration;
use super::methods::drift::Drift;
use super::methods::emptiness::Emptiness;
use super::methods::multi_node::MultiNode;
use super::methods::single_node::{Refusal, SingleNode};
use super::methods::static_drift::StaticDrift;
use super::methods::{Method, Pass, Seed};
use super::options::DisruptionOptions;
use super::plan::{Blocked, Command, DisruptionPlan};
use super::repair::{Repair, due, repair};
use super::simulate::Simulation;
use super::unconsolidatable::Unconsolidatable;
use crate::pods::Pdbs;
use crate::snapshot::Snapshot;

/// Plans disruption for `snapshot` at `now` with upstream's defaults and no
/// repair policy (see [`plan_disruption_with`]).
pub fn plan_disruption(snapshot: &Snapshot, now: Timestamp) -> DisruptionPlan {
    plan_disruption_with(snapshot, now, &DisruptionOptions::default())
}

/// One of the forceful commands a plan starts with.
type ForcefulStep = fn(&Snapshot, Timestamp, &DisruptionOptions) -> Option<Command>;

/// The forceful steps, in order: interruption notices, unhealthy nodes,
/// expiry.
const FORCEFUL: [ForcefulStep; 3] = [
    |working, now, options| repair(working, now, options, Repair::Interrupted),
    |working, now, options| repair(working, now, options, Repair::Unhealthy),
    expiration,
];

/// The first command of [`plan_disruption_with`]'s plan, without planning the ones
/// after it: what a driver that carries out one command at a time needs.
pub fn first_command(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> Option<Command> {
    if let Some(command) = FORCEFUL
        .iter()
        .find_map(|step| step(snapshot, now, options))
    {
        return Some(command);
    }
    next_command(
        snapshot,
        now,
        &BTreeSet::new(),
        options,
        &mut Carried::new(snapshot),
    )
    .map(|(command, _)| command)
}

/// [`first_command`]'s answer, with why the nodes it leaves alone stay: what
/// a driver reports alongside the command it starts (upstream's
/// `DisruptionBlocked` and `Unconsolidatable` events).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct FirstCommand {
    /// The first command of the plan, if any.
    pub command: Option<Command>,
    /// The nodes that would be candidates but may not be disrupted now, with
    /// why, in name order: [`DisruptionPlan::blocked`] as a plan would start
    /// it, less the nodes the command takes.
    pub blocked: Vec<Blocked>,
    /// The nodes single-node consolidation evaluated and could not
    /// consolidate, each with why, in the order it tried them: those tried
    /// before the one that gave the command, or all it tried when none did
    /// (none when an earlier method gave the command; a candidate its pool's
    /// budget holds back is not tried).
    pub unconsolidatable: Vec<(String, Unconsolidatable)>,
}

/// [`first_command`], with the blocked nodes and the single-node
/// consolidation candidates it evaluated and refused (see [`FirstCommand`]).
///
/// The command is the one [`first_command`] finds, and the reasons come from
/// the same evaluation: nothing is simulated beyond what finding the command
/// takes.
pub fn first_command_explained(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> FirstCommand {
    let forceful = FORCEFUL
        .iter()
        .find_map(|step| step(snapshot, now, options));
    let (command, blocked, unconsolidatable) = match forceful {
        Some(command) => (Some(command), candidates(snapshot, now).blocked, Vec::new()),
        None => with_pass(
            snapshot,
            now,
            &BTreeSet::new(),
            options,
            &mut Carried::new(snapshot),
            |pass, blocked| {
                let mut refused = Vec::new();
                let command = graceful_command(pass, &mut refused);
                (command, blocked.to_vec(), refused)
            },
        ),
    };
    let mut blocked = with_repair_blocked(blocked, snapshot, now, options);
    if let Some(command) = &command {
        blocked.retain(|b| !command.candidates.contains(&b.node));
    }
    FirstCommand {
        command,
        blocked,
        unconsolidatable,
    }
}

/// `blocked` (the candidates' blocked nodes) with the nodes due for repair in
/// pools too unhealthy to repair, one entry per node, in name order.
fn with_repair_blocked(
    mut blocked: Vec<Blocked>,
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> Vec<Blocked> {
    let (_, repair_blocked) = due(snapshot, now, options.repair_policies());
    if !repair_blocked.is_empty() {
        // One entry per node: a node blocked for both reasons says both.
        for waiting in repair_blocked {
            match blocked.iter_mut().find(|b| b.node == waiting.node) {
                Some(entry) => entry.reason = format!("{}; {}", entry.reason, waiting.reason),
                None => blocked.push(waiting),
            }
        }
        blocked.sort_by(|a, b| a.node.cmp(&b.node));
    }
    blocked
}

/// Plans disruption for `snapshot` at `now` with `options`: first the
/// forceful commands (interruption notices, then unhealthy nodes, as the
/// repair policies say; then expiration), then passes of the graceful
/// methods (emptiness, drift, multi-node and single-node consolidation)
/// until none finds a command; then the blocked nodes.
pub fn plan_disruption_with(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> DisruptionPlan {
    // What each pass read, for the next pass to take where the command
    // between them changed nothing; the first assessment of the candidates
    // (for the blocked nodes) is the first pass's too.
    let mut carried = Carried::new(snapshot);
    let found = candidates_carrying(snapshot, now, &carried.pdbs, &mut carried.candidates).blocked;
    let mut blocked = with_repair_blocked(found, snapshot, now, options);
    let mut working = snapshot.clone();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut commands = Vec::new();
    let mut applier = Applier::new(now, options);
    // Interruption notices, unhealthy nodes, then expiry: each sees the
    // cluster the one before left.
    for step in FORCEFUL {
        let Some(command) = step(&working, now, options) else {
            continue;
        };
        let moved = applier.apply(&mut working, &command, &taken, Origin::Forceful);
        carried.note_changes(&working, &command, &moved);
        taken.extend(command.candidates.iter().cloned());
        commands.push(command);
    }
    while let Some((command, simulation)) =
        next_command(&working, now, &taken, options, &mut carried)
    {
        let moved = applier.apply(&mut working, &command, &taken, Origin::Method(simulation));
        carried.note_changes(&working, &command, &moved);
        taken.extend(command.candidates.iter().cloned());
        commands.push(command);
    }
    // A node the eventual class took despite a pod blocker is not blocked.
    blocked.retain(|b| !taken.contains(&b.node));
    DisruptionPlan { commands, blocked }
}

/// The first command of the methods, in order, on the cluster as it stands,
/// with the simulation it came from when the pass still has it; what the
/// pass read is left in `carried` for the next pass.
fn next_command(
    working: &Snapshot,
    now: Timestamp,
    taken: &BTreeSet<String>,
    options: &DisruptionOptions,
    carried: &mut Carried<'_>,
) -> Option<(Command, Option<Simulation>)> {
    with_pass(working, now, taken, options, carried, |pass, _| {
        let command = graceful_command(pass, &mut Vec::new())?;
        let simulation = pass.recall(&command.candidates);
        Some((command, simulation))
    })
}

/// The first command of the graceful methods, in order (emptiness, static drift, drift,
/// multi-node and single-node consolidation), with the candidates
/// single-node consolidation evaluated and refused pushed to `refused`.
fn graceful_command(pass: &Pass<'_, '_>, refused: &mut Vec<Refusal>) -> Option<Command> {
    let methods: [&dyn Method; 4] = [&Emptiness, &StaticDrift, &Drift, &MultiNode];
    methods
        .iter()
        .find_map(|m| m.next_command(pass))
        .or_else(|| SingleNode.next_command_noting(pass, refused))
}

/// What single-node consolidation would do with each of the snapshot's
/// candidates at `now`, in the order it would try them (by savings ratio),
/// budgets aside: for each node, the command deleting or replacing it, or
/// why its pods cannot go more cheaply.
pub fn single_node_options(
    snapshot: &Snapshot,
    now: Timestamp,
) -> Vec<(String, Result<Command, Unconsolidatable>)> {
    first_pass(snapshot, now, |pass| SingleNode.every_option(pass))
}

/// The command multi-node consolidation would start on the snapshot at
/// `now`, as the first consolidation pass of a plan would find it.
///
/// A benchmark hook (`benches/disruption.rs` and the profiling example time
/// the method alone), hidden from the documentation: embedders ask
/// [`plan_disruption_with`] or [`first_command`].
#[doc(hidden)]
pub fn multi_node_command(snapshot: &Snapshot, now: Timestamp) -> Option<Command> {
    first_pass(snapshot, now, |pass| MultiNode.next_command(pass))
}

/// Runs `f` on the first pass of a plan over `snapshot` at `now` with
/// upstream's defaults: no node taken yet, nothing carried from a pass before.
fn first_pass<T>(snapshot: &Snapshot, now: Timestamp, f: impl FnOnce(&Pass<'_, '_>) -> T) -> T {
    fresh_pass(snapshot, now, &DisruptionOptions::default(), f)
}

/// Runs `f` on the first pass of a plan over `snapshot` at `now` with
/// `options`: no node taken yet, nothing carried from a pass before. What a
/// command's check before it runs reads (see
/// [`validation`](super::validation)).
pub(super) fn fresh_pass<T>(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
    f: impl FnOnce(&Pass<'_, '_>) -> T,
) -> T {
    with_pass(
        snapshot,
        now,
        &BTreeSet::new(),
        options,
        &mut Carried::new(snapshot),
        |pass, _| f(pass),
    )
}

/// Runs `f` on a pass over `working` at `now`, the nodes of `taken` being
/// deleted already, with the nodes the candidates' rules block. The pass
/// takes what was `carried` from the passes before where nothing changed
/// (see [`carry`](super::carry)), and leaves there what it read.
fn with_pass<T>(
    working: &Snapshot,
    now: Timestamp,
    taken: &BTreeSet<String>,
    options: &DisruptionOptions,
    carried: &mut Carried<'_>,
    f: impl FnOnce(&Pass<'_, '_>, &[Blocked]) -> T,
) -> T {
    // A pass after one that simulated most likely simulates too: its
    // simulator (whose set-up reads every placed pod on one thread) is built
    // while the candidates are found, on the cores they leave idle. The
    // first pass builds it only when a method asks.
    let Carried {
        candidates: carried_candidates,
        setup: carried_setup,
        pdbs,
    } = carried;
    let seed = Seed {
        carried: &*carried_setup,
        pdbs: &*pdbs,
    };
    let pdbs: &Pdbs<'_> = pdbs;
    let (found, simulator) = if carried_setup.is_empty() {
        (
            candidates_carrying(working, now, pdbs, carried_candidates),
            None,
        )
    } else {
        rayon::join(
            || candidates_carrying(working, now, pdbs, carried_candidates),
            || Some(Pass::build_simulator(working, now, seed, options)),
        )
    };
    // The unit tests hold every pass's carried assessments to fresh ones.
    #[cfg(test)]
    tests::assert_fresh(&found, working, now);
    // The pass assessed every node it had not kept: the totals are the
    // whole cluster's.
    let allowances = Allowances::with_totals(working, now, carried_candidates.totals());
    #[cfg(test)]
    tests::assert_fresh_allowances(&allowances, working, now);
    let left: Vec<&Candidate<'_>> = found.candidates.iter().collect();
    let eventual = found.eventual();
    let pass = Pass::new(
        working,
        now,
        &left,
        &eventual,
        &allowances,
        taken,
        options,
        seed,
        simulator,
    );
    let found_here = f(&pass, &found.blocked);
    if let Some(simulator) = pass.into_simulator() {
        *carried_setup = simulator.carry(std::mem::take(carried_setup));
    }
    found_here
}

#[cfg(test)]
mod tests;
