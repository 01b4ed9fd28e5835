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
use super::candidates::{Candidate, candidates};
use super::expiration::expiration;
use super::methods::drift::Drift;
use super::methods::emptiness::Emptiness;
use super::methods::multi_node::MultiNode;
use super::methods::single_node::SingleNode;
use super::methods::{Method, Pass};
use super::options::DisruptionOptions;
use super::plan::{Command, DisruptionPlan};
use super::repair::{Repair, due, repair};
use super::simulate::Simulation;
use crate::snapshot::Snapshot;

/// Plans disruption for `snapshot` at `now` with upstream's defaults and no
/// repair policy (see [`plan_with`]).
pub fn plan(snapshot: &Snapshot, now: Timestamp) -> DisruptionPlan {
    plan_with(snapshot, now, &DisruptionOptions::default())
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

/// The first command of [`plan_with`]'s plan, without planning the ones
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
    next_command(snapshot, now, &BTreeSet::new(), options).map(|(command, _)| command)
}

/// Plans disruption for `snapshot` at `now` with `options`: first the
/// forceful commands (interruption notices, then unhealthy nodes, as the
/// repair policies say; then expiration), then passes of the graceful
/// methods (emptiness, drift, multi-node and single-node consolidation)
/// until none finds a command; then the blocked nodes.
pub fn plan_with(
    snapshot: &Snapshot,
    now: Timestamp,
    options: &DisruptionOptions,
) -> DisruptionPlan {
    let mut blocked = candidates(snapshot, now).blocked;
    let (_, repair_blocked) = due(snapshot, now, &options.repair_policies);
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
        applier.apply(&mut working, &command, &taken, Origin::Forceful);
        taken.extend(command.candidates.iter().cloned());
        commands.push(command);
    }
    while let Some((command, simulation)) = next_command(&working, now, &taken, options) {
        applier.apply(&mut working, &command, &taken, Origin::Method(simulation));
        taken.extend(command.candidates.iter().cloned());
        commands.push(command);
    }
    // A node the eventual class took despite a pod blocker is not blocked.
    blocked.retain(|b| !taken.contains(&b.node));
    DisruptionPlan { commands, blocked }
}

/// The first command of the methods, in order, on the cluster as it stands,
/// with the simulation it came from when the pass still has it.
fn next_command(
    working: &Snapshot,
    now: Timestamp,
    taken: &BTreeSet<String>,
    options: &DisruptionOptions,
) -> Option<(Command, Option<Simulation>)> {
    let methods: [&dyn Method; 4] = [&Emptiness, &Drift, &MultiNode, &SingleNode];
    with_pass(working, now, taken, options, |pass| {
        let command = methods.iter().find_map(|m| m.next_command(pass))?;
        let mut removed = taken.clone();
        removed.extend(command.candidates.iter().cloned());
        let simulation = pass.recall(&removed, taken);
        Some((command, simulation))
    })
}

/// What single-node consolidation would do with each of the snapshot's
/// candidates at `now`, in the order it would try them (by savings ratio),
/// budgets aside: for each node, the command deleting or replacing it, or
/// `None` when its pods cannot go more cheaply.
pub fn single_node_options(snapshot: &Snapshot, now: Timestamp) -> Vec<(String, Option<Command>)> {
    let options = DisruptionOptions::default();
    with_pass(snapshot, now, &BTreeSet::new(), &options, |pass| {
        SingleNode.every_option(pass)
    })
}

/// The command multi-node consolidation would start on the snapshot at
/// `now`, as the first consolidation pass of a plan would find it.
pub fn multi_node_command(snapshot: &Snapshot, now: Timestamp) -> Option<Command> {
    let options = DisruptionOptions::default();
    with_pass(snapshot, now, &BTreeSet::new(), &options, |pass| {
        MultiNode.next_command(pass)
    })
}

/// Runs `f` on a pass over `working` at `now`, the nodes of `taken` being
/// deleted already.
fn with_pass<T>(
    working: &Snapshot,
    now: Timestamp,
    taken: &BTreeSet<String>,
    options: &DisruptionOptions,
    f: impl FnOnce(&Pass<'_, '_>) -> T,
) -> T {
    let found = candidates(working, now);
    let allowances = Allowances::new(working, now);
    let left: Vec<&Candidate<'_>> = found.candidates.iter().collect();
    let eventual = found.eventual();
    let pass = Pass::new(working, now, &left, &eventual, &allowances, taken, options);
    f(&pass)
}
