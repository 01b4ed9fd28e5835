//! `karpenter-sim replay`: a trace replayed through the driver, once or
//! compared with other flags.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, Parser};
use karpenter::core::planning::MinValuesPolicy;
use karpenter::replay::{
    AwsReplayOptions, Output as ReplayOutput, ReplayCloud, ReplayError, ReplayOptions,
};
use karpenter::scenario::{LoadOptions, Scenario, Trace};
use karpenter::sim::{Timings, replay_charts, replay_csv, replay_html, replay_table};

use super::progress::Progress;
use super::{
    Chosen, Cli, Command, CommonArgs, Failure, Output, json, parse_time, resolve_provider,
    write_stdout,
};

#[derive(Args)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The trace: a `karpenter.sim/v1alpha1` `Trace` document.
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// When the replay starts (RFC 3339). Default: the trace's `start`, else
    /// 2026-01-01T00:00:00Z.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    start: Option<jiff::Timestamp>,
    /// How long it runs (a Go duration). Default: the trace's last event
    /// plus one hour.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// How often the driver reconciles (a Go duration, at least 1s).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration)]
    step: Duration,
    /// Let consolidation replace several nodes by fewer, cheaper ones.
    #[arg(long = "m-to-n")]
    m_to_n: bool,
    /// Replay a second time with these flags added (`--packing cost`), and
    /// show both.
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    compare: Option<String>,
    /// Write the timeline as CSV (one row per step and run).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the charts into this directory (made if missing): price.svg,
    /// nodes.svg, pending.svg, disruptions.svg.
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// Write one self-contained HTML report (charts inline, totals, events).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Seeds every random choice (the trace's `random` counts, which nodes
    /// an `interrupt` or `fail` hits).
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    karpenter::core::api::GoDuration::parse(text)
        .map(|d| d.as_std())
        .map_err(|e| e.to_string())
}

/// The flags a `--compare` may not change: the inputs and the outputs are
/// the first run's.
const NOT_COMPARED: [&str; 13] = [
    "-f",
    "--filename",
    "--trace",
    "--compare",
    "-o",
    "--output",
    "--csv",
    "--svg",
    "--html",
    "--timings",
    "--threads",
    "--start",
    "--duration",
];

impl ReplayArgs {
    /// The label of this run in the output: the flags that make it what
    /// it is (the cloud named when it is Azure or AWS).
    fn label(&self, cloud: &ReplayCloud) -> String {
        let planning = &self.common.planning;
        let mut flags = vec![format!("--packing {}", planning.packing)];
        if self.m_to_n {
            flags.push("--m-to-n".into());
        }
        for gates in &planning.feature_gates {
            flags.push(format!("--feature-gates {gates}"));
        }
        if planning.min_values_policy != MinValuesPolicy::Strict {
            flags.push(format!(
                "--min-values-policy {}",
                planning.min_values_policy
            ));
        }
        if self.step != Duration::from_secs(60) {
            flags.push(format!(
                "--step {}",
                karpenter::core::api::GoDuration::from_std(self.step)
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ));
        }
        if self.seed != 1 {
            flags.push(format!("--seed {}", self.seed));
        }
        match cloud {
            ReplayCloud::Azure { region } => {
                flags.push(format!("--provider azure --region {region}"));
            }
            ReplayCloud::Aws { region, options } => {
                flags.push(format!("--provider aws --region {region}"));
                if options.spot_prices.is_some() {
                    flags.push("--spot-prices".into());
                }
                if options.reserved_enis != 0 {
                    flags.push(format!("--reserved-enis {}", options.reserved_enis));
                }
                if options.vm_memory_overhead_percent
                    != karpenter::aws::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT
                {
                    flags.push(format!(
                        "--vm-memory-overhead-percent {}",
                        options.vm_memory_overhead_percent
                    ));
                }
            }
            _ => {}
        }
        flags.join(" ")
    }

    fn options(&self, cloud: ReplayCloud) -> ReplayOptions {
        let mut options = ReplayOptions::default()
            .with_step(self.step)
            .with_planning(self.common.planning.options())
            .with_m_to_n(self.m_to_n)
            .with_seed(self.seed)
            .with_flags(self.label(&cloud))
            .with_cloud(cloud);
        if let Some(start) = self.start {
            options = options.with_start(start);
        }
        if let Some(duration) = self.duration {
            options = options.with_duration(duration);
        }
        options
    }
}

/// The second run's arguments: the first's, with `--compare` taken out and
/// its flags added at the end (where they win).
fn compared(raw: &[OsString], flags: &str) -> Result<ReplayArgs, Failure> {
    let added: Vec<&str> = flags.split_whitespace().collect();
    if let Some(refused) = added.iter().find(|flag| {
        NOT_COMPARED
            .iter()
            .any(|n| **flag == *n || flag.starts_with(&format!("{n}=")))
    }) {
        return Err(Failure::BadInput(format!(
            "--compare {flags:?}: {refused} cannot be compared (only flags that change how \
             the replay runs: --packing, --m-to-n, --feature-gates, --min-values-policy, \
             --step, --seed)"
        )));
    }
    let mut args: Vec<OsString> = Vec::with_capacity(raw.len() + added.len());
    let mut skip = false;
    for arg in raw {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--compare" {
            skip = true;
            continue;
        }
        if arg.to_string_lossy().starts_with("--compare=") {
            continue;
        }
        args.push(arg.clone());
    }
    args.extend(added.iter().map(OsString::from));
    let cli = Cli::try_parse_from(&args).map_err(|e| {
        Failure::BadInput(format!(
            "--compare {flags:?}: {}",
            e.to_string().lines().next().unwrap_or_default()
        ))
    })?;
    match cli.command {
        Command::Replay(args) => Ok(args),
        _ => Err(Failure::Internal(
            "--compare parsed to another command".into(),
        )),
    }
}

/// Reads the cluster's files and the trace under a run's gates, and picks
/// the cloud as `provision` picks its provider.
fn load(
    args: &ReplayArgs,
    timings: &mut Timings,
) -> Result<(Scenario, Trace, ReplayCloud), Failure> {
    let bad = |e: karpenter::scenario::LoadError| Failure::BadInput(e.to_string());
    let options = LoadOptions::default().with_feature_gates(args.common.planning.feature_gates());
    let scenario = timings
        .time("read", || {
            Scenario::read_files(&args.common.files, &options)
        })
        .map_err(bad)?;
    timings
        .time("validate", || scenario.validate())
        .map_err(bad)?;
    let trace = timings
        .time("read trace", || Trace::read_file(&args.trace, &options))
        .map_err(bad)?;
    let (chosen, _) = resolve_provider(&args.common, &scenario)?;
    let cloud = match chosen {
        Chosen::Fake => ReplayCloud::Fake,
        Chosen::Azure(region) => ReplayCloud::Azure { region },
        Chosen::Aws(region, options) => ReplayCloud::Aws {
            region,
            options: AwsReplayOptions {
                spot_prices: options.spot_prices,
                reserved_enis: options.reserved_enis,
                vm_memory_overhead_percent: options.vm_memory_overhead_percent,
            },
        },
    };
    Ok((scenario, trace, cloud))
}

pub(crate) fn run(args: ReplayArgs, raw: &[OsString]) -> Result<(), Failure> {
    if let Some(threads) = args.common.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(threads))
            .build_global()
            .map_err(|e| Failure::Internal(format!("cannot start {threads} threads: {e}")))?;
    }
    let mut runs = vec![args];
    if let Some(flags) = runs[0].compare.clone() {
        runs.push(compared(raw, &flags)?);
    }
    let mut timings = Timings::new();
    let mut output = ReplayOutput { runs: Vec::new() };
    let mut steps = 0;
    for (i, run_args) in runs.iter().enumerate() {
        let (scenario, trace, cloud) = load(run_args, &mut timings)?;
        // Warnings are said once, for the first run's reading.
        if i == 0 {
            for warning in &scenario.warnings {
                eprintln!("warning: {warning}");
            }
        }
        let start = Instant::now();
        let mut progress = Progress::new(format!("replay {}", run_args.label(&cloud)));
        let result = karpenter::replay::run(
            &scenario,
            &trace,
            &run_args.options(cloud),
            &mut |done, total| progress.update(done, total),
        );
        progress.finish();
        let run = result.map_err(|e| match e {
            ReplayError::Input(_) | ReplayError::Option { .. } => Failure::BadInput(e.to_string()),
            _ => Failure::Internal(e.to_string()),
        })?;
        timings.record("replay", start.elapsed());
        steps += run.timeline.len();
        output.runs.push(run);
    }
    let args = &runs[0];
    let start = Instant::now();
    let text = match args.common.output {
        Output::Json => json(&output)?,
        Output::Table => replay_table(&output),
    };
    write_stdout(&text)?;
    let write = |path: &std::path::Path, text: &str| {
        std::fs::write(path, text)
            .map_err(|e| Failure::Internal(format!("writing {}: {e}", path.display())))
    };
    if let Some(path) = &args.csv {
        write(path, &replay_csv(&output))?;
    }
    if args.svg.is_some() || args.html.is_some() {
        let charts = replay_charts(&output).map_err(|e| Failure::Internal(e.to_string()))?;
        if let Some(dir) = &args.svg {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::Internal(format!("making {}: {e}", dir.display())))?;
            for chart in &charts {
                write(&dir.join(chart.file), &chart.svg)?;
            }
        }
        if let Some(path) = &args.html {
            write(path, &replay_html(&output, &charts))?;
        }
    }
    timings.record("write", start.elapsed());
    if args.common.timings {
        timings.set_size(format!("{} runs, {steps} steps", output.runs.len()));
        eprintln!("{timings}");
    }
    Ok(())
}
