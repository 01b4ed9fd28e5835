//! The fields of the EventBridge events the interruption queue carries:
//! the envelope every event shares, and each kind's `detail`.

use jiff::Timestamp;
use serde::Deserialize;

/// The EventBridge envelope: every field of an event but its `detail`. A
/// field that is absent reads as empty, as upstream's decoder leaves it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Metadata {
    /// The envelope's schema version, `0`.
    pub version: String,
    /// The event's ID.
    pub id: String,
    /// What the event is, e.g. `EC2 Spot Instance Interruption Warning`.
    #[serde(rename = "detail-type")]
    pub detail_type: String,
    /// The service that sent it, `aws.ec2` or `aws.health`.
    pub source: String,
    /// The AWS account it concerns.
    pub account: String,
    /// When the event happened; how long it waited on the queue is measured
    /// from here.
    pub time: Option<Timestamp>,
    /// The AWS region it concerns.
    pub region: String,
    /// The ARNs of the resources it concerns.
    pub resources: Vec<String>,
}

/// An event: its envelope and its `detail`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event<D> {
    /// The envelope.
    pub metadata: Metadata,
    /// The kind's own fields.
    pub detail: D,
}

/// The `detail` of an EC2 event about one instance.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct InstanceDetail {
    /// The instance, e.g. `i-0123456789abcdef0`.
    #[serde(rename = "instance-id")]
    pub instance_id: String,
    /// What EC2 will do to it (`terminate`, `stop`, `hibernate`), where the
    /// kind says.
    #[serde(rename = "instance-action", default)]
    pub instance_action: Option<String>,
}

/// The `detail` of an EC2 instance state-change notification.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct StateChangeDetail {
    /// The instance.
    #[serde(rename = "instance-id")]
    pub instance_id: String,
    /// The state it entered, e.g. `stopping`.
    pub state: String,
}

/// The `detail` of an AWS Health event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HealthDetail {
    /// The event's ARN.
    pub event_arn: String,
    /// E.g. `AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED`.
    pub event_type_code: String,
    /// The AWS service affected; only `EC2` is acted on.
    pub service: String,
    /// The category; only `scheduledChange` is acted on.
    pub event_type_category: String,
    /// When the change starts, as AWS Health writes it.
    pub start_time: String,
    /// When the change ends, as AWS Health writes it.
    pub end_time: String,
    /// Human-readable descriptions.
    #[serde(rename = "eventDescription")]
    pub descriptions: Vec<EventDescription>,
    /// The affected resources: for EC2, instance IDs.
    pub affected_entities: Vec<AffectedEntity>,
}

/// One description of an AWS Health event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EventDescription {
    /// The text.
    pub latest_description: String,
    /// Its language, e.g. `en_US`.
    pub language: String,
}

/// A resource an AWS Health event affects.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AffectedEntity {
    /// The resource's ID: for an EC2 event, the instance ID.
    pub entity_value: String,
}
