//! The trace laid out on the replay's clock: each event resolved to a time,
//! checked against the start and the cluster, and every `random` expanded
//! into the scales it makes.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use karpenter_fake::generate::workload::SplitMix64;

use crate::scenario::{Action, At, DeploymentRef, LoadError, Trace, TraceEvent};

/// What the replay does at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Planned {
    /// Scale a Deployment.
    Scale {
        deployment: DeploymentRef,
        replicas: u32,
    },
    /// Give nodes the interruption notice.
    Interrupt { nodes: u32, capacity_type: String },
    /// Turn nodes NotReady.
    Fail { nodes: u32 },
    /// Change a NodePool's template.
    Drift { node_pool: String },
}

/// One planned action: when, and the trace event it comes from (its index,
/// which seeds its random choices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Due {
    pub at: Timestamp,
    pub event: usize,
    pub planned: Planned,
}

/// What the schedule is checked against.
pub(crate) struct Bounds<'a> {
    pub start: Timestamp,
    pub end: Timestamp,
    /// `namespace/name` of every Deployment the cluster runs.
    pub deployments: &'a [DeploymentRef],
    /// Every NodePool's name.
    pub node_pools: &'a [String],
    pub seed: u64,
}

/// When an event happens.
pub(crate) fn time_of(at: At, start: Timestamp) -> Option<Timestamp> {
    match at {
        At::Time(time) => Some(time),
        At::Offset(offset) => {
            let offset = SignedDuration::try_from(offset).ok()?;
            start.checked_add(offset).ok()
        }
    }
}

/// The default length of a replay: the last event plus one hour.
pub(crate) fn default_duration(trace: &Trace, start: Timestamp) -> Duration {
    let last = trace
        .events
        .iter()
        .filter_map(|e| time_of(e.at, start))
        .max()
        .unwrap_or(start);
    let since = last.duration_since(start);
    Duration::try_from(since).unwrap_or_default() + Duration::from_secs(3600)
}

fn invalid(trace: &Trace, field: String, message: String) -> LoadError {
    LoadError::Invalid {
        origin: trace.source.clone(),
        object: "Trace".to_owned(),
        field,
        message,
    }
}

/// A 64-bit mix of the seed and an event's index, so that each event draws
/// its own sequence and adding an event leaves the others' draws alone.
pub(crate) fn stream(seed: u64, event: usize) -> SplitMix64 {
    let mut mixer = SplitMix64::new(seed ^ (event as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    SplitMix64::new(mixer.next_u64())
}

/// Every action of the trace at its time, in time order (events at the same
/// time in the trace's order). An event before the start, or naming a
/// Deployment or NodePool the cluster lacks, is an error naming its field;
/// events after the end are dropped.
pub(crate) fn lay_out(trace: &Trace, bounds: &Bounds<'_>) -> Result<Vec<Due>, LoadError> {
    let mut timed = Vec::with_capacity(trace.events.len());
    for (i, event) in trace.events.iter().enumerate() {
        timed.push((checked_time(trace, i, event, bounds)?, i));
    }
    // Stable: equal times keep the trace's order.
    timed.sort_by_key(|&(at, _)| at);
    let next_for = next_of_same_deployment(trace, &timed);
    let mut due = Vec::new();
    for &(at, i) in &timed {
        if at > bounds.end {
            continue;
        }
        let planned = match &trace.events[i].action {
            Action::Scale {
                deployment,
                replicas,
            } => Planned::Scale {
                deployment: deployment.clone(),
                replicas: *replicas,
            },
            Action::Interrupt {
                nodes,
                capacity_type,
            } => Planned::Interrupt {
                nodes: *nodes,
                capacity_type: capacity_type.clone(),
            },
            Action::Fail { nodes } => Planned::Fail { nodes: *nodes },
            Action::Drift { node_pool } => Planned::Drift {
                node_pool: node_pool.clone(),
            },
            Action::Random {
                deployment,
                every,
                min,
                max,
            } => {
                let random = Random {
                    event: i,
                    deployment,
                    every: *every,
                    min: *min,
                    max: *max,
                };
                random.draw(at, next_for.get(&i).copied(), bounds, &mut due);
                continue;
            }
        };
        due.push(Due {
            at,
            event: i,
            planned,
        });
    }
    due.sort_by_key(|d| (d.at, d.event));
    Ok(due)
}

/// When event `i` happens, once it is checked: not past what the replay can
/// reach, not before the start, and naming only Deployments and NodePools the
/// cluster has (else an error naming the field, listing what exists).
fn checked_time(
    trace: &Trace,
    i: usize,
    event: &TraceEvent,
    bounds: &Bounds<'_>,
) -> Result<Timestamp, LoadError> {
    let at = time_of(event.at, bounds.start).ok_or_else(|| {
        invalid(
            trace,
            format!("events[{i}].at"),
            "is past the last time this replay can reach".to_owned(),
        )
    })?;
    if at < bounds.start {
        return Err(invalid(
            trace,
            format!("events[{i}].at"),
            format!("{at} is before the start ({})", bounds.start),
        ));
    }
    if let Some(deployment) = event.action.deployment()
        && !bounds.deployments.contains(deployment)
    {
        let known: Vec<String> = bounds.deployments.iter().map(|d| d.to_string()).collect();
        return Err(invalid(
            trace,
            format!("events[{i}].{}.deployment", event.action.key()),
            format!(
                "no Deployment {deployment} in the input (it has: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        ));
    }
    if let Action::Drift { node_pool } = &event.action
        && !bounds.node_pools.contains(node_pool)
    {
        return Err(invalid(
            trace,
            format!("events[{i}].drift.nodePool"),
            format!(
                "no NodePool {node_pool} in the input (it has: {})",
                bounds.node_pools.join(", ")
            ),
        ));
    }
    Ok(at)
}

/// For each event that sets a Deployment's count, when the next event for the
/// same Deployment comes (of the `timed` events, in time order): a `random`
/// runs until then.
fn next_of_same_deployment(
    trace: &Trace,
    timed: &[(Timestamp, usize)],
) -> BTreeMap<usize, Timestamp> {
    let mut next_for = BTreeMap::new();
    let mut last: BTreeMap<&DeploymentRef, usize> = BTreeMap::new();
    for &(at, i) in timed {
        if let Some(deployment) = trace.events[i].action.deployment()
            && let Some(previous) = last.insert(deployment, i)
        {
            next_for.insert(previous, at);
        }
    }
    next_for
}

/// A `random` event: its Deployment's count drawn between `min` and `max`
/// every `every`, from the event's own seeded stream.
struct Random<'a> {
    event: usize,
    deployment: &'a DeploymentRef,
    every: Duration,
    min: u32,
    max: u32,
}

impl Random<'_> {
    /// Pushes a scaling to `due` at `at` and every `every` after it, until
    /// the Deployment's `next` event (which wins at its own time), else
    /// through the end.
    fn draw(
        &self,
        at: Timestamp,
        next: Option<Timestamp>,
        bounds: &Bounds<'_>,
        due: &mut Vec<Due>,
    ) {
        let mut draws = stream(bounds.seed, self.event);
        let every = SignedDuration::try_from(self.every).unwrap_or(SignedDuration::MAX);
        let span = usize::try_from(self.max - self.min)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        let mut time = at;
        while time <= bounds.end && next.is_none_or(|next| time < next) {
            let replicas = self.min + u32::try_from(draws.below(span)).unwrap_or(0);
            due.push(Due {
                at: time,
                event: self.event,
                planned: Planned::Scale {
                    deployment: self.deployment.clone(),
                    replicas,
                },
            });
            match time.checked_add(every) {
                Ok(later) => time = later,
                Err(_) => break,
            }
        }
    }
}
