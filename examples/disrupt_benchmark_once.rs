//! Times disruption work on a generated running cluster: one rescheduling
//! simulation, and a whole plan.
//! `cargo run --release --example disrupt_benchmark_once -- 1000 20000`.

use std::collections::BTreeSet;
use std::time::Instant;

use karpenter::core::disruption::{
    multi_node_command, plan_disruption, simulate, single_node_options,
};
use karpenter::core::planning::PlanningOptions;
use karpenter::fake::generate::running::running_cluster;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1_000);
    let pods: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(nodes * 20);
    let now = "2026-06-01T00:00:00Z".parse()?;
    let snapshot = running_cluster(nodes, pods, 42);
    let only_multi = std::env::var_os("ONLY_MULTI").is_some();
    let start = Instant::now();
    let removed: BTreeSet<&str> = [snapshot.nodes[0].name()].into();
    let simulation = simulate(
        &snapshot,
        &removed,
        &BTreeSet::new(),
        now,
        PlanningOptions::default(),
    );
    println!(
        "one simulation: {} moved, {} new claims, {:.3} s",
        simulation.moved.len(),
        simulation.new_claims(),
        start.elapsed().as_secs_f64()
    );
    if !only_multi {
        let start = Instant::now();
        let options = single_node_options(&snapshot, now);
        let commands = options.iter().filter(|(_, c)| c.is_ok()).count();
        println!(
            "single-node, every candidate: {} evaluated, {commands} could go, {:.3} s",
            options.len(),
            start.elapsed().as_secs_f64()
        );
    }
    let start = Instant::now();
    let command = multi_node_command(&snapshot, now);
    println!(
        "multi-node: {} candidates in the command, {:.3} s",
        command.as_ref().map_or(0, |c| c.candidates.len()),
        start.elapsed().as_secs_f64()
    );
    if std::env::var_os("SKIP_PLAN").is_some() {
        return Ok(());
    }
    let start = Instant::now();
    let planned = plan_disruption(&snapshot, now);
    println!(
        "plan: {} commands, {} blocked, {:.3} s",
        planned.commands.len(),
        planned.blocked.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
