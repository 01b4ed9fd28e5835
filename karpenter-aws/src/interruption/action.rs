//! What the provider does to the cluster's NodeClaims for an interruption
//! signal, as upstream's interruption controller does it, as a value.
//!
//! Upstream finds the NodeClaims of each instance a signal names by the
//! instance ID in their `status.providerID`; an instance with no NodeClaim
//! is left alone. For each NodeClaim it publishes the kind's event, marks
//! what the kind says is gone (a spot offering, a capacity reservation),
//! and then, by kind: deletes the NodeClaim (which cordons and drains the
//! node), sets its termination timestamp first so that the drain does not
//! wait (a failing status check), or does nothing more (a rebalance
//! recommendation).

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::OfferingKey;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_SPOT, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE,
    NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY,
};

use super::kind::Kind;
use super::message::Message;
use super::reason::EventReason;
use crate::labels::CAPACITY_RESERVATION_ID;

/// How the NodeClaim of a signalled instance goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Disposition {
    /// It stays: the signal is only announced.
    Keep,
    /// It is deleted: cordoned and drained, respecting disruption budgets.
    CordonAndDrain,
    /// It is deleted with its termination timestamp set to now, so that the
    /// drain and volume detachment do not wait: the instance is already
    /// broken.
    ForcefulTermination,
}

impl Disposition {
    /// How upstream treats the NodeClaims a signal of `kind` names.
    pub fn of(kind: Kind) -> Disposition {
        match kind {
            Kind::InstanceStatus | Kind::SystemStatus => Disposition::ForcefulTermination,
            Kind::ScheduledChange
            | Kind::EventStatus
            | Kind::SpotInterrupted
            | Kind::InstanceStopped
            | Kind::InstanceTerminated
            | Kind::CapacityReservationInterrupted => Disposition::CordonAndDrain,
            Kind::RebalanceRecommendation | Kind::NoOp => Disposition::Keep,
        }
    }
}

/// What happens to one NodeClaim for a signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimAction {
    /// The NodeClaim's name.
    pub claim: String,
    /// The instance the signal named.
    pub instance_id: String,
    /// The signal's kind; also the disruption reason recorded when the
    /// NodeClaim is deleted.
    pub kind: Kind,
    /// How the NodeClaim goes.
    pub disposition: Disposition,
    /// The events to publish on the NodeClaim (and its Node), in order.
    pub events: Vec<EventReason>,
    /// A spot interruption's offering, to mark unavailable (upstream keeps
    /// such marks 3 minutes, with the kind as the reason): the NodeClaim's
    /// instance type and zone, as spot. `None` when a label is missing.
    pub mark_unavailable: Option<OfferingKey>,
    /// A capacity reservation interruption's reservation, to mark as having
    /// no capacity left (upstream sets its available count to 0 until the
    /// reservations are next described). `None` when the NodeClaim has no
    /// reservation label.
    pub exhaust_reservation: Option<String>,
    /// Whether to set the NodeClaim's termination-timestamp annotation to
    /// now (a forceful termination of a NodeClaim without one).
    pub set_termination_timestamp: bool,
    /// Whether to delete the NodeClaim: it goes and is not already being
    /// deleted.
    pub delete: bool,
}

/// The instance ID in an AWS provider ID, `aws:///<zone>/<instance-id>`:
/// the part after the last `/` that follows `:///`. `None` for an ID of
/// another shape or with an empty instance ID.
pub fn instance_id_of(provider_id: &str) -> Option<&str> {
    let (_, path) = provider_id.split_once(":///")?;
    let (_, instance_id) = path.rsplit_once('/')?;
    (!instance_id.is_empty()).then_some(instance_id)
}

/// The instance ID of `claim`, from its `status.providerID`.
fn claim_instance_id(claim: &NodeClaim) -> Option<&str> {
    instance_id_of(claim.status.as_ref()?.provider_id.as_deref()?)
}

/// What the provider does to `claims` for `message`: one action per
/// NodeClaim of each instance the message names, in the message's order of
/// instances and then `claims`' order. Empty for a no-op and for instances
/// with no NodeClaim.
pub fn actions(message: &Message, claims: &[NodeClaim]) -> Vec<ClaimAction> {
    claim_actions(message.kind(), &message.instance_ids(), claims)
}

/// What the provider does to `claims` for a signal of `kind` about
/// `instance_ids`; see [`actions`].
pub fn claim_actions(kind: Kind, instance_ids: &[&str], claims: &[NodeClaim]) -> Vec<ClaimAction> {
    if kind == Kind::NoOp {
        return Vec::new();
    }
    instance_ids
        .iter()
        .flat_map(|&instance_id| {
            claims
                .iter()
                .filter(move |claim| claim_instance_id(claim) == Some(instance_id))
                .map(move |claim| claim_action(kind, instance_id, claim))
        })
        .collect()
}

/// What happens to `claim`, the NodeClaim of `instance_id`, for a signal of
/// `kind`.
fn claim_action(kind: Kind, instance_id: &str, claim: &NodeClaim) -> ClaimAction {
    let disposition = Disposition::of(kind);
    let goes = disposition != Disposition::Keep;
    let delete = goes && claim.metadata.deletion_timestamp.is_none();
    let events = EventReason::announcing(kind)
        .into_iter()
        .chain(delete.then_some(EventReason::TerminatingOnInterruption))
        .collect();
    ClaimAction {
        claim: claim.name().unwrap_or_default().to_owned(),
        instance_id: instance_id.to_owned(),
        kind,
        disposition,
        events,
        mark_unavailable: (kind == Kind::SpotInterrupted)
            .then(|| spot_offering(claim))
            .flatten(),
        exhaust_reservation: (kind == Kind::CapacityReservationInterrupted)
            .then(|| label(claim, CAPACITY_RESERVATION_ID).map(str::to_owned))
            .flatten(),
        set_termination_timestamp: disposition == Disposition::ForcefulTermination
            && !has_termination_timestamp(claim),
        delete,
    }
}

/// The spot offering `claim` was launched into, by its instance-type and
/// zone labels. Upstream marks the spot offering whatever the claim's
/// capacity type: only spot instances get spot interruption warnings.
fn spot_offering(claim: &NodeClaim) -> Option<OfferingKey> {
    let instance_type = label(claim, LABEL_INSTANCE_TYPE_STABLE)?;
    let zone = label(claim, LABEL_TOPOLOGY_ZONE)?;
    Some(OfferingKey::new(instance_type, zone, CAPACITY_TYPE_SPOT))
}

/// Whether `claim` already has a termination timestamp, which upstream
/// leaves as it is.
fn has_termination_timestamp(claim: &NodeClaim) -> bool {
    claim
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|annotations| {
            annotations.contains_key(NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY)
        })
}

/// The non-empty value of `claim`'s label `key`.
fn label<'a>(claim: &'a NodeClaim, key: &str) -> Option<&'a str> {
    let value = claim.metadata.labels.as_ref()?.get(key)?;
    (!value.is_empty()).then_some(value.as_str())
}
