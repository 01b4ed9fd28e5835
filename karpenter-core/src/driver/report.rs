//! What one reconcile did, as events a controller logs or a test reads.

use std::fmt;

use jiff::Timestamp;

use crate::cloudprovider::OfferingKey;
use crate::disruption::{CommandReason, DriftCause, ValidationFailure};
use crate::pods::PodKey;

/// One thing the driver did (or tried) during a reconcile.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A NodeClaim was created for pending pods.
    ClaimCreated {
        /// The claim's name.
        claim: String,
        /// Its NodePool.
        pool: String,
        /// How many pods it is for.
        pods: usize,
    },
    /// A pending pod no plan can place, and why (upstream's
    /// `FailedScheduling` event). Reported once per pod and reason: again only
    /// when the reason changes, or when the pod was placed or gone and comes
    /// back unplaceable.
    PodUnschedulable {
        /// The pod.
        pod: PodKey,
        /// Why the plan cannot place it.
        reason: String,
    },
    /// A node that would be a disruption candidate may not be disrupted now,
    /// and why (upstream's `DisruptionBlocked` event: a pod with
    /// `karpenter.sh/do-not-disrupt`, a PodDisruptionBudget, a NodePool
    /// that is missing or has no instance types, a pool too unhealthy to
    /// repair, ...). Reported when the driver plans disruption, once per node
    /// and reason: again only when the reason changes, or when the node
    /// stopped being blocked and is blocked again.
    DisruptionBlocked {
        /// The node's name.
        node: String,
        /// Why it may not be disrupted.
        reason: String,
    },
    /// Single-node consolidation evaluated a node and could not consolidate
    /// it, and why (upstream's `Unconsolidatable` event; the reason is an
    /// [`Unconsolidatable`](crate::disruption::Unconsolidatable)). Reported
    /// when the driver plans disruption, for the nodes it evaluated that
    /// time, once per node and reason: again only when the reason changes,
    /// or when the node stopped being unconsolidatable (it gave a command, or
    /// a plan that tried every candidate no longer refused it) and is refused
    /// again.
    Unconsolidatable {
        /// The node's name.
        node: String,
        /// Why it cannot be consolidated.
        reason: String,
    },
    /// Draining a node, the eviction of a pod was refused: a
    /// PodDisruptionBudget allows no disruption now. The node waits (its
    /// instance stays) and the eviction is tried again at the next
    /// reconcile.
    EvictionBlocked {
        /// The pod.
        pod: PodKey,
        /// The node being drained.
        node: String,
    },
    /// A pod on a node being drained has an active
    /// `karpenter.sh/do-not-disrupt`: it is not evicted (as upstream), and the
    /// node waits for it to finish, for the annotation to run out, or for the
    /// claim's `terminationGracePeriod` to end.
    EvictionWaiting {
        /// The pod.
        pod: PodKey,
        /// The node being drained.
        node: String,
    },
    /// Pods were nominated to capacity that exists or is launching: pending
    /// pods, and the pods of nodes on their way out (a command's candidates
    /// among them), which will need it once evicted.
    PodsNominated {
        /// How many.
        count: usize,
    },
    /// The cloud launched a claim's instance.
    Launched {
        /// The claim's name.
        claim: String,
        /// What was launched.
        offering: OfferingKey,
    },
    /// Launching failed; the claim was removed unless the error may pass.
    LaunchFailed {
        /// The claim's name.
        claim: String,
        /// The cloud's error.
        error: String,
    },
    /// Offerings the cloud had no capacity for, unavailable for a while.
    OfferingsUnavailable {
        /// The offerings.
        offerings: Vec<OfferingKey>,
    },
    /// A claim's Node registered.
    Registered {
        /// The claim's name.
        claim: String,
        /// The Node's name.
        node: String,
    },
    /// A claim's Node is ready for pods.
    Initialized {
        /// The claim's name.
        claim: String,
    },
    /// A disruption command started: candidates tainted, replacements
    /// created.
    CommandStarted {
        /// The command's ID (its first candidate's claim).
        id: String,
        /// Why.
        reason: CommandReason,
        /// The candidates' claims.
        candidates: Vec<String>,
        /// The replacements' claims.
        replacements: Vec<String>,
        /// What the plan expects the command to save, in price per hour
        /// (the candidates' prices less the replacements'; negative for a
        /// forceful command that replaces with something dearer).
        savings_per_hour: f64,
        /// Why each candidate drifted, for a `Drifted` command (by node
        /// name, as the plan gives it); empty for every other command.
        drift: Vec<DriftCause>,
    },
    /// An emptiness or consolidation command was computed and waits for its
    /// check, as upstream's validation waits
    /// ([`DriverOptions::validation_delay`](super::DriverOptions::validation_delay)).
    /// The first settled pass at or after `until` checks it against the
    /// cluster as it is then; it is followed by [`CommandStarted`] (for
    /// emptiness, with the candidates that passed: when the first one did
    /// not, the started command's ID, its first candidate's claim, differs)
    /// or [`CommandDropped`]. No other command starts meanwhile.
    ///
    /// [`CommandStarted`]: Event::CommandStarted
    /// [`CommandDropped`]: Event::CommandDropped
    CommandHeld {
        /// The command's ID (its first candidate's claim).
        id: String,
        /// Why.
        reason: CommandReason,
        /// The candidates' claims.
        candidates: Vec<String>,
        /// How many replacements it would launch.
        replacements: usize,
        /// What the plan expects it to save, in price per hour.
        savings_per_hour: f64,
        /// When it is checked, at the earliest.
        until: Timestamp,
    },
    /// A held command failed its check and was dropped: the cluster moved
    /// under it (upstream's `ConsolidationRejected`). Nothing was done to
    /// its nodes; the driver plans afresh.
    CommandDropped {
        /// The held command's ID.
        id: String,
        /// Why it was computed.
        reason: CommandReason,
        /// Its candidates' claims.
        candidates: Vec<String>,
        /// Which kind of check failed, as upstream labels it.
        failure: ValidationFailure,
        /// What failed, for a person.
        why: String,
    },
    /// A command's replacements are initialized (or it had none): its
    /// candidates are being deleted.
    CandidatesDeleted {
        /// The command's ID.
        id: String,
    },
    /// A command's candidates are gone.
    CommandCompleted {
        /// The command's ID.
        id: String,
    },
    /// A command was given up: candidates untainted, replacements deleted.
    CommandAborted {
        /// The command's ID.
        id: String,
        /// Why.
        why: String,
    },
    /// A static NodePool had more claims than its replicas: this one is being
    /// deleted.
    StaticClaimRemoved {
        /// The claim's name.
        claim: String,
        /// Its NodePool.
        pool: String,
        /// Why this one (not launched yet, empty, the cheapest to disrupt).
        reason: String,
    },
    /// A claim's instance was terminated and the claim removed.
    Terminated {
        /// The claim's name.
        claim: String,
    },
    /// A claim whose instance the cloud no longer has is being deleted.
    InstanceGone {
        /// The claim's name.
        claim: String,
    },
    /// An instance no claim accounts for was deleted.
    OrphanDeleted {
        /// Its provider ID.
        provider_id: String,
    },
    /// A cloud call failed in a way a later reconcile may get past.
    ProviderError {
        /// What was being done.
        action: String,
        /// The error.
        error: String,
    },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ClaimCreated { claim, pool, pods } => {
                write!(f, "created nodeclaim {claim} (pool {pool}) for {pods} pods")
            }
            Self::PodUnschedulable { pod, reason } => {
                write!(f, "failed to schedule pod {pod}: {reason}")
            }
            Self::DisruptionBlocked { node, reason } => {
                write!(f, "cannot disrupt node {node}: {reason}")
            }
            Self::Unconsolidatable { node, reason } => {
                write!(f, "cannot consolidate node {node}: {reason}")
            }
            Self::EvictionBlocked { pod, node } => write!(
                f,
                "draining {node}: a PodDisruptionBudget holds pod {pod} for now"
            ),
            Self::EvictionWaiting { pod, node } => write!(
                f,
                "draining {node}: pod {pod} has karpenter.sh/do-not-disrupt, waiting for it"
            ),
            Self::PodsNominated { count } => write!(f, "nominated {count} pods"),
            Self::Launched { claim, offering } => write!(f, "launched {claim} as {offering}"),
            Self::LaunchFailed { claim, error } => write!(f, "launching {claim} failed: {error}"),
            Self::OfferingsUnavailable { offerings } => {
                let names: Vec<String> = offerings.iter().map(ToString::to_string).collect();
                write!(f, "marked unavailable: {}", names.join(", "))
            }
            Self::Registered { claim, node } => write!(f, "{claim} registered as node {node}"),
            Self::Initialized { claim } => write!(f, "{claim} initialized"),
            Self::CommandStarted {
                id,
                reason,
                candidates,
                replacements,
                savings_per_hour,
                drift,
            } => {
                write!(
                    f,
                    "command {id} ({reason:?}): disrupting [{}], replacing with [{}], saving {savings_per_hour}/h",
                    candidates.join(", "),
                    replacements.join(", ")
                )?;
                for cause in drift {
                    write!(
                        f,
                        "; {} drifted: {} ({})",
                        cause.node, cause.reason, cause.detail
                    )?;
                }
                Ok(())
            }
            Self::CommandHeld {
                id,
                reason,
                candidates,
                replacements,
                savings_per_hour,
                until,
            } => write!(
                f,
                "command {id} ({reason:?}): holding [{}] with {replacements} replacements, saving {savings_per_hour}/h, for its check at {until}",
                candidates.join(", ")
            ),
            Self::CommandDropped {
                id, failure, why, ..
            } => write!(f, "command {id} dropped at its check ({failure}): {why}"),
            Self::CandidatesDeleted { id } => write!(f, "command {id}: deleting its candidates"),
            Self::CommandCompleted { id } => write!(f, "command {id} completed"),
            Self::CommandAborted { id, why } => write!(f, "command {id} aborted: {why}"),
            Self::StaticClaimRemoved {
                claim,
                pool,
                reason,
            } => write!(f, "deleting {claim} of static pool {pool} ({reason})"),
            Self::Terminated { claim } => write!(f, "{claim} terminated"),
            Self::InstanceGone { claim } => write!(f, "{claim}'s instance is gone"),
            Self::OrphanDeleted { provider_id } => {
                write!(f, "deleted orphan instance {provider_id}")
            }
            Self::ProviderError { action, error } => write!(f, "{action}: {error}"),
        }
    }
}

/// Everything one reconcile did, in order.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// The events.
    pub events: Vec<Event>,
    /// How long each plan made during the reconcile took, in order (for a
    /// controller's duration histograms; not part of what was decided).
    pub timings: Vec<Timing>,
}

/// What the driver planned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Provisioning: a schedule for the pending pods.
    Provisioning,
    /// Disruption: the search for the next command.
    Disruption,
    /// Disruption: the check of a held command before it starts (see
    /// [`Event::CommandHeld`]).
    Validation,
}

/// How long one plan took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// What was planned.
    pub step: Step,
    /// The planning's own time, on the thread that ran it.
    pub took: std::time::Duration,
}

impl Report {
    /// Records `event`, and emits it as a `tracing` event (target
    /// `karpenter_core::driver`): failures at `warn`, the rest at `info`.
    pub(super) fn push(&mut self, event: Event) {
        match &event {
            Event::LaunchFailed { .. }
            | Event::ProviderError { .. }
            | Event::CommandAborted { .. }
            | Event::PodUnschedulable { .. } => tracing::warn!(%event),
            // Upstream logs an abandoned command at its debug level: the
            // cluster moving is no failure.
            Event::CommandDropped { .. } => tracing::info!(%event),
            Event::DisruptionBlocked { .. } | Event::Unconsolidatable { .. } => {
                tracing::info!(%event)
            }
            _ => tracing::info!(%event),
        }
        self.events.push(event);
    }

    /// Whether nothing happened.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}
