//! Kubernetes Events for the decisions users look for, as upstream's
//! controllers record them: a pod nominated to capacity, a pod no NodePool
//! can take, a claim launched, registered and initialized, a node's
//! disruption (and what blocks it), a drain a PodDisruptionBudget holds.
//!
//! Events are published by a background task through `kube::runtime`'s
//! recorder (`events.k8s.io/v1`, repeats folded into a series), from a
//! bounded queue: recording never holds the driver up, and when the API
//! server cannot keep up the newest events are dropped (and counted) rather
//! than queued without end.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::ObjectReference;
use karpenter_core::driver::{Event as DriverEvent, Report};
use karpenter_core::pods::PodKey;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::sync::mpsc;

/// How many events may wait for the API server before new ones are dropped.
pub const EVENT_QUEUE: usize = 1024;

/// An event to record, about one object.
pub struct Recorded {
    /// The object the event is about.
    pub regarding: ObjectReference,
    /// The event.
    pub event: Event,
}

impl fmt::Debug for Recorded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorded")
            .field("kind", &self.regarding.kind)
            .field("name", &self.regarding.name)
            .field("reason", &self.event.reason)
            .field("note", &self.event.note)
            .finish()
    }
}

/// Publishes Kubernetes Events in the background. Cheap to clone; the
/// publishing task ends when the last clone goes.
#[derive(Clone, Debug)]
pub struct EventRecorder {
    queue: Option<mpsc::Sender<Recorded>>,
    dropped: Arc<AtomicU64>,
}

impl EventRecorder {
    /// A recorder publishing as `reporter` through `client`. Spawns its task
    /// on the current tokio runtime.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        let (queue, mut waiting) = mpsc::channel::<Recorded>(EVENT_QUEUE);
        let recorder = Recorder::new(client, reporter);
        tokio::spawn(async move {
            while let Some(recorded) = waiting.recv().await {
                if let Err(error) = recorder.publish(&recorded.event, &recorded.regarding).await {
                    tracing::warn!(
                        reason = recorded.event.reason,
                        object = recorded.regarding.name.as_deref().unwrap_or_default(),
                        %error,
                        "publishing an event failed"
                    );
                }
            }
        });
        EventRecorder {
            queue: Some(queue),
            dropped: Arc::default(),
        }
    }

    /// A recorder that records nothing (a dry run, or a test).
    pub fn disabled() -> Self {
        EventRecorder {
            queue: None,
            dropped: Arc::default(),
        }
    }

    /// Queues `recorded` for publishing; dropped (and counted) when the
    /// queue is full.
    pub fn record(&self, recorded: Recorded) {
        let Some(queue) = &self.queue else {
            return;
        };
        if queue.try_send(recorded).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Queues the Kubernetes Events of everything `report` says the driver
    /// did.
    pub fn record_report(&self, report: &Report) {
        for event in &report.events {
            for recorded in kubernetes_events(event) {
                self.record(recorded);
            }
        }
    }

    /// How many events were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// A reference to the NodeClaim `name`.
pub fn node_claim_ref(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("karpenter.sh/v1".into()),
        kind: Some("NodeClaim".into()),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}

/// A reference to the Node `name`.
pub fn node_ref(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Node".into()),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}

/// A reference to the pod `pod`.
pub fn pod_ref(pod: &PodKey) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(pod.namespace().into()),
        name: Some(pod.name().into()),
        ..ObjectReference::default()
    }
}

fn event(type_: EventType, reason: &str, action: &str, note: String) -> Event {
    Event {
        type_,
        reason: reason.into(),
        // The API server refuses notes over 1 kB.
        note: Some(truncated(note, 1024)),
        action: action.into(),
        secondary: None,
    }
}

fn truncated(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit - 3;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// The event upstream records when a pod is nominated to `target` (a Node,
/// or a NodeClaim still launching): `Nominated`, "Pod should schedule on:
/// nodeclaim/x".
pub fn nominated(pod: &PodKey, target: &str, is_claim: bool) -> Recorded {
    let kind = if is_claim { "nodeclaim" } else { "node" };
    Recorded {
        regarding: pod_ref(pod),
        event: event(
            EventType::Normal,
            "Nominated",
            "Nominate",
            format!("Pod should schedule on: {kind}/{target}"),
        ),
    }
}

/// The Kubernetes Events for one thing the driver did (none for the
/// bookkeeping nobody looks for in `kubectl describe`).
pub fn kubernetes_events(done: &DriverEvent) -> Vec<Recorded> {
    claim_lifecycle_events(done)
        .or_else(|| drain_events(done))
        .or_else(|| disruption_events(done))
        .unwrap_or_default()
}

/// One Event of type `type_` about `regarding`.
fn on(
    regarding: ObjectReference,
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
) -> Recorded {
    Recorded {
        regarding,
        event: event(type_, reason, action, note),
    }
}

/// Events of provisioning and a claim's life: a pod that found no place, a
/// claim created, launched (or not), registered, initialized.
fn claim_lifecycle_events(done: &DriverEvent) -> Option<Vec<Recorded>> {
    Some(match done {
        DriverEvent::PodUnschedulable { pod, reason } => vec![on(
            pod_ref(pod),
            EventType::Warning,
            "FailedScheduling",
            "Schedule",
            format!("Failed to schedule pod, {reason}"),
        )],
        DriverEvent::ClaimCreated { claim, pool, pods } => vec![on(
            node_claim_ref(claim),
            EventType::Normal,
            "Created",
            "Provision",
            format!("Created NodeClaim from NodePool {pool} for {pods} pod(s)"),
        )],
        DriverEvent::Launched { claim, offering } => vec![on(
            node_claim_ref(claim),
            EventType::Normal,
            "Launched",
            "Launch",
            format!("Launched {offering}"),
        )],
        DriverEvent::LaunchFailed { claim, error } => vec![on(
            node_claim_ref(claim),
            EventType::Warning,
            "LaunchFailed",
            "Launch",
            error.clone(),
        )],
        DriverEvent::Registered { claim, node } => vec![on(
            node_claim_ref(claim),
            EventType::Normal,
            "Registered",
            "Register",
            format!("Status condition transitioned, Type: Registered, Status: True, Node: {node}"),
        )],
        DriverEvent::Initialized { claim } => vec![on(
            node_claim_ref(claim),
            EventType::Normal,
            "Initialized",
            "Initialize",
            "Status condition transitioned, Type: Initialized, Status: True".into(),
        )],
        _ => return None,
    })
}

/// Events of a drain that cannot evict a pod.
fn drain_events(done: &DriverEvent) -> Option<Vec<Recorded>> {
    Some(match done {
        DriverEvent::EvictionBlocked { pod, node } => vec![
            on(
                node_ref(node),
                EventType::Warning,
                "FailedDraining",
                "Drain",
                format!("Failed to drain node, pod {pod} is waiting on a PodDisruptionBudget"),
            ),
            on(
                pod_ref(pod),
                EventType::Warning,
                "FailedDraining",
                "Evict",
                format!("Evicting pod is blocked by a PodDisruptionBudget (draining node {node})"),
            ),
        ],
        DriverEvent::EvictionWaiting { pod, node } => vec![on(
            node_ref(node),
            EventType::Warning,
            "FailedDraining",
            "Drain",
            format!(
                "Failed to drain node, pod {pod} has karpenter.sh/do-not-disrupt and is not evicted"
            ),
        )],
        _ => return None,
    })
}

/// Events of disruption: commands started, dropped, aborted, and the nodes
/// it leaves alone with why.
fn disruption_events(done: &DriverEvent) -> Option<Vec<Recorded>> {
    Some(match done {
        DriverEvent::CommandStarted {
            reason,
            candidates,
            replacements,
            ..
        } => {
            let how = if replacements.is_empty() {
                "Delete"
            } else {
                "Replace"
            };
            candidates
                .iter()
                .map(|claim| {
                    on(
                        node_claim_ref(claim),
                        EventType::Normal,
                        "DisruptionLaunching",
                        "Disrupt",
                        format!(
                            "Disrupting NodeClaim: {reason:?}/{how}{}",
                            if replacements.is_empty() {
                                String::new()
                            } else {
                                format!(", launching {}", replacements.join(", "))
                            }
                        ),
                    )
                })
                .collect()
        }
        DriverEvent::DisruptionBlocked { node, reason } => vec![on(
            node_ref(node),
            EventType::Normal,
            "DisruptionBlocked",
            "Disrupt",
            format!("Cannot disrupt Node: {reason}"),
        )],
        DriverEvent::Unconsolidatable { node, reason } => vec![on(
            node_ref(node),
            EventType::Normal,
            "Unconsolidatable",
            "Consolidate",
            reason.clone(),
        )],
        DriverEvent::CandidatesDeleted { id } => vec![on(
            node_claim_ref(id),
            EventType::Normal,
            "DisruptionTerminating",
            "Disrupt",
            format!("Disruption command {id}: deleting its candidates"),
        )],
        // Upstream's `ConsolidationRejected`, on each candidate's claim (the
        // driver names claims, not nodes).
        DriverEvent::CommandDropped {
            reason,
            candidates,
            failure,
            why,
            ..
        } => candidates
            .iter()
            .map(|claim| {
                on(
                    node_claim_ref(claim),
                    EventType::Normal,
                    "ConsolidationRejected",
                    "Consolidate",
                    format!("Consolidation rejected: {reason:?}, reason: {failure} ({why})"),
                )
            })
            .collect(),
        DriverEvent::CommandAborted { id, why } => vec![on(
            node_claim_ref(id),
            EventType::Warning,
            "DisruptionAborted",
            "Disrupt",
            format!("Disruption command {id} aborted: {why}"),
        )],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unschedulable_pod_gets_a_warning_on_itself() {
        let events = kubernetes_events(&DriverEvent::PodUnschedulable {
            pod: PodKey::new("web", "a"),
            reason: "no instance type fits".into(),
        });
        assert_eq!(events.len(), 1);
        let recorded = &events[0];
        assert_eq!(recorded.regarding.namespace.as_deref(), Some("web"));
        assert_eq!(recorded.regarding.name.as_deref(), Some("a"));
        assert_eq!(recorded.event.reason, "FailedScheduling");
        assert_eq!(recorded.event.type_, EventType::Warning);
        assert_eq!(
            recorded.event.note.as_deref(),
            Some("Failed to schedule pod, no instance type fits")
        );
    }

    #[test]
    fn a_nomination_names_the_claim_as_upstream() {
        let recorded = nominated(&PodKey::new("default", "p"), "general-00001", true);
        assert_eq!(recorded.event.reason, "Nominated");
        assert_eq!(
            recorded.event.note.as_deref(),
            Some("Pod should schedule on: nodeclaim/general-00001")
        );
    }

    #[test]
    fn blocked_and_unconsolidatable_nodes_say_why_on_the_node() {
        let blocked = kubernetes_events(&DriverEvent::DisruptionBlocked {
            node: "n1".into(),
            reason: "pod default/keep has \"karpenter.sh/do-not-disrupt\" annotation".into(),
        });
        assert_eq!(blocked[0].regarding.kind.as_deref(), Some("Node"));
        assert_eq!(blocked[0].event.reason, "DisruptionBlocked");
        assert!(
            blocked[0]
                .event
                .note
                .as_deref()
                .is_some_and(|n| n.starts_with("Cannot disrupt Node: "))
        );
        let unconsolidatable = kubernetes_events(&DriverEvent::Unconsolidatable {
            node: "n2".into(),
            reason: "Can't replace with a cheaper node".into(),
        });
        assert_eq!(unconsolidatable[0].event.reason, "Unconsolidatable");
        assert_eq!(
            unconsolidatable[0].event.note.as_deref(),
            Some("Can't replace with a cheaper node")
        );
    }

    #[test]
    fn a_dropped_command_is_rejected_on_each_candidate_claim() {
        let rejected = kubernetes_events(&DriverEvent::CommandDropped {
            id: "default-00001".into(),
            reason: karpenter_core::disruption::CommandReason::Empty,
            candidates: vec!["default-00001".into(), "default-00002".into()],
            failure: karpenter_core::driver::ValidationFailure::Churn,
            why: "2 candidates are no longer valid".into(),
        });
        assert_eq!(rejected.len(), 2);
        assert_eq!(rejected[1].regarding.kind.as_deref(), Some("NodeClaim"));
        assert_eq!(rejected[1].regarding.name.as_deref(), Some("default-00002"));
        assert_eq!(rejected[0].event.reason, "ConsolidationRejected");
        assert_eq!(
            rejected[0].event.note.as_deref(),
            Some("Consolidation rejected: Empty, reason: churn (2 candidates are no longer valid)")
        );
    }

    #[test]
    fn long_notes_are_cut_at_a_character_boundary() {
        let text = "é".repeat(1000);
        let cut = truncated(text, 1024);
        assert!(cut.len() <= 1024);
        assert!(cut.ends_with("..."));
    }
}
