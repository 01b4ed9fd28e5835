//! Replays (`karpenter-sim replay`): the targets of the replay's issue, a
//! 24-hour day at 1-minute steps of a cluster growing to 2,000 pods (under
//! 10 s) and 7 days at 5-minute steps (under 20 s), on the example cluster
//! (`examples/replay/cluster.yaml`: three sizes, spot and on-demand, two
//! zones).
//!
//! `cargo bench --bench replay`. Each sample is a whole replay, so a run
//! takes minutes; `cargo bench --bench replay -- day` runs one.
//! `replay/azure_workday` replays the example's working day on the Azure
//! provider (`examples/replay/azure.yaml`), `replay/eks_workday` on the AWS
//! provider (`examples/replay/eks.yaml`).

use criterion::{Criterion, criterion_group, criterion_main};
use karpenter::replay::{AwsReplayOptions, ReplayCloud, ReplayOptions, run};
use karpenter::scenario::{LoadOptions, Scenario, Trace};

/// As `karpenter-sim` replays (its allocator; the system's takes twice as
/// long over a replay's many small copies).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CLUSTER: &str = include_str!("../examples/replay/cluster.yaml");

/// The example's working day, and its cluster on Azure and on EKS.
const WORKDAY: &str = include_str!("../examples/replay/workday.yaml");
const AZURE: &str = include_str!("../examples/replay/azure.yaml");
const EKS: &str = include_str!("../examples/replay/eks.yaml");

/// A day: the morning ramp to 1,400 web and 600 api pods, three spot
/// interruptions, a failing node, a drift roll at noon, the evening
/// scale-down and random batch jobs.
const DAY: &str = "apiVersion: karpenter.sim/v1alpha1
kind: Trace
start: 2026-01-05T00:00:00Z
events:
  - {at: 6h, scale: {deployment: web, replicas: 400}}
  - {at: 7h, scale: {deployment: web, replicas: 800}}
  - {at: 7h, scale: {deployment: api, replicas: 300}}
  - {at: 8h, scale: {deployment: web, replicas: 1400}}
  - {at: 8h, scale: {deployment: api, replicas: 600}}
  - {at: 9h30m, interrupt: {nodes: 3}}
  - {at: 10h, fail: {nodes: 1}}
  - {at: 12h, drift: {nodePool: default}}
  - {at: 18h, scale: {deployment: web, replicas: 600}}
  - {at: 19h, scale: {deployment: api, replicas: 100}}
  - {at: 20h, scale: {deployment: web, replicas: 100}}
  - {at: 20h, random: {deployment: batch, every: 15m, min: 0, max: 100}}
";

/// A week of the same daily cycle, without the drift.
fn week() -> String {
    let mut text = String::from(
        "apiVersion: karpenter.sim/v1alpha1\nkind: Trace\nstart: 2026-01-05T00:00:00Z\nevents:\n",
    );
    for day in 0..7 {
        let h = day * 24;
        for (hour, deployment, replicas) in [
            (7, "web", 800),
            (7, "api", 300),
            (8, "web", 1400),
            (8, "api", 600),
            (18, "web", 600),
            (19, "api", 100),
            (20, "web", 100),
        ] {
            text.push_str(&format!(
                "  - {{at: {}h, scale: {{deployment: {deployment}, replicas: {replicas}}}}}\n",
                h + hour
            ));
        }
        text.push_str(&format!(
            "  - {{at: {}h30m, interrupt: {{nodes: 2}}}}\n",
            h + 9
        ));
    }
    text
}

fn replay(c: &mut Criterion) {
    let options = LoadOptions::default();
    let cluster = Scenario::from_str("cluster.yaml", CLUSTER, &options).expect("the cluster");
    let day = Trace::from_str("day.yaml", DAY, &options).expect("the day");
    let week = Trace::from_str("week.yaml", &week(), &options).expect("the week");
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    let day_options =
        ReplayOptions::default().with_duration(std::time::Duration::from_secs(86_400));
    group.bench_function("day_1m_2000pods", |b| {
        b.iter(|| run(&cluster, &day, &day_options, &mut |_, _| {}).expect("replays"))
    });
    let week_options = ReplayOptions::default()
        .with_duration(std::time::Duration::from_secs(7 * 86_400))
        .with_step(std::time::Duration::from_secs(300));
    group.bench_function("week_5m", |b| {
        b.iter(|| run(&cluster, &week, &week_options, &mut |_, _| {}).expect("replays"))
    });
    let azure = Scenario::from_str("azure.yaml", AZURE, &options).expect("the Azure cluster");
    let workday = Trace::from_str("workday.yaml", WORKDAY, &options).expect("the workday");
    let azure_options = ReplayOptions::default().with_cloud(ReplayCloud::Azure {
        region: "eastus".into(),
    });
    group.bench_function("azure_workday", |b| {
        b.iter(|| run(&azure, &workday, &azure_options, &mut |_, _| {}).expect("replays"))
    });
    let eks = Scenario::from_str("eks.yaml", EKS, &options).expect("the EKS cluster");
    let aws_options = ReplayOptions::default().with_cloud(ReplayCloud::Aws {
        region: "us-east-1".into(),
        options: AwsReplayOptions::default(),
    });
    group.bench_function("eks_workday", |b| {
        b.iter(|| run(&eks, &workday, &aws_options, &mut |_, _| {}).expect("replays"))
    });
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
