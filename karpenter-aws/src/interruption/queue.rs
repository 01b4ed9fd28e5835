//! One pass of the interruption queue loop: receive what the queue holds,
//! read each message, hand its [`ClaimAction`]s to the caller, and delete
//! what is done with.
//!
//! Upstream's controller receives up to 10 messages (long polling 20 s,
//! hidden 20 s), handles them 10 at a time, deletes a message once it is
//! handled or when it cannot be read, and leaves a message whose handling
//! failed to come back when its visibility timeout ends. This pass does the
//! same, handling the messages one after another in the order received so
//! that the same queue and claims give the same calls in the same order.

use async_trait::async_trait;
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::BoxError;

use super::action::{ClaimAction, actions};
use super::error::ParseError;
use super::message::parse;
use crate::ec2::{Ec2Error, Message as QueueMessage, QueueApi, ReceiveMessageInput};

/// The receive upstream makes: at most 10 messages, long polling for 20 s,
/// each hidden for 20 s while it is handled.
pub const RECEIVE: ReceiveMessageInput = ReceiveMessageInput {
    max_number_of_messages: 10,
    wait_time_seconds: 20,
    visibility_timeout: Some(20),
};

/// Carries out what an interruption does to one NodeClaim: publish its
/// events, mark its offering or reservation unavailable, set its
/// termination timestamp, delete it.
///
/// A trait object rather than a closure so that a caller can keep state
/// (a kube client, an offering cache) behind `&self` and the pass can take
/// it as `&dyn`, without boxing a future per call by hand.
#[async_trait]
pub trait InterruptionHandler: Send + Sync {
    /// Carries out `action`. An error leaves the message that asked for it
    /// on the queue, to be delivered again.
    async fn handle(&self, action: &ClaimAction) -> Result<(), BoxError>;
}

/// What one pass over the queue did, for metrics and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueuePass {
    /// Messages received.
    pub received: usize,
    /// NodeClaim actions the handler carried out without error.
    pub acted: usize,
    /// Messages deleted from the queue: handled, of no kind acted on, or
    /// unreadable.
    pub deleted: usize,
    /// Messages left on the queue to come back: their handling failed, or
    /// deleting them did.
    pub left: usize,
    /// Messages whose body could not be read (deleted all the same, unless
    /// the delete failed).
    pub malformed: usize,
    /// Of the messages left, those whose delete failed.
    pub delete_failed: usize,
}

/// Receives once from `queue` with [`RECEIVE`] and deals with every message
/// received, matching instances to `claims` and handing each resulting
/// [`ClaimAction`] to `handler`, in the message's order.
///
/// A message is deleted when its body cannot be read (logged with its ID
/// and length only: the body is the account's data), when it is of no kind
/// the provider acts on, when no NodeClaim runs on its instances, or when
/// every action succeeded. When an action fails the rest of the message's
/// actions are still tried, as upstream does, and the message is left for
/// redelivery. A failed delete is logged and counted; the message comes
/// back and is handled again, which the actions allow (a deleted NodeClaim
/// is not deleted twice).
///
/// # Errors
///
/// The receive's error, as the queue answered it; nothing was handled.
/// [`Ec2Error::is_retryable`] says whether the next pass may succeed.
pub async fn poll_queue(
    queue: &dyn QueueApi,
    claims: &[NodeClaim],
    handler: &dyn InterruptionHandler,
) -> Result<QueuePass, Ec2Error> {
    let received = queue.receive_message(RECEIVE).await?;
    let mut pass = QueuePass {
        received: received.len(),
        ..QueuePass::default()
    };
    for message in &received {
        let done = match parse(&message.body) {
            Ok(parsed) => handle_all(&actions(&parsed, claims), handler, &mut pass).await,
            Err(error) => {
                pass.malformed += 1;
                tracing::warn!(
                    message_id = %message.message_id,
                    body_len = message.body.len(),
                    problem = problem(&error),
                    "deleting an interruption message that cannot be read"
                );
                true
            }
        };
        if done {
            delete(queue, message, &mut pass).await;
        } else {
            pass.left += 1;
        }
    }
    Ok(pass)
}

/// Hands every action to `handler`; whether all succeeded.
async fn handle_all(
    actions: &[ClaimAction],
    handler: &dyn InterruptionHandler,
    pass: &mut QueuePass,
) -> bool {
    let mut all_done = true;
    for action in actions {
        match handler.handle(action).await {
            Ok(()) => pass.acted += 1,
            Err(error) => {
                all_done = false;
                tracing::warn!(
                    claim = %action.claim,
                    instance_id = %action.instance_id,
                    kind = ?action.kind,
                    error = %error,
                    "acting on an interruption failed; the message stays queued"
                );
            }
        }
    }
    all_done
}

/// Deletes `message` from `queue`, counting the outcome.
async fn delete(queue: &dyn QueueApi, message: &QueueMessage, pass: &mut QueuePass) {
    match queue.delete_message(&message.receipt_handle).await {
        Ok(()) => pass.deleted += 1,
        Err(error) => {
            pass.left += 1;
            pass.delete_failed += 1;
            tracing::warn!(
                message_id = %message.message_id,
                error = %error,
                "deleting an interruption message failed; it will come back"
            );
        }
    }
}

/// What was wrong with a body, in words that quote none of it: the parse
/// error's own text may carry the body's values.
fn problem(error: &ParseError) -> &'static str {
    match error {
        ParseError::Envelope(_) => "not an EventBridge event",
        ParseError::MissingDetail { .. } => "an event without `detail`",
        ParseError::Detail { .. } => "an event whose `detail` does not read",
    }
}
