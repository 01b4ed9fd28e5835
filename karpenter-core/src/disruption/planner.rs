//! The plan: passes of the methods in upstream's order, each taking the first
//! command a method finds, until a pass finds none; then the blocked nodes.
//!
//! Each command's nodes leave the candidates of later passes and count against
//! their pools' budgets, as nodes being deleted do upstream.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;

use super::allowances::Allowances;
use super::candidates::{Candidate, candidates};
use super::expiration::expiration;
use super::methods::drift::Drift;
use super::methods::emptiness::Emptiness;
use super::methods::multi_node::MultiNode;
use super::methods::single_node::SingleNode;
use super::methods::{Method, Pass};
use super::plan::DisruptionPlan;
use crate::snapshot::Snapshot;

/// Plans disruption for `snapshot` at `now`.
///
/// Built so far: expiration, then the graceful methods (emptiness, drift,
/// multi-node and single-node consolidation). Repair and interruption follow.
pub fn plan(snapshot: &Snapshot, now: Timestamp) -> DisruptionPlan {
    let found = candidates(snapshot, now);
    let methods: [&dyn Method; 4] = [&Emptiness, &Drift, &MultiNode, &SingleNode];
    let mut allowances = Allowances::new(snapshot, now);
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut plan = DisruptionPlan {
        commands: Vec::new(),
        blocked: found.blocked.clone(),
    };
    // Forceful first: expired nodes go whatever budgets say, but count as
    // disrupting for them afterwards.
    if let Some(command) = expiration(snapshot, now) {
        for name in &command.candidates {
            let node = snapshot.nodes.iter().find(|n| n.name() == name);
            if let Some(pool) = node.and_then(|n| n.node_pool()) {
                allowances.take(pool);
            }
            taken.insert(name.clone());
        }
        plan.commands.push(command);
    }
    loop {
        let left: Vec<&Candidate<'_>> = found
            .candidates
            .iter()
            .filter(|c| !taken.contains(c.name))
            .collect();
        let eventual: Vec<&Candidate<'_>> = found
            .eventual()
            .into_iter()
            .filter(|c| !taken.contains(c.name))
            .collect();
        let pass = Pass {
            snapshot,
            now,
            candidates: &left,
            eventual: &eventual,
            allowances: &allowances,
            taken: &taken,
        };
        let Some(command) = methods.iter().find_map(|m| m.next_command(&pass)) else {
            break;
        };
        for name in &command.candidates {
            if let Some(candidate) = eventual.iter().find(|c| c.name == name) {
                allowances.take(candidate.pool.name().unwrap_or_default());
            }
            taken.insert(name.clone());
        }
        plan.commands.push(command);
    }
    // A node the eventual class took despite a pod blocker is not blocked.
    plan.blocked.retain(|b| !taken.contains(&b.node));
    plan
}
