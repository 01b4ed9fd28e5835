//! Replays: a cluster's day (or week) through the same driver a controller
//! runs, on a simulated clock, with what it cost and what it disrupted.
//!
//! A replay starts from a [`Scenario`] (the cluster: NodePools, instance
//! types, Deployments, nodes, pods) and a [`Trace`] (what happens to it:
//! Deployments scaled, spot nodes interrupted, nodes failing, NodePools
//! changed). Every step of `step` it applies the trace's events due, lets
//! the in-memory cluster settle (nodes launched `launchDelay` ago register,
//! pods bind where the plan put them), runs one
//! [`reconcile`](karpenter_core::driver::Driver::reconcile) of the driver
//! against the cloud ([`ReplayCloud`]: the fake provider, the Azure
//! provider over an in-memory ARM, or the AWS provider over an in-memory
//! EC2), and records the cluster. Time comes
//! from the step, never from the wall clock: the same inputs and seed give
//! the same [`Run`], byte for byte.
//!
//! ```
//! use karpenter::replay::{ReplayOptions, run};
//! use karpenter::scenario::{LoadOptions, Scenario, Trace};
//!
//! let cluster = Scenario::from_str("cluster.yaml", r#"
//! apiVersion: karpenter.sh/v1
//! kind: NodePool
//! metadata: {name: default}
//! spec:
//!   template:
//!     spec:
//!       nodeClassRef: {group: karpenter.fake, kind: FakeNodeClass, name: default}
//!       requirements: []
//! ---
//! apiVersion: karpenter.fake/v1alpha1
//! kind: InstanceType
//! metadata: {name: small}
//! capacity: {cpu: "2", memory: 8Gi, pods: "110"}
//! offerings:
//!   - {zone: zone-a, capacityType: on-demand, price: 0.10}
//! ---
//! apiVersion: apps/v1
//! kind: Deployment
//! metadata: {name: web, namespace: default}
//! spec:
//!   replicas: 0
//!   selector: {matchLabels: {app: web}}
//!   template:
//!     metadata: {labels: {app: web}}
//!     spec:
//!       containers: [{name: web, resources: {requests: {cpu: 500m}}}]
//! "#, &LoadOptions::default())?;
//! let trace = Trace::from_str("trace.yaml", r#"
//! apiVersion: karpenter.sim/v1alpha1
//! kind: Trace
//! events:
//!   - {at: 0s, scale: {deployment: web, replicas: 6}}
//!   - {at: 1h, scale: {deployment: web, replicas: 1}}
//! "#, &LoadOptions::default())?;
//! let run = run(&cluster, &trace, &ReplayOptions::default(), &mut |_, _| {})?;
//! assert_eq!(run.timeline.len(), 120); // two hours at one-minute steps
//! assert_eq!(run.timeline.last().unwrap().pods_running, 1);
//! assert!(run.totals.cost > 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod actions;
mod aws;
mod aws_options;
mod cloud;
mod output;
mod record;
mod schedule;
mod world;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::cluster::ClusterError;
use karpenter_core::planning::PlanningOptions;
use thiserror::Error;

use crate::scenario::{LoadError, Scenario, Trace};

pub use actions::{GENERATION_ANNOTATION, INTERRUPTION_NOTICE};
pub use aws_options::AwsReplayOptions;
pub use cloud::ReplayCloud;
pub use output::{DroppedCommand, Output, ReplayEvent, Run, Sample, Totals};
pub use record::REASONS;

/// When a replay starts if neither its options nor its trace say.
pub const DEFAULT_START: Timestamp = Timestamp::constant(1_767_225_600, 0); // 2026-01-01T00:00:00Z

/// How long a launched node takes to register if the trace does not say.
pub const DEFAULT_LAUNCH_DELAY: Duration = Duration::from_secs(60);

/// How a replay runs: the clock, and the driver's options.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// When the replay starts; else the trace's `start`, else
    /// [`DEFAULT_START`].
    pub start: Option<Timestamp>,
    /// How long it runs; else the trace's last event plus one hour.
    pub duration: Option<Duration>,
    /// How often the driver reconciles (at least a second).
    pub step: Duration,
    /// How new claims are chosen, and upstream's feature gates: the
    /// driver's (and so every plan's) planning options.
    pub planning: PlanningOptions,
    /// Whether consolidation may replace several nodes by fewer.
    pub m_to_n: bool,
    /// Seeds every random choice (`random` counts, which nodes an
    /// `interrupt` or `fail` hits).
    pub seed: u64,
    /// The run's label in the output (`--packing upstream`).
    pub flags: String,
    /// Whether the driver skips a disruption plan that would find the same
    /// nothing as its last (see
    /// [`DriverOptions::with_quiet_skip`](karpenter_core::driver::DriverOptions::with_quiet_skip)):
    /// on by default; the run is the same either way, only faster.
    pub quiet_skip: bool,
    /// The cloud nodes launch in: the fake provider (the default), Azure or
    /// AWS.
    pub cloud: ReplayCloud,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            start: None,
            duration: None,
            step: Duration::from_secs(60),
            planning: PlanningOptions::default(),
            m_to_n: false,
            seed: 1,
            flags: "--packing upstream".to_owned(),
            quiet_skip: true,
            cloud: ReplayCloud::Fake,
        }
    }
}

impl ReplayOptions {
    /// These options starting at `start`.
    pub fn with_start(mut self, start: Timestamp) -> Self {
        self.start = Some(start);
        self
    }

    /// These options running for `duration`.
    pub fn with_duration(mut self, duration: Duration) -> Self {
        self.duration = Some(duration);
        self
    }

    /// These options reconciling every `step`.
    pub fn with_step(mut self, step: Duration) -> Self {
        self.step = step;
        self
    }

    /// These options choosing new claims (and setting gates) as `planning`
    /// says.
    #[must_use]
    pub fn with_planning(mut self, planning: PlanningOptions) -> Self {
        self.planning = planning;
        self
    }

    /// These options with M-to-N consolidation on or off.
    pub fn with_m_to_n(mut self, on: bool) -> Self {
        self.m_to_n = on;
        self
    }

    /// These options with random choices seeded by `seed`.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// These options labelling the run `flags`.
    pub fn with_flags(mut self, flags: impl Into<String>) -> Self {
        self.flags = flags.into();
        self
    }

    /// These options with the driver's quiet skip on or off (off plans
    /// disruption at every settled step, to check that the skip changes
    /// nothing).
    pub fn with_quiet_skip(mut self, on: bool) -> Self {
        self.quiet_skip = on;
        self
    }

    /// These options launching in `cloud`.
    pub fn with_cloud(mut self, cloud: ReplayCloud) -> Self {
        self.cloud = cloud;
        self
    }
}

/// Why a replay did not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The scenario or the trace is wrong (the error names the file, the
    /// document and the field).
    #[error(transparent)]
    Input(#[from] LoadError),
    /// An option is out of range.
    #[error("{option}: {message}")]
    Option {
        /// The option (`step`, `duration`).
        option: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The in-memory cluster refused the scenario's objects.
    #[error("setting up the cluster: {0}")]
    Cluster(#[from] ClusterError),
}

/// Wakes the thread that blocks on a future.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on this thread. The in-memory cluster and
/// the fake cloud never wait, so this returns at the first poll; anything
/// that does wait parks the thread until woken.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::park();
    }
}

/// Replays `trace` on the cluster `scenario` describes, as `options` say;
/// `progress` hears `(steps done, steps in all)` after every step.
pub fn run(
    scenario: &Scenario,
    trace: &Trace,
    options: &ReplayOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Run, ReplayError> {
    let start = options.start.or(trace.start).unwrap_or(DEFAULT_START);
    if options.step < Duration::from_secs(1) {
        return Err(ReplayError::Option {
            option: "step",
            message: format!("{:?} is shorter than a second", options.step),
        });
    }
    let duration = options
        .duration
        .unwrap_or_else(|| schedule::default_duration(trace, start));
    let steps = u64::try_from(duration.as_nanos() / options.step.as_nanos()).unwrap_or(u64::MAX);
    if steps == 0 {
        return Err(ReplayError::Option {
            option: "duration",
            message: format!("{duration:?} is shorter than one step ({:?})", options.step),
        });
    }
    let step = SignedDuration::try_from(options.step).map_err(|e| ReplayError::Option {
        option: "step",
        message: e.to_string(),
    })?;
    let time_of = |k: u64| -> Result<Timestamp, ReplayError> {
        i32::try_from(k)
            .ok()
            .and_then(|k| step.checked_mul(k))
            .and_then(|offset| start.checked_add(offset).ok())
            .ok_or(ReplayError::Option {
                option: "duration",
                message: format!("{duration:?} from {start} is past the last time there is"),
            })
    };
    let end = time_of(steps)?;
    let launch_delay = trace.launch_delay.unwrap_or(DEFAULT_LAUNCH_DELAY);
    let mut world = world::World::build(scenario, options, start, launch_delay)?;
    let due = schedule::lay_out(
        trace,
        &schedule::Bounds {
            start,
            end,
            deployments: &world.deployments,
            node_pools: &world.node_pools,
            seed: options.seed,
        },
    )?;
    let step_seconds = options.step.as_secs();
    let mut recorder = record::Recorder::new(step_seconds);
    recorder.warn(std::mem::take(&mut world.warnings));
    let mut acting = actions::Actions::default();
    let mut next = 0;
    // Step 0 at the start sets the cluster up (its launches count in the
    // first sample); steps 1..=n are sampled.
    for k in 0..=steps {
        let now = time_of(k)?;
        world.cloud.set_time(now);
        world.cluster.tick(now);
        for reclaim in acting.due_reclaims(now) {
            let claims = world.cluster.node_claim_list();
            for node in world
                .cloud
                .reclaim(&reclaim.provider_id, &reclaim.node, &claims)
            {
                world.cluster.shut_down_node(&node);
                recorder.reclaimed(&node, now);
            }
        }
        while let Some(due) = due.get(next).filter(|d| d.at <= now) {
            let warnings = acting.apply(&world, due, now, options.seed);
            recorder.warn(warnings);
            next += 1;
        }
        match block_on(world.driver.reconcile(now)) {
            Ok(report) => recorder.driver_events(&world, &report.events, now),
            Err(error) => recorder.warn([format!("{now}: the driver's pass failed: {error}")]),
        }
        world.cluster.tick(now);
        if k > 0 {
            recorder.sample(&world, now);
        } else {
            recorder.note_pending(&world);
        }
        progress(k, steps);
    }
    Ok(recorder.finish(options.flags.clone(), start))
}
