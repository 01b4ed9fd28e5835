//! The recorder: turns what each step left behind (the cloud's instances,
//! the cluster's pods, the driver's events) into the run's timeline, events
//! and totals.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use karpenter_core::disruption::CommandReason;
use karpenter_core::driver::Event;
use karpenter_core::pods::PodKey;

use super::output::{DroppedCommand, ReplayEvent, Run, Sample, Totals};
use super::world::World;

/// Every disruption reason, as the totals name them.
pub const REASONS: [&str; 6] = [
    "Empty",
    "Underutilized",
    "Drifted",
    "Expired",
    "Unhealthy",
    "Interrupted",
];

fn reason_name(reason: CommandReason) -> &'static str {
    match reason {
        CommandReason::Empty => "Empty",
        CommandReason::Underutilized => "Underutilized",
        CommandReason::Drifted => "Drifted",
        CommandReason::Expired => "Expired",
        CommandReason::Unhealthy => "Unhealthy",
        CommandReason::Interrupted => "Interrupted",
    }
}

/// Rounds to a millionth, so that sums print the same everywhere.
pub(crate) fn round(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

/// What the recorder keeps between steps.
#[derive(Debug)]
pub(crate) struct Recorder {
    step_hours: f64,
    step_seconds: u64,
    timeline: Vec<Sample>,
    events: Vec<ReplayEvent>,
    dropped: Vec<DroppedCommand>,
    /// Launches and disrupted nodes since the last sample.
    launched: usize,
    disrupted: usize,
    /// Claims a command took: a later reclaim of one is not a second
    /// disruption.
    taken: BTreeSet<String>,
    /// When the command the driver holds for its check was computed: the
    /// driver holds one at a time, and starts or drops it before any other
    /// command.
    held_since: Option<Timestamp>,
    /// Pending pods, by the step count they have been pending.
    pending_steps: BTreeMap<PodKey, u64>,
    longest_pending_steps: u64,
    cost: f64,
    node_hours: f64,
    pod_minutes_pending: f64,
    launches: usize,
    disruptions: BTreeMap<String, usize>,
    warnings: Vec<String>,
}

impl Recorder {
    pub(super) fn new(step_seconds: u64) -> Recorder {
        Recorder {
            step_hours: step_seconds as f64 / 3600.0,
            step_seconds,
            timeline: Vec::new(),
            events: Vec::new(),
            dropped: Vec::new(),
            launched: 0,
            disrupted: 0,
            taken: BTreeSet::new(),
            held_since: None,
            pending_steps: BTreeMap::new(),
            longest_pending_steps: 0,
            cost: 0.0,
            node_hours: 0.0,
            pod_minutes_pending: 0.0,
            launches: 0,
            disruptions: REASONS.iter().map(|r| ((*r).to_owned(), 0)).collect(),
            warnings: Vec::new(),
        }
    }

    /// Notes the driver's launches and commands of a pass at `now`.
    pub(super) fn driver_events(&mut self, world: &World, events: &[Event], now: Timestamp) {
        for event in events {
            match event {
                Event::Launched { claim, offering } => {
                    // Claims are `<pool>-<number>`.
                    let pool = claim.rsplit_once('-').map_or(claim.as_str(), |(p, _)| p);
                    let price = world.prices.price(pool, offering).unwrap_or(0.0);
                    self.launched += 1;
                    self.launches += 1;
                    self.events.push(ReplayEvent::Launch {
                        time: now,
                        node_claim: claim.clone(),
                        node_pool: pool.to_owned(),
                        instance_type: offering.instance_type.clone(),
                        zone: offering.zone.clone(),
                        capacity_type: offering.capacity_type.clone(),
                        price,
                    });
                }
                Event::CommandStarted {
                    reason,
                    candidates,
                    replacements,
                    savings_per_hour,
                    ..
                } => {
                    let reason = reason_name(*reason);
                    self.disrupted += candidates.len();
                    *self.disruptions.entry(reason.to_owned()).or_default() += candidates.len();
                    self.taken.extend(candidates.iter().cloned());
                    self.events.push(ReplayEvent::Disrupt {
                        time: now,
                        reason: reason.to_owned(),
                        candidates: candidates.clone(),
                        replacements: replacements.len(),
                        savings_per_hour: round(*savings_per_hour),
                        by: "driver".to_owned(),
                        held_since: self.held_since.take(),
                    });
                }
                Event::CommandHeld { .. } => self.held_since = Some(now),
                Event::CommandDropped {
                    reason,
                    candidates,
                    failure,
                    why,
                    ..
                } => {
                    self.dropped.push(DroppedCommand {
                        time: now,
                        reason: reason_name(*reason).to_owned(),
                        candidates: candidates.clone(),
                        held_since: self.held_since.take().unwrap_or(now),
                        failure: failure.label().to_owned(),
                        why: why.clone(),
                    });
                }
                _ => {}
            }
        }
    }

    /// Notes that the cloud took back an interrupted node no command took.
    pub(super) fn reclaimed(&mut self, node: &str, now: Timestamp) {
        if self.taken.contains(node) {
            return;
        }
        self.taken.insert(node.to_owned());
        self.disrupted += 1;
        *self
            .disruptions
            .entry("Interrupted".to_owned())
            .or_default() += 1;
        self.events.push(ReplayEvent::Disrupt {
            time: now,
            reason: "Interrupted".to_owned(),
            candidates: vec![node.to_owned()],
            replacements: 0,
            savings_per_hour: 0.0,
            by: "cloud".to_owned(),
            held_since: None,
        });
    }

    /// Notes something the trace asked that could not be done as asked.
    pub(super) fn warn(&mut self, warnings: impl IntoIterator<Item = String>) {
        self.warnings.extend(warnings);
    }

    /// Notes which pods wait after the set-up step (not sampled: its
    /// pending pods count in how long each pod waited).
    pub(super) fn note_pending(&mut self, world: &World) {
        let census = world.cluster.pod_census();
        self.count_pending(&census.pending);
    }

    /// Counts one more step for each pod in `pending`; pods no longer
    /// there start again from zero.
    fn count_pending(&mut self, pending: &[PodKey]) {
        let waiting: BTreeSet<&PodKey> = pending.iter().collect();
        self.pending_steps.retain(|key, _| waiting.contains(key));
        for key in pending {
            let steps = self.pending_steps.entry(key.clone()).or_default();
            *steps += 1;
            self.longest_pending_steps = self.longest_pending_steps.max(*steps);
        }
    }

    /// Samples the world after the step at `now`.
    pub(super) fn sample(&mut self, world: &World, now: Timestamp) {
        let instances = world.cloud.instances();
        let mut price = 0.0;
        let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
        for instance in &instances {
            let (pool, key) = world.prices.offering_of(instance);
            price += world.prices.price(&pool, &key).unwrap_or(0.0);
            *by_type.entry(key.capacity_type).or_default() += 1;
        }
        let census = world.cluster.pod_census();
        self.count_pending(&census.pending);
        let price = round(price);
        self.cost += price * self.step_hours;
        self.node_hours += instances.len() as f64 * self.step_hours;
        self.pod_minutes_pending += census.pending.len() as f64 * self.step_hours * 60.0;
        self.timeline.push(Sample {
            time: now,
            price_per_hour: price,
            nodes: instances.len(),
            nodes_by_capacity_type: by_type,
            pending_pods: census.pending.len(),
            pods_running: census.running,
            launched: std::mem::take(&mut self.launched),
            disrupted: std::mem::take(&mut self.disrupted),
        });
    }

    /// The run that started at `start`, labelled `flags`.
    pub(super) fn finish(self, flags: String, start: Timestamp) -> Run {
        Run {
            flags,
            start,
            step_seconds: self.step_seconds,
            timeline: self.timeline,
            events: self.events,
            dropped: self.dropped,
            totals: Totals {
                cost: round(self.cost),
                node_hours: round(self.node_hours),
                launches: self.launches,
                disruptions: self.disruptions,
                pod_minutes_pending: round(self.pod_minutes_pending),
                max_pending_seconds: self.longest_pending_steps * self.step_seconds,
            },
            warnings: self.warnings,
        }
    }
}
