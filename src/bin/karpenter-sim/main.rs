//! `karpenter-sim`: runs the engine over Kubernetes manifests and prints the plan.
//!
//! The reference (commands, flags, output) is `docs/cli.md`. Exit status: 0
//! when the command did its work, 2 for bad input (the message names the file, the
//! document and the field), 1 for anything else.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use karpenter::core::planning::{Packing, PlanningArgs};
use karpenter::scenario::{LoadOptions, Scenario};
use karpenter::sim::{Summary, Timings, disruption_table, plan_table};

mod progress;
mod provider;
mod replay;

use provider::{Chosen, resolve_provider};

/// Planning allocates many small objects on several threads; mimalloc does
/// that in about half the time glibc's malloc takes.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "karpenter-sim",
    version,
    about = "What would Karpenter do? Runs Karpenter's \
    scheduling and disruption engine over Kubernetes manifests and prints the plan."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Plan new capacity for the pending pods.
    Provision(ProvisionArgs),
    /// Plan which nodes to delete or replace, and why.
    Disrupt(DisruptArgs),
    /// Read and check a scenario, and summarise what it holds.
    Summary(CommonArgs),
    /// Replay a trace (a day of scaling, interruptions, failures, drift)
    /// through the driver on a simulated clock: what it costs, what it
    /// disrupts.
    #[command(args_override_self = true)]
    Replay(replay::ReplayArgs),
}

#[derive(Args)]
struct CommonArgs {
    /// A manifest file: YAML documents, a `kind: List`, or JSON (`-` reads standard
    /// input). Repeat for several files.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Where instance types come from: the input's InstanceType documents (fake, the
    /// default when there are some), the embedded AWS catalog (the default when
    /// there are EC2NodeClass documents) or the embedded Azure catalog.
    #[arg(long, value_enum)]
    provider: Option<Provider>,
    /// The region (azure: default eastus; aws: default us-east-1).
    #[arg(long, value_name = "R")]
    region: Option<String>,
    /// AWS options: spot prices, the VM memory overhead, reserved ENIs.
    #[command(flatten)]
    aws: provider::AwsArgs,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    output: Output,
    /// Print on standard error how long each phase took.
    #[arg(long)]
    timings: bool,
    /// How many threads plan (default: one per core). The plan is the same
    /// whatever the number; fix it for timings that compare.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// How new claims are chosen and upstream's feature gates: the same
    /// flags for every command and for karpenter-controller.
    #[command(flatten)]
    planning: PlanningArgs,
}

#[derive(Args)]
struct ProvisionArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Add a proven lower bound on the price of any valid plan.
    #[arg(long)]
    bound: bool,
}

#[derive(Args)]
struct DisruptArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The clock for everything time-based (RFC 3339). Default: now.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    now: Option<jiff::Timestamp>,
    /// Let consolidation replace several nodes by fewer, cheaper ones.
    #[arg(long = "m-to-n")]
    m_to_n: bool,
    /// Let consolidation replace spot nodes with cheaper spot nodes: the
    /// same as `--feature-gates SpotToSpotConsolidation=true`, whatever
    /// `--feature-gates` says.
    #[arg(long = "spot-to-spot")]
    spot_to_spot: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Provider {
    Fake,
    Azure,
    Aws,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    Table,
    Json,
}

fn parse_time(text: &str) -> Result<jiff::Timestamp, String> {
    text.parse()
        .map_err(|e| format!("not an RFC 3339 time: {e}"))
}

/// Why a run failed, and so its exit status.
enum Failure {
    /// The input is wrong: exit 2.
    BadInput(String),
    /// Something the input cannot fix: exit 1.
    Internal(String),
}

fn main() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = Cli::parse_from(&raw);
    match run(cli, &raw) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(message)) => {
            eprintln!("karpenter-sim: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Internal(message)) => {
            eprintln!("karpenter-sim: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli, raw: &[std::ffi::OsString]) -> Result<(), Failure> {
    match cli.command {
        Command::Replay(args) => replay::run(args, raw),
        Command::Summary(common) => summary(&common),
        Command::Provision(args) => provision(&args),
        Command::Disrupt(args) => disrupt(&args),
    }
}

/// `summary`: what the input holds, checked.
fn summary(common: &CommonArgs) -> Result<(), Failure> {
    let (scenario, mut timings) = load(common)?;
    let (_, provider) = resolve_provider(common, &scenario)?;
    let start = Instant::now();
    let summary = Summary::of(&scenario);
    timings.record("summarise", start.elapsed());
    let start = Instant::now();
    let text = match common.output {
        Output::Json => json(&summary)?,
        Output::Table => format!("{}\nprovider: {provider}\n", summary.to_table()),
    };
    write_stdout(&text)?;
    timings.record("write", start.elapsed());
    finish(common, &scenario, timings);
    Ok(())
}

/// `provision`: new capacity for the pending pods.
fn provision(args: &ProvisionArgs) -> Result<(), Failure> {
    let (scenario, mut timings) = load(&args.common)?;
    let (chosen, _) = resolve_provider(&args.common, &scenario)?;
    let start = Instant::now();
    let counts = (
        scenario.pods.len(),
        scenario.nodes.len(),
        scenario.node_pools.len(),
    );
    let snapshot = chosen.snapshot(scenario, args.common.planning.feature_gates())?;
    timings.record("snapshot", start.elapsed());
    let start = Instant::now();
    // The clock judges one thing here: whether a duration-valued
    // `karpenter.sh/do-not-disrupt` still holds a pod of a node
    // being deleted (see `ProvisioningOptions::now`).
    let planning = args.common.planning.options();
    let options = karpenter::core::provisioning::ProvisioningOptions::from(planning)
        .at(jiff::Timestamp::now());
    let mut plan = karpenter::core::provisioning::plan_provisioning_with(&snapshot, &options);
    timings.record("plan", start.elapsed());
    // The cost mode always reports how far from the optimum it may be.
    if args.bound || planning.packing == Packing::Cost {
        let start = Instant::now();
        plan.add_lower_bound(&snapshot);
        timings.record("bound", start.elapsed());
    }
    let start = Instant::now();
    let text = match args.common.output {
        Output::Json => json(&plan)?,
        Output::Table => plan_table(&plan),
    };
    write_stdout(&text)?;
    timings.record("write", start.elapsed());
    if args.common.timings {
        let (pods, nodes, pools) = counts;
        timings.set_size(format!(
            "{pods} pods, {nodes} nodes, {pools} node pools; {} new claims, {} unschedulable",
            plan.node_claims.len(),
            plan.unschedulable.len()
        ));
        eprintln!("{timings}");
    }
    Ok(())
}

/// `disrupt`: which nodes to delete or replace, and why.
fn disrupt(args: &DisruptArgs) -> Result<(), Failure> {
    let (scenario, mut timings) = load(&args.common)?;
    let (chosen, _) = resolve_provider(&args.common, &scenario)?;
    let now = args.now.unwrap_or_else(jiff::Timestamp::now);
    let start = Instant::now();
    let counts = (scenario.nodes.len(), scenario.node_pools.len());
    let snapshot = chosen.snapshot(scenario, args.common.planning.feature_gates())?;
    timings.record("snapshot", start.elapsed());
    let start = Instant::now();
    let mut options = karpenter::core::disruption::DisruptionOptions::default()
        .with_planning(args.common.planning.options())
        .with_m_to_n(args.m_to_n)
        .with_repair_policies(chosen.repair_policies());
    if args.spot_to_spot {
        options = options.with_spot_to_spot(true);
    }
    let plan = karpenter::core::disruption::plan_disruption_with(&snapshot, now, &options);
    timings.record("plan", start.elapsed());
    let start = Instant::now();
    let text = match args.common.output {
        Output::Json => json(&plan)?,
        Output::Table => disruption_table(&plan),
    };
    write_stdout(&text)?;
    timings.record("write", start.elapsed());
    if args.common.timings {
        let (nodes, pools) = counts;
        timings.set_size(format!(
            "{nodes} nodes, {pools} node pools; {} commands, {} blocked",
            plan.commands.len(),
            plan.blocked.len()
        ));
        eprintln!("{timings}");
    }
    Ok(())
}

/// Reads and checks the input files, timing both.
fn load(common: &CommonArgs) -> Result<(Scenario, Timings), Failure> {
    if let Some(threads) = common.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(threads))
            .build_global()
            .map_err(|e| Failure::Internal(format!("cannot start {threads} threads: {e}")))?;
    }
    let mut timings = Timings::new();
    let options = LoadOptions::default().with_feature_gates(common.planning.feature_gates());
    let scenario = timings
        .time("read", || Scenario::read_files(&common.files, &options))
        .map_err(|e| Failure::BadInput(e.to_string()))?;
    timings
        .time("validate", || scenario.validate())
        .map_err(|e| Failure::BadInput(e.to_string()))?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    Ok((scenario, timings))
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, Failure> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| Failure::Internal(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Internal(format!("writing the output: {e}")))
        }
        _ => Ok(()),
    }
}

fn finish(common: &CommonArgs, scenario: &Scenario, mut timings: Timings) {
    if common.timings {
        timings.set_size(format!(
            "{} objects: {} pods, {} nodes, {} node pools",
            scenario.object_count(),
            scenario.pods.len(),
            scenario.nodes.len(),
            scenario.node_pools.len()
        ));
        eprintln!("{timings}");
    }
}
