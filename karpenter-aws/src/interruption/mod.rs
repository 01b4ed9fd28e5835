//! Interruption handling: reading the EventBridge events of the
//! interruption queue ([`parse`]), what the provider does to the cluster's
//! NodeClaims for each ([`actions`]), and which instances the
//! instance-status poll finds unhealthy ([`unhealthy`], [`status_actions`]),
//! all as pure decisions; and the two loops' passes over the AWS APIs that
//! feed them.
//!
//! [`poll_queue`] is one pass of the queue loop over a
//! [`QueueApi`](crate::ec2::QueueApi): it receives, reads, hands each
//! [`ClaimAction`] to the caller's [`InterruptionHandler`], and deletes what
//! is done with. [`poll_instance_status`] is one poll of
//! `DescribeInstanceStatus` over an [`Ec2Api`](crate::ec2::Ec2Api),
//! returning the actions. Carrying the actions out (events, offering marks,
//! NodeClaim deletion) and the timing of the loops are the caller's.
//!
//! ```
//! use karpenter_aws::interruption::{Kind, actions, parse};
//!
//! let body = r#"{"version": "0", "source": "aws.ec2",
//!     "detail-type": "EC2 Spot Instance Interruption Warning",
//!     "detail": {"instance-id": "i-0abc", "instance-action": "terminate"}}"#;
//! let message = parse(body)?;
//! assert_eq!(message.kind(), Kind::SpotInterrupted);
//! assert_eq!(message.instance_ids(), ["i-0abc"]);
//! // No NodeClaim runs on i-0abc, so there is nothing to do.
//! assert!(actions(&message, &[]).is_empty());
//! # Ok::<(), karpenter_aws::interruption::ParseError>(())
//! ```

mod action;
mod envelope;
mod error;
mod instance_status;
mod kind;
mod message;
mod queue;
mod reason;
mod status;

pub use action::{ClaimAction, Disposition, actions, claim_actions, instance_id_of};
pub use envelope::{
    AffectedEntity, Event, EventDescription, HealthDetail, InstanceDetail, Metadata,
    StateChangeDetail,
};
pub use error::ParseError;
pub use instance_status::{StatusPoll, instance_health, poll_instance_status, status_filters};
pub use kind::Kind;
pub use message::{Message, parse};
pub use queue::{InterruptionHandler, QueuePass, RECEIVE, poll_queue};
pub use reason::EventReason;
pub use status::{
    InstanceHealth, SCHEDULED_EVENT_CODES, UNHEALTHY_THRESHOLD, Unhealthy, status_actions,
    unhealthy,
};

#[cfg(test)]
mod tests;
