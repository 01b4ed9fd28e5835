//! A replay from code: the working day of `examples/replay/` through the
//! driver on a simulated clock, once as upstream packs and once at the least
//! price, with what each cost and disrupted. The library calls behind
//! `karpenter-sim replay --compare "--packing cost"`.
//!
//! ```text
//! cargo run --release --example replay_day
//! ```
//!
//! `ReplayOptions::with_cloud(ReplayCloud::Azure { region })` replays on the
//! Azure provider instead (with `examples/replay/azure.yaml`).

use karpenter::core::planning::Packing;
use karpenter::replay::{ReplayEvent, ReplayOptions, Run, run};
use karpenter::scenario::{LoadOptions, Scenario, Trace};

const CLUSTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/replay/cluster.yaml");
const WORKDAY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/replay/workday.yaml");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = Scenario::read_files(&[CLUSTER], &LoadOptions::default())?;
    let trace = Trace::read_file(WORKDAY, &LoadOptions::default())?;
    for packing in [Packing::Upstream, Packing::Cost] {
        let options = ReplayOptions::default()
            .with_planning(packing.into())
            .with_flags(format!("--packing {packing:?}").to_lowercase());
        // The callback hears (steps done, steps in all): a progress bar's
        // food. Nothing here reads the wall clock.
        let day = run(&scenario, &trace, &options, &mut |_, _| {})?;
        report(&day);
    }
    Ok(())
}

fn report(day: &Run) {
    let totals = &day.totals;
    println!(
        "{}: ${:.2}, {:.1} node-hours, {} launches, {} pod-minutes pending",
        day.flags, totals.cost, totals.node_hours, totals.launches, totals.pod_minutes_pending
    );
    for (reason, count) in totals.disruptions.iter().filter(|(_, n)| **n > 0) {
        println!("  disrupted {count} nodes: {reason}");
    }
    let busiest = day.timeline.iter().max_by_key(|s| s.nodes);
    if let Some(sample) = busiest {
        println!(
            "  busiest at {}: {} nodes at ${:.2}/h",
            sample.time, sample.nodes, sample.price_per_hour
        );
    }
    let drift = day.events.iter().find_map(|e| match e {
        ReplayEvent::Disrupt { time, reason, .. } if reason == "Drifted" => Some(time),
        _ => None,
    });
    if let Some(time) = drift {
        println!("  the noon drift roll began at {time}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's day as the README tells it: the morning scale-up
    /// launches, the interruption and the drift roll disrupt, the evening
    /// leaves fewer nodes than the peak; and a replay is the same twice.
    #[test]
    fn the_workday_replays_the_same_twice() {
        let scenario = Scenario::read_files(&[CLUSTER], &LoadOptions::default()).expect("cluster");
        let trace = Trace::read_file(WORKDAY, &LoadOptions::default()).expect("trace");
        let options = ReplayOptions::default().with_step(std::time::Duration::from_secs(300));
        let day = run(&scenario, &trace, &options, &mut |_, _| {}).expect("replayed");
        assert!(day.totals.launches > 0);
        assert!(day.totals.disruptions["Drifted"] > 0);
        assert!(day.totals.disruptions["Interrupted"] > 0);
        let peak = day.timeline.iter().map(|s| s.nodes).max().expect("samples");
        let last = day.timeline.last().expect("samples");
        assert!(last.nodes < peak);
        let again = run(&scenario, &trace, &options, &mut |_, _| {}).expect("replayed");
        assert_eq!(day, again);
    }
}
