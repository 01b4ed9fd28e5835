//! Interruption handling, as pure decisions: reading the EventBridge events
//! of the interruption queue ([`parse`]), what the provider does to the
//! cluster's NodeClaims for each ([`actions`]), and which instances the
//! instance-status poll finds unhealthy ([`unhealthy`], [`status_actions`]).
//!
//! No queue or EC2 client lives here: a caller receives the messages and
//! statuses, and carries out the [`ClaimAction`]s.
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
mod kind;
mod message;
mod reason;
mod status;

pub use action::{ClaimAction, Disposition, actions, claim_actions, instance_id_of};
pub use envelope::{
    AffectedEntity, Event, EventDescription, HealthDetail, InstanceDetail, Metadata,
    StateChangeDetail,
};
pub use error::ParseError;
pub use kind::Kind;
pub use message::{Message, parse};
pub use reason::EventReason;
pub use status::{
    InstanceHealth, SCHEDULED_EVENT_CODES, UNHEALTHY_THRESHOLD, Unhealthy, status_actions,
    unhealthy,
};

#[cfg(test)]
mod tests;
