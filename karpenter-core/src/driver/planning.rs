//! Where the driver's planning runs: [`PlanningRunner`], the embedder's say
//! (its documentation says why), with the runners the crate brings.

use std::fmt;
use std::sync::mpsc;
use std::time::Instant;

use async_trait::async_trait;

use super::report::{Report, Step, Timing};
use crate::error::Error;

/// One piece of the driver's planning, to run once, to completion.
pub type PlanningJob = Box<dyn FnOnce() + Send + 'static>;

/// Runs the driver's CPU-bound planning (provisioning's schedule, the
/// disruption plan) off the async executor, or wherever the embedder wants
/// it.
///
/// Planning takes from milliseconds to seconds on a large cluster (a
/// disruption pass simulates every candidate). Run inline, it holds the
/// executor thread that polls [`Driver::reconcile`], and an async runtime
/// expects its tasks to yield often: a controller's watches, probes and
/// timers on that thread stall while the plan is made. The crate does not
/// pick a runtime (the driver is runtime-agnostic, its traits
/// `async-trait`), so the embedder says how blocking work runs, with
/// [`DriverOptions::with_planning_runner`]: `SpawnBlocking` (the `tokio`
/// feature) hands it to tokio's blocking pool, a runner of one's own can
/// hand it to rayon or a dedicated thread, and the default, [`Inline`], runs
/// it where it is awaited, as a test or a single-threaded tool wants.
///
/// The driver moves what it plans (its snapshot) into the job and gets it
/// back with the plan, so that a job borrows nothing and may run on any
/// thread. What is planned does not depend on the runner.
///
/// [`Driver::reconcile`]: super::Driver::reconcile
/// [`DriverOptions::with_planning_runner`]: super::DriverOptions::with_planning_runner
#[async_trait]
pub trait PlanningRunner: Send + Sync + fmt::Debug {
    /// Runs `job` to completion, and returns once it has run. A job that
    /// panics should panic here too (see [`std::panic::resume_unwind`]), as
    /// it would inline; a runner that returns without running the job (its
    /// runtime shutting down) fails the reconcile with
    /// [`Error::PlanningNotRun`].
    async fn run(&self, job: PlanningJob);
}

/// Runs planning on the task that awaits it, blocking its executor thread
/// meanwhile: the default, for tests, tools and single-threaded embedders.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inline;

#[async_trait]
impl PlanningRunner for Inline {
    async fn run(&self, job: PlanningJob) {
        job();
    }
}

/// Runs planning on tokio's blocking thread pool
/// ([`tokio::task::spawn_blocking`]), so that the runtime's workers keep
/// polling other tasks. The driver must be awaited inside a tokio runtime.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct SpawnBlocking;

#[cfg(feature = "tokio")]
#[async_trait]
impl PlanningRunner for SpawnBlocking {
    async fn run(&self, job: PlanningJob) {
        if let Err(error) = tokio::task::spawn_blocking(job).await
            && error.is_panic()
        {
            std::panic::resume_unwind(error.into_panic());
        }
        // Otherwise cancelled, with the runtime shutting down: the job did
        // not run, which the driver reports.
    }
}

/// Runs `plan` through `runner`, with what it returns, and records in
/// `report` how long the planning itself took (on whatever thread ran it,
/// queueing aside) as a [`Timing`] of `step`.
pub(super) async fn run_planning<T: Send + 'static>(
    runner: &dyn PlanningRunner,
    step: Step,
    report: &mut Report,
    plan: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    let (sender, receiver) = mpsc::sync_channel(1);
    runner
        .run(Box::new(move || {
            let started = Instant::now();
            let planned = plan();
            // The receiver outlives the job: the send cannot fail.
            let _ = sender.send((planned, started.elapsed()));
        }))
        .await;
    let (planned, took) = receiver.try_recv().map_err(|_| Error::PlanningNotRun)?;
    report.timings.push(Timing { step, took });
    Ok(planned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drops every job: a runtime shutting down.
    #[derive(Debug)]
    struct Dropping;

    #[async_trait]
    impl PlanningRunner for Dropping {
        async fn run(&self, job: PlanningJob) {
            drop(job);
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn inline_runs_the_job_where_it_is_awaited() {
        let here = std::thread::current().id();
        let ran_on = run_planning(
            &Inline,
            Step::Provisioning,
            &mut Report::default(),
            move || std::thread::current().id(),
        )
        .await;
        assert_eq!(ran_on.expect("it ran"), here);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_job_that_did_not_run_is_an_error() {
        let result =
            run_planning(&Dropping, Step::Provisioning, &mut Report::default(), || 42).await;
        assert!(matches!(result, Err(Error::PlanningNotRun)), "{result:?}");
    }

    #[cfg(feature = "tokio")]
    #[tokio::test(flavor = "current_thread")]
    async fn spawn_blocking_runs_the_job_off_the_executor_thread() {
        let here = std::thread::current().id();
        let ran_on = run_planning(
            &SpawnBlocking,
            Step::Provisioning,
            &mut Report::default(),
            move || std::thread::current().id(),
        )
        .await;
        assert_ne!(ran_on.expect("it ran"), here);
    }

    #[cfg(feature = "tokio")]
    #[tokio::test(flavor = "current_thread")]
    #[should_panic(expected = "a planner bug")]
    async fn spawn_blocking_passes_a_panic_on() {
        let _ = run_planning(
            &SpawnBlocking,
            Step::Provisioning,
            &mut Report::default(),
            || panic!("a planner bug"),
        )
        .await;
    }
}
