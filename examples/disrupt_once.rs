//! Plans disruption for a scenario file and prints the plan as JSON (until
//! `karpenter-sim disrupt` is wired): `cargo run --example disrupt_once --
//! examples/scenarios/disrupt-basic.yaml 2026-06-01T00:00:00Z`.

use karpenter::core::disruption::planner::plan;
use karpenter::scenario::{LoadOptions, Scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file = args.next().ok_or("usage: disrupt_once FILE NOW")?;
    let now = args.next().ok_or("usage: disrupt_once FILE NOW")?.parse()?;
    let scenario = Scenario::read_files(&[file], &LoadOptions::default())?;
    let types = scenario.fake_instance_types()?;
    let plan = plan(&scenario.into_snapshot(types), now);
    println!("{}", serde_json::to_string_pretty(&plan)?);
    Ok(())
}
