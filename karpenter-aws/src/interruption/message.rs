//! Interruption messages: the EventBridge events EC2 and AWS Health send to
//! the interruption queue, read into a [`Message`].
//!
//! Upstream picks a parser by the envelope's (`version`, `source`,
//! `detail-type`); an event of any other kind is a no-op the controller
//! deletes from the queue, as are AWS Health events of other services or
//! categories and state changes to states it does not act on.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::envelope::{Event, HealthDetail, InstanceDetail, Metadata, StateChangeDetail};
use super::error::ParseError;
use super::kind::Kind;

/// The only envelope `version` EventBridge uses for these events.
const VERSION: &str = "0";
/// The `source` of EC2's events.
const SOURCE_EC2: &str = "aws.ec2";
/// The `source` of AWS Health's events.
const SOURCE_HEALTH: &str = "aws.health";

/// The AWS Health `service` whose scheduled changes the provider acts on.
const HEALTH_SERVICE_EC2: &str = "EC2";
/// The AWS Health `eventTypeCategory` the provider acts on.
const HEALTH_CATEGORY_SCHEDULED_CHANGE: &str = "scheduledChange";

/// Instance states that mean the instance is stopping.
const STOPPED_STATES: [&str; 2] = ["stopping", "stopped"];
/// Instance states that mean the instance is going away for good.
const TERMINATED_STATES: [&str; 2] = ["shutting-down", "terminated"];

/// An interruption message, by kind.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    /// `aws.ec2` / `EC2 Spot Instance Interruption Warning`.
    SpotInterruption(Event<InstanceDetail>),
    /// `aws.ec2` / `EC2 Instance Rebalance Recommendation`.
    RebalanceRecommendation(Event<InstanceDetail>),
    /// `aws.health` / `AWS Health Event` of service `EC2` and category
    /// `scheduledChange`.
    ScheduledChange(Event<HealthDetail>),
    /// `aws.ec2` / `EC2 Instance State-change Notification` to `stopping`
    /// or `stopped`.
    InstanceStopped(Event<StateChangeDetail>),
    /// `aws.ec2` / `EC2 Instance State-change Notification` to
    /// `shutting-down` or `terminated`.
    InstanceTerminated(Event<StateChangeDetail>),
    /// `aws.ec2` / `EC2 Capacity Reservation Instance Interruption Warning`.
    CapacityReservationInterruption(Event<InstanceDetail>),
    /// An event of a kind the provider reads but does not act on: an AWS
    /// Health event of another service or category, a state change to
    /// another state.
    Ignored(Metadata),
    /// An event of a kind the provider does not know, or an empty body.
    Unknown(Metadata),
}

impl Message {
    /// The message's kind; [`Kind::NoOp`] for [`Message::Ignored`] and
    /// [`Message::Unknown`].
    pub fn kind(&self) -> Kind {
        match self {
            Message::SpotInterruption(_) => Kind::SpotInterrupted,
            Message::RebalanceRecommendation(_) => Kind::RebalanceRecommendation,
            Message::ScheduledChange(_) => Kind::ScheduledChange,
            Message::InstanceStopped(_) => Kind::InstanceStopped,
            Message::InstanceTerminated(_) => Kind::InstanceTerminated,
            Message::CapacityReservationInterruption(_) => Kind::CapacityReservationInterrupted,
            Message::Ignored(_) | Message::Unknown(_) => Kind::NoOp,
        }
    }

    /// The envelope.
    pub fn metadata(&self) -> &Metadata {
        match self {
            Message::SpotInterruption(event)
            | Message::RebalanceRecommendation(event)
            | Message::CapacityReservationInterruption(event) => &event.metadata,
            Message::InstanceStopped(event) | Message::InstanceTerminated(event) => &event.metadata,
            Message::ScheduledChange(event) => &event.metadata,
            Message::Ignored(metadata) | Message::Unknown(metadata) => metadata,
        }
    }

    /// The EC2 instances the message concerns, in the message's order; none
    /// for a no-op. Empty IDs are left out: no instance has one.
    pub fn instance_ids(&self) -> Vec<&str> {
        let ids: Vec<&str> = match self {
            Message::SpotInterruption(event)
            | Message::RebalanceRecommendation(event)
            | Message::CapacityReservationInterruption(event) => {
                vec![event.detail.instance_id.as_str()]
            }
            Message::InstanceStopped(event) | Message::InstanceTerminated(event) => {
                vec![event.detail.instance_id.as_str()]
            }
            Message::ScheduledChange(event) => event
                .detail
                .affected_entities
                .iter()
                .map(|entity| entity.entity_value.as_str())
                .collect(),
            Message::Ignored(_) | Message::Unknown(_) => Vec::new(),
        };
        ids.into_iter().filter(|id| !id.is_empty()).collect()
    }
}

/// The kinds of event the provider reads, keyed as upstream keys its
/// parsers.
#[derive(Clone, Copy)]
enum EventKind {
    SpotInterruption,
    RebalanceRecommendation,
    Health,
    StateChange,
    CapacityReservationInterruption,
}

impl EventKind {
    /// The kind of the event `metadata` heads, if the provider reads it.
    fn of(metadata: &Metadata) -> Option<EventKind> {
        if metadata.version != VERSION {
            return None;
        }
        match (metadata.source.as_str(), metadata.detail_type.as_str()) {
            (SOURCE_EC2, "EC2 Spot Instance Interruption Warning") => {
                Some(EventKind::SpotInterruption)
            }
            (SOURCE_EC2, "EC2 Instance Rebalance Recommendation") => {
                Some(EventKind::RebalanceRecommendation)
            }
            (SOURCE_EC2, "EC2 Instance State-change Notification") => Some(EventKind::StateChange),
            (SOURCE_EC2, "EC2 Capacity Reservation Instance Interruption Warning") => {
                Some(EventKind::CapacityReservationInterruption)
            }
            (SOURCE_HEALTH, "AWS Health Event") => Some(EventKind::Health),
            _ => None,
        }
    }
}

/// The body as it first reads: the envelope, and `detail` left for the
/// kind to read.
#[derive(Deserialize)]
struct Envelope {
    #[serde(flatten)]
    metadata: Metadata,
    #[serde(default)]
    detail: Option<serde_json::Value>,
}

/// Reads an interruption queue message's body.
///
/// An empty body, or an event of a kind the provider does not read, is
/// [`Message::Unknown`]; one it reads but does not act on is
/// [`Message::Ignored`]. A body that is not JSON, lacks `detail`, or has a
/// field of the wrong type is a [`ParseError`].
pub fn parse(body: &str) -> Result<Message, ParseError> {
    if body.is_empty() {
        return Ok(Message::Unknown(Metadata::default()));
    }
    let Envelope { metadata, detail } = serde_json::from_str(body).map_err(ParseError::Envelope)?;
    let Some(kind) = EventKind::of(&metadata) else {
        return Ok(Message::Unknown(metadata));
    };
    let Some(detail) = detail.filter(|detail| !detail.is_null()) else {
        return Err(ParseError::MissingDetail {
            detail_type: metadata.detail_type,
        });
    };
    Ok(match kind {
        EventKind::SpotInterruption => Message::SpotInterruption(event(metadata, detail)?),
        EventKind::RebalanceRecommendation => {
            Message::RebalanceRecommendation(event(metadata, detail)?)
        }
        EventKind::CapacityReservationInterruption => {
            Message::CapacityReservationInterruption(event(metadata, detail)?)
        }
        EventKind::Health => scheduled_change(event(metadata, detail)?),
        EventKind::StateChange => state_change(event(metadata, detail)?),
    })
}

/// Reads `detail` as the detail of the event `metadata` heads.
fn event<D: DeserializeOwned>(
    metadata: Metadata,
    detail: serde_json::Value,
) -> Result<Event<D>, ParseError> {
    match serde_json::from_value(detail) {
        Ok(detail) => Ok(Event { metadata, detail }),
        Err(source) => Err(ParseError::Detail {
            detail_type: metadata.detail_type,
            source,
        }),
    }
}

/// An AWS Health event: acted on only for EC2's scheduled changes.
fn scheduled_change(event: Event<HealthDetail>) -> Message {
    if event.detail.service == HEALTH_SERVICE_EC2
        && event.detail.event_type_category == HEALTH_CATEGORY_SCHEDULED_CHANGE
    {
        Message::ScheduledChange(event)
    } else {
        Message::Ignored(event.metadata)
    }
}

/// A state change: stopped, terminated, or (for `pending`, `running`, ...)
/// nothing. States compare without regard to case, as upstream's filter
/// does; upstream then names an upper-case `STOPPED` a termination, which
/// only changes the event's reason, and this names it a stop.
fn state_change(event: Event<StateChangeDetail>) -> Message {
    let state = event.detail.state.to_ascii_lowercase();
    if STOPPED_STATES.contains(&state.as_str()) {
        Message::InstanceStopped(event)
    } else if TERMINATED_STATES.contains(&state.as_str()) {
        Message::InstanceTerminated(event)
    } else {
        Message::Ignored(event.metadata)
    }
}
